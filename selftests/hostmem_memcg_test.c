// SPDX-License-Identifier: GPL-2.0-only
/*
 * KFDPOOL_IOC_ALLOC and memory cgroups: the pages are charged to the
 * caller's cgroup (memory.current; memory.stat's kernel memory, on kernels
 * that show it, 5.18 on), given back when
 * the buffer goes, and an allocation over memory.max, of the cgroup or of
 * an ancestor, or over what is left under it, fails with -ENOMEM: no
 * memory cgroup OOM (memory.events), no OOM killer in the kernel log, and
 * the caller lives on.  Mounts cgroup2 on /sys/fs/cgroup if nothing is
 * mounted there.
 */
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <grp.h>

#include "kselftest_harness.h"
#include "hostmem_util.h"

#define CG_ROOT	"/sys/fs/cgroup"
#define MIB	(1ull << 20)

static int cg_write(const char *dir, const char *file, const char *val)
{
	char path[256];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* The value of @key in a flat-keyed file (memory.stat, memory.events),
 * or of the single value in @file when @key is NULL; -1 if absent. */
static long long cg_read(const char *dir, const char *file, const char *key)
{
	char path[256], line[256];
	long long v = -1;
	size_t klen = key ? strlen(key) : 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!key) {
			v = strtoll(line, NULL, 10);
			break;
		}
		if (!strncmp(line, key, klen) && line[klen] == ' ') {
			v = strtoll(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

/*
 * cgroup2 with the memory controller on /sys/fs/cgroup, and a fresh child
 * cgroup @name of the root in @dir.  0, or -errno / -EOPNOTSUPP to skip.
 */
static int cg_make(char *dir, size_t len, const char *parent, const char *name)
{
	char ctl[256];
	FILE *f;

	if (access(CG_ROOT "/cgroup.controllers", F_OK) &&
	    mount("none", CG_ROOT, "cgroup2", 0, NULL))
		return -errno;
	f = fopen(CG_ROOT "/cgroup.controllers", "re");
	if (!f || !fgets(ctl, sizeof(ctl), f) || !strstr(ctl, "memory")) {
		if (f)
			fclose(f);
		return -EOPNOTSUPP;
	}
	fclose(f);
	if (cg_write(parent, "cgroup.subtree_control", "+memory"))
		return -EOPNOTSUPP;
	snprintf(dir, len, "%s/%s-%d", parent, name, (int)getpid());
	rmdir(dir);
	return mkdir(dir, 0755) ? -errno : 0;
}

/* Step results a child in a cgroup sends back, one int each. */
static int cg_child(int sock, const char *dir, const unsigned long long *sizes,
		    int n, bool keep)
{
	int pool, fds[8], i, r;
	char go;

	if (cg_write(dir, "cgroup.procs", "0"))
		return 20;
	pool = kfd_pool_new("hostmem_memcg");
	if (pool < 0)
		return 21;
	for (i = 0; i < n && i < 8; i++) {
		fds[i] = hm_alloc(pool, sizes[i], 0, NULL);
		r = fds[i] < 0 ? fds[i] : 0;
		if (write(sock, &r, sizeof(r)) != sizeof(r))
			return 22;
		/* The parent reads the cgroup's figures, then says go on. */
		if (read(sock, &go, 1) != 1)
			return 23;
	}
	if (!keep)
		close(pool);
	for (i = 0; !keep && i < n && i < 8; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	/* The last fd of each buffer is gone: so is its memory. */
	r = 0;
	if (write(sock, &r, sizeof(r)) != sizeof(r))
		return 24;
	if (read(sock, &go, 1) != 1)
		return 25;
	return 0;
}

FIXTURE(memcg) {
	char dir[200], parent[200];
	int oom;
};

FIXTURE_SETUP(memcg)
{
	int ret;

	self->dir[0] = self->parent[0] = 0;
	if (!hm_supported())
		SKIP(return, "no /dev/kfdpool with KFDPOOL_IOC_ALLOC");
	ret = cg_make(self->dir, sizeof(self->dir), CG_ROOT, "kfdpool-memcg");
	if (ret)
		SKIP(return, "no memory cgroup: %s", strerror(-ret));
	self->oom = hm_oom_lines();
}

FIXTURE_TEARDOWN(memcg)
{
	if (self->dir[0])
		rmdir(self->dir);
	if (self->parent[0])
		rmdir(self->parent);
	if (self->oom >= 0)
		EXPECT_EQ(self->oom, hm_oom_lines());
}

/*
 * Run a child in cgroup @dir doing the allocations of @sizes; @results
 * gets what each returned, @current the cgroup's memory.current after
 * each, and after the buffers are freed (@n + 1 figures).
 */
static void run_child(struct __test_metadata *_metadata, const char *dir,
		      const unsigned long long *sizes, int n, int *results,
		      long long *current, long long *kmem)
{
	int sv[2], i, status;
	char go = 'g';
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(sv[0]);
		_exit(cg_child(sv[1], dir, sizes, n, false));
	}
	close(sv[1]);
	for (i = 0; i <= n; i++) {
		ASSERT_EQ(sizeof(int), read(sv[0], &results[i], sizeof(int)));
		current[i] = cg_read(dir, "memory.current", NULL);
		kmem[i] = cg_read(dir, "memory.stat", "kernel");
		ASSERT_EQ(1, write(sv[0], &go, 1));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/* Alive to the end: nothing killed it. */
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("child status 0x%x", status);
	close(sv[0]);
}

/*
 * How far memory.stat may trail: counters are kept per CPU and folded in
 * batches (at most 64 pages a CPU); newer kernels flush them when the file
 * is read, older ones do not.  memory.current has no such lag.
 */
static long long stat_lag(void)
{
	return sysconf(_SC_NPROCESSORS_CONF) * 64 * sysconf(_SC_PAGESIZE);
}

TEST_F(memcg, charge_shows_in_memory_current)
{
	const unsigned long long sizes[] = { 32 * MIB };
	long long cur[2], kmem[2], before;
	int res[2];

	before = cg_read(self->dir, "memory.current", NULL);
	ASSERT_LE(0, before);
	run_child(_metadata, self->dir, sizes, 1, res, cur, kmem);
	EXPECT_EQ(0, res[0]);
	EXPECT_LE(before + 32 * (long long)MIB, cur[0]);
	if (kmem[0] >= 0)
		EXPECT_LE(32 * (long long)MIB - stat_lag(), kmem[0]);
	/* Freed: the pages' charge is gone. */
	EXPECT_GT(32 * (long long)MIB, kmem[1]);
	EXPECT_GT(cur[0] - 30 * (long long)MIB, cur[1]);
}

TEST_F(memcg, over_memory_max_fails_cleanly)
{
	/* Over max at once; fits; fits max but not what is left; small. */
	const unsigned long long sizes[] = { 128 * MIB, 40 * MIB, 32 * MIB,
					     4 * MIB };
	long long cur[5], kmem[5];
	int res[5];

	ASSERT_EQ(0, cg_write(self->dir, "memory.max", "67108864"));
	run_child(_metadata, self->dir, sizes, 4, res, cur, kmem);
	EXPECT_EQ(-ENOMEM, res[0]);
	EXPECT_EQ(0, res[1]);
	EXPECT_EQ(-ENOMEM, res[2]);
	EXPECT_EQ(0, res[3]);
	/* The failed one's pages went back before the call returned. */
	EXPECT_GT(48 * (long long)MIB, kmem[2]);
	if (kmem[2] >= 0)
		EXPECT_LE(40 * (long long)MIB - stat_lag(), kmem[2]);
	EXPECT_GE(64 * (long long)MIB, cur[2]);
	/* No cgroup OOM: try_charge_memcg() gave up before the OOM killer. */
	EXPECT_EQ(0, cg_read(self->dir, "memory.events", "oom"));
	EXPECT_EQ(0, cg_read(self->dir, "memory.events", "oom_kill"));
	EXPECT_LT(0, cg_read(self->dir, "memory.events", "max"));
}

/*
 * An ALLOC that fails for want of pages, after every charge was taken,
 * gives each back before it returns: the pool's, and RLIMIT_MEMLOCK (the
 * last 16 MiB fits its 72 only then).
 */
static int unwind_child(const char *dir)
{
	struct rlimit rl = { 72 * MIB, 72 * MIB };
	struct kfdpool_pool_stats st;
	int ctl, pool, a, b;

	if (cg_write(dir, "cgroup.procs", "0"))
		return 10;
	if (setrlimit(RLIMIT_MEMLOCK, &rl) || setgroups(0, NULL) ||
	    setresgid(4243, 4243, 4243) || setresuid(4243, 4243, 4243))
		return 11;
	ctl = kfd_open();
	if (ctl < 0)
		return 12;
	pool = kfd_pool_create(ctl, 0, "unwind", 0, NULL);
	if (pool < 0)
		return 13;
	a = hm_alloc(pool, 40 * MIB, 0, NULL);
	if (a < 0)
		return 14;
	/* Within memory.max and the memlock budget, not what is left. */
	if (hm_alloc(pool, 32 * MIB, 0, NULL) != -ENOMEM)
		return 16;
	if (kfd_stats(pool, &st) || st.reserved_bytes != 40 * MIB ||
	    st.entries != 1)
		return 18;
	b = hm_alloc(pool, 16 * MIB, 0, NULL);
	if (b < 0)
		return 19;
	close(a);
	close(b);
	close(pool);
	return 0;
}

TEST_F(memcg, failed_alloc_returns_its_charges)
{
	struct stat sb;
	int status;
	pid_t pid;

	ASSERT_EQ(0, cg_write(self->dir, "memory.max", "67108864"));
	ASSERT_EQ(0, stat(KFD_DEV, &sb));
	ASSERT_EQ(0, chmod(KFD_DEV, 0666));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(unwind_child(self->dir));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	chmod(KFD_DEV, sb.st_mode & 07777);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child step %d",
						 WEXITSTATUS(status));
}

/* An ancestor's memory.max bounds an allocation too. */
TEST_F(memcg, ancestor_memory_max)
{
	const unsigned long long sizes[] = { 128 * MIB, 16 * MIB };
	long long cur[3], kmem[3];
	int res[3];

	/* The fixture's cgroup becomes the parent of a fresh one. */
	memcpy(self->parent, self->dir, sizeof(self->parent));
	ASSERT_EQ(0, cg_write(self->parent, "memory.max", "67108864"));
	ASSERT_EQ(0, cg_make(self->dir, sizeof(self->dir), self->parent,
			     "leaf"));
	run_child(_metadata, self->dir, sizes, 2, res, cur, kmem);
	EXPECT_EQ(-ENOMEM, res[0]);
	EXPECT_EQ(0, res[1]);
	EXPECT_EQ(0, cg_read(self->parent, "memory.events", "oom_kill"));
}

TEST_HARNESS_MAIN
