// SPDX-License-Identifier: GPL-2.0-only
/*
 * Out of memory inside the libraries.  This program's malloc, calloc and
 * realloc stand in for libc's and fail the N-th call made from the code of
 * libkfdpool-hip or libkfdpool (the caller's address says whose it is;
 * every other caller is served).  Each N runs in a fresh process (a child
 * of one that never called the libraries: the allocations a process makes
 * once, its first pool, its control fd, are among those that fail),
 * through one scenario that touches what
 * allocates: pools created and shared, allocations on a stream and on the
 * null stream (stream queues, marker events), pointers exported and
 * imported one at a time and in batches, asynchronous and batched frees,
 * a trim.  Against the TEST-ONLY runtime stand-in, so that stream order
 * allocates its queues and events as with a runtime.
 *
 * For every N up to the last allocation the scenario makes:
 *   - the call whose allocation failed answers hipErrorOutOfMemory, or
 *     succeeds where the library can do without (a forgotten event
 *     dependency, an unmapping put off); never another error, never a
 *     crash;
 *   - once memory is back, everything made so far is freed and destroyed,
 *     the whole scenario then works, and the process holds the fds and
 *     dma-bufs it held before (nothing half-made stays).
 *
 * KFDPOOL_NOMEM_TRACE=1 says on stderr, for each N, which library object
 * and offset made the failed allocation (addr2line names the line) and
 * which call answered what.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>

#include "lib_hip_util.h"
#include "hiprt_standin.h"
#include "kselftest_harness.h"

/* ---- the libraries' allocations, failed on command ---- */

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);

#define MAXSEG 16
static struct { uintptr_t lo, hi; } segs[MAXSEG];
static int nsegs;
static long fail_at;		/* the library allocation to fail, 0: none */
static long seen;		/* library allocations since armed */

static int find_libs(struct dl_phdr_info *info, size_t size, void *data)
{
	int i;

	if (!strstr(info->dlpi_name, "/libkfdpool"))
		return 0;
	for (i = 0; i < info->dlpi_phnum && nsegs < MAXSEG; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		segs[nsegs].lo = info->dlpi_addr + ph->p_vaddr;
		segs[nsegs].hi = segs[nsegs].lo + ph->p_memsz;
		nsegs++;
	}
	return 0;
}

static int fail_this(const void *caller)
{
	uintptr_t a = (uintptr_t)caller;
	int i;

	if (!fail_at)
		return 0;
	for (i = 0; i < nsegs; i++) {
		if (a >= segs[i].lo && a < segs[i].hi) {
			if (++seen != fail_at)
				return 0;
			if (getenv("KFDPOOL_NOMEM_TRACE")) {
				Dl_info di;

				if (dladdr(caller, &di))
					fprintf(stderr, "failing %s+%#lx\n",
						di.dli_fname,
						(unsigned long)(a - (uintptr_t)di.dli_fbase));
			}
			errno = ENOMEM;
			return 1;
		}
	}
	return 0;
}

void *malloc(size_t n)
{
	return fail_this(__builtin_return_address(0)) ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	return fail_this(__builtin_return_address(0)) ? NULL :
	       __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	return fail_this(__builtin_return_address(0)) ? NULL :
	       __libc_realloc(p, n);
}

/* ---- the scenario ---- */

#define FD_TYPE hipMemHandleTypePosixFileDescriptor

struct run {
	hipStream_t s;
	hipMemPool_t pool, imp;
	int fd;
	void *p, *q, *ip, *iq[2];
	hipMemPoolPtrExportData d, d2[2];
	const char *backend;	/* the pool's */
	const char *step;	/* where it stopped */
};

/* Each step, in order: the first that fails ends the run (its error is
 * returned; r->step says which). */
#define STEP(name, call) \
	do { \
		hipError_t e_ = (call); \
		if (e_) { \
			r->step = name; \
			return e_; \
		} \
	} while (0)

static hipError_t scenario(struct run *r)
{
	hipMemPoolProps props = lh_props(FD_TYPE, 0);
	hipError_t res[2];
	void *ptrs[2];

	STEP("create", hipMemPoolCreate(&r->pool, &props));
	r->backend = kfdpoolMemPoolBackend(r->pool);
	STEP("alloc on a stream",
	     hipMallocFromPoolAsync(&r->p, 4096, r->pool, r->s));
	STEP("alloc on the null stream",
	     hipMallocFromPoolAsync(&r->q, 3 << 20, r->pool, NULL));
	STEP("export pointer", hipMemPoolExportPointer(&r->d, r->p));
	ptrs[0] = r->p;
	ptrs[1] = r->q;
	STEP("export pointers", kfdpoolExportPointers(r->d2, ptrs, 2, res));
	STEP("export pool", hipMemPoolExportToShareableHandle(&r->fd, r->pool,
							       FD_TYPE, 0));
	STEP("import pool", hipMemPoolImportFromShareableHandle(&r->imp,
			(void *)(intptr_t)r->fd, FD_TYPE, 0));
	STEP("import pointer", hipMemPoolImportPointer(&r->ip, r->imp, &r->d));
	STEP("import pointers", kfdpoolImportPointers(r->iq, r->imp, r->d2, 2,
						      res));
	STEP("free import async", hipFreeAsync(r->ip, r->s));
	r->ip = NULL;
	STEP("free imports", kfdpoolFreePointers(r->iq, 2, NULL));
	r->iq[0] = r->iq[1] = NULL;
	STEP("free async", hipFreeAsync(r->p, r->s));
	r->p = NULL;
	STEP("free", hipFree(r->q));
	r->q = NULL;
	STEP("trim", hipMemPoolTrimTo(r->pool, 0));
	return hipSuccess;
}

/*
 * Free and destroy whatever @r holds but its stream; 0, or a mask of what
 * failed.  Before the pool goes, with nothing allocated nor imported,
 * trimmed, it must have no chunk left in the kernel: a failed call that
 * left an entry pinned behind the library's back shows here.
 */
static int undo(struct run *r)
{
	struct kfdpool_pool_stats st;
	hipStream_t s = r->s;
	int bad = 0, i;

	if (r->ip)
		bad |= hipFree(r->ip) ? 1 : 0;
	for (i = 0; i < 2; i++)
		if (r->iq[i])
			bad |= hipFree(r->iq[i]) ? 2 : 0;
	if (r->imp)
		bad |= hipMemPoolDestroy(r->imp) ? 4 : 0;
	if (r->p)
		bad |= hipFree(r->p) ? 8 : 0;
	if (r->q)
		bad |= hipFree(r->q) ? 16 : 0;
	if (r->pool) {
		if (hipMemPoolTrimTo(r->pool, 0) ||
		    kfdpoolMemPoolGetStats(r->pool, &st) || st.entries ||
		    st.reserved_bytes)
			bad |= 32;
		bad |= hipMemPoolDestroy(r->pool) ? 64 : 0;
	}
	if (r->fd >= 0)
		close(r->fd);
	memset(r, 0, sizeof(*r));
	r->s = s;
	r->fd = -1;
	return bad;
}

/* ---- what the process holds ---- */

#define MAXFD 1024
static unsigned char fds_then[MAXFD];

/* Calls @fn with each open fd of the process (but the directory's own). */
static void each_fd(void (*fn)(int fd, void *arg), void *arg)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
			fn(atoi(e->d_name), arg);
	closedir(d);
}

static void note_fd(int fd, void *arg)
{
	if (fd < MAXFD)
		((unsigned char *)arg)[fd] = 1;
}

static void fds_note(void)
{
	memset(fds_then, 0, sizeof(fds_then));
	each_fd(note_fd, fds_then);
}

/*
 * The fds opened since fds_note() that are not what libkfdpool keeps for
 * the life of the process (its control fd, a thread's io_uring ring), and
 * those closed since: -1 and a line on stderr for each, or 0.
 */
static int fds_changed(long n)
{
	unsigned char now[MAXFD] = { 0 };
	int fd, ctl = kfdpool_ctl(NULL), bad = 0;
	char path[64], link[64];
	ssize_t len;

	each_fd(note_fd, now);
	for (fd = 0; fd < MAXFD; fd++) {
		if (now[fd] == fds_then[fd])
			continue;
		if (!now[fd]) {
			fprintf(stderr, "allocation %ld: fd %d closed\n", n, fd);
			bad = -1;
			continue;
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, link, sizeof(link) - 1);
		link[len > 0 ? len : 0] = 0;
		if (fd != ctl && strcmp(link, "anon_inode:[io_uring]")) {
			fprintf(stderr, "allocation %ld: fd %d (%s) left open\n",
				n, fd, link);
			bad = -1;
		}
	}
	return bad;
}

enum {
	SWEEP_OOM,		/* the failed allocation failed a call, rightly */
	SWEEP_DID_WITHOUT,	/* the library did without it */
	SWEEP_DONE,		/* the scenario makes fewer allocations */
	SWEEP_WRONG_ERROR,
	SWEEP_NO_RECOVERY,
	SWEEP_UNDO,
	SWEEP_LEAK,
	SWEEP_OTHER_BACKEND,
};

/* The backend a host pool gets when every probe can answer. */
static const char *default_backend(void)
{
	struct kfdpool_query q;

	if (kfdpool_ctl(&q) >= 0 && (q.features & KFDPOOL_FEATURE_HOST_ALLOC))
		return "module";
	return NULL;	/* another: not checked */
}

/* One process: fail the library's @n-th allocation in the scenario. */
static int sweep_child(long n)
{
	struct run r = { .fd = -1 };
	const char *r_step;
	int bufs, ret, i;
	hipError_t e;

	dl_iterate_phdr(find_libs, NULL);
	if (nsegs < 2)
		return 100;
	fds_note();
	bufs = lh_dmabufs(-1);
	if (hipStreamCreate(&r.s))
		return 101;
	fail_at = n;
	e = scenario(&r);
	fail_at = 0;
	if (seen < n)
		ret = SWEEP_DONE;
	else if (e == hipErrorOutOfMemory)
		ret = SWEEP_OOM;
	else if (!e)
		ret = SWEEP_DID_WITHOUT;
	else
		ret = SWEEP_WRONG_ERROR;
	if (ret == SWEEP_WRONG_ERROR || (ret == SWEEP_DONE && e))
		fprintf(stderr, "allocation %ld: %s answered %d\n", n, r.step,
			(int)e);
	if (ret == SWEEP_DONE && e)
		return SWEEP_WRONG_ERROR;
	r_step = r.step ? r.step : "scenario";
	if (getenv("KFDPOOL_NOMEM_TRACE"))
		fprintf(stderr, "allocation %ld: %s answered %d\n", n, r_step,
			(int)e);
	/* A passing shortage must not pick another backend for the pool. */
	if (r.backend && default_backend() &&
	    strcmp(r.backend, default_backend())) {
		fprintf(stderr, "allocation %ld: the pool's backend is %s, "
			"not %s\n", n, r.backend, default_backend());
		ret = SWEEP_OTHER_BACKEND;
	}
	i = undo(&r);
	if (i) {
		fprintf(stderr, "allocation %ld (%s): undo failed (%#x)\n", n,
			r_step, i);
		return SWEEP_UNDO;
	}
	if (ret != SWEEP_WRONG_ERROR) {
		e = scenario(&r);
		if (e) {
			fprintf(stderr, "allocation %ld: after it, %s answered "
				"%d\n", n, r.step, (int)e);
			ret = SWEEP_NO_RECOVERY;
		}
		i = undo(&r);
		if (i) {
			fprintf(stderr, "allocation %ld: undo after the clean "
				"run failed (%#x)\n", n, i);
			return SWEEP_UNDO;
		}
	}
	hipStreamDestroy(r.s);
	if (ret != SWEEP_WRONG_ERROR &&
	    (fds_changed(n) || kfdpool_standin_fds() ||
	     (bufs >= 0 && lh_dmabufs(bufs) != bufs))) {
		fprintf(stderr, "allocation %ld: %d dma-bufs before, %d after; "
			"the stand-in holds %d\n", n, bufs, lh_dmabufs(bufs),
			kfdpool_standin_fds());
		return SWEEP_LEAK;
	}
	return ret;
}

/* (A fixture for its timeout: a process per allocation takes a while on
 * the debug kernel.) */
FIXTURE(nomem) {
	int unused;
};

FIXTURE_SETUP(nomem)
{
}

FIXTURE_TEARDOWN(nomem)
{
}

TEST_F_TIMEOUT(nomem, every_library_allocation_of_the_scenario_fails_in_turn,
	       900)
{
	int oom = 0, without = 0, st = 0;
	struct timespec t0, t1;
	long n;
	pid_t pid;

	if (access("/dev/kfdpool", F_OK))
		SKIP(return, "/dev/kfdpool missing (module not loaded)");
	ksft_print_msg("runtime: TEST-ONLY STAND-IN (selftests/hiprt_standin.c), "
		       "not HIP's runtime\n");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (n = 1; n < 1000; n++) {
		/* This process has made no library call: a child of it
		 * starts as fresh as an exec'd one, without the exec. */
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			_exit(sweep_child(n));
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		ASSERT_TRUE(WIFEXITED(st)) TH_LOG("allocation %ld: status %#x",
						  n, st);
		st = WEXITSTATUS(st);
		ASSERT_GE(SWEEP_DONE, st) TH_LOG("allocation %ld: %d", n, st);
		if (st == SWEEP_DONE)
			break;
		oom += st == SWEEP_OOM;
		without += st == SWEEP_DID_WITHOUT;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ksft_print_msg("%ld library allocations: %d failed their call "
		       "(hipErrorOutOfMemory), %d done without (%.1f s)\n",
		       n - 1, oom, without, t1.tv_sec - t0.tv_sec +
		       (t1.tv_nsec - t0.tv_nsec) / 1e9);
	EXPECT_EQ(SWEEP_DONE, st);
	/* The scenario's own allocations (pools, queues, maps, batches)
	 * cannot be done without. */
	EXPECT_LE(10, oom);
}

/*
 * A process's first pool, from each host backend named in
 * KFDPOOL_BACKEND: its first library allocation (the control fd's)
 * failing makes the create answer hipErrorOutOfMemory, not the module's
 * absence (hipErrorNotInitialized) nor a missing backend
 * (hipErrorNoDevice).  Then the create works.  (Not vgem: its probe's
 * first allocation is libdrm's, whose drmGetVersion() answers its own
 * failed allocation as an ioctl's EFAULT.)  0, or which check failed.
 */
static int first_alloc_child(const char *backend)
{
	hipMemPoolProps props = lh_props(FD_TYPE, 0);
	hipMemPool_t pool = NULL;
	hipError_t e;

	dl_iterate_phdr(find_libs, NULL);
	if (nsegs < 2)
		return 100;
	fail_at = 1;
	e = hipMemPoolCreate(&pool, &props);
	fail_at = 0;
	if (seen < 1)
		return 2;
	if (e != hipErrorOutOfMemory || pool) {
		fprintf(stderr, "%s: the first create answered %d\n", backend,
			(int)e);
		return 3;
	}
	if (hipMemPoolCreate(&pool, &props) ||
	    strcmp(kfdpoolMemPoolBackend(pool), backend) ||
	    hipMemPoolDestroy(pool))
		return 4;
	return 0;
}

TEST_F_TIMEOUT(nomem, no_memory_for_a_backends_first_pool_is_out_of_memory,
	       300)
{
	static const char *const backends[] = {
		"module", "dmaheap", "udmabuf",
	};
	hipMemPoolProps props = lh_props(FD_TYPE, 0);
	hipMemPool_t pool;
	int st, tried = 0;
	size_t i;
	pid_t pid;

	if (access("/dev/kfdpool", F_OK))
		SKIP(return, "/dev/kfdpool missing (module not loaded)");
	for (i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
		/* Only those this machine has. */
		setenv("KFDPOOL_BACKEND", backends[i], 1);
		st = hipMemPoolCreate(&pool, &props);
		unsetenv("KFDPOOL_BACKEND");
		if (st)
			continue;
		EXPECT_EQ(hipSuccess, hipMemPoolDestroy(pool));
		tried++;
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			setenv("KFDPOOL_BACKEND", backends[i], 1);
			execl("/proc/self/exe", "first", "--first-alloc",
			      backends[i], (char *)NULL);
			_exit(127);
		}
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
			TH_LOG("%s: child status %#x", backends[i], st);
	}
	/* The module's, at least, is on every kernel here. */
	EXPECT_LE(1, tried);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--first-alloc"))
		return first_alloc_child(argv[2]);
	return test_harness_run(argc, argv);
}
