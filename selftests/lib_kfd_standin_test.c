// SPDX-License-Identifier: GPL-2.0-only
/*
 * libkfdpool-hip's kfd backend (userlib/src/chunk/kfd.c: device pools in a
 * process without a HIP runtime) against the TEST-ONLY STAND-IN for amdkfd
 * and libdrm_amdgpu (kfd_standin.c, loaded with LD_PRELOAD into a
 * re-executed copy of this program), which answers as Linux 6.12's amdkfd
 * and libdrm_amdgpu do:
 *
 *   a chunk's GPU virtual address is aligned as libhsakmt aligns it (to
 *     2 MiB for 2 MiB and more), so that the page tables can use 2 MiB
 *     fragments; EXECUTABLE is not asked for;
 *   a fork child makes device pools of its own and imports its parent's:
 *     it lets go of the parent's libdrm_amdgpu device and acquires a VM on
 *     a render file of its own (the parent's file's VM is the parent's:
 *     ACQUIRE_VM gives EINVAL);
 *   where another user of libdrm_amdgpu keeps the parent's device, the
 *     child is refused with hipErrorNoDevice, never handed a pool.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <stdint.h>
#include <sys/wait.h>

#include "lib_hip_util.h"
#include "kselftest_harness.h"

struct kfd_standin_log {
	unsigned int allocs, imports, acquire_einval;
	uint64_t va[64], size[64];
	uint32_t flags[64];
};

/* KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE (kfd_ioctl.h). */
#define KFD_EXECUTABLE (1u << 30)
#define MIB (1ULL << 20)

static const struct kfd_standin_log *standin_log(void)
{
	const struct kfd_standin_log *(*f)(void) =
		(const struct kfd_standin_log *(*)(void))
		dlsym(RTLD_DEFAULT, "kfd_standin_log");

	return f ? f() : NULL;
}

static hipError_t device_pool(hipMemPool_t *pool)
{
	hipMemPoolProps p = lh_props(hipMemHandleTypePosixFileDescriptor, 0);

	p.location.type = hipMemLocationTypeDevice;
	return hipMemPoolCreate(pool, &p);
}

/* Each chunk asked of KFD: its VA aligned to the largest power of two up
 * to 2 MiB its size holds (else 2 in the answer); no EXECUTABLE (else 4). */
static int check_allocs(void)
{
	const struct kfd_standin_log *l = standin_log();
	unsigned int i;
	int ret = 0;

	if (!l || !l->allocs) {
		fprintf(stderr, "no ALLOC_MEMORY_OF_GPU seen\n");
		return 1;
	}
	for (i = 0; i < l->allocs && i < 64; i++) {
		uint64_t align = 4096;

		while (align < 2 * MIB && l->size[i] >= align << 1)
			align <<= 1;
		if (l->va[i] & (align - 1)) {
			fprintf(stderr, "chunk %u: va %#llx size %#llx: not "
				"%#llx aligned\n", i, (unsigned long long)l->va[i],
				(unsigned long long)l->size[i],
				(unsigned long long)align);
			ret |= 2;
		}
		if (l->flags[i] & KFD_EXECUTABLE) {
			fprintf(stderr, "chunk %u: EXECUTABLE asked for\n", i);
			ret |= 4;
		}
	}
	return ret;
}

/* Role "alloc": chunks of several sizes. */
static int role_alloc(void)
{
	static const size_t sizes[] = { 4096, 3 * MIB, 64 << 10, 9 * MIB };
	hipMemPool_t pool;
	void *p[4];
	size_t i;

	if (device_pool(&pool) != hipSuccess)
		return 10;
	for (i = 0; i < 4; i++)
		if (hipMallocFromPoolAsync(&p[i], sizes[i], pool, NULL))
			return 11;
	for (i = 0; i < 4; i++)
		hipFree(p[i]);
	hipMemPoolDestroy(pool);
	return check_allocs();
}

/*
 * Role "fork" (held = 0) and "fork-held" (held = 1: this program keeps a
 * libdrm_amdgpu device of its own, as a graphics driver in the process
 * would): a pool and an allocation in the parent, then in a fork child a
 * new pool and an import of the parent's allocation.
 */
static int role_fork(int held)
{
	int (*init)(int, uint32_t *, uint32_t *, void **) =
		(int (*)(int, uint32_t *, uint32_t *, void **))
		dlsym(RTLD_DEFAULT, "amdgpu_device_initialize");
	hipMemPoolPtrExportData d;
	hipMemPool_t pool;
	void *ptr, *dev;
	uint32_t maj, min;
	int fd, st;
	pid_t pid;

	if (held) {
		int rfd = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);

		if (!init || rfd < 0 || init(rfd, &maj, &min, &dev))
			return 20;
	}
	if (device_pool(&pool) != hipSuccess)
		return 21;
	if (hipMallocFromPoolAsync(&ptr, 2 * MIB, pool, NULL) ||
	    hipMemPoolExportPointer(&d, ptr) ||
	    hipMemPoolExportToShareableHandle(&fd, pool,
			hipMemHandleTypePosixFileDescriptor, 0))
		return 22;
	pid = fork();
	if (pid < 0)
		return 23;
	if (!pid) {
		hipMemPool_t mine, imp;
		hipError_t e = device_pool(&mine);
		void *q, *r;

		if (held) {
			fprintf(stderr, "child: hipMemPoolCreate: %s\n",
				hipGetErrorName(e));
			_exit(e == hipErrorNoDevice ? 0 : 30);
		}
		if (e != hipSuccess) {
			fprintf(stderr, "child: hipMemPoolCreate: %s\n",
				hipGetErrorName(e));
			_exit(31);
		}
		if (hipMallocFromPoolAsync(&r, 3 * MIB, mine, NULL))
			_exit(32);
		if (hipMemPoolImportFromShareableHandle(&imp,
				(void *)(intptr_t)fd,
				hipMemHandleTypePosixFileDescriptor, 0) ||
		    hipMemPoolImportPointer(&q, imp, &d))
			_exit(33);
		if (!standin_log() || !standin_log()->imports)
			_exit(34);
		hipFree(q);
		hipFree(r);
		hipMemPoolDestroy(imp);
		hipMemPoolDestroy(mine);
		_exit(check_allocs());
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return 24;
	if (WEXITSTATUS(st))
		return WEXITSTATUS(st);
	/* The parent's pool is still its own. */
	if (hipFree(ptr) || hipMallocFromPoolAsync(&ptr, 4096, pool, NULL))
		return 25;
	hipFree(ptr);
	close(fd);
	hipMemPoolDestroy(pool);
	return 0;
}

/* LD_PRELOAD=<this program's directory>/standin/libkfd-standin.so */
static const char *standin_path(void)
{
	static char path[4096];
	char exe[4000];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return NULL;
	exe[n] = 0;
	snprintf(path, sizeof(path), "%s/standin/libkfd-standin.so",
		 dirname(exe));
	return access(path, R_OK) ? NULL : path;
}

FIXTURE(kfd) {
	const char *so;
};

FIXTURE_SETUP(kfd)
{
	if (access("/dev/kfdpool", F_OK))
		SKIP(return, "/dev/kfdpool missing (module not loaded)");
	self->so = standin_path();
	if (!self->so)
		SKIP(return, "standin/libkfd-standin.so not built (no 6.12 kfd_ioctl.h)");
	ksft_print_msg("amdkfd: TEST-ONLY STAND-IN (selftests/kfd_standin.c), "
		       "not a GPU\n");
}

FIXTURE_TEARDOWN(kfd)
{
}

TEST_F(kfd, chunk_va_aligned_not_executable)
{
	EXPECT_EQ(0, lh_exec_self("alloc", "LD_PRELOAD", self->so));
}

TEST_F(kfd, fork_child_has_its_own_vm)
{
	EXPECT_EQ(0, lh_exec_self("fork", "LD_PRELOAD", self->so));
}

TEST_F(kfd, fork_child_refused_while_parent_device_held)
{
	EXPECT_EQ(0, lh_exec_self("fork-held", "LD_PRELOAD", self->so));
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--alloc"))
		return role_alloc();
	if (argc == 2 && !strcmp(argv[1], "--fork"))
		return role_fork(0);
	if (argc == 2 && !strcmp(argv[1], "--fork-held"))
		return role_fork(1);
	return test_harness_run(argc, argv);
}
