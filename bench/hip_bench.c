// SPDX-License-Identifier: GPL-2.0-only
/*
 * hip_bench: the HIP-API round trip that `make demo` does, timed end to
 * end: the exporter creates a host pool, allocates N buffers of 4 KiB,
 * exports the pool (an fd over SCM_RIGHTS) and each pointer (64 bytes); the
 * importer imports the pool and the pointers and reads each buffer's first
 * word.  The clock runs from before hipMemPoolCreate to the importer's last
 * read.  For N = 1 and 1,000, with HIP's calls one pointer at a time and
 * with libkfdpool's batch extensions; median of several rounds.
 */
#include <stdbool.h>
#include <sys/wait.h>

#include <kfdpool_hip.h>

#include "bench.h"

#define BUF 4096u

#define CHECK(call) do {						\
	hipError_t e_ = (call);						\
	if (e_ != hipSuccess)						\
		die("%s: %s", #call, hipGetErrorName(e_));		\
} while (0)

struct job {
	uint32_t n;
	uint32_t batch;		/* use kfdpoolExport/ImportPointers */
	uint32_t stop;
};

static uint64_t word(uint32_t i)
{
	return 0x6b66706869700000ull | i;
}

static void importer(int s)
{
	for (;;) {
		hipMemPoolPtrExportData *data;
		hipMemPool_t pool;
		struct job j;
		void **ptrs;
		uint64_t t1, bad = 0;
		uint32_t i;
		int fd;

		read_all(s, &j, sizeof(j));
		if (j.stop)
			exit(0);
		recv_fds(s, &fd, 1);
		data = calloc(j.n, sizeof(*data));
		ptrs = calloc(j.n, sizeof(*ptrs));
		read_all(s, data, j.n * sizeof(*data));
		CHECK(hipMemPoolImportFromShareableHandle(&pool,
				(void *)(intptr_t)fd,
				hipMemHandleTypePosixFileDescriptor, 0));
		if (j.batch) {
			CHECK(kfdpoolImportPointers(ptrs, pool, data, j.n, NULL));
		} else {
			for (i = 0; i < j.n; i++)
				CHECK(hipMemPoolImportPointer(&ptrs[i], pool, &data[i]));
		}
		for (i = 0; i < j.n; i++)
			bad += *(volatile uint64_t *)ptrs[i] != word(i);
		t1 = now_ns();
		write_all(s, &t1, sizeof(t1));
		write_all(s, &bad, sizeof(bad));
		CHECK(kfdpoolFreePointers(ptrs, j.n, NULL));
		CHECK(hipMemPoolDestroy(pool));
		close(fd);
		free(data);
		free(ptrs);
		write_all(s, "F", 1);
	}
}

static double round_trip(int s, uint32_t n, bool batch)
{
	hipMemPoolProps props;
	hipMemPoolPtrExportData *data = calloc(n, sizeof(*data));
	void **ptrs = calloc(n, sizeof(*ptrs));
	struct job j = { .n = n, .batch = batch };
	hipMemPool_t pool;
	uint64_t t0, t1, bad;
	uint32_t i;
	char c;
	int fd;

	memset(&props, 0, sizeof(props));
	props.allocType = hipMemAllocationTypePinned;
	props.handleTypes = hipMemHandleTypePosixFileDescriptor;
	props.location.type = hipMemLocationTypeHost;

	t0 = now_ns();
	CHECK(hipMemPoolCreate(&pool, &props));
	for (i = 0; i < n; i++) {
		CHECK(hipMallocFromPoolAsync(&ptrs[i], BUF, pool, NULL));
		*(uint64_t *)ptrs[i] = word(i);
	}
	CHECK(hipMemPoolExportToShareableHandle(&fd, pool,
			hipMemHandleTypePosixFileDescriptor, 0));
	if (batch) {
		CHECK(kfdpoolExportPointers(data, ptrs, n, NULL));
	} else {
		for (i = 0; i < n; i++)
			CHECK(hipMemPoolExportPointer(&data[i], ptrs[i]));
	}
	write_all(s, &j, sizeof(j));
	send_fds(s, &fd, 1);
	write_all(s, data, n * sizeof(*data));
	read_all(s, &t1, sizeof(t1));
	read_all(s, &bad, sizeof(bad));
	if (bad)
		die("%llu buffers read wrong", (unsigned long long)bad);
	read_all(s, &c, 1);
	close(fd);
	CHECK(kfdpoolFreePointers(ptrs, n, NULL));
	CHECK(hipMemPoolDestroy(pool));
	free(data);
	free(ptrs);
	return (double)(t1 - t0);
}

int main(void)
{
	static const uint32_t counts[] = { 1, 1000 };
	unsigned int rounds = env_int("BENCH_ROUNDS", 7);
	struct job stop = { .stop = 1 };
	int sv[2], st;
	pid_t child;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		die("socketpair: %s", strerror(errno));
	child = fork();
	if (child < 0)
		die("fork: %s", strerror(errno));
	if (child == 0) {
		close(sv[0]);
		importer(sv[1]);
	}
	close(sv[1]);
	printf("# hip_bench: host pool, 4 KiB buffers, pool create to the "
	       "importer's last read, median of %u rounds\n", rounds);
	for (unsigned int c = 0; c < 2; c++) {
		for (int batch = 0; batch < 2; batch++) {
			double *t = calloc(rounds, sizeof(*t));
			char row[64];

			for (unsigned int r = 0; r < rounds; r++)
				t[r] = round_trip(sv[0], counts[c], batch);
			snprintf(row, sizeof(row), "%u pointer%s (%s)", counts[c],
				 counts[c] > 1 ? "s" : "",
				 batch ? "batch extensions" : "a call per pointer");
			figure("HIP round trip", row, "total", median(t, rounds), "ns");
			figure("HIP round trip", row, "per pointer",
			       median(t, rounds) / counts[c], "ns");
			free(t);
		}
	}
	write_all(sv[0], &stop, sizeof(stop));
	waitpid(child, &st, 0);
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : 1;
}
