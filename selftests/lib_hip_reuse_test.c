// SPDX-License-Identifier: GPL-2.0-only
/*
 * libkfdpool between two processes: a randomized run of allocations,
 * frees and reuse with odd sizes (never a multiple of the allocator's 256
 * bytes), shared with an importer process.  After every step both
 * processes check every byte of every live allocation: blocks that overlap
 * after a free and a reuse show as bytes of one allocation inside another.
 * Each freed allocation's records must then be refused to the importer
 * (hipErrorInvalidHandle, and -ENOENT from the kernel), while another live
 * one of the pool still imports.  The seed is printed; KFDPOOL_SEED
 * replays a run.
 */
#include <stdint.h>
#include <time.h>

#include "lib_hip_util.h"
#include "kselftest_harness.h"

/* HIP's, which libkfdpool-hip defines. */
hipError_t hipStreamSynchronize(hipStream_t stream);

FIXTURE(reuse) {
	hipMemPool_t pool;
	int base_dmabufs;
};

FIXTURE_SETUP(reuse)
{
	LH_FD_POOL_SETUP(1ull << 30);
}

FIXTURE_TEARDOWN(reuse)
{
	LH_FD_POOL_TEARDOWN();
}

#define R_SLOTS	48
#define R_STEPS	1000
#define R_GRAN	(256u << 10)

enum { R_ALLOC = 1, R_FREE, R_GONE, R_WROTE, R_WRITE, R_END };

struct rmsg {
	uint32_t op, slot, other, pad;
	uint64_t size, interior, tag;
	hipMemPoolPtrExportData data;
};

struct rreply {
	int32_t what;		/* 0, or which check failed (rr_what) */
	int32_t code;		/* the hipError_t or errno it got */
	uint32_t slot;
	uint32_t pad;
	int64_t off;		/* the first wrong byte */
};

static const char *const rr_what[] = {
	"ok", "import of a live record", "its bytes", "hipFree of an import",
	"second hipFree of an import", "import of a freed record",
	"native import of a freed record", "re-import of a live record",
	"imports left at the end", "protocol",
};

/* Byte @k of an allocation: the pattern is per position, so any range
 * (an interior export, an odd tail) can be written and checked alone. */
static inline uint8_t r_byte(uint64_t slot, uint64_t tag, size_t k)
{
	return lh_word(slot, k / 8, tag) >> (8 * (k % 8));
}

static void r_fill(unsigned char *base, size_t from, size_t to,
		   uint64_t slot, uint64_t tag)
{
	size_t k = from;

	for (; k < to && k % 8; k++)
		base[k] = r_byte(slot, tag, k);
	for (; k + 8 <= to; k += 8) {
		uint64_t w = lh_word(slot, k / 8, tag);

		memcpy(base + k, &w, 8);
	}
	for (; k < to; k++)
		base[k] = r_byte(slot, tag, k);
}

/* The first wrong byte of [from, to), or -1. */
static long r_check(const unsigned char *base, size_t from, size_t to,
		    uint64_t slot, uint64_t tag)
{
	size_t k = from;

	for (; k < to && k % 8; k++)
		if (base[k] != r_byte(slot, tag, k))
			return k;
	for (; k + 8 <= to; k += 8) {
		uint64_t w;

		memcpy(&w, base + k, 8);
		if (w != lh_word(slot, k / 8, tag))
			break;
	}
	for (; k < to; k++)
		if (base[k] != r_byte(slot, tag, k))
			return k;
	return -1;
}

struct rslot {
	int live;
	unsigned char *p;	/* exporter: the allocation; importer: the import */
	uint64_t size, interior;
	uint64_t tag_lo, tag;	/* of [0, interior) and [interior, size) */
	hipMemPoolPtrExportData data;
};

static int r_reply(int sock, int what, int code, uint32_t slot, int64_t off)
{
	struct rreply r = { what, code, slot, 0, off };

	lh_write_all(sock, &r, sizeof(r));
	return what;
}

/* The importer: one message, one reply, until R_END or a failure. */
static int random_importer(int sock)
{
	static struct rslot s[R_SLOTS];
	struct kfdpool_pool_stats st;
	struct kfdpool_import im;
	hipMemPool_t pool;
	struct rmsg m;
	hipError_t e;
	void *q;
	long bad;
	int fd, i;

	fd = lh_recv_fd(sock);
	if (fd < 0 || hipMemPoolImportFromShareableHandle(&pool,
			(void *)(intptr_t)fd, hipMemHandleTypePosixFileDescriptor, 0))
		return r_reply(sock, 9, 0, 0, -1);
	/* fd stays open: the native API's view of the same pool. */
	while (!lh_read_all(sock, &m, sizeof(m))) {
		struct rslot *x = &s[m.slot % R_SLOTS];

		switch (m.op) {
		case R_ALLOC:
			e = hipMemPoolImportPointer(&q, pool, &m.data);
			if (e)
				return r_reply(sock, 1, e, m.slot, -1);
			x->live = 1;
			x->p = (unsigned char *)q - m.interior;
			x->size = m.size;
			x->interior = m.interior;
			x->tag = m.tag;
			x->data = m.data;
			break;
		case R_FREE:
			q = x->p + x->interior;
			e = m.slot & 1 ? hipFree(q) : kfdpoolFreePointers(&q, 1, NULL);
			if (e)
				return r_reply(sock, 3, e, m.slot, -1);
			e = hipFree(x->p + x->interior);
			if (e != hipErrorInvalidValue)
				return r_reply(sock, 4, e, m.slot, -1);
			x->live = 0;
			break;
		case R_GONE:
			q = &q;
			e = hipMemPoolImportPointer(&q, pool, &m.data);
			if (e != hipErrorInvalidHandle || q)
				return r_reply(sock, 5, e, m.slot, -1);
			i = kfdpool_import(fd, (struct kfdpool_record *)&m.data, 0, &im);
			if (i >= 0)
				close(im.fd);
			if (i != -ENOENT)
				return r_reply(sock, 6, i, m.slot, -1);
			if (m.other < R_SLOTS && s[m.other].live) {
				struct rslot *o = &s[m.other];

				e = hipMemPoolImportPointer(&q, pool, &o->data);
				if (e || q != o->p + o->interior)
					return r_reply(sock, 7, e, m.other, -1);
				if (hipFree(q))
					return r_reply(sock, 3, e, m.other, -1);
			}
			break;
		case R_WROTE:
			x->tag = m.tag;
			break;
		case R_WRITE:
			r_fill(x->p, x->interior, x->size, m.slot, m.tag);
			x->tag = m.tag;
			break;
		case R_END:
			if (kfdpoolMemPoolGetStats(pool, &st) || st.fd_imports)
				return r_reply(sock, 8, st.fd_imports, 0, -1);
			hipMemPoolDestroy(pool);
			close(fd);
			return r_reply(sock, 0, 0, 0, -1);
		default:
			return r_reply(sock, 9, m.op, m.slot, -1);
		}
		for (i = 0; i < R_SLOTS; i++) {
			if (!s[i].live)
				continue;
			bad = r_check(s[i].p, s[i].interior, s[i].size, i, s[i].tag);
			if (bad >= 0)
				return r_reply(sock, 2, 0, i, bad);
		}
		r_reply(sock, 0, 0, 0, -1);
	}
	return 9;
}

/* Odd sizes: mostly small, some several pages, a few past the chunk size
 * (a chunk of their own). */
static uint64_t r_size(uint64_t *seed)
{
	uint64_t r = lh_rand(seed);

	if (r % 25 == 0)
		return (R_GRAN + (r >> 8) % (64u << 10)) | 1;
	if (r % 5 == 0)
		return (4096 + (r >> 8) % (60u << 10)) | 1;
	return (1 + (r >> 8) % 4096) | 1;
}

TEST_F_TIMEOUT(reuse, random_odd_sizes, 900)
{
	static struct rslot s[R_SLOTS];
	const char *env = getenv("KFDPOOL_SEED");
	uint64_t seed, seed0, live_recs = 0;
	unsigned int step, i, nlive = 0, peak = 0, reused = 0;
	unsigned int nalloc = 0, nbig = 0, nfree[3] = { 0 }, nwrite = 0;
	struct kfdpool_pool_stats st;
	struct rreply rr;
	struct rmsg m;
	int sv[2], fd, status;
	void *seen[R_SLOTS * 4];
	unsigned int nseen = 0;
	pid_t pid;

	seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	if (!seed)
		seed = 1;
	seed0 = seed;
	ksft_print_msg("seed 0x%llx (KFDPOOL_SEED=0x%llx replays this run)\n",
		       (unsigned long long)seed0, (unsigned long long)seed0);
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolSetGranularity(self->pool, R_GRAN));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(sv[0]);
		_exit(random_importer(sv[1]));
	}
	close(sv[1]);
	ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&fd, self->pool,
		  hipMemHandleTypePosixFileDescriptor, 0));
	ASSERT_EQ(0, lh_send_fd(sv[0], fd));
	close(fd);

/* One message to the importer and its verdict. */
#define R_SEND(msg) do { \
	ASSERT_EQ(0, lh_write_all(sv[0], &(msg), sizeof(msg))); \
	ASSERT_EQ(0, lh_read_all(sv[0], &rr, sizeof(rr))); \
	ASSERT_EQ(0, rr.what) TH_LOG("step %u: importer: %s, slot %u, code %d (%s), byte %lld; seed 0x%llx", \
		step, rr_what[rr.what < 10 ? rr.what : 9], rr.slot, rr.code, \
		hipGetErrorName((hipError_t)rr.code), (long long)rr.off, \
		(unsigned long long)seed0); \
} while (0)

	for (step = 0; step < R_STEPS; step++) {
		uint64_t r = lh_rand(&seed);
		unsigned int k = r % R_SLOTS, pick = (r >> 8) % 100;
		/* Waves: a hundred steps that mostly allocate, a hundred
		 * that mostly free, so chunks fill, empty and come back. */
		unsigned int alloc_pct = (step / 100) % 2 ? 25 : 65;

		memset(&m, 0, sizeof(m));
		if (nlive < R_SLOTS && (nlive == 0 || pick < alloc_pct)) {
			struct rslot *x;
			void *p;

			while (s[k].live)
				k = (k + 1) % R_SLOTS;
			x = &s[k];
			x->size = r_size(&seed);
			x->interior = (r >> 32) % 4 ? 0 : (r >> 40) % x->size;
			ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, x->size,
				  self->pool, NULL)) TH_LOG("step %u: %llu bytes", step,
				  (unsigned long long)x->size);
			x->p = p;
			x->tag_lo = x->tag = lh_rand(&seed);
			r_fill(x->p, 0, x->size, k, x->tag);
			ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&x->data,
				  x->p + x->interior));
			x->live = 1;
			/* Records are made at export: one, for the pointer
			 * exported (base or interior). */
			live_recs++;
			for (i = 0; i < nseen && seen[i] != p; i++)
				;
			if (i < nseen)
				reused++;
			else if (nseen < R_SLOTS * 4)
				seen[nseen++] = p;
			nlive++;
			nalloc++;
			nbig += x->size > R_GRAN;
			if (nlive > peak)
				peak = nlive;
			m.op = R_ALLOC;
			m.slot = k;
			m.size = x->size;
			m.interior = x->interior;
			m.tag = x->tag;
			m.data = x->data;
			R_SEND(m);
		} else if (pick < 80) {
			/* Free 1 to 3 live allocations, one way or another. */
			unsigned int how = (r >> 16) % 3, n = 0, want = 1 + (r >> 20) % 3;
			unsigned int which[3];
			void *ptrs[3];
			hipError_t res[3];

			for (i = 0; i < R_SLOTS && n < want; i++) {
				unsigned int j = (k + i) % R_SLOTS;

				if (s[j].live)
					which[n++] = j;
			}
			for (i = 0; i < n; i++) {
				/* The importer lets go first, as HIP wants. */
				m.op = R_FREE;
				m.slot = which[i];
				R_SEND(m);
				ptrs[i] = s[which[i]].p;
			}
			if (how == 2) {
				ASSERT_EQ(hipSuccess, kfdpoolFreePointers(ptrs, n, res));
			} else {
				for (i = 0; i < n; i++)
					ASSERT_EQ(hipSuccess, how ? hipFreeAsync(ptrs[i], NULL) :
						  hipFree(ptrs[i]));
			}
			nfree[how] += n;
			for (i = 0; i < n; i++) {
				struct rslot *x = &s[which[i]];
				unsigned int o;

				x->live = 0;
				nlive--;
				live_recs--;
				/* Its record is dead; another live one is not. */
				m.op = R_GONE;
				m.slot = which[i];
				m.data = x->data;
				m.other = R_SLOTS;
				for (o = 0; o < R_SLOTS; o++)
					if (s[(k + 7 + o) % R_SLOTS].live) {
						m.other = (k + 7 + o) % R_SLOTS;
						break;
					}
				R_SEND(m);
			}
		} else if (nlive) {
			/* New bytes from one side, checked by both. */
			struct rslot *x;

			while (!s[k].live)
				k = (k + 1) % R_SLOTS;
			x = &s[k];
			m.slot = k;
			m.tag = lh_rand(&seed);
			if (pick < 90) {
				r_fill(x->p, 0, x->size, k, m.tag);
				x->tag_lo = m.tag;
				m.op = R_WROTE;
			} else {
				m.op = R_WRITE;
			}
			x->tag = m.tag;
			nwrite++;
			R_SEND(m);
		}
		/* Every live allocation, every byte, on this side too. */
		for (i = 0; i < R_SLOTS; i++) {
			long bad;

			if (!s[i].live)
				continue;
			bad = r_check(s[i].p, 0, s[i].interior, i, s[i].tag_lo);
			if (bad < 0)
				bad = r_check(s[i].p, s[i].interior, s[i].size, i, s[i].tag);
			ASSERT_EQ(-1, bad) TH_LOG("step %u: exporter: slot %u (%llu bytes at %p) byte %ld; seed 0x%llx",
				step, i, (unsigned long long)s[i].size, s[i].p, bad,
				(unsigned long long)seed0);
		}
		/* The kernel holds the live records, no more. */
		ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(self->pool, &st));
		ASSERT_EQ(live_recs, st.records) TH_LOG("step %u; seed 0x%llx", step,
			(unsigned long long)seed0);
	}
	for (i = 0; i < R_SLOTS; i++) {
		if (!s[i].live)
			continue;
		m.op = R_FREE;
		m.slot = i;
		R_SEND(m);
		ASSERT_EQ(hipSuccess, hipFree(s[i].p));
		s[i].live = 0;
	}
	m.op = R_END;
	R_SEND(m);
#undef R_SEND
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(sv[0]);
	/*
	 * What the pool holds above its release threshold (0) goes back at
	 * the next synchronising call, as in clr and CUDA: a chunk emptied by
	 * an earlier hipFreeAsync may outlast the hipFree calls.  Without a
	 * runtime the call answers an error and still gives it back.
	 */
	hipStreamSynchronize(NULL);
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(self->pool, &st));
	EXPECT_EQ(0, st.records);
	EXPECT_EQ(0, st.entries);
	ksft_print_msg("%u steps: %u allocations (%u past the chunk size, %u at an address used before), frees: %u hipFree, %u hipFreeAsync, %u kfdpoolFreePointers; %u rewrites; up to %u live\n",
		       R_STEPS, nalloc, nbig, reused, nfree[0], nfree[1], nfree[2],
		       nwrite, peak);
}

TEST_HARNESS_MAIN
