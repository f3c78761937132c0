/* SPDX-License-Identifier: MIT */
/*
 * The pool allocator's state: pools, chunks, imported chunks, the address
 * table, stream order, and the functions the pool/ files share with the HIP entry
 * points (hip/).  A pool is HIP's hipMemPool_t, so HIP's types are used
 * throughout.
 *
 * Locks, in the order they nest:
 *   kp_mu          the list of pools, creating, importing and finalizing
 *                  pools; never on the allocation path
 *   pool->mu       one pool: its allocator, chunks, imports, queues
 *   kp_addr_mu     writers of the address table (readers take no lock)
 *   the stream table's lock (pool/order.c), the backends' locks
 * No runtime function is ever called with any of them held: the runtime
 * may call back into hip* names that are ours.
 */
#ifndef KFDPOOL_POOL_H
#define KFDPOOL_POOL_H

#ifndef KFDPOOL_HIP_OWN_TYPES
#define KFDPOOL_HIP_OWN_TYPES
#endif
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "kfdpool_hip.h"
#include "native/internal.h"
#include "pool/arena.h"
#include "pool/lock.h"
#include "chunk/backend.h"
#include "rt/runtime.h"

/*
 * When memory goes back (CUDA's rule, and clr's for its own pools): a block
 * freed in stream order is reused by later allocations; what a pool holds
 * above its release threshold is given back at the next synchronising call
 * of the program, never inside hipMallocFromPoolAsync or hipFreeAsync.
 * Those calls (and every call not named below) only mark empty chunks and
 * unused imported mappings; the calls that may give them back say how far
 * they may wait, for the calling thread (kp_rel_enter):
 *
 *   KP_REL_NOWAIT  hipStreamSynchronize, hipEventSynchronize: only what
 *                  goes back without the runtime waiting for any stream
 *                  (a synchronise of one stream never waits for another);
 *   KP_REL_DEV     hipDeviceSynchronize, hipFree: also what the runtime
 *                  gives back by waiting for every stream of the device
 *                  that was just synchronised (kp_rel.dev);
 *   KP_REL_ALL     hipMemPoolTrimTo, hipMemPoolDestroy, setting the release
 *                  threshold: everything, waiting as the runtime waits.
 *
 * What the runtime waits for when a chunk goes back is the chunk's
 * (KP_MEM_WAITS and kp_mem.wait_dev, set by the backend that made it):
 * clr's hipFree and hipHostUnregister wait for every stream of the memory's
 * device (SyncAllStreams), hipMemUnmap for its null stream or every stream.
 */
enum { KP_REL_MARK, KP_REL_NOWAIT, KP_REL_DEV, KP_REL_ALL };
struct kp_rel {
	int mode;
	int dev;
};
extern __thread struct kp_rel kp_rel __attribute__((tls_model("initial-exec")));
extern int kp_deferred;			/* something was marked (atomic) */

static inline struct kp_rel kp_rel_enter(int mode, int dev)
{
	struct kp_rel prev = kp_rel;

	kp_rel.mode = mode;
	kp_rel.dev = dev;
	return prev;
}

static inline void kp_rel_leave(struct kp_rel prev)
{
	kp_rel = prev;
}

/* Whether the calling thread's call may give @m back now. */
static inline int kp_rel_may(const struct kp_mem *m)
{
	switch (kp_rel.mode) {
	case KP_REL_ALL:
		return 1;
	case KP_REL_DEV:
		return !(m->flags & KP_MEM_WAITS) || m->wait_dev == kp_rel.dev;
	case KP_REL_NOWAIT:
		return !(m->flags & KP_MEM_WAITS);
	default:
		return 0;
	}
}

/* Whether it may wait for the markers of frees (hipEventSynchronize). */
static inline int kp_rel_may_wait(void)
{
	return kp_rel.mode == KP_REL_ALL;
}

/* Something waits for a call that may give it back. */
static inline void kp_rel_marked(void)
{
	__atomic_store_n(&kp_deferred, 1, __ATOMIC_RELAXED);
}

#define POOL_MAGIC	0x6b706d70
#define ALLOC_SHIFT	8
#define ALLOC_ALIGN	(1u << ALLOC_SHIFT)
#define PAGE		4096ULL
#define MIN_GRANULE	(64ULL << 10)
#define DEF_GRANULE	(2ULL << 20)
#define MAX_DEVS	64
#define BUSID_LEN	16	/* "dddd:bb:dd.f" */

struct ihipMemPoolHandle_t;
struct kp_sq;

/*
 * What the address table maps a page to: a chunk of an owner pool or a
 * chunk an importer mapped.  Ranges live in memory that is never freed (a
 * reader that raced with a removal still reads a range), and are checked
 * under their pool's lock: kp_range_lock.
 */
enum { R_CHUNK = 1, R_IMPORT = 2 };

struct kp_range {
	uintptr_t start, end;
	struct ihipMemPoolHandle_t *pool;	/* atomic */
	int kind;
	int live;				/* atomic */
};

/* Records of an exported allocation, by the offset they start at. */
struct kp_recs {
	uint32_t n, cap;
	struct {
		uint64_t off;
		struct kfdpool_record rec;
	} r[];
};

struct kp_chunk {
	struct kp_range range;		/* first: what the table points to */
	struct kp_region reg;
	struct kp_mem mem;
	uint32_t entry_id;
	int release_wanted;		/* empty but for pending frees */
	struct kp_chunk *next, *prev;	/* the pool's chunks, oldest first */
};

static inline struct kp_chunk *kp_chunk_of(struct kp_region *r)
{
	return (struct kp_chunk *)((char *)r - offsetof(struct kp_chunk, reg));
}

/* The stream-order state of one free of an imported pointer. */
struct kp_iev {
	struct kp_sq *sq;
	struct kp_ev *ev;
};

struct kp_iptr {
	void *ptr;
	uint32_t refs;
};

struct kp_ientry {
	struct kp_range range;
	uint32_t entry_id;
	struct kp_mem mem;
	struct kp_iptr *ptrs;
	uint32_t nptrs, capptrs;
	uint64_t refs;			/* imported pointers not yet freed */
	struct kp_iev *evs;		/* the last free's event per stream */
	uint32_t nevs, capevs;
	int sync_all;			/* an event was not kept: wait for all */
	int release_wanted;		/* no pointer left, events pending */
	struct kp_ientry *next, *prev;	/* the pool's imported chunks */
};

struct ihipMemPoolHandle_t {
	kp_lock_t mu;			/* first: never reset (kp_pool_new) */
	uint32_t magic;
	int fd;
	int imported;
	int destroyed;			/* by the program */
	int forked;			/* a parent's pool, in a child */
	int refs;			/* imports of this pool in the process */
	int busy;			/* threads between unlock and relock */
	uint8_t id[KFDPOOL_ID_LEN];
	hipMemPoolProps props;
	uint32_t handle_types;
	const struct kp_backend *be;	/* NULL: imported host pool (mmap) */
	int dev;			/* this process's ordinal */
	char busid[BUSID_LEN];		/* the device's PCI bus id, or "" */
	uint64_t granularity, max_size, threshold;
	int reuse[3];			/* hipMemPoolReuse*, by attribute - 1 */
	hipMemAccessFlags access[MAX_DEVS];
	struct kp_arena arena;
	struct kp_map map;		/* used blocks by address */
	struct kp_chunk *chunks, *chunks_tail;
	size_t nchunks;
	uint64_t reserved;		/* bytes of our chunks (or reserving) */
	uint64_t chunk_seq;		/* chunks reserved so far: pin cookies */
	uint64_t used, used_high;	/* bytes allocated */
	struct kp_ientry *ients;
	struct kp_sq *queues;		/* streams with pending frees */
	struct kp_ev *ev_idle;		/* marker events to reuse */
	uint32_t nrelease;		/* chunks with release_wanted */
	struct ihipMemPoolHandle_t *next;	/* kp_pools */
};

/* The list of pools, and what creating, importing and finalizing take. */
extern pthread_mutex_t kp_mu;
extern struct ihipMemPoolHandle_t *kp_pools;

int kp_grow(void **arr, size_t *cap, size_t need, size_t elem);
int kp_grow32(void **arr, uint32_t *cap, size_t need, size_t elem);
#define KP_GROW(arr, cap, need) \
	kp_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

/* ---- the address table (pool/addr.c) ---- */

/* The range holding @p, without a lock (may be stale: kp_range_lock). */
struct kp_range *kp_addr_find(const void *p);
int kp_addr_add(struct kp_range *r);	/* 0 or -ENOMEM */
void kp_addr_del(struct kp_range *r);
/* Ranges come from memory that is never freed. */
struct kp_chunk *kp_chunk_alloc(void);
void kp_chunk_free(struct kp_chunk *c);
struct kp_ientry *kp_ientry_alloc(void);
void kp_ientry_free_obj(struct kp_ientry *ie);
/*
 * The live range holding @p, with its pool locked, or NULL (not ours).
 * *@ours tells whether @p was ever in a kfdpool range that could not be
 * checked (a pool of the parent in a fork child, a pool going away): such
 * a pointer is kfdpool's to refuse, never the runtime's.
 */
struct kp_range *kp_range_lock(const void *p, int *ours);
void kp_addr_fork(int prepare);

/* ---- pools (pool/pool.c) ---- */

struct ihipMemPoolHandle_t *kp_pool_new(void);
int kp_pool_ours(const void *h);
/* The live pool @h is, locked, or NULL.  Never reads @h before knowing
 * it is one of ours. */
struct ihipMemPoolHandle_t *kp_pool_lock(hipMemPool_t h);
/* The same, *ours telling whether @h is a handle of this library at all
 * (NULL with *ours 0: the runtime's). */
struct ihipMemPoolHandle_t *kp_pool_lock_ours(hipMemPool_t h, int *ours);
static inline void kp_pool_unlock(struct ihipMemPoolHandle_t *pool)
{
	kp_unlock(&pool->mu);
}

/* Unlock around a call to the runtime or a backend, and lock again: the
 * pool stays alive meanwhile (busy), but anything may change. */
static inline void kp_pool_leave(struct ihipMemPoolHandle_t *pool)
{
	pool->busy++;
	kp_unlock(&pool->mu);
}

static inline void kp_pool_enter(struct ihipMemPoolHandle_t *pool)
{
	kp_lock(&pool->mu);
	pool->busy--;
}
/* Give empty chunks back, newest first, while more than @keep bytes are
 * reserved; chunks with pending frees wait for their events first
 * (@sync) or stay (!@sync).  Called with the pool locked; may unlock and
 * relock around the runtime. */
void kp_pool_trim(struct ihipMemPoolHandle_t *pool, uint64_t keep, int sync);
/* After a free emptied @c: give it back if the threshold says so. */
void kp_chunk_maybe_release(struct ihipMemPoolHandle_t *pool,
			    struct kp_chunk *c);
/* Chunks that wait for their frees' events: give back those now done. */
void kp_pool_release_wanted(struct ihipMemPoolHandle_t *pool);
/* Unlock; in a call that gives memory back (kp_rel), a destroyed pool
 * with nothing left in use is finalized, and chunks and imports that
 * were marked go back as far as the call allows.  (Whatever is left
 * marked has kp_deferred set.) */
void kp_pool_put_slow(struct ihipMemPoolHandle_t *pool);
static inline void kp_pool_put(struct ihipMemPoolHandle_t *pool)
{
	if ((pool->nrelease || pool->destroyed) && kp_rel.mode != KP_REL_MARK)
		kp_pool_put_slow(pool);
	else
		kp_unlock(&pool->mu);
}
/*
 * Pools of the parent are unusable in a fork child (hip_fork.c), and the
 * child holds none of their fds: an owner fd held by a child would keep
 * the pool alive after its exporter, and let the child pin and revoke in
 * it.  Every pool fd the library opens is made with kp_fd_lock() held and
 * handed to kp_fd_made(), which keeps it and unlocks, so that fork()
 * (which takes the lock first) finds it kept; kp_fd_close() closes one.
 * In the child, every kept fd is closed (kp_pools_fork_child).  The
 * program's own fds (a handle it is about to import) are never touched.
 */
void kp_pools_fork_child(void);
void kp_fd_lock(void);
/* @fd (or a -errno) just made, kp_fd_lock() held: kept, and unlocked.
 * Returns @fd, or -ENOMEM (closed: no room to keep it). */
int kp_fd_made(int fd);
void kp_fd_close(int fd);
void kp_fd_fork(int prepare);
/*
 * Call @fn(pool, @arg) for every live pool, each locked in turn (kp_mu is
 * not held: @fn may leave and enter the pool around the runtime), and put
 * it after (kp_pool_put: what waited for this is given back).
 */
void kp_pools_each(void (*fn)(struct ihipMemPoolHandle_t *pool, void *arg),
		   void *arg);
/* Give back what was marked, as far as @mode (KP_REL_*) and @dev allow
 * (a synchronising call of the program's just returned): no-op when
 * nothing was. */
void kp_pools_settle(int mode, int dev);

/* ---- allocation and free (pool/mem.c) ---- */

/* Allocate @size bytes (pool locked; may unlock around the runtime and
 * backends).  @k: the stream's key when the process has a runtime, NULL
 * without one. */
struct kp_skey;
int kp_pool_alloc(struct ihipMemPoolHandle_t *pool, uint64_t size,
		  const struct kp_skey *k, hipStream_t stream, void **ptr);
/*
 * Free @n pointers (owner allocations or imported pointers), each one's
 * result in @res (may be NULL); NULL elements are hipSuccess if @null_ok.
 * @stream: the stream of hipFreeAsync, or KP_SYNC for hipFree (which
 * waits for the device first).  Pointers that are not kfdpool's get
 * KP_NOT_OURS in @res.
 */
#define KP_SYNC ((hipStream_t)(intptr_t)-1)
#define KP_NOT_OURS ((hipError_t)-1)
hipError_t kp_free_many(void *const *ptrs, size_t n, hipError_t *res,
			int null_ok, hipStream_t stream);
/* One pointer: its result, KP_NOT_OURS when it is not kfdpool's (or an
 * error of the stream it names). */
hipError_t kp_free(void *p, hipStream_t stream);
/* The used block holding @p (any address in it) of @pool, or NULL. */
struct kp_blk *kp_block_of(struct ihipMemPoolHandle_t *pool,
			   struct kp_chunk *c, const void *p);
int kp_recs_add(struct kp_blk *b, uint64_t off,
		const struct kfdpool_record *rec);
int kp_recs_find(const struct kp_blk *b, uint64_t off);

/* ---- importers (pool/import.c) ---- */

struct kp_ientry *kp_ientry_find(struct ihipMemPoolHandle_t *pool,
				 uint32_t entry_id);
int kp_ientry_add_ptr(struct kp_ientry *ie, void *ptr);
/* Map a chunk just imported (@im->fd is consumed).  Called with the pool
 * locked; unlocks around the mapping. */
int kp_ientry_new(struct ihipMemPoolHandle_t *pool,
		  const struct kfdpool_import *im, struct kp_ientry **out);
/* Unmap once the events of its frees completed (pool locked; may unlock
 * around the runtime). */
void kp_ientry_release(struct ihipMemPoolHandle_t *pool,
		       struct kp_ientry *ie);
void kp_ientry_release_wanted(struct ihipMemPoolHandle_t *pool, int sync);

#include "pool/order.h"

#endif
