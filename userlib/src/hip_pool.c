// SPDX-License-Identifier: MIT
/*
 * The HIP memory pool API over /dev/kfdpool.
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
 * One mutex serialises the library's pool state; the memory itself is
 * never touched under it.  Addresses are found through one sorted table of
 * ranges (owner chunks and imported chunk mappings).
 *
 * Pools do not survive fork(): a child must not use its parent's pools.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hip_internal.h"
#include "alloc.h"
#include "backend.h"

#define POOL_MAGIC	0x6b706d70
#define ALLOC_ALIGN	256
#define PAGE		4096ULL
#define MIN_GRANULE	(64ULL << 10)
#define DEF_GRANULE	(2ULL << 20)
#define MAX_DEVS	64

struct kp_chunk;

struct kp_alloc {
	struct kp_chunk *chunk;
	uint64_t off, size;
	int dying;			/* queued for free in this call */
	uint32_t nrec, caprec;
	struct kfdpool_record *rec;	/* records of this allocation */
	uint64_t *rec_off;		/* chunk offset each record starts at */
};

struct kp_chunk {
	struct ihipMemPoolHandle_t *pool;
	struct kp_mem mem;
	uint32_t entry_id;
	int dedicated;			/* a large allocation's own chunk */
	struct kp_arena arena;
};

struct kp_iptr {
	void *ptr;
	uint32_t refs;
};

struct kp_ientry {
	struct ihipMemPoolHandle_t *pool;
	uint32_t entry_id;
	struct kp_mem mem;
	struct kp_iptr *ptrs;
	uint32_t nptrs, capptrs;
	uint64_t refs;			/* imported pointers not yet freed */
};

struct ihipMemPoolHandle_t {
	uint32_t magic;
	int fd;
	int imported;
	int destroyed;
	int refs;			/* imports of this pool in the process */
	uint8_t id[KFDPOOL_ID_LEN];
	hipMemPoolProps props;
	uint32_t handle_types;
	const struct kp_backend *be;	/* NULL: imported host pool (mmap) */
	int dev;
	uint64_t granularity, max_size, threshold;
	int reuse[3];
	hipMemAccessFlags access[MAX_DEVS];
	struct kp_chunk **chunks;
	size_t nchunks, capchunks;
	uint64_t reserved;		/* bytes of our chunks */
	uint64_t used, used_high;	/* bytes allocated (library's count) */
	struct kp_ientry **ients;
	size_t nients, capients;
	struct ihipMemPoolHandle_t *next;
};

enum { R_CHUNK = 1, R_IMPORT = 2 };

struct range {
	uintptr_t start, end;
	int kind;
	void *obj;
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct ihipMemPoolHandle_t *g_pools;
static struct range *g_ranges;
static size_t g_nranges, g_capranges;
static unsigned int g_pool_seq;

/* Grow *arr (of *cap elements of @elem bytes) to hold @need. */
static int grow(void **arr, size_t *cap, size_t need, size_t elem)
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

#define GROW(arr, cap, need) \
	grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

static int grow32(void **arr, uint32_t *cap, size_t need, size_t elem)
{
	size_t c = *cap;
	int ret = grow(arr, &c, need, elem);

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

static struct range *range_find(const void *p)
{
	uintptr_t addr = (uintptr_t)p;
	size_t i = range_upper(addr);

	if (!i || addr >= g_ranges[i - 1].end)
		return NULL;
	return &g_ranges[i - 1];
}

static int range_add(void *start, uint64_t len, int kind, void *obj)
{
	size_t i;

	if (GROW(g_ranges, g_capranges, g_nranges + 1))
		return -ENOMEM;
	i = range_upper((uintptr_t)start);
	memmove(&g_ranges[i + 1], &g_ranges[i],
		(g_nranges - i) * sizeof(*g_ranges));
	g_ranges[i] = (struct range){ (uintptr_t)start,
				      (uintptr_t)start + len, kind, obj };
	g_nranges++;
	return 0;
}

static void range_del(void *start)
{
	struct range *r = range_find(start);
	size_t i;

	if (!r)
		return;
	i = r - g_ranges;
	memmove(&g_ranges[i], &g_ranges[i + 1],
		(g_nranges - i - 1) * sizeof(*g_ranges));
	g_nranges--;
}

/* ---- pools ---- */

static struct ihipMemPoolHandle_t *pool_get(hipMemPool_t h)
{
	struct ihipMemPoolHandle_t *p;

	for (p = g_pools; p; p = p->next)
		if (p == h && !p->destroyed)
			return p;
	return NULL;
}

static void pool_unlink(struct ihipMemPoolHandle_t *pool)
{
	struct ihipMemPoolHandle_t **pp;

	for (pp = &g_pools; *pp; pp = &(*pp)->next) {
		if (*pp == pool) {
			*pp = pool->next;
			return;
		}
	}
}

static uint64_t env_granularity(void)
{
	const char *e = getenv("KFDPOOL_CHUNK_SIZE");
	unsigned long long v;
	char *end;

	if (!e || !*e)
		return DEF_GRANULE;
	v = strtoull(e, &end, 0);
	if (*end == 'k' || *end == 'K')
		v <<= 10;
	else if (*end == 'm' || *end == 'M')
		v <<= 20;
	if (v < MIN_GRANULE || v % PAGE)
		return DEF_GRANULE;
	return v;
}

static void release_chunk(struct ihipMemPoolHandle_t *pool, size_t idx)
{
	struct kp_chunk *c = pool->chunks[idx];

	/* Empty: every record of it was revoked when its allocations were
	 * freed.  Imports elsewhere keep the memory (draining entry). */
	kfdpool_unpin(pool->fd, c->entry_id, NULL, NULL);
	range_del(c->mem.addr);
	pool->be->free(&c->mem);
	kp_arena_fini(&c->arena);
	pool->reserved -= c->mem.size;
	memmove(&pool->chunks[idx], &pool->chunks[idx + 1],
		(pool->nchunks - idx - 1) * sizeof(*pool->chunks));
	pool->nchunks--;
	free(c);
}

/* Give empty chunks back while more than @keep bytes are reserved. */
static void pool_trim(struct ihipMemPoolHandle_t *pool, uint64_t keep)
{
	size_t i = pool->nchunks;

	while (i-- > 0) {
		if (pool->reserved <= keep)
			break;
		if (kp_arena_empty(&pool->chunks[i]->arena))
			release_chunk(pool, i);
	}
}

/* A destroyed pool goes away once nothing of it is in use. */
static void pool_maybe_finalize(struct ihipMemPoolHandle_t *pool)
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
		pool_trim(pool, 0);
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

static hipError_t pick_backend(int device, int dev,
			       const struct kp_backend **be)
{
	int err, n;

	*be = kp_backend_pick(device, &err);
	if (!*be) {
		if (err == -EINVAL)	/* KFDPOOL_BACKEND names nothing usable */
			return hipErrorInvalidValue;
		return device ? hipErrorNoDevice : kfdpoolErrnoToHip(err);
	}
	if (device) {
		/* A substitute backend stands in for device 0 only. */
		n = (*be)->device ? kp_kfd_device_count() : 1;
		if (dev >= n)
			return hipErrorInvalidDevice;
	}
	return hipSuccess;
}

static hipError_t ctl_or_err(int *fd, uint32_t *features)
{
	int ret = kp_ctl_fd();

	if (ret < 0)
		return hipErrorNotInitialized;
	*fd = ret;
	kp_module_info(features, NULL);
	return hipSuccess;
}

/* Number of devices a pool's access list may name. */
static int device_count(void)
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
	int device, ctl, fd;
	hipError_t err;

	if (!mem_pool || !pool_props)
		return hipErrorInvalidValue;
	err = check_props(pool_props);
	if (err)
		return err;
	device = pool_props->location.type == hipMemLocationTypeDevice;
	err = pick_backend(device, device ? pool_props->location.id : 0, &be);
	if (err)
		return err;
	err = ctl_or_err(&ctl, &features);
	if (err)
		return err;
	if ((pool_props->handleTypes & hipMemHandleTypeFabric) &&
	    !(features & KFDPOOL_FEATURE_POOL_HANDLE))
		return hipErrorNotSupported;

	pool = calloc(1, sizeof(*pool));
	if (!pool)
		return hipErrorOutOfMemory;
	pthread_mutex_lock(&g_mu);
	snprintf(name, sizeof(name), "hip-%c%d-%d-%u", device ? 'd' : 'h',
		 device ? pool_props->location.id : 0, (int)getpid(),
		 ++g_pool_seq);
	fd = kfdpool_pool_create(ctl, pool_props->maxSize,
				 (uint32_t)pool_props->handleTypes, name,
				 pool->id);
	if (fd < 0) {
		pthread_mutex_unlock(&g_mu);
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
	pool->granularity = env_granularity();
	pool->max_size = pool_props->maxSize;
	pool->reuse[0] = pool->reuse[1] = pool->reuse[2] = 1;
	pool->next = g_pools;
	g_pools = pool;
	pthread_mutex_unlock(&g_mu);
	*mem_pool = pool;
	return hipSuccess;
}

KFDPOOL_EXPORT hipError_t hipMemPoolDestroy(hipMemPool_t mem_pool)
{
	struct ihipMemPoolHandle_t *pool;

	pthread_mutex_lock(&g_mu);
	pool = pool_get(mem_pool);
	if (!pool) {
		pthread_mutex_unlock(&g_mu);
		return hipErrorInvalidValue;
	}
	/* An imported pool is one object per process, however often it was
	 * imported: each import is undone by one destroy. */
	if (--pool->refs == 0) {
		pool->destroyed = 1;
		/* Outstanding allocations keep the pool until freed, as in
		 * HIP; free chunks go now. */
		if (!pool->imported)
			pool_trim(pool, 0);
		pool_maybe_finalize(pool);
	}
	pthread_mutex_unlock(&g_mu);
	return hipSuccess;
}

KFDPOOL_EXPORT hipError_t kfdpoolMemPoolSetGranularity(hipMemPool_t mem_pool,
						       size_t bytes)
{
	struct ihipMemPoolHandle_t *pool;
	hipError_t err = hipSuccess;

	if (bytes < MIN_GRANULE || bytes % PAGE)
		return hipErrorInvalidValue;
	pthread_mutex_lock(&g_mu);
	pool = pool_get(mem_pool);
	if (!pool || pool->imported)
		err = hipErrorInvalidValue;
	else
		pool->granularity = bytes;
	pthread_mutex_unlock(&g_mu);
	return err;
}

KFDPOOL_EXPORT const char *kfdpoolMemPoolBackend(hipMemPool_t mem_pool)
{
	struct ihipMemPoolHandle_t *pool;
	const char *name = NULL;

	pthread_mutex_lock(&g_mu);
	pool = pool_get(mem_pool);
	if (pool)
		name = pool->be ? pool->be->name : "mmap";
	pthread_mutex_unlock(&g_mu);
	return name;
}

KFDPOOL_EXPORT hipError_t kfdpoolMemPoolGetStats(hipMemPool_t mem_pool,
					struct kfdpool_pool_stats *stats)
{
	struct ihipMemPoolHandle_t *pool;
	int ret = -EINVAL;

	if (!stats)
		return hipErrorInvalidValue;
	pthread_mutex_lock(&g_mu);
	pool = pool_get(mem_pool);
	if (pool)
		ret = kfdpool_pool_stats(pool->fd, 0, stats);
	pthread_mutex_unlock(&g_mu);
	return kfdpoolErrnoToHip(ret);
}

/* ---- allocation ---- */

static int chunk_new(struct ihipMemPoolHandle_t *pool, uint64_t size,
		     int dedicated, struct kp_chunk **out)
{
	struct kp_chunk *c;
	int ret;

	if (pool->max_size && pool->reserved + size > pool->max_size)
		return -ENOSPC;
	if (GROW(pool->chunks, pool->capchunks, pool->nchunks + 1))
		return -ENOMEM;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->pool = pool;
	c->dedicated = dedicated;
	ret = kp_arena_init(&c->arena, size, ALLOC_ALIGN);
	if (ret)
		goto out_free;
	ret = pool->be->alloc(pool->dev, size, &c->mem);
	if (ret)
		goto out_arena;
	ret = kfdpool_pin(pool->fd, c->mem.dmabuf_fd,
			  (uintptr_t)c->mem.addr, NULL, &c->entry_id);
	/* The pin (and the mapping) hold the dma-buf: one fd fewer per
	 * chunk. */
	close(c->mem.dmabuf_fd);
	c->mem.dmabuf_fd = -1;
	if (ret)
		goto out_mem;
	ret = range_add(c->mem.addr, size, R_CHUNK, c);
	if (ret) {
		kfdpool_unpin(pool->fd, c->entry_id, NULL, NULL);
		goto out_mem;
	}
	pool->chunks[pool->nchunks++] = c;
	pool->reserved += size;
	*out = c;
	return 0;
out_mem:
	pool->be->free(&c->mem);
out_arena:
	kp_arena_fini(&c->arena);
out_free:
	free(c);
	return ret;
}

static int alloc_add_record(struct kp_alloc *a, uint64_t off,
			    const struct kfdpool_record *rec)
{
	if (grow32((void **)&a->rec, &a->caprec, a->nrec + 1, sizeof(*a->rec)))
		return -ENOMEM;
	/* rec_off grows with rec: same capacity. */
	{
		uint64_t *p = realloc(a->rec_off, a->caprec * sizeof(*p));

		if (!p)
			return -ENOMEM;
		a->rec_off = p;
	}
	a->rec[a->nrec] = *rec;
	a->rec_off[a->nrec] = off;
	a->nrec++;
	return 0;
}

static void alloc_destroy(struct kp_alloc *a)
{
	free(a->rec);
	free(a->rec_off);
	free(a);
}

static int pool_alloc(struct ihipMemPoolHandle_t *pool, uint64_t size,
		      void **ptr)
{
	struct kp_chunk *c = NULL;
	struct kfdpool_record rec;
	struct kp_alloc *a;
	uint64_t off, csize;
	size_t i;
	int ret;

	if (size > UINT64_MAX - PAGE)
		return -ENOMEM;
	size = (size + ALLOC_ALIGN - 1) & ~(uint64_t)(ALLOC_ALIGN - 1);
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	if (size > pool->granularity) {
		ret = chunk_new(pool, (size + PAGE - 1) & ~(PAGE - 1), 1, &c);
		if (ret)
			goto out_free;
		ret = kp_arena_alloc(&c->arena, size, &off);
	} else {
		ret = -ENOMEM;
		for (i = 0; i < pool->nchunks && ret; i++) {
			if (pool->chunks[i]->dedicated)
				continue;
			ret = kp_arena_alloc(&pool->chunks[i]->arena, size, &off);
			if (!ret)
				c = pool->chunks[i];
		}
		if (ret) {
			csize = pool->granularity;
			/* Near maxSize, a smaller chunk may still fit. */
			if (pool->max_size &&
			    pool->max_size - pool->reserved < csize)
				csize = (pool->max_size - pool->reserved) &
					~(PAGE - 1);
			if (csize < size) {
				ret = -ENOSPC;
				goto out_free;
			}
			ret = chunk_new(pool, csize, 0, &c);
			if (ret)
				goto out_free;
			ret = kp_arena_alloc(&c->arena, size, &off);
		}
	}
	if (ret)
		goto out_trim;
	a->chunk = c;
	a->off = off;
	a->size = size;
	kp_arena_set_priv(&c->arena, off, a);
	if (pool->handle_types) {
		ret = kfdpool_export(pool->fd, c->entry_id, off, size, &rec);
		if (!ret)
			ret = alloc_add_record(a, off, &rec);
		if (ret) {
			if (a->nrec)
				kfdpool_revoke(pool->fd, &a->rec[0]);
			kp_arena_free(&c->arena, off, NULL);
			goto out_trim;
		}
	}
	pool->used += size;
	if (pool->used > pool->used_high)
		pool->used_high = pool->used;
	*ptr = (char *)c->mem.addr + off;
	return 0;
out_trim:
	pool_trim(pool, pool->threshold);
out_free:
	free(a->rec);
	free(a->rec_off);
	free(a);
	return ret;
}

KFDPOOL_EXPORT hipError_t hipMallocFromPoolAsync(void **dev_ptr, size_t size,
						 hipMemPool_t mem_pool,
						 hipStream_t stream)
{
	struct ihipMemPoolHandle_t *pool;
	int ret;

	(void)stream;
	if (!dev_ptr || !size)
		return hipErrorInvalidValue;
	pthread_mutex_lock(&g_mu);
	pool = pool_get(mem_pool);
	if (!pool || pool->imported) {
		pthread_mutex_unlock(&g_mu);
		return hipErrorInvalidValue;
	}
	ret = pool_alloc(pool, size, dev_ptr);
	pthread_mutex_unlock(&g_mu);
	return ret == -ENOSPC || ret == -EDQUOT ? hipErrorOutOfMemory :
	       kfdpoolErrnoToHip(ret);
}

/* ---- freeing, batched ---- */

/* Pending revokes or releases of one pool fd, flushed as one batch. */
struct pending {
	int fd;
	size_t n, cap;
	struct kfdpool_revoke *rev;
	size_t nrel, caprel;
	struct kfdpool_release *rel;
};

static void pending_flush(struct pending *pd)
{
	if (pd->n)
		kfdpool_revokev(pd->fd, pd->rev, pd->n);
	if (pd->nrel)
		kfdpool_releasev(pd->fd, pd->rel, pd->nrel);
	pd->n = pd->nrel = 0;
}

static int pending_fd(struct pending *pd, int fd)
{
	if (pd->fd != fd) {
		pending_flush(pd);
		pd->fd = fd;
	}
	return 0;
}

static void free_ientry(struct kp_ientry *ie)
{
	struct ihipMemPoolHandle_t *pool = ie->pool;
	size_t i;

	range_del(ie->mem.addr);
	if (pool->be)
		pool->be->unmap_import(&ie->mem);
	else
		kp_host_unmap_import(&ie->mem);
	for (i = 0; i < pool->nients; i++) {
		if (pool->ients[i] == ie) {
			memmove(&pool->ients[i], &pool->ients[i + 1],
				(pool->nients - i - 1) * sizeof(*pool->ients));
			pool->nients--;
			break;
		}
	}
	free(ie->ptrs);
	free(ie);
}

/*
 * Free @n pointers.  Pass 1 finds each pointer's allocation or import and
 * queues its revokes (owner) or its chunk's release (importer, last
 * pointer); pass 2 sends them a batch per pool fd; pass 3 gives the memory
 * back.  Called with g_mu held.
 */
static hipError_t free_many(void *const *ptrs, size_t n, hipError_t *res,
			    int null_ok)
{
	struct pending pd = { .fd = -1 };
	void **done = NULL;	/* kp_alloc or kp_ientry, by index */
	int *kind = NULL;
	hipError_t first = hipSuccess;
	size_t i, j;

	done = calloc(n ? n : 1, sizeof(*done));
	kind = calloc(n ? n : 1, sizeof(*kind));
	if (!done || !kind) {
		free(done);
		free(kind);
		return hipErrorOutOfMemory;
	}
	for (i = 0; i < n; i++) {
		hipError_t e = hipSuccess;
		struct range *r;

		if (!ptrs[i]) {
			e = null_ok ? hipSuccess : hipErrorInvalidValue;
			goto next;
		}
		r = range_find(ptrs[i]);
		if (!r) {
			e = hipErrorInvalidValue;
		} else if (r->kind == R_CHUNK) {
			struct kp_chunk *c = r->obj;
			uint64_t off = (uintptr_t)ptrs[i] - r->start, st, sz;
			struct kp_alloc *a;

			if (kp_arena_find(&c->arena, off, &st, &sz,
					  (void **)&a) || st != off ||
			    a->dying) {
				e = hipErrorInvalidValue;
				goto next;
			}
			a->dying = 1;
			done[i] = a;
			kind[i] = R_CHUNK;
			pending_fd(&pd, c->pool->fd);
			for (j = 0; j < a->nrec; j++) {
				if (GROW(pd.rev, pd.cap, pd.n + 1)) {
					/* Unpin at chunk release revokes
					 * what we cannot queue. */
					break;
				}
				memset(&pd.rev[pd.n], 0, sizeof(*pd.rev));
				pd.rev[pd.n++].record = a->rec[j];
			}
		} else {
			struct kp_ientry *ie = r->obj;

			for (j = 0; j < ie->nptrs; j++)
				if (ie->ptrs[j].ptr == ptrs[i] &&
				    ie->ptrs[j].refs)
					break;
			if (j == ie->nptrs) {
				e = hipErrorInvalidValue;
				goto next;
			}
			ie->ptrs[j].refs--;
			if (--ie->refs == 0) {
				done[i] = ie;
				kind[i] = R_IMPORT;
				pending_fd(&pd, ie->pool->fd);
				if (!GROW(pd.rel, pd.caprel, pd.nrel + 1)) {
					memset(&pd.rel[pd.nrel], 0,
					       sizeof(*pd.rel));
					pd.rel[pd.nrel++].entry_id =
						ie->entry_id;
				}
			}
		}
next:
		if (res)
			res[i] = e;
		if (e && !first)
			first = e;
	}
	pending_flush(&pd);

	for (i = 0; i < n; i++) {
		if (kind[i] == R_CHUNK) {
			struct kp_alloc *a = done[i];
			struct ihipMemPoolHandle_t *pool = a->chunk->pool;

			kp_arena_free(&a->chunk->arena, a->off, NULL);
			pool->used -= a->size;
			alloc_destroy(a);
			pool_trim(pool, pool->destroyed ? 0 : pool->threshold);
			pool_maybe_finalize(pool);
		} else if (kind[i] == R_IMPORT) {
			struct kp_ientry *ie = done[i];
			struct ihipMemPoolHandle_t *pool = ie->pool;

			free_ientry(ie);
			pool_maybe_finalize(pool);
		}
	}
	free(pd.rev);
	free(pd.rel);
	free(done);
	free(kind);
	return first;
}

KFDPOOL_EXPORT hipError_t hipFree(void *ptr)
{
	hipError_t e;

	if (!ptr)
		return hipSuccess;
	pthread_mutex_lock(&g_mu);
	e = free_many(&ptr, 1, NULL, 1);
	pthread_mutex_unlock(&g_mu);
	return e;
}

KFDPOOL_EXPORT hipError_t hipFreeAsync(void *dev_ptr, hipStream_t stream)
{
	hipError_t e;

	(void)stream;
	if (!dev_ptr)
		return hipErrorInvalidValue;
	pthread_mutex_lock(&g_mu);
	e = free_many(&dev_ptr, 1, NULL, 0);
	pthread_mutex_unlock(&g_mu);
	return e;
}

KFDPOOL_EXPORT hipError_t kfdpoolFreePointers(void *const *ptrs, size_t count,
					      hipError_t *results)
{
	hipError_t e;

	if (!ptrs && count)
		return hipErrorInvalidValue;
	pthread_mutex_lock(&g_mu);
	e = free_many(ptrs, count, results, 1);
	pthread_mutex_unlock(&g_mu);
	return e;
}

KFDPOOL_EXPORT hipError_t hipMemPoolTrimTo(hipMemPool_t mem_pool,
					   size_t min_bytes_to_hold)
{
	struct ihipMemPoolHandle_t *pool;

	pthread_mutex_lock(&g_mu);
	pool = pool_get(mem_pool);
	if (!pool) {
		pthread_mutex_unlock(&g_mu);
		return hipErrorInvalidValue;
	}
	if (!pool->imported)
		pool_trim(pool, min_bytes_to_hold);
	pthread_mutex_unlock(&g_mu);
	return hipSuccess;
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
	pthread_mutex_lock(&g_mu);
	pool = pool_get(mem_pool);
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
	pthread_mutex_unlock(&g_mu);
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
	pthread_mutex_lock(&g_mu);
	pool = pool_get(mem_pool);
	if (!pool) {
		err = hipErrorInvalidValue;
		goto out;
	}
	switch (attr) {
	case hipMemPoolAttrReleaseThreshold:
		pool->threshold = *(uint64_t *)value;
		if (!pool->imported)
			pool_trim(pool, pool->threshold);
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
	pthread_mutex_unlock(&g_mu);
	return err;
}

/* ---- access ---- */

static int pool_is_device(const struct ihipMemPoolHandle_t *pool)
{
	return pool->props.location.type == hipMemLocationTypeDevice;
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
		if (d->location.type != hipMemLocationTypeDevice &&
		    d->location.type != hipMemLocationTypeHost)
			return hipErrorInvalidValue;
		if (d->location.type == hipMemLocationTypeDevice &&
		    (d->location.id < 0 || d->location.id >= MAX_DEVS))
			return hipErrorInvalidDevice;
	}
	pthread_mutex_lock(&g_mu);
	pool = pool_get(mem_pool);
	if (!pool) {
		err = hipErrorInvalidValue;
		goto out;
	}
	if (count)
		ndev = device_count();
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
	pthread_mutex_unlock(&g_mu);
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
	if (location->type != hipMemLocationTypeDevice &&
	    location->type != hipMemLocationTypeHost)
		return hipErrorInvalidValue;
	if (location->type == hipMemLocationTypeDevice &&
	    (location->id < 0 || location->id >= MAX_DEVS))
		return hipErrorInvalidDevice;
	pthread_mutex_lock(&g_mu);
	pool = pool_get(mem_pool);
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
	} else if (location->id >= device_count()) {
		err = hipErrorInvalidDevice;
	} else {
		*flags = pool->access[location->id];
	}
out:
	pthread_mutex_unlock(&g_mu);
	return err;
}

/* ---- sharing the pool ---- */

KFDPOOL_EXPORT hipError_t hipMemPoolExportToShareableHandle(
	void *shared_handle, hipMemPool_t mem_pool,
	hipMemAllocationHandleType handle_type, unsigned int flags)
{
	struct ihipMemPoolHandle_t *pool;
	struct kfdpool_pool_handle h;
	hipError_t err = hipSuccess;
	int ret;

	if (!shared_handle || flags)
		return hipErrorInvalidValue;
	if (handle_type == hipMemHandleTypeWin32 ||
	    handle_type == hipMemHandleTypeWin32Kmt)
		return hipErrorNotSupported;
	if (handle_type != hipMemHandleTypePosixFileDescriptor &&
	    handle_type != hipMemHandleTypeFabric)
		return hipErrorInvalidValue;
	pthread_mutex_lock(&g_mu);
	pool = pool_get(mem_pool);
	if (!pool || pool->imported ||
	    !(pool->handle_types & (uint32_t)handle_type)) {
		err = hipErrorInvalidValue;
		goto out;
	}
	if (handle_type == hipMemHandleTypePosixFileDescriptor) {
		ret = kfdpool_pool_export(pool->fd);
		if (ret < 0)
			err = kfdpoolErrnoToHip(ret);
		else
			*(int *)shared_handle = ret;
	} else {
		ret = kfdpool_handle_export(pool->fd, KFDPOOL_HANDLE_POLICY_UID,
					    0, &h);
		if (ret < 0)
			err = kfdpoolErrnoToHip(ret);
		else
			memcpy(shared_handle, &h, sizeof(h));
	}
out:
	pthread_mutex_unlock(&g_mu);
	return err;
}

/* The exporter's pool name tells where the memory lives: "hip-d<N>-..."
 * for device N, "hip-h0-..." for host. */
static void props_from_name(const char *name, hipMemPoolProps *props)
{
	char kind;
	int id;

	props->allocType = hipMemAllocationTypePinned;
	props->location.type = hipMemLocationTypeHost;
	props->location.id = 0;
	if (sscanf(name, "hip-%c%d-", &kind, &id) == 2 && kind == 'd') {
		props->location.type = hipMemLocationTypeDevice;
		props->location.id = id;
	}
}

KFDPOOL_EXPORT hipError_t hipMemPoolImportFromShareableHandle(
	hipMemPool_t *mem_pool, void *shared_handle,
	hipMemAllocationHandleType handle_type, unsigned int flags)
{
	struct ihipMemPoolHandle_t *pool, *p;
	struct kfdpool_pool_stats st;
	const struct kp_backend *be = NULL;
	hipError_t err = hipSuccess;
	int fd, ret, ctl;
	uint32_t features = 0;

	if (!mem_pool || flags)
		return hipErrorInvalidValue;
	if (handle_type == hipMemHandleTypeWin32 ||
	    handle_type == hipMemHandleTypeWin32Kmt)
		return hipErrorNotSupported;
	if (handle_type == hipMemHandleTypePosixFileDescriptor) {
		if ((intptr_t)shared_handle < 0 ||
		    (intptr_t)shared_handle > INT32_MAX)
			return hipErrorInvalidValue;
	} else if (handle_type == hipMemHandleTypeFabric) {
		if (!shared_handle)
			return hipErrorInvalidValue;
	} else {
		return hipErrorInvalidValue;
	}

	if (handle_type == hipMemHandleTypeFabric) {
		err = ctl_or_err(&ctl, &features);
		if (err)
			return err;
		if (!(features & KFDPOOL_FEATURE_POOL_HANDLE))
			return hipErrorNotSupported;
		fd = kfdpool_pool_import_handle(ctl, shared_handle);
		if (fd < 0)
			return kfdpoolErrnoToHip(fd);
	} else {
		/* The caller keeps its fd; the pool holds its own. */
		fd = fcntl((int)(intptr_t)shared_handle, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return hipErrorInvalidValue;
	}
	ret = kfdpool_pool_stats(fd, 0, &st);
	if (ret || st.mode != KFDPOOL_MODE_IMPORT) {
		/* Not a pool fd, or an owner fd passed as a handle. */
		close(fd);
		return ret ? kfdpoolErrnoToHip(ret) : hipErrorInvalidValue;
	}

	pthread_mutex_lock(&g_mu);
	for (p = g_pools; p; p = p->next) {
		if (p->imported && !p->destroyed &&
		    !memcmp(p->id, st.id, sizeof(p->id))) {
			/* The same pool twice: the same hipMemPool_t. */
			p->refs++;
			*mem_pool = p;
			close(fd);
			goto out;
		}
	}
	pool = calloc(1, sizeof(*pool));
	if (!pool) {
		close(fd);
		err = hipErrorOutOfMemory;
		goto out;
	}
	props_from_name(st.name, &pool->props);
	pool->props.handleTypes = (hipMemAllocationHandleType)st.handle_types;
	if (pool->props.location.type == hipMemLocationTypeDevice) {
		err = pick_backend(1, pool->props.location.id, &be);
		if (err) {
			close(fd);
			free(pool);
			goto out;
		}
		/* A host substitute's chunks are mapped like host chunks. */
		if (!be->device)
			be = NULL;
	}
	pool->magic = POOL_MAGIC;
	pool->fd = fd;
	pool->imported = 1;
	pool->refs = 1;
	memcpy(pool->id, st.id, sizeof(pool->id));
	pool->handle_types = st.handle_types;
	pool->be = be;
	pool->dev = pool->props.location.id;
	pool->max_size = st.limit;
	pool->reuse[0] = pool->reuse[1] = pool->reuse[2] = 1;
	pool->next = g_pools;
	g_pools = pool;
	*mem_pool = pool;
out:
	pthread_mutex_unlock(&g_mu);
	return err;
}

/* ---- sharing pointers ---- */

/* Resolve @ptr to its allocation in an exporting pool. */
static hipError_t find_alloc(const void *ptr, struct kp_alloc **ap,
			     uint64_t *offp)
{
	struct range *r = range_find(ptr);
	struct kp_chunk *c;
	uint64_t off, st, sz;

	if (!r || r->kind != R_CHUNK)
		return hipErrorInvalidValue;
	c = r->obj;
	if (!c->pool->handle_types)
		return hipErrorInvalidValue;	/* pool not IPC-capable */
	off = (uintptr_t)ptr - r->start;
	if (kp_arena_find(&c->arena, off, &st, &sz, (void **)ap) ||
	    (*ap)->dying)
		return hipErrorInvalidValue;
	*offp = off;
	return hipSuccess;
}

static int find_record(const struct kp_alloc *a, uint64_t off)
{
	uint32_t i;

	for (i = 0; i < a->nrec; i++)
		if (a->rec_off[i] == off)
			return (int)i;
	return -1;
}

KFDPOOL_EXPORT hipError_t hipMemPoolExportPointer(
	hipMemPoolPtrExportData *export_data, void *dev_ptr)
{
	void *ptrs[1] = { dev_ptr };

	if (!export_data || !dev_ptr)
		return hipErrorInvalidValue;
	return kfdpoolExportPointers(export_data, ptrs, 1, NULL);
}

KFDPOOL_EXPORT hipError_t kfdpoolExportPointers(
	hipMemPoolPtrExportData *export_data, void *const *dev_ptrs,
	size_t count, hipError_t *results)
{
	struct kfdpool_export *ops = NULL;
	struct kp_alloc **allocs = NULL;
	size_t *idx = NULL, nops = 0, i, start;
	hipError_t first = hipSuccess;

	if (count && (!export_data || !dev_ptrs))
		return hipErrorInvalidValue;
	if (!count)
		return hipSuccess;
	ops = calloc(count, sizeof(*ops));
	allocs = calloc(count, sizeof(*allocs));
	idx = calloc(count, sizeof(*idx));
	if (!ops || !allocs || !idx) {
		first = hipErrorOutOfMemory;
		goto out_free;
	}
	pthread_mutex_lock(&g_mu);
	/* Pass 1: records already made are copied; the rest are queued. */
	for (i = 0; i < count; i++) {
		struct kp_alloc *a;
		uint64_t off;
		hipError_t e = dev_ptrs[i] ?
			find_alloc(dev_ptrs[i], &a, &off) :
			hipErrorInvalidValue;
		int k;

		if (results)
			results[i] = e;
		if (e) {
			if (!first)
				first = e;
			memset(&export_data[i], 0, sizeof(export_data[i]));
			continue;
		}
		k = find_record(a, off);
		if (k >= 0) {
			memcpy(&export_data[i], &a->rec[k], sizeof(a->rec[k]));
			continue;
		}
		ops[nops].entry_id = a->chunk->entry_id;
		ops[nops].offset = off;
		ops[nops].size = a->off + a->size - off;
		allocs[nops] = a;
		idx[nops] = i;
		nops++;
	}
	/* Pass 2: one batch per run of the same pool. */
	for (start = 0; start < nops;) {
		int fd = allocs[start]->chunk->pool->fd, ret;
		size_t end = start, k;

		while (end < nops && allocs[end]->chunk->pool->fd == fd)
			end++;
		ret = kfdpool_exportv(fd, ops + start, end - start);
		for (k = start; k < end; k++) {
			struct kp_alloc *a = allocs[k];
			int st = ret < 0 ? ret :
				 k - start < (size_t)ret ? ops[k].status : -EIO;
			int have = st ? -1 : find_record(a, ops[k].offset);
			hipError_t e;

			/* The same interior pointer twice in one call: keep
			 * the first record, revoke the copy. */
			if (have >= 0) {
				kfdpool_revoke(fd, &ops[k].record);
				ops[k].record = a->rec[have];
			} else if (!st &&
				   alloc_add_record(a, ops[k].offset,
						    &ops[k].record)) {
				kfdpool_revoke(fd, &ops[k].record);
				st = -ENOMEM;
			}
			e = kfdpoolErrnoToHip(st);
			if (results)
				results[idx[k]] = e;
			if (e) {
				if (!first)
					first = e;
				memset(&export_data[idx[k]], 0,
				       sizeof(export_data[idx[k]]));
			} else {
				memcpy(&export_data[idx[k]], &ops[k].record,
				       sizeof(export_data[idx[k]]));
			}
		}
		start = end;
	}
	pthread_mutex_unlock(&g_mu);
out_free:
	free(ops);
	free(allocs);
	free(idx);
	return first;
}

static struct kp_ientry *ientry_find(struct ihipMemPoolHandle_t *pool,
				     uint32_t entry_id)
{
	size_t i;

	for (i = 0; i < pool->nients; i++)
		if (pool->ients[i]->entry_id == entry_id)
			return pool->ients[i];
	return NULL;
}

static int ientry_add_ptr(struct kp_ientry *ie, void *ptr)
{
	uint32_t i;

	for (i = 0; i < ie->nptrs; i++) {
		if (ie->ptrs[i].ptr == ptr) {
			ie->ptrs[i].refs++;
			ie->refs++;
			return 0;
		}
	}
	if (grow32((void **)&ie->ptrs, &ie->capptrs, ie->nptrs + 1,
		   sizeof(*ie->ptrs)))
		return -ENOMEM;
	ie->ptrs[ie->nptrs++] = (struct kp_iptr){ ptr, 1 };
	ie->refs++;
	return 0;
}

/* Map a freshly imported chunk.  Consumes @fd. */
static int ientry_new(struct ihipMemPoolHandle_t *pool,
		      const struct kfdpool_import *im, struct kp_ientry **out)
{
	struct kp_ientry *ie;
	int ret;

	if (GROW(pool->ients, pool->capients, pool->nients + 1))
		ret = -ENOMEM;
	else if (!(ie = calloc(1, sizeof(*ie))))
		ret = -ENOMEM;
	else {
		ie->pool = pool;
		ie->entry_id = im->entry_id;
		ret = pool->be ?
		      pool->be->map_import(pool->dev, im->fd, im->entry_size,
					   &ie->mem) :
		      kp_host_map_import(pool->dev, im->fd, im->entry_size,
					 &ie->mem);
		if (!ret) {
			ret = range_add(ie->mem.addr, im->entry_size,
					R_IMPORT, ie);
			if (ret) {
				if (pool->be)
					pool->be->unmap_import(&ie->mem);
				else
					kp_host_unmap_import(&ie->mem);
			}
		}
		if (ret)
			free(ie);
	}
	close(im->fd);
	if (ret) {
		kfdpool_release(pool->fd, im->entry_id);
		return ret;
	}
	pool->ients[pool->nients++] = ie;
	*out = ie;
	return 0;
}

KFDPOOL_EXPORT hipError_t hipMemPoolImportPointer(
	void **dev_ptr, hipMemPool_t mem_pool,
	hipMemPoolPtrExportData *export_data)
{
	if (!dev_ptr || !export_data)
		return hipErrorInvalidValue;
	return kfdpoolImportPointers(dev_ptr, mem_pool, export_data, 1, NULL);
}

KFDPOOL_EXPORT hipError_t kfdpoolImportPointers(
	void **dev_ptrs, hipMemPool_t mem_pool,
	const hipMemPoolPtrExportData *export_data, size_t count,
	hipError_t *results)
{
	struct ihipMemPoolHandle_t *pool;
	struct kfdpool_import *ops = NULL;
	hipError_t first = hipSuccess;
	size_t *idx = NULL, nops = 0, i, j;
	int ret = 0;

	if (count && (!dev_ptrs || !export_data))
		return hipErrorInvalidValue;
	if (!count)
		return hipSuccess;
	for (i = 0; i < count; i++) {
		dev_ptrs[i] = NULL;
		if (results)
			results[i] = hipErrorInvalidValue;
	}
	ops = calloc(count, sizeof(*ops));
	idx = calloc(count, sizeof(*idx));
	if (!ops || !idx) {
		free(ops);
		free(idx);
		return hipErrorOutOfMemory;
	}
	pthread_mutex_lock(&g_mu);
	pool = pool_get(mem_pool);
	if (!pool || !pool->imported) {
		first = hipErrorInvalidValue;
		goto out;
	}
	/*
	 * Pass 1: a record that is not of this pool fails here, without a
	 * system call.  The first record of a chunk not yet mapped imports
	 * the chunk; every other one is a validation only.
	 */
	for (i = 0; i < count; i++) {
		struct kfdpool_import *op = &ops[nops];

		memcpy(&op->record, &export_data[i], sizeof(op->record));
		if (op->record.magic != KFDPOOL_RECORD_MAGIC ||
		    memcmp(op->record.pool_id, pool->id, sizeof(pool->id))) {
			if (!first)
				first = hipErrorInvalidValue;
			continue;
		}
		op->flags = KFDPOOL_IMPORT_VALIDATE;
		if (!ientry_find(pool, op->record.entry_id)) {
			for (j = 0; j < nops; j++)
				if (!ops[j].flags && ops[j].record.entry_id ==
				    op->record.entry_id)
					break;
			if (j == nops)
				op->flags = 0;
		}
		idx[nops++] = i;
	}
	if (nops)
		ret = kfdpool_importv(pool->fd, ops, nops);
	/* Pass 2: map new chunks, count the pointers. */
	for (j = 0; j < nops; j++) {
		struct kfdpool_import *op = &ops[j];
		int st = ret < 0 ? ret : j < (size_t)ret ? op->status : -EIO;
		struct kp_ientry *ie = NULL;
		hipError_t e;

		if (!st && !op->flags) {
			st = ientry_new(pool, op, &ie);	/* consumes op->fd */
		} else if (!st) {
			ie = ientry_find(pool, op->record.entry_id);
			if (!ie)
				st = -ENXIO;
		}
		if (!st && op->offset + op->size > ie->mem.size)
			st = -EINVAL;
		if (!st)
			st = ientry_add_ptr(ie, (char *)ie->mem.addr +
					    op->offset);
		e = kfdpoolErrnoToHip(st);
		if (!e)
			dev_ptrs[idx[j]] = (char *)ie->mem.addr + op->offset;
		if (results)
			results[idx[j]] = e;
		if (e && !first)
			first = e;
	}
out:
	pthread_mutex_unlock(&g_mu);
	free(ops);
	free(idx);
	return first;
}
