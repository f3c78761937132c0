// SPDX-License-Identifier: GPL-2.0-only
/*
 * Entries: pin and unpin, fd types, limits (pool, global, per-user, entry
 * cap), reserved accounting.
 */
#include "kselftest_harness.h"
#include "kfdpool_util.h"
#include "kfdpool_state.h"

#define SZ	(64 * 1024)

FIXTURE(entry) {
	struct kfd_set s;
};

FIXTURE_SETUP(entry)
{
	kfd_state_restore();
	KFD_SET_SETUP("entry_test", 4, SZ, -1, 0);
}

FIXTURE_TEARDOWN(entry)
{
	KFD_SET_TEARDOWN();
}

TEST_F(entry, pin_unpin)
{
	struct kfdpool_pool_stats st;
	struct kfdpool_pin p = {};
	struct kfdpool_unpin u = {};
	int n0 = kfd_dmabuf_count_now();

	p.dmabuf_fd = self->s.buf[0];
	p.cookie = 0xdeadbeefcafeULL;
	ASSERT_EQ(0, kfd_ioctl(self->s.pool, KFDPOOL_IOC_PIN, &p));
	EXPECT_NE(0, p.entry_id);
	EXPECT_EQ(SZ, p.size);
	ASSERT_EQ(0, kfd_stats(self->s.pool, &st));
	EXPECT_EQ(SZ, st.reserved_bytes);
	EXPECT_EQ(SZ, st.reserved_high);
	EXPECT_EQ(1, st.entries);

	/* The pool keeps the dma-buf alive after its fd closes. */
	close(self->s.buf[0]);
	self->s.buf[0] = -1;
	if (n0 >= 0)
		EXPECT_EQ(n0, kfd_dmabuf_count(n0));

	u.entry_id = p.entry_id;
	ASSERT_EQ(0, kfd_ioctl(self->s.pool, KFDPOOL_IOC_UNPIN, &u));
	EXPECT_EQ(0, u.revoked);
	EXPECT_EQ(0, u.draining);
	ASSERT_EQ(0, kfd_stats(self->s.pool, &st));
	EXPECT_EQ(0, st.reserved_bytes);
	EXPECT_EQ(SZ, st.reserved_high);
	EXPECT_EQ(0, st.entries);
	if (n0 >= 0)
		EXPECT_EQ(n0 - 1, kfd_dmabuf_count(n0 - 1));

	/* Unpinned: gone. */
	EXPECT_EQ(-ENOENT, kfd_unpin(self->s.pool, p.entry_id, NULL));
}

TEST_F(entry, ids_and_cookies)
{
	struct kfdpool_record rec;
	struct kfdpool_import imp;
	int e[4], i, j;

	for (i = 0; i < 4; i++) {
		e[i] = kfd_pin(self->s.pool, self->s.buf[i], 1000 + i);
		ASSERT_LT(0, e[i]);
		for (j = 0; j < i; j++)
			EXPECT_NE(e[i], e[j]);
	}
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, kfd_export(self->s.pool, e[i], 0, 4096, &rec));
		ASSERT_EQ(0, kfd_import(self->s.imp, &rec, 0, &imp));
		EXPECT_EQ(1000 + i, imp.cookie);
		EXPECT_EQ(e[i], imp.entry_id);
		EXPECT_EQ(SZ, imp.entry_size);
		close(imp.fd);
		EXPECT_EQ(0, kfd_release(self->s.imp, e[i]));
	}
}

TEST_F(entry, pin_twice)
{
	int e, dup_fd;

	e = kfd_pin(self->s.pool, self->s.buf[0], 0);
	ASSERT_LT(0, e);
	EXPECT_EQ(-EEXIST, kfd_pin(self->s.pool, self->s.buf[0], 0));
	/* Another fd of the same dma-buf is the same dma-buf. */
	dup_fd = dup(self->s.buf[0]);
	EXPECT_EQ(-EEXIST, kfd_pin(self->s.pool, dup_fd, 0));
	close(dup_fd);
	/* Another pool may pin it. */
	{
		int p2 = kfd_pool_new("other");
		ASSERT_LE(0, p2);
		EXPECT_LT(0, kfd_pin(p2, self->s.buf[0], 0));
		close(p2);
	}
	/* After unpin it may be pinned again. */
	ASSERT_EQ(0, kfd_unpin(self->s.pool, e, NULL));
	EXPECT_LT(0, kfd_pin(self->s.pool, self->s.buf[0], 0));
}

TEST_F(entry, pin_bad_args)
{
	struct kfdpool_pin p;

	memset(&p, 0, sizeof(p));
	p.dmabuf_fd = self->s.buf[0];
	p.flags = 1;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->s.pool, KFDPOOL_IOC_PIN, &p));
	p.flags = 0x80000000;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->s.pool, KFDPOOL_IOC_PIN, &p));
	p.flags = 0;
	p.pad = 1;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->s.pool, KFDPOOL_IOC_PIN, &p));
	p.pad = 0;
	/* Outputs coming in dirty are ignored. */
	p.size = 1;
	p.entry_id = 77;
	ASSERT_EQ(0, kfd_ioctl(self->s.pool, KFDPOOL_IOC_PIN, &p));
	EXPECT_EQ(SZ, p.size);
	EXPECT_NE(77, p.entry_id);
	EXPECT_EQ(-1, ioctl(self->s.pool, KFDPOOL_IOC_PIN, (void *)8));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(entry, pin_wrong_fd_types)
{
	int p[2], memfd, closed, other;

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	EXPECT_EQ(-EINVAL, kfd_pin(self->s.pool, p[0], 0));
	EXPECT_EQ(-EINVAL, kfd_pin(self->s.pool, p[1], 0));
	close(p[0]);
	close(p[1]);
	memfd = syscall(SYS_memfd_create, "x", 1);
	ASSERT_LE(0, memfd);
	ASSERT_EQ(0, ftruncate(memfd, SZ));
	EXPECT_EQ(-EINVAL, kfd_pin(self->s.pool, memfd, 0));
	close(memfd);
	/* A pool where a dma-buf is expected, itself included. */
	EXPECT_EQ(-EINVAL, kfd_pin(self->s.pool, self->s.pool, 0));
	EXPECT_EQ(-EINVAL, kfd_pin(self->s.pool, self->s.imp, 0));
	other = kfd_pool_new("other");
	ASSERT_LE(0, other);
	EXPECT_EQ(-EINVAL, kfd_pin(self->s.pool, other, 0));
	close(other);
	other = kfd_open();
	EXPECT_EQ(-EINVAL, kfd_pin(self->s.pool, other, 0));
	close(other);
	closed = dup(0);
	close(closed);
	EXPECT_EQ(-EBADF, kfd_pin(self->s.pool, closed, 0));
	EXPECT_EQ(-EBADF, kfd_pin(self->s.pool, -1, 0));
	EXPECT_EQ(-EBADF, kfd_pin(self->s.pool, 1 << 30, 0));
}

TEST_F(entry, import_fd_refused)
{
	struct kfdpool_pin p = {};
	struct kfdpool_unpin u = {};
	int e;

	p.dmabuf_fd = self->s.buf[0];
	EXPECT_EQ(-EPERM, kfd_ioctl(self->s.imp, KFDPOOL_IOC_PIN, &p));
	e = kfd_pin(self->s.pool, self->s.buf[0], 0);
	ASSERT_LT(0, e);
	u.entry_id = e;
	EXPECT_EQ(-EPERM, kfd_ioctl(self->s.imp, KFDPOOL_IOC_UNPIN, &u));
	EXPECT_EQ(0, kfd_ioctl(self->s.pool, KFDPOOL_IOC_UNPIN, &u));
}

TEST_F(entry, unpin_bad_args)
{
	struct kfdpool_unpin u = {};
	int e;

	e = kfd_pin(self->s.pool, self->s.buf[0], 0);
	ASSERT_LT(0, e);
	u.entry_id = e;
	u.flags = 1;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->s.pool, KFDPOOL_IOC_UNPIN, &u));
	u.flags = 0x80000000;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->s.pool, KFDPOOL_IOC_UNPIN, &u));
	EXPECT_EQ(-ENOENT, kfd_unpin(self->s.pool, 0, NULL));
	EXPECT_EQ(-ENOENT, kfd_unpin(self->s.pool, e + 1, NULL));
	EXPECT_EQ(-ENOENT, kfd_unpin(self->s.pool, 0xffffffff, NULL));
	/* Outputs coming in dirty are ignored. */
	u.flags = 0;
	u.revoked = 5;
	u.draining = 9;
	EXPECT_EQ(0, kfd_ioctl(self->s.pool, KFDPOOL_IOC_UNPIN, &u));
	EXPECT_EQ(0, u.revoked);
	EXPECT_EQ(0, u.draining);
}

TEST_F(entry, pool_limit)
{
	struct kfdpool_pool_stats st;
	int ctl, p, e1, e2;

	ctl = kfd_open();
	ASSERT_LE(0, ctl);
	p = kfd_pool_create(ctl, 2 * SZ - 1, "lim", 1, NULL);
	close(ctl);
	ASSERT_LE(0, p);
	e1 = kfd_pin(p, self->s.buf[0], 0);
	ASSERT_LT(0, e1);
	EXPECT_EQ(-ENOSPC, kfd_pin(p, self->s.buf[1], 0));
	ASSERT_EQ(0, kfd_stats(p, &st));
	EXPECT_EQ(SZ, st.reserved_bytes);
	EXPECT_EQ(1, st.entries);
	ASSERT_EQ(0, kfd_unpin(p, e1, NULL));
	e2 = kfd_pin(p, self->s.buf[1], 0);
	EXPECT_LT(0, e2);
	close(p);

	/* Exactly at the limit fits. */
	ctl = kfd_open();
	p = kfd_pool_create(ctl, 2 * SZ, "lim", 1, NULL);
	close(ctl);
	ASSERT_LE(0, p);
	EXPECT_LT(0, kfd_pin(p, self->s.buf[0], 0));
	EXPECT_LT(0, kfd_pin(p, self->s.buf[1], 0));
	EXPECT_EQ(-ENOSPC, kfd_pin(p, self->s.buf[2], 0));
	close(p);
}

TEST_F(entry, max_entries)
{
	long long old = kfd_param_get("max_entries");
	struct kfdpool_query q;
	int p;

	if (old < 0)
		SKIP(return, "no module parameters");
	ASSERT_EQ(0, kfd_param_set("max_entries", 2));
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(2, q.max_entries);
	p = kfd_pool_new("cap");
	EXPECT_LT(0, kfd_pin(p, self->s.buf[0], 0));
	EXPECT_LT(0, kfd_pin(p, self->s.buf[1], 0));
	EXPECT_EQ(-ENOSPC, kfd_pin(p, self->s.buf[2], 0));
	EXPECT_EQ(0, kfd_param_set("max_entries", old));
	EXPECT_LT(0, kfd_pin(p, self->s.buf[2], 0));
	close(p);
}

/*
 * Bytes are bounded by the kernel's own limits (RLIMIT_MEMLOCK, memcg),
 * not by module-wide quotas: QUERY's old byte fields read 0, pins or not.
 */
TEST_F(entry, no_byte_quotas_of_its_own)
{
	struct kfdpool_query q;

	EXPECT_LT(0, kfd_pin(self->s.pool, self->s.buf[0], 0));
	EXPECT_LT(0, kfd_pin(self->s.pool, self->s.buf[1], 0));
	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(0, q.global_limit);
	EXPECT_EQ(0, q.user_limit);
	EXPECT_EQ(0, q.global_pinned);
	EXPECT_EQ(0, q.user_pinned);
	EXPECT_EQ(-ENOENT, kfd_param_get("global_limit"));
	EXPECT_EQ(-ENOENT, kfd_param_get("user_limit"));
}

TEST_F(entry, reserved_high_reset)
{
	struct kfdpool_pool_stats st;
	int e0, e1;

	e0 = kfd_pin(self->s.pool, self->s.buf[0], 0);
	e1 = kfd_pin(self->s.pool, self->s.buf[1], 0);
	ASSERT_LT(0, e0);
	ASSERT_LT(0, e1);
	ASSERT_EQ(0, kfd_unpin(self->s.pool, e0, NULL));
	ASSERT_EQ(0, kfd_stats(self->s.pool, &st));
	EXPECT_EQ(SZ, st.reserved_bytes);
	EXPECT_EQ(2 * SZ, st.reserved_high);
	memset(&st, 0, sizeof(st));
	st.flags = KFDPOOL_STATS_RESET_RESERVED_HIGH;
	ASSERT_EQ(0, kfd_ioctl(self->s.pool, KFDPOOL_IOC_POOL_STATS, &st));
	EXPECT_EQ(SZ, st.reserved_high);
	ASSERT_EQ(0, kfd_stats(self->s.pool, &st));
	EXPECT_EQ(SZ, st.reserved_high);
	/* fdinfo agrees. */
	EXPECT_EQ(SZ, kfd_fdinfo_num(self->s.pool, "kfdpool-reserved-high"));
	EXPECT_EQ(SZ, kfd_fdinfo_num(self->s.imp, "kfdpool-reserved"));
	EXPECT_EQ(1, kfd_fdinfo_num(self->s.imp, "kfdpool-entries"));
}

/*
 * UNPIN and a POOL_STATS reset cannot be undone: given a struct the kernel
 * cannot write their answer to, they fail EFAULT and do nothing.
 */
TEST_F(entry, final_commands_act_only_if_they_can_answer)
{
	struct kfdpool_pool_stats st, *rs;
	struct kfdpool_unpin *u;
	char *page;
	int e0, e1;

	e0 = kfd_pin(self->s.pool, self->s.buf[0], 0);
	e1 = kfd_pin(self->s.pool, self->s.buf[1], 0);
	ASSERT_LT(0, e0);
	ASSERT_LT(0, e1);
	ASSERT_EQ(0, kfd_unpin(self->s.pool, e1, NULL));
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, page);
	u = (void *)page;
	u->entry_id = e0;
	rs = (void *)(page + 1024);
	rs->flags = KFDPOOL_STATS_RESET_RESERVED_HIGH;
	ASSERT_EQ(0, mprotect(page, 4096, PROT_READ));

	EXPECT_EQ(-1, ioctl(self->s.pool, KFDPOOL_IOC_UNPIN, u));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->s.pool, KFDPOOL_IOC_POOL_STATS, rs));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(0, kfd_stats(self->s.pool, &st));
	EXPECT_EQ(1, st.entries);
	EXPECT_EQ(SZ, st.reserved_bytes);
	EXPECT_EQ(2 * SZ, st.reserved_high);
	munmap(page, 4096);
	EXPECT_EQ(0, kfd_unpin(self->s.pool, e0, NULL));
}

/* Pin many and close: every reference dropped. */
TEST_F(entry, many_entries_closed)
{
	int fds[64], i, n = 0, p;

	p = kfd_pool_new("many");
	ASSERT_LE(0, p);
	for (i = 0; i < 64; i++) {
		fds[i] = kfd_dmabuf_new(4096);
		ASSERT_LE(0, fds[i]);
		if (kfd_pin(p, fds[i], i) > 0)
			n++;
		close(fds[i]);
	}
	EXPECT_EQ(64, n);
	close(p);
}

TEST_HARNESS_MAIN
