// SPDX-License-Identifier: GPL-2.0-only
/*
 * Export records: export, import (fd and validate-only), release, revoke;
 * bad arguments; random, mutated, cross-pool and revoked records.
 */
#include "kselftest_harness.h"
#include "kfdpool_util.h"

#define SZ	(64 * 1024)

FIXTURE(rec) {
	struct kfd_set s;
};

FIXTURE_SETUP(rec)
{
	KFD_SET_SETUP("record_test", 2, SZ, 100, 0xc0);
}

FIXTURE_TEARDOWN(rec)
{
	KFD_SET_TEARDOWN();
}

TEST_F(rec, export_import_release)
{
	struct kfdpool_pool_stats st;
	struct kfdpool_export e = {};
	struct kfdpool_import imp;
	__u8 zero[16] = {};

	e.entry_id = self->s.entry[1];
	e.offset = 8192;
	e.size = 4096;
	e.status = 55;
	ASSERT_EQ(0, kfd_ioctl(self->s.pool, KFDPOOL_IOC_EXPORT, &e));
	EXPECT_EQ(0, e.status);
	EXPECT_EQ(KFDPOOL_RECORD_MAGIC, REC(&e.record)->magic);
	EXPECT_EQ(self->s.entry[1], REC(&e.record)->entry_id);
	EXPECT_EQ(8192, REC(&e.record)->offset);
	EXPECT_EQ(4096, REC(&e.record)->size);
	EXPECT_NE(0, REC(&e.record)->record_id);
	EXPECT_NE(0, memcmp(zero, REC(&e.record)->nonce, 16));
	ASSERT_EQ(0, kfd_stats(self->s.pool, &st));
	EXPECT_EQ(1, st.records);
	/* Used bytes: those of the entries that have a record. */
	EXPECT_EQ(SZ, st.used_bytes);
	EXPECT_EQ(SZ, st.used_high);
	EXPECT_EQ(0, memcmp(st.id, REC(&e.record)->pool_id, 16));

	/* Validate-only before holding the entry: refused. */
	EXPECT_EQ(-ENXIO, kfd_import(self->s.imp, &e.record,
				     KFDPOOL_IMPORT_VALIDATE, NULL));

	ASSERT_EQ(0, kfd_import(self->s.imp, &e.record, 0, &imp));
	EXPECT_LE(0, imp.fd);
	EXPECT_TRUE(kfd_cloexec(imp.fd));
	EXPECT_EQ(8192, imp.offset);
	EXPECT_EQ(4096, imp.size);
	EXPECT_EQ(SZ, imp.entry_size);
	EXPECT_EQ(0xc1, imp.cookie);
	EXPECT_EQ(self->s.entry[1], imp.entry_id);
	EXPECT_EQ(SZ, kfd_dmabuf_size(imp.fd));
	/* The imported fd is the pinned buffer: same bytes. */
	EXPECT_EQ(1, kfd_dmabuf_check(imp.fd, SZ, 101, 0, SZ));
	EXPECT_EQ(0, kfd_dmabuf_check(imp.fd, SZ, 100, 0, SZ));
	close(imp.fd);

	ASSERT_EQ(0, kfd_stats(self->s.imp, &st));
	EXPECT_EQ(1, st.fd_imports);
	EXPECT_EQ(SZ, st.fd_imported_bytes);
	EXPECT_EQ(SZ, st.imported_bytes);
	ASSERT_EQ(0, kfd_stats(self->s.pool, &st));
	EXPECT_EQ(0, st.fd_imports);
	EXPECT_EQ(SZ, st.imported_bytes);

	/* Now validate-only works and makes no fd. */
	ASSERT_EQ(0, kfd_import(self->s.imp, &e.record, KFDPOOL_IMPORT_VALIDATE,
				&imp));
	EXPECT_EQ(-1, imp.fd);
	EXPECT_EQ(8192, imp.offset);
	/* Validate on another fd of the pool: it holds nothing. */
	EXPECT_EQ(-ENXIO, kfd_import(self->s.pool, &e.record,
				     KFDPOOL_IMPORT_VALIDATE, NULL));

	/* Two imports, two releases. */
	ASSERT_EQ(0, kfd_import(self->s.imp, &e.record, 0, NULL));
	ASSERT_EQ(0, kfd_stats(self->s.imp, &st));
	EXPECT_EQ(1, st.fd_imports);
	EXPECT_EQ(SZ, st.imported_bytes);
	EXPECT_EQ(0, kfd_release(self->s.imp, self->s.entry[1]));
	EXPECT_EQ(0, kfd_import(self->s.imp, &e.record, KFDPOOL_IMPORT_VALIDATE,
				NULL));
	EXPECT_EQ(0, kfd_release(self->s.imp, self->s.entry[1]));
	EXPECT_EQ(-ENOENT, kfd_release(self->s.imp, self->s.entry[1]));
	EXPECT_EQ(-ENXIO, kfd_import(self->s.imp, &e.record,
				     KFDPOOL_IMPORT_VALIDATE, NULL));
	ASSERT_EQ(0, kfd_stats(self->s.imp, &st));
	EXPECT_EQ(0, st.fd_imports);
	EXPECT_EQ(0, st.imported_bytes);

	/* The owner fd may import too. */
	ASSERT_EQ(0, kfd_import(self->s.pool, &e.record, 0, NULL));
	ASSERT_EQ(0, kfd_stats(self->s.pool, &st));
	EXPECT_EQ(1, st.fd_imports);
	EXPECT_EQ(0, kfd_release(self->s.pool, self->s.entry[1]));
}

TEST_F(rec, export_bad_args)
{
	struct kfdpool_export e;
	struct kfdpool_pool_stats st;
	int ctl, p;

#define EXP(_entry, _off, _size) do {		\
	memset(&e, 0, sizeof(e));		\
	e.entry_id = (_entry);			\
	e.offset = (_off);			\
	e.size = (_size);			\
} while (0)

	EXP(self->s.entry[0], 0, 0);
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->s.pool, KFDPOOL_IOC_EXPORT, &e));
	EXP(self->s.entry[0], 0, SZ + 1);
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->s.pool, KFDPOOL_IOC_EXPORT, &e));
	EXP(self->s.entry[0], SZ, 1);
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->s.pool, KFDPOOL_IOC_EXPORT, &e));
	EXP(self->s.entry[0], SZ + 4096, 1);
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->s.pool, KFDPOOL_IOC_EXPORT, &e));
	EXP(self->s.entry[0], 4096, ~0ULL - 100);	/* offset + size wraps */
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->s.pool, KFDPOOL_IOC_EXPORT, &e));
	EXP(self->s.entry[0], ~0ULL, 2);
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->s.pool, KFDPOOL_IOC_EXPORT, &e));
	EXP(self->s.entry[0], 0, 1);
	e.flags = 1;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->s.pool, KFDPOOL_IOC_EXPORT, &e));
	EXP(self->s.entry[0], 0, 1);
	e.flags = 0x80000000;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->s.pool, KFDPOOL_IOC_EXPORT, &e));
	EXP(self->s.entry[0], 0, 1);
	e.pad = 1;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->s.pool, KFDPOOL_IOC_EXPORT, &e));
	EXP(0, 0, 1);
	EXPECT_EQ(-ENOENT, kfd_ioctl(self->s.pool, KFDPOOL_IOC_EXPORT, &e));
	EXP(self->s.entry[1] + 100, 0, 1);
	EXPECT_EQ(-ENOENT, kfd_ioctl(self->s.pool, KFDPOOL_IOC_EXPORT, &e));
	/* Import fds may not export. */
	EXP(self->s.entry[0], 0, 1);
	EXPECT_EQ(-EPERM, kfd_ioctl(self->s.imp, KFDPOOL_IOC_EXPORT, &e));
	/* The whole entry, and its last byte, are fine. */
	EXP(self->s.entry[0], 0, SZ);
	EXPECT_EQ(0, kfd_ioctl(self->s.pool, KFDPOOL_IOC_EXPORT, &e));
	EXP(self->s.entry[0], SZ - 1, 1);
	EXPECT_EQ(0, kfd_ioctl(self->s.pool, KFDPOOL_IOC_EXPORT, &e));
	ASSERT_EQ(0, kfd_stats(self->s.pool, &st));
	EXPECT_EQ(2, st.records);
	/* The last byte is inside the whole entry: counted once. */
	EXPECT_EQ(SZ, st.used_bytes);

	/* A pool that cannot be shared exports no pointers. */
	ctl = kfd_open();
	p = kfd_pool_create(ctl, 0, "private", 0, NULL);
	close(ctl);
	ASSERT_LE(0, p);
	EXP(kfd_pin(p, self->s.buf[0], 0), 0, 1);
	EXPECT_LT(0, (int)e.entry_id);
	EXPECT_EQ(-EOPNOTSUPP, kfd_ioctl(p, KFDPOOL_IOC_EXPORT, &e));
	close(p);
#undef EXP
}

TEST_F(rec, import_bad_args)
{
	struct kfdpool_record r;
	struct kfdpool_import imp;

	ASSERT_EQ(0, kfd_export(self->s.pool, self->s.entry[0], 0, 4096, &r));
	memset(&imp, 0, sizeof(imp));
	imp.record = r;
	imp.flags = 2;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->s.imp, KFDPOOL_IOC_IMPORT, &imp));
	imp.flags = 0x80000000 | KFDPOOL_IMPORT_VALIDATE;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->s.imp, KFDPOOL_IOC_IMPORT, &imp));
	/* Outputs coming in dirty are ignored. */
	memset(&imp, 0x5a, sizeof(imp));
	imp.record = r;
	imp.flags = 0;
	ASSERT_EQ(0, kfd_ioctl(self->s.imp, KFDPOOL_IOC_IMPORT, &imp));
	EXPECT_EQ(0, imp.status);
	EXPECT_EQ(0, imp.offset);
	close(imp.fd);
	EXPECT_EQ(-1, ioctl(self->s.imp, KFDPOOL_IOC_IMPORT, (void *)8));
	EXPECT_EQ(EFAULT, errno);
}

/* A faulting copy back gives the fd back and drops the import. */
TEST_F(rec, import_fault_leaks_nothing)
{
	struct kfdpool_import *imp;
	struct kfdpool_pool_stats st;
	struct kfdpool_record r;
	int fd;

	ASSERT_EQ(0, kfd_export(self->s.pool, self->s.entry[0], 0, 4096, &r));
	imp = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, imp);
	memset(imp, 0, sizeof(*imp));
	imp->record = r;
	ASSERT_EQ(0, mprotect(imp, 4096, PROT_READ));
	fd = dup(0);
	close(fd);
	EXPECT_EQ(-1, ioctl(self->s.imp, KFDPOOL_IOC_IMPORT, imp));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(fd, dup(0));
	close(fd);
	ASSERT_EQ(0, kfd_stats(self->s.imp, &st));
	EXPECT_EQ(0, st.fd_imports);
	EXPECT_EQ(0, st.imported_bytes);
	munmap(imp, 4096);
}

TEST_F(rec, release_bad_args)
{
	struct kfdpool_release rel = {};

	EXPECT_EQ(-ENOENT, kfd_release(self->s.imp, self->s.entry[0]));
	rel.entry_id = self->s.entry[0];
	rel.flags = 1;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->s.imp, KFDPOOL_IOC_RELEASE, &rel));
	rel.flags = 0;
	rel.pad = 1;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->s.imp, KFDPOOL_IOC_RELEASE, &rel));
	EXPECT_EQ(-ENOENT, kfd_release(self->s.imp, 0));
	EXPECT_EQ(-ENOENT, kfd_release(self->s.imp, 0xffffffff));
}

TEST_F(rec, revoke)
{
	struct kfdpool_pool_stats st;
	struct kfdpool_revoke rv = {};
	struct kfdpool_record r, r2;
	struct kfdpool_import imp;

	ASSERT_EQ(0, kfd_export(self->s.pool, self->s.entry[0], 0, 4096, &r));
	ASSERT_EQ(0, kfd_export(self->s.pool, self->s.entry[0], 4096, 4096, &r2));
	ASSERT_EQ(0, kfd_import(self->s.imp, &r, 0, &imp));

	rv.record = r;
	rv.flags = 1;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->s.pool, KFDPOOL_IOC_REVOKE, &rv));
	rv.flags = 0;
	EXPECT_EQ(-EPERM, kfd_ioctl(self->s.imp, KFDPOOL_IOC_REVOKE, &rv));
	REC(&rv.record)->magic ^= 1;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->s.pool, KFDPOOL_IOC_REVOKE, &rv));
	rv.record = r;
	REC(&rv.record)->pool_id[3] ^= 0x10;
	EXPECT_EQ(-EXDEV, kfd_ioctl(self->s.pool, KFDPOOL_IOC_REVOKE, &rv));
	rv.record = r;
	REC(&rv.record)->nonce[15] ^= 0x80;
	EXPECT_EQ(-ENOENT, kfd_ioctl(self->s.pool, KFDPOOL_IOC_REVOKE, &rv));
	rv.record = r;
	REC(&rv.record)->generation++;
	EXPECT_EQ(-ESTALE, kfd_ioctl(self->s.pool, KFDPOOL_IOC_REVOKE, &rv));

	EXPECT_EQ(0, kfd_revoke(self->s.pool, &r));
	EXPECT_EQ(-ENOENT, kfd_revoke(self->s.pool, &r));
	EXPECT_EQ(-ENOENT, kfd_import(self->s.imp, &r, 0, NULL));
	EXPECT_EQ(-ENOENT, kfd_import(self->s.imp, &r, KFDPOOL_IMPORT_VALIDATE,
				      NULL));
	ASSERT_EQ(0, kfd_stats(self->s.pool, &st));
	EXPECT_EQ(1, st.records);
	EXPECT_EQ(SZ, st.used_bytes);
	EXPECT_EQ(SZ, st.used_high);

	/* The import made before the revoke still maps the right bytes. */
	EXPECT_EQ(1, kfd_dmabuf_check(imp.fd, SZ, 100, 0, 4096));
	close(imp.fd);
	/* The other record still imports. */
	EXPECT_EQ(0, kfd_import(self->s.imp, &r2, KFDPOOL_IMPORT_VALIDATE,
				NULL));

	memset(&st, 0, sizeof(st));
	st.flags = KFDPOOL_STATS_RESET_USED_HIGH;
	ASSERT_EQ(0, kfd_ioctl(self->s.pool, KFDPOOL_IOC_POOL_STATS, &st));
	EXPECT_EQ(SZ, st.used_high);
}

/*
 * Nonces are a keyed function of the record's id and generation: records of
 * one place differ in every nonce, another record's nonce never passes, and
 * neither does the same record's nonce under another pool's key.
 */
TEST_F(rec, nonces_are_per_record)
{
	struct kfdpool_record r[32], swapped, rb;
	int b, eb, i, j, same;

	for (i = 0; i < 32; i++)
		ASSERT_EQ(0, kfd_export(self->s.pool, self->s.entry[0], 0, 4096,
					&r[i]));
	for (i = 0; i < 32; i++) {
		for (j = 0; j < i; j++) {
			/* Neither half of a nonce repeats. */
			EXPECT_NE(0, memcmp(REC(&r[j])->nonce, REC(&r[i])->nonce, 8));
			EXPECT_NE(0, memcmp(REC(&r[j])->nonce + 8, REC(&r[i])->nonce + 8, 8));
		}
		EXPECT_NE(0, memcmp(REC(&r[i])->nonce, REC(&r[i])->nonce + 8, 8));
		swapped = r[i];
		memcpy(REC(&swapped)->nonce, REC(&r[(i + 1) % 32])->nonce, 16);
		EXPECT_EQ(-ENOENT, kfd_import(self->s.imp, &swapped, 0, NULL));
	}

	/* Another pool, the same ids and generations: other nonces. */
	b = kfd_pool_new("other");
	ASSERT_LE(0, b);
	eb = kfd_pin(b, self->s.buf[0], 0);
	ASSERT_LT(0, eb);
	same = 0;
	for (i = 0; i < 32; i++) {
		ASSERT_EQ(0, kfd_export(b, eb, 0, 4096, &rb));
		for (j = 0; j < 32; j++)
			if (REC(&rb)->record_id == REC(&r[j])->record_id &&
			    REC(&rb)->generation == REC(&r[j])->generation) {
				same++;
				/* Both halves are keyed. */
				EXPECT_NE(0, memcmp(REC(&rb)->nonce, REC(&r[j])->nonce, 8));
				EXPECT_NE(0, memcmp(REC(&rb)->nonce + 8,
						    REC(&r[j])->nonce + 8, 8));
			}
	}
	EXPECT_LT(0, same);
	close(b);
	for (i = 0; i < 32; i++)
		EXPECT_EQ(0, kfd_revoke(self->s.pool, &r[i]));
}

/*
 * The record table pages the caller's user holds (debugfs "users", its
 * line at namespace level 0), less @base; -1 without the file.
 */
static int user_rec_pages(int base)
{
	unsigned int uid;
	int lvl, pages, ret = -1;
	char line[256];
	FILE *f = fopen(KFD_DEBUGFS_USERS, "re");

	if (!f)
		return -1;
	ret = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*u %d %u %*u %*d %d", &lvl, &uid, &pages) == 3 &&
		    !lvl && uid == geteuid())
			ret = pages;
	fclose(f);
	return ret - base;
}

/*
 * Records in a page of the table, and the id of record @i of the pool's
 * first records in slot order: page i / RPP, at 128 ids a page
 * (docs/kernel.md).
 */
#define RPP		73
#define RID(i)		((i) / RPP * 128 + (i) % RPP + 1)

/*
 * The record table: RPP records a page, slots reused last freed first (a
 * revoked record whose slot was taken again is -ESTALE, one whose slot is
 * free -ENOENT), a page given back when its records are all free but for
 * one kept, emptied places filled again.
 */
TEST_F(rec, table_pages_and_slot_reuse)
{
	static struct kfdpool_record r[2 * RPP + 2], more[3 * RPP];
	int base = user_rec_pages(0), p, e, i;
	struct kfdpool_record again;

#define rec_pages(r)	user_rec_pages(base)
	p = kfd_pool_new("table");
	ASSERT_LE(0, p);
	e = kfd_pin(p, self->s.buf[0], 0);
	ASSERT_LT(0, e);
	for (i = 0; i < 2 * RPP + 2; i++) {
		ASSERT_EQ(0, kfd_export(p, e, 0, 4096, &r[i]));
		EXPECT_EQ(RID(i), REC(&r[i])->record_id);
		if (i == 0 && base < 0) {
			kfd_revoke(p, &r[0]);
			close(p);
			SKIP(return, "%s: %s", KFD_DEBUGFS_USERS, strerror(errno));
		}
		/* A page is full at RPP records, not before. */
		if (i == RPP - 1 || i == RPP)
			EXPECT_EQ(i / RPP + 1, rec_pages(&r[0]));
	}
	EXPECT_EQ(3, rec_pages(&r[0]));

	/* The second page empties: kept.  Then the first: given back. */
	for (i = RPP; i < 2 * RPP; i++)
		ASSERT_EQ(0, kfd_revoke(p, &r[i]));
	EXPECT_EQ(3, rec_pages(&r[0]));
	for (i = 0; i < RPP; i++)
		ASSERT_EQ(0, kfd_revoke(p, &r[i]));
	EXPECT_EQ(2, rec_pages(&r[0]));
	EXPECT_EQ(-ENOENT, kfd_import(p, &r[0], 0, NULL));
	EXPECT_EQ(-ENOENT, kfd_revoke(p, &r[0]));
	EXPECT_EQ(-ENOENT, kfd_revoke(p, &r[2 * RPP - 1]));

	/* The last slot freed comes back; its old record is stale. */
	ASSERT_EQ(0, kfd_export(p, e, 4096, 4096, &again));
	EXPECT_EQ(REC(&r[2 * RPP - 1])->record_id, REC(&again)->record_id);
	EXPECT_NE(REC(&r[2 * RPP - 1])->generation, REC(&again)->generation);
	EXPECT_EQ(-ESTALE, kfd_revoke(p, &r[2 * RPP - 1]));
	EXPECT_EQ(-ESTALE, kfd_import(p, &r[2 * RPP - 1], 0, NULL));
	EXPECT_EQ(-ENOENT, kfd_revoke(p, &r[2 * RPP - 2]));
	ASSERT_EQ(0, kfd_revoke(p, &again));

	/* Everything revoked: one page kept. */
	ASSERT_EQ(0, kfd_revoke(p, &r[2 * RPP]));
	ASSERT_EQ(0, kfd_revoke(p, &r[2 * RPP + 1]));
	EXPECT_EQ(1, rec_pages(&r[0]));

	/*
	 * The empty places of the directory are filled first, lowest
	 * first: the first page's, then (past the kept second) the third's.
	 */
	for (i = 0; i < 2 * RPP; i++)
		ASSERT_EQ(0, kfd_export(p, e, 0, 4096, &more[i]));
	EXPECT_EQ(2, rec_pages(&r[0]));
	for (; i < 3 * RPP; i++)
		ASSERT_EQ(0, kfd_export(p, e, 0, 4096, &more[i]));
	EXPECT_EQ(3, rec_pages(&r[0]));
	for (i = 0; i < 3 * RPP; i++) {
		EXPECT_GE(RID(i < 2 * RPP ? 2 * RPP - 1 : 3 * RPP - 1),
			  REC(&more[i])->record_id);
		EXPECT_LE(RID(i < 2 * RPP ? 0 : 2 * RPP), REC(&more[i])->record_id);
		/* Valid, though not imported on this fd. */
		EXPECT_EQ(-ENXIO, kfd_import(p, &more[i],
					     KFDPOOL_IMPORT_VALIDATE, NULL));
	}
	for (i = 0; i < 3 * RPP; i++)
		ASSERT_EQ(0, kfd_revoke(p, &more[i]));
	close(p);
	/* The pool's end gives every page back. */
	EXPECT_EQ(0, rec_pages(NULL));
#undef rec_pages
}

/* A new record never brings a revoked one back. */
TEST_F(rec, revoked_stays_dead)
{
	struct kfdpool_record r[64] = {}, old = {};
	int i, j;

	ASSERT_EQ(0, kfd_export(self->s.pool, self->s.entry[0], 0, 4096, &old));
	ASSERT_EQ(0, kfd_revoke(self->s.pool, &old));
	for (i = 0; i < 64; i++) {
		ASSERT_EQ(0, kfd_export(self->s.pool, self->s.entry[0], 0, 4096,
					&r[i]));
		EXPECT_NE(REC(&old)->generation, REC(&r[i])->generation);
		for (j = 0; j < i; j++)
			EXPECT_NE(REC(&r[j])->record_id, REC(&r[i])->record_id);
		EXPECT_NE(0, kfd_import(self->s.imp, &old, 0, NULL));
	}
	for (i = 0; i < 64; i++)
		EXPECT_EQ(0, kfd_revoke(self->s.pool, &r[i]));
}

TEST_F(rec, unpin_revokes)
{
	struct kfdpool_record r[3];
	struct kfdpool_unpin u = {};
	int i;

	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, kfd_export(self->s.pool, self->s.entry[0], i * 4096,
					4096, &r[i]));
	u.entry_id = self->s.entry[0];
	ASSERT_EQ(0, kfd_ioctl(self->s.pool, KFDPOOL_IOC_UNPIN, &u));
	EXPECT_EQ(3, u.revoked);
	EXPECT_EQ(0, u.draining);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(-ENOENT, kfd_import(self->s.imp, &r[i], 0, NULL));
		EXPECT_EQ(-ENOENT, kfd_revoke(self->s.pool, &r[i]));
	}
	EXPECT_EQ(0, kfd_fdinfo_num(self->s.pool, "kfdpool-records"));
	EXPECT_EQ(0, kfd_fdinfo_num(self->s.pool, "kfdpool-used"));
}

TEST_F(rec, cross_pool)
{
	struct kfdpool_record r, rb;
	int b, bimp, eb;

	b = kfd_pool_new("pool-b");
	ASSERT_LE(0, b);
	bimp = kfd_pool_export(b);
	ASSERT_LE(0, bimp);
	eb = kfd_pin(b, self->s.buf[0], 0);
	ASSERT_LT(0, eb);
	ASSERT_EQ(0, kfd_export(self->s.pool, self->s.entry[0], 0, 4096, &r));
	ASSERT_EQ(0, kfd_export(b, eb, 0, 4096, &rb));
	EXPECT_EQ(-EXDEV, kfd_import(bimp, &r, 0, NULL));
	EXPECT_EQ(-EXDEV, kfd_import(b, &r, 0, NULL));
	EXPECT_EQ(-EXDEV, kfd_import(self->s.imp, &rb, 0, NULL));
	EXPECT_EQ(-EXDEV, kfd_revoke(b, &r));
	/* Even with pool B's id written in, A's record is not B's. */
	memcpy(REC(&r)->pool_id, REC(&rb)->pool_id, 16);
	EXPECT_NE(0, kfd_import(bimp, &r, 0, NULL));
	EXPECT_EQ(0, kfd_import(bimp, &rb, 0, NULL));
	close(bimp);
	close(b);
}

static bool same_record(const struct kfdpool_record *a,
			const struct kfdpool_record *b)
{
	return !memcmp(a, b, sizeof(*a));
}

static bool allowed_errno(int e)
{
	return e == -EINVAL || e == -EXDEV || e == -ENOENT || e == -ESTALE;
}

/* 10,000 random records and 10,000 mutations of valid ones never import. */
TEST_F_TIMEOUT(rec, random_and_mutated_records, 600)
{
	struct kfdpool_record valid[8], r;
	uint64_t seed = 0x5eed1234abcdULL;
	int i, imported = 0, bad_errno = 0, n_estale = 0, n_enoent = 0;
	unsigned char *b = (unsigned char *)&r;

	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, kfd_export(self->s.pool, self->s.entry[i & 1],
					(i / 2) * 4096, 4096, &valid[i]));

	for (i = 0; i < 10000; i++) {
		unsigned int j;
		int ret;

		for (j = 0; j < sizeof(r); j += 8) {
			uint64_t v = kfd_rand(&seed);

			memcpy(b + j, &v, 8);
		}
		/* Half of them look like ours: right magic and pool id. */
		if (i & 1) {
			REC(&r)->magic = KFDPOOL_RECORD_MAGIC;
			memcpy(REC(&r)->pool_id, REC(&valid[0])->pool_id, 16);
			REC(&r)->record_id %= 16;
			REC(&r)->entry_id = self->s.entry[i & 2 ? 1 : 0];
		}
		ret = kfd_import(self->s.imp, &r, 0, NULL);
		imported += !ret;
		bad_errno += ret && !allowed_errno(ret);
	}
	EXPECT_EQ(0, imported);
	EXPECT_EQ(0, bad_errno);

	for (i = 0; i < 10000; i++) {
		unsigned int nflips = 1 + kfd_rand(&seed) % 3, k;
		int ret;

		r = valid[i % 8];
		for (k = 0; k < nflips; k++) {
			unsigned int bit = kfd_rand(&seed) % (sizeof(r) * 8);

			b[bit / 8] ^= 1u << (bit % 8);
		}
		if (same_record(&r, &valid[i % 8]))
			continue;	/* flips cancelled out */
		ret = kfd_import(self->s.imp, &r, KFDPOOL_IMPORT_VALIDATE, NULL);
		/* Validate-only would say -ENXIO for a record that matched. */
		if (ret == -ENXIO || !ret)
			imported++;
		ret = kfd_import(self->s.imp, &r, 0, NULL);
		imported += !ret;
		bad_errno += ret && !allowed_errno(ret);
		n_estale += ret == -ESTALE;
		n_enoent += ret == -ENOENT;
	}
	EXPECT_EQ(0, imported);
	EXPECT_EQ(0, bad_errno);
	TH_LOG("mutated: %d -ESTALE, %d -ENOENT", n_estale, n_enoent);

	/* The valid ones still import, and nothing else was counted. */
	for (i = 0; i < 8; i++)
		EXPECT_EQ(0, kfd_import(self->s.imp, &valid[i], 0, NULL));
	EXPECT_EQ(2, kfd_fdinfo_num(self->s.imp, "kfdpool-fd-imports"));
}

/* Every numeric fdinfo value equals the stats ioctl's, on both fd modes. */
static void check_fdinfo(struct __test_metadata *_metadata, int fd)
{
	struct kfdpool_pool_stats st;
	char val[128], hex[2 * KFDPOOL_ID_LEN + 1];

	ASSERT_EQ(0, kfd_stats(fd, &st));
	kfd_hex(st.id, KFDPOOL_ID_LEN, hex);
	ASSERT_EQ(0, kfd_fdinfo(fd, "kfdpool-id", val, sizeof(val)));
	EXPECT_STREQ(hex, val);
	ASSERT_EQ(0, kfd_fdinfo(fd, "kfdpool-name", val, sizeof(val)));
	EXPECT_STREQ(st.name, val);
	ASSERT_EQ(0, kfd_fdinfo(fd, "kfdpool-mode", val, sizeof(val)));
	EXPECT_STREQ(st.mode == KFDPOOL_MODE_OWNER ? "owner" : "import", val);
	EXPECT_EQ(st.owner_pid, kfd_fdinfo_num(fd, "kfdpool-owner-pid"));
	EXPECT_EQ(st.limit, kfd_fdinfo_num(fd, "kfdpool-limit"));
	EXPECT_EQ(st.handle_types, kfd_fdinfo_num(fd, "kfdpool-handle-types"));
	EXPECT_EQ(st.reserved_bytes, kfd_fdinfo_num(fd, "kfdpool-reserved"));
	EXPECT_EQ(st.reserved_high, kfd_fdinfo_num(fd, "kfdpool-reserved-high"));
	EXPECT_EQ(st.used_bytes, kfd_fdinfo_num(fd, "kfdpool-used"));
	EXPECT_EQ(st.used_high, kfd_fdinfo_num(fd, "kfdpool-used-high"));
	EXPECT_EQ(st.draining_bytes, kfd_fdinfo_num(fd, "kfdpool-draining"));
	EXPECT_EQ(st.entries, kfd_fdinfo_num(fd, "kfdpool-entries"));
	EXPECT_EQ(st.draining_entries,
		  kfd_fdinfo_num(fd, "kfdpool-draining-entries"));
	EXPECT_EQ(st.records, kfd_fdinfo_num(fd, "kfdpool-records"));
	EXPECT_EQ(st.import_fds, kfd_fdinfo_num(fd, "kfdpool-import-fds"));
	EXPECT_EQ(st.imported_bytes, kfd_fdinfo_num(fd, "kfdpool-imported"));
	EXPECT_EQ(st.fd_imported_bytes,
		  kfd_fdinfo_num(fd, "kfdpool-fd-imported"));
	EXPECT_EQ(st.fd_imports, kfd_fdinfo_num(fd, "kfdpool-fd-imports"));
}

TEST_F(rec, fdinfo_equals_stats)
{
	struct kfdpool_record r[3];
	struct kfdpool_pool_stats st;
	int i;

	check_fdinfo(_metadata, self->s.pool);
	check_fdinfo(_metadata, self->s.imp);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, kfd_export(self->s.pool, self->s.entry[i & 1],
					i * 8192, 4096 + i, &r[i]));
	ASSERT_EQ(0, kfd_import(self->s.imp, &r[0], 0, NULL));
	ASSERT_EQ(0, kfd_import(self->s.imp, &r[1], 0, NULL));
	ASSERT_EQ(0, kfd_import(self->s.pool, &r[2], 0, NULL));
	ASSERT_EQ(0, kfd_revoke(self->s.pool, &r[2]));
	ASSERT_EQ(0, kfd_unpin(self->s.pool, self->s.entry[1], NULL));
	ASSERT_EQ(0, kfd_stats(self->s.pool, &st));
	/* Nothing zero that should not be, so equality means something. */
	EXPECT_EQ(SZ, st.reserved_bytes);	/* a draining entry is not */
	EXPECT_EQ(SZ, st.draining_bytes);
	EXPECT_EQ(1, st.draining_entries);
	EXPECT_EQ(1, st.records);
	EXPECT_EQ(SZ, st.used_bytes);
	EXPECT_EQ(2 * SZ, st.used_high);
	EXPECT_EQ(3 * SZ, st.imported_bytes);
	EXPECT_EQ(SZ, st.fd_imported_bytes);
	check_fdinfo(_metadata, self->s.pool);
	check_fdinfo(_metadata, self->s.imp);
	TH_LOG("reserved %llu used %llu/%llu draining %llu imported %llu",
	       (unsigned long long)st.reserved_bytes,
	       (unsigned long long)st.used_bytes,
	       (unsigned long long)st.used_high,
	       (unsigned long long)st.draining_bytes,
	       (unsigned long long)st.imported_bytes);
}

TEST_HARNESS_MAIN
