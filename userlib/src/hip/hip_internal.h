/* SPDX-License-Identifier: MIT */
/*
 * What the HIP entry points (hip_pool.c, hip_mem.c, hip_ipc.c,
 * hip_fabric.c) share on top of the pool allocator (pool/pool.h).
 */
#ifndef KFDPOOL_HIP_INTERNAL_H
#define KFDPOOL_HIP_INTERNAL_H

#include "pool/pool.h"
#include "rt/runtime.h"

/*
 * A call on something kfdpool did not hand out goes to the HIP runtime,
 * and its answer is returned unchanged.  Without a runtime (or one that
 * lacks @fn) this falls through to kfdpool's own checks, which refuse the
 * object as before.  Never with kp_mu held.
 */
#define KP_FORWARD(fn, args) \
	do { \
		const struct kp_runtime *rt_ = kp_rt(); \
		if (rt_ && rt_->fn) { \
			kp_rt_forwarded(); \
			return rt_->fn args; \
		} \
	} while (0)

/*
 * What an entry point answers: the hipError_t of a -errno, or the runtime
 * error a layer below carried up (kp_hip_errno), unchanged.
 */
static inline hipError_t kp_hip_of(int ret)
{
	if (ret <= -KP_EHIP)
		return (hipError_t)(-ret - KP_EHIP);
	return kfdpoolErrnoToHip(ret);
}

/*
 * Whether the program's stream @s can take work of kfdpool's (a marker):
 * as clr answers an invalid stream (hipErrorInvalidHandle from 6.2,
 * hipErrorInvalidValue before), and, when @capture, refused on a stream
 * that captures (hipErrorStreamCaptureUnsupported, the capture left
 * intact) or whose capture was invalidated.  Asks the runtime.
 */
hipError_t kp_stream_usable(const struct kp_runtime *rt, hipStream_t s,
			    int capture);

/* The backend of a new pool: device pools beside a runtime take the
 * runtime's memory (kp_device_backend: hipErrorNotSupported where the
 * runtime cannot share it, the reason said once on stderr by the path's
 * choice; *be NULL for a host substitute or no runtime). */
hipError_t kp_pick_backend(const struct kp_runtime *rt, int device, int dev,
			   const struct kp_backend **be);
hipError_t kp_device_backend(const struct kp_runtime *rt,
			     const struct kp_backend **be);
hipError_t kp_ctl_or_err(int *fd, uint32_t *features);

/* hip_quota.c: which per-user bound an EDQUOT was, on stderr once. */
enum kp_quota { KP_QUOTA_POOL, KP_QUOTA_BYTES, KP_QUOTA_RECORDS };
void kp_say_quota(enum kp_quota what, uint64_t size);
/* hip_error.c: one line on stderr (once) saying why /dev/kfdpool could not
 * be opened (-errno @err). */
void kp_say_ctl_error(int err);
int kp_device_count(void);

/* hip_pool.c: pools made or taken over (hip_persist.c). */
hipError_t kp_owner_pool_new(int fd, const uint8_t id[KFDPOOL_ID_LEN],
			     const hipMemPoolProps *props,
			     const struct kp_backend *be, int dev,
			     const char *busid, hipMemPool_t *mem_pool);
hipError_t kp_pool_create(hipMemPool_t *mem_pool,
			  const hipMemPoolProps *pool_props, uint32_t flags);
hipError_t kp_pool_destroy(hipMemPool_t mem_pool);
/* hip_ipc.c: where an exporter's pool keeps its memory, by its name, and
 * how this process maps it (a device named by bus id: this process's
 * ordinal of it in props->location.id). */
void kp_props_from_name(const char *name, hipMemPoolProps *props,
			char *busid);
hipError_t kp_import_backend(hipMemPoolProps *props, const char *busid,
			     const struct kp_runtime *rt,
			     const struct kp_backend **be);

/* hip_fabric.c: the policy of the fabric handles
 * hipMemPoolExportToShareableHandle makes; 0 or -EINVAL (a bad
 * KFDPOOL_FABRIC_POLICY). */
int kp_fabric_policy(uint32_t *policy, uint32_t *gid);

/* Lock (1) or unlock (0) the fabric policy around fork() (hip_fork.c). */
void kp_fabric_fork(int prepare);

#endif
