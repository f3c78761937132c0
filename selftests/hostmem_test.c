// SPDX-License-Identifier: GPL-2.0-only
/*
 * KFDPOOL_IOC_ALLOC: host memory from the module.  Every field and flag
 * with a bad value; the entry it makes (stats, records, imports, cookies);
 * clean failures (larger than memory, over the pool, user and global
 * limits and the entry cap) with no OOM killer; RLIMIT_MEMLOCK charged to
 * each ALLOC's caller as it is then; the fd handed out last
 * (a faulting copy back, EMFILE); every reference released on close, kill
 * and module unload.  Mappings: hostmem_map_test; memory cgroups:
 * hostmem_memcg_test; the library: lib_hostmem_test.
 */
#include <grp.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <signal.h>

#include "kselftest_harness.h"
#include "hostmem_util.h"
#include "kfdpool_state.h"

#define SZ	(1u << 20)

FIXTURE(alloc) {
	int pool, imp, baseline, oom;
	struct kfdpool_query q0;
};

FIXTURE_SETUP(alloc)
{
	kfd_state_restore();
	self->pool = self->imp = -1;
	if (access(KFD_DEV, F_OK))
		SKIP(return, "no /dev/kfdpool");
	if (!hm_supported())
		SKIP(return, "the module has no KFDPOOL_IOC_ALLOC");
	self->baseline = kfd_dmabuf_count_now();
	self->oom = hm_oom_lines();
	ASSERT_EQ(0, kfd_query(&self->q0));
	self->pool = kfd_pool_new("hostmem_test");
	ASSERT_LE(0, self->pool);
	self->imp = kfd_pool_export(self->pool);
	ASSERT_LE(0, self->imp);
}

FIXTURE_TEARDOWN(alloc)
{
	if (self->imp >= 0)
		close(self->imp);
	if (self->pool >= 0)
		close(self->pool);
	if (self->baseline >= 0)
		EXPECT_EQ(self->baseline, kfd_dmabuf_count(self->baseline));
	/* Nobody was OOM-killed. */
	if (self->oom >= 0)
		EXPECT_EQ(self->oom, hm_oom_lines());
}

TEST_F(alloc, basic)
{
	struct kfdpool_pool_stats st;
	struct kfdpool_alloc a = {};
	unsigned char *p;
	size_t i;
	int n0 = kfd_dmabuf_count_now();

	a.size = SZ;
	a.cookie = 0x1234;
	a.fd = 77;		/* outputs are not inputs */
	a.entry_id = 77;
	ASSERT_EQ(0, kfd_ioctl(self->pool, KFDPOOL_IOC_ALLOC, &a));
	EXPECT_LE(0, a.fd);
	EXPECT_NE(0, a.entry_id);
	EXPECT_TRUE(kfd_cloexec(a.fd));
	EXPECT_EQ(SZ, kfd_dmabuf_size(a.fd));
	EXPECT_EQ(O_RDWR, fcntl(a.fd, F_GETFL) & O_ACCMODE);
	if (n0 >= 0)
		EXPECT_EQ(n0 + 1, kfd_dmabuf_count_now());

	ASSERT_EQ(0, kfd_stats(self->pool, &st));
	EXPECT_EQ(SZ, st.reserved_bytes);
	EXPECT_EQ(SZ, st.reserved_high);
	EXPECT_EQ(1, st.entries);

	/* Zero-filled, writable, and the same bytes through another map. */
	p = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_SHARED, a.fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	for (i = 0; i < SZ && !p[i]; i++)
		;
	EXPECT_EQ(SZ, i);
	hm_fill(p, SZ, 7);
	munmap(p, SZ);
	EXPECT_EQ(1, kfd_dmabuf_check(a.fd, SZ, 7, 0, SZ));

	/* The pin holds it after the fd closes; the unpin frees it. */
	close(a.fd);
	if (n0 >= 0)
		EXPECT_EQ(n0 + 1, kfd_dmabuf_count(n0 + 1));
	EXPECT_EQ(0, kfd_unpin(self->pool, a.entry_id, NULL));
	if (n0 >= 0)
		EXPECT_EQ(n0, kfd_dmabuf_count(n0));
	ASSERT_EQ(0, kfd_stats(self->pool, &st));
	EXPECT_EQ(0, st.reserved_bytes);
	EXPECT_EQ(0, st.entries);
}

/* The dma-buf's exporter is kfdpool, as bufinfo shows it. */
TEST_F(alloc, bufinfo_names_the_exporter)
{
	char line[512];
	int fd, found = 0;
	FILE *f;

	fd = hm_alloc(self->pool, SZ, 0, NULL);
	ASSERT_LE(0, fd);
	f = fopen(KFD_BUFINFO, "re");
	if (!f) {
		close(fd);
		SKIP(return, "no %s", KFD_BUFINFO);
	}
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "kfdpool"))
			found++;
	fclose(f);
	EXPECT_LE(1, found);
	close(fd);
}

TEST_F(alloc, bad_values)
{
	struct { struct kfdpool_alloc a; __u64 tail[2]; } big = {};
	struct kfdpool_pool_stats st;
	struct kfdpool_alloc a;
	unsigned int bit;
	int fd, ctl;
	/* Not a page multiple, whatever smaller alignment it has. */
	__u64 sizes[] = { 0, 1, 4095, 4097, SZ + 1, SZ - 4096 + 1,
			  ~0ULL, 1ULL << 63 | 1, 512, 1024, 2048, 3584,
			  4096 + 512, 4096 + 2048, SZ - 512, SZ + 1024 };
	size_t i;

	for (bit = 0; bit < 32; bit++) {
		memset(&a, 0, sizeof(a));
		a.size = SZ;
		a.flags = 1u << bit;
		EXPECT_EQ(-EINVAL, kfd_ioctl(self->pool, KFDPOOL_IOC_ALLOC, &a))
			TH_LOG("flags bit %u", bit);
	}
	for (bit = 0; bit < 32; bit++) {
		memset(&a, 0, sizeof(a));
		a.size = SZ;
		a.pad = 1u << bit;
		EXPECT_EQ(-EINVAL, kfd_ioctl(self->pool, KFDPOOL_IOC_ALLOC, &a))
			TH_LOG("pad bit %u", bit);
	}
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		memset(&a, 0, sizeof(a));
		a.size = sizes[i];
		EXPECT_EQ(-EINVAL, kfd_ioctl(self->pool, KFDPOOL_IOC_ALLOC, &a))
			TH_LOG("size %llu", (unsigned long long)sizes[i]);
	}
	/* Any cookie is fine: it is the caller's. */
	fd = hm_alloc(self->pool, 4096, ~0ULL, NULL);
	EXPECT_LE(0, fd);
	close(fd);

	/* An import fd may not allocate; nor may the control fd. */
	memset(&a, 0, sizeof(a));
	a.size = SZ;
	EXPECT_EQ(-EPERM, kfd_ioctl(self->imp, KFDPOOL_IOC_ALLOC, &a));
	ctl = kfd_open();
	ASSERT_LE(0, ctl);
	EXPECT_EQ(-ENOTTY, kfd_ioctl(ctl, KFDPOOL_IOC_ALLOC, &a));
	close(ctl);
	/* Size-versioned: shorter than the first version is refused, a
	 * write-only or read-only form of the number is not ours. */
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->pool,
				     _IOC(_IOC_READ | _IOC_WRITE,
					  KFDPOOL_IOC_MAGIC, 0x1e, 16), &a));
	EXPECT_EQ(-ENOTTY, kfd_ioctl(self->pool,
				     _IOW(KFDPOOL_IOC_MAGIC, 0x1e,
					  struct kfdpool_alloc), &a));
	EXPECT_EQ(-ENOTTY, kfd_ioctl(self->pool,
				     _IOR(KFDPOOL_IOC_MAGIC, 0x1e,
					  struct kfdpool_alloc), &a));
	/* A longer struct with a zero tail is the same call. */
	big.a.size = 4096;
	ASSERT_EQ(0, kfd_ioctl(self->pool,
			       _IOC(_IOC_READ | _IOC_WRITE, KFDPOOL_IOC_MAGIC,
				    0x1e, sizeof(big)), &big));
	EXPECT_LE(0, big.a.fd);
	EXPECT_EQ(0, big.tail[0]);
	close(big.a.fd);
	/* Nothing failed was charged. */
	ASSERT_EQ(0, kfd_stats(self->pool, &st));
	EXPECT_EQ(2 * 4096, st.reserved_bytes);
	EXPECT_EQ(2, st.entries);
}

/* An entry like a pin's: records, imports, cookies, unpin, draining. */
TEST_F(alloc, entry_exports_and_imports)
{
	struct kfdpool_import imp;
	struct kfdpool_record rec;
	struct stat s1, s2;
	__u32 entry, draining = 9;
	int fd, p2;

	fd = hm_alloc(self->pool, SZ, 0xc00c1e, &entry);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, kfd_dmabuf_fill(fd, SZ, 3));
	ASSERT_EQ(0, kfd_export(self->pool, entry, 4096, 8192, &rec));
	ASSERT_EQ(0, kfd_import(self->imp, &rec, 0, &imp));
	EXPECT_EQ(0xc00c1e, imp.cookie);
	EXPECT_EQ(SZ, imp.entry_size);
	EXPECT_EQ(4096, imp.offset);
	/* The importer's fd is the same dma-buf. */
	ASSERT_EQ(0, fstat(fd, &s1));
	ASSERT_EQ(0, fstat(imp.fd, &s2));
	EXPECT_EQ(s1.st_ino, s2.st_ino);
	EXPECT_EQ(1, kfd_dmabuf_check(imp.fd, SZ, 3, 0, SZ));

	/* The same dma-buf may not be pinned again here, may elsewhere. */
	EXPECT_EQ(-EEXIST, kfd_pin(self->pool, fd, 0));
	p2 = kfd_pool_new("hostmem_other");
	ASSERT_LE(0, p2);
	EXPECT_LT(0, kfd_pin(p2, fd, 0));
	close(p2);

	/* Unpinned while imported: draining, still readable. */
	close(fd);
	ASSERT_EQ(0, kfd_unpin(self->pool, entry, &draining));
	EXPECT_EQ(1, draining);
	EXPECT_EQ(-ENOENT, kfd_import(self->imp, &rec, 0, NULL));
	EXPECT_EQ(1, kfd_dmabuf_check(imp.fd, SZ, 3, 0, SZ));
	EXPECT_EQ(0, kfd_release(self->imp, entry));
	close(imp.fd);
}

/* Larger than the machine: -ENOMEM at once, nothing allocated. */
TEST_F(alloc, larger_than_memory)
{
	unsigned long long ram = hm_total_ram();
	__u64 sizes[4];
	long long free0 = hm_meminfo("MemFree");
	size_t i;
	int fd;

	ASSERT_LT(0, ram);
	sizes[0] = (ram + (1ULL << 30)) & ~4095ULL;	/* RAM + 1 GiB */
	sizes[1] = 1ULL << 50;				/* 1 PiB */
	sizes[2] = ~0ULL & ~4095ULL;
	sizes[3] = ram & ~4095ULL;			/* all of it */
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		EXPECT_EQ(-ENOMEM, hm_alloc(self->pool, sizes[i], 0, NULL))
			TH_LOG("%llu bytes", (unsigned long long)sizes[i]);
	}
	/* No page stayed behind (KiB; what else runs may take a few). */
	EXPECT_LE(free0 - 16384, hm_meminfo("MemFree"));
	/* A sane one still works. */
	fd = hm_alloc(self->pool, SZ, 0, NULL);
	EXPECT_LE(0, fd);
	close(fd);
}

/*
 * ALLOC checks whether the size can fit before it charges anything: more
 * than the machine has is -ENOMEM whatever the limits, and a size of 2^62
 * moves no figure, not even for a moment, however many ask at once.
 */
struct huge_arg {
	int pool;
	volatile int stop;
	int wrong;
};

static void *huge_allocs(void *p)
{
	struct huge_arg *h = p;

	while (!h->stop)
		if (hm_alloc(h->pool, 1ULL << 62, 0, NULL) != -ENOMEM)
			h->wrong++;
	return NULL;
}

TEST_F(alloc, huge_changes_nothing)
{
	struct huge_arg h = { .pool = self->pool };
	struct kfdpool_pool_stats st;
	pthread_t th[3];
	int i, moved = 0;

	EXPECT_EQ(-ENOMEM, hm_alloc(self->pool, 1ULL << 62, 0, NULL));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, huge_allocs, &h));
	for (i = 0; i < 3000; i++) {
		ASSERT_EQ(0, kfd_stats(self->pool, &st));
		moved += st.reserved_bytes || st.entries;
	}
	h.stop = 1;
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	EXPECT_EQ(0, moved);
	EXPECT_EQ(0, h.wrong);
	ASSERT_EQ(0, kfd_stats(self->pool, &st));
	EXPECT_EQ(0, st.reserved_high);
	EXPECT_EQ(0, st.entries);
}

/* Limits are charged before any page is allocated. */
TEST_F(alloc, pool_limit)
{
	struct kfdpool_pool_stats st;
	int ctl, pool, fd;
	__u32 e;

	ctl = kfd_open();
	ASSERT_LE(0, ctl);
	pool = kfd_pool_create(ctl, 8 * SZ, "hostmem_limit",
			       KFDPOOL_HANDLE_TYPE_FD, NULL);
	close(ctl);
	ASSERT_LE(0, pool);
	EXPECT_EQ(-ENOSPC, hm_alloc(pool, 9 * SZ, 0, NULL));
	fd = hm_alloc(pool, 6 * SZ, 0, &e);
	ASSERT_LE(0, fd);
	close(fd);
	EXPECT_EQ(-ENOSPC, hm_alloc(pool, 3 * SZ, 0, NULL));
	/* A pin counts against the same limit. */
	fd = kfd_dmabuf_new(3 * SZ);
	if (fd >= 0) {
		EXPECT_EQ(-ENOSPC, kfd_pin(pool, fd, 0));
		close(fd);
	}
	fd = hm_alloc(pool, 2 * SZ, 0, NULL);
	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(0, kfd_stats(pool, &st));
	EXPECT_EQ(8 * SZ, st.reserved_bytes);
	EXPECT_EQ(2, st.entries);
	/* Room again after an unpin. */
	ASSERT_EQ(0, kfd_unpin(pool, e, NULL));
	fd = hm_alloc(pool, 6 * SZ, 0, NULL);
	EXPECT_LE(0, fd);
	close(fd);
	close(pool);
}

TEST_F(alloc, max_entries)
{
	long long old = kfd_param_get("max_entries");
	int a, b;

	if (old < 0)
		SKIP(return, "no module parameters");
	ASSERT_EQ(0, kfd_param_set("max_entries", 2));
	a = hm_alloc(self->pool, 4096, 0, NULL);
	b = hm_alloc(self->pool, 4096, 0, NULL);
	EXPECT_LE(0, a);
	EXPECT_LE(0, b);
	EXPECT_EQ(-ENOSPC, hm_alloc(self->pool, 4096, 0, NULL));
	EXPECT_EQ(0, kfd_param_set("max_entries", old));
	close(a);
	close(b);
}

/*
 * With the module's defaults, a user without CAP_IPC_LOCK gets no more of
 * ALLOC's memory than RLIMIT_MEMLOCK allows (-ENOMEM past it, as mlock
 * says), gets it back when the dma-buf goes, and a refusal by another
 * limit after the memlock charge leaves the budget as it was.
 */
#define MEMLOCK_STEP	(16u << 20)

static int memlock_child(void)
{
	struct rlimit rl = { 2 * MEMLOCK_STEP, 2 * MEMLOCK_STEP };
	int ctl, pool, small, fd[4], i, n = 0;
	__u32 e[4];

	if (setrlimit(RLIMIT_MEMLOCK, &rl) || setgroups(0, NULL) ||
	    setresgid(4242, 4242, 4242) || setresuid(4242, 4242, 4242))
		return 10;
	ctl = kfd_open();
	if (ctl < 0)
		return 11;
	pool = kfd_pool_create(ctl, 0, "memlock", 0, NULL);
	small = kfd_pool_create(ctl, MEMLOCK_STEP / 2, "memlock-small", 0,
				NULL);
	if (pool < 0 || small < 0)
		return 12;
	for (i = 0; i < 4; i++) {
		fd[i] = hm_alloc(pool, MEMLOCK_STEP, 0, &e[i]);
		if (fd[i] >= 0)
			n++;
		else if (fd[i] != -ENOMEM)
			return 13;
	}
	/* 20 + how many a 32 MiB budget let through: 2, not 4. */
	if (n != 2)
		return 20 + n;
	/* The dma-buf's release gives the pages back. */
	if (kfd_unpin(pool, e[0], NULL))
		return 14;
	close(fd[0]);
	fd[0] = hm_alloc(pool, MEMLOCK_STEP, 0, &e[0]);
	if (fd[0] < 0)
		return 15;
	close(fd[0]);
	close(fd[1]);
	kfd_unpin(pool, e[0], NULL);
	kfd_unpin(pool, e[1], NULL);
	/* Refused by the pool's limit after the memlock charge: undone. */
	for (i = 0; i < 3; i++)
		if (hm_alloc(small, MEMLOCK_STEP, 0, NULL) != -ENOSPC)
			return 16;
	for (i = 0; i < 2; i++) {
		fd[i] = hm_alloc(pool, MEMLOCK_STEP, 0, NULL);
		if (fd[i] < 0)
			return 17;
	}
	return 0;
}

TEST_F(alloc, unprivileged_bounded_by_memlock)
{
	struct stat sb;
	int status;
	pid_t pid;

	ASSERT_EQ(0, stat(KFD_DEV, &sb));
	ASSERT_EQ(0, chmod(KFD_DEV, 0666));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(memlock_child());
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	chmod(KFD_DEV, sb.st_mode & 07777);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child step %d",
						 WEXITSTATUS(status));
}

/*
 * RLIMIT_MEMLOCK is decided at each ALLOC, for its caller: the caller's
 * user is charged, against the caller's limit, unless the caller has
 * CAP_IPC_LOCK then.  What the pool's creator was or had does not count:
 * an owner fd passed to another uid charges that uid, a creator that drops
 * CAP_IPC_LOCK after POOL_CREATE is charged, and a caller with it is not,
 * whoever made the pool.
 */
#define LOCK_STEP	(4u << 20)

/* RLIMIT_MEMLOCK at two steps; and, unless @uid is 0, @uid with no caps. */
static int lock_become(uid_t uid)
{
	struct rlimit rl = { 2 * LOCK_STEP, 2 * LOCK_STEP };

	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return -1;
	if (!uid)
		return 0;
	return setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	       setresuid(uid, uid, uid) ? -1 : 0;
}

/* LOCK_STEP ALLOCs in @pool, kept: how many until ENOMEM (at most 3). */
static int lock_count(int pool)
{
	int i, fd;

	for (i = 0; i < 3; i++) {
		fd = hm_alloc(pool, LOCK_STEP, 0, NULL);
		if (fd == -ENOMEM)
			return i;
		if (fd < 0)
			return -1;
	}
	return 3;
}

/* Wait for @pid; its exit status, or -1. */
static int lock_wait(pid_t pid)
{
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST_F(alloc, memlock_charges_the_caller)
{
	int sv[2], ctl = kfd_open();
	pid_t a, b;
	char c;

	ASSERT_LE(0, ctl);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
	/* The creator, uid 4244: uid 4245 allocates in its pool first. */
	a = fork();
	if (!a) {
		int pool;

		close(sv[1]);
		if (lock_become(4244))
			_exit(10);
		pool = kfd_pool_create(ctl, 0, "memlock-a", 0, NULL);
		if (pool < 0 || kfd_send(sv[0], pool, "p", 1))
			_exit(11);
		if (read(sv[0], &c, 1) != 1)
			_exit(12);
		_exit(20 + lock_count(pool));
	}
	b = fork();
	if (!b) {
		int pool, n;

		close(sv[0]);
		if (lock_become(4245))
			_exit(10);
		if (kfd_recv(sv[1], &pool, &c, 1) || pool < 0)
			_exit(11);
		n = lock_count(pool);
		if (write(sv[1], "d", 1) != 1)
			_exit(12);
		/* Holding its buffers until the creator is done. */
		if (read(sv[1], &c, 1))
			_exit(13);
		_exit(20 + n);
	}
	close(sv[0]);
	close(sv[1]);
	close(ctl);
	/* Each got its own two steps. */
	EXPECT_EQ(22, lock_wait(b));
	EXPECT_EQ(22, lock_wait(a));
}

TEST_F(alloc, memlock_decided_at_each_alloc)
{
	int ctl = kfd_open(), sv[2];
	pid_t pid, maker;

	ASSERT_LE(0, ctl);
	/* Root made the pool, then dropped CAP_IPC_LOCK: charged. */
	pid = fork();
	if (!pid) {
		int pool = kfd_pool_create(ctl, 0, "memlock-drop", 0, NULL);

		if (pool < 0 || lock_become(4246))
			_exit(10);
		_exit(20 + lock_count(pool));
	}
	EXPECT_EQ(22, lock_wait(pid));

	/* uid 4247 made it; root, under the same limit, is not charged. */
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
	maker = fork();
	if (!maker) {
		int pool;

		if (lock_become(4247))
			_exit(10);
		pool = kfd_pool_create(ctl, 0, "memlock-user", 0, NULL);
		_exit(pool < 0 || kfd_send(sv[0], pool, "p", 1) ? 11 : 0);
	}
	pid = fork();
	if (!pid) {
		int pool;
		char c;

		if (lock_become(0) || kfd_recv(sv[1], &pool, &c, 1) || pool < 0)
			_exit(10);
		_exit(20 + lock_count(pool));
	}
	EXPECT_EQ(0, lock_wait(maker));
	EXPECT_EQ(23, lock_wait(pid));
	close(sv[0]);
	close(sv[1]);
	close(ctl);
}

/* The fd goes live only after the copy back: a read-only struct. */
TEST_F(alloc, copy_back_fault_leaves_nothing)
{
	struct kfdpool_pool_stats st;
	struct kfdpool_alloc *a;
	long page = kfd_page_size();
	int fds_before, fd;

	a = mmap(NULL, page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, a);
	memset(a, 0, sizeof(*a));
	a->size = SZ;
	ASSERT_EQ(0, mprotect(a, page, PROT_READ));
	fd = dup(0);
	close(fd);
	fds_before = fd;	/* the lowest free fd */
	EXPECT_EQ(-EFAULT, kfd_ioctl(self->pool, KFDPOOL_IOC_ALLOC, a));
	/* The reserved fd number was given back, nothing was installed. */
	fd = dup(0);
	EXPECT_EQ(fds_before, fd);
	close(fd);
	ASSERT_EQ(0, kfd_stats(self->pool, &st));
	EXPECT_EQ(0, st.reserved_bytes);
	EXPECT_EQ(0, st.entries);
	munmap(a, page);
}

TEST_F(alloc, out_of_fds)
{
	struct kfdpool_pool_stats st;
	struct rlimit rl, low;
	int fd;

	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	fd = dup(0);
	ASSERT_LE(0, fd);
	low = rl;
	low.rlim_cur = fd;	/* fd is now the lowest free number */
	close(fd);
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &low));
	EXPECT_EQ(-EMFILE, hm_alloc(self->pool, SZ, 0, NULL));
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	ASSERT_EQ(0, kfd_stats(self->pool, &st));
	EXPECT_EQ(0, st.reserved_bytes);
	EXPECT_EQ(0, st.entries);
}

/* A killed allocator leaves nothing: pools, entries, dma-bufs, charges. */
TEST_F(alloc, killed_holder_releases_everything)
{
	int sv[2], round;

	for (round = 0; round < 4; round++) {
		pid_t pid;
		char c;
		int st;

		ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			int pool = kfd_pool_new("hostmem_kill"), i, fd;
			struct kfdpool_record r;
			__u32 e = 0;

			for (i = 0; pool >= 0 && i < 4; i++) {
				fd = hm_alloc(pool, SZ, i, &e);
				if (fd < 0 || kfd_export(pool, e, 0, 4096, &r) ||
				    kfd_import(pool, &r, 0, NULL))
					_exit(1);
				if (i & 1)
					close(fd);	/* the pin holds it */
			}
			c = pool >= 0 ? 'r' : 'x';
			if (write(sv[1], &c, 1) != 1)
				_exit(1);
			/* Round 3: killed while allocating 64 MiB. */
			if (round == 3)
				for (;;) {
					close(hm_alloc(pool, 64 * SZ, 0, &e));
					kfd_unpin(pool, e, NULL);
				}
			pause();
			_exit(0);
		}
		close(sv[1]);
		ASSERT_EQ(1, read(sv[0], &c, 1));
		EXPECT_EQ('r', c);
		if (round == 3)
			usleep(20000);
		kill(pid, SIGKILL);
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
		close(sv[0]);
		if (self->baseline >= 0)
			EXPECT_EQ(self->baseline,
				  kfd_dmabuf_count(self->baseline));
	}
}

/*
 * The dma-buf pins the module: unloading waits for its last fd (and its
 * last mapping, which holds it: see hostmem_map_test).
 */
TEST(unload_waits_for_the_dmabuf)
{
	int baseline = kfd_dmabuf_count_now(), pool, fd;

	if (!getenv("KFDPOOL_KO") || access(getenv("KFDPOOL_KO"), R_OK))
		SKIP(return, "KFDPOOL_KO not set: cannot reload the module");
	if (!hm_supported())
		SKIP(return, "no KFDPOOL_IOC_ALLOC");
	pool = kfd_pool_new("hostmem_unload");
	ASSERT_LE(0, pool);
	fd = hm_alloc(pool, SZ, 0, NULL);
	ASSERT_LE(0, fd);
	close(pool);	/* frees the entry: only the fd holds the dma-buf */
	EXPECT_EQ(-EWOULDBLOCK, syscall(SYS_delete_module, "kfdpool",
					O_NONBLOCK) ? -errno : 0);
	EXPECT_EQ(0, kfd_dmabuf_fill(fd, SZ, 5));
	close(fd);
	ASSERT_EQ(0, hm_unload());
	if (baseline >= 0)
		EXPECT_EQ(baseline, kfd_dmabuf_count(baseline));
	ASSERT_EQ(0, hm_load());
}

TEST_HARNESS_MAIN
