// SPDX-License-Identifier: GPL-2.0-only
/*
 * libkfdpool's HIP mempool IPC between processes: an exporter and an
 * importer joined by a unix socket (SCM_RIGHTS for the pool fd), 1,000
 * pointers of mixed sizes (4 KiB to 8 MiB), bytes checked in both
 * directions, attributes against the kernel's stats, the batch entry
 * points, and every dma-buf given back at the end.
 */
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "lib_hip_util.h"
#include "kselftest_harness.h"

/* The runtime's, which libkfdpool-hip defines too (rt/types.h). */
hipError_t hipStreamSynchronize(hipStream_t stream);

#define NPTR 1000
#define TAG_EXP 0x4558504f52544552ULL	/* written by the exporter */
#define TAG_IMP 0x494d504f52544552ULL	/* written by the importer */

struct msg_hdr {
	uint32_t n;
	uint32_t interior;	/* exported at base + interior (batch test) */
};

/* Mixed sizes, 4 KiB .. 8 MiB: mostly small, some chunk-sized, a few
 * larger than a chunk (their own chunk). */
static size_t pick_size(unsigned int i, uint64_t *seed)
{
	uint64_t r = lh_rand(seed);

	if (i % 200 == 0)
		return 8u << 20;
	if (i % 10 == 0)
		return (256u << 10) + (r % (768u << 10)) / 4096 * 4096;
	return 4096 + (r % (60u << 10)) / 4096 * 4096;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#define CHILD_FAIL(code, ...) do { \
	ksft_print_msg("importer: " __VA_ARGS__); \
	return (code); \
} while (0)

/*
 * The importer: receive the pool fd and the export data, import every
 * pointer (one by one, or with kfdpoolImportPointers), check the
 * exporter's bytes, write its own, report attributes, free everything.
 */
static int importer(int sock, int batch)
{
	hipMemPoolPtrExportData *data;
	hipMemPool_t pool, again;
	struct kfdpool_pool_stats st;
	struct msg_hdr h;
	size_t *sizes;
	void **ptrs;
	uint64_t attrs[4];
	hipError_t e;
	double t0;
	char c;
	int fd, nfds;
	uint32_t i;

	fd = lh_recv_fd(sock);
	if (fd < 0)
		CHILD_FAIL(10, "no fd\n");
	e = hipMemPoolImportFromShareableHandle(&pool, (void *)(intptr_t)fd,
			hipMemHandleTypePosixFileDescriptor, 0);
	if (e)
		CHILD_FAIL(11, "import pool: %s\n", hipGetErrorName(e));
	/* The same pool twice is the same hipMemPool_t. */
	e = hipMemPoolImportFromShareableHandle(&again, (void *)(intptr_t)fd,
			hipMemHandleTypePosixFileDescriptor, 0);
	if (e || again != pool)
		CHILD_FAIL(12, "second import: %s %p %p\n", hipGetErrorName(e),
			   (void *)again, (void *)pool);
	if (hipMemPoolDestroy(again))
		CHILD_FAIL(13, "destroy of the second import\n");
	close(fd);	/* the library holds its own */
	/* An imported pool cannot allocate. */
	if (hipMallocFromPoolAsync((void **)&ptrs, 4096, pool, NULL) !=
	    hipErrorInvalidValue)
		CHILD_FAIL(14, "allocation from an imported pool\n");

	if (lh_read_all(sock, &h, sizeof(h)))
		CHILD_FAIL(15, "header\n");
	sizes = calloc(h.n, sizeof(*sizes));
	data = calloc(h.n, sizeof(*data));
	ptrs = calloc(h.n, sizeof(*ptrs));
	if (!sizes || !data || !ptrs ||
	    lh_read_all(sock, sizes, h.n * sizeof(*sizes)) ||
	    lh_read_all(sock, data, h.n * sizeof(*data)))
		CHILD_FAIL(16, "payload\n");

	nfds = lh_nfds();
	t0 = now_ms();
	if (batch) {
		hipError_t *res = calloc(h.n, sizeof(*res));

		e = kfdpoolImportPointers(ptrs, pool, data, h.n, res);
		if (e)
			CHILD_FAIL(17, "kfdpoolImportPointers: %s (first %s)\n",
				   hipGetErrorName(e), hipGetErrorName(res[0]));
		free(res);
	} else {
		for (i = 0; i < h.n; i++) {
			e = hipMemPoolImportPointer(&ptrs[i], pool, &data[i]);
			if (e)
				CHILD_FAIL(18, "import %u: %s\n", i,
					   hipGetErrorName(e));
		}
	}
	ksft_print_msg("importer: %u pointers imported in %.1f ms (%s, transport %d)\n",
		       h.n, now_ms() - t0, batch ? "kfdpoolImportPointers" :
		       "hipMemPoolImportPointer each", kfdpool_last_batch_mode());
	/* Imported chunks cost no fd either: the mapping holds them (batch
	 * imports use the batch ioctl: no ring). */
	if (lh_nfds() != nfds)
		CHILD_FAIL(27, "%d fds before imports, %d after\n", nfds, lh_nfds());
	/* The exporter's bytes, then ours. */
	for (i = 0; i < h.n; i++) {
		size_t len = sizes[i] - h.interior;
		long bad;

		bad = lh_check((char *)ptrs[i], len, i, TAG_EXP);
		if (bad >= 0)
			CHILD_FAIL(19, "pointer %u: word %ld differs\n", i, bad);
		lh_fill(ptrs[i], len, i, TAG_IMP);
	}
	if (kfdpoolMemPoolGetStats(pool, &st))
		CHILD_FAIL(20, "stats\n");
	attrs[0] = lh_attr(pool, hipMemPoolAttrReservedMemCurrent);
	attrs[1] = lh_attr(pool, hipMemPoolAttrUsedMemCurrent);
	attrs[2] = st.fd_imports;
	attrs[3] = st.fd_imported_bytes;
	c = 'W';
	if (lh_write_all(sock, &c, 1) || lh_write_all(sock, attrs, sizeof(attrs)))
		CHILD_FAIL(21, "report\n");
	if (lh_read_all(sock, &c, 1) || c != 'D')
		CHILD_FAIL(22, "done\n");
	if (batch) {
		e = kfdpoolFreePointers(ptrs, h.n, NULL);
		if (e)
			CHILD_FAIL(23, "kfdpoolFreePointers: %s\n",
				   hipGetErrorName(e));
	} else {
		for (i = 0; i < h.n; i++)
			if (hipFree(ptrs[i]))
				CHILD_FAIL(24, "hipFree %u\n", i);
	}
	/* Every import released. */
	if (kfdpoolMemPoolGetStats(pool, &st) || st.fd_imports)
		CHILD_FAIL(25, "%u imports left\n", st.fd_imports);
	if (hipMemPoolDestroy(pool))
		CHILD_FAIL(26, "destroy\n");
	c = 'X';
	lh_write_all(sock, &c, 1);
	return 0;
}

FIXTURE(ipc) {
	hipMemPool_t pool;
	int base_dmabufs;
};

FIXTURE_SETUP(ipc)
{
	LH_FD_POOL_SETUP(1ull << 30);
}

FIXTURE_TEARDOWN(ipc)
{
	LH_FD_POOL_TEARDOWN();
}

static void run_ipc(struct __test_metadata *_metadata, hipMemPool_t pool,
		    int batch)
{
	hipMemPoolPtrExportData *data = calloc(NPTR, sizeof(*data));
	size_t *sizes = calloc(NPTR, sizeof(*sizes));
	void **ptrs = calloc(NPTR, sizeof(*ptrs));
	void **xptrs = calloc(NPTR, sizeof(*xptrs));
	struct kfdpool_pool_stats st;
	struct msg_hdr h = { NPTR, batch ? 64 : 0 };
	uint64_t seed = 0x1234567 + batch, total = 0, attrs[4];
	double t0;
	int nfds;
	int sv[2], fd, status;
	unsigned int i, bad = 0;
	pid_t pid;
	char c;

	ASSERT_TRUE(data && sizes && ptrs && xptrs);
	nfds = lh_nfds();
	for (i = 0; i < NPTR; i++) {
		sizes[i] = pick_size(i, &seed);
		ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&ptrs[i],
			  sizes[i], pool, NULL)) TH_LOG("alloc %u", i);
		lh_fill((char *)ptrs[i] + h.interior, sizes[i] - h.interior,
			i, TAG_EXP);
		total += sizes[i];
		/* The batch run exports an interior address: the offset
		 * travels with the record. */
		xptrs[i] = (char *)ptrs[i] + h.interior;
	}
	EXPECT_EQ(nfds, lh_nfds());
	t0 = now_ms();
	if (batch) {
		hipError_t *res = calloc(NPTR, sizeof(*res));

		ASSERT_EQ(hipSuccess, kfdpoolExportPointers(data, xptrs, NPTR,
							     res));
		for (i = 0; i < NPTR; i++)
			ASSERT_EQ(hipSuccess, res[i]);
		free(res);
	} else {
		for (i = 0; i < NPTR; i++)
			ASSERT_EQ(hipSuccess,
				  hipMemPoolExportPointer(&data[i], ptrs[i]));
	}
	ksft_print_msg("exporter: %u pointers exported in %.1f ms (%s)\n", NPTR,
		       now_ms() - t0, batch ?
		       "kfdpoolExportPointers, interior: new records" :
		       "hipMemPoolExportPointer each: new records");
	/* Chunks cost no fd: the pin and the mapping hold them.  The only
	 * new fd may be this thread's io_uring ring (batch export). */
	EXPECT_LE(lh_nfds(), nfds + 1);
	nfds = lh_nfds();
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(pool, &st));
	ksft_print_msg("%u pointers, %llu bytes, %u chunks (entries), %u records, reserved %llu, used %llu\n",
		       NPTR, (unsigned long long)total, st.entries, st.records,
		       (unsigned long long)st.reserved_bytes,
		       (unsigned long long)st.used_bytes);
	/* Reserved bytes are the kernel's figures; used bytes are the
	 * allocated bytes (HIP's meaning), the library's count. */
	EXPECT_EQ(st.reserved_bytes,
		  lh_attr(pool, hipMemPoolAttrReservedMemCurrent));
	EXPECT_EQ(st.reserved_high,
		  lh_attr(pool, hipMemPoolAttrReservedMemHigh));
	EXPECT_EQ(total, lh_attr(pool, hipMemPoolAttrUsedMemCurrent));
	EXPECT_EQ(total, lh_attr(pool, hipMemPoolAttrUsedMemHigh));
	/* Records are made at export, one per exported address: the kernel
	 * counts the bytes of the chunks that have one (here, every chunk). */
	EXPECT_EQ(st.reserved_bytes, st.used_bytes);
	EXPECT_LE(total, st.reserved_bytes);
	EXPECT_EQ(NPTR, st.records);

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(sv[0]);
		_exit(importer(sv[1], batch));
	}
	close(sv[1]);
	ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&fd, pool,
		  hipMemHandleTypePosixFileDescriptor, 0));
	ASSERT_EQ(0, lh_send_fd(sv[0], fd));
	close(fd);
	ASSERT_EQ(0, lh_write_all(sv[0], &h, sizeof(h)));
	ASSERT_EQ(0, lh_write_all(sv[0], sizes, NPTR * sizeof(*sizes)));
	ASSERT_EQ(0, lh_write_all(sv[0], data, NPTR * sizeof(*data)));

	if (!lh_read_all(sv[0], &c, 1) && c == 'W' &&
	    !lh_read_all(sv[0], attrs, sizeof(attrs))) {
		/* The importer's bytes, seen by the exporter. */
		for (i = 0; i < NPTR; i++)
			if (lh_check((char *)ptrs[i] + h.interior,
				     sizes[i] - h.interior, i, TAG_IMP) >= 0)
				bad++;
		EXPECT_EQ(0, bad);
		/* Both sides see the same pool figures (an importer's used
		 * bytes are the exported ones: it cannot see allocations). */
		ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(pool, &st));
		EXPECT_EQ(st.reserved_bytes, attrs[0]);
		EXPECT_EQ(st.used_bytes, attrs[1]);
		/* Each chunk imported once, whatever number of pointers. */
		EXPECT_EQ(st.entries, attrs[2]);
		EXPECT_EQ(st.reserved_bytes, attrs[3]);
		ksft_print_msg("importer: %llu chunks imported (%llu bytes) for %u pointers\n",
			       (unsigned long long)attrs[2],
			       (unsigned long long)attrs[3], NPTR);
		c = 'D';
		lh_write_all(sv[0], &c, 1);
		lh_read_all(sv[0], &c, 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(sv[0]);

	ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(pool, &st));
	EXPECT_EQ(0, st.import_fds);
	if (batch) {
		ASSERT_EQ(hipSuccess, kfdpoolFreePointers(ptrs, NPTR, NULL));
	} else {
		for (i = 0; i < NPTR; i++)
			ASSERT_EQ(hipSuccess, hipFreeAsync(ptrs[i], NULL));
	}
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(pool, &st));
	EXPECT_EQ(0, st.records);
	EXPECT_EQ(0, st.used_bytes);
	EXPECT_EQ(0, lh_attr(pool, hipMemPoolAttrUsedMemCurrent));
	/* Release threshold 0: every free chunk goes back at the next
	 * synchronising call (hipFree is one), not in hipFreeAsync.  (No
	 * runtime: no stream to wait for, and it says so.) */
	if (!batch) {
		EXPECT_NE(0, st.entries);
		EXPECT_EQ(hipErrorInvalidHandle, hipStreamSynchronize(NULL));
		ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(pool, &st));
	}
	EXPECT_EQ(0, st.entries);
	EXPECT_EQ(0, lh_attr(pool, hipMemPoolAttrReservedMemCurrent));
	EXPECT_EQ(nfds, lh_nfds());
	free(data);
	free(sizes);
	free(ptrs);
	free(xptrs);
}

TEST_F_TIMEOUT(ipc, thousand_pointers, 600)
{
	run_ipc(_metadata, self->pool, 0);
}

TEST_F_TIMEOUT(ipc, thousand_pointers_batch_interior, 600)
{
	run_ipc(_metadata, self->pool, 1);
}

TEST_HARNESS_MAIN
