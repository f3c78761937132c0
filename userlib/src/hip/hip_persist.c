// SPDX-License-Identifier: MIT
/*
 * Persistent pools in HIP terms: create one, hand its owner handle on,
 * adopt it in a later process, revoke the records an earlier owner made,
 * end it.  The kernel keeps the pool (kmod/persist.c); what a process
 * knows of its allocations dies with it, so an adopter starts with no
 * allocation of its own: what the earlier owners left stays pinned until
 * its records are revoked and the pool ends.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hip_internal.h"
#include "native/format.h"

static hipError_t adopt(hipMemPool_t *mem_pool,
			const kfdpoolOwnerHandle_t *handle)
{
	const struct kp_runtime *rt = kp_rt();
	const struct kp_backend *be, *mapper;
	struct kfdpool_pool_handle h;
	struct kfdpool_pool_stats st;
	hipMemPoolProps props;
	char busid[BUSID_LEN];
	uint32_t features = 0;
	int ctl, fd, ret, device;
	hipError_t err;

	if (!mem_pool || !handle)
		return hipErrorInvalidValue;
	if (kp_backend_env_check(-1))
		return hipErrorInvalidValue;
	err = kp_ctl_or_err(&ctl, &features);
	if (err)
		return err;
	if (!(features & KFDPOOL_FEATURE_PERSIST))
		return hipErrorNotSupported;
	memcpy(&h, handle, sizeof(h));
	kp_fd_lock();
	fd = kp_fd_made(kfdpool_pool_adopt(ctl, &h));
	if (fd < 0)
		return kfdpoolErrnoToHip(fd);
	ret = kfdpool_pool_stats(fd, 0, &st);
	if (ret) {
		err = kfdpoolErrnoToHip(ret);
		goto fail;
	}
	/* Where the creator kept the memory: its pool's name says. */
	memset(&props, 0, sizeof(props));
	kp_props_from_name(st.name, &props, busid);
	props.handleTypes = (hipMemAllocationHandleType)st.handle_types;
	props.maxSize = st.limit;
	device = props.location.type == hipMemLocationTypeDevice;
	if (device && busid[0]) {
		err = kp_import_backend(&props, busid, rt, &mapper);
		if (err)
			goto fail;
	}
	err = kp_pick_backend(rt, device, props.location.id, &be);
	if (!err)
		err = kp_owner_pool_new(fd, st.id, &props, be,
					props.location.id, busid, mem_pool);
	if (!err)
		return hipSuccess;
fail:
	/* The pool stays as it was, persistent, for another adopter. */
	kp_fd_close(fd);
	return err;
}

/* The owner pool @mem_pool is, locked, or NULL. */
static struct ihipMemPoolHandle_t *owner_lock(hipMemPool_t mem_pool)
{
	struct ihipMemPoolHandle_t *pool = kp_pool_lock(mem_pool);

	if (pool && pool->imported) {
		kp_pool_unlock(pool);
		return NULL;
	}
	return pool;
}

static hipError_t export_owner(kfdpoolOwnerHandle_t *handle,
			       hipMemPool_t mem_pool)
{
	struct ihipMemPoolHandle_t *pool;
	struct kfdpool_pool_handle h;
	int ret;

	if (!handle)
		return hipErrorInvalidValue;
	pool = owner_lock(mem_pool);
	if (!pool)
		return hipErrorInvalidValue;
	ret = kfdpool_owner_handle_export(pool->fd, &h);
	kp_pool_unlock(pool);
	/* A pool that does not persist has no owner handle to give. */
	if (ret == -EOPNOTSUPP)
		return hipErrorInvalidValue;
	if (ret < 0)
		return kfdpoolErrnoToHip(ret);
	memcpy(handle, &h, sizeof(h));
	return hipSuccess;
}

/* Is entry @entry_id one of this process's chunks of @pool (locked)? */
static int own_chunk(struct ihipMemPoolHandle_t *pool, uint32_t entry_id)
{
	struct kp_chunk *c;

	for (c = pool->chunks; c; c = c->next)
		if (c->entry_id == entry_id)
			return 1;
	return 0;
}

static hipError_t revoke_exports(hipMemPool_t mem_pool,
				 const hipMemPoolPtrExportData *export_data,
				 size_t count, hipError_t *results)
{
	struct ihipMemPoolHandle_t *pool;
	struct kfdpool_revoke *ops;
	size_t *at, i, n = 0;
	hipError_t err = hipSuccess, e;
	int ret;

	if (!export_data && count)
		return hipErrorInvalidValue;
	ops = calloc(count + 1, sizeof(*ops));
	at = calloc(count + 1, sizeof(*at));
	if (!ops || !at) {
		free(ops);
		free(at);
		return hipErrorOutOfMemory;
	}
	pool = owner_lock(mem_pool);
	if (!pool) {
		free(ops);
		free(at);
		return hipErrorInvalidValue;
	}
	for (i = 0; i < count; i++) {
		const struct kfdpool_record *r =
			(const struct kfdpool_record *)&export_data[i];

		/* Another pool's record, or a pointer of this process,
		 * which hipFree revokes. */
		e = !kp_record_of_pool(r, pool->id) ||
		    own_chunk(pool, kp_record_entry(r)) ?
		    hipErrorInvalidValue : hipSuccess;
		if (results)
			results[i] = e;
		if (e) {
			err = e;
			continue;
		}
		ops[n].record = *r;
		at[n++] = i;
	}
	ret = n ? kfdpool_revokev(pool->fd, ops, n) : 0;
	kp_pool_unlock(pool);
	for (i = 0; i < n; i++) {
		int st = ret < 0 ? ret : i < (size_t)ret ? ops[i].status : -EIO;

		e = kfdpoolErrnoToHip(st);
		if (results)
			results[at[i]] = e;
		if (e)
			err = e;
	}
	free(ops);
	free(at);
	return err;
}

static hipError_t end_pool(hipMemPool_t mem_pool)
{
	struct ihipMemPoolHandle_t *pool = owner_lock(mem_pool);
	int ret;

	if (!pool)
		return hipErrorInvalidValue;
	ret = kfdpool_pool_destroy(pool->fd);
	kp_pool_unlock(pool);
	/* Ended already (by an administrator): only ours is left to go. */
	if (ret < 0 && ret != -ENODEV)
		return kfdpoolErrnoToHip(ret);
	return kp_pool_destroy(mem_pool);
}

/* ---- the entry points: each answers the thread's last error as clr
 * would (rt/runtime.h) ---- */

KFDPOOL_EXPORT hipError_t kfdpoolMemPoolCreatePersistent(
	hipMemPool_t *mem_pool, const hipMemPoolProps *pool_props)
{
	return kp_rt_ret(kp_pool_create(mem_pool, pool_props,
					KFDPOOL_POOL_PERSIST));
}

KFDPOOL_EXPORT hipError_t kfdpoolMemPoolExportOwnerHandle(
	kfdpoolOwnerHandle_t *handle, hipMemPool_t mem_pool)
{
	return kp_rt_ret(export_owner(handle, mem_pool));
}

KFDPOOL_EXPORT hipError_t kfdpoolMemPoolAdopt(hipMemPool_t *mem_pool,
					const kfdpoolOwnerHandle_t *handle)
{
	return kp_rt_ret(adopt(mem_pool, handle));
}

KFDPOOL_EXPORT hipError_t kfdpoolMemPoolRevokeExports(hipMemPool_t mem_pool,
				const hipMemPoolPtrExportData *export_data,
				size_t count, hipError_t *results)
{
	return kp_rt_ret(revoke_exports(mem_pool, export_data, count,
					results));
}

KFDPOOL_EXPORT hipError_t kfdpoolMemPoolEnd(hipMemPool_t mem_pool)
{
	return kp_rt_ret(end_pool(mem_pool));
}
