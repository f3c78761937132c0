// SPDX-License-Identifier: MIT
/*
 * The HIP memory pool API: creating and destroying pools, attributes,
 * access, and the kfdpool* pool extensions.  The pools themselves are the
 * pool allocator's (pool/pool.c); allocation: hip_mem.c; sharing:
 * hip_ipc.c.  A pool handle that is not ours goes to the HIP runtime
 * (KP_FORWARD), and so does a pool the runtime is to make (pool_is_ours).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hip_internal.h"

static unsigned int g_pool_seq;

/*
 * KFDPOOL_CHUNK_SIZE: bytes (decimal, or 0x hex), with an optional k, m or
 * g suffix; a page multiple of at least MIN_GRANULE.  0 when refused (and
 * said on stderr).
 */
static uint64_t env_granularity(void)
{
	const char *e = getenv("KFDPOOL_CHUNK_SIZE");
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (!e || !*e)
		return DEF_GRANULE;
	if (*e < '0' || *e > '9')	/* no sign, no space */
		goto bad;
	errno = 0;
	v = strtoull(e, &end, 0);
	if (errno)
		goto bad;
	switch (*end) {
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	}
	if (shift)
		end++;
	if (*end || v > (UINT64_MAX >> shift))
		goto bad;
	v <<= shift;
	if (v < MIN_GRANULE || v % PAGE)
		goto bad;
	return v;
bad:
	kp_env_invalid("KFDPOOL_CHUNK_SIZE", e,
		       "bytes, a multiple of 4096 and at least 65536, with an optional k, m or g suffix");
	return 0;
}

static hipError_t check_props(const hipMemPoolProps *props)
{
	const unsigned int known = hipMemHandleTypePosixFileDescriptor |
		hipMemHandleTypeWin32 | hipMemHandleTypeWin32Kmt |
		hipMemHandleTypeFabric;
	size_t i;

	if (props->allocType != hipMemAllocationTypePinned)
		return hipErrorInvalidValue;
	if ((unsigned int)props->handleTypes & ~known)
		return hipErrorInvalidValue;
	if (props->handleTypes &
	    (hipMemHandleTypeWin32 | hipMemHandleTypeWin32Kmt))
		return hipErrorNotSupported;
	switch (props->location.type) {
	case hipMemLocationTypeDevice:
		if (props->location.id < 0 || props->location.id >= MAX_DEVS)
			return hipErrorInvalidDevice;
		break;
	case hipMemLocationTypeHost:
		break;
	default:
		return hipErrorInvalidValue;
	}
	for (i = 0; i < sizeof(props->reserved); i++)
		if (props->reserved[i])
			return hipErrorInvalidValue;
	return hipSuccess;
}

/*
 * Device memory in a process with a HIP runtime must come from the runtime
 * (ROCr), and this library has no runtime chunk backend yet.  The raw kfd
 * backend must not stand in: it opens its own render nodes for
 * AMDKFD_IOC_ACQUIRE_VM, and KFD takes one DRM file per GPU per process
 * (kfd_ioctl_acquire_vm: -EBUSY for another), so ROCr or kfdpool would lose
 * the GPU.  Such pools fail with hipErrorNotSupported and one line on
 * stderr.  A host backend named in KFDPOOL_BACKEND (a stand-in for tests)
 * touches no GPU and stays allowed.
 */
static int g_device_said;

hipError_t kp_device_pool_refused(const struct kp_runtime *rt)
{
	const char *e = getenv("KFDPOOL_BACKEND");
	const struct kp_backend *b = e && *e ? kp_backend_by_name(e) : NULL;

	if (!rt || (b && !b->device))
		return hipSuccess;
	kp_say_once(&g_device_said,
		    "kfdpool: device pools are not supported in a process with "
		    "a HIP runtime (%s) yet: their memory must come from the "
		    "runtime, and kfdpool's own KFD backend would take the GPU "
		    "from it; hipErrorNotSupported (host pools work)", rt->path);
	return hipErrorNotSupported;
}

hipError_t kp_pick_backend(int device, int dev,
			       const struct kp_backend **be)
{
	int err, n;

	*be = kp_backend_pick(device, &err);
	if (!*be) {
		if (err == -EINVAL)	/* KFDPOOL_BACKEND names nothing usable */
			return hipErrorInvalidValue;
		if (err == -EOPNOTSUPP)	/* a module without ALLOC */
			return hipErrorNotSupported;
		/* No GPU, or the backend's device is missing (ENOENT,
		 * ENODEV) or closed to the caller (EACCES, EPERM). */
		return hipErrorNoDevice;
	}
	if (device) {
		/* A substitute backend stands in for device 0 only. */
		n = (*be)->device ? kp_kfd_device_count() : 1;
		if (dev >= n)
			return hipErrorInvalidDevice;
	}
	return hipSuccess;
}

/* libkfdpool's shared control fd (one per process) and the module's
 * features. */
hipError_t kp_ctl_or_err(int *fd, uint32_t *features)
{
	struct kfdpool_query q;
	int ret = kfdpool_ctl(&q);

	if (ret < 0)
		return hipErrorNotInitialized;
	*fd = ret;
	*features = q.features;
	return hipSuccess;
}

/*
 * Number of devices a pool's access list may name: the runtime's devices
 * in a process with one (kfd is not touched beside it), else the kfd
 * backend's.  Not with kp_mu held (it may call the runtime).
 */
int kp_device_count(void)
{
	const struct kp_runtime *rt = kp_rt();
	const char *e = getenv("KFDPOOL_BACKEND");
	int n = 0;

	if (!rt)
		n = kp_kfd_device_count();
	else if (!rt->hipGetDeviceCount || rt->hipGetDeviceCount(&n))
		n = 0;

	if (!n && e && *e)
		n = 1;		/* the substitute stands in for device 0 */
	return n;
}

/*
 * Which pools are kfdpool's when the process has a HIP runtime: those
 * created to be shared (a PosixFileDescriptor or Fabric handle type) and
 * host pools.  A pool with no handle type on a device is the runtime's,
 * unless KFDPOOL_POOLS=all.  1 ours, 0 the runtime's, -1 for a
 * KFDPOOL_POOLS that is neither "ipc" (the default) nor "all".
 */
static int g_pools_said;

static int pool_is_ours(const hipMemPoolProps *props)
{
	const char *e = getenv("KFDPOOL_POOLS");

	if (props->handleTypes & (hipMemHandleTypePosixFileDescriptor |
				  hipMemHandleTypeFabric))
		return 1;
	if (props->location.type == hipMemLocationTypeHost)
		return 1;
	if (!e || !*e || !strcmp(e, "ipc"))
		return 0;
	if (!strcmp(e, "all"))
		return 1;
	kp_say_once(&g_pools_said, "kfdpool: KFDPOOL_POOLS=%s is neither "
		    "\"ipc\" nor \"all\": hipMemPoolCreate fails "
		    "(hipErrorInvalidValue)", e);
	return -1;
}

KFDPOOL_EXPORT hipError_t hipMemPoolCreate(hipMemPool_t *mem_pool,
					   const hipMemPoolProps *pool_props)
{
	const struct kp_runtime *rt = kp_rt();
	struct ihipMemPoolHandle_t *pool;
	const struct kp_backend *be;
	uint32_t features = 0;
	char name[KFDPOOL_NAME_LEN];
	uint64_t granularity;
	int device, ctl, fd, ours;
	uint8_t id[KFDPOOL_ID_LEN];
	hipError_t err;

	if (rt) {
		ours = mem_pool && pool_props ? pool_is_ours(pool_props) : 0;
		if (ours < 0)
			return hipErrorInvalidValue;
		if (!ours)
			KP_FORWARD(hipMemPoolCreate, (mem_pool, pool_props));
	}
	if (!mem_pool || !pool_props)
		return hipErrorInvalidValue;
	err = check_props(pool_props);
	if (err)
		return err;
	granularity = env_granularity();
	if (!granularity)
		return hipErrorInvalidValue;
	device = pool_props->location.type == hipMemLocationTypeDevice;
	if (device) {
		err = kp_device_pool_refused(rt);
		if (err)
			return err;
	}
	err = kp_pick_backend(device, device ? pool_props->location.id : 0, &be);
	if (err)
		return err;
	err = kp_ctl_or_err(&ctl, &features);
	if (err)
		return err;
	if ((pool_props->handleTypes & hipMemHandleTypeFabric) &&
	    !(features & KFDPOOL_FEATURE_POOL_HANDLE))
		return hipErrorNotSupported;

	pthread_mutex_lock(&kp_mu);
	snprintf(name, sizeof(name), "hip-%c%d-%d-%u", device ? 'd' : 'h',
		 device ? pool_props->location.id : 0, (int)getpid(),
		 ++g_pool_seq);
	fd = kfdpool_pool_create(ctl, pool_props->maxSize,
				 (uint32_t)pool_props->handleTypes, name, id);
	if (fd < 0) {
		pthread_mutex_unlock(&kp_mu);
		return kfdpoolErrnoToHip(fd);
	}
	pool = kp_pool_new();
	if (!pool) {
		pthread_mutex_unlock(&kp_mu);
		close(fd);
		return hipErrorOutOfMemory;
	}
	memcpy(pool->id, id, sizeof(id));
	pool->magic = POOL_MAGIC;
	pool->fd = fd;
	pool->refs = 1;
	pool->props = *pool_props;
	pool->handle_types = (uint32_t)pool_props->handleTypes;
	pool->be = be;
	pool->dev = device ? pool_props->location.id : 0;
	pool->granularity = granularity;
	pool->max_size = pool_props->maxSize;
	pool->reuse[0] = pool->reuse[1] = pool->reuse[2] = 1;
	pool->next = kp_pools;
	kp_pools = pool;
	pthread_mutex_unlock(&kp_mu);
	*mem_pool = pool;
	return hipSuccess;
}

KFDPOOL_EXPORT hipError_t hipMemPoolDestroy(hipMemPool_t mem_pool)
{
	struct ihipMemPoolHandle_t *pool;

	if (!kp_pool_ours(mem_pool))
		KP_FORWARD(hipMemPoolDestroy, (mem_pool));
	pthread_mutex_lock(&kp_mu);
	pool = kp_pool_get(mem_pool);
	if (!pool) {
		pthread_mutex_unlock(&kp_mu);
		return hipErrorInvalidValue;
	}
	/* An imported pool is one object per process, however often it was
	 * imported: each import is undone by one destroy. */
	if (--pool->refs == 0) {
		pool->destroyed = 1;
		/* Outstanding allocations keep the pool until freed, as in
		 * HIP; free chunks go now. */
		if (!pool->imported)
			kp_pool_trim(pool, 0);
		kp_pool_maybe_finalize(pool);
	}
	pthread_mutex_unlock(&kp_mu);
	return hipSuccess;
}

KFDPOOL_EXPORT hipError_t kfdpoolMemPoolSetGranularity(hipMemPool_t mem_pool,
						       size_t bytes)
{
	struct ihipMemPoolHandle_t *pool;
	hipError_t err = hipSuccess;

	if (bytes < MIN_GRANULE || bytes % PAGE)
		return hipErrorInvalidValue;
	pthread_mutex_lock(&kp_mu);
	pool = kp_pool_get(mem_pool);
	if (!pool || pool->imported)
		err = hipErrorInvalidValue;
	else
		pool->granularity = bytes;
	pthread_mutex_unlock(&kp_mu);
	return err;
}

KFDPOOL_EXPORT const char *kfdpoolMemPoolBackend(hipMemPool_t mem_pool)
{
	struct ihipMemPoolHandle_t *pool;
	const char *name = NULL;

	pthread_mutex_lock(&kp_mu);
	pool = kp_pool_get(mem_pool);
	if (pool)
		name = pool->be ? pool->be->name : "mmap";
	pthread_mutex_unlock(&kp_mu);
	return name;
}

KFDPOOL_EXPORT hipError_t kfdpoolMemPoolGetStats(hipMemPool_t mem_pool,
					struct kfdpool_pool_stats *stats)
{
	struct ihipMemPoolHandle_t *pool;
	int ret = -EINVAL;

	if (!stats)
		return hipErrorInvalidValue;
	pthread_mutex_lock(&kp_mu);
	pool = kp_pool_get(mem_pool);
	if (pool)
		ret = kfdpool_pool_stats(pool->fd, 0, stats);
	pthread_mutex_unlock(&kp_mu);
	return kfdpoolErrnoToHip(ret);
}

/* ---- attributes ---- */

KFDPOOL_EXPORT hipError_t hipMemPoolGetAttribute(hipMemPool_t mem_pool,
						 hipMemPoolAttr attr,
						 void *value)
{
	struct ihipMemPoolHandle_t *pool;
	struct kfdpool_pool_stats st;
	hipError_t err = hipSuccess;
	uint64_t v = 0;
	int ret;

	if (!kp_pool_ours(mem_pool))
		KP_FORWARD(hipMemPoolGetAttribute, (mem_pool, attr, value));
	if (!value || attr < hipMemPoolReuseFollowEventDependencies ||
	    attr > hipMemPoolAttrUsedMemHigh)
		return hipErrorInvalidValue;
	pthread_mutex_lock(&kp_mu);
	pool = kp_pool_get(mem_pool);
	if (!pool) {
		err = hipErrorInvalidValue;
		goto out;
	}
	if (attr <= hipMemPoolReuseAllowInternalDependencies) {
		*(int *)value = pool->reuse[attr - 1];
		goto out;
	}
	if (attr == hipMemPoolAttrReleaseThreshold) {
		*(uint64_t *)value = pool->threshold;
		goto out;
	}
	ret = kfdpool_pool_stats(pool->fd, 0, &st);
	if (ret) {
		err = kfdpoolErrnoToHip(ret);
		goto out;
	}
	/*
	 * The kernel's figures.  Used bytes are the bytes of live records;
	 * a pool without handle types has none, so the library's own count
	 * of allocated bytes stands in for it.
	 */
	switch (attr) {
	case hipMemPoolAttrReservedMemCurrent:
		v = st.reserved_bytes;
		break;
	case hipMemPoolAttrReservedMemHigh:
		v = st.reserved_high;
		break;
	case hipMemPoolAttrUsedMemCurrent:
		v = st.handle_types ? st.used_bytes : pool->used;
		break;
	default:
		v = st.handle_types ? st.used_high : pool->used_high;
		break;
	}
	*(uint64_t *)value = v;
out:
	pthread_mutex_unlock(&kp_mu);
	return err;
}

KFDPOOL_EXPORT hipError_t hipMemPoolSetAttribute(hipMemPool_t mem_pool,
						 hipMemPoolAttr attr,
						 void *value)
{
	struct ihipMemPoolHandle_t *pool;
	struct kfdpool_pool_stats st;
	hipError_t err = hipSuccess;
	uint32_t flags;
	int ret;

	if (!kp_pool_ours(mem_pool))
		KP_FORWARD(hipMemPoolSetAttribute, (mem_pool, attr, value));
	if (!value || attr < hipMemPoolReuseFollowEventDependencies ||
	    attr > hipMemPoolAttrUsedMemHigh)
		return hipErrorInvalidValue;
	/* HIP's rules: the current figures are read-only, the high-water
	 * marks can only be reset, to 0. */
	if (attr == hipMemPoolAttrReservedMemCurrent ||
	    attr == hipMemPoolAttrUsedMemCurrent)
		return hipErrorInvalidValue;
	if ((attr == hipMemPoolAttrReservedMemHigh ||
	     attr == hipMemPoolAttrUsedMemHigh) && *(uint64_t *)value)
		return hipErrorInvalidValue;
	if (attr <= hipMemPoolReuseAllowInternalDependencies &&
	    *(int *)value != 0 && *(int *)value != 1)
		return hipErrorInvalidValue;
	pthread_mutex_lock(&kp_mu);
	pool = kp_pool_get(mem_pool);
	if (!pool) {
		err = hipErrorInvalidValue;
		goto out;
	}
	switch (attr) {
	case hipMemPoolAttrReleaseThreshold:
		pool->threshold = *(uint64_t *)value;
		if (!pool->imported)
			kp_pool_trim(pool, pool->threshold);
		break;
	case hipMemPoolAttrReservedMemHigh:
	case hipMemPoolAttrUsedMemHigh:
		/* The kernel resets on owner fds only. */
		if (pool->imported) {
			err = hipErrorInvalidValue;
			break;
		}
		flags = attr == hipMemPoolAttrReservedMemHigh ?
			KFDPOOL_STATS_RESET_RESERVED_HIGH :
			KFDPOOL_STATS_RESET_USED_HIGH;
		ret = kfdpool_pool_stats(pool->fd, flags, &st);
		if (ret)
			err = kfdpoolErrnoToHip(ret);
		else if (attr == hipMemPoolAttrUsedMemHigh)
			pool->used_high = pool->used;
		break;
	default:
		pool->reuse[attr - 1] = *(int *)value;
		break;
	}
out:
	pthread_mutex_unlock(&kp_mu);
	return err;
}

/* ---- access ---- */

static int pool_is_device(const struct ihipMemPoolHandle_t *pool)
{
	return pool->props.location.type == hipMemLocationTypeDevice;
}

/* A location HIP accepts: the host, or a device id that could exist. */
static hipError_t check_location(const hipMemLocation *loc)
{
	if (loc->type != hipMemLocationTypeDevice &&
	    loc->type != hipMemLocationTypeHost)
		return hipErrorInvalidValue;
	if (loc->type == hipMemLocationTypeDevice &&
	    (loc->id < 0 || loc->id >= MAX_DEVS))
		return hipErrorInvalidDevice;
	return hipSuccess;
}

KFDPOOL_EXPORT hipError_t hipMemPoolSetAccess(hipMemPool_t mem_pool,
					      const hipMemAccessDesc *desc_list,
					      size_t count)
{
	struct ihipMemPoolHandle_t *pool;
	hipError_t err = hipSuccess;
	int ndev = 0;
	size_t i;

	if (!kp_pool_ours(mem_pool))
		KP_FORWARD(hipMemPoolSetAccess, (mem_pool, desc_list, count));
	if (count && !desc_list)
		return hipErrorInvalidValue;
	/* Check every descriptor before changing anything. */
	for (i = 0; i < count; i++) {
		const hipMemAccessDesc *d = &desc_list[i];

		if (d->flags != hipMemAccessFlagsProtNone &&
		    d->flags != hipMemAccessFlagsProtRead &&
		    d->flags != hipMemAccessFlagsProtReadWrite)
			return hipErrorInvalidValue;
		err = check_location(&d->location);
		if (err != hipSuccess)
			return err;
	}
	if (count)
		ndev = kp_device_count();
	pthread_mutex_lock(&kp_mu);
	pool = kp_pool_get(mem_pool);
	if (!pool) {
		err = hipErrorInvalidValue;
		goto out;
	}
	for (i = 0; i < count; i++) {
		const hipMemAccessDesc *d = &desc_list[i];

		if (d->location.type == hipMemLocationTypeDevice &&
		    d->location.id >= ndev) {
			err = hipErrorInvalidDevice;
			goto out;
		}
		/* The pool's own location keeps read-write access. */
		if (d->location.type == pool->props.location.type &&
		    (!pool_is_device(pool) ||
		     d->location.id == pool->props.location.id) &&
		    d->flags != hipMemAccessFlagsProtReadWrite) {
			err = hipErrorInvalidValue;
			goto out;
		}
		/* Host memory of a device pool is not CPU-mapped here. */
		if (d->location.type == hipMemLocationTypeHost &&
		    pool_is_device(pool) &&
		    d->flags != hipMemAccessFlagsProtNone) {
			err = hipErrorNotSupported;
			goto out;
		}
	}
	/*
	 * Recorded for hipMemPoolGetAccess.  Host chunks are mapped read-write
	 * into the CPU already; the kfd backend maps chunks to the owning GPU
	 * only (peer mappings are not done).
	 */
	for (i = 0; i < count; i++)
		if (desc_list[i].location.type == hipMemLocationTypeDevice)
			pool->access[desc_list[i].location.id] =
				desc_list[i].flags;
out:
	pthread_mutex_unlock(&kp_mu);
	return err;
}

KFDPOOL_EXPORT hipError_t hipMemPoolGetAccess(hipMemAccessFlags *flags,
					      hipMemPool_t mem_pool,
					      hipMemLocation *location)
{
	struct ihipMemPoolHandle_t *pool;
	hipError_t err = hipSuccess;
	int ndev = 0;

	if (!kp_pool_ours(mem_pool))
		KP_FORWARD(hipMemPoolGetAccess, (flags, mem_pool, location));
	if (!flags || !location)
		return hipErrorInvalidValue;
	err = check_location(location);
	if (err != hipSuccess)
		return err;
	if (location->type == hipMemLocationTypeDevice)
		ndev = kp_device_count();
	pthread_mutex_lock(&kp_mu);
	pool = kp_pool_get(mem_pool);
	if (!pool) {
		err = hipErrorInvalidValue;
		goto out;
	}
	if (location->type == hipMemLocationTypeHost) {
		*flags = pool_is_device(pool) ? hipMemAccessFlagsProtNone :
			 hipMemAccessFlagsProtReadWrite;
	} else if (pool_is_device(pool) &&
		   location->id == pool->props.location.id) {
		*flags = hipMemAccessFlagsProtReadWrite;
	} else if (location->id >= ndev) {
		err = hipErrorInvalidDevice;
	} else {
		*flags = pool->access[location->id];
	}
out:
	pthread_mutex_unlock(&kp_mu);
	return err;
}

