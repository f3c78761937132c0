// SPDX-License-Identifier: GPL-2.0-only
/*
 * The extensible uapi: every ioctl struct, batch element and io_uring
 * payload may come from a newer caller, larger than the kernel's.  A larger
 * one whose extra bytes are zero is served as the kernel's own; one with any
 * extra byte set is refused with E2BIG (per element for batches) and does
 * nothing; an io_uring payload's bytes past the caller's struct must be
 * zero (EINVAL).  An older caller's smaller struct is served as if
 * zero-filled, and nothing is written past it.
 */
#include <liburing.h>

#include "kselftest_harness.h"
#include "kfdpool_handle_util.h"
#include "kfdpool_uring_util.h"

#define SZ		(64 * 1024)
#define EXTRA		8	/* bytes a "newer" caller adds */
#define CMD_PAYLOAD	80

/* @cmd's number for a caller whose struct is @usize bytes. */
static unsigned long resized(unsigned long cmd, size_t usize)
{
	return _IOC(_IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(cmd), usize);
}

/*
 * Call @cmd on @fd with @arg (the kernel's struct, _IOC_SIZE(cmd) bytes)
 * followed by EXTRA bytes, all zero, or with byte @bad of them 0xff
 * (@bad < 0: none).  On return @arg holds what the kernel wrote back;
 * *@tail_ok says whether the extra bytes are as they were.  The ioctl's
 * result (batches return counts) or -errno.
 */
static int call_big(int fd, unsigned long cmd, void *arg, int bad,
		    bool *tail_ok)
{
	size_t ksize = _IOC_SIZE(cmd);
	unsigned char buf[256 + EXTRA], want[EXTRA] = {};
	int ret;

	memset(buf, 0, sizeof(buf));
	memcpy(buf, arg, ksize);
	if (bad >= 0)
		want[bad] = buf[ksize + bad] = 0xff;
	ret = ioctl(fd, resized(cmd, ksize + EXTRA), buf);
	if (ret < 0)
		ret = -errno;
	memcpy(arg, buf, ksize);
	*tail_ok = !memcmp(buf + ksize, want, EXTRA);
	return ret;
}

FIXTURE(abi) {
	struct kfd_set s;
	int ctl;
	struct io_uring ring;
	bool ring_ok;
	int ring_err;
};

FIXTURE_SETUP(abi)
{
	self->ring_ok = false;
	self->ctl = -1;
	KFD_SET_SETUP("abi_test", 2, SZ, -1, 0x30);
	self->ctl = kfd_open();
	ASSERT_LE(0, self->ctl);
	self->ring_err = io_uring_queue_init(8, &self->ring,
					     IORING_SETUP_SQE128);
	self->ring_ok = !self->ring_err;
}

FIXTURE_TEARDOWN(abi)
{
	if (self->ring_ok)
		io_uring_queue_exit(&self->ring);
	if (self->ctl >= 0)
		close(self->ctl);
	KFD_SET_TEARDOWN();
}

static struct kfdpool_pool_stats stats_of(int fd)
{
	struct kfdpool_pool_stats st;

	memset(&st, 0xee, sizeof(st));
	kfd_stats(fd, &st);
	return st;
}

/*
 * Each ioctl once per bad extra byte (E2BIG, and the state @probe reads
 * unchanged), then with a zero tail (served: @ok_ret; the tail left zero).
 */
#define CHECK_BIG(fd, cmd, arg, reset, probe, on_ok)			\
	CHECK_BIG_RET(fd, cmd, arg, reset, probe, 0, on_ok)
#define CHECK_BIG_RET(fd, cmd, arg, reset, probe, ok_ret, on_ok)	\
	do {								\
		long long before_, after_;				\
		bool tail_ok_;						\
		int bad_;						\
									\
		for (bad_ = 0; bad_ < EXTRA; bad_++) {			\
			reset;						\
			before_ = (probe);				\
			EXPECT_EQ(-E2BIG, call_big(fd, cmd, &arg, bad_,	\
						   &tail_ok_))		\
				TH_LOG(#cmd ": extra byte %d", bad_);	\
			after_ = (probe);				\
			EXPECT_EQ(before_, after_)			\
				TH_LOG(#cmd ": refused yet did something"); \
			EXPECT_TRUE(tail_ok_);				\
		}							\
		reset;							\
		EXPECT_EQ(ok_ret, call_big(fd, cmd, &arg, -1, &tail_ok_)) \
			TH_LOG(#cmd ": zero tail refused");		\
		EXPECT_TRUE(tail_ok_);					\
		on_ok;							\
	} while (0)

TEST_F(abi, control_device)
{
	struct kfdpool_pool_import_handle ih;
	struct kfdpool_pool_create c;
	struct kfdpool_pool_handle h;
	struct kfdpool_query q;
	int fab;

	CHECK_BIG(self->ctl, KFDPOOL_IOC_QUERY, q, memset(&q, 0, sizeof(q)),
		  0, EXPECT_EQ(KFDPOOL_ABI_VERSION, q.abi_version));

	CHECK_BIG(self->ctl, KFDPOOL_IOC_POOL_CREATE, c,
		  do { memset(&c, 0, sizeof(c));
		       strcpy(c.name, "abi-big"); } while (0),
		  kfd_pool_count(),
		  do { EXPECT_LE(0, c.fd); EXPECT_TRUE(kfd_cloexec(c.fd));
		       close(c.fd); } while (0));

	fab = kfd_pool_create(self->ctl, 0, "abi-fabric",
			      KFDPOOL_HANDLE_TYPE_FABRIC, NULL);
	ASSERT_LE(0, fab);
	ASSERT_EQ(0, kfd_handle_export(fab, KFDPOOL_HANDLE_POLICY_UID, 0, &h));
	CHECK_BIG(self->ctl, KFDPOOL_IOC_POOL_IMPORT_HANDLE, ih,
		  do { memset(&ih, 0, sizeof(ih)); ih.handle = h; } while (0),
		  stats_of(fab).import_fds,
		  do { EXPECT_LE(0, ih.fd); close(ih.fd); } while (0));
	close(fab);
}

TEST_F(abi, pool_commands)
{
	struct kfdpool_handle_rotate hr;
	struct kfdpool_handle_export he;
	struct kfdpool_pool_handle old;
	struct kfdpool_pool_stats st;
	struct kfdpool_pool_export pe;
	struct kfdpool_release rel;
	struct kfdpool_revoke rv;
	struct kfdpool_import im;
	struct kfdpool_export ex;
	struct kfdpool_unpin un;
	struct kfdpool_record rec;
	struct kfdpool_pin pin;
	int pool = self->s.pool, imp = self->s.imp, fd, buf;

	CHECK_BIG(pool, KFDPOOL_IOC_POOL_STATS, st,
		  memset(&st, 0, sizeof(st)), 0,
		  EXPECT_EQ(KFDPOOL_MODE_OWNER, st.mode));

	CHECK_BIG(pool, KFDPOOL_IOC_POOL_EXPORT, pe,
		  memset(&pe, 0, sizeof(pe)), stats_of(pool).import_fds,
		  do { EXPECT_LE(0, pe.fd); close(pe.fd); } while (0));

	/* A dma-buf of its own (the fixture's are pinned already). */
	buf = kfd_dmabuf_new(SZ);
	ASSERT_LE(0, buf);
	CHECK_BIG(pool, KFDPOOL_IOC_PIN, pin,
		  do { memset(&pin, 0, sizeof(pin));
		       pin.dmabuf_fd = buf; } while (0),
		  stats_of(pool).entries, EXPECT_LT(0, pin.entry_id));
	close(buf);

	CHECK_BIG(pool, KFDPOOL_IOC_EXPORT, ex,
		  do { memset(&ex, 0, sizeof(ex));
		       ex.entry_id = pin.entry_id; ex.size = 4096; } while (0),
		  stats_of(pool).records,
		  EXPECT_EQ(KFDPOOL_RECORD_MAGIC, REC(&ex.record)->magic));
	rec = ex.record;

	CHECK_BIG(imp, KFDPOOL_IOC_IMPORT, im,
		  do { memset(&im, 0, sizeof(im)); im.record = rec; } while (0),
		  stats_of(imp).fd_imports,
		  do { EXPECT_LE(0, im.fd); close(im.fd); } while (0));

	CHECK_BIG(imp, KFDPOOL_IOC_RELEASE, rel,
		  do { memset(&rel, 0, sizeof(rel));
		       rel.entry_id = pin.entry_id; } while (0),
		  stats_of(imp).fd_imports, EXPECT_EQ(0, rel.status));

	CHECK_BIG(pool, KFDPOOL_IOC_REVOKE, rv,
		  do { memset(&rv, 0, sizeof(rv)); rv.record = rec; } while (0),
		  stats_of(pool).records, EXPECT_EQ(0, rv.status));

	CHECK_BIG(pool, KFDPOOL_IOC_UNPIN, un,
		  do { memset(&un, 0, sizeof(un));
		       un.entry_id = pin.entry_id; } while (0),
		  stats_of(pool).entries, EXPECT_EQ(0, un.draining));

	CHECK_BIG(pool, KFDPOOL_IOC_HANDLE_EXPORT, he,
		  memset(&he, 0, sizeof(he)), 0,
		  EXPECT_EQ(KFDPOOL_HANDLE_MAGIC, HND(&he.handle)->magic));

	/* A refused rotate leaves the handle working. */
	old = he.handle;
	CHECK_BIG(pool, KFDPOOL_IOC_HANDLE_ROTATE, hr,
		  memset(&hr, 0, sizeof(hr)),
		  ({ fd = kfd_handle_import(self->ctl, &old);
		     if (fd >= 0)
			     close(fd);
		     fd >= 0; }),
		  EXPECT_EQ(-EACCES, kfd_handle_import(self->ctl, &old)));
}

/* The four batch descriptors, each with one element. */
TEST_F(abi, batch_descriptors)
{
	struct kfdpool_release rel = { .entry_id = self->s.entry[0] };
	struct kfdpool_export ex = {};
	struct kfdpool_revoke rv = {};
	struct kfdpool_import im = {};
	struct kfdpool_batch b;
	int pool = self->s.pool, imp = self->s.imp;

	ex.entry_id = self->s.entry[0];
	ex.size = 1;
	CHECK_BIG_RET(pool, KFDPOOL_IOC_EXPORT_BATCH, b,
		  do { memset(&b, 0, sizeof(b)); b.ops = (uintptr_t)&ex;
		       b.count = 1; b.elem_size = sizeof(ex); } while (0),
		  stats_of(pool).records, 1, EXPECT_EQ(0, ex.status));

	rv.record = ex.record;
	CHECK_BIG_RET(pool, KFDPOOL_IOC_REVOKE_BATCH, b,
		  do { memset(&b, 0, sizeof(b)); b.ops = (uintptr_t)&rv;
		       b.count = 1; b.elem_size = sizeof(rv); } while (0),
		  stats_of(pool).records, 1, EXPECT_EQ(0, rv.status));

	ASSERT_EQ(0, kfd_export(pool, self->s.entry[0], 0, 1, &im.record));
	CHECK_BIG_RET(imp, KFDPOOL_IOC_IMPORT_BATCH, b,
		  do { memset(&b, 0, sizeof(b)); b.ops = (uintptr_t)&im;
		       b.count = 1; b.elem_size = sizeof(im);
		       im.fd = -1; } while (0),
		  stats_of(imp).fd_imports, 1,
		  do { EXPECT_EQ(0, im.status); close(im.fd); } while (0));

	CHECK_BIG_RET(imp, KFDPOOL_IOC_RELEASE_BATCH, b,
		  do { memset(&b, 0, sizeof(b)); b.ops = (uintptr_t)&rel;
		       b.count = 1; b.elem_size = sizeof(rel); } while (0),
		  stats_of(imp).fd_imports, 1, EXPECT_EQ(0, rel.status));
}

/* ------------------------------------------------------------------ */
/* Batch elements larger than the kernel's                             */
/* ------------------------------------------------------------------ */

/*
 * An array of @n elements of @ksize bytes each followed by EXTRA bytes:
 * element i gets a non-zero extra byte (at i % EXTRA) when @bad & (1 << i).
 */
#define NEL	8

struct big_arr {
	unsigned char b[NEL * (sizeof(struct kfdpool_import) + EXTRA)];
};

/* Element @i of @a, elements being @ksize + EXTRA bytes. */
static void *elem(struct big_arr *a, size_t ksize, int i)
{
	return a->b + i * (ksize + EXTRA);
}

/* Zero @a; element i gets a set extra byte (i % EXTRA) if @bad bit i. */
static void big_fill(struct big_arr *a, size_t ksize, unsigned int bad)
{
	int i;

	memset(a, 0, sizeof(*a));
	for (i = 0; i < NEL; i++)
		if (bad & (1u << i))
			((unsigned char *)elem(a, ksize, i))[ksize + i % EXTRA] =
				0x80;
}

static bool big_tails_kept(struct big_arr *a, size_t ksize, unsigned int bad)
{
	int i, j;

	for (i = 0; i < NEL; i++)
		for (j = 0; j < EXTRA; j++)
			if (((unsigned char *)elem(a, ksize, i))[ksize + j] !=
			    ((bad & (1u << i)) && j == i % EXTRA ? 0x80 : 0))
				return false;
	return true;
}

/*
 * Run batch @cmd over @n elements of @a (each @ksize + EXTRA bytes) by
 * ioctl, or by io_uring when @ring: the call's result.
 */
static int run_batch(struct io_uring *ring, int fd, unsigned long cmd,
		     struct big_arr *a, int n, size_t ksize)
{
	struct kfdpool_batch b = {};
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int ret;

	b.ops = (uintptr_t)a->b;
	b.count = n;
	b.elem_size = ksize + EXTRA;
	if (!ring) {
		ret = ioctl(fd, cmd, &b);
		return ret < 0 ? -errno : ret;
	}
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = cmd;
	memset(sqe->cmd, 0, CMD_PAYLOAD);
	memcpy(sqe->cmd, &b, sizeof(b));
	if (io_uring_submit(ring) != 1 || io_uring_wait_cqe(ring, &cqe))
		return -EIO;
	ret = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return ret;
}

/*
 * Every batch command, by ioctl and by io_uring: elements with a set extra
 * byte get -E2BIG and are not run; the others are, and every tail is left
 * as it was.
 */
TEST_F(abi, batch_elements)
{
	const unsigned int bad = 0x5a;	/* elements 1, 3, 4, 6 */
	struct kfdpool_record rec[NEL];
	struct big_arr a;
	int way, i, pool = self->s.pool, imp = self->s.imp;

	for (way = 0; way < 2; way++) {
		struct io_uring *ring = way ? &self->ring : NULL;
		int good = NEL - __builtin_popcount(bad);
		size_t k;

		if (way && !self->ring_ok)
			SKIP(return, "%s", kfd_uring_skip_reason(self->ring_err));

		k = sizeof(struct kfdpool_export);
		big_fill(&a, k, bad);
		for (i = 0; i < NEL; i++) {
			struct kfdpool_export *e = elem(&a, k, i);

			e->entry_id = self->s.entry[i % 2];
			e->offset = i * 64;
			e->size = 64;
		}
		ASSERT_EQ(NEL, run_batch(ring, pool, KFDPOOL_IOC_EXPORT_BATCH,
					 &a, NEL, k));
		EXPECT_EQ(good, stats_of(pool).records);
		for (i = 0; i < NEL; i++) {
			struct kfdpool_export *e = elem(&a, k, i);

			EXPECT_EQ(bad & (1u << i) ? -E2BIG : 0, e->status);
			EXPECT_EQ(bad & (1u << i) ? 0 : KFDPOOL_RECORD_MAGIC,
				  REC(&e->record)->magic);
			rec[i] = e->record;
		}
		EXPECT_TRUE(big_tails_kept(&a, k, bad));

		k = sizeof(struct kfdpool_import);
		big_fill(&a, k, bad);
		for (i = 0; i < NEL; i++) {
			struct kfdpool_import *e = elem(&a, k, i);

			/* The refused elements name live records too. */
			e->record = rec[bad & (1u << i) ? 0 : i];
			/* An output: whatever comes in, a refused one says -1. */
			e->fd = 0x5a5a5a5;
		}
		ASSERT_EQ(NEL, run_batch(ring, imp, KFDPOOL_IOC_IMPORT_BATCH,
					 &a, NEL, k));
		for (i = 0; i < NEL; i++) {
			struct kfdpool_import *e = elem(&a, k, i);

			EXPECT_EQ(bad & (1u << i) ? -E2BIG : 0, e->status);
			if (bad & (1u << i)) {
				EXPECT_EQ(-1, e->fd);
			} else {
				EXPECT_LE(0, e->fd);
			}
			if (!(bad & (1u << i)) && e->fd >= 0)
				close(e->fd);
		}
		EXPECT_TRUE(big_tails_kept(&a, k, bad));
		/* Two entries, each imported by some good element. */
		EXPECT_EQ(2, stats_of(imp).fd_imports);

		k = sizeof(struct kfdpool_release);
		big_fill(&a, k, bad);
		for (i = 0; i < NEL; i++)
			((struct kfdpool_release *)elem(&a, k, i))->entry_id =
				self->s.entry[i % 2];
		ASSERT_EQ(NEL, run_batch(ring, imp, KFDPOOL_IOC_RELEASE_BATCH,
					 &a, NEL, k));
		for (i = 0; i < NEL; i++)
			EXPECT_EQ(bad & (1u << i) ? -E2BIG : 0,
				  ((struct kfdpool_release *)
				   elem(&a, k, i))->status);
		EXPECT_TRUE(big_tails_kept(&a, k, bad));
		EXPECT_EQ(0, stats_of(imp).fd_imports);

		k = sizeof(struct kfdpool_revoke);
		big_fill(&a, k, bad);
		for (i = 0; i < NEL; i++)
			((struct kfdpool_revoke *)elem(&a, k, i))->record =
				rec[bad & (1u << i) ? 0 : i];
		ASSERT_EQ(NEL, run_batch(ring, pool, KFDPOOL_IOC_REVOKE_BATCH,
					 &a, NEL, k));
		for (i = 0; i < NEL; i++)
			EXPECT_EQ(bad & (1u << i) ? -E2BIG : 0,
				  ((struct kfdpool_revoke *)
				   elem(&a, k, i))->status);
		EXPECT_TRUE(big_tails_kept(&a, k, bad));
		EXPECT_EQ(0, stats_of(pool).records);
	}
}

/* ------------------------------------------------------------------ */
/* io_uring payloads                                                   */
/* ------------------------------------------------------------------ */

/*
 * Submit @op with @payload (@len bytes, then zeros to 80) and byte @poke of
 * the 80 set to 0xff (@poke < 0: none): the CQE's res.
 */
static int uring1(struct io_uring *ring, int fd, __u32 op,
		  const void *payload, size_t len, int poke)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int ret;

	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = op;
	memset(sqe->cmd, 0, CMD_PAYLOAD);
	memcpy(sqe->cmd, payload, len);
	if (poke >= 0)
		((unsigned char *)sqe->cmd)[poke] = 0xff;
	if (io_uring_submit(ring) != 1 || io_uring_wait_cqe(ring, &cqe))
		return -EIO;
	ret = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return ret;
}

/*
 * For command @op whose payload is @len bytes here (@p, valid): every byte
 * past it non-zero is refused (EINVAL); a caller size of @len + EXTRA with
 * a set extra byte is refused (E2BIG) and so is one past it (EINVAL); sizes
 * above 80 are refused (EINVAL); and the larger size with a
 * zero tail is served: the result is returned for the caller to check.
 * @probe reads state that a refused command must leave alone.
 */
#define CHECK_PAYLOAD(fd, op, p, len, probe, res)			\
	do {								\
		__u32 big_ = resized(op, (len) + EXTRA);		\
		long long before_ = (probe);				\
		int b_;							\
									\
		for (b_ = (len); b_ < CMD_PAYLOAD; b_++)		\
			EXPECT_EQ(-EINVAL, uring1(&self->ring, fd, op, &p, \
						  len, b_))		\
				TH_LOG(#op ": byte %d", b_);		\
		for (b_ = (len); b_ < (len) + EXTRA; b_++)		\
			EXPECT_EQ(-E2BIG, uring1(&self->ring, fd, big_, &p, \
						 len, b_))		\
				TH_LOG(#op " + %d: byte %d", EXTRA, b_); \
		for (b_ = (len) + EXTRA; b_ < CMD_PAYLOAD; b_++)	\
			EXPECT_EQ(-EINVAL, uring1(&self->ring, fd, big_, &p, \
						  len, b_))		\
				TH_LOG(#op " + %d: byte %d", EXTRA, b_); \
		EXPECT_EQ(-EINVAL, uring1(&self->ring, fd,		\
					  resized(op, CMD_PAYLOAD + 8),	\
					  &p, len, -1));		\
		EXPECT_EQ(before_, (probe))				\
			TH_LOG(#op ": a refused command did something"); \
		res = uring1(&self->ring, fd, big_, &p, len, -1);	\
	} while (0)

TEST_F(abi, uring_payloads)
{
	struct kfdpool_uring_export ue = {};
	struct kfdpool_uring_record ur = {};
	struct kfdpool_release rel = {};
	struct kfdpool_import im = {};
	struct kfdpool_export ex = {};
	struct kfdpool_revoke rv = {};
	struct kfdpool_batch b = {};
	struct kfdpool_record rec = {};
	int pool = self->s.pool, imp = self->s.imp, res;

	if (!self->ring_ok)
		SKIP(return, "%s", kfd_uring_skip_reason(self->ring_err));

	ue.entry_id = self->s.entry[0];
	ue.size = 128;
	ue.record_ptr = (uintptr_t)&rec;
	CHECK_PAYLOAD(pool, KFDPOOL_URING_EXPORT, ue, sizeof(ue),
		      stats_of(pool).records, res);
	EXPECT_EQ(0, res);
	EXPECT_EQ(KFDPOOL_RECORD_MAGIC, REC(&rec)->magic);

	ur.record = rec;
	CHECK_PAYLOAD(imp, KFDPOOL_URING_IMPORT, ur, sizeof(ur),
		      stats_of(imp).fd_imports, res);
	EXPECT_LE(0, res);
	if (res >= 0)
		close(res);

	rel.entry_id = self->s.entry[0];
	CHECK_PAYLOAD(imp, KFDPOOL_URING_RELEASE, rel, sizeof(rel),
		      stats_of(imp).fd_imports, res);
	EXPECT_EQ(0, res);

	im.record = rec;
	im.fd = -1;
	b.ops = (uintptr_t)&im;
	b.count = 1;
	b.elem_size = sizeof(im);
	CHECK_PAYLOAD(imp, KFDPOOL_IOC_IMPORT_BATCH, b, sizeof(b),
		      stats_of(imp).fd_imports, res);
	EXPECT_EQ(1, res);
	EXPECT_EQ(0, im.status);
	if (im.fd >= 0)
		close(im.fd);
	rel.status = 0;
	b.ops = (uintptr_t)&rel;
	b.elem_size = sizeof(rel);
	CHECK_PAYLOAD(imp, KFDPOOL_IOC_RELEASE_BATCH, b, sizeof(b),
		      stats_of(imp).fd_imports, res);
	EXPECT_EQ(1, res);
	EXPECT_EQ(0, rel.status);

	ex.entry_id = self->s.entry[1];
	ex.size = 1;
	b.ops = (uintptr_t)&ex;
	b.elem_size = sizeof(ex);
	CHECK_PAYLOAD(pool, KFDPOOL_IOC_EXPORT_BATCH, b, sizeof(b),
		      stats_of(pool).records, res);
	EXPECT_EQ(1, res);
	EXPECT_EQ(0, ex.status);
	rv.record = ex.record;
	b.ops = (uintptr_t)&rv;
	b.elem_size = sizeof(rv);
	CHECK_PAYLOAD(pool, KFDPOOL_IOC_REVOKE_BATCH, b, sizeof(b),
		      stats_of(pool).records, res);
	EXPECT_EQ(1, res);
	EXPECT_EQ(0, rv.status);

	CHECK_PAYLOAD(pool, KFDPOOL_URING_REVOKE, ur, sizeof(ur),
		      stats_of(pool).records, res);
	EXPECT_EQ(0, res);
	EXPECT_EQ(0, stats_of(pool).records);
}

/* The open fds of this process. */
static int fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/*
 * Older callers: a struct smaller than the kernel's is served as if
 * zero-filled, and only its own bytes are written back; a command whose
 * fd would land past the caller's struct hands none out (EINVAL) and is
 * undone.
 */
TEST_F(abi, older_callers)
{
	struct {
		struct kfdpool_pool_create c;
		unsigned char guard[8];
	} big;
	size_t v0 = offsetof(struct kfdpool_pool_create, owner_handle);
	struct kfdpool_pool_stats st;
	int pools, fds;

	/* POOL_CREATE as ABI 2's first binaries call it. */
	memset(&big, 0xee, sizeof(big));
	memset(&big.c, 0, v0);
	strcpy(big.c.name, "abi-old");
	ASSERT_EQ(0, ioctl(self->ctl, resized(KFDPOOL_IOC_POOL_CREATE, v0),
			   &big));
	EXPECT_LE(0, big.c.fd);
	EXPECT_NE(0, big.c.id[0] | big.c.id[1] | big.c.id[15]);
	EXPECT_EQ(0xee, ((unsigned char *)&big)[v0]);
	EXPECT_EQ(0xee, big.guard[7]);
	ASSERT_EQ(0, kfd_stats(big.c.fd, &st));
	EXPECT_EQ(0, memcmp(st.id, big.c.id, KFDPOOL_ID_LEN));
	close(big.c.fd);

	/* Too small to be told the fd: none handed out, nothing made. */
	pools = kfd_pool_count();
	fds = fd_count();
	memset(&big, 0, sizeof(big));
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->ctl,
				     resized(KFDPOOL_IOC_POOL_CREATE,
					     offsetof(struct kfdpool_pool_create,
						      fd)), &big));
	EXPECT_EQ(pools, kfd_pool_count());
	EXPECT_EQ(fds, fd_count());

	/* A QUERY of none of its bytes: served, nothing written. */
	memset(&st, 0xee, sizeof(st));
	EXPECT_EQ(0, kfd_ioctl(self->ctl, resized(KFDPOOL_IOC_QUERY, 0), &st));
	EXPECT_EQ(0xee, ((unsigned char *)&st)[0]);

}

/* An io_uring payload without its tail: its fields read as 0. */
TEST_F(abi, older_uring_payload)
{
	struct kfdpool_release rel = {};
	int res;

	if (!self->ring_ok)
		SKIP(return, "%s", kfd_uring_skip_reason(self->ring_err));
	rel.entry_id = self->s.entry[0];
	res = uring1(&self->ring, self->s.imp,
		     resized(KFDPOOL_URING_RELEASE,
			     offsetof(struct kfdpool_release, status)),
		     &rel, offsetof(struct kfdpool_release, status), -1);
	EXPECT_EQ(-ENOENT, res);
}

TEST_HARNESS_MAIN
