// SPDX-License-Identifier: GPL-2.0-only
/*
 * Batch ioctls: EXPORT, REVOKE, IMPORT and RELEASE over arrays with a
 * status per element; sizes, mixed elements, permissions, faults.
 */
#include <sys/resource.h>

#include "kselftest_harness.h"
#include "kfdpool_util.h"

#define SZ	(64 * 1024)

FIXTURE(batch) {
	struct kfd_set s;
};

FIXTURE_SETUP(batch)
{
	KFD_SET_SETUP("batch_test", 2, SZ, -1, 0xb0);
}

FIXTURE_TEARDOWN(batch)
{
	KFD_SET_TEARDOWN();
}

/* Export @n records of entry @e, 1 page each (wrapping in the entry). */
static int export_n(int pool, __u32 e, struct kfdpool_record *rec, int n)
{
	struct kfdpool_export *ex = calloc(n, sizeof(*ex));
	int i, ret;

	for (i = 0; i < n; i++) {
		ex[i].entry_id = e;
		ex[i].offset = (i % (SZ / 4096)) * 4096;
		ex[i].size = 4096;
		ex[i].status = 99;
	}
	ret = kfd_batch(pool, KFDPOOL_IOC_EXPORT_BATCH, ex, n, sizeof(*ex));
	for (i = 0; i < n && ret == n; i++) {
		if (ex[i].status) {
			ret = ex[i].status;
			break;
		}
		rec[i] = ex[i].record;
	}
	free(ex);
	return ret;
}

TEST_F(batch, all_commands)
{
	struct kfdpool_record rec[16];
	struct kfdpool_import im[16];
	struct kfdpool_release rel[16];
	struct kfdpool_revoke rv[16];
	struct kfdpool_pool_stats st;
	int i;

	ASSERT_EQ(16, export_n(self->s.pool, self->s.entry[0], rec, 16));
	ASSERT_EQ(0, kfd_stats(self->s.pool, &st));
	EXPECT_EQ(16, st.records);
	EXPECT_EQ(16 * 4096, st.used_bytes);

	memset(im, 0, sizeof(im));
	for (i = 0; i < 16; i++) {
		im[i].record = rec[i];
		im[i].status = 99;
	}
	ASSERT_EQ(16, kfd_batch(self->s.imp, KFDPOOL_IOC_IMPORT_BATCH, im, 16,
				sizeof(im[0])));
	for (i = 0; i < 16; i++) {
		EXPECT_EQ(0, im[i].status);
		EXPECT_LE(0, im[i].fd);
		EXPECT_TRUE(kfd_cloexec(im[i].fd));
		EXPECT_EQ(SZ, kfd_dmabuf_size(im[i].fd));
		EXPECT_EQ(REC(&rec[i])->offset, im[i].offset);
		EXPECT_EQ(0xb0, im[i].cookie);
		close(im[i].fd);
	}
	ASSERT_EQ(0, kfd_stats(self->s.imp, &st));
	EXPECT_EQ(1, st.fd_imports);

	/* Validate-only in a batch. */
	for (i = 0; i < 16; i++) {
		im[i].flags = KFDPOOL_IMPORT_VALIDATE;
		im[i].fd = 77;
	}
	ASSERT_EQ(16, kfd_batch(self->s.imp, KFDPOOL_IOC_IMPORT_BATCH, im, 16,
				sizeof(im[0])));
	for (i = 0; i < 16; i++) {
		EXPECT_EQ(0, im[i].status);
		EXPECT_EQ(-1, im[i].fd);
	}

	memset(rel, 0, sizeof(rel));
	for (i = 0; i < 16; i++)
		rel[i].entry_id = self->s.entry[0];
	ASSERT_EQ(16, kfd_batch(self->s.imp, KFDPOOL_IOC_RELEASE_BATCH, rel, 16,
				sizeof(rel[0])));
	for (i = 0; i < 16; i++)
		EXPECT_EQ(0, rel[i].status);
	ASSERT_EQ(16, kfd_batch(self->s.imp, KFDPOOL_IOC_RELEASE_BATCH, rel, 16,
				sizeof(rel[0])));
	for (i = 0; i < 16; i++)
		EXPECT_EQ(-ENOENT, rel[i].status);
	ASSERT_EQ(0, kfd_stats(self->s.imp, &st));
	EXPECT_EQ(0, st.fd_imports);

	memset(rv, 0, sizeof(rv));
	for (i = 0; i < 16; i++)
		rv[i].record = rec[i];
	ASSERT_EQ(16, kfd_batch(self->s.pool, KFDPOOL_IOC_REVOKE_BATCH, rv, 16,
				sizeof(rv[0])));
	for (i = 0; i < 16; i++)
		EXPECT_EQ(0, rv[i].status);
	ASSERT_EQ(0, kfd_stats(self->s.pool, &st));
	EXPECT_EQ(0, st.records);
	EXPECT_EQ(0, st.used_bytes);
	ASSERT_EQ(16, kfd_batch(self->s.pool, KFDPOOL_IOC_REVOKE_BATCH, rv, 16,
				sizeof(rv[0])));
	for (i = 0; i < 16; i++)
		EXPECT_EQ(-ENOENT, rv[i].status);
}

/* Good and bad elements in one batch: each gets its own status. */
TEST_F(batch, mixed_elements)
{
	struct kfdpool_export ex[6];
	struct kfdpool_import im[6];
	struct kfdpool_revoke rv[4];
	struct kfdpool_record good;
	int i;

	memset(ex, 0, sizeof(ex));
	ex[0].entry_id = self->s.entry[0];	ex[0].size = 4096;
	ex[1].entry_id = self->s.entry[0];	ex[1].size = 0;
	ex[2].entry_id = 9999;			ex[2].size = 1;
	ex[3].entry_id = self->s.entry[1];	ex[3].size = 1;
	ex[3].flags = 1;
	ex[4].entry_id = self->s.entry[1];	ex[4].size = SZ + 1;
	ex[5].entry_id = self->s.entry[1];	ex[5].size = SZ;
	ASSERT_EQ(6, kfd_batch(self->s.pool, KFDPOOL_IOC_EXPORT_BATCH, ex, 6,
			       sizeof(ex[0])));
	EXPECT_EQ(0, ex[0].status);
	EXPECT_EQ(-EINVAL, ex[1].status);
	EXPECT_EQ(-ENOENT, ex[2].status);
	EXPECT_EQ(-EINVAL, ex[3].status);
	EXPECT_EQ(-EINVAL, ex[4].status);
	EXPECT_EQ(0, ex[5].status);
	good = ex[0].record;

	memset(im, 0, sizeof(im));
	for (i = 0; i < 6; i++)
		im[i].record = good;
	REC(&im[1].record)->magic = 0;			/* -EINVAL */
	REC(&im[2].record)->pool_id[0] ^= 1;		/* -EXDEV */
	REC(&im[3].record)->nonce[0] ^= 1;		/* -ENOENT */
	REC(&im[4].record)->generation ^= 1;		/* -ESTALE */
	im[5].flags = 4;			/* -EINVAL */
	ASSERT_EQ(6, kfd_batch(self->s.imp, KFDPOOL_IOC_IMPORT_BATCH, im, 6,
			       sizeof(im[0])));
	EXPECT_EQ(0, im[0].status);
	EXPECT_LE(0, im[0].fd);
	EXPECT_EQ(-EINVAL, im[1].status);
	EXPECT_EQ(-EXDEV, im[2].status);
	EXPECT_EQ(-ENOENT, im[3].status);
	EXPECT_EQ(-ESTALE, im[4].status);
	EXPECT_EQ(-EINVAL, im[5].status);
	for (i = 1; i < 6; i++)
		EXPECT_EQ(-1, im[i].fd);
	close(im[0].fd);

	memset(rv, 0, sizeof(rv));
	rv[0].record = good;
	rv[1].record = good;			/* revoked by [0]: -ENOENT */
	rv[2].record = ex[5].record;
	rv[2].flags = 1;			/* -EINVAL */
	rv[3].record = ex[5].record;
	ASSERT_EQ(4, kfd_batch(self->s.pool, KFDPOOL_IOC_REVOKE_BATCH, rv, 4,
			       sizeof(rv[0])));
	EXPECT_EQ(0, rv[0].status);
	EXPECT_EQ(-ENOENT, rv[1].status);
	EXPECT_EQ(-EINVAL, rv[2].status);
	EXPECT_EQ(0, rv[3].status);
}

/*
 * Validations of two entries in one batch, on an fd that holds an import
 * of only the first, interleaved, then an import of the second: each
 * answers for its own entry (a batch remembers an entry it found held).
 */
TEST_F(batch, validations_answer_for_their_entry)
{
	struct kfdpool_import first, im[7];
	struct kfdpool_record a, b;
	int imp, i;

	imp = kfd_pool_export(self->s.pool);
	ASSERT_LE(0, imp);
	ASSERT_EQ(0, kfd_export(self->s.pool, self->s.entry[0], 0, 4096, &a));
	ASSERT_EQ(0, kfd_export(self->s.pool, self->s.entry[1], 0, 4096, &b));
	ASSERT_EQ(0, kfd_import(imp, &a, 0, &first));

	memset(im, 0, sizeof(im));
	for (i = 0; i < 7; i++) {
		im[i].record = i == 0 || i == 2 || i == 6 ? a : b;
		im[i].flags = i == 4 ? 0 : KFDPOOL_IMPORT_VALIDATE;
	}
	ASSERT_EQ(7, kfd_batch(imp, KFDPOOL_IOC_IMPORT_BATCH, im, 7,
			       sizeof(im[0])));
	EXPECT_EQ(0, im[0].status);
	EXPECT_EQ(-ENXIO, im[1].status);
	EXPECT_EQ(0, im[2].status);
	EXPECT_EQ(-ENXIO, im[3].status);
	EXPECT_EQ(0, im[4].status);
	EXPECT_EQ(0, im[5].status);
	EXPECT_EQ(0, im[6].status);
	EXPECT_LE(0, im[4].fd);
	if (im[4].fd >= 0)
		close(im[4].fd);
	close(first.fd);
	close(imp);
	EXPECT_EQ(0, kfd_revoke(self->s.pool, &a));
	EXPECT_EQ(0, kfd_revoke(self->s.pool, &b));
}

/*
 * An import undone because its fd could not be installed counts for none
 * of the elements after it: validations of its entry behind it in the
 * batch (run under the lock while it still counted) fail -ENXIO, even
 * with an import of the same entry after them (it ran after them), and
 * one of an entry the fd held before still succeeds.
 */
TEST_F(batch, undone_import_counts_for_no_later_validation)
{
	struct kfdpool_import first, im[5];
	struct kfdpool_record a, b;
	int imp, i, lo, status;
	struct rlimit rl;
	pid_t pid;

	imp = kfd_pool_export(self->s.pool);
	ASSERT_LE(0, imp);
	ASSERT_EQ(0, kfd_export(self->s.pool, self->s.entry[0], 0, 4096, &a));
	ASSERT_EQ(0, kfd_export(self->s.pool, self->s.entry[1], 0, 4096, &b));
	ASSERT_EQ(0, kfd_import(imp, &b, 0, &first));

	memset(im, 0, sizeof(im));
	im[0].record = a;			/* no fd for it: undone */
	im[1].record = a;
	im[2].record = b;			/* held before the batch */
	im[3].record = b;			/* no fd either */
	im[4].record = a;			/* after the validation */
	im[1].flags = im[2].flags = KFDPOOL_IMPORT_VALIDATE;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* No fd number left below the limit. */
		lo = fcntl(imp, F_DUPFD, 0);
		close(lo);
		rl.rlim_cur = rl.rlim_max = lo;
		if (lo < 0 || setrlimit(RLIMIT_NOFILE, &rl))
			_exit(10);
		if (kfd_batch(imp, KFDPOOL_IOC_IMPORT_BATCH, im, 5,
			      sizeof(im[0])) != 5)
			_exit(11);
		for (i = 0; i < 5; i++)
			fprintf(stderr, "# element %d: %d\n", i, im[i].status);
		if (im[0].status != -EMFILE || im[3].status != -EMFILE ||
		    im[4].status != -EMFILE)
			_exit(12);
		if (im[1].status != -ENXIO)
			_exit(13);
		_exit(im[2].status ? 14 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* The fd (shared with the child) counts its one import of b. */
	EXPECT_EQ(1, kfd_fdinfo_num(imp, "kfdpool-fd-imports"));
	close(first.fd);
	close(imp);
	EXPECT_EQ(0, kfd_revoke(self->s.pool, &a));
	EXPECT_EQ(0, kfd_revoke(self->s.pool, &b));
}

TEST_F_TIMEOUT(batch, sizes, 300)
{
	static const int counts[] = { 1, 2, 64, KFD_BATCH_MAX };
	struct kfdpool_record *rec = calloc(KFD_BATCH_MAX + 1, sizeof(*rec));
	struct kfdpool_release *rel;
	struct kfdpool_import *im;
	struct kfdpool_revoke *rv;
	struct kfdpool_pool_stats st;
	unsigned int k;
	int i;

	/* A full batch of imports hands out 4096 fds at once. */
	{
		struct rlimit rl = { KFD_BATCH_MAX + 256,
				     KFD_BATCH_MAX + 256 };

		getrlimit(RLIMIT_NOFILE, &rl);
		if (rl.rlim_cur < KFD_BATCH_MAX + 256) {
			rl.rlim_cur = KFD_BATCH_MAX + 256;
			if (rl.rlim_max < rl.rlim_cur)
				rl.rlim_max = rl.rlim_cur;
			ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
		}
	}
	im = calloc(KFD_BATCH_MAX + 1, sizeof(*im));
	rv = calloc(KFD_BATCH_MAX + 1, sizeof(*rv));
	rel = calloc(KFD_BATCH_MAX + 1, sizeof(*rel));
	ASSERT_NE(NULL, rec);
	for (k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
		int n = counts[k], bad = 0, fds = 0;

		ASSERT_EQ(n, export_n(self->s.pool, self->s.entry[k & 1], rec, n));
		memset(im, 0, n * sizeof(*im));
		for (i = 0; i < n; i++)
			im[i].record = rec[i];
		ASSERT_EQ(n, kfd_batch(self->s.imp, KFDPOOL_IOC_IMPORT_BATCH,
				       im, n, sizeof(*im)));
		for (i = 0; i < n; i++) {
			bad += im[i].status != 0;
			fds += im[i].fd >= 0;
			if (im[i].fd >= 0)
				close(im[i].fd);
		}
		EXPECT_EQ(0, bad);
		EXPECT_EQ(n, fds);
		memset(rel, 0, n * sizeof(*rel));
		for (i = 0; i < n; i++)
			rel[i].entry_id = self->s.entry[k & 1];
		ASSERT_EQ(n, kfd_batch(self->s.imp, KFDPOOL_IOC_RELEASE_BATCH,
				       rel, n, sizeof(*rel)));
		memset(rv, 0, n * sizeof(*rv));
		for (i = 0; i < n; i++)
			rv[i].record = rec[i];
		ASSERT_EQ(n, kfd_batch(self->s.pool, KFDPOOL_IOC_REVOKE_BATCH,
				       rv, n, sizeof(*rv)));
		for (i = 0; i < n; i++) {
			bad += rel[i].status != 0;
			bad += rv[i].status != 0;
		}
		EXPECT_EQ(0, bad);
		ASSERT_EQ(0, kfd_stats(self->s.pool, &st));
		EXPECT_EQ(0, st.records);
		EXPECT_EQ(0, st.imported_bytes);
		TH_LOG("batch of %d: ok", n);
	}
	/* Max + 1 and 0 are refused as a whole; nothing happens. */
	EXPECT_EQ(-EINVAL, kfd_batch(self->s.imp, KFDPOOL_IOC_IMPORT_BATCH, im,
				     KFD_BATCH_MAX + 1, sizeof(*im)));
	EXPECT_EQ(-EINVAL, kfd_batch(self->s.pool, KFDPOOL_IOC_EXPORT_BATCH, im,
				     KFD_BATCH_MAX + 1,
				     sizeof(struct kfdpool_export)));
	EXPECT_EQ(-EINVAL, kfd_batch(self->s.imp, KFDPOOL_IOC_RELEASE_BATCH,
				     rel, 0, sizeof(*rel)));
	ASSERT_EQ(0, kfd_stats(self->s.pool, &st));
	EXPECT_EQ(0, st.records);
	free(rec);
	free(im);
	free(rv);
	free(rel);
}

TEST_F(batch, descriptor_bad_args)
{
	struct kfdpool_release rel[2] = {};
	struct kfdpool_batch b = {};

	b.ops = (uintptr_t)rel;
	b.count = 1;
	b.elem_size = sizeof(rel[0]);
	b.flags = 1;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->s.imp, KFDPOOL_IOC_RELEASE_BATCH, &b));
	b.flags = 0;
	b.pad = 1;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->s.imp, KFDPOOL_IOC_RELEASE_BATCH, &b));
	b.pad = 0;
	/* An element must hold its status; an older, smaller one is served. */
	b.elem_size = offsetof(struct kfdpool_release, status) + 3;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->s.imp, KFDPOOL_IOC_RELEASE_BATCH, &b));
	b.elem_size = offsetofend(struct kfdpool_release, status);
	b.count = 2;
	memset(rel, 0xee, sizeof(rel));
	memset(rel, 0, b.elem_size * 2);
	EXPECT_EQ(2, ioctl(self->s.imp, KFDPOOL_IOC_RELEASE_BATCH, &b));
	EXPECT_EQ(-ENOENT, rel[0].status);
	EXPECT_EQ(-ENOENT, ((struct kfdpool_release *)((char *)rel + b.elem_size))->status);
	EXPECT_EQ(0xeeeeeeee, *(__u32 *)((char *)rel + 2 * b.elem_size));
	memset(rel, 0, sizeof(rel));
	b.count = 1;
	b.elem_size = 0;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->s.imp, KFDPOOL_IOC_RELEASE_BATCH, &b));
	b.elem_size = sizeof(rel[0]);
	EXPECT_EQ(1, ioctl(self->s.imp, KFDPOOL_IOC_RELEASE_BATCH, &b));
	EXPECT_EQ(-ENOENT, rel[0].status);
	/* A bad array: -EFAULT, nothing processed. */
	b.ops = 16;
	EXPECT_EQ(-EFAULT, kfd_ioctl(self->s.imp, KFDPOOL_IOC_RELEASE_BATCH, &b));
	/* Wrong direction of a batch number. */
	EXPECT_EQ(-ENOTTY, kfd_ioctl(self->s.imp, _IOWR(KFDPOOL_IOC_MAGIC, 0x1b,
						      struct kfdpool_batch),
				     &b));
}

/*
 * An element is at most 4096 bytes, as POOL_LIST's: an 8 KiB element, all
 * zero past ours, is refused before anything runs (io_uring: uring_test).
 */
TEST_F(batch, elements_capped_at_4096_bytes)
{
	unsigned char *arr = calloc(2, 8192);
	struct kfdpool_export *e;
	struct kfdpool_batch b = {};
	struct kfdpool_pool_stats st;
	unsigned int size;

	ASSERT_NE(NULL, arr);
	for (size = 4096; size <= 8192; size += 4096) {
		e = (struct kfdpool_export *)arr;
		memset(arr, 0, 2 * 8192);
		e->entry_id = self->s.entry[0];
		e->size = 4096;
		b.ops = (uintptr_t)arr;
		b.count = 1;
		b.elem_size = size;
		if (size == 4096) {
			EXPECT_EQ(1, ioctl(self->s.pool,
					   KFDPOOL_IOC_EXPORT_BATCH, &b));
			EXPECT_EQ(0, e->status);
			EXPECT_EQ(0, kfd_revoke(self->s.pool, &e->record));
			continue;
		}
		EXPECT_EQ(-EINVAL, kfd_ioctl(self->s.pool,
					     KFDPOOL_IOC_EXPORT_BATCH, &b));
		b.elem_size = 4097;
		EXPECT_EQ(-EINVAL, kfd_ioctl(self->s.pool,
					     KFDPOOL_IOC_EXPORT_BATCH, &b));
	}
	ASSERT_EQ(0, kfd_stats(self->s.pool, &st));
	EXPECT_EQ(0, st.records);
	free(arr);
}

/*
 * Elements larger than the kernel's: served when the extra bytes are zero,
 * refused one by one (-E2BIG, not run) when they ask for anything; tails
 * are left alone either way.
 */
TEST_F(batch, larger_elements)
{
	struct big {
		struct kfdpool_export e;
		__u64 future[3];
	} ex[3];
	struct kfdpool_pool_stats st;
	int i;

	memset(ex, 0, sizeof(ex));
	for (i = 0; i < 3; i++) {
		ex[i].e.entry_id = self->s.entry[0];
		ex[i].e.size = 4096;
	}
	ex[1].future[2] = 0xabc1;
	ASSERT_EQ(3, kfd_batch(self->s.pool, KFDPOOL_IOC_EXPORT_BATCH, ex, 3,
			       sizeof(ex[0])));
	for (i = 0; i < 3; i += 2) {
		EXPECT_EQ(0, ex[i].e.status);
		EXPECT_EQ(KFDPOOL_RECORD_MAGIC, REC(&ex[i].e.record)->magic);
		EXPECT_EQ(0, ex[i].future[2]);
		EXPECT_EQ(0, kfd_import(self->s.imp, &ex[i].e.record,
					0, NULL));
	}
	EXPECT_EQ(-E2BIG, ex[1].e.status);
	EXPECT_EQ(0, REC(&ex[1].e.record)->magic);
	EXPECT_EQ(0xabc1, ex[1].future[2]);
	ASSERT_EQ(0, kfd_stats(self->s.pool, &st));
	EXPECT_EQ(2, st.records);
}

TEST_F(batch, import_fd_owner_only)
{
	struct kfdpool_export ex[2] = {};
	struct kfdpool_revoke rv[2] = {};
	struct kfdpool_pool_stats st;

	ex[0].entry_id = self->s.entry[0];
	ex[0].size = 1;
	ex[1] = ex[0];
	EXPECT_EQ(-EPERM, kfd_batch(self->s.imp, KFDPOOL_IOC_EXPORT_BATCH, ex,
				    2, sizeof(ex[0])));
	EXPECT_EQ(0, ex[0].status);	/* not touched */
	ASSERT_EQ(2, kfd_batch(self->s.pool, KFDPOOL_IOC_EXPORT_BATCH, ex, 2,
			       sizeof(ex[0])));
	rv[0].record = ex[0].record;
	rv[1].record = ex[1].record;
	EXPECT_EQ(-EPERM, kfd_batch(self->s.imp, KFDPOOL_IOC_REVOKE_BATCH, rv,
				    2, sizeof(rv[0])));
	ASSERT_EQ(0, kfd_stats(self->s.pool, &st));
	EXPECT_EQ(2, st.records);
}

/*
 * An array that ends in an unmapped page: the elements before it are
 * processed (and their fds installed), the call returns how many.
 */
TEST_F(batch, partial_fault)
{
	long pg = kfd_page_size();
	struct kfdpool_import *im;
	struct kfdpool_record r;
	struct kfdpool_pool_stats st;
	char *map;
	int n, i, ret;

	ASSERT_EQ(0, kfd_export(self->s.pool, self->s.entry[0], 0, 4096, &r));
	map = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, munmap(map + pg, pg));
	n = pg / sizeof(*im);
	im = (struct kfdpool_import *)(map + pg) - n;
	memset(im, 0, n * sizeof(*im));
	for (i = 0; i < n; i++)
		im[i].record = r;
	ret = kfd_batch(self->s.imp, KFDPOOL_IOC_IMPORT_BATCH, im, n + 5,
			sizeof(*im));
	EXPECT_EQ(n, ret);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(0, im[i].status);
		EXPECT_TRUE(kfd_cloexec(im[i].fd));
		close(im[i].fd);
	}
	ASSERT_EQ(0, kfd_stats(self->s.imp, &st));
	EXPECT_EQ(1, st.fd_imports);
	/* Every import was counted: n releases succeed, one more fails. */
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, kfd_release(self->s.imp, self->s.entry[0]));
	EXPECT_EQ(-ENOENT, kfd_release(self->s.imp, self->s.entry[0]));
	munmap(map, pg);
}

/* Elements that can be read but not written back: the fd never appears. */
TEST_F(batch, readonly_elements)
{
	struct kfdpool_import *im;
	struct kfdpool_record r;
	struct kfdpool_pool_stats st;
	int fd;

	ASSERT_EQ(0, kfd_export(self->s.pool, self->s.entry[0], 0, 4096, &r));
	im = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, im);
	memset(im, 0, 2 * sizeof(*im));
	im[0].record = r;
	im[1].record = r;
	ASSERT_EQ(0, mprotect(im, 4096, PROT_READ));
	fd = dup(0);
	close(fd);
	EXPECT_EQ(-EFAULT, kfd_batch(self->s.imp, KFDPOOL_IOC_IMPORT_BATCH, im,
				     2, sizeof(*im)));
	EXPECT_EQ(fd, dup(0));
	close(fd);
	ASSERT_EQ(0, kfd_stats(self->s.imp, &st));
	EXPECT_EQ(0, st.fd_imports);
	munmap(im, 4096);
}

/*
 * Revokes and releases cannot be taken back: one whose element cannot be
 * written back is not run (the lock is taken once for many elements, so
 * this is found before any of them runs).
 */
TEST_F(batch, readonly_revokes_and_releases)
{
	struct kfdpool_revoke *rv;
	struct kfdpool_release *rl;
	struct kfdpool_pool_stats st;
	struct kfdpool_record r[3];
	int i;

	rv = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, rv);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, kfd_export(self->s.pool, self->s.entry[0],
					i * 4096, 4096, &r[i]));
		rv[i].record = r[i];
	}
	ASSERT_EQ(0, mprotect(rv, 4096, PROT_READ));
	EXPECT_EQ(-EFAULT, kfd_batch(self->s.pool, KFDPOOL_IOC_REVOKE_BATCH, rv,
				     3, sizeof(*rv)));
	ASSERT_EQ(0, kfd_stats(self->s.pool, &st));
	EXPECT_EQ(3, st.records);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(0, kfd_import(self->s.imp, &r[i], 0, NULL));
	munmap(rv, 4096);

	rl = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, rl);
	for (i = 0; i < 3; i++)
		rl[i].entry_id = self->s.entry[0];
	ASSERT_EQ(0, mprotect(rl, 4096, PROT_READ));
	EXPECT_EQ(-EFAULT, kfd_batch(self->s.imp, KFDPOOL_IOC_RELEASE_BATCH, rl,
				     3, sizeof(*rl)));
	/* The three imports are all still held. */
	for (i = 0; i < 3; i++)
		EXPECT_EQ(0, kfd_release(self->s.imp, self->s.entry[0]));
	EXPECT_EQ(-ENOENT, kfd_release(self->s.imp, self->s.entry[0]));
	munmap(rl, 4096);
}

/* Running out of fds fails the elements that need one, not the batch. */
TEST_F(batch, emfile_elements)
{
	struct kfdpool_import im[8];
	struct kfdpool_record r;
	struct kfdpool_pool_stats st;
	struct rlimit rl, old;
	int i, fd, ok = 0, emfile = 0, room;

	ASSERT_EQ(0, kfd_export(self->s.pool, self->s.entry[1], 0, 4096, &r));
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &old));
	fd = dup(0);
	ASSERT_LE(0, fd);
	close(fd);
	rl = old;
	rl.rlim_cur = fd + 3;	/* fds below fd + 3 that are free: room */
	for (i = fd, room = 0; i < fd + 3; i++)
		room += fcntl(i, F_GETFD) < 0;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	memset(im, 0, sizeof(im));
	for (i = 0; i < 8; i++)
		im[i].record = r;
	EXPECT_EQ(8, kfd_batch(self->s.imp, KFDPOOL_IOC_IMPORT_BATCH, im, 8,
			       sizeof(im[0])));
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &old));
	for (i = 0; i < 8; i++) {
		ok += !im[i].status && im[i].fd >= 0;
		emfile += im[i].status == -EMFILE && im[i].fd == -1;
		if (im[i].fd >= 0)
			close(im[i].fd);
	}
	EXPECT_LT(0, room);
	EXPECT_EQ(room, ok);
	EXPECT_EQ(8 - room, emfile);
	/* Exactly those that succeeded were counted. */
	for (i = 0; i < room; i++)
		EXPECT_EQ(0, kfd_release(self->s.imp, self->s.entry[1]));
	EXPECT_EQ(-ENOENT, kfd_release(self->s.imp, self->s.entry[1]));
	ASSERT_EQ(0, kfd_stats(self->s.imp, &st));
	EXPECT_EQ(0, st.fd_imports);
}

/*
 * Every batch on a pool that ended answers ENODEV, as every other command
 * on its fds does, before it reads an element: on a left-over import fd
 * after the last owner fd closed, and on the owner fd after DESTROY.
 */
TEST_F(batch, ended_pool_is_enodev)
{
	static const unsigned long cmds[] = {
		KFDPOOL_IOC_EXPORT_BATCH, KFDPOOL_IOC_REVOKE_BATCH,
		KFDPOOL_IOC_IMPORT_BATCH, KFDPOOL_IOC_RELEASE_BATCH,
	};
	struct kfdpool_pool_destroy d = {};
	struct kfdpool_record rec[2];
	union {
		struct kfdpool_export ex;
		struct kfdpool_revoke rv;
		struct kfdpool_import im;
		struct kfdpool_release rel;
	} el;
	int pool, imp, e, i, fd;

	pool = kfd_pool_new("ended-batch");
	ASSERT_LE(0, pool);
	imp = kfd_pool_export(pool);
	ASSERT_LE(0, imp);
	e = kfd_pin(pool, self->s.buf[0], 0);
	ASSERT_LT(0, e);
	ASSERT_EQ(2, export_n(pool, e, rec, 2));
	ASSERT_EQ(0, kfd_ioctl(pool, KFDPOOL_IOC_POOL_DESTROY, &d));
	for (i = 0; i < 4; i++) {
		memset(&el, 0, sizeof(el));
		el.ex.entry_id = e;
		el.ex.size = 4096;
		fd = i < 2 ? pool : imp;
		EXPECT_EQ(-ENODEV, kfd_batch(fd, cmds[i], &el, 1,
					     i == 0 ? sizeof(el.ex) :
					     i == 1 ? sizeof(el.rv) :
					     i == 2 ? sizeof(el.im) :
					     sizeof(el.rel)))
			TH_LOG("batch %d", i);
	}
	close(imp);
	close(pool);

	/* The last owner fd closed, an import fd left over. */
	pool = kfd_pool_new("ended-batch");
	ASSERT_LE(0, pool);
	imp = kfd_pool_export(pool);
	ASSERT_LE(0, imp);
	e = kfd_pin(pool, self->s.buf[0], 0);
	ASSERT_LT(0, e);
	ASSERT_EQ(1, export_n(pool, e, rec, 1));
	close(pool);
	memset(&el, 0, sizeof(el));
	el.im.record = rec[0];
	EXPECT_EQ(-ENODEV, kfd_batch(imp, KFDPOOL_IOC_IMPORT_BATCH, &el, 1,
				     sizeof(el.im)));
	memset(&el, 0, sizeof(el));
	el.rel.entry_id = e;
	EXPECT_EQ(-ENODEV, kfd_batch(imp, KFDPOOL_IOC_RELEASE_BATCH, &el, 1,
				     sizeof(el.rel)));
	close(imp);
}

TEST_HARNESS_MAIN
