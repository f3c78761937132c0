// SPDX-License-Identifier: GPL-2.0-only
/*
 * alloc_bench: what allocation costs through the HIP API.
 *
 * 1. A steady-state hipMallocFromPoolAsync + hipFreeAsync pair (pair.h) on
 *    a plain host pool and on an IPC one (hipMemHandleTypePosixFileDescriptor),
 *    4 KiB to 1 MiB, with the system calls one pair makes, counted by the
 *    kernel (bench.h) in a separate, untimed pass.
 * 2. The same pair on a plain pool at HIP's default release threshold (0)
 *    beside the maximum, 4 KiB, 1 MiB and 32 MiB (a chunk of its own): a
 *    loop with no synchronising call, in which the default must cost what
 *    the maximum does (the freed block is the next allocation's, and the
 *    chunk goes back only at a synchronising call).
 * 3. Two threads, each allocating from a pool of its own.
 *    - Throughput per thread, two threads on two CPUs against one alone:
 *      1.0 on hardware when they share nothing.  Under QEMU's
 *      single-threaded TCG one host thread runs both guest CPUs in turns
 *      of milliseconds, so here the ratio is well below 1 whatever the
 *      locking, and cannot show a shared lock.
 *    - Whether they block each other: both threads on one CPU, which the
 *      guest scheduler is made to switch often (fast_switching()), and the
 *      futex calls and voluntary context switches they make per 1,000
 *      pairs.  Threads that share no lock make none; a lock both take costs
 *      a wait and a wake whenever a switch finds its holder inside it.  The
 *      preemptions per 1,000 pairs show that the switching did happen, and
 *      two controls (a mutex each, one mutex for both) what the figures
 *      look like without and with a shared lock.
 */
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "pair.h"

static const size_t sizes[] = { 4096, 16384, 65536, 262144, 1048576 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static const char *size_name(size_t s)
{
	static char buf[32];

	if (s >= 1048576)
		snprintf(buf, sizeof(buf), "%zu MiB", s >> 20);
	else
		snprintf(buf, sizeof(buf), "%zu KiB", s >> 10);
	return buf;
}

static struct sc_counter sc;
static int sc_ok;

/* System calls per pair, steady state. */
static double pair_syscalls(hipMemPool_t pool, size_t size)
{
	const unsigned int n = 1000;
	pid_t self = gettid();
	long calls;

	pair_round(pool, size, 1);
	sc_calibrate(&sc, &self, 1);
	sc_start(&sc, &self, 1);
	pair_round(pool, size, n);
	calls = sc_stop(&sc);
	return (double)calls / n;
}

/* ---- two threads, two pools ---- */

/*
 * What a worker repeats: an allocation pair on its pool, or, to show what
 * the blocking figures look like with and without a shared lock, a
 * control: lock, about 1,000 instructions of work, unlock, on a mutex of
 * its own or on one both workers take.
 */
enum work { W_PAIRS, W_PRIVATE_MUTEX, W_SHARED_MUTEX };

struct worker {
	pthread_t th;
	enum work work;
	pthread_mutex_t mu;
	hipMemPool_t pool;
	int cpu;
	unsigned int pairs;
	volatile pid_t tid;
	uint64_t ns;
	long nvcsw, nivcsw;
};

static volatile int go;
static pthread_mutex_t shared_mu = PTHREAD_MUTEX_INITIALIZER;

static uint64_t work_round(struct worker *w, unsigned int n)
{
	pthread_mutex_t *mu = w->work == W_SHARED_MUTEX ? &shared_mu : &w->mu;
	volatile unsigned long x = 0;
	uint64_t t0;
	unsigned int i, j;

	if (w->work == W_PAIRS)
		return pair_round(w->pool, 4096, n);
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		pthread_mutex_lock(mu);
		for (j = 0; j < 200; j++)
			x += j;
		pthread_mutex_unlock(mu);
	}
	return now_ns() - t0;
}

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	struct rusage r0, r1;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity: %s", strerror(errno));
	work_round(w, 16);
	getrusage(RUSAGE_THREAD, &r0);
	w->tid = gettid();
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		;
	w->ns = work_round(w, w->pairs);
	getrusage(RUSAGE_THREAD, &r1);
	w->nvcsw = r1.ru_nvcsw - r0.ru_nvcsw;
	w->nivcsw = r1.ru_nivcsw - r0.ru_nivcsw;
	return NULL;
}

/* Run @n workers at once; with @count, count their system calls. */
static long run_workers(struct worker *w, int n, int count)
{
	pid_t tids[2];
	long calls = 0;
	int i;

	go = 0;
	for (i = 0; i < n; i++) {
		w[i].tid = 0;
		if (pthread_create(&w[i].th, NULL, worker_fn, &w[i]))
			die("pthread_create");
	}
	for (i = 0; i < n; i++) {
		while (!w[i].tid)
			sched_yield();
		tids[i] = w[i].tid;
	}
	if (count) {
		sc_calibrate(&sc, tids, n);
		sc_start(&sc, tids, n);
	}
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	for (i = 0; i < n; i++)
		pthread_join(w[i].th, NULL);
	if (count)
		calls = sc_stop(&sc);
	return calls;
}

/*
 * Make the guest switch between the two threads of CPU 0 every few tens of
 * microseconds: a short base slice, no running to parity, and a SCHED_FIFO
 * thread on that CPU that wakes every 20 us, so that the scheduler gets
 * to choose that often (the tick alone would let it every 4 ms).  Each
 * switch that finds a thread inside a lock the other one needs costs a
 * futex wait and a wake.  Returns 0, or -errno without the knobs
 * (/sys/kernel/debug/sched).
 */
#define SCHED_DBG "/sys/kernel/debug/sched/"

static volatile int ticking;

static void *ticker_fn(void *arg)
{
	struct sched_param sp = { .sched_priority = 1 };
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set) ||
	    pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp))
		die("ticker: %s", strerror(errno));
	while (ticking) {
		struct timespec ts = { 0, 20000 };

		nanosleep(&ts, NULL);
	}
	return NULL;
}

static int fast_switching(int on, pthread_t *ticker)
{
	static char slice[32];
	const char *parity = on ? "NO_RUN_TO_PARITY" : "RUN_TO_PARITY";
	int fd;

	if (on) {
		fd = open(SCHED_DBG "base_slice_ns", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		if (read(fd, slice, sizeof(slice) - 1) <= 0)
			die("base_slice_ns: %s", strerror(errno));
		close(fd);
	}
	fd = open(SCHED_DBG "base_slice_ns", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	write_all(fd, on ? "50000" : slice, on ? 5 : strlen(slice));
	close(fd);
	fd = open(SCHED_DBG "features", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	write_all(fd, parity, strlen(parity));
	close(fd);
	if (on) {
		ticking = 1;
		if (pthread_create(ticker, NULL, ticker_fn, NULL))
			die("pthread_create");
	} else {
		ticking = 0;
		pthread_join(*ticker, NULL);
	}
	return 0;
}

static void blocking(struct worker *w, const char *row, enum work work)
{
	const char *t = "two threads on two pools";
	unsigned int pairs = w[0].pairs;
	long futex = -1;
	int ret;

	w[0].cpu = w[1].cpu = 0;
	w[0].work = w[1].work = work;
	if (sc_ok) {
		char filter[32];

		snprintf(filter, sizeof(filter), "id == %d", SYS_futex);
		ret = sc_filter(filter);
		if (ret)
			die("syscall filter: %s", strerror(-ret));
		futex = run_workers(w, 2, 1);
		sc_filter(NULL);
	} else {
		run_workers(w, 2, 0);
	}
	w[0].work = w[1].work = W_PAIRS;
	figure(t, row, "preemptions per 1000 pairs",
	       (w[0].nivcsw + w[1].nivcsw) * 1000.0 / (2.0 * pairs), "calls");
	figure(t, row, "blocked per 1000 pairs",
	       (w[0].nvcsw + w[1].nvcsw) * 1000.0 / (2.0 * pairs), "calls");
	if (futex >= 0)
		figure(t, row, "futex calls per 1000 pairs",
		       futex * 1000.0 / (2.0 * pairs), "calls");
}

static void two_threads(unsigned int pairs, unsigned int rounds)
{
	const char *t = "two threads on two pools";
	struct worker w[2];
	pthread_t ticker;
	double one[64], two[64];
	unsigned int r;
	int ret, ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	if (rounds > 64)
		rounds = 64;
	memset(w, 0, sizeof(w));
	for (int i = 0; i < 2; i++) {
		w[i].pool = pair_pool(0);
		w[i].pairs = pairs;
		pthread_mutex_init(&w[i].mu, NULL);
	}

	/* Throughput: one thread on CPU 0, then one on each CPU. */
	for (r = 0; r < rounds; r++) {
		w[0].cpu = 0;
		run_workers(w, 1, 0);
		one[r] = (double)w[0].ns / pairs;
		w[1].cpu = ncpu > 1 ? 1 : 0;
		run_workers(w, 2, 0);
		two[r] = (double)(w[0].ns + w[1].ns) / 2 / pairs;
	}
	printf("# two threads: %u pairs of 4 KiB per thread, each on a plain "
	       "pool of its own; median of %u rounds\n", pairs, rounds);
	figure(t, "1 thread", "per pair", median(one, rounds), "ns");
	figure(t, "2 threads", "per pair", median(two, rounds), "ns");
	figure(t, "2 threads", "throughput per thread vs 1 thread",
	       median(one, rounds) / median(two, rounds), "x");

	/* Blocking: both threads on CPU 0, switched every few tens of us. */
	ret = fast_switching(1, &ticker);
	if (ret) {
		printf("# two threads: no scheduler debug knobs (%s): blocking "
		       "not measured\n", strerror(-ret));
		goto out;
	}
	blocking(w, "2 threads on one CPU switched often", W_PAIRS);
	blocking(w, "control: a mutex each", W_PRIVATE_MUTEX);
	blocking(w, "control: one mutex for both", W_SHARED_MUTEX);
	fast_switching(0, &ticker);
out:
	PAIR_CHECK(hipMemPoolDestroy(w[0].pool));
	PAIR_CHECK(hipMemPoolDestroy(w[1].pool));
}

/*
 * The pair at the default release threshold against the maximum, each on
 * a plain pool of its own; the ratio of the rounds' means (what a loop of
 * pairs costs, expensive pairs included), and its worst over the sizes.
 */
static void default_threshold(unsigned int n, unsigned int rounds)
{
	static const size_t dsizes[] = { 4096, 1048576, 32 << 20 };
	const char *t = "allocation pair by release threshold";
	hipMemPool_t def = pair_pool_threshold(0, 0), max = pair_pool(0);
	double worst = 0;
	unsigned int i;

	printf("# default threshold: the pair on a plain host pool at HIP's "
	       "default release threshold (0) and at the maximum, %u pairs a "
	       "round, %u rounds, no synchronising call\n", n, rounds);
	for (i = 0; i < sizeof(dsizes) / sizeof(dsizes[0]); i++) {
		const char *row = size_name(dsizes[i]);
		struct pair_figures d, m;

		pair_cost(def, dsizes[i], n, rounds, &d);
		pair_cost(max, dsizes[i], n, rounds, &m);
		figure(t, row, "default (0)", d.mean, "ns");
		figure(t, row, "maximum", m.mean, "ns");
		figure(t, row, "default / maximum", d.mean / m.mean, "x");
		figure(t, row, "default (0) typical", d.typical, "ns");
		if (d.mean / m.mean > worst)
			worst = d.mean / m.mean;
	}
	figure(t, "worst of 4 KiB to 32 MiB", "default / maximum", worst, "x");
	PAIR_CHECK(hipMemPoolDestroy(def));
	PAIR_CHECK(hipMemPoolDestroy(max));
}

/* Worst of the sizes, as its own row. */
struct worst {
	double v[5];
};

static void keep_worst(struct worst *w, int i, double v)
{
	if (v > w->v[i])
		w->v[i] = v;
}

int main(void)
{
	const char *t = "allocation pair", *tt = "allocation pair (typical)";
	const char *wrow = "worst of 4 KiB to 1 MiB";
	unsigned int rounds = env_int("BENCH_ROUNDS", 7);
	unsigned int n = env_int("BENCH_PAIRS", 2000);
	struct worst w = { { 0 } }, wt = { { 0 } };
	hipMemPool_t pools[2];
	unsigned int i;
	int ret;

	ret = sc_open(&sc, NULL);
	sc_ok = !ret;
	if (ret)
		printf("# system calls not counted: tracefs: %s\n", strerror(-ret));
	pools[0] = pair_pool(0);
	pools[1] = pair_pool(1);
	printf("# alloc_bench: steady-state hipMallocFromPoolAsync + hipFreeAsync "
	       "on a host pool, %u pairs a round, %u rounds; \"%s\": a "
	       "round's mean, median of the rounds; \"%s\": the median "
	       "single pair\n", n, rounds, t, tt);
	for (i = 0; i < NSIZES; i++) {
		const char *row = size_name(sizes[i]);
		struct pair_figures plain, ipc;

		pair_cost(pools[0], sizes[i], n, rounds, &plain);
		pair_cost(pools[1], sizes[i], n, rounds, &ipc);
		figure(t, row, "plain pool", plain.mean, "ns");
		figure(t, row, "IPC pool", ipc.mean, "ns");
		figure(t, row, "IPC / plain", ipc.mean / plain.mean, "x");
		keep_worst(&w, 0, plain.mean);
		keep_worst(&w, 1, ipc.mean);
		keep_worst(&w, 2, ipc.mean / plain.mean);
		if (sc_ok) {
			double scp = pair_syscalls(pools[0], sizes[i]);
			double sci = pair_syscalls(pools[1], sizes[i]);

			figure(t, row, "plain syscalls per pair", scp, "calls");
			figure(t, row, "IPC syscalls per pair", sci, "calls");
			keep_worst(&w, 3, scp);
			keep_worst(&w, 4, sci);
		}
		figure(tt, row, "plain pool", plain.typical, "ns");
		figure(tt, row, "IPC pool", ipc.typical, "ns");
		figure(tt, row, "IPC / plain", ipc.typical / plain.typical, "x");
		keep_worst(&wt, 0, plain.typical);
		keep_worst(&wt, 1, ipc.typical);
		keep_worst(&wt, 2, ipc.typical / plain.typical);
	}
	figure(t, wrow, "plain pool", w.v[0], "ns");
	figure(t, wrow, "IPC pool", w.v[1], "ns");
	figure(t, wrow, "IPC / plain", w.v[2], "x");
	if (sc_ok) {
		figure(t, wrow, "plain syscalls per pair", w.v[3], "calls");
		figure(t, wrow, "IPC syscalls per pair", w.v[4], "calls");
	}
	figure(tt, wrow, "plain pool", wt.v[0], "ns");
	figure(tt, wrow, "IPC pool", wt.v[1], "ns");
	figure(tt, wrow, "IPC / plain", wt.v[2], "x");
	PAIR_CHECK(hipMemPoolDestroy(pools[0]));
	PAIR_CHECK(hipMemPoolDestroy(pools[1]));

	default_threshold(n, rounds);
	two_threads(env_int("BENCH_THREAD_PAIRS", 20000), rounds);
	if (sc_ok)
		sc_close(&sc);
	return 0;
}
