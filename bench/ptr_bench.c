// SPDX-License-Identifier: GPL-2.0-only
/*
 * ptr_bench: the cost of sharing N pointers between two processes, per
 * pointer, end to end (the exporter's clock starts before it exports, the
 * importer's stops when it has every pointer mapped; the bytes are checked
 * after that), median of several rounds, for:
 *   (a) one ioctl per pointer
 *   (b) the batch ioctls
 *   (c) io_uring, one SQE per pointer, submitted in batches of 1, 8, 64, 512
 *   (d) io_uring vectored: one SQE carries a whole batch (4096, or 64)
 *   (e) the baseline users write by hand today: one dma-buf fd per
 *       allocation, passed over SCM_RIGHTS (253 per message), mmap'ed.
 * In (e) the dma-bufs exist before the clock starts, which favours it.
 */
#include <liburing.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "bench.h"
#include "../selftests/kfdpool_format.h"

#define PTR_SIZE	4096u
#define CHUNK_SIZE	(2u << 20)
#define PTRS_PER_CHUNK	(CHUNK_SIZE / PTR_SIZE)
#define MAX_ENTRY	65536

enum mode { M_IOCTL, M_BATCH, M_URING, M_VEC, M_SCM };

struct mode_desc {
	const char *name;
	enum mode mode;
	unsigned int batch;
};

static const struct mode_desc modes[] = {
	{ "(a) ioctl per pointer", M_IOCTL, 1 },
	{ "(b) batch ioctl", M_BATCH, KFD_BATCH_MAX },
	{ "(c) io_uring batch 1", M_URING, 1 },
	{ "(c) io_uring batch 8", M_URING, 8 },
	{ "(c) io_uring batch 64", M_URING, 64 },
	{ "(c) io_uring batch 512", M_URING, 512 },
	{ "(d) io_uring vectored", M_VEC, KFD_BATCH_MAX },
	{ "(d) io_uring vectored 64", M_VEC, 64 },
	{ "(e) SCM_RIGHTS + mmap", M_SCM, FDS_PER_MSG },
};
#define NMODES (sizeof(modes) / sizeof(modes[0]))

struct hdr {
	uint32_t mode;		/* index in modes[], or ~0 to stop */
	uint32_t n;
};

struct reply {
	uint64_t t_recv;	/* importer has every record */
	uint64_t t1;		/* importer has every pointer mapped */
	uint64_t errors;
};

static unsigned int nptrs;
static struct io_uring ring;

static uint64_t pattern(uint64_t i)
{
	return 0x6b6670b0b0000000ull ^ (i * 0x9e3779b97f4a7c15ull);
}

static void uring_cmd(struct io_uring_sqe *sqe, int fd, uint32_t op,
		      const void *payload, size_t len, uint64_t data)
{
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = op;
	memset(sqe->cmd, 0, 80);
	memcpy(sqe->cmd, payload, len);
	sqe->user_data = data;
}

/* Submit what is queued, reap @n completions into res[user_data]. */
static void uring_run(unsigned int n, int *res)
{
	struct io_uring_cqe *cqe;
	unsigned int i;
	int ret;

	ret = io_uring_submit_and_wait(&ring, n);
	if (ret < 0)
		die("io_uring_submit_and_wait: %s", strerror(-ret));
	for (i = 0; i < n; i++) {
		ret = io_uring_wait_cqe(&ring, &cqe);
		if (ret)
			die("io_uring_wait_cqe: %s", strerror(-ret));
		res[cqe->user_data] = cqe->res;
		io_uring_cqe_seen(&ring, cqe);
	}
}

/* ---- exporter ---- */

static void export_all(int pool, const struct mode_desc *m,
		       struct kfdpool_export *ex, struct kfdpool_record *rec,
		       int *res)
{
	unsigned int i, j, k;

	switch (m->mode) {
	case M_IOCTL:
		for (i = 0; i < nptrs; i++)
			if (xioctl(pool, KFDPOOL_IOC_EXPORT, &ex[i]))
				die("export %u: %s", i, strerror(errno));
		break;
	case M_BATCH:
	case M_VEC:
		for (i = 0; i < nptrs; i += k) {
			struct kfdpool_batch b = { .ops = (uintptr_t)&ex[i],
				.elem_size = sizeof(*ex) };
			int ret;

			k = nptrs - i < m->batch ? nptrs - i : m->batch;
			b.count = k;
			if (m->mode == M_BATCH) {
				ret = xioctl(pool, KFDPOOL_IOC_EXPORT_BATCH, &b);
			} else {
				uring_cmd(io_uring_get_sqe(&ring), pool,
					  KFDPOOL_IOC_EXPORT_BATCH, &b, sizeof(b), 0);
				uring_run(1, res);
				ret = res[0];
			}
			if (ret != (int)k)
				die("export batch: %d %s", ret, strerror(errno));
		}
		break;
	case M_URING:
		for (i = 0; i < nptrs; i += k) {
			k = nptrs - i < m->batch ? nptrs - i : m->batch;
			for (j = 0; j < k; j++) {
				struct kfdpool_uring_export u = {
					.entry_id = ex[i + j].entry_id,
					.offset = ex[i + j].offset,
					.size = ex[i + j].size,
					.record_ptr = (uintptr_t)&ex[i + j].record,
				};

				uring_cmd(io_uring_get_sqe(&ring), pool,
					  KFDPOOL_URING_EXPORT, &u, sizeof(u), i + j);
			}
			uring_run(k, res);
		}
		for (i = 0; i < nptrs; i++)
			if (res[i])
				die("uring export %u: %s", i, strerror(-res[i]));
		break;
	case M_SCM:
		break;
	}
	for (i = 0; i < nptrs; i++) {
		if (ex[i].status)
			die("export %u: status %d", i, ex[i].status);
		rec[i] = ex[i].record;
	}
}

static void revoke_all(int pool, struct kfdpool_record *rec)
{
	static struct kfdpool_revoke rv[KFD_BATCH_MAX];
	unsigned int i, j, k;

	for (i = 0; i < nptrs; i += k) {
		struct kfdpool_batch b = { .ops = (uintptr_t)rv,
			.elem_size = sizeof(rv[0]) };

		k = nptrs - i < KFD_BATCH_MAX ? nptrs - i : KFD_BATCH_MAX;
		for (j = 0; j < k; j++)
			rv[j] = (struct kfdpool_revoke){ .record = rec[i + j] };
		b.count = k;
		if (xioctl(pool, KFDPOOL_IOC_REVOKE_BATCH, &b) != (int)k)
			die("revoke batch: %s", strerror(errno));
		for (j = 0; j < k; j++)
			if (rv[j].status)
				die("revoke: %d", rv[j].status);
	}
}

/* ---- importer ---- */

struct held {
	char *base;
	size_t size;
	int fd;
};

static struct held held[MAX_ENTRY + 1];

static void import_done(struct kfdpool_import *im, unsigned int i)
{
	struct held *h = &held[im->entry_id];

	if (im->status)
		die("import %u: %s", i, strerror(-im->status));
	if (!h->base) {
		if (im->fd < 0)
			die("import %u: no fd for a new entry", i);
		h->fd = im->fd;
		h->size = im->entry_size;
		h->base = mmap(NULL, h->size, PROT_READ, MAP_SHARED, h->fd, 0);
		if (h->base == MAP_FAILED)
			die("mmap entry %u: %s", im->entry_id, strerror(errno));
	}
}

/* After the clock stopped: every pointer reads what the exporter wrote. */
static void verify(const struct kfdpool_record *rec, uint64_t *errors)
{
	unsigned int i;

	for (i = 0; i < nptrs; i++)
		if (*(volatile uint64_t *)(held[REC(&rec[i])->entry_id].base +
					   REC(&rec[i])->offset) != pattern(i))
			(*errors)++;
}

static void import_all(int pool, const struct mode_desc *m,
		       const struct kfdpool_record *rec, struct kfdpool_import *im,
		       int *res)
{
	unsigned int i, j, k, first;

	for (i = 0; i < nptrs; i++) {
		im[i] = (struct kfdpool_import){ .record = rec[i] };
		if (held[REC(&rec[i])->entry_id].base)
			im[i].flags = KFDPOOL_IMPORT_VALIDATE;
	}
	switch (m->mode) {
	case M_IOCTL:
		for (i = 0; i < nptrs; i++) {
			if (held[REC(&rec[i])->entry_id].base)
				im[i].flags = KFDPOOL_IMPORT_VALIDATE;
			if (xioctl(pool, KFDPOOL_IOC_IMPORT, &im[i]))
				im[i].status = -errno;
			import_done(&im[i], i);
		}
		return;
	case M_BATCH:
	case M_VEC:
		/* Elements run in order: after an entry's first import, the
		 * ones behind it in the same batch may validate.
		 */
		for (i = 0; i < nptrs; i++)
			if (i % PTRS_PER_CHUNK)
				im[i].flags = KFDPOOL_IMPORT_VALIDATE;
		for (i = 0; i < nptrs; i += k) {
			struct kfdpool_batch b = { .ops = (uintptr_t)&im[i],
				.elem_size = sizeof(*im) };
			int ret;

			k = nptrs - i < m->batch ? nptrs - i : m->batch;
			b.count = k;
			if (m->mode == M_BATCH) {
				ret = xioctl(pool, KFDPOOL_IOC_IMPORT_BATCH, &b);
			} else {
				uring_cmd(io_uring_get_sqe(&ring), pool,
					  KFDPOOL_IOC_IMPORT_BATCH, &b, sizeof(b), 0);
				uring_run(1, res);
				ret = res[0];
			}
			if (ret != (int)k)
				die("import batch: %d %s", ret, strerror(errno));
			for (j = i; j < i + k; j++)
				import_done(&im[j], j);
		}
		return;
	case M_URING:
		/*
		 * SQEs of one submission may complete out of order (a command
		 * that must sleep goes to a worker), so an entry's first
		 * import completes before the SQEs that validate against it.
		 */
		for (i = 0; i < nptrs; i += k) {
			static unsigned int stamp[MAX_ENTRY + 1], cur;

			k = nptrs - i < m->batch ? nptrs - i : m->batch;
			cur++;
			for (first = 0, j = i; j < i + k; j++) {
				uint32_t e = REC(&rec[j])->entry_id;

				if (held[e].base || stamp[e] == cur)
					continue;
				stamp[e] = cur;
				struct kfdpool_uring_record u = { .record = rec[j] };

				uring_cmd(io_uring_get_sqe(&ring), pool,
					  KFDPOOL_URING_IMPORT, &u, sizeof(u), j - i);
				first++;
			}
			if (first)
				uring_run(first, res);
			for (j = i; j < i + k; j++) {
				uint32_t e = REC(&rec[j])->entry_id;

				/* The first SQE of each new entry; the later
				 * ones see it held once it is done.
				 */
				if (held[e].base || stamp[e] != cur)
					continue;
				if (res[j - i] < 0)
					die("uring import: %s", strerror(-res[j - i]));
				im[j].fd = res[j - i];
				im[j].entry_id = REC(&rec[j])->entry_id;
				im[j].offset = REC(&rec[j])->offset;
				im[j].entry_size = CHUNK_SIZE;
				import_done(&im[j], j);
				im[j].flags = ~0u;	/* done */
			}
			for (first = 0, j = i; j < i + k; j++) {
				if (im[j].flags == ~0u)
					continue;
				struct kfdpool_uring_record u = {
					.record = rec[j],
					.flags = KFDPOOL_IMPORT_VALIDATE,
				};

				uring_cmd(io_uring_get_sqe(&ring), pool,
					  KFDPOOL_URING_IMPORT, &u, sizeof(u), j - i);
				first++;
			}
			if (first)
				uring_run(first, res);
			for (j = i; j < i + k; j++) {
				if (im[j].flags == ~0u)
					continue;
				if (res[j - i] < 0)
					die("uring validate: %s", strerror(-res[j - i]));
				im[j].entry_id = REC(&rec[j])->entry_id;
				im[j].offset = REC(&rec[j])->offset;
				im[j].fd = -1;
				import_done(&im[j], j);
			}
		}
		return;
	case M_SCM:
		return;
	}
}

static void release_all(int pool)
{
	unsigned int e;

	for (e = 1; e <= MAX_ENTRY; e++) {
		struct kfdpool_release r = { .entry_id = e };

		if (!held[e].base)
			continue;
		munmap(held[e].base, held[e].size);
		close(held[e].fd);
		if (xioctl(pool, KFDPOOL_IOC_RELEASE, &r))
			die("release %u: %s", e, strerror(errno));
		held[e] = (struct held){ 0 };
	}
}

static char **scm_maps;
static int *scm_fds;

static void scm_import(int sock)
{
	static int fds[FDS_PER_MSG];
	char **maps = scm_maps;
	int *all = scm_fds;
	unsigned int i = 0, j;
	int n;

	while (i < nptrs) {
		n = recv_fds(sock, fds, FDS_PER_MSG);
		for (j = 0; j < (unsigned int)n; j++, i++) {
			all[i] = fds[j];
			maps[i] = mmap(NULL, PTR_SIZE, PROT_READ, MAP_SHARED,
				       fds[j], 0);
			if (maps[i] == MAP_FAILED)
				die("mmap: %s", strerror(errno));
		}
	}
}

static void scm_verify(uint64_t *errors)
{
	unsigned int i;

	for (i = 0; i < nptrs; i++)
		if (*(volatile uint64_t *)scm_maps[i] != pattern(i))
			(*errors)++;
}

static void scm_cleanup(void)
{
	unsigned int i;

	for (i = 0; i < nptrs; i++) {
		munmap(scm_maps[i], PTR_SIZE);
		close(scm_fds[i]);
	}
}

static void importer(int sock, int pool)
{
	struct kfdpool_record *rec = calloc(nptrs, sizeof(*rec));
	struct kfdpool_import *im = calloc(nptrs, sizeof(*im));
	int *res = calloc(nptrs, sizeof(*res));
	struct hdr h;

	scm_maps = calloc(nptrs, sizeof(*scm_maps));
	scm_fds = calloc(nptrs, sizeof(*scm_fds));
	for (;;) {
		struct reply r = { 0 };

		read_all(sock, &h, sizeof(h));
		if (h.mode == ~0u)
			break;
		if (modes[h.mode].mode == M_SCM) {
			scm_import(sock);
			r.t1 = now_ns();
			scm_verify(&r.errors);
			scm_cleanup();
		} else {
			read_all(sock, rec, sizeof(*rec) * nptrs);
			r.t_recv = now_ns();
			import_all(pool, &modes[h.mode], rec, im, res);
			r.t1 = now_ns();
			verify(rec, &r.errors);
			release_all(pool);
		}
		write_all(sock, &r, sizeof(r));
	}
	exit(0);
}

/* ---- exporter, and main ---- */

static bool has_feature(int ctl, uint32_t bit)
{
	struct kfdpool_query q = { 0 };

	if (xioctl(ctl, KFDPOOL_IOC_QUERY, &q))
		die("query: %s", strerror(errno));
	return q.features & bit;
}

int main(void)
{
	unsigned int rounds = env_int("BENCH_ROUNDS", 7);
	unsigned int nchunks, i, c, r;
	struct kfdpool_pool_create pc = { .handle_types = KFDPOOL_HANDLE_TYPE_FD };
	struct kfdpool_pool_export pe = { 0 };
	struct kfdpool_export *ex;
	struct kfdpool_record *rec;
	int *res, *ptr_fds, sv[2], ctl, pool;
	double per_ptr[NMODES] = { 0 }, export_ns[NMODES], import_ns[NMODES];
	bool ran[NMODES] = { 0 };
	uint32_t *entry;
	pid_t child;

	nptrs = env_int("BENCH_PTRS", 4096);
	if (!nptrs || nptrs % PTRS_PER_CHUNK)
		die("BENCH_PTRS must be a multiple of %u", PTRS_PER_CHUNK);
	nchunks = nptrs / PTRS_PER_CHUNK;

	/*
	 * The baseline holds one fd per allocation in each process: past the
	 * default RLIMIT_NOFILE (1024) it fails, as it does for users.  Give
	 * it room, so that it is measured rather than refused.
	 */
	{
		struct rlimit rl = { .rlim_cur = 2 * nptrs + 1024,
				     .rlim_max = 2 * nptrs + 1024 };
		struct rlimit old;

		getrlimit(RLIMIT_NOFILE, &old);
		if (old.rlim_cur < rl.rlim_cur && setrlimit(RLIMIT_NOFILE, &rl))
			die("RLIMIT_NOFILE %u: %s (run as root)",
			    (unsigned int)rl.rlim_cur, strerror(errno));
		printf("# RLIMIT_NOFILE raised from %llu to %llu for the baseline\n",
		       (unsigned long long)old.rlim_cur,
		       (unsigned long long)rl.rlim_cur);
	}

	ctl = open("/dev/kfdpool", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		die("/dev/kfdpool: %s", strerror(errno));
	strcpy(pc.name, "ptr_bench");
	if (xioctl(ctl, KFDPOOL_IOC_POOL_CREATE, &pc))
		die("pool create: %s", strerror(errno));
	pool = pc.fd;

	/* The chunks, pinned, each pointer's first word set. */
	entry = calloc(nchunks, sizeof(*entry));
	for (c = 0; c < nchunks; c++) {
		struct kfdpool_pin pin = { .dmabuf_fd = heap_dmabuf(CHUNK_SIZE) };
		uint64_t *p;

		p = mmap(NULL, CHUNK_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
			 pin.dmabuf_fd, 0);
		if (p == MAP_FAILED)
			die("mmap chunk: %s", strerror(errno));
		for (i = 0; i < PTRS_PER_CHUNK; i++)
			p[i * PTR_SIZE / 8] = pattern(c * PTRS_PER_CHUNK + i);
		munmap(p, CHUNK_SIZE);
		if (xioctl(pool, KFDPOOL_IOC_PIN, &pin))
			die("pin: %s", strerror(errno));
		close(pin.dmabuf_fd);
		entry[c] = pin.entry_id;
	}
	ex = calloc(nptrs, sizeof(*ex));
	rec = calloc(nptrs, sizeof(*rec));
	res = calloc(nptrs, sizeof(*res));

	/* The baseline's allocations: one dma-buf each. */
	ptr_fds = calloc(nptrs, sizeof(*ptr_fds));
	for (i = 0; i < nptrs; i++) {
		uint64_t *p;

		ptr_fds[i] = heap_dmabuf(PTR_SIZE);
		p = mmap(NULL, PTR_SIZE, PROT_WRITE, MAP_SHARED, ptr_fds[i], 0);
		if (p == MAP_FAILED)
			die("mmap: %s", strerror(errno));
		*p = pattern(i);
		munmap(p, PTR_SIZE);
	}

	if (xioctl(pool, KFDPOOL_IOC_POOL_EXPORT, &pe))
		die("pool export: %s", strerror(errno));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		die("socketpair: %s", strerror(errno));
	child = fork();
	if (child < 0)
		die("fork: %s", strerror(errno));
	if (child == 0) {
		close(sv[0]);
		close(pool);
		if (io_uring_queue_init(512, &ring, IORING_SETUP_SQE128))
			die("io_uring_queue_init");
		importer(sv[1], pe.fd);
	}
	close(sv[1]);
	close(pe.fd);
	if (io_uring_queue_init(512, &ring, IORING_SETUP_SQE128))
		die("io_uring_queue_init");

	printf("# ptr_bench: %u pointers of %u bytes in %u chunks of %u bytes, "
	       "median of %u rounds\n", nptrs, PTR_SIZE, nchunks, CHUNK_SIZE, rounds);
	for (unsigned int m = 0; m < NMODES; m++) {
		double *t = calloc(rounds, sizeof(*t));
		double *te = calloc(rounds, sizeof(*te));
		double *ti = calloc(rounds, sizeof(*ti));
		uint64_t errors = 0;

		if ((modes[m].mode == M_BATCH &&
		     !has_feature(ctl, KFDPOOL_FEATURE_BATCH)) ||
		    ((modes[m].mode == M_URING || modes[m].mode == M_VEC) &&
		     !has_feature(ctl, KFDPOOL_FEATURE_URING_CMD))) {
			printf("# %s: not supported by this module\n", modes[m].name);
			free(t);
			continue;
		}
		for (r = 0; r < rounds; r++) {
			struct hdr h = { .mode = m, .n = nptrs };
			struct reply rep;
			uint64_t t0, t_exp;

			for (i = 0; i < nptrs; i++)
				ex[i] = (struct kfdpool_export){
					.entry_id = entry[i / PTRS_PER_CHUNK],
					.offset = (uint64_t)(i % PTRS_PER_CHUNK) * PTR_SIZE,
					.size = PTR_SIZE,
				};
			t0 = now_ns();
			t_exp = t0;
			if (modes[m].mode == M_SCM) {
				write_all(sv[0], &h, sizeof(h));
				for (i = 0; i < nptrs; i += FDS_PER_MSG)
					send_fds(sv[0], &ptr_fds[i],
						 nptrs - i < FDS_PER_MSG ?
						 nptrs - i : FDS_PER_MSG);
			} else {
				export_all(pool, &modes[m], ex, rec, res);
				t_exp = now_ns();
				write_all(sv[0], &h, sizeof(h));
				write_all(sv[0], rec, sizeof(*rec) * nptrs);
			}
			read_all(sv[0], &rep, sizeof(rep));
			t[r] = (double)(rep.t1 - t0) / nptrs;
			te[r] = (double)(t_exp - t0) / nptrs;
			ti[r] = (double)(rep.t1 - rep.t_recv) / nptrs;
			errors += rep.errors;
			if (modes[m].mode != M_SCM)
				revoke_all(pool, rec);
		}
		if (errors)
			die("%s: %llu pointers read wrong bytes", modes[m].name,
			    (unsigned long long)errors);
		per_ptr[m] = median(t, rounds);
		export_ns[m] = median(te, rounds);
		import_ns[m] = median(ti, rounds);
		ran[m] = true;
		free(t);
		free(te);
		free(ti);
	}
	for (unsigned int m = 0; m < NMODES; m++) {
		if (!ran[m])
			continue;
		figure("pointer sharing", modes[m].name, "per pointer",
		       per_ptr[m], "ns");
		if (modes[m].mode != M_SCM) {
			figure("pointer sharing", modes[m].name, "export",
			       export_ns[m], "ns");
			figure("pointer sharing", modes[m].name, "import",
			       import_ns[m], "ns");
		}
		if (ran[0])
			figure("pointer sharing", modes[m].name, "x cheaper than (a)",
			       per_ptr[0] / per_ptr[m], "x");
		if (ran[NMODES - 1])
			figure("pointer sharing", modes[m].name, "x cheaper than (e)",
			       per_ptr[NMODES - 1] / per_ptr[m], "x");
		if (ran[1] && modes[m].mode == M_VEC)
			figure("pointer sharing", modes[m].name, "x the cost of (b)",
			       per_ptr[m] / per_ptr[1], "x");
	}
	{
		struct hdr stop = { .mode = ~0u };
		int st;

		write_all(sv[0], &stop, sizeof(stop));
		waitpid(child, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			die("importer failed");
	}
	return 0;
}
