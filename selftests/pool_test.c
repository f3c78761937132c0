// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pools: create, export (import fds), stats, fdinfo, debugfs, fd types.
 */
#include <dirent.h>
#include <sys/resource.h>

#include "kselftest_harness.h"
#include "kfdpool_util.h"
#include "hostmem_util.h"
#include "kfdpool_state.h"

FIXTURE(pool) {
	int ctl;
	int pool;
	__u8 id[KFDPOOL_ID_LEN];
	int baseline;
};

FIXTURE_SETUP(pool)
{
	kfd_state_restore();
	self->pool = -1;
	self->ctl = kfd_open();
	if (self->ctl < 0)
		SKIP(return, "/dev/kfdpool: %s", strerror(-self->ctl));
	self->baseline = kfd_dmabuf_count_now();
	self->pool = kfd_pool_create(self->ctl, 1 << 30, "pool_test",
				     KFDPOOL_HANDLE_TYPES_ALL, self->id);
	ASSERT_LE(0, self->pool);
}

FIXTURE_TEARDOWN(pool)
{
	if (self->pool >= 0)
		close(self->pool);
	if (self->ctl >= 0)
		close(self->ctl);
	if (self->baseline >= 0)
		EXPECT_EQ(self->baseline, kfd_dmabuf_count(self->baseline));
}

TEST_F(pool, create)
{
	struct kfdpool_pool_stats st;
	static const __u8 zero[KFDPOOL_ID_LEN];

	EXPECT_TRUE(kfd_cloexec(self->pool));
	EXPECT_NE(0, memcmp(zero, self->id, sizeof(zero)));
	ASSERT_EQ(0, kfd_stats(self->pool, &st));
	EXPECT_EQ(KFDPOOL_MODE_OWNER, st.mode);
	EXPECT_EQ(0, memcmp(st.id, self->id, sizeof(st.id)));
	EXPECT_STREQ("pool_test", st.name);
	EXPECT_EQ(1 << 30, st.limit);
	EXPECT_EQ(KFDPOOL_HANDLE_TYPES_ALL, st.handle_types);
	EXPECT_EQ(getpid(), st.owner_pid);
	EXPECT_EQ(0, st.reserved_bytes);
	EXPECT_EQ(0, st.entries);
	EXPECT_EQ(0, st.records);
	EXPECT_EQ(0, st.import_fds);
	EXPECT_EQ(0, st.fd_imports);
}

TEST_F(pool, ids_differ)
{
	__u8 id2[KFDPOOL_ID_LEN];
	int p2;

	p2 = kfd_pool_create(self->ctl, 0, "", 0, id2);
	ASSERT_LE(0, p2);
	EXPECT_NE(0, memcmp(self->id, id2, sizeof(id2)));
	close(p2);
}

TEST_F(pool, default_limit)
{
	long long old = kfd_param_get("default_pool_limit");
	struct kfdpool_pool_stats st;
	int p;

	if (old < 0)
		SKIP(return, "no module parameters");
	ASSERT_EQ(0, kfd_param_set("default_pool_limit", 12345 * 4096ULL));
	p = kfd_pool_create(self->ctl, 0, "dflt", 0, NULL);
	ASSERT_EQ(0, kfd_param_set("default_pool_limit", old));
	ASSERT_LE(0, p);
	ASSERT_EQ(0, kfd_stats(p, &st));
	EXPECT_EQ(12345 * 4096ULL, st.limit);
	close(p);
	/* A limit given explicitly wins. */
	p = kfd_pool_create(self->ctl, 777, "x", 0, NULL);
	ASSERT_LE(0, p);
	ASSERT_EQ(0, kfd_stats(p, &st));
	EXPECT_EQ(777, st.limit);
	close(p);
}

TEST_F(pool, create_bad_args)
{
	struct kfdpool_pool_create c;

	memset(&c, 0, sizeof(c));
	c.flags = 2;	/* the first flag after KFDPOOL_POOL_PERSIST */
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->ctl, KFDPOOL_IOC_POOL_CREATE, &c));
	memset(&c, 0, sizeof(c));
	c.flags = 0x80000000;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->ctl, KFDPOOL_IOC_POOL_CREATE, &c));
	memset(&c, 0, sizeof(c));
	c.pad = 1;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->ctl, KFDPOOL_IOC_POOL_CREATE, &c));
	memset(&c, 0, sizeof(c));
	c.handle_types = 0x2;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->ctl, KFDPOOL_IOC_POOL_CREATE, &c));
	memset(&c, 0, sizeof(c));
	c.handle_types = 0x80000000 | KFDPOOL_HANDLE_TYPE_FD;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->ctl, KFDPOOL_IOC_POOL_CREATE, &c));
	/* Names: no NUL, a space, a control character, a non-ASCII byte. */
	memset(&c, 0, sizeof(c));
	memset(c.name, 'a', sizeof(c.name));
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->ctl, KFDPOOL_IOC_POOL_CREATE, &c));
	memset(&c, 0, sizeof(c));
	strcpy(c.name, "a b");
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->ctl, KFDPOOL_IOC_POOL_CREATE, &c));
	memset(&c, 0, sizeof(c));
	strcpy(c.name, "a\tb");
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->ctl, KFDPOOL_IOC_POOL_CREATE, &c));
	memset(&c, 0, sizeof(c));
	strcpy(c.name, "caf\xc3\xa9");
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->ctl, KFDPOOL_IOC_POOL_CREATE, &c));
	/* The longest name: 31 characters and the NUL. */
	memset(&c, 0, sizeof(c));
	memset(c.name, '~', sizeof(c.name) - 1);
	ASSERT_EQ(0, kfd_ioctl(self->ctl, KFDPOOL_IOC_POOL_CREATE, &c));
	close(c.fd);
	/* Bad user pointer. */
	EXPECT_EQ(-1, ioctl(self->ctl, KFDPOOL_IOC_POOL_CREATE, (void *)8));
	EXPECT_EQ(EFAULT, errno);
}

/* No fd leaks when the copy back of a create fails. */
TEST_F(pool, create_fault_leaks_nothing)
{
	struct kfdpool_pool_create *c;
	int fd;

	/* A struct readable but not writable: the copy back faults. */
	c = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, c);
	memset(c, 0, sizeof(*c));
	ASSERT_EQ(0, mprotect(c, 4096, PROT_READ));
	fd = dup(0);
	ASSERT_LE(0, fd);
	close(fd);
	EXPECT_EQ(-1, ioctl(self->ctl, KFDPOOL_IOC_POOL_CREATE, c));
	EXPECT_EQ(EFAULT, errno);
	/* The fd reserved for the pool was given back. */
	EXPECT_EQ(fd, dup(0));
	close(fd);
	munmap(c, 4096);
}

TEST_F(pool, export_import_fd)
{
	struct kfdpool_pool_stats st;
	struct kfdpool_pool_export e = {};
	int imp, imp2;

	imp = kfd_pool_export(self->pool);
	ASSERT_LE(0, imp);
	EXPECT_TRUE(kfd_cloexec(imp));
	ASSERT_EQ(0, kfd_stats(imp, &st));
	EXPECT_EQ(KFDPOOL_MODE_IMPORT, st.mode);
	EXPECT_EQ(0, memcmp(st.id, self->id, sizeof(st.id)));
	EXPECT_EQ(1, st.import_fds);

	/* An import fd makes no import fds. */
	EXPECT_EQ(-EPERM, kfd_pool_export(imp));
	e.flags = 1;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->pool, KFDPOOL_IOC_POOL_EXPORT, &e));

	imp2 = kfd_pool_export(self->pool);
	ASSERT_LE(0, imp2);
	ASSERT_EQ(0, kfd_stats(self->pool, &st));
	EXPECT_EQ(2, st.import_fds);
	close(imp2);
	ASSERT_EQ(0, kfd_stats(self->pool, &st));
	EXPECT_EQ(1, st.import_fds);

	/* An import fd does not keep the pool: the owner's close ends it. */
	close(self->pool);
	self->pool = -1;
	EXPECT_EQ(-ENODEV, kfd_stats(imp, &st));
	EXPECT_EQ(-EPERM, kfd_pool_export(imp));
	close(imp);
}

TEST_F(pool, export_needs_fd_handle_type)
{
	int p;

	p = kfd_pool_create(self->ctl, 0, "nofd", KFDPOOL_HANDLE_TYPE_FABRIC,
			    NULL);
	ASSERT_LE(0, p);
	EXPECT_EQ(-EOPNOTSUPP, kfd_pool_export(p));
	close(p);
	p = kfd_pool_create(self->ctl, 0, "none", 0, NULL);
	ASSERT_LE(0, p);
	EXPECT_EQ(-EOPNOTSUPP, kfd_pool_export(p));
	close(p);
}

TEST_F(pool, stats_bad_args)
{
	struct kfdpool_pool_stats st;
	unsigned int i;
	int imp;

	memset(&st, 0, sizeof(st));
	st.flags = 4;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->pool, KFDPOOL_IOC_POOL_STATS, &st));
	memset(&st, 0, sizeof(st));
	st.flags = 0x80000000;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->pool, KFDPOOL_IOC_POOL_STATS, &st));
	for (i = 0; i < 32; i++) {
		memset(&st, 0, sizeof(st));
		st.pad = 1u << i;
		EXPECT_EQ(-EINVAL,
			  kfd_ioctl(self->pool, KFDPOOL_IOC_POOL_STATS, &st));
	}
	/* Output fields coming in dirty are overwritten, not refused. */
	memset(&st, 0xff, sizeof(st));
	st.flags = 0;
	st.pad = 0;
	ASSERT_EQ(0, kfd_ioctl(self->pool, KFDPOOL_IOC_POOL_STATS, &st));
	EXPECT_EQ(0, st.entries);
	EXPECT_STREQ("pool_test", st.name);

	/* Resets are for the owner. */
	imp = kfd_pool_export(self->pool);
	ASSERT_LE(0, imp);
	memset(&st, 0, sizeof(st));
	st.flags = KFDPOOL_STATS_RESET_USED_HIGH;
	EXPECT_EQ(-EPERM, kfd_ioctl(imp, KFDPOOL_IOC_POOL_STATS, &st));
	st.flags = KFDPOOL_STATS_RESET_RESERVED_HIGH;
	EXPECT_EQ(-EPERM, kfd_ioctl(imp, KFDPOOL_IOC_POOL_STATS, &st));
	st.flags = KFDPOOL_STATS_RESET_RESERVED_HIGH |
		   KFDPOOL_STATS_RESET_USED_HIGH;
	EXPECT_EQ(0, kfd_ioctl(self->pool, KFDPOOL_IOC_POOL_STATS, &st));
	close(imp);
}

TEST_F(pool, stats_size_versions)
{
	struct {
		struct kfdpool_pool_stats st;
		__u64 future[2];
	} big;
	struct kfdpool_pool_stats st;

	/* A newer caller's larger struct: served if the tail is zero ... */
	memset(&big, 0, sizeof(big));
	ASSERT_EQ(0, ioctl(self->pool, _IOWR(KFDPOOL_IOC_MAGIC, 0x10, big),
			   &big));
	EXPECT_EQ(KFDPOOL_MODE_OWNER, big.st.mode);
	EXPECT_EQ(0, big.future[0]);
	/* ... refused if it asks for anything this kernel does not know. */
	memset(&big, 0, sizeof(big));
	big.future[1] = 0x1234;
	EXPECT_EQ(-1, ioctl(self->pool, _IOWR(KFDPOOL_IOC_MAGIC, 0x10, big),
			    &big));
	EXPECT_EQ(E2BIG, errno);
	EXPECT_EQ(0, big.st.mode);
	EXPECT_EQ(0x1234, big.future[1]);
	/* An older caller's smaller struct: served, nothing written past it. */
	memset(&st, 0xee, sizeof(st));
	st.flags = 0;
	EXPECT_EQ(0, ioctl(self->pool, _IOWR(KFDPOOL_IOC_MAGIC, 0x10, __u64),
			   &st));
	EXPECT_EQ(KFDPOOL_MODE_OWNER, st.mode);
	EXPECT_EQ(0xeeeeeeee, *(__u32 *)st.id);
}

/* The owner_pid POOL_LIST shows for pool @id; -1 if it is not listed. */
static int listed_owner_pid(const __u8 *id)
{
	struct kfdpool_pool_info info;

	return kfd_pool_find(id, &info) == 1 ? (int)info.owner_pid : -1;
}

/*
 * The owner pid is shown while the creator lives; once it is gone (its
 * number free for another process) stats, fdinfo and POOL_LIST say 0.
 */
TEST_F(pool, owner_pid_only_while_alive)
{
	struct kfdpool_pool_stats st;
	int sv[2], fd = -1, status;
	pid_t pid;
	char c;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int p = kfd_pool_create(self->ctl, 0, "orphan", 0, NULL);

		if (p < 0 || kfd_send(sv[1], p, "p", 1))
			_exit(1);
		/* Stay alive until the parent looked. */
		_exit(read(sv[1], &c, 1) == 1 ? 0 : 2);
	}
	ASSERT_EQ(0, kfd_recv(sv[0], &fd, &c, 1));
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, kfd_stats(fd, &st));
	EXPECT_EQ(pid, st.owner_pid);
	EXPECT_EQ(pid, kfd_fdinfo_num(fd, "kfdpool-owner-pid"));
	EXPECT_EQ(pid, listed_owner_pid(st.id));

	ASSERT_EQ(1, write(sv[0], "x", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	ASSERT_EQ(0, kfd_stats(fd, &st));
	EXPECT_EQ(0, st.owner_pid);
	EXPECT_EQ(0, kfd_fdinfo_num(fd, "kfdpool-owner-pid"));
	EXPECT_EQ(0, listed_owner_pid(st.id));
	close(fd);
	close(sv[0]);
	close(sv[1]);
}

TEST_F(pool, unknown_commands)
{
	char buf[256] = {};

	EXPECT_EQ(-ENOTTY, kfd_ioctl(self->pool,
				     _IOWR(KFDPOOL_IOC_MAGIC, 0x3f, buf), buf));
	EXPECT_EQ(-ENOTTY, kfd_ioctl(self->pool,
				     _IOWR(KFDPOOL_IOC_MAGIC, 0x1f, buf), buf));
	EXPECT_EQ(-ENOTTY, kfd_ioctl(self->pool,
				     _IOWR('b', 0x12, struct kfdpool_pin), buf));
	/* Control-device commands are not pool commands. */
	EXPECT_EQ(-ENOTTY, kfd_ioctl(self->pool, KFDPOOL_IOC_QUERY, buf));
	EXPECT_EQ(-ENOTTY, kfd_ioctl(self->pool, KFDPOOL_IOC_POOL_CREATE, buf));
	/* Wrong direction on a pool command's number. */
	EXPECT_EQ(-ENOTTY, kfd_ioctl(self->pool,
				     _IOR(KFDPOOL_IOC_MAGIC, 0x12,
					  struct kfdpool_pin), buf));
	/* Pool commands on the control device. */
	EXPECT_EQ(-ENOTTY, kfd_ioctl(self->ctl, KFDPOOL_IOC_POOL_STATS, buf));
	EXPECT_EQ(-ENOTTY, kfd_ioctl(self->ctl, KFDPOOL_IOC_IMPORT, buf));
}

/* Pool commands sent to fds that are not pools. */
TEST_F(pool, wrong_fd_types)
{
	struct kfdpool_pool_stats st;
	int p[2], memfd, dmabuf, closed;

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	EXPECT_EQ(-ENOTTY, kfd_stats(p[0], &st));
	close(p[0]);
	close(p[1]);
	memfd = syscall(SYS_memfd_create, "x", 1);
	ASSERT_LE(0, memfd);
	EXPECT_EQ(-ENOTTY, kfd_stats(memfd, &st));
	close(memfd);
	closed = dup(0);
	close(closed);
	EXPECT_EQ(-EBADF, kfd_stats(closed, &st));
	dmabuf = kfd_dmabuf_new(4096);
	if (dmabuf >= 0) {
		EXPECT_EQ(-ENOTTY, kfd_stats(dmabuf, &st));
		EXPECT_EQ(-ENOTTY, kfd_pin(dmabuf, self->pool, 0));
		close(dmabuf);
	}
}

TEST_F(pool, fdinfo)
{
	struct kfdpool_pool_stats st;
	char val[128], hex[2 * KFDPOOL_ID_LEN + 1];
	int imp;

	ASSERT_EQ(0, kfd_stats(self->pool, &st));
	kfd_hex(self->id, KFDPOOL_ID_LEN, hex);
	ASSERT_EQ(0, kfd_fdinfo(self->pool, "kfdpool-id", val, sizeof(val)));
	EXPECT_STREQ(hex, val);
	ASSERT_EQ(0, kfd_fdinfo(self->pool, "kfdpool-name", val, sizeof(val)));
	EXPECT_STREQ("pool_test", val);
	ASSERT_EQ(0, kfd_fdinfo(self->pool, "kfdpool-mode", val, sizeof(val)));
	EXPECT_STREQ("owner", val);
	EXPECT_EQ(getpid(), kfd_fdinfo_num(self->pool, "kfdpool-owner-pid"));
	EXPECT_EQ(st.limit, kfd_fdinfo_num(self->pool, "kfdpool-limit"));
	EXPECT_EQ(st.handle_types,
		  kfd_fdinfo_num(self->pool, "kfdpool-handle-types"));
	imp = kfd_pool_export(self->pool);
	ASSERT_LE(0, imp);
	ASSERT_EQ(0, kfd_fdinfo(imp, "kfdpool-mode", val, sizeof(val)));
	EXPECT_STREQ("import", val);
	EXPECT_EQ(1, kfd_fdinfo_num(imp, "kfdpool-import-fds"));
	close(imp);
	EXPECT_EQ(0, kfd_fdinfo_num(self->pool, "kfdpool-import-fds"));
}

/* fdinfo has exactly the documented keys, in order. */
TEST_F(pool, fdinfo_keys)
{
	static const char *const keys[] = {
		"kfdpool-id", "kfdpool-name", "kfdpool-mode", "kfdpool-state",
		"kfdpool-owner-pid", "kfdpool-limit", "kfdpool-handle-types",
		"kfdpool-reserved", "kfdpool-reserved-high", "kfdpool-used",
		"kfdpool-used-high", "kfdpool-draining", "kfdpool-entries",
		"kfdpool-draining-entries", "kfdpool-records",
		"kfdpool-import-fds", "kfdpool-imported",
		"kfdpool-fd-imported", "kfdpool-fd-imports", "kfdpool-file-id",
		"kfdpool-persistent",
	};
	char path[64], line[256];
	unsigned int k = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", self->pool);
	f = fopen(path, "re");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "kfdpool-", 8))
			continue;
		ASSERT_LT(k, sizeof(keys) / sizeof(keys[0]));
		EXPECT_EQ(0, strncmp(line, keys[k], strlen(keys[k])));
		EXPECT_EQ(':', line[strlen(keys[k])]);
		EXPECT_EQ('\t', line[strlen(keys[k]) + 1]);
		k++;
	}
	fclose(f);
	EXPECT_EQ(sizeof(keys) / sizeof(keys[0]), k);
}

/* Many pools, all closed: nothing stays behind. */
TEST_F_TIMEOUT(pool, many_pools, 300)
{
	int fds[256], i, n = 0;

	for (i = 0; i < 256; i++) {
		fds[i] = kfd_pool_create(self->ctl, 0, "many", 1, NULL);
		if (fds[i] < 0)
			break;
		n++;
	}
	EXPECT_EQ(256, n);
	for (i = 0; i < n; i++)
		close(fds[i]);
}

/* Write @val to @path; errors ignored (the file may not exist). */
static void poke(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return;
	n = write(fd, val, strlen(val));
	(void)n;
	close(fd);
}

/*
 * Slab in KiB, once the kernel gave back what it can: the caches it can
 * drop dropped, and every slab cache shrunk, which also takes that
 * cache's freed objects out of KASAN's quarantine on the debug kernel.
 */
static long long slab_kib(void)
{
	char path[300];
	struct dirent *d;
	DIR *dir;

	poke("/proc/sys/vm/drop_caches", "2");
	dir = opendir("/sys/kernel/slab");
	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink",
			 d->d_name);
		poke(path, "1");
	}
	if (dir)
		closedir(dir);
	return hm_meminfo("Slab");
}

/* Pools listed now. */
static int listed(int ctl)
{
	struct kfdpool_pool_info info[64];
	__u64 cursor = 0;
	int n, total = 0;

	do {
		n = kfd_list_page(ctl, info, 64, &cursor);
		if (n < 0)
			return n;
		total += n;
	} while (cursor);
	return total;
}

/*
 * A closed pool costs nothing, whatever it handed out: 2,000 pools, each
 * pinning one dma-buf that stays open, exporting a record of it and
 * importing that on an import fd, closed again, leave less than 2 MiB of
 * slab and no pool listed.
 */
TEST_F_TIMEOUT(pool, closed_pools_cost_nothing, 600)
{
	long long slab0, slab = 0;
	struct kfdpool_record r;
	struct kfdpool_import imp;
	int buf, n0, i, tries, p, ip, e;

	buf = kfd_dmabuf_new(4096);
	if (buf < 0)
		SKIP(return, "no dma-buf exporter");
	n0 = listed(self->ctl);
	ASSERT_LE(0, n0);
	slab0 = slab_kib();
	ASSERT_LT(0, slab0);
	for (i = 0; i < 2000; i++) {
		p = kfd_pool_create(self->ctl, 0, "closed", 1, NULL);
		ASSERT_LE(0, p);
		ip = kfd_pool_export(p);
		ASSERT_LE(0, ip);
		e = kfd_pin(p, buf, 0);
		ASSERT_LT(0, e);
		ASSERT_EQ(0, kfd_export(p, e, 0, 4096, &r));
		ASSERT_EQ(0, kfd_import(ip, &r, 0, &imp));
		close(imp.fd);
		close(ip);
		close(p);
	}
	EXPECT_EQ(n0, listed(self->ctl));
	/* Files go after an RCU grace period: give it a few. */
	for (tries = 0; tries < 20; tries++) {
		slab = slab_kib();
		if (slab < slab0 + 2048)
			break;
		usleep(100 * 1000);
	}
	EXPECT_GT(slab0 + 2048, slab) TH_LOG("slab %lld KiB before, %lld after",
					     slab0, slab);
	close(buf);
}

/* Out of fds: pool creation fails cleanly. */
TEST_F(pool, emfile)
{
	struct rlimit rl;
	int fd, p;

	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	/* Lower the limit to the lowest free fd: no fd left to reserve. */
	fd = dup(0);
	ASSERT_LE(0, fd);
	close(fd);
	rl.rlim_cur = fd;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	p = kfd_pool_create(self->ctl, 0, "emfile", 1, NULL);
	EXPECT_EQ(-EMFILE, p);
	EXPECT_EQ(-EMFILE, kfd_pool_export(self->pool));
	if (p >= 0)
		close(p);
}

TEST_HARNESS_MAIN
