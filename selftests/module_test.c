// SPDX-License-Identifier: GPL-2.0-only
/*
 * The module cannot be unloaded while a pool exists, and can after; opening
 * /dev/kfdpool loads it.  Needs $KFDPOOL_KO (the VM runner sets it) to load
 * the module again, so that later tests find it loaded.
 */
#include <sys/sysmacros.h>
#include <sys/utsname.h>

#include "kselftest_harness.h"
#include "kfdpool_persist_util.h"

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

/* Wait for devtmpfs to make the node (it does so asynchronously) and open it. */
static int open_when_there(void)
{
	int i, fd = -1;

	for (i = 0; i < 100 && fd < 0; i++) {
		fd = kfd_open();
		if (fd < 0)
			usleep(10000);
	}
	return fd;
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
	{
		int fd = open_when_there();

		EXPECT_LE(0, fd);
		if (fd >= 0)
			close(fd);
	}
}

/*
 * A pool whose fds are all closed ended, though an importer keeps an fd of
 * its memory: nothing of it holds the module, which unloads and loads
 * again while the importer's memory stays valid; its last close frees it.
 */
TEST(unload_while_importer_holds_ended_pool_memory)
{
	const char *ko = getenv("KFDPOOL_KO");
	struct kfdpool_import imp;
	struct kfdpool_record r;
	int pool, ip, buf, e, baseline, i, fd = -1;
	char *m;

	if (!ko || access(ko, R_OK))
		SKIP(return, "KFDPOOL_KO not set: cannot reload the module");
	baseline = kfd_dmabuf_count_now();
	pool = kfd_pool_new("ended");
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

/*
 * A persistent pool with no fd open holds the module: unloading is
 * refused (modprobe -r's "Module kfdpool is in use") until it is
 * destroyed, and its entry's memory goes with it.
 */
TEST(unload_refused_while_persistent_pool_exists)
{
	const char *ko = getenv("KFDPOOL_KO");
	int pool, fd, baseline, i, ctl = -1;
	__u8 id[KFDPOOL_ID_LEN];
	struct kfdpool_alloc a = { .size = 4096 };
	long long old;

	if (!ko || access(ko, R_OK))
		SKIP(return, "KFDPOOL_KO not set: cannot reload the module");
	baseline = kfd_dmabuf_count_now();
	old = kfd_persist_enable(1);
	ASSERT_LE(0, old);
	pool = kfd_persist_new("unload-persist", id);
	ASSERT_LE(0, pool);
	ASSERT_EQ(0, kfd_ioctl(pool, KFDPOOL_IOC_ALLOC, &a));
	close(a.fd);
	close(pool);

	/* Nothing of this process is open: the pool and its memory hold it. */
	EXPECT_EQ(2, kfd_module_refcnt());
	EXPECT_EQ(-EWOULDBLOCK, unload());
	EXPECT_EQ(-EWOULDBLOCK, unload());
	ASSERT_EQ(1, kfd_list_find(id, NULL));

	ASSERT_EQ(0, kfd_destroy_id(id));
	kfd_param_set("max_user_persistent", old);
	EXPECT_EQ(0, kfd_module_refcnt());
	ASSERT_EQ(0, unload());
	ASSERT_EQ(0, load(ko));
	if (baseline >= 0)
		EXPECT_EQ(baseline, kfd_dmabuf_count(baseline));
	for (i = 0; i < 100 && ctl < 0; i++) {
		ctl = kfd_open();
		if (ctl < 0)
			usleep(10000);
	}
	ASSERT_LE(0, ctl);
	fd = kfd_adopt(ctl, NULL, id);
	EXPECT_EQ(-ENOENT, fd);
	close(ctl);
}

/*
 * The node depmod lists for kfdpool in modules.devname, the one
 * "kmod static-nodes" creates at boot: 0 and its device number, -ENOENT
 * when the module is not installed where modprobe finds it.
 */
static int devname_node(dev_t *dev)
{
	char path[128], line[256];
	unsigned int maj, min;
	struct utsname u;
	int ret = -ENOENT;
	FILE *f;

	uname(&u);
	snprintf(path, sizeof(path), "/lib/modules/%s/modules.devname", u.release);
	f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "kfdpool kfdpool c%u:%u", &maj, &min) == 2) {
			*dev = makedev(maj, min);
			ret = 0;
		}
	fclose(f);
	return ret;
}

/*
 * The misc minor is dynamic: no static node in modules.devname (the module
 * is loaded at boot by modules-load.d, not by a first open), and the node
 * is the module's own, a misc device (major 10), with the version modinfo
 * shows in sysfs.
 */
TEST(dynamic_minor_no_static_node)
{
	char version[64] = "";
	struct stat st;
	dev_t dev;
	FILE *f;

	if (!getenv("KFDPOOL_MODULE_INSTALLED"))
		SKIP(return, "kfdpool.ko is not installed where modprobe finds it");
	EXPECT_EQ(-ENOENT, devname_node(&dev));
	f = fopen("/sys/module/kfdpool/version", "re");
	ASSERT_NE(NULL, f);
	EXPECT_NE(NULL, fgets(version, sizeof(version), f));
	fclose(f);
	EXPECT_NE(0, strlen(version));
	ASSERT_EQ(0, stat(KFD_DEV, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(10, major(st.st_rdev));
}

TEST_HARNESS_MAIN
