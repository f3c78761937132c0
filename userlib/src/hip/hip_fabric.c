// SPDX-License-Identifier: MIT
/*
 * hipMemHandleTypeFabric: who may import the handles that
 * hipMemPoolExportToShareableHandle writes, export with an explicit
 * policy, and key rotation (kfdpool* extensions).  The handle itself is
 * the kernel's struct kfdpool_pool_handle, 64 bytes, the size of CUDA's
 * CUmemFabricHandle; see docs/handles.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hip_internal.h"

_Static_assert(sizeof(hipMemFabricHandle_t) == KFDPOOL_HANDLE_SIZE,
	       "hipMemFabricHandle_t is a 64-byte pool handle");
_Static_assert(sizeof(kfdpoolFabricHandle_t) == KFDPOOL_HANDLE_SIZE,
	       "kfdpoolFabricHandle_t is a 64-byte pool handle");
_Static_assert(sizeof(struct kfdpool_pool_handle) == KFDPOOL_HANDLE_SIZE,
	       "struct kfdpool_pool_handle is 64 bytes");

/* The process-wide policy set by kfdpoolSetFabricPolicy(), if any. */
static pthread_mutex_t g_fab_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_fab_set;
static uint32_t g_fab_policy, g_fab_gid;

static int policy_valid(uint32_t policy, uint32_t gid)
{
	if (policy > KFDPOOL_HANDLE_POLICY_ANY)
		return 0;
	/* The kernel takes a gid only with the GID policy. */
	return !gid || policy == KFDPOOL_HANDLE_POLICY_GID;
}

/*
 * KFDPOOL_FABRIC_POLICY: "uid" (or unset, empty: the default), "any", or
 * "gid:N".  Anything else is an error, never a wider policy.
 */
static int policy_from_env(uint32_t *policy, uint32_t *gid)
{
	const char *e = getenv("KFDPOOL_FABRIC_POLICY");
	unsigned long long v;
	char *end;

	*policy = KFDPOOL_HANDLE_POLICY_UID;
	*gid = 0;
	if (!e || !*e || !strcmp(e, "uid"))
		return 0;
	if (!strcmp(e, "any")) {
		*policy = KFDPOOL_HANDLE_POLICY_ANY;
		return 0;
	}
	if (strncmp(e, "gid:", 4) || e[4] < '0' || e[4] > '9')
		goto bad;
	errno = 0;
	v = strtoull(e + 4, &end, 10);
	if (errno || *end || v >= UINT32_MAX)
		goto bad;
	*policy = KFDPOOL_HANDLE_POLICY_GID;
	*gid = (uint32_t)v;
	return 0;
bad:
	kp_env_invalid("KFDPOOL_FABRIC_POLICY", e, "uid, any, gid:N");
	return -EINVAL;
}

void kp_fabric_fork(int prepare)
{
	if (prepare)
		pthread_mutex_lock(&g_fab_mu);
	else
		pthread_mutex_unlock(&g_fab_mu);
}

int kp_fabric_policy(uint32_t *policy, uint32_t *gid)
{
	pthread_mutex_lock(&g_fab_mu);
	if (g_fab_set) {
		*policy = g_fab_policy;
		*gid = g_fab_gid;
		pthread_mutex_unlock(&g_fab_mu);
		return 0;
	}
	pthread_mutex_unlock(&g_fab_mu);
	return policy_from_env(policy, gid);
}

static hipError_t set_policy(uint32_t policy, uint32_t gid)
{
	if (!policy_valid(policy, gid))
		return hipErrorInvalidValue;
	pthread_mutex_lock(&g_fab_mu);
	g_fab_set = 1;
	g_fab_policy = policy;
	g_fab_gid = gid;
	pthread_mutex_unlock(&g_fab_mu);
	return hipSuccess;
}

/*
 * A duplicate (O_CLOEXEC; the caller closes it) of the owner fd of a live
 * pool this process created that allows fabric handles, taken under the
 * pool's lock so that a concurrent hipMemPoolDestroy cannot close it under
 * us.
 * -EINVAL for any other handle, -EOPNOTSUPP without the fabric type.
 */
static int owner_fd(hipMemPool_t mem_pool)
{
	struct ihipMemPoolHandle_t *pool;
	int fd;

	pool = kp_pool_lock(mem_pool);
	if (!pool)
		return -EINVAL;
	if (pool->imported)
		fd = -EINVAL;
	else if (!(pool->handle_types & KFDPOOL_HANDLE_TYPE_FABRIC))
		fd = -EOPNOTSUPP;
	else {
		kp_fd_lock();
		fd = fcntl(pool->fd, F_DUPFD_CLOEXEC, 3);
		fd = kp_fd_made(fd < 0 ? -errno : fd);
	}
	kp_pool_unlock(pool);
	return fd;
}

/* As hipMemPoolExportToShareableHandle: a pool without the fabric type
 * (-EOPNOTSUPP) is the caller's mistake, hipErrorInvalidValue. */
static hipError_t owner_errno_to_hip(int err)
{
	return err == -EOPNOTSUPP ? hipErrorInvalidValue :
		kfdpoolErrnoToHip(err);
}

static hipError_t export_fabric(void *shared_handle, hipMemPool_t mem_pool,
				uint32_t policy, uint32_t gid)
{
	struct kfdpool_pool_handle h;
	int fd, ret;

	if (!shared_handle || !policy_valid(policy, gid))
		return hipErrorInvalidValue;
	fd = owner_fd(mem_pool);
	if (fd < 0)
		return owner_errno_to_hip(fd);
	ret = kfdpool_handle_export(fd, policy, gid, &h);
	kp_fd_close(fd);
	if (ret < 0)
		return owner_errno_to_hip(ret);
	memcpy(shared_handle, &h, sizeof(h));
	return hipSuccess;
}

static hipError_t rotate_fabric(hipMemPool_t mem_pool)
{
	int fd, ret;

	fd = owner_fd(mem_pool);
	if (fd < 0)
		return owner_errno_to_hip(fd);
	ret = kfdpool_handle_rotate(fd);
	kp_fd_close(fd);
	return ret < 0 ? owner_errno_to_hip(ret) : hipSuccess;
}

/* ---- the entry points: each answers the thread's last error as clr
 * would (rt/runtime.h) ---- */

KFDPOOL_EXPORT hipError_t kfdpoolSetFabricPolicy(uint32_t policy,
						 uint32_t gid)
{
	return kp_rt_ret(set_policy(policy, gid));
}

KFDPOOL_EXPORT hipError_t kfdpoolMemPoolExportFabricHandle(
	void *shared_handle, hipMemPool_t mem_pool, uint32_t policy,
	uint32_t gid)
{
	return kp_rt_ret(export_fabric(shared_handle, mem_pool, policy, gid));
}

KFDPOOL_EXPORT hipError_t kfdpoolMemPoolRotateFabricHandles(
	hipMemPool_t mem_pool)
{
	return kp_rt_ret(rotate_fabric(mem_pool));
}
