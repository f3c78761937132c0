/* SPDX-License-Identifier: MIT */
/*
 * What the HIP entry points (hip_pool.c, hip_mem.c, hip_ipc.c,
 * hip_fabric.c) share on top of the pool allocator (pool/pool.h).
 */
#ifndef KFDPOOL_HIP_INTERNAL_H
#define KFDPOOL_HIP_INTERNAL_H

#include "pool/pool.h"

hipError_t kp_pick_backend(int device, int dev, const struct kp_backend **be);
hipError_t kp_ctl_or_err(int *fd, uint32_t *features);
int kp_device_count(void);

/* hip_fabric.c: the policy of the fabric handles
 * hipMemPoolExportToShareableHandle makes; 0 or -EINVAL (a bad
 * KFDPOOL_FABRIC_POLICY). */
int kp_fabric_policy(uint32_t *policy, uint32_t *gid);

#endif
