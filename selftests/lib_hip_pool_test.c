// SPDX-License-Identifier: GPL-2.0-only
/*
 * libkfdpool's HIP mempool API in one process and with a forked importer:
 * the negative cases of pointer sharing (pool without handle types, flags,
 * a handle type the pool lacks, allocating from an imported pool,
 * importing after the exporter freed, corrupted export data, export data
 * of another pool), attributes and their HIP rules against the kernel's
 * stats, release threshold and trimming, maxSize, access, lifetimes
 * (imports outliving the exporter's free), threads, and dma-bufs returned.
 */
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <grp.h>
#include <sys/stat.h>

#include "lib_hip_util.h"
#include "kselftest_harness.h"
#include "kfdpool_state.h"

FIXTURE(pool) {
	hipMemPool_t pool;	/* host pool, POSIX fd handles */
	hipMemPool_t imp;	/* the same pool imported in this process */
	int base_dmabufs;
};

FIXTURE_SETUP(pool)
{
	hipError_t e;
	int fd;

	self->pool = self->imp = NULL;
	if (access("/dev/kfdpool", F_OK))
		SKIP(return, "/dev/kfdpool missing (module not loaded)");
	self->base_dmabufs = lh_dmabufs(-1);
	e = lh_pool(&self->pool, hipMemHandleTypePosixFileDescriptor, 0);
	if (e == hipErrorNoDevice)
		SKIP(return, "no host dma-buf exporter");
	ASSERT_EQ(hipSuccess, e);
	ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&fd,
		  self->pool, hipMemHandleTypePosixFileDescriptor, 0));
	/* An importer in the same process: a second mapping of each chunk,
	 * through an import fd, as another process would have. */
	ASSERT_EQ(hipSuccess, hipMemPoolImportFromShareableHandle(&self->imp,
		  (void *)(intptr_t)fd, hipMemHandleTypePosixFileDescriptor, 0));
	close(fd);
	ASSERT_NE(self->pool, self->imp);
}

FIXTURE_TEARDOWN(pool)
{
	if (self->imp)
		EXPECT_EQ(hipSuccess, hipMemPoolDestroy(self->imp));
	if (self->pool)
		EXPECT_EQ(hipSuccess, hipMemPoolDestroy(self->pool));
	if (self->pool && self->base_dmabufs >= 0)
		EXPECT_EQ(self->base_dmabufs, lh_dmabufs(self->base_dmabufs));
}

/*
 * hipMemPoolCreate in a child that is nobody for it (effective uid and gid
 * 65534, no other group), its stderr into @out: the child's result.  The
 * child is root again before it exits, for what an instrumented build
 * writes then (make coverage's counters).
 */
static hipError_t create_as_nobody(char *out, size_t len)
{
	ssize_t n, got = 0;
	int pfd[2], st;
	pid_t pid;

	if (pipe(pfd))
		return hipErrorUnknown;
	pid = fork();
	if (!pid) {
		hipMemPoolProps p = lh_props(hipMemHandleTypePosixFileDescriptor,
					     0);
		hipMemPool_t pool;
		hipError_t e;

		dup2(pfd[1], 2);
		close(pfd[0]);
		if (setgroups(0, NULL) || setresgid(65534, 65534, 0) ||
		    setresuid(65534, 65534, 0))
			_exit(255);
		e = hipMemPoolCreate(&pool, &p);
		if (setresuid(0, 0, 0) || setresgid(0, 0, 0))
			_exit(254);
		_exit(e);
	}
	close(pfd[1]);
	while (got < (ssize_t)len - 1 &&
	       (n = read(pfd[0], out + got, len - 1 - got)) > 0)
		got += n;
	out[got] = 0;
	close(pfd[0]);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return hipErrorUnknown;
	return (hipError_t)WEXITSTATUS(st);
}

/*
 * A user the device is closed to gets hipErrorNotInitialized and one line
 * on stderr that says what to do: join the group the node is open to, or,
 * if it is root's alone, that the udev rule opens it to group render.
 */
TEST(a_closed_device_says_which_group_to_join)
{
	struct group *render;
	char out[512];

	kfd_state_restore();
	if (access("/dev/kfdpool", F_OK))
		SKIP(return, "/dev/kfdpool missing (module not loaded)");
	render = getgrnam("render");
	if (!render)
		SKIP(return, "no group render here");
	ASSERT_EQ(0, chown("/dev/kfdpool", 0, render->gr_gid));
	ASSERT_EQ(0, chmod("/dev/kfdpool", 0660));
	EXPECT_EQ(hipErrorNotInitialized, create_as_nobody(out, sizeof(out)));
	EXPECT_STREQ("kfdpool: /dev/kfdpool: Permission denied (it is open to "
		     "group render: usermod -aG render USER, then log in "
		     "again)\n", out);

	ASSERT_EQ(0, chmod("/dev/kfdpool", 0600));
	EXPECT_EQ(hipErrorNotInitialized, create_as_nobody(out, sizeof(out)));
	EXPECT_STREQ("kfdpool: /dev/kfdpool: Permission denied (root only: "
		     "the udev rule 60-kfdpool.rules opens it to group "
		     "render)\n", out);
	kfd_state_restore();
}

TEST_F(pool, same_process_round_trip)
{
	hipMemPoolPtrExportData d;
	void *p, *q, *q2;

	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, 12345, self->pool, NULL));
	lh_fill(p, 12344, 7, 1);
	ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&d, p));
	ASSERT_EQ(hipSuccess, hipMemPoolImportPointer(&q, self->imp, &d));
	EXPECT_NE(p, q);	/* a second mapping of the same memory */
	EXPECT_EQ(-1, lh_check(q, 12344, 7, 1));
	lh_fill(q, 12344, 8, 2);
	EXPECT_EQ(-1, lh_check(p, 12344, 8, 2));
	/* The same pointer twice: same address, freed twice. */
	ASSERT_EQ(hipSuccess, hipMemPoolImportPointer(&q2, self->imp, &d));
	EXPECT_EQ(q, q2);
	EXPECT_EQ(hipSuccess, hipFree(q2));
	EXPECT_EQ(hipSuccess, hipFree(q));
	EXPECT_EQ(hipErrorInvalidValue, hipFree(q));
	EXPECT_EQ(hipSuccess, hipFreeAsync(p, NULL));
	EXPECT_EQ(hipErrorInvalidValue, hipFreeAsync(p, NULL));
}

TEST_F(pool, interior_pointer_keeps_offset)
{
	hipMemPoolPtrExportData d, d2;
	char *p;
	void *q;

	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync((void **)&p, 65536,
						    self->pool, NULL));
	memset(p, 0, 65536);
	p[40000] = 0x5a;
	ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&d, p + 40000));
	/* The same interior address again: the same record. */
	ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&d2, p + 40000));
	EXPECT_EQ(0, memcmp(&d, &d2, sizeof(d)));
	ASSERT_EQ(hipSuccess, hipMemPoolImportPointer(&q, self->imp, &d));
	EXPECT_EQ(0x5a, *(char *)q);
	/* Past the end of the allocation is no allocation. */
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolExportPointer(&d, p + 65536));
	/* hipFree wants the allocation's start, not an interior address. */
	EXPECT_EQ(hipErrorInvalidValue, hipFree(p + 1));
	EXPECT_EQ(hipSuccess, hipFree(q));
	EXPECT_EQ(hipSuccess, hipFree(p));
}

TEST_F(pool, pool_without_handle_types)
{
	hipMemPoolPtrExportData d;
	hipMemPool_t np;
	int fd = -1;
	void *p;

	ASSERT_EQ(hipSuccess, lh_pool(&np, hipMemHandleTypeNone, 0));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, 4096, np, NULL));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolExportPointer(&d, p));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolExportToShareableHandle(&fd,
		  np, hipMemHandleTypePosixFileDescriptor, 0));
	EXPECT_EQ(-1, fd);
	/* Used bytes come from the library for such a pool. */
	EXPECT_EQ(4096, lh_attr(np, hipMemPoolAttrUsedMemCurrent));
	EXPECT_EQ(hipSuccess, hipFree(p));
	EXPECT_EQ(0, lh_attr(np, hipMemPoolAttrUsedMemCurrent));
	EXPECT_EQ(4096, lh_attr(np, hipMemPoolAttrUsedMemHigh));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(np));
}

TEST_F(pool, flags_must_be_zero)
{
	int fd = -1;

	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolExportToShareableHandle(&fd,
		  self->pool, hipMemHandleTypePosixFileDescriptor, 1));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolExportToShareableHandle(&fd,
		  self->pool, hipMemHandleTypePosixFileDescriptor, 0x80000000));
	EXPECT_EQ(-1, fd);
	ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&fd,
		  self->pool, hipMemHandleTypePosixFileDescriptor, 0));
	{
		hipMemPool_t p2 = NULL;

		EXPECT_EQ(hipErrorInvalidValue,
			  hipMemPoolImportFromShareableHandle(&p2,
				(void *)(intptr_t)fd,
				hipMemHandleTypePosixFileDescriptor, 1));
		EXPECT_EQ(NULL, p2);
	}
	close(fd);
}

TEST_F(pool, handle_type_the_pool_lacks)
{
	unsigned char h[64];
	hipMemPool_t p2 = NULL;

	/* A POSIX-fd pool has no fabric handle. */
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolExportToShareableHandle(h,
		  self->pool, hipMemHandleTypeFabric, 0));
	EXPECT_EQ(hipErrorNotSupported, hipMemPoolExportToShareableHandle(h,
		  self->pool, hipMemHandleTypeWin32, 0));
	/* A fabric pool needs the module's pool handles. */
	{
		struct kfdpool_query q;
		int ctl = kfdpool_open();

		ASSERT_LE(0, ctl);
		ASSERT_EQ(0, kfdpool_query(ctl, &q));
		close(ctl);
		if (!(q.features & KFDPOOL_FEATURE_POOL_HANDLE)) {
			EXPECT_EQ(hipErrorNotSupported,
				  lh_pool(&p2, hipMemHandleTypeFabric, 0));
			EXPECT_EQ(hipErrorNotSupported,
				  hipMemPoolImportFromShareableHandle(&p2, h,
					hipMemHandleTypeFabric, 0));
		}
	}
	if (lh_pool(&p2, hipMemHandleTypeFabric, 0) == hipSuccess) {
		kfdpoolFabricHandle_t fh;
		hipMemPoolPtrExportData d;
		hipMemPool_t ip;
		void *ptr, *q;
		int fd = -1;

		EXPECT_EQ(hipErrorInvalidValue,
			  hipMemPoolExportToShareableHandle(&fd, p2,
				hipMemHandleTypePosixFileDescriptor, 0));
		/* The 64-byte handle round trip, no fd passed. */
		ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&fh, p2,
			  hipMemHandleTypeFabric, 0));
		ASSERT_EQ(hipSuccess, hipMemPoolImportFromShareableHandle(&ip,
			  &fh, hipMemHandleTypeFabric, 0));
		ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&ptr, 4096, p2, NULL));
		memset(ptr, 0x77, 4096);
		ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&d, ptr));
		ASSERT_EQ(hipSuccess, hipMemPoolImportPointer(&q, ip, &d));
		EXPECT_EQ(0x77, *(unsigned char *)q);
		EXPECT_EQ(hipSuccess, hipFree(q));
		EXPECT_EQ(hipSuccess, hipFree(ptr));
		EXPECT_EQ(hipSuccess, hipMemPoolDestroy(ip));
		EXPECT_EQ(hipSuccess, hipMemPoolDestroy(p2));
	} else {
		ksft_print_msg("fabric pools: not supported by this module\n");
	}
}

TEST_F(pool, allocating_from_an_imported_pool)
{
	uint64_t zero = 0;
	void *p = NULL;
	int fd = -1;

	EXPECT_EQ(hipErrorInvalidValue,
		  hipMallocFromPoolAsync(&p, 4096, self->imp, NULL));
	EXPECT_EQ(NULL, p);
	/* Nor exporting it again, nor resetting its marks. */
	EXPECT_EQ(hipErrorInvalidValue,
		  hipMemPoolExportToShareableHandle(&fd, self->imp,
			hipMemHandleTypePosixFileDescriptor, 0));
	EXPECT_EQ(-1, fd);
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAttribute(
		  self->imp, hipMemPoolAttrUsedMemHigh, &zero));
}

TEST_F(pool, import_after_exporter_freed)
{
	hipMemPoolPtrExportData d, d2;
	void *p, *p2, *q = &q;

	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, 8192, self->pool, NULL));
	/* Another allocation keeps the chunk (and its entry) alive. */
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p2, 8192, self->pool, NULL));
	ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&d, p));
	ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&d2, p + 100));
	ASSERT_EQ(hipSuccess, hipFree(p));
	EXPECT_EQ(hipErrorInvalidHandle, hipMemPoolImportPointer(&q, self->imp, &d));
	EXPECT_EQ(NULL, q);
	EXPECT_EQ(hipErrorInvalidHandle, hipMemPoolImportPointer(&q, self->imp, &d2));
	/* The address is reused by the next allocation: the old record
	 * still does not import. */
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, 8192, self->pool, NULL));
	EXPECT_EQ(hipErrorInvalidHandle, hipMemPoolImportPointer(&q, self->imp, &d));
	EXPECT_EQ(hipSuccess, hipFree(p));
	/* The chunk given back: the record's entry is gone too. */
	EXPECT_EQ(hipSuccess, hipFree(p2));
	EXPECT_EQ(0, lh_attr(self->pool, hipMemPoolAttrReservedMemCurrent));
	EXPECT_EQ(hipErrorInvalidHandle, hipMemPoolImportPointer(&q, self->imp, &d));
}

enum free_how { BY_HIP_FREE, BY_HIP_FREE_ASYNC, BY_FREE_POINTERS };

static hipError_t free_by(enum free_how how, void *const *p, size_t n)
{
	hipError_t res[4], e = hipSuccess;
	size_t i;

	if (how == BY_FREE_POINTERS) {
		e = kfdpoolFreePointers(p, n, res);
		for (i = 0; i < n; i++)
			if (res[i] && !e)
				e = res[i];
		return e;
	}
	for (i = 0; i < n && !e; i++)
		e = how == BY_HIP_FREE ? hipFree(p[i]) : hipFreeAsync(p[i], NULL);
	return e;
}

/*
 * Freeing a pointer revokes its records (its start and any interior
 * address exported): the importer's hipMemPoolImportPointer refuses them
 * with hipErrorInvalidHandle, whether it maps the chunk already (the
 * library only validates) or not (it imports), and the kernel says -ENOENT
 * to a native import.  The other pointers of the same chunk still import,
 * and the address reused by a new allocation does not revive the old
 * record.  @how frees two of four pointers (in one call for
 * kfdpoolFreePointers).
 */
static void freed_records_refused(struct __test_metadata *_metadata,
				  FIXTURE_DATA(pool) *self, enum free_how how)
{
	static const size_t sizes[4] = { 3001, 5555, 777, 4097 };
	hipMemPoolPtrExportData d[4], in[4], fresh;
	struct kfdpool_pool_stats st;
	struct kfdpool_import im;
	void *p[4], *q = &q, *q1, *q3, *again, *gone[2];
	int i, ifd;

	for (i = 0; i < 4; i++) {
		ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p[i], sizes[i],
							    self->pool, NULL));
		lh_fill(p[i], sizes[i], i, 0x6672656564ULL);
		ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&d[i], p[i]));
		ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&in[i],
			  (char *)p[i] + 24 * i + 8));
	}
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(self->pool, &st));
	ASSERT_EQ(1, st.entries);	/* one chunk holds all four */
	ASSERT_EQ(8, st.records);
	ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&ifd,
		  self->pool, hipMemHandleTypePosixFileDescriptor, 0));

	gone[0] = p[0];
	gone[1] = p[2];
	ASSERT_EQ(hipSuccess, free_by(how, gone, 2));
	/* Only the survivors' records are left in the kernel. */
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(self->pool, &st));
	EXPECT_EQ(4, st.records);

	/* The importer has not mapped the chunk yet: a real import. */
	EXPECT_EQ(hipErrorInvalidHandle, hipMemPoolImportPointer(&q, self->imp, &d[0]));
	EXPECT_EQ(NULL, q);
	EXPECT_EQ(hipErrorInvalidHandle, hipMemPoolImportPointer(&q, self->imp, &in[2]));
	EXPECT_EQ(NULL, q);
	/* A survivor maps it; now the refused ones are validations only. */
	ASSERT_EQ(hipSuccess, hipMemPoolImportPointer(&q1, self->imp, &d[1]));
	EXPECT_EQ(-1, lh_check(q1, sizes[1], 1, 0x6672656564ULL));
	for (i = 0; i < 4; i += 2) {
		q = &q;
		EXPECT_EQ(hipErrorInvalidHandle,
			  hipMemPoolImportPointer(&q, self->imp, &d[i]));
		EXPECT_EQ(NULL, q);
		q = &q;
		EXPECT_EQ(hipErrorInvalidHandle,
			  hipMemPoolImportPointer(&q, self->imp, &in[i]));
		EXPECT_EQ(NULL, q);
		/* The kernel's word for it, through the native API. */
		EXPECT_EQ(-ENOENT, kfdpool_import(ifd,
			  (struct kfdpool_record *)&d[i], 0, &im));
		EXPECT_EQ(-ENOENT, kfdpool_import(ifd,
			  (struct kfdpool_record *)&in[i], 0, &im));
	}
	/* The other pointers of the chunk: their records, start and
	 * interior, still import, to the same bytes. */
	ASSERT_EQ(hipSuccess, hipMemPoolImportPointer(&q3, self->imp, &d[3]));
	EXPECT_EQ(-1, lh_check(q3, sizes[3], 3, 0x6672656564ULL));
	ASSERT_EQ(hipSuccess, hipMemPoolImportPointer(&again, self->imp, &in[1]));
	EXPECT_EQ((char *)q1 + 32, again);
	EXPECT_EQ(hipSuccess, hipFree(again));
	ASSERT_LE(0, kfdpool_import(ifd, (struct kfdpool_record *)&in[3], 0, &im));
	close(im.fd);
	EXPECT_EQ(0, kfdpool_release(ifd, im.entry_id));

	/* The freed address handed out again: a new record imports, the
	 * old one stays dead. */
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p[0], sizes[0], self->pool, NULL));
	EXPECT_EQ(gone[0], p[0]);
	ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&fresh, p[0]));
	EXPECT_NE(0, memcmp(&fresh, &d[0], sizeof(fresh)));
	EXPECT_EQ(hipErrorInvalidHandle, hipMemPoolImportPointer(&q, self->imp, &d[0]));
	EXPECT_EQ(-ENOENT, kfdpool_import(ifd, (struct kfdpool_record *)&d[0], 0, &im));
	ASSERT_EQ(hipSuccess, hipMemPoolImportPointer(&q, self->imp, &fresh));
	EXPECT_EQ(hipSuccess, hipFree(q));

	close(ifd);
	EXPECT_EQ(hipSuccess, hipFree(q1));
	EXPECT_EQ(hipSuccess, hipFree(q3));
	gone[0] = p[1];
	gone[1] = p[3];
	EXPECT_EQ(hipSuccess, free_by(how, gone, 2));
	EXPECT_EQ(hipSuccess, free_by(how, &p[0], 1));
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(self->pool, &st));
	EXPECT_EQ(0, st.records);
}

TEST_F(pool, hipFree_revokes_the_records)
{
	freed_records_refused(_metadata, self, BY_HIP_FREE);
}

TEST_F(pool, hipFreeAsync_revokes_the_records)
{
	freed_records_refused(_metadata, self, BY_HIP_FREE_ASYNC);
}

TEST_F(pool, kfdpoolFreePointers_revokes_the_records)
{
	freed_records_refused(_metadata, self, BY_FREE_POINTERS);
}

TEST_F(pool, imported_memory_outlives_the_exporters_free)
{
	hipMemPoolPtrExportData d;
	struct kfdpool_pool_stats st;
	void *p, *q;

	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, 4 << 20, self->pool, NULL));
	lh_fill(p, 4 << 20, 3, 3);
	ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&d, p));
	ASSERT_EQ(hipSuccess, hipMemPoolImportPointer(&q, self->imp, &d));
	ASSERT_EQ(hipSuccess, hipFree(p));
	/* The exporter's chunk went back (threshold 0); the import keeps
	 * the memory: the kernel shows it draining. */
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(self->pool, &st));
	EXPECT_EQ(1, st.draining_entries);
	EXPECT_EQ(4 << 20, st.draining_bytes);
	EXPECT_EQ(-1, lh_check(q, 4 << 20, 3, 3));
	lh_fill(q, 4 << 20, 4, 4);
	EXPECT_EQ(hipSuccess, hipFree(q));
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(self->pool, &st));
	EXPECT_EQ(0, st.draining_entries);
	EXPECT_EQ(0, st.reserved_bytes);
}

TEST_F(pool, corrupted_export_data)
{
	hipMemPoolPtrExportData d, bad, three[3];
	struct kfdpool_record *r = (struct kfdpool_record *)&bad;
	struct kfdpool_import im;
	void *p, *q = &q, *ptrs[3];
	hipError_t res[3];
	size_t i;
	int ifd;

	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, 4096, self->pool, NULL));
	ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&d, p));
	ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&ifd,
		  self->pool, hipMemHandleTypePosixFileDescriptor, 0));
	/*
	 * Every byte, flipped: never imports, and the error says which check
	 * refused it.  Another pool's id or a bad magic is refused before the
	 * kernel (hipErrorInvalidValue; natively -EXDEV, -EINVAL); a slot,
	 * generation, place or nonce that is not the live record's is the
	 * kernel's (hipErrorInvalidHandle; natively -ESTALE for the
	 * generation, -ENOENT for the rest).
	 */
	for (i = 0; i < sizeof(d); i++) {
		hipError_t e, want = i < offsetof(struct kfd_rec, record_id) ?
				     hipErrorInvalidValue : hipErrorInvalidHandle;
		int werr = i < offsetof(struct kfd_rec, magic) ? -EXDEV :
			   i < offsetof(struct kfd_rec, record_id) ? -EINVAL :
			   i >= offsetof(struct kfd_rec, generation) &&
			   i < offsetof(struct kfd_rec, offset) ? -ESTALE :
			   -ENOENT;

		bad = d;
		bad.reserved[i] ^= 0x40;
		q = &q;
		e = hipMemPoolImportPointer(&q, self->imp, &bad);
		EXPECT_EQ(want, e) TH_LOG("byte %zu: %s", i, hipGetErrorName(e));
		if (!e)
			hipFree(q);
		EXPECT_EQ(NULL, q);
		EXPECT_EQ(werr, kfdpool_import(ifd, r, 0, &im)) TH_LOG("byte %zu", i);
	}
	close(ifd);
	/* A bad magic or a foreign pool id is refused before the kernel. */
	bad = d;
	REC(r)->magic = 0;
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolImportPointer(&q, self->imp, &bad));
	/* A record for a range past the chunk. */
	bad = d;
	REC(r)->size = 1ull << 40;
	EXPECT_EQ(hipErrorInvalidHandle, hipMemPoolImportPointer(&q, self->imp, &bad));
	/* The genuine one still imports. */
	ASSERT_EQ(hipSuccess, hipMemPoolImportPointer(&q, self->imp, &d));
	EXPECT_EQ(hipSuccess, hipFree(q));
	/* In one batch, a corrupted record of a chunk ahead of a good one
	 * of the same chunk does not make the good one fail. */
	three[0] = d;
	three[0].reserved[63] ^= 1;	/* nonce */
	three[1] = d;
	three[2] = three[0];
	EXPECT_EQ(hipErrorInvalidHandle,
		  kfdpoolImportPointers(ptrs, self->imp, three, 3, res));
	EXPECT_EQ(hipErrorInvalidHandle, res[0]);
	EXPECT_EQ(hipSuccess, res[1]);
	EXPECT_EQ(hipErrorInvalidHandle, res[2]);
	EXPECT_EQ(NULL, ptrs[0]);
	EXPECT_EQ(NULL, ptrs[2]);
	ASSERT_NE(NULL, ptrs[1]);
	memset(p, 0x33, 16);
	EXPECT_EQ(0x33, *(unsigned char *)ptrs[1]);
	EXPECT_EQ(hipSuccess, hipFree(ptrs[1]));
	EXPECT_EQ(hipSuccess, hipFree(p));
}

/*
 * One kfdpoolExportPointers call with pointers of two pools, and the same
 * new pointer twice: each pool's records are made in its own batch, and
 * the pointer gets one record (the copy the kernel made is revoked), the
 * same for both elements.
 */
TEST_F(pool, export_pointers_of_two_pools_and_a_pointer_twice)
{
	hipMemPoolPtrExportData d[4];
	struct kfdpool_pool_stats st;
	hipError_t res[4];
	hipMemPool_t other;
	void *p, *q, *ptrs[4], *r;

	ASSERT_EQ(hipSuccess, lh_pool(&other, hipMemHandleTypePosixFileDescriptor, 0));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, 4096, self->pool, NULL));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&q, 4096, other, NULL));
	ptrs[0] = p;
	ptrs[1] = p;
	ptrs[2] = q;
	ptrs[3] = p;
	ASSERT_EQ(hipSuccess, kfdpoolExportPointers(d, ptrs, 4, res));
	EXPECT_EQ(hipSuccess, res[0]);
	EXPECT_EQ(hipSuccess, res[1]);
	EXPECT_EQ(hipSuccess, res[2]);
	EXPECT_EQ(hipSuccess, res[3]);
	EXPECT_EQ(0, memcmp(&d[0], &d[1], sizeof(d[0])));
	EXPECT_EQ(0, memcmp(&d[0], &d[3], sizeof(d[0])));
	EXPECT_NE(0, memcmp(&d[0], &d[2], sizeof(d[0])));
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(self->pool, &st));
	EXPECT_EQ(1, st.records);
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(other, &st));
	EXPECT_EQ(1, st.records);
	/* The record kept is the one that imports. */
	ASSERT_EQ(hipSuccess, hipMemPoolImportPointer(&r, self->imp, &d[1]));
	memset(p, 0x5c, 64);
	EXPECT_EQ(0x5c, *(unsigned char *)r);
	EXPECT_EQ(hipSuccess, hipFree(r));
	EXPECT_EQ(hipSuccess, hipFree(p));
	EXPECT_EQ(hipSuccess, hipFree(q));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(other));
}

TEST_F(pool, export_data_of_another_pool)
{
	hipMemPoolPtrExportData d;
	hipMemPool_t other, other_imp;
	struct kfdpool_pool_stats st;
	void *p, *q = &q;
	int fd, ifd;

	ASSERT_EQ(hipSuccess, lh_pool(&other, hipMemHandleTypePosixFileDescriptor, 0));
	ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&fd, other,
		  hipMemHandleTypePosixFileDescriptor, 0));
	ASSERT_EQ(hipSuccess, hipMemPoolImportFromShareableHandle(&other_imp,
		  (void *)(intptr_t)fd, hipMemHandleTypePosixFileDescriptor, 0));
	close(fd);
	EXPECT_NE(self->imp, other_imp);
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, 4096, self->pool, NULL));
	ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&d, p));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolImportPointer(&q, other_imp, &d));
	EXPECT_EQ(NULL, q);
	/* The kernel refuses it as well, whatever the library checks. */
	ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&ifd,
		  other, hipMemHandleTypePosixFileDescriptor, 0));
	EXPECT_EQ(-EXDEV, kfdpool_import(ifd,
		  (struct kfdpool_record *)&d, 0, NULL));
	ASSERT_EQ(0, kfdpool_pool_stats(ifd, 0, &st));
	EXPECT_EQ(0, st.fd_imports);
	close(ifd);
	/* An owner pool is not where pointers are imported. */
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolImportPointer(&q, self->pool, &d));
	EXPECT_EQ(hipSuccess, hipFree(p));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(other_imp));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(other));
}

/*
 * What an importer learns with a chunk (the pin cookie) is no address of
 * the exporter: importers may be other users, and the exporter's memory
 * layout is none of their business.
 */
TEST_F(pool, cookie_is_no_exporter_address)
{
	hipMemPoolPtrExportData d;
	struct kfdpool_import im;
	void *p[3];
	int i, ifd, dfd;

	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p[0], 4096, self->pool, NULL));
	/* Another chunk: larger than the granularity. */
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p[1], 5 << 20, self->pool, NULL));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p[2], 8192, self->pool, NULL));
	ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&ifd,
		  self->pool, hipMemHandleTypePosixFileDescriptor, 0));
	for (i = 0; i < 3; i++) {
		uintptr_t chunk;

		ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&d, p[i]));
		memset(&im, 0, sizeof(im));
		dfd = kfdpool_import(ifd, (struct kfdpool_record *)&d, 0, &im);
		ASSERT_LE(0, dfd);
		close(dfd);
		ASSERT_EQ(0, kfdpool_release(ifd, im.entry_id));
		/* The chunk starts im.offset bytes before the pointer. */
		chunk = (uintptr_t)p[i] - im.offset;
		EXPECT_NE(chunk, im.cookie) TH_LOG("pointer %d", i);
		EXPECT_NE((uintptr_t)p[i], im.cookie);
		/* Nothing near the pointer either: a small number. */
		EXPECT_GT(1000, im.cookie) TH_LOG("cookie %llx",
			(unsigned long long)im.cookie);
	}
	close(ifd);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(hipSuccess, hipFree(p[i]));
}

/*
 * A POSIX-fd handle is an int (clr writes 4 bytes at export and reads the
 * low 32 bits at import): kept in an int64_t whose upper half is garbage,
 * as ROCm's hip-tests keep it, it imports the pool.  NULL (fd 0) is
 * refused, as clr refuses it.
 */
TEST_F(pool, a_posix_fd_handle_is_an_int)
{
	hipMemPool_t again = NULL;
	int64_t h;

	memset(&h, 0xaa, sizeof(h));
	ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&h, self->pool,
		  hipMemHandleTypePosixFileDescriptor, 0));
	EXPECT_EQ(0xaaaaaaaau, (uint64_t)h >> 32);
	EXPECT_EQ(hipSuccess, hipMemPoolImportFromShareableHandle(&again,
		  (void *)(intptr_t)h, hipMemHandleTypePosixFileDescriptor, 0));
	/* The same pool imported again: the same handle. */
	EXPECT_EQ(self->imp, again);
	if (again)
		EXPECT_EQ(hipSuccess, hipMemPoolDestroy(again));
	h = (int64_t)(0x5555555500000000ull | (uint32_t)h);
	again = NULL;
	EXPECT_EQ(hipSuccess, hipMemPoolImportFromShareableHandle(&again,
		  (void *)(intptr_t)h, hipMemHandleTypePosixFileDescriptor, 0));
	EXPECT_EQ(self->imp, again);
	if (again)
		EXPECT_EQ(hipSuccess, hipMemPoolDestroy(again));
	close((int)h);
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolImportFromShareableHandle(
		  &again, NULL, hipMemHandleTypePosixFileDescriptor, 0));
}

TEST_F(pool, owner_fd_is_not_a_shareable_handle)
{
	struct kfdpool_pool_stats st;
	hipMemPool_t p2 = NULL;
	int ctl, own;

	ctl = kfdpool_open();
	ASSERT_LE(0, ctl);
	own = kfdpool_pool_create(ctl, 0, KFDPOOL_HANDLE_TYPE_FD, "own", NULL);
	ASSERT_LE(0, own);
	ASSERT_EQ(0, kfdpool_pool_stats(own, 0, &st));
	EXPECT_EQ(KFDPOOL_MODE_OWNER, st.mode);
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolImportFromShareableHandle(&p2,
		  (void *)(intptr_t)own, hipMemHandleTypePosixFileDescriptor, 0));
	close(own);
	close(ctl);
}

/*
 * A process out of fds (RLIMIT_NOFILE reached): each call that needs one
 * (the kernel's new chunk, import fd and pool export, the library's copy
 * of a handle) answers hipErrorOutOfMemory, as docs/library.md says of
 * EMFILE, leaves nothing half made, and works once fds are back.
 */
TEST_F(pool, out_of_fds_is_out_of_memory)
{
	hipMemPoolPtrExportData d;
	hipMemPool_t again = NULL;
	struct rlimit lim = { 64, 64 };
	int fd, fd2 = -1, n = 0, fill[64];
	void *p, *q = NULL, *r = NULL;
	uint64_t reserved;

	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, 4096, self->pool, NULL));
	ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&d, p));
	ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&fd,
		  self->pool, hipMemHandleTypePosixFileDescriptor, 0));
	reserved = lh_attr(self->pool, hipMemPoolAttrReservedMemCurrent);
	/* (The test's own process: the harness runs each test in a child.) */
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &lim));
	while (n < 64 && (fill[n] = open("/dev/null", O_RDONLY)) >= 0)
		n++;
	ASSERT_EQ(EMFILE, errno);

	EXPECT_EQ(hipErrorOutOfMemory, hipMemPoolExportToShareableHandle(&fd2,
		  self->pool, hipMemHandleTypePosixFileDescriptor, 0));
	EXPECT_EQ(-1, fd2);
	EXPECT_EQ(hipErrorOutOfMemory, hipMemPoolImportFromShareableHandle(
		  &again, (void *)(intptr_t)fd,
		  hipMemHandleTypePosixFileDescriptor, 0));
	EXPECT_EQ(NULL, again);
	/* A new chunk: the module hands its dma-buf out as an fd. */
	EXPECT_EQ(hipErrorOutOfMemory, hipMallocFromPoolAsync(&q, 4 << 20,
		  self->pool, NULL));
	EXPECT_EQ(NULL, q);
	EXPECT_EQ(reserved, lh_attr(self->pool, hipMemPoolAttrReservedMemCurrent));
	/* An import: the kernel hands the chunk over as an fd. */
	EXPECT_EQ(hipErrorOutOfMemory, hipMemPoolImportPointer(&r, self->imp, &d));
	EXPECT_EQ(NULL, r);

	while (n > 0)
		close(fill[--n]);
	ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&fd2,
		  self->pool, hipMemHandleTypePosixFileDescriptor, 0));
	ASSERT_EQ(hipSuccess, hipMemPoolImportFromShareableHandle(&again,
		  (void *)(intptr_t)fd, hipMemHandleTypePosixFileDescriptor, 0));
	EXPECT_EQ(self->imp, again);	/* the same pool: the same handle */
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(again));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&q, 4 << 20, self->pool,
						     NULL));
	ASSERT_EQ(hipSuccess, hipMemPoolImportPointer(&r, self->imp, &d));
	EXPECT_EQ(0, memcmp(p, r, 4096));
	EXPECT_EQ(hipSuccess, hipFree(r));
	EXPECT_EQ(hipSuccess, hipFree(q));
	EXPECT_EQ(hipSuccess, hipFree(p));
	close(fd);
	close(fd2);
}

TEST_F(pool, attributes_follow_hip_rules)
{
	uint64_t v, zero = 0, one = 1;
	struct kfdpool_pool_stats st;
	hipMemPoolPtrExportData d;
	void *p[4];
	int i, b;

	for (i = 0; i < 4; i++)
		ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p[i], 1 << 20,
							    self->pool, NULL));
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(self->pool, &st));
	/* Records are made at export: none yet. */
	EXPECT_EQ(0, st.used_bytes);
	EXPECT_EQ(4 << 20, st.reserved_bytes);	/* two 2 MiB chunks */
	EXPECT_EQ(st.reserved_bytes, lh_attr(self->pool, hipMemPoolAttrReservedMemCurrent));
	/* Used bytes are the allocated ones. */
	EXPECT_EQ(4 << 20, lh_attr(self->pool, hipMemPoolAttrUsedMemCurrent));
	/* The importer sees the kernel's figures: the reserved bytes, and
	 * as used the bytes of the chunks with exported pointers (p[2] and
	 * p[3] share one 2 MiB chunk). */
	ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&d, p[3]));
	ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&d, p[2]));
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(self->pool, &st));
	EXPECT_EQ(2 << 20, st.used_bytes);
	EXPECT_EQ(2 << 20, lh_attr(self->imp, hipMemPoolAttrUsedMemCurrent));
	EXPECT_EQ(st.used_high, lh_attr(self->imp, hipMemPoolAttrUsedMemHigh));
	EXPECT_EQ(st.reserved_bytes, lh_attr(self->imp, hipMemPoolAttrReservedMemCurrent));
	/* Current figures are read-only. */
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAttribute(self->pool,
		  hipMemPoolAttrUsedMemCurrent, &zero));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAttribute(self->pool,
		  hipMemPoolAttrReservedMemCurrent, &zero));
	/* High marks: only 0, which resets them to the current value. */
	for (i = 0; i < 3; i++)
		ASSERT_EQ(hipSuccess, hipFree(p[i]));
	EXPECT_EQ(4 << 20, lh_attr(self->pool, hipMemPoolAttrUsedMemHigh));
	EXPECT_EQ(4 << 20, lh_attr(self->pool, hipMemPoolAttrReservedMemHigh));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAttribute(self->pool,
		  hipMemPoolAttrUsedMemHigh, &one));
	EXPECT_EQ(hipSuccess, hipMemPoolSetAttribute(self->pool,
		  hipMemPoolAttrUsedMemHigh, &zero));
	EXPECT_EQ(1 << 20, lh_attr(self->pool, hipMemPoolAttrUsedMemHigh));
	EXPECT_EQ(hipSuccess, hipMemPoolSetAttribute(self->pool,
		  hipMemPoolAttrReservedMemHigh, &zero));
	v = lh_attr(self->pool, hipMemPoolAttrReservedMemHigh);
	EXPECT_EQ(lh_attr(self->pool, hipMemPoolAttrReservedMemCurrent), v);
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(self->pool, &st));
	EXPECT_EQ(st.reserved_high, v);
	/* The kernel's used mark was reset too: p[3]'s record is left, and
	 * keeps its chunk used. */
	EXPECT_EQ(2 << 20, st.used_high);
	EXPECT_EQ(2 << 20, lh_attr(self->imp, hipMemPoolAttrUsedMemHigh));
	/* Reuse flags: booleans, stored. */
	for (i = hipMemPoolReuseFollowEventDependencies;
	     i <= hipMemPoolReuseAllowInternalDependencies; i++) {
		b = -1;
		EXPECT_EQ(hipSuccess, hipMemPoolGetAttribute(self->pool,
			  (hipMemPoolAttr)i, &b));
		EXPECT_EQ(1, b);
		b = 0;
		EXPECT_EQ(hipSuccess, hipMemPoolSetAttribute(self->pool,
			  (hipMemPoolAttr)i, &b));
		b = -1;
		EXPECT_EQ(hipSuccess, hipMemPoolGetAttribute(self->pool,
			  (hipMemPoolAttr)i, &b));
		EXPECT_EQ(0, b);
	}
	EXPECT_EQ(hipSuccess, hipFree(p[3]));
}

TEST_F(pool, release_threshold_and_trim)
{
	uint64_t thr = 64ull << 20, zero = 0;
	void *p[8];
	int i;

	ASSERT_EQ(hipSuccess, hipMemPoolSetAttribute(self->pool,
		  hipMemPoolAttrReleaseThreshold, &thr));
	EXPECT_EQ(thr, lh_attr(self->pool, hipMemPoolAttrReleaseThreshold));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p[i], 2 << 20,
							    self->pool, NULL));
	EXPECT_EQ(16 << 20, lh_attr(self->pool, hipMemPoolAttrReservedMemCurrent));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(hipSuccess, hipFree(p[i]));
	/* Under the threshold: the chunks stay for reuse. */
	EXPECT_EQ(16 << 20, lh_attr(self->pool, hipMemPoolAttrReservedMemCurrent));
	EXPECT_EQ(0, lh_attr(self->pool, hipMemPoolAttrUsedMemCurrent));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p[0], 1 << 20, self->pool, NULL));
	EXPECT_EQ(16 << 20, lh_attr(self->pool, hipMemPoolAttrReservedMemCurrent));
	/* Trim keeps at least what it is told, never a chunk in use. */
	EXPECT_EQ(hipSuccess, hipMemPoolTrimTo(self->pool, 5 << 20));
	EXPECT_EQ(6 << 20, lh_attr(self->pool, hipMemPoolAttrReservedMemCurrent));
	EXPECT_EQ(hipSuccess, hipMemPoolTrimTo(self->pool, 0));
	EXPECT_EQ(2 << 20, lh_attr(self->pool, hipMemPoolAttrReservedMemCurrent));
	EXPECT_EQ(hipSuccess, hipFree(p[0]));
	EXPECT_EQ(2 << 20, lh_attr(self->pool, hipMemPoolAttrReservedMemCurrent));
	/* Lowering the threshold gives the rest back. */
	ASSERT_EQ(hipSuccess, hipMemPoolSetAttribute(self->pool,
		  hipMemPoolAttrReleaseThreshold, &zero));
	EXPECT_EQ(0, lh_attr(self->pool, hipMemPoolAttrReservedMemCurrent));
}

/* The runtime's synchronising calls, which libkfdpool-hip defines too
 * (without a runtime they answer that there are no streams). */
typedef struct ihipEvent_t *hipEvent_t;
hipError_t hipStreamSynchronize(hipStream_t stream);
hipError_t hipEventSynchronize(hipEvent_t event);
hipError_t hipDeviceSynchronize(void);

/*
 * Without a runtime, as with one (CUDA's rule and clr's): what a pool holds
 * above its release threshold, by default 0, goes back at the next
 * synchronising call, never inside hipFreeAsync, and a freed block is the
 * next allocation of its stream (ROCm's hip-tests expect the same address:
 * MallocMemPoolAsync_Reuse).  Without a runtime there is no stream to wait
 * for: the calls answer so, and give the memory back.
 */
TEST_F(pool, default_threshold_gives_back_at_a_synchronise)
{
	/* (33 MiB + 4 KiB: a chunk of its own, of no size class's bound.) */
	static const size_t sizes[] = { 4096, 1 << 20, (33 << 20) + 4096 };
	uint64_t thr = 1, chunk;
	void *p, *q;
	int i, j;

	ASSERT_EQ(hipSuccess, hipMemPoolGetAttribute(self->pool,
		  hipMemPoolAttrReleaseThreshold, &thr));
	ASSERT_EQ(0, thr);
	for (i = 0; i < 3; i++) {
		chunk = sizes[i] > (2 << 20) ? sizes[i] : 2 << 20;
		for (j = 0; j < 3; j++) {
			ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p,
				  sizes[i], self->pool, NULL));
			ASSERT_EQ(hipSuccess, hipFreeAsync(p, NULL));
			EXPECT_EQ(chunk, lh_attr(self->pool,
				  hipMemPoolAttrReservedMemCurrent));
			ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&q,
				  sizes[i], self->pool, NULL));
			EXPECT_EQ(p, q);
			ASSERT_EQ(hipSuccess, hipFreeAsync(q, NULL));
		}
		EXPECT_EQ(chunk, lh_attr(self->pool,
			  hipMemPoolAttrReservedMemCurrent));
		switch (i) {
		case 0:
			EXPECT_EQ(hipErrorInvalidHandle,
				  hipStreamSynchronize(NULL));
			break;
		case 1:
			EXPECT_EQ(hipErrorInvalidHandle,
				  hipEventSynchronize(NULL));
			break;
		default:
			EXPECT_EQ(hipErrorNoDevice, hipDeviceSynchronize());
			break;
		}
		EXPECT_EQ(0, lh_attr(self->pool,
			  hipMemPoolAttrReservedMemCurrent));
	}
}

TEST_F(pool, max_size_is_enforced)
{
	hipMemPool_t small;
	void *p[5], *big;
	int i;

	ASSERT_EQ(hipSuccess, lh_pool(&small, hipMemHandleTypePosixFileDescriptor,
				      3 << 20));
	EXPECT_EQ(hipErrorOutOfMemory,
		  hipMallocFromPoolAsync(&big, 4 << 20, small, NULL));
	/* 2 MiB chunk, then a 1 MiB chunk: what is left of maxSize. */
	for (i = 0; i < 3; i++)
		ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p[i], 1 << 20,
							    small, NULL));
	EXPECT_EQ(hipErrorOutOfMemory,
		  hipMallocFromPoolAsync(&p[3], 4096, small, NULL));
	EXPECT_EQ(3 << 20, lh_attr(small, hipMemPoolAttrReservedMemCurrent));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(hipSuccess, hipFree(p[i]));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(small));
}

TEST_F(pool, granularity_and_large_allocations)
{
	struct kfdpool_pool_stats st;
	void *a, *b, *c;

	EXPECT_EQ(hipErrorInvalidValue, kfdpoolMemPoolSetGranularity(self->pool, 4096));
	EXPECT_EQ(hipErrorInvalidValue, kfdpoolMemPoolSetGranularity(self->imp, 1 << 20));
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolSetGranularity(self->pool, 256 << 10));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&a, 100 << 10, self->pool, NULL));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&b, 100 << 10, self->pool, NULL));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&c, 300 << 10, self->pool, NULL));
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(self->pool, &st));
	/* a and b share a 256 KiB chunk; c got its own, page-rounded. */
	EXPECT_EQ(2, st.entries);
	EXPECT_EQ((256 << 10) + (300 << 10), st.reserved_bytes);
	EXPECT_EQ(hipSuccess, hipFree(a));
	EXPECT_EQ(hipSuccess, hipFree(b));
	EXPECT_EQ(hipSuccess, hipFree(c));
}

TEST_F(pool, access)
{
	hipMemAccessFlags f = hipMemAccessFlagsProtNone;
	hipMemLocation host = { hipMemLocationTypeHost, 0 };
	hipMemAccessDesc d = { host, hipMemAccessFlagsProtNone };

	EXPECT_EQ(hipSuccess, hipMemPoolGetAccess(&f, self->pool, &host));
	EXPECT_EQ(hipMemAccessFlagsProtReadWrite, f);
	/* The pool's own location keeps read-write. */
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAccess(self->pool, &d, 1));
	d.flags = hipMemAccessFlagsProtReadWrite;
	EXPECT_EQ(hipSuccess, hipMemPoolSetAccess(self->pool, &d, 1));
	/* clr wants a list, even of none (hip_mempool.cpp). */
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolSetAccess(self->pool, NULL, 0));
	/* No GPU here unless a substitute stands in for device 0. */
	if (access("/dev/kfd", F_OK) && !getenv("KFDPOOL_BACKEND")) {
		hipMemLocation dev0 = { hipMemLocationTypeDevice, 0 };

		d.location = dev0;
		EXPECT_EQ(hipErrorInvalidDevice, hipMemPoolSetAccess(self->pool, &d, 1));
		EXPECT_EQ(hipErrorInvalidValue, hipMemPoolGetAccess(&f, self->pool, &dev0));
	}
}

TEST_F(pool, device_pool_needs_gpu_or_substitute)
{
	hipMemPoolProps p = lh_props(hipMemHandleTypePosixFileDescriptor, 0);
	hipMemPool_t dp;
	void *ptr;

	if (!access("/dev/kfd", F_OK))
		SKIP(return, "a GPU node");
	p.location.type = hipMemLocationTypeDevice;
	unsetenv("KFDPOOL_BACKEND");
	EXPECT_EQ(hipErrorNoDevice, hipMemPoolCreate(&dp, &p));
	setenv("KFDPOOL_BACKEND", kfdpoolMemPoolBackend(self->pool), 1);
	ASSERT_EQ(hipSuccess, hipMemPoolCreate(&dp, &p));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&ptr, 4096, dp, NULL));
	memset(ptr, 1, 4096);
	/* An importer without the variable maps the substitute's chunks as
	 * host memory: there is no GPU on this node. */
	{
		hipMemPoolPtrExportData d;
		hipMemPool_t ip;
		void *q;
		int fd;

		ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&d, ptr));
		ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&fd, dp,
			  hipMemHandleTypePosixFileDescriptor, 0));
		unsetenv("KFDPOOL_BACKEND");
		ASSERT_EQ(hipSuccess, hipMemPoolImportFromShareableHandle(&ip,
			  (void *)(intptr_t)fd, hipMemHandleTypePosixFileDescriptor, 0));
		close(fd);
		ASSERT_EQ(hipSuccess, hipMemPoolImportPointer(&q, ip, &d));
		EXPECT_EQ(1, *(char *)q);
		EXPECT_STREQ("mmap", kfdpoolMemPoolBackend(ip));
		EXPECT_EQ(hipSuccess, hipFree(q));
		EXPECT_EQ(hipSuccess, hipMemPoolDestroy(ip));
		setenv("KFDPOOL_BACKEND", kfdpoolMemPoolBackend(self->pool), 1);
	}
	EXPECT_EQ(hipSuccess, hipFree(ptr));
	p.location.id = 1;	/* the substitute is device 0 only */
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolCreate(&dp, &p));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(dp));
	unsetenv("KFDPOOL_BACKEND");
}

TEST_F(pool, destroy_with_live_allocations)
{
	hipMemPool_t p2;
	void *ptr;

	ASSERT_EQ(hipSuccess, lh_pool(&p2, hipMemHandleTypePosixFileDescriptor, 0));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&ptr, 4096, p2, NULL));
	/* HIP: destroy returns at once, the pool goes with the last free. */
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(p2));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolDestroy(p2));
	memset(ptr, 1, 4096);
	EXPECT_EQ(hipSuccess, hipFree(ptr));
}

struct thr_arg {
	hipMemPool_t pool, imp;
	int failures;
	unsigned int seed;
};

static void *thread_body(void *p)
{
	struct thr_arg *a = p;
	uint64_t s = a->seed;
	void *ptrs[16] = { 0 };
	int i;

	for (i = 0; i < 400; i++) {
		int k = lh_rand(&s) % 16;

		if (ptrs[k]) {
			hipMemPoolPtrExportData d;
			void *q;

			if (hipMemPoolExportPointer(&d, ptrs[k]) ||
			    hipMemPoolImportPointer(&q, a->imp, &d) ||
			    *(uint32_t *)q != (uint32_t)(uintptr_t)ptrs[k] ||
			    hipFree(q) || hipFree(ptrs[k]))
				a->failures++;
			ptrs[k] = NULL;
		} else {
			size_t size = 4096 + lh_rand(&s) % (256 << 10);

			if (hipMallocFromPoolAsync(&ptrs[k], size, a->pool, NULL))
				a->failures++;
			else
				*(uint32_t *)ptrs[k] = (uint32_t)(uintptr_t)ptrs[k];
		}
	}
	for (i = 0; i < 16; i++)
		if (ptrs[i] && hipFree(ptrs[i]))
			a->failures++;
	return NULL;
}

/*
 * Bounded by counts, not a timing test: the harness's default 30 s was too
 * tight on the debug kernel (KASAN, lockdep) of a busy machine (idle there:
 * 13 s with the dma heap, 23 s with the module backend, whose chunks cost
 * more to allocate: bench/hostmem_bench).
 */
TEST_F_TIMEOUT(pool, threads, 600)
{
	struct thr_arg args[4];
	pthread_t t[4];
	int i;

	for (i = 0; i < 4; i++) {
		args[i] = (struct thr_arg){ self->pool, self->imp, 0, 100 + i };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, thread_body, &args[i]));
	}
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(0, args[i].failures);
	}
	EXPECT_EQ(0, lh_attr(self->pool, hipMemPoolAttrUsedMemCurrent));
	EXPECT_EQ(0, lh_attr(self->pool, hipMemPoolAttrReservedMemCurrent));
}

#define RACE_THREADS	4
#define RACE_ROUNDS	256
#define RACE_SZ		(64u << 10)

struct race {
	hipMemPool_t imp;
	pthread_barrier_t bar;
	hipMemPoolPtrExportData d;
	void *got[RACE_THREADS];
	int failures;
};

struct race_arg {
	struct race *r;
	int i;
};

/* Each round: import the round's pointer with the others, then free it. */
static void *race_body(void *p)
{
	struct race_arg *a = p;
	struct race *r = a->r;
	void *q;
	int n;

	for (n = 0; n < RACE_ROUNDS; n++) {
		pthread_barrier_wait(&r->bar);
		q = NULL;
		if (hipMemPoolImportPointer(&q, r->imp, &r->d))
			__atomic_add_fetch(&r->failures, 1, __ATOMIC_RELAXED);
		r->got[a->i] = q;
		pthread_barrier_wait(&r->bar);
		pthread_barrier_wait(&r->bar);	/* checked */
		if (q && hipFree(q))
			__atomic_add_fetch(&r->failures, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * Threads importing pointers of one chunk at the same moment, a new chunk
 * each round: however their mappings race, they get one address, the
 * chunk's bytes, and nothing left mapped or imported once all are freed.
 */
TEST_F_TIMEOUT(pool, racing_imports_of_a_chunk_share_one_mapping, 300)
{
	struct race_arg args[RACE_THREADS];
	pthread_t t[RACE_THREADS];
	void *bufs[RACE_ROUNDS];
	struct kfdpool_pool_stats st;
	struct race r = { .imp = self->imp };
	int i, n;

	ASSERT_EQ(hipSuccess, kfdpoolMemPoolSetGranularity(self->pool,
							    RACE_SZ));
	ASSERT_EQ(0, pthread_barrier_init(&r.bar, NULL, RACE_THREADS + 1));
	for (i = 0; i < RACE_THREADS; i++) {
		args[i] = (struct race_arg){ &r, i };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, race_body, &args[i]));
	}
	for (n = 0; n < RACE_ROUNDS; n++) {
		/* Every buffer kept: each round's is in a chunk of its own. */
		ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&bufs[n], RACE_SZ,
							     self->pool, NULL));
		lh_fill(bufs[n], RACE_SZ, n, 0x52414345ULL);
		ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&r.d, bufs[n]));
		pthread_barrier_wait(&r.bar);
		pthread_barrier_wait(&r.bar);	/* imported */
		for (i = 0; i < RACE_THREADS; i++) {
			EXPECT_EQ(r.got[0], r.got[i]);
			EXPECT_GT(0, lh_check(r.got[i], RACE_SZ, n,
					      0x52414345ULL));
		}
		pthread_barrier_wait(&r.bar);
	}
	for (i = 0; i < RACE_THREADS; i++)
		pthread_join(t[i], NULL);
	EXPECT_EQ(0, r.failures);
	/* The importer holds no chunk: every import was released. */
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(self->imp, &st));
	EXPECT_EQ(0, st.fd_imports);
	for (n = 0; n < RACE_ROUNDS; n++)
		EXPECT_EQ(hipSuccess, hipFree(bufs[n]));
	pthread_barrier_destroy(&r.bar);
}

struct busy_arg {
	hipMemPool_t pool;
	volatile int stop;
};

static void *busy_body(void *p)
{
	struct busy_arg *a = p;
	void *ptr;

	while (!a->stop)
		if (!hipMallocFromPoolAsync(&ptr, 4096, a->pool, NULL))
			hipFree(ptr);
	return NULL;
}

/*
 * A fork child while another thread uses the library: its locks are free
 * in the child, the parent's pools (and their pointers) are refused there
 * and none of their fds is left to it, and the child makes and uses a
 * pool of its own.  Each child's exit code says which of these failed.
 */
TEST_F_TIMEOUT(pool, fork_while_another_thread_uses_the_library, 300)
{
	struct busy_arg a = { self->pool, 0 };
	int i, status, hung = 0, failed = 0;
	void *parents;
	pthread_t t;

	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&parents, 4096, self->pool,
						     NULL));
	ASSERT_EQ(0, pthread_create(&t, NULL, busy_body, &a));
	for (i = 0; i < 20; i++) {
		pid_t pid = fork();

		ASSERT_LE(0, pid);
		if (!pid) {
			hipMemPool_t np;
			uint64_t v;
			void *q;

			alarm(10);
			if (hipMemPoolGetAttribute(self->pool,
					hipMemPoolAttrReleaseThreshold, &v) !=
			    hipErrorInvalidValue)
				_exit(1);
			if (hipMallocFromPoolAsync(&q, 4096, self->pool, NULL) !=
			    hipErrorInvalidValue)
				_exit(2);
			if (hipFree(parents) != hipErrorInvalidValue)
				_exit(3);
			if (lh_pool_fds() != 0)
				_exit(4);
			if (lh_pool(&np, hipMemHandleTypeNone, 0) != hipSuccess)
				_exit(5);
			if (hipMallocFromPoolAsync(&q, 4096, np, NULL) ||
			    hipFree(q) || hipMemPoolDestroy(np))
				_exit(6);
			_exit(0);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		if (!WIFEXITED(status))
			hung++;
		else if (WEXITSTATUS(status))
			failed = WEXITSTATUS(status);
	}
	a.stop = 1;
	pthread_join(t, NULL);
	EXPECT_EQ(0, hung);
	EXPECT_EQ(0, failed) TH_LOG("a child failed step %d", failed);
	EXPECT_EQ(hipSuccess, hipFree(parents));
}

/*
 * The child of an exporter (a worker, a shell-out that does not exec)
 * holds none of its parent's pools: when the exporter dies, its pool
 * ends, though the child lives on, as an importer's import fd shows.
 */
TEST(a_pool_ends_with_its_exporter_whatever_its_child_does)
{
	/* One message, from the worker alone: two writers would interleave. */
	struct {
		pid_t pid;
		char verdict;
	} w = {};
	struct kfdpool_pool_stats st;
	int sv[2], imp, status;
	pid_t exporter;

	if (access("/dev/kfdpool", F_OK))
		SKIP(return, "/dev/kfdpool missing");
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	exporter = fork();
	ASSERT_LE(0, exporter);
	if (!exporter) {
		hipMemPool_t pool;
		void *p;
		int fd;

		if (lh_pool(&pool, hipMemHandleTypePosixFileDescriptor, 0) ||
		    hipMallocFromPoolAsync(&p, 1 << 20, pool, NULL) ||
		    hipMemPoolExportToShareableHandle(&fd, pool,
				hipMemHandleTypePosixFileDescriptor, 0) ||
		    lh_send_fd(sv[0], fd))
			_exit(1);
		close(fd);
		w.pid = fork();
		if (w.pid < 0)
			_exit(2);
		if (!w.pid) {
			/* The worker: no pool fd of its parent's. */
			w.pid = getpid();
			w.verdict = lh_pool_fds() == 0 ? 'K' : 'F';
			if (lh_write_all(sv[0], &w, sizeof(w)))
				_exit(3);
			/* Killed by the test; never outlives it, whatever fails. */
			alarm(30);
			pause();
			_exit(0);
		}
		_exit(0);	/* dies with its pool allocated */
	}
	imp = lh_recv_fd(sv[1]);
	ASSERT_LE(0, imp);
	ASSERT_EQ(0, lh_read_all(sv[1], &w, sizeof(w)));
	ASSERT_EQ(exporter, waitpid(exporter, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("exporter status %#x", status);
	EXPECT_EQ('K', w.verdict) TH_LOG("the worker holds pool fds");
	/* The exporter is gone, its worker lives: the pool ended. */
	EXPECT_EQ(0, kill(w.pid, 0));
	EXPECT_EQ(-ENODEV, kfdpool_pool_stats(imp, 0, &st));
	kill(w.pid, SIGKILL);
	close(imp);
	close(sv[0]);
	close(sv[1]);
}

/*
 * hipMemPoolDestroy of an import whose pointer is still in use keeps the
 * mapping until the pointer is freed; importing the pool again meanwhile
 * gives a new, working handle, never the destroyed one.
 */
TEST_F(pool, reimport_after_destroying_an_import_in_use)
{
	hipMemPoolPtrExportData d;
	hipMemPool_t again = NULL;
	void *p, *q, *r;
	int fd;

	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, 8192, self->pool, NULL));
	ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&d, p));
	ASSERT_EQ(hipSuccess, hipMemPoolImportPointer(&q, self->imp, &d));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(self->imp));
	ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&fd,
		  self->pool, hipMemHandleTypePosixFileDescriptor, 0));
	EXPECT_EQ(hipSuccess, hipMemPoolImportFromShareableHandle(&again,
		  (void *)(intptr_t)fd, hipMemHandleTypePosixFileDescriptor, 0));
	close(fd);
	EXPECT_NE(self->imp, again);
	/* The new handle works; the destroyed one does not. */
	EXPECT_EQ(hipSuccess, hipMemPoolImportPointer(&r, again, &d));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolImportPointer(&r, self->imp,
								&d));
	EXPECT_EQ(hipSuccess, hipFree(q));
	EXPECT_EQ(hipSuccess, hipFree(r));
	self->imp = again;	/* the teardown's to destroy */
	EXPECT_EQ(hipSuccess, hipFree(p));
}

TEST(importer_killed_releases_everything)
{
	hipMemPoolPtrExportData d;
	struct kfdpool_pool_stats st;
	hipMemPool_t pool;
	int sv[2], fd, status, base = lh_dmabufs(-1);
	hipError_t e;
	void *p;
	pid_t pid;
	char c;

	if (access("/dev/kfdpool", F_OK))
		SKIP(return, "/dev/kfdpool missing");
	e = lh_pool(&pool, hipMemHandleTypePosixFileDescriptor, 0);
	if (e == hipErrorNoDevice)
		SKIP(return, "no host dma-buf exporter");
	ASSERT_EQ(hipSuccess, e);
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, 1 << 20, pool, NULL));
	ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&d, p));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		hipMemPool_t ip;
		void *q;
		int rfd = lh_recv_fd(sv[1]);

		if (hipMemPoolImportFromShareableHandle(&ip,
				(void *)(intptr_t)rfd,
				hipMemHandleTypePosixFileDescriptor, 0) ||
		    hipMemPoolImportPointer(&q, ip, &d))
			_exit(1);
		c = 'I';
		lh_write_all(sv[1], &c, 1);
		pause();	/* killed holding the import */
		_exit(2);
	}
	ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&fd, pool,
		  hipMemHandleTypePosixFileDescriptor, 0));
	ASSERT_EQ(0, lh_send_fd(sv[0], fd));
	close(fd);
	ASSERT_EQ(0, lh_read_all(sv[0], &c, 1));
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(pool, &st));
	EXPECT_EQ(1, st.import_fds);
	EXPECT_EQ(1 << 20, lh_attr(pool, hipMemPoolAttrUsedMemCurrent));
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(pool, &st));
	EXPECT_EQ(0, st.import_fds);
	EXPECT_EQ(0, st.imported_bytes);
	EXPECT_EQ(hipSuccess, hipFree(p));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(pool));
	close(sv[0]);
	close(sv[1]);
	if (base >= 0)
		EXPECT_EQ(base, lh_dmabufs(base));
}

TEST_HARNESS_MAIN
