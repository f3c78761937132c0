/* SPDX-License-Identifier: MIT */
/*
 * What the HIP entry points (hip_pool.c, hip_mem.c, hip_ipc.c,
 * hip_fabric.c) share on top of the pool allocator (pool/pool.h).
 */
#ifndef KFDPOOL_HIP_INTERNAL_H
#define KFDPOOL_HIP_INTERNAL_H

#include "pool/pool.h"
#include "hip_runtime.h"

/*
 * A call on something kfdpool did not hand out goes to the HIP runtime,
 * and its answer is returned unchanged.  Without a runtime (or one that
 * lacks @fn) this falls through to kfdpool's own checks, which refuse the
 * object as before.  Never with kp_mu held.
 */
#define KP_FORWARD(fn, args) \
	do { \
		const struct kp_runtime *rt_ = kp_rt(); \
		if (rt_ && rt_->fn) \
			return rt_->fn args; \
	} while (0)

hipError_t kp_pick_backend(int device, int dev, const struct kp_backend **be);
/* hipErrorNotSupported (and one line on stderr) for a device pool in a
 * process with the runtime @rt, hipSuccess where one may be made. */
hipError_t kp_device_pool_refused(const struct kp_runtime *rt);
hipError_t kp_ctl_or_err(int *fd, uint32_t *features);
int kp_device_count(void);

/* hip_fabric.c: the policy of the fabric handles
 * hipMemPoolExportToShareableHandle makes; 0 or -EINVAL (a bad
 * KFDPOOL_FABRIC_POLICY). */
int kp_fabric_policy(uint32_t *policy, uint32_t *gid);

/* Lock (1) or unlock (0) the fabric policy and the runtime lookup around
 * fork() (hip_fork.c). */
void kp_fabric_fork(int prepare);
void kp_rt_fork(int prepare);

#endif
