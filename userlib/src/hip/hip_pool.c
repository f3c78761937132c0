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
		/* clr answers a device past its devices so (hip_mempool.cpp). */
		if (props->location.id < 0 || props->location.id >= MAX_DEVS)
			return hipErrorInvalidValue;
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
 * Device memory in a process with a HIP runtime comes from the runtime
 * (chunk/rocr.c), never from the raw kfd backend: that would open the GPU
 * a second time beside ROCr.  A runtime that can export device memory as
 * a dma-buf neither way (Debian's 5.2) cannot back a device IPC pool:
 * hipErrorNotSupported (the choice of the way said once on stderr why).
 * A host backend named in KFDPOOL_BACKEND (a stand-in for tests) touches
 * no GPU and stays allowed.
 */
static int host_substitute(void)
{
	const char *e = getenv("KFDPOOL_BACKEND");
	const struct kp_backend *b = e && *e ? kp_backend_by_name(e) : NULL;

	return b && !b->device;
}

hipError_t kp_device_backend(const struct kp_runtime *rt,
			     const struct kp_backend **be)
{
	*be = NULL;
	if (!rt || host_substitute())
		return hipSuccess;
	if (kp_rocr_env_check())
		return hipErrorInvalidValue;
	if (kp_rocr_path() == KP_RT_NONE)
		return hipErrorNotSupported;
	*be = &kp_backend_rocr;
	return hipSuccess;
}

hipError_t kp_pick_backend(const struct kp_runtime *rt, int device, int dev,
			   const struct kp_backend **be)
{
	hipError_t e;
	int err, n;

	if (device && rt) {
		e = kp_device_backend(rt, be);
		if (e)
			return e;
		if (*be) {
			n = kp_device_count();
			return dev < n ? hipSuccess : hipErrorInvalidValue;
		}
	}
	*be = kp_backend_pick(device, &err);
	if (!*be) {
		if (err == -EINVAL)	/* KFDPOOL_BACKEND names nothing usable */
			return hipErrorInvalidValue;
		if (kfdpoolErrnoToHip(err) == hipErrorOutOfMemory)
			return hipErrorOutOfMemory;	/* memory or fds */
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
			return hipErrorInvalidValue;
	}
	return hipSuccess;
}

/* The PCI bus id of device @dev as @be sees it ("" for a substitute). */
static void kp_bus_id(const struct kp_backend *be, int dev, char *buf,
		      size_t len)
{
	buf[0] = 0;
	if (be == &kp_backend_rocr)
		kp_rocr_bus_id(dev, buf, len);
	else if (be == &kp_backend_kfd)
		kp_kfd_bus_id(dev, buf, len);
	buf[len - 1] = 0;
}

/* libkfdpool's shared control fd (one per process) and the module's
 * features.  No memory or fd for it is out of memory; any other failure
 * means the module cannot be used: hipErrorNotInitialized, and stderr
 * says why. */
hipError_t kp_ctl_or_err(int *fd, uint32_t *features)
{
	struct kfdpool_query q;
	int ret = kfdpool_ctl(&q);

	if (ret < 0) {
		if (kfdpoolErrnoToHip(ret) == hipErrorOutOfMemory)
			return hipErrorOutOfMemory;
		kp_say_ctl_error(ret);
		return hipErrorNotInitialized;
	}
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

/*
 * A new owner pool object around the owner fd @fd of kernel pool @id,
 * listed; it owns @fd from then on.  On failure the caller keeps @fd.
 */
hipError_t kp_owner_pool_new(int fd, const uint8_t id[KFDPOOL_ID_LEN],
			     const hipMemPoolProps *props,
			     const struct kp_backend *be, int dev,
			     const char *busid, hipMemPool_t *mem_pool)
{
	struct ihipMemPoolHandle_t *pool;
	uint64_t granularity = env_granularity();

	if (!granularity)
		return hipErrorInvalidValue;
	pthread_mutex_lock(&kp_mu);
	pool = kp_pool_new();
	if (!pool) {
		pthread_mutex_unlock(&kp_mu);
		return hipErrorOutOfMemory;
	}
	kp_lock(&pool->mu);
	memcpy(pool->id, id, KFDPOOL_ID_LEN);
	pool->fd = fd;
	pool->refs = 1;
	pool->props = *props;
	pool->handle_types = (uint32_t)props->handleTypes;
	pool->be = be;
	pool->dev = dev;
	if (props->location.type == hipMemLocationTypeDevice)
		memcpy(pool->busid, busid, BUSID_LEN);
	pool->granularity = granularity;
	pool->max_size = props->maxSize;
	pool->reuse[0] = pool->reuse[1] = pool->reuse[2] = 1;
	pool->magic = POOL_MAGIC;
	kp_unlock(&pool->mu);
	pool->next = kp_pools;
	kp_pools = pool;
	pthread_mutex_unlock(&kp_mu);
	*mem_pool = pool;
	return hipSuccess;
}

/*
 * clr refuses to make a pool while the calling thread captures in a mode
 * other than relaxed, or any thread captures in global mode, with
 * hipErrorStreamCaptureUnsupported and the captures left as they were
 * (hipMemPoolCreate in hip_mempool.cpp: not in rocm-6.2.2, in
 * ROCm/rocm-systems' newest).  Whether the loaded release does is its own
 * to say: it is asked to make a pool of its own on device @dev, which goes
 * again at once.  Only a runtime with a device can be asked.
 */
static hipError_t create_refused_in_capture(int dev)
{
	const struct kp_runtime *rt = kp_rt_order();
	hipMemPool_t probe = NULL;
	hipMemPoolProps p;
	hipError_t e;

	if (!rt || !rt->hipMemPoolCreate || !rt->hipMemPoolDestroy)
		return hipSuccess;
	memset(&p, 0, sizeof(p));
	p.allocType = hipMemAllocationTypePinned;
	p.location.type = hipMemLocationTypeDevice;
	p.location.id = dev;
	e = rt->hipMemPoolCreate(&probe, &p);
	if (e == hipSuccess)
		rt->hipMemPoolDestroy(probe);
	return e == hipErrorStreamCaptureUnsupported ? e : hipSuccess;
}

/* hipMemPoolCreate, and with KFDPOOL_POOL_PERSIST in @flags a persistent
 * pool, which is kfdpool's whatever its props. */
hipError_t kp_pool_create(hipMemPool_t *mem_pool,
			  const hipMemPoolProps *pool_props, uint32_t flags)
{
	const struct kp_runtime *rt = kp_rt();
	const struct kp_backend *be;
	uint32_t features = 0;
	char name[KFDPOOL_NAME_LEN], busid[BUSID_LEN];
	int device, ctl, fd, ours, dev;
	uint8_t id[KFDPOOL_ID_LEN];
	hipError_t err;

	if (rt && !flags) {
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
	if (!env_granularity())
		return hipErrorInvalidValue;
	device = pool_props->location.type == hipMemLocationTypeDevice;
	dev = device ? pool_props->location.id : 0;
	/* Every pool needs /dev/kfdpool: a module that is missing or closed
	 * to the caller is the answer before any backend is looked at. */
	if (kp_backend_env_check(device))
		return hipErrorInvalidValue;
	err = kp_ctl_or_err(&ctl, &features);
	if (err)
		return err;
	err = kp_pick_backend(rt, device, dev, &be);
	if (err)
		return err;
	err = create_refused_in_capture(dev);
	if (err)
		return err;
	if ((pool_props->handleTypes & hipMemHandleTypeFabric) &&
	    !(features & KFDPOOL_FEATURE_POOL_HANDLE))
		return hipErrorNotSupported;
	if ((flags & KFDPOOL_POOL_PERSIST) &&
	    !(features & KFDPOOL_FEATURE_PERSIST))
		return hipErrorNotSupported;
	/*
	 * The kernel pool's name says where the memory is, for importers:
	 * "hip-h0-..." host, "hip-d<bus id>-..." a device by PCI bus id (an
	 * importer's HIP_VISIBLE_DEVICES may number it differently),
	 * "hip-d<N>-..." a host substitute standing in for device N.
	 */
	if (device)
		kp_bus_id(be, dev, busid, sizeof(busid));
	pthread_mutex_lock(&kp_mu);
	++g_pool_seq;
	if (device && busid[0])
		snprintf(name, sizeof(name), "hip-d%s-%d-%u", busid,
			 (int)getpid(), g_pool_seq);
	else
		snprintf(name, sizeof(name), "hip-%c%d-%d-%u",
			 device ? 'd' : 'h', dev, (int)getpid(), g_pool_seq);
	kp_fd_lock();
	fd = kp_fd_made(kfdpool_pool_create_flags(ctl, pool_props->maxSize,
				(uint32_t)pool_props->handleTypes,
				flags, name, id));
	pthread_mutex_unlock(&kp_mu);
	if (fd == -EDQUOT)
		kp_say_quota(KP_QUOTA_POOL, pool_props->maxSize);
	if (fd < 0)
		return kfdpoolErrnoToHip(fd);
	err = kp_owner_pool_new(fd, id, pool_props, be, dev, busid, mem_pool);
	if (err) {
		/* A persistent pool nobody could use would stay: end it. */
		if (flags & KFDPOOL_POOL_PERSIST)
			kfdpool_pool_destroy(fd);
		kp_fd_close(fd);
	}
	return err;
}

/* hipMemPoolDestroy may wait: it gives back what it can at once. */
static hipError_t pool_destroy(hipMemPool_t mem_pool)
{
	struct ihipMemPoolHandle_t *pool;

	if (!kp_pool_ours(mem_pool))
		KP_FORWARD(hipMemPoolDestroy, (mem_pool));
	pool = kp_pool_lock(mem_pool);
	if (!pool)
		return hipErrorInvalidValue;
	/* An imported pool is one object per process, however often it was
	 * imported: each import is undone by one destroy. */
	if (--pool->refs == 0) {
		pool->destroyed = 1;
		/* Outstanding allocations keep the pool until freed, as in
		 * HIP; free chunks go now, once their frees completed. */
		if (!pool->imported)
			kp_pool_trim(pool, 0, 1);
	}
	kp_pool_put(pool);
	return hipSuccess;
}

hipError_t kp_pool_destroy(hipMemPool_t mem_pool)
{
	struct kp_rel prev = kp_rel_enter(KP_REL_ALL, -1);
	hipError_t e = pool_destroy(mem_pool);

	kp_rel_leave(prev);
	return e;
}

static hipError_t set_granularity(hipMemPool_t mem_pool, size_t bytes)
{
	struct ihipMemPoolHandle_t *pool;
	hipError_t err = hipSuccess;

	if (bytes < MIN_GRANULE || bytes % PAGE)
		return hipErrorInvalidValue;
	pool = kp_pool_lock(mem_pool);
	if (!pool)
		return hipErrorInvalidValue;
	if (pool->imported)
		err = hipErrorInvalidValue;
	else
		pool->granularity = bytes;
	kp_pool_unlock(pool);
	return err;
}

KFDPOOL_EXPORT const char *kfdpoolMemPoolBackend(hipMemPool_t mem_pool)
{
	struct ihipMemPoolHandle_t *pool = kp_pool_lock(mem_pool);
	const char *name;

	if (!pool)
		return NULL;
	name = pool->be ? pool->be->name : "mmap";
	kp_pool_unlock(pool);
	return name;
}

static hipError_t get_stats(hipMemPool_t mem_pool,
			    struct kfdpool_pool_stats *stats)
{
	struct ihipMemPoolHandle_t *pool;
	int ret;

	if (!stats)
		return hipErrorInvalidValue;
	pool = kp_pool_lock(mem_pool);
	if (!pool)
		return hipErrorInvalidValue;
	ret = kfdpool_pool_stats(pool->fd, 0, stats);
	kp_pool_unlock(pool);
	return kfdpoolErrnoToHip(ret);
}

/* ---- attributes ---- */

static hipError_t get_attribute(hipMemPool_t mem_pool, hipMemPoolAttr attr,
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
	pool = kp_pool_lock(mem_pool);
	if (!pool)
		return hipErrorInvalidValue;
	if (attr <= hipMemPoolReuseAllowInternalDependencies) {
		*(int *)value = pool->reuse[attr - 1];
		goto out;
	}
	if (attr == hipMemPoolAttrReleaseThreshold) {
		*(uint64_t *)value = pool->threshold;
		goto out;
	}
	/*
	 * Used bytes are HIP's: the allocated bytes, the library's own count
	 * in the pool that allocates.  An importer does not see the
	 * exporter's allocations: it reports the kernel's used bytes, the
	 * bytes of the chunks with exported allocations.  Reserved bytes
	 * are the kernel's (the pinned chunks) on both sides.
	 */
	if (!pool->imported && (attr == hipMemPoolAttrUsedMemCurrent ||
				attr == hipMemPoolAttrUsedMemHigh)) {
		*(uint64_t *)value = attr == hipMemPoolAttrUsedMemCurrent ?
				     pool->used : pool->used_high;
		goto out;
	}
	ret = kfdpool_pool_stats(pool->fd, 0, &st);
	if (ret) {
		err = kfdpoolErrnoToHip(ret);
		goto out;
	}
	switch (attr) {
	case hipMemPoolAttrReservedMemCurrent:
		v = st.reserved_bytes;
		break;
	case hipMemPoolAttrReservedMemHigh:
		v = st.reserved_high;
		break;
	case hipMemPoolAttrUsedMemCurrent:
		v = st.used_bytes;
		break;
	default:
		v = st.used_high;
		break;
	}
	*(uint64_t *)value = v;
out:
	kp_pool_unlock(pool);
	return err;
}

static hipError_t set_attribute(hipMemPool_t mem_pool, hipMemPoolAttr attr,
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
	pool = kp_pool_lock(mem_pool);
	if (!pool)
		return hipErrorInvalidValue;
	switch (attr) {
	case hipMemPoolAttrReleaseThreshold:
		pool->threshold = *(uint64_t *)value;
		/* What is above it goes now (the runtime waiting as it
		 * does); chunks whose frees have not completed stay. */
		if (!pool->imported) {
			struct kp_rel prev = kp_rel_enter(KP_REL_ALL, -1);

			kp_pool_trim(pool, pool->threshold, 0);
			kp_pool_put(pool);
			kp_rel_leave(prev);
			return hipSuccess;
		}
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
		/* The reuse rules, which pool/mem.c follows. */
		pool->reuse[attr - 1] = *(int *)value;
		break;
	}
	kp_pool_put(pool);
	return err;
}

/* ---- access ---- */

static int pool_is_device(const struct ihipMemPoolHandle_t *pool)
{
	return pool->props.location.type == hipMemLocationTypeDevice;
}

/*
 * HIP_VERSION from which clr's hipMemPoolSetAccess checks every descriptor
 * before it applies any, takes no access for a peer, and answers read-only
 * access on the pool's own device with hipErrorNotSupported
 * (ROCm/rocm-systems projects/clr/hipamd/src/hip_mempool.cpp, merged after
 * 7.2 had branched).  Up to 7.2 (rocm-6.2.2's code) no access at all is
 * hipErrorInvalidDevice and read-only access on the own device is taken
 * and ignored.
 */
#define HIP_SETACCESS_CHECKED_VERSION 70300000

/* Whether @loc (a host, or a device clr has) is where @pool's memory is. */
static int is_own(const struct ihipMemPoolHandle_t *pool,
		  const hipMemLocation *loc)
{
	if (!pool_is_device(pool))
		return loc->type == hipMemLocationTypeHost;
	return loc->type == hipMemLocationTypeDevice &&
	       loc->id == pool->props.location.id;
}

/* Devices a location may name: the runtime's (or kfd's), at most as many
 * as a pool records access for. */
static int access_devices(void)
{
	int n = kp_device_count();

	return n < MAX_DEVS ? n : MAX_DEVS;
}

/*
 * One descriptor of hipMemPoolSetAccess, as clr checks it (hip_mempool.cpp,
 * the order of its checks).  A host pool, which clr has not, names its own
 * location as the host: read-write only.  Access flag 2 is none of HIP's.
 */
static hipError_t check_desc(const struct ihipMemPoolHandle_t *pool,
			     const hipMemAccessDesc *d, int ndev, int checked)
{
	int own;

	if (d->location.type == hipMemLocationTypeHost && !pool_is_device(pool))
		return d->flags == hipMemAccessFlagsProtReadWrite ?
		       hipSuccess : hipErrorInvalidValue;
	if (d->location.type != hipMemLocationTypeDevice)
		return hipErrorInvalidValue;
	if (d->location.id < 0 || d->location.id >= ndev)
		return hipErrorInvalidDevice;
	own = is_own(pool, &d->location);
	if (!checked && d->flags == hipMemAccessFlagsProtNone)
		return hipErrorInvalidDevice;
	if (d->flags > hipMemAccessFlagsProtReadWrite)
		return hipErrorInvalidValue;
	if (checked && own && d->flags == hipMemAccessFlagsProtNone)
		return hipErrorInvalidDevice;
	if (checked && own && d->flags == hipMemAccessFlagsProtRead)
		return hipErrorNotSupported;
	if (d->flags != hipMemAccessFlagsProtNone &&
	    d->flags != hipMemAccessFlagsProtRead &&
	    d->flags != hipMemAccessFlagsProtReadWrite)
		return hipErrorInvalidValue;
	return hipSuccess;
}

static int g_access_said;

/*
 * Map every chunk of @pool for the peer access in @d (unlocked: runtime
 * calls).  The chunks are listed under the lock; one released meanwhile
 * fails its call, which is ignored (it is gone).
 */
static hipError_t map_peers(struct ihipMemPoolHandle_t *pool,
			    const hipMemAccessDesc *d, size_t n)
{
	struct kp_mem *mems = NULL;
	struct kp_chunk *c;
	size_t nm = 0, cap = 0, i;
	int ret = 0;

	for (c = pool->chunks; c; c = c->next)
		if (!KP_GROW(mems, cap, nm + 1))
			mems[nm++] = c->mem;
	pool->busy++;
	kp_pool_unlock(pool);
	for (i = 0; i < nm && !ret; i++) {
		ret = kp_rocr_set_access(&mems[i], d, n);
		if (ret == -EIO)
			ret = 0;	/* a chunk released meanwhile */
	}
	kp_lock(&pool->mu);
	pool->busy--;
	free(mems);
	return ret ? kp_hip_of(ret) : hipSuccess;
}

static hipError_t set_access(hipMemPool_t mem_pool,
			     const hipMemAccessDesc *desc_list, size_t count)
{
	struct ihipMemPoolHandle_t *pool;
	hipMemAccessDesc *peers = NULL;
	hipError_t err = hipSuccess;
	size_t i, npeers = 0;
	int ndev, checked;

	if (!kp_pool_ours(mem_pool))
		KP_FORWARD(hipMemPoolSetAccess, (mem_pool, desc_list, count));
	if (!desc_list)
		return hipErrorInvalidValue;
	ndev = access_devices();
	checked = kp_rt_version(kp_rt()) >= HIP_SETACCESS_CHECKED_VERSION;
	if (count) {
		peers = calloc(count, sizeof(*peers));
		if (!peers)
			return hipErrorOutOfMemory;
	}
	pool = kp_pool_lock(mem_pool);
	if (!pool) {
		free(peers);
		return hipErrorInvalidValue;
	}
	/* clr counts the descriptors against its devices first; a host
	 * pool may name the host too.  Nothing changes before every
	 * descriptor passed (up to 7.2 clr applies those before a bad one). */
	if (count > (size_t)ndev + !pool_is_device(pool)) {
		err = hipErrorInvalidDevice;
		goto out;
	}
	for (i = 0; i < count && !err; i++)
		err = check_desc(pool, &desc_list[i], ndev, checked);
	if (err)
		goto out;
	for (i = 0; i < count; i++) {
		const hipMemAccessDesc *d = &desc_list[i];

		/* The pool's own location keeps read-write access. */
		if (is_own(pool, &d->location) ||
		    d->flags == hipMemAccessFlagsProtNone)
			continue;
		/*
		 * Access from another device needs a mapping.  Host pool
		 * memory is mapped into every GPU where the runtime has one
		 * (it is registered with it): access is as asked.  Device
		 * memory goes into a peer GPU only by the runtime's virtual
		 * memory calls on memory of hipMemCreate (the vmm path),
		 * which the pool maps with hipMemMap.
		 */
		if (!pool_is_device(pool) && kp_rt_order())
			continue;
		if (!pool_is_device(pool) || pool->imported ||
		    pool->be != &kp_backend_rocr ||
		    kp_rocr_path() != KP_RT_VMM) {
			kp_say_once(&g_access_said,
				    "kfdpool: hipMemPoolSetAccess: %s",
				    !pool_is_device(pool) ?
				    "host pools are mapped into GPUs only beside a "
				    "HIP runtime that has a device" :
				    "mapping a device pool into a peer GPU needs "
				    "ROCm >= 6.2 (hipMemSetAccess on memory of "
				    "hipMemCreate), in the pool's own process");
			err = hipErrorNotSupported;
			goto out;
		}
		peers[npeers++] = *d;
	}
	if (npeers)
		err = map_peers(pool, peers, npeers);
	/* Recorded for hipMemPoolGetAccess, and for chunks reserved later
	 * (pool/mem.c maps them too); the own device's stays read-write. */
	if (!err)
		for (i = 0; i < count; i++)
			if (!is_own(pool, &desc_list[i].location))
				pool->access[desc_list[i].location.id] =
					desc_list[i].flags;
out:
	kp_pool_unlock(pool);
	free(peers);
	return err;
}

static hipError_t get_access(hipMemAccessFlags *flags, hipMemPool_t mem_pool,
			     hipMemLocation *location)
{
	struct ihipMemPoolHandle_t *pool;
	hipError_t err = hipSuccess;
	int ndev;

	if (!kp_pool_ours(mem_pool))
		KP_FORWARD(hipMemPoolGetAccess, (flags, mem_pool, location));
	if (!flags || !location)
		return hipErrorInvalidValue;
	ndev = access_devices();
	pool = kp_pool_lock(mem_pool);
	if (!pool)
		return hipErrorInvalidValue;
	/* As clr answers (hip_mempool.cpp): a device it has, else
	 * hipErrorInvalidValue; a host pool's own location is the host. */
	if (location->type == hipMemLocationTypeHost && !pool_is_device(pool))
		*flags = hipMemAccessFlagsProtReadWrite;
	else if (location->type != hipMemLocationTypeDevice ||
		 location->id < 0 || location->id >= ndev)
		err = hipErrorInvalidValue;
	else if (is_own(pool, location))
		*flags = hipMemAccessFlagsProtReadWrite;
	else
		*flags = pool->access[location->id];
	kp_pool_unlock(pool);
	return err;
}

/* ---- the entry points: each answers the thread's last error as clr
 * would (rt/runtime.h) ---- */

KFDPOOL_EXPORT hipError_t hipMemPoolCreate(hipMemPool_t *mem_pool,
					   const hipMemPoolProps *pool_props)
{
	return kp_rt_ret(kp_pool_create(mem_pool, pool_props, 0));
}

KFDPOOL_EXPORT hipError_t hipMemPoolDestroy(hipMemPool_t mem_pool)
{
	return kp_rt_ret(kp_pool_destroy(mem_pool));
}

KFDPOOL_EXPORT hipError_t kfdpoolMemPoolSetGranularity(hipMemPool_t mem_pool,
						       size_t bytes)
{
	return kp_rt_ret(set_granularity(mem_pool, bytes));
}

KFDPOOL_EXPORT hipError_t kfdpoolMemPoolGetStats(hipMemPool_t mem_pool,
					struct kfdpool_pool_stats *stats)
{
	return kp_rt_ret(get_stats(mem_pool, stats));
}

KFDPOOL_EXPORT hipError_t hipMemPoolGetAttribute(hipMemPool_t mem_pool,
						 hipMemPoolAttr attr,
						 void *value)
{
	return kp_rt_ret(get_attribute(mem_pool, attr, value));
}

KFDPOOL_EXPORT hipError_t hipMemPoolSetAttribute(hipMemPool_t mem_pool,
						 hipMemPoolAttr attr,
						 void *value)
{
	return kp_rt_ret(set_attribute(mem_pool, attr, value));
}

KFDPOOL_EXPORT hipError_t hipMemPoolSetAccess(hipMemPool_t mem_pool,
					      const hipMemAccessDesc *desc_list,
					      size_t count)
{
	return kp_rt_ret(set_access(mem_pool, desc_list, count));
}

KFDPOOL_EXPORT hipError_t hipMemPoolGetAccess(hipMemAccessFlags *flags,
					      hipMemPool_t mem_pool,
					      hipMemLocation *location)
{
	return kp_rt_ret(get_access(flags, mem_pool, location));
}

/*
 * A pool of kfdpool's never reaches the runtime: clr's hipDeviceSetMemPool
 * reads the handle as its own hip::MemoryPool, unchecked (hip_mempool.cpp,
 * rocm-5.6.0 to the newest).  kfdpool's pools are not made current
 * (hipMallocAsync would allocate from them with the runtime's rules):
 * hipErrorInvalidValue.  Any other handle is the runtime's.
 */
KFDPOOL_EXPORT hipError_t hipDeviceSetMemPool(int device, hipMemPool_t pool)
{
	const struct kp_runtime *rt = kp_rt();

	if (kp_pool_ours(pool) || !rt || !rt->hipDeviceSetMemPool)
		return kp_rt_ret(hipErrorInvalidValue);
	kp_rt_passed();
	return rt->hipDeviceSetMemPool(device, pool);
}

/*
 * The same for a location (ROCm 7.2 and later).  clr's hipMemSetMemPool
 * checks the thread's stream capture first (an unsafe mode fails the call
 * and invalidates the capture), then refuses a NULL pool, and any pool
 * that is not one of its own (hip_mempool.cpp): a kfdpool pool is passed
 * on as NULL, so the runtime answers as it does for any pool not its own
 * and never sees ours.  A runtime without the function cannot set any.
 */
KFDPOOL_EXPORT hipError_t hipMemSetMemPool(hipMemLocation *location,
					   hipMemAllocationType type,
					   hipMemPool_t pool)
{
	const struct kp_runtime *rt = kp_rt();

	if (!rt)
		return kp_rt_ret(hipErrorInvalidValue);
	if (!rt->hipMemSetMemPool)
		return kp_rt_ret(hipErrorNotSupported);
	kp_rt_passed();
	return rt->hipMemSetMemPool(location, type,
				    kp_pool_ours(pool) ? NULL : pool);
}
