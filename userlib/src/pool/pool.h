/* SPDX-License-Identifier: MIT */
/*
 * The pool allocator's state: pools, chunks, allocations, imported chunks,
 * the address table, and the functions pool/pool.c, pool/mem.c and
 * pool/import.c share with the HIP entry points (hip/).  A pool is HIP's
 * hipMemPool_t, so HIP's types are used throughout.  Everything here is
 * used under kp_mu.
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
#include "chunk/backend.h"

#define POOL_MAGIC	0x6b706d70
#define ALLOC_ALIGN	256
#define PAGE		4096ULL
#define MIN_GRANULE	(64ULL << 10)
#define DEF_GRANULE	(2ULL << 20)
#define MAX_DEVS	64

struct kp_chunk;
struct kp_mem;

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
	uint64_t chunk_seq;		/* chunks reserved so far: pin cookies */
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

/* The library's one lock (held across fork() by hip/hip_fork.c), and
 * every pool object (destroyed ones included until their last allocation
 * or import is gone). */
extern pthread_mutex_t kp_mu;
extern struct ihipMemPoolHandle_t *kp_pools;

/* Grow *arr (of *cap elements of @elem bytes) to hold @need. */
int kp_grow(void **arr, size_t *cap, size_t need, size_t elem);
int kp_grow32(void **arr, uint32_t *cap, size_t need, size_t elem);
#define KP_GROW(arr, cap, need) \
	kp_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

/* The address table: owner chunks (R_CHUNK) and imported chunk mappings
 * (R_IMPORT), sorted by address. */
struct range *kp_range_find(const void *p);
int kp_range_add(void *start, uint64_t len, int kind, void *obj);
void kp_range_del(void *start);

/*
 * Pool handles.  kp_pool_new: a zeroed pool object from the handle slabs
 * (NULL when out of memory); kp_pool_free gives it back.  kp_pool_ours:
 * whether @h is a handle this library handed out, now or before (no lock
 * needed; @h is not read).  kp_pool_get: the live (not destroyed) pool @h
 * is, or NULL; a handle is never read before it is found to be ours.
 */
struct ihipMemPoolHandle_t *kp_pool_new(void);
void kp_pool_free(struct ihipMemPoolHandle_t *pool);
int kp_pool_ours(const void *h);
struct ihipMemPoolHandle_t *kp_pool_get(hipMemPool_t h);
void kp_pool_trim(struct ihipMemPoolHandle_t *pool, uint64_t keep);
void kp_pool_maybe_finalize(struct ihipMemPoolHandle_t *pool);

/* pool/mem.c: allocate @size bytes from an owner pool (0 or -errno); free
 * @n pointers (owner allocations or imported pointers), each pointer's
 * result in @res when not NULL, NULL elements hipSuccess if @null_ok. */
int kp_pool_alloc(struct ihipMemPoolHandle_t *pool, uint64_t size,
		  void **ptr);
hipError_t kp_free_many(void *const *ptrs, size_t n, hipError_t *res,
			int null_ok);
/* Remember a record of @a that starts at chunk offset @off. */
int kp_alloc_add_record(struct kp_alloc *a, uint64_t off,
			const struct kfdpool_record *rec);

/* pool/import.c: an importer's chunk mappings.  kp_ientry_new maps a chunk
 * just imported (and consumes im->fd); kp_ientry_free unmaps it. */
struct kp_ientry *kp_ientry_find(struct ihipMemPoolHandle_t *pool,
				 uint32_t entry_id);
int kp_ientry_add_ptr(struct kp_ientry *ie, void *ptr);
int kp_ientry_new(struct ihipMemPoolHandle_t *pool,
		  const struct kfdpool_import *im, struct kp_ientry **out);
void kp_ientry_free(struct kp_ientry *ie);

#endif
