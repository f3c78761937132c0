// SPDX-License-Identifier: GPL-2.0-only
/*
 * The module cannot be unloaded while a pool exists, and can after.
 * Needs $KFDPOOL_KO (the VM runner sets it) to load the module again, so
 * that later tests find it loaded.
 */
#include "kselftest_harness.h"
#include "kfdpool_util.h"

static int unload(void)
{
	return syscall(SYS_delete_module, "kfdpool", O_NONBLOCK) ? -errno : 0;
}

static int load(const char *ko)
{
	int fd = open(ko, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return ret;
}

TEST(unload_refused_while_pool_exists)
{
	const char *ko = getenv("KFDPOOL_KO");
	struct kfdpool_record r;
	int pool, imp, buf, e, baseline;

	if (!ko || access(ko, R_OK))
		SKIP(return, "KFDPOOL_KO not set: cannot reload the module");
	baseline = kfd_dmabuf_count_now();
	pool = kfd_pool_new("unload");
	if (pool < 0)
		SKIP(return, "no pool: %s", strerror(-pool));
	imp = kfd_pool_export(pool);
	ASSERT_LE(0, imp);
	buf = kfd_dmabuf_new(4096);
	if (buf >= 0) {
		e = kfd_pin(pool, buf, 0);
		ASSERT_LT(0, e);
		ASSERT_EQ(0, kfd_export(pool, e, 0, 4096, &r));
		ASSERT_EQ(0, kfd_import(imp, &r, 0, NULL));
		close(buf);
	}

	/* The control fd was closed: only the pool's files hold the module. */
	EXPECT_EQ(-EWOULDBLOCK, unload());
	close(pool);
	EXPECT_EQ(-EWOULDBLOCK, unload());
	close(imp);

	/* No pool left: it goes, and comes back. */
	ASSERT_EQ(0, unload());
	EXPECT_NE(0, access(KFD_DEV, F_OK));
	ASSERT_EQ(0, load(ko));
	if (baseline >= 0)
		EXPECT_EQ(baseline, kfd_dmabuf_count(baseline));
	/* Give devtmpfs a moment to make the node; it is created async. */
	{
		int i, fd = -1;

		for (i = 0; i < 100 && fd < 0; i++) {
			fd = kfd_open();
			if (fd < 0)
				usleep(10000);
		}
		EXPECT_LE(0, fd);
		if (fd >= 0)
			close(fd);
	}
}

/*
 * A pool whose fds are all closed while an importer keeps an fd of its
 * memory stays as a zombie holding the entry; it holds no module reference,
 * so the module unloads and drops what the zombie held: the importer's
 * memory stays valid, its last close frees it.
 */
TEST(unload_drops_zombie_pools)
{
	const char *ko = getenv("KFDPOOL_KO");
	struct kfdpool_import imp;
	struct kfdpool_record r;
	int pool, ip, buf, e, baseline, i, fd = -1;
	char *m;

	if (!ko || access(ko, R_OK))
		SKIP(return, "KFDPOOL_KO not set: cannot reload the module");
	baseline = kfd_dmabuf_count_now();
	pool = kfd_pool_new("zombie");
	if (pool < 0)
		SKIP(return, "no pool: %s", strerror(-pool));
	ip = kfd_pool_export(pool);
	ASSERT_LE(0, ip);
	buf = kfd_dmabuf_new(4096);
	if (buf < 0)
		SKIP(return, "no dma-buf: %s", strerror(-buf));
	ASSERT_EQ(0, kfd_dmabuf_fill(buf, 4096, 5));
	e = kfd_pin(pool, buf, 0);
	ASSERT_LT(0, e);
	close(buf);
	ASSERT_EQ(0, kfd_export(pool, e, 0, 4096, &r));
	ASSERT_EQ(0, kfd_import(ip, &r, 0, &imp));
	close(ip);
	close(pool);

	ASSERT_EQ(0, unload());
	ASSERT_EQ(0, load(ko));
	EXPECT_EQ(1, kfd_dmabuf_check(imp.fd, 4096, 5, 0, 4096));
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, imp.fd, 0);
	EXPECT_NE(MAP_FAILED, m);
	if (m != MAP_FAILED)
		munmap(m, 4096);
	close(imp.fd);
	if (baseline >= 0)
		EXPECT_EQ(baseline, kfd_dmabuf_count(baseline));
	for (i = 0; i < 100 && fd < 0; i++) {
		fd = kfd_open();
		if (fd < 0)
			usleep(10000);
	}
	EXPECT_LE(0, fd);
	if (fd >= 0)
		close(fd);
}

TEST(unload_refused_while_control_open)
{
	const char *ko = getenv("KFDPOOL_KO");
	int ctl;

	if (!ko || access(ko, R_OK))
		SKIP(return, "KFDPOOL_KO not set: cannot reload the module");
	ctl = kfd_open();
	if (ctl < 0)
		SKIP(return, "/dev/kfdpool: %s", strerror(-ctl));
	EXPECT_EQ(-EWOULDBLOCK, unload());
	close(ctl);
}

TEST_HARNESS_MAIN
