// SPDX-License-Identifier: GPL-2.0-only
/*
 * Each host backend of libkfdpool end to end, chosen with KFDPOOL_BACKEND:
 * the system dma-buf heap, udmabuf and vgem.  Left to itself the library
 * takes the first that works (the heap where there is one), so on a kernel
 * with all three the other two would run nowhere but on 6.1 (vgem).  Per
 * backend: the pool's chunks come from it; allocations within a chunk and
 * past the chunk size hold their bytes; a pointer exported to another
 * process reads the same bytes there and what that process writes is seen
 * here; everything freed and destroyed leaves no dma-buf behind.  Also:
 * udmabuf refuses chunks over its size_limit_mb and the pool stays usable,
 * KFDPOOL_CHUNK_SIZE, and names that choose no backend.
 */
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "kfdpool_util.h"
#include "lib_hip_util.h"
#include "kselftest_harness.h"

#define TAG 0xbac0e17dull

/* Is a vgem card there?  (DRM_IOCTL_VERSION names the driver.) */
static bool lb_have_vgem(void)
{
	int fd = kfd_vgem_fd();

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static bool lb_have(const char *path)
{
	return !access(path, R_OK | W_OK);
}

FIXTURE(backend) {
	hipMemPool_t pool;
	int dmabufs;
};

FIXTURE_VARIANT(backend) {
	const char *name;
	const char *dev;	/* NULL: vgem, found by driver name */
};

FIXTURE_VARIANT_ADD(backend, dmaheap) {
	.name = "dmaheap", .dev = "/dev/dma_heap/system",
};

FIXTURE_VARIANT_ADD(backend, udmabuf) {
	.name = "udmabuf", .dev = "/dev/udmabuf",
};

FIXTURE_VARIANT_ADD(backend, vgem) {
	.name = "vgem",
};

FIXTURE_SETUP(backend)
{
	self->pool = NULL;
	self->dmabufs = lh_dmabufs(-1);
	if (variant->dev ? !lb_have(variant->dev) : !lb_have_vgem())
		SKIP(return, "no %s on this kernel", variant->name);
	setenv("KFDPOOL_BACKEND", variant->name, 1);
	ASSERT_EQ(hipSuccess, lh_pool(&self->pool,
				      hipMemHandleTypePosixFileDescriptor, 0));
	ASSERT_STREQ(variant->name, kfdpoolMemPoolBackend(self->pool));
}

FIXTURE_TEARDOWN(backend)
{
	if (self->pool)
		EXPECT_EQ(hipSuccess, hipMemPoolDestroy(self->pool));
	unsetenv("KFDPOOL_BACKEND");
	if (self->dmabufs >= 0)
		EXPECT_EQ(self->dmabufs, lh_dmabufs(self->dmabufs));
}

TEST_F(backend, allocations_hold_their_bytes)
{
	static const size_t sizes[] = { 1, 4096, (64 << 10) + 8, 3 << 20 };
	void *p[4];
	unsigned int i;

	for (i = 0; i < 4; i++) {
		ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p[i], sizes[i],
							     self->pool, NULL));
		lh_fill(p[i], sizes[i] & ~7ul, i, TAG);
	}
	/* The chunk past 2 MiB is one chunk of its own, of its size. */
	EXPECT_LE((2u << 20) + (3u << 20),
		  lh_attr(self->pool, hipMemPoolAttrReservedMemCurrent));
	for (i = 0; i < 4; i++)
		EXPECT_EQ(-1, lh_check(p[i], sizes[i] & ~7ul, i, TAG));
	for (i = 0; i < 4; i++)
		EXPECT_EQ(hipSuccess, hipFree(p[i]));
	EXPECT_EQ(hipSuccess, hipMemPoolTrimTo(self->pool, 0));
	EXPECT_EQ(0, lh_attr(self->pool, hipMemPoolAttrReservedMemCurrent));
	/* The chunks are unmapped (a mapping may hold a buffer that the
	 * dma-buf count no longer shows). */
	for (i = 0; i < 4; i++) {
		unsigned char v;
		void *page = (void *)((uintptr_t)p[i] & ~4095ul);

		EXPECT_EQ(-1, mincore(page, 1, &v));
		EXPECT_EQ(ENOMEM, errno);
	}
}

TEST_F(backend, shared_with_another_process)
{
	hipMemPoolPtrExportData d;
	int fd, status;
	uint64_t *p;
	pid_t pid;

	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync((void **)&p, 8192,
						     self->pool, NULL));
	lh_fill(p, 8192, 1, TAG);
	ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&d, p));
	ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&fd,
		  self->pool, hipMemHandleTypePosixFileDescriptor, 0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		hipMemPool_t ip;
		uint64_t *q;

		/* The importer maps host chunks whatever it would pick. */
		unsetenv("KFDPOOL_BACKEND");
		if (hipMemPoolImportFromShareableHandle(&ip, (void *)(intptr_t)fd,
				hipMemHandleTypePosixFileDescriptor, 0) ||
		    hipMemPoolImportPointer((void **)&q, ip, &d))
			_exit(1);
		if (lh_check(q, 8192, 1, TAG) != -1)
			_exit(2);
		q[5] = ~q[5];
		_exit(hipFree(q) || hipMemPoolDestroy(ip) ? 3 : 0);
	}
	close(fd);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) {
		TH_LOG("importer: step %d", WEXITSTATUS(status));
	}
	/* The same pages: the importer's write is here. */
	EXPECT_EQ(~lh_word(1, 5, TAG), p[5]);
	EXPECT_EQ(hipSuccess, hipFree(p));
}

/* udmabuf refuses buffers over its size_limit_mb (64 by default). */
TEST(udmabuf_chunk_over_its_size_limit)
{
	int dmabufs = lh_dmabufs(-1);
	hipMemPool_t pool;
	void *big, *small;

	if (!lb_have("/dev/udmabuf"))
		SKIP(return, "no udmabuf on this kernel");
	setenv("KFDPOOL_BACKEND", "udmabuf", 1);
	ASSERT_EQ(hipSuccess, lh_pool(&pool,
				      hipMemHandleTypePosixFileDescriptor, 0));
	EXPECT_NE(hipSuccess, hipMallocFromPoolAsync(&big, 66u << 20, pool,
						     NULL));
	EXPECT_EQ(0, lh_attr(pool, hipMemPoolAttrReservedMemCurrent));
	/* Nothing of it stayed, and the pool still works. */
	EXPECT_EQ(dmabufs, lh_dmabufs(dmabufs));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&small, 4096, pool, NULL));
	memset(small, 1, 4096);
	EXPECT_EQ(hipSuccess, hipFree(small));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(pool));
	unsetenv("KFDPOOL_BACKEND");
}

/*
 * KFDPOOL_CHUNK_SIZE: the chunk size of new pools; a value the library
 * refuses makes no pool (never a silent default).
 */
TEST(chunk_size_from_the_environment)
{
	static const struct {
		const char *value;
		uint64_t chunk;
	} cases[] = {
		{ "128k", 128 << 10 }, { "1M", 1 << 20 }, { "262144", 256 << 10 },
		{ "4096", 0 },			/* under 64 KiB: refused */
		{ "100000", 0 },		/* not pages: refused */
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		hipMemPool_t pool;
		void *p;

		setenv("KFDPOOL_CHUNK_SIZE", cases[i].value, 1);
		if (!cases[i].chunk) {
			EXPECT_EQ(hipErrorInvalidValue, lh_pool(&pool,
					hipMemHandleTypePosixFileDescriptor, 0)) {
				TH_LOG("KFDPOOL_CHUNK_SIZE=%s", cases[i].value);
			}
			continue;
		}
		ASSERT_EQ(hipSuccess, lh_pool(&pool,
				hipMemHandleTypePosixFileDescriptor, 0));
		ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, 4096, pool,
							     NULL));
		EXPECT_EQ(cases[i].chunk,
			  lh_attr(pool, hipMemPoolAttrReservedMemCurrent)) {
			TH_LOG("KFDPOOL_CHUNK_SIZE=%s", cases[i].value);
		}
		EXPECT_EQ(hipSuccess, hipFree(p));
		EXPECT_EQ(hipSuccess, hipMemPoolDestroy(pool));
	}
	unsetenv("KFDPOOL_CHUNK_SIZE");
}

/* A name that is no backend, or kfd for host memory, makes no pool. */
TEST(backend_names_that_choose_nothing)
{
	hipMemPool_t pool;

	setenv("KFDPOOL_BACKEND", "floppy", 1);
	EXPECT_EQ(hipErrorInvalidValue, lh_pool(&pool,
			hipMemHandleTypePosixFileDescriptor, 0));
	setenv("KFDPOOL_BACKEND", "kfd", 1);
	EXPECT_EQ(hipErrorInvalidValue, lh_pool(&pool,
			hipMemHandleTypePosixFileDescriptor, 0));
	unsetenv("KFDPOOL_BACKEND");
}

TEST_HARNESS_MAIN
