// SPDX-License-Identifier: GPL-2.0-only
/*
 * hipMemHandleTypeFabric through libkfdpool: a pool exported with
 * hipMemPoolExportToShareableHandle as 64 bytes, imported by a freshly
 * exec'd process (no fd shared) with hipMemPoolImportFromShareableHandle,
 * pointers imported and their bytes checked both ways; the fabric policy
 * (default uid, KFDPOOL_FABRIC_POLICY, kfdpoolSetFabricPolicy,
 * kfdpoolMemPoolExportFabricHandle), rotation, destroyed pools, argument
 * errors, the text form, and every dma-buf given back.
 */
#include <dirent.h>
#include <grp.h>
#include <stddef.h>
#include <sys/stat.h>

#include "lib_hip_util.h"
#include "kselftest_harness.h"
#include "kfdpool_state.h"
#include "kfdpool_handle_util.h"

#define SZ		(1u << 20)
#define TAG		0x4641425249430000ULL	/* "FABRIC" */
#define NOBODY		65534
#define TEST_GID	4242

_Static_assert(sizeof(hipMemFabricHandle_t) == 64, "fabric handle size");
_Static_assert(sizeof(kfdpoolFabricHandle_t) == 64, "fabric handle size");

struct msg {
	hipMemFabricHandle_t handle;
	hipMemPoolPtrExportData data;
	uint64_t size;
	uint64_t tag;
};

/* Does this process hold a kfdpool or dma-buf fd? The first, or -1. */
static int inherited_fd(void)
{
	char path[64], target[256];
	struct dirent *de;
	int found = -1;
	DIR *dir = opendir("/proc/self/fd");

	if (!dir)
		return -1;
	while ((de = readdir(dir))) {
		int fd = atoi(de->d_name);
		ssize_t n;

		if (de->d_name[0] == '.' || fd == dirfd(dir))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = 0;
		if (!strcmp(target, "/dev/kfdpool") ||
		    !strcmp(target, "anon_inode:kfdpool") ||
		    strstr(target, "dmabuf:")) {
			found = fd;
			break;
		}
	}
	closedir(dir);
	return found;
}

/*
 * lib_fabric_test --importer UID GID GROUP EXPECT: read a struct msg from
 * stdin, switch ids (-1: stay), import the pool; EXPECT is the hipError_t
 * the import must give.  On success import the pointer, check the tag's
 * bytes, write tag + 1's, free, destroy.
 */
static int importer(int argc, char **argv)
{
	int uid, gid, group, fd;
	hipError_t expect, e;
	hipMemPool_t pool;
	struct msg m;
	void *p;

	if (argc != 6)
		return 99;
	uid = atoi(argv[2]);
	gid = atoi(argv[3]);
	group = atoi(argv[4]);
	expect = (hipError_t)atoi(argv[5]);

	fd = inherited_fd();
	if (fd >= 0) {
		fprintf(stderr, "importer: inherited fd %d\n", fd);
		return 10;
	}
	if (lh_read_all(0, &m, sizeof(m)))
		return 11;
	if (gid >= 0) {
		gid_t g = group;

		if (setgroups(group >= 0 ? 1 : 0, &g) || setgid(gid))
			return 12;
	}
	if (uid >= 0 && setuid(uid))
		return 13;

	e = hipMemPoolImportFromShareableHandle(&pool, &m.handle,
						hipMemHandleTypeFabric, 0);
	if (e != expect) {
		fprintf(stderr, "importer: import gave %s, want %s\n",
			hipGetErrorName(e), hipGetErrorName(expect));
		return 14;
	}
	if (e)
		return 0;
	e = hipMemPoolImportPointer(&p, pool, &m.data);
	if (e) {
		fprintf(stderr, "importer: pointer: %s\n", hipGetErrorName(e));
		return 15;
	}
	if (lh_check(p, m.size, 0, m.tag) >= 0)
		return 16;
	lh_fill(p, m.size, 0, m.tag + 1);
	if (hipFree(p) || hipMemPoolDestroy(pool))
		return 17;
	return 0;
}

/* Run the importer, the message through a pipe; its exit status. */
static int run_importer(const struct msg *m, int uid, int gid, int group,
			hipError_t expect)
{
	char a[4][16];
	int p[2], status;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return 201;
	snprintf(a[0], sizeof(a[0]), "%d", uid);
	snprintf(a[1], sizeof(a[1]), "%d", gid);
	snprintf(a[2], sizeof(a[2]), "%d", group);
	snprintf(a[3], sizeof(a[3]), "%d", (int)expect);
	pid = fork();
	if (pid < 0)
		return 202;
	if (pid == 0) {
		char *argv[] = { "lib_fabric_test", "--importer", a[0], a[1],
				 a[2], a[3], NULL };

		if (dup2(p[0], 0) < 0)
			_exit(203);
		execv("/proc/self/exe", argv);
		_exit(204);
	}
	close(p[0]);
	if (lh_write_all(p[1], m, sizeof(*m)))
		status = -1;
	close(p[1]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 205;
	return WEXITSTATUS(status);
}

FIXTURE(fab) {
	int baseline;
	int any_param;		/* allow_any_handles before, or -errno */
	mode_t dev_mode;
	hipMemPool_t pool;
	void *ptr;
	struct msg m;
};

FIXTURE_SETUP(fab)
{
	struct stat sb;
	hipError_t e;

	kfd_state_restore();
	self->baseline = -1;
	self->dev_mode = 0;
	self->any_param = kfd_any_handles(true);
	self->pool = NULL;
	self->ptr = NULL;
	unsetenv("KFDPOOL_FABRIC_POLICY");
	self->baseline = lh_dmabufs(-1);
	e = lh_pool(&self->pool, hipMemHandleTypeFabric, 0);
	if (e == hipErrorNotSupported)
		SKIP(return, "module without pool handles");
	if (e)
		SKIP(return, "no host pool: %s", hipGetErrorName(e));
	if (stat("/dev/kfdpool", &sb) == 0) {
		self->dev_mode = sb.st_mode & 07777;
		chmod("/dev/kfdpool", 0666);
	}
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&self->ptr, SZ,
						     self->pool, NULL));
	lh_fill(self->ptr, SZ, 0, TAG);
	ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&self->m.data,
						      self->ptr));
	ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&self->m.handle,
			self->pool, hipMemHandleTypeFabric, 0));
	self->m.size = SZ;
	self->m.tag = TAG;
}

FIXTURE_TEARDOWN(fab)
{
	if (self->ptr)
		hipFree(self->ptr);
	if (self->pool)
		hipMemPoolDestroy(self->pool);
	if (self->dev_mode)
		chmod("/dev/kfdpool", self->dev_mode);
	if (self->any_param >= 0)
		kfd_any_handles(self->any_param);
	if (self->baseline >= 0)
		EXPECT_EQ(self->baseline, lh_dmabufs(self->baseline));
}

/* The handle is the kernel's pool handle, default (uid) policy. */
TEST_F(fab, handle_layout)
{
	struct kfdpool_pool_handle h;
	struct kfdpool_pool_stats st;

	memcpy(&h, &self->m.handle, sizeof(h));
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(self->pool, &st));
	EXPECT_EQ(0, memcmp(HND(&h)->pool_id, st.id, sizeof(HND(&h)->pool_id)));
	EXPECT_EQ(KFDPOOL_HANDLE_MAGIC, HND(&h)->magic);
	EXPECT_EQ(KFDPOOL_HANDLE_POLICY_UID, HND(&h)->policy);
	EXPECT_EQ(geteuid(), HND(&h)->uid);
	EXPECT_EQ(KFDPOOL_HANDLE_TYPE_FABRIC, st.handle_types);
}

/* Another process, exec'd, holding no fd of ours, shares the bytes. */
TEST_F(fab, exec_importer)
{
	ASSERT_EQ(0, run_importer(&self->m, -1, -1, -1, hipSuccess));
	EXPECT_EQ(-1, lh_check(self->ptr, SZ, 0, TAG + 1));
}

/* Importing in the same process gives an imported pool whose pointers
 * map the same bytes; importing twice gives the same hipMemPool_t. */
TEST_F(fab, import_in_process)
{
	hipMemPool_t a, b;
	void *p;

	ASSERT_EQ(hipSuccess, hipMemPoolImportFromShareableHandle(&a,
			&self->m.handle, hipMemHandleTypeFabric, 0));
	ASSERT_EQ(hipSuccess, hipMemPoolImportFromShareableHandle(&b,
			&self->m.handle, hipMemHandleTypeFabric, 0));
	EXPECT_EQ(a, b);
	EXPECT_NE(self->pool, a);
	ASSERT_EQ(hipSuccess, hipMemPoolImportPointer(&p, a, &self->m.data));
	EXPECT_EQ(-1, lh_check(p, SZ, 0, TAG));
	EXPECT_EQ(hipSuccess, hipFree(p));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(b));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(a));
}

TEST_F(fab, default_policy_refuses_other_uid)
{
	EXPECT_EQ(0, run_importer(&self->m, NOBODY, NOBODY, -1,
				  hipErrorInvalidValue));
	EXPECT_EQ(0, run_importer(&self->m, -1, -1, -1, hipSuccess));
}

TEST_F(fab, env_policy_any)
{
	struct msg m = self->m;

	setenv("KFDPOOL_FABRIC_POLICY", "any", 1);
	ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&m.handle,
			self->pool, hipMemHandleTypeFabric, 0));
	unsetenv("KFDPOOL_FABRIC_POLICY");
	EXPECT_EQ(0, run_importer(&m, NOBODY, NOBODY, -1, hipSuccess));
	EXPECT_EQ(-1, lh_check(self->ptr, SZ, 0, TAG + 1));
}

TEST_F(fab, env_policy_gid)
{
	struct msg m = self->m;

	setenv("KFDPOOL_FABRIC_POLICY", "gid:4242", 1);
	ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&m.handle,
			self->pool, hipMemHandleTypeFabric, 0));
	unsetenv("KFDPOOL_FABRIC_POLICY");
	EXPECT_EQ(0, run_importer(&m, NOBODY, NOBODY, TEST_GID, hipSuccess));
	EXPECT_EQ(0, run_importer(&m, NOBODY, NOBODY, -1,
				  hipErrorInvalidValue));
}

/* A policy the library does not understand fails; it never widens. */
TEST_F(fab, env_policy_bad)
{
	static const char *const bad[] = { "everyone", "gid:", "gid:x",
		"gid:4294967295", "gid:1x", "ANY", "uid ", "gid:-1" };
	hipMemFabricHandle_t h;
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("KFDPOOL_FABRIC_POLICY", bad[i], 1);
		EXPECT_EQ(hipErrorInvalidValue,
			  hipMemPoolExportToShareableHandle(&h, self->pool,
					hipMemHandleTypeFabric, 0))
			TH_LOG("KFDPOOL_FABRIC_POLICY=%s", bad[i]);
	}
	setenv("KFDPOOL_FABRIC_POLICY", "uid", 1);
	EXPECT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&h, self->pool,
			hipMemHandleTypeFabric, 0));
	EXPECT_EQ(0, memcmp(&h, &self->m.handle, sizeof(h)));
	unsetenv("KFDPOOL_FABRIC_POLICY");
}

TEST_F(fab, set_policy)
{
	struct msg m = self->m;

	EXPECT_EQ(hipErrorInvalidValue, kfdpoolSetFabricPolicy(3, 0));
	EXPECT_EQ(hipErrorInvalidValue,
		  kfdpoolSetFabricPolicy(KFDPOOL_HANDLE_POLICY_UID, 1));
	EXPECT_EQ(hipErrorInvalidValue,
		  kfdpoolSetFabricPolicy(KFDPOOL_HANDLE_POLICY_ANY, 1));
	ASSERT_EQ(hipSuccess,
		  kfdpoolSetFabricPolicy(KFDPOOL_HANDLE_POLICY_ANY, 0));
	/* It wins over the environment. */
	setenv("KFDPOOL_FABRIC_POLICY", "uid", 1);
	ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&m.handle,
			self->pool, hipMemHandleTypeFabric, 0));
	unsetenv("KFDPOOL_FABRIC_POLICY");
	EXPECT_EQ(0, run_importer(&m, NOBODY, NOBODY, -1, hipSuccess));
	ASSERT_EQ(hipSuccess,
		  kfdpoolSetFabricPolicy(KFDPOOL_HANDLE_POLICY_UID, 0));
}

TEST_F(fab, explicit_policy_export)
{
	struct msg m = self->m;

	ASSERT_EQ(hipSuccess, kfdpoolMemPoolExportFabricHandle(&m.handle,
			self->pool, KFDPOOL_HANDLE_POLICY_GID, TEST_GID));
	EXPECT_EQ(0, run_importer(&m, NOBODY, TEST_GID, -1, hipSuccess));
	EXPECT_EQ(0, run_importer(&m, NOBODY, NOBODY, -1,
				  hipErrorInvalidValue));
	EXPECT_EQ(hipErrorInvalidValue, kfdpoolMemPoolExportFabricHandle(NULL,
			self->pool, KFDPOOL_HANDLE_POLICY_UID, 0));
	EXPECT_EQ(hipErrorInvalidValue, kfdpoolMemPoolExportFabricHandle(
			&m.handle, self->pool, 3, 0));
	EXPECT_EQ(hipErrorInvalidValue, kfdpoolMemPoolExportFabricHandle(
			&m.handle, self->pool, KFDPOOL_HANDLE_POLICY_ANY, 7));
	EXPECT_EQ(hipErrorInvalidValue, kfdpoolMemPoolExportFabricHandle(
			&m.handle, NULL, KFDPOOL_HANDLE_POLICY_UID, 0));
}

/* Rotation kills the handles; a pool imported before keeps working. */
TEST_F(fab, rotate)
{
	hipMemFabricHandle_t fresh;
	hipMemPool_t before, again;
	void *p;

	ASSERT_EQ(hipSuccess, hipMemPoolImportFromShareableHandle(&before,
			&self->m.handle, hipMemHandleTypeFabric, 0));
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolRotateFabricHandles(self->pool));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolImportFromShareableHandle(
			&again, &self->m.handle, hipMemHandleTypeFabric, 0));
	EXPECT_EQ(0, run_importer(&self->m, -1, -1, -1,
				  hipErrorInvalidValue));

	ASSERT_EQ(hipSuccess, hipMemPoolImportPointer(&p, before,
						      &self->m.data));
	EXPECT_EQ(-1, lh_check(p, SZ, 0, TAG));
	EXPECT_EQ(hipSuccess, hipFree(p));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(before));

	ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&fresh,
			self->pool, hipMemHandleTypeFabric, 0));
	EXPECT_NE(0, memcmp(&fresh, &self->m.handle, sizeof(fresh)));
	self->m.handle = fresh;
	EXPECT_EQ(0, run_importer(&self->m, -1, -1, -1, hipSuccess));
	EXPECT_EQ(hipErrorInvalidValue, kfdpoolMemPoolRotateFabricHandles(NULL));
}

/* A destroyed pool's handle imports nothing. */
TEST_F(fab, destroyed_pool)
{
	hipMemPool_t again;

	ASSERT_EQ(hipSuccess, hipFree(self->ptr));
	self->ptr = NULL;
	ASSERT_EQ(hipSuccess, hipMemPoolDestroy(self->pool));
	self->pool = NULL;
	EXPECT_EQ(hipErrorInvalidHandle, hipMemPoolImportFromShareableHandle(
			&again, &self->m.handle, hipMemHandleTypeFabric, 0));
	EXPECT_EQ(0, run_importer(&self->m, -1, -1, -1, hipErrorInvalidHandle));
}

TEST_F(fab, bad_args)
{
	hipMemFabricHandle_t h = self->m.handle;
	hipMemPool_t fd_pool, imp;
	int i;

	/* Flags, NULLs, other handle types. */
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolExportToShareableHandle(&h,
			self->pool, hipMemHandleTypeFabric, 1));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolExportToShareableHandle(NULL,
			self->pool, hipMemHandleTypeFabric, 0));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolImportFromShareableHandle(
			&imp, &h, hipMemHandleTypeFabric, 1));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolImportFromShareableHandle(
			&imp, NULL, hipMemHandleTypeFabric, 0));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolImportFromShareableHandle(
			NULL, &h, hipMemHandleTypeFabric, 0));
	/* This pool allows no fd handles. */
	{
		int fd;

		EXPECT_EQ(hipErrorInvalidValue,
			  hipMemPoolExportToShareableHandle(&fd, self->pool,
				hipMemHandleTypePosixFileDescriptor, 0));
	}

	/* A pool without the fabric type. */
	ASSERT_EQ(hipSuccess, lh_pool(&fd_pool,
				      hipMemHandleTypePosixFileDescriptor, 0));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolExportToShareableHandle(&h,
			fd_pool, hipMemHandleTypeFabric, 0));
	EXPECT_EQ(hipErrorInvalidValue, kfdpoolMemPoolExportFabricHandle(&h,
			fd_pool, KFDPOOL_HANDLE_POLICY_UID, 0));
	EXPECT_EQ(hipErrorInvalidValue,
		  kfdpoolMemPoolRotateFabricHandles(fd_pool));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(fd_pool));

	/* An imported pool cannot export or rotate. */
	ASSERT_EQ(hipSuccess, hipMemPoolImportFromShareableHandle(&imp,
			&self->m.handle, hipMemHandleTypeFabric, 0));
	EXPECT_EQ(hipErrorInvalidValue, hipMemPoolExportToShareableHandle(&h,
			imp, hipMemHandleTypeFabric, 0));
	EXPECT_EQ(hipErrorInvalidValue, kfdpoolMemPoolExportFabricHandle(&h,
			imp, KFDPOOL_HANDLE_POLICY_UID, 0));
	EXPECT_EQ(hipErrorInvalidValue, kfdpoolMemPoolRotateFabricHandles(imp));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(imp));

	/*
	 * Every byte of the handle altered: never imports.  A pool id that
	 * names no pool is hipErrorInvalidHandle (-ENOENT); a bad magic,
	 * policy, gid or padding (-EINVAL), or a uid or secret the MAC does
	 * not vouch for (-EACCES), is hipErrorInvalidValue.
	 */
	for (i = 0; i < 64; i++) {
		bool gone = i < (int)offsetof(struct kfd_hnd, magic);
		hipError_t e, want = gone ? hipErrorInvalidHandle :
					    hipErrorInvalidValue;

		h = self->m.handle;
		h.data[i] ^= 0x5a;
		e = hipMemPoolImportFromShareableHandle(&imp, &h,
				hipMemHandleTypeFabric, 0);
		EXPECT_EQ(want, e)
			TH_LOG("byte %d: %s", i, hipGetErrorName(e));
		if (e == hipSuccess)
			hipMemPoolDestroy(imp);
	}
}

/* The text form round-trips and rejects anything else. */
TEST_F(fab, text_form)
{
	struct kfdpool_pool_handle h, back;
	char buf[KFDPOOL_HANDLE_TEXT_LEN + 1], small[KFDPOOL_HANDLE_TEXT_LEN];
	char longer[KFDPOOL_HANDLE_TEXT_LEN + 2];
	hipMemPool_t imp;
	size_t i;

	memcpy(&h, &self->m.handle, sizeof(h));
	ASSERT_EQ(KFDPOOL_HANDLE_TEXT_LEN,
		  kfdpool_handle_format(&h, buf, sizeof(buf)));
	EXPECT_EQ(KFDPOOL_HANDLE_TEXT_LEN, strlen(buf));
	EXPECT_EQ(strspn(buf, "0123456789abcdef"), strlen(buf));
	EXPECT_EQ(-ENOSPC, kfdpool_handle_format(&h, small, sizeof(small)));
	EXPECT_EQ(-EINVAL, kfdpool_handle_format(NULL, buf, sizeof(buf)));
	ASSERT_EQ(0, kfdpool_handle_parse(buf, &back));
	EXPECT_EQ(0, memcmp(&h, &back, sizeof(h)));
	for (i = 0; buf[i]; i++)
		if (buf[i] >= 'a')
			buf[i] -= 'a' - 'A';
	ASSERT_EQ(0, kfdpool_handle_parse(buf, &back));
	EXPECT_EQ(0, memcmp(&h, &back, sizeof(h)));
	ASSERT_EQ(hipSuccess, hipMemPoolImportFromShareableHandle(&imp, &back,
			hipMemHandleTypeFabric, 0));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(imp));

	buf[5] = 'g';
	EXPECT_EQ(-EINVAL, kfdpool_handle_parse(buf, &back));
	buf[5] = '0';
	/* One digit too many, and one too few. */
	memcpy(longer, buf, KFDPOOL_HANDLE_TEXT_LEN);
	memcpy(longer + KFDPOOL_HANDLE_TEXT_LEN, "0", 2);
	EXPECT_EQ(-EINVAL, kfdpool_handle_parse(longer, &back));
	buf[KFDPOOL_HANDLE_TEXT_LEN - 1] = 0;
	EXPECT_EQ(-EINVAL, kfdpool_handle_parse(buf, &back));
	EXPECT_EQ(-EINVAL, kfdpool_handle_parse("", &back));
	EXPECT_EQ(-EINVAL, kfdpool_handle_parse(NULL, &back));
}

static int real_main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--importer"))
		return importer(argc, argv);
	return test_harness_run(argc, argv);
}

int main(int argc, char **argv)
{
	return real_main(argc, argv);
}
