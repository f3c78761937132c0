// SPDX-License-Identifier: MIT
/*
 * The HIP memory pool API over /dev/kfdpool: pools, their chunks,
 * attributes and access (allocation: hip_mem.c; sharing: hip_ipc.c).
 *
 * A pool (struct ihipMemPoolHandle_t, what hipMemPool_t points to) holds
 * one kfdpool pool fd.  An owner pool reserves chunks from its backend, pins
 * each chunk as one entry and sub-allocates from it (alloc.c).  In a pool
 * with handle types every allocation is exported as one record when it is
 * made: the kernel's used_bytes is then exactly the allocated bytes (what
 * hipMemPoolAttrUsedMemCurrent means), and exporting the allocation's own
 * address costs no system call.  An interior address gets a record of its
 * own, made once and kept with the allocation.  Freeing revokes the
 * allocation's records.
 *
 * An imported pool holds an import fd.  The first pointer imported from a
 * chunk imports the chunk (a dma-buf fd) and maps it; later pointers into
 * the same chunk are validated only (KFDPOOL_IMPORT_VALIDATE).  The chunk
 * is released and unmapped when its last imported pointer is freed.
 *
 * One mutex (kp_mu) serialises the library's pool state; the memory itself
 * is never touched under it.  Addresses are found through one sorted table of
 * ranges (owner chunks and imported chunk mappings).
 *
 * Pools do not survive fork(): a child must not use its parent's pools.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hip_internal.h"

pthread_mutex_t kp_mu = PTHREAD_MUTEX_INITIALIZER;
struct ihipMemPoolHandle_t *kp_pools;
static struct range *g_ranges;
static size_t g_nranges, g_capranges;
static unsigned int g_pool_seq;

/*
 * fork() while another thread holds kp_mu would leave the child's copy
 * locked for ever: hold it across fork so that the child may use the
 * library (for pools of its own).
 */
static void fork_prepare(void)
{
	pthread_mutex_lock(&kp_mu);
}

static void fork_done(void)
{
	pthread_mutex_unlock(&kp_mu);
}

__attribute__((constructor)) static void kp_hip_init(void)
{
	pthread_atfork(fork_prepare, fork_done, fork_done);
}

/* Grow *arr (of *cap elements of @elem bytes) to hold @need. */
int kp_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 8;
	void *p;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

int kp_grow32(void **arr, uint32_t *cap, size_t need, size_t elem)
{
	size_t c = *cap;
	int ret = kp_grow(arr, &c, need, elem);

	*cap = (uint32_t)c;
	return ret;
}

/* ---- the range table ---- */

/* Index of the first range with start > addr. */
static size_t range_upper(uintptr_t addr)
{
	size_t lo = 0, hi = g_nranges;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g_ranges[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct range *kp_range_find(const void *p)
{
	uintptr_t addr = (uintptr_t)p;
	size_t i = range_upper(addr);

	if (!i || addr >= g_ranges[i - 1].end)
		return NULL;
	return &g_ranges[i - 1];
}

int kp_range_add(void *start, uint64_t len, int kind, void *obj)
{
	size_t i;

	if (KP_GROW(g_ranges, g_capranges, g_nranges + 1))
		return -ENOMEM;
	i = range_upper((uintptr_t)start);
	memmove(&g_ranges[i + 1], &g_ranges[i],
		(g_nranges - i) * sizeof(*g_ranges));
	g_ranges[i] = (struct range){ (uintptr_t)start,
				      (uintptr_t)start + len, kind, obj };
	g_nranges++;
	return 0;
}

void kp_range_del(void *start)
{
	struct range *r = kp_range_find(start);
	size_t i;

	if (!r)
		return;
	i = r - g_ranges;
	memmove(&g_ranges[i], &g_ranges[i + 1],
		(g_nranges - i - 1) * sizeof(*g_ranges));
	g_nranges--;
}

/* ---- pools ---- */

struct ihipMemPoolHandle_t *kp_pool_get(hipMemPool_t h)
{
	struct ihipMemPoolHandle_t *p;

	for (p = kp_pools; p; p = p->next)
		if (p == h && !p->destroyed)
			return p;
	return NULL;
}

static void pool_unlink(struct ihipMemPoolHandle_t *pool)
{
	struct ihipMemPoolHandle_t **pp;

	for (pp = &kp_pools; *pp; pp = &(*pp)->next) {
		if (*pp == pool) {
			*pp = pool->next;
			return;
		}
	}
}

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

static void release_chunk(struct ihipMemPoolHandle_t *pool, size_t idx)
{
	struct kp_chunk *c = pool->chunks[idx];

	/* Empty: every record of it was revoked when its allocations were
	 * freed.  Imports elsewhere keep the memory (draining entry). */
	kfdpool_unpin(pool->fd, c->entry_id, NULL, NULL);
	kp_range_del(c->mem.addr);
	pool->be->free(&c->mem);
	kp_arena_fini(&c->arena);
	pool->reserved -= c->mem.size;
	memmove(&pool->chunks[idx], &pool->chunks[idx + 1],
		(pool->nchunks - idx - 1) * sizeof(*pool->chunks));
	pool->nchunks--;
	free(c);
}

/*
 * Give empty chunks back, newest first, as long as at least @keep bytes
 * stay reserved (hipMemPoolTrimTo's guarantee; the release threshold is
 * the same trim done after every free).
 */
void kp_pool_trim(struct ihipMemPoolHandle_t *pool, uint64_t keep)
{
	size_t i = pool->nchunks;

	while (i-- > 0) {
		struct kp_chunk *c = pool->chunks[i];

		if (pool->reserved <= keep)
			break;
		if (kp_arena_empty(&c->arena) &&
		    pool->reserved - c->mem.size >= keep)
			release_chunk(pool, i);
	}
}

/* A destroyed pool goes away once nothing of it is in use. */
void kp_pool_maybe_finalize(struct ihipMemPoolHandle_t *pool)
{
	size_t i;

	if (!pool->destroyed)
		return;
	if (pool->imported) {
		if (pool->nients)
			return;
	} else {
		for (i = 0; i < pool->nchunks; i++)
			if (!kp_arena_empty(&pool->chunks[i]->arena))
				return;
		kp_pool_trim(pool, 0);
	}
	pool_unlink(pool);
	close(pool->fd);
	free(pool->chunks);
	free(pool->ients);
	pool->magic = 0;
	free(pool);
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

hipError_t kp_ctl_or_err(int *fd, uint32_t *features)
{
	int ret = kp_ctl_fd();

	if (ret < 0)
		return hipErrorNotInitialized;
	*fd = ret;
	kp_module_info(features, NULL);
	return hipSuccess;
}

/* Number of devices a pool's access list may name. */
int kp_device_count(void)
{
	int n = kp_kfd_device_count();
	const char *e = getenv("KFDPOOL_BACKEND");

	if (!n && e && *e)
		n = 1;		/* the substitute stands in for device 0 */
	return n;
}

KFDPOOL_EXPORT hipError_t hipMemPoolCreate(hipMemPool_t *mem_pool,
					   const hipMemPoolProps *pool_props)
{
	struct ihipMemPoolHandle_t *pool;
	const struct kp_backend *be;
	uint32_t features = 0;
	char name[KFDPOOL_NAME_LEN];
	uint64_t granularity;
	int device, ctl, fd;
	hipError_t err;

	if (!mem_pool || !pool_props)
		return hipErrorInvalidValue;
	err = check_props(pool_props);
	if (err)
		return err;
	granularity = env_granularity();
	if (!granularity)
		return hipErrorInvalidValue;
	device = pool_props->location.type == hipMemLocationTypeDevice;
	err = kp_pick_backend(device, device ? pool_props->location.id : 0, &be);
	if (err)
		return err;
	err = kp_ctl_or_err(&ctl, &features);
	if (err)
		return err;
	if ((pool_props->handleTypes & hipMemHandleTypeFabric) &&
	    !(features & KFDPOOL_FEATURE_POOL_HANDLE))
		return hipErrorNotSupported;

	pool = calloc(1, sizeof(*pool));
	if (!pool)
		return hipErrorOutOfMemory;
	pthread_mutex_lock(&kp_mu);
	snprintf(name, sizeof(name), "hip-%c%d-%d-%u", device ? 'd' : 'h',
		 device ? pool_props->location.id : 0, (int)getpid(),
		 ++g_pool_seq);
	fd = kfdpool_pool_create(ctl, pool_props->maxSize,
				 (uint32_t)pool_props->handleTypes, name,
				 pool->id);
	if (fd < 0) {
		pthread_mutex_unlock(&kp_mu);
		free(pool);
		return kfdpoolErrnoToHip(fd);
	}
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
	pthread_mutex_lock(&kp_mu);
	pool = kp_pool_get(mem_pool);
	if (!pool) {
		err = hipErrorInvalidValue;
		goto out;
	}
	if (count)
		ndev = kp_device_count();
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

	if (!flags || !location)
		return hipErrorInvalidValue;
	err = check_location(location);
	if (err != hipSuccess)
		return err;
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
	} else if (location->id >= kp_device_count()) {
		err = hipErrorInvalidDevice;
	} else {
		*flags = pool->access[location->id];
	}
out:
	pthread_mutex_unlock(&kp_mu);
	return err;
}

