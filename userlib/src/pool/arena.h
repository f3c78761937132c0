/* SPDX-License-Identifier: MIT */
/*
 * The sub-allocator of one chunk: best fit over an offset-ordered block
 * array, coalescing free neighbours on free.  Not thread-safe: the pool's
 * lock protects it.
 */
#ifndef KFDPOOL_ARENA_H
#define KFDPOOL_ARENA_H

#include <stddef.h>
#include <stdint.h>

struct kp_block {
	uint64_t off;
	uint64_t size;
	int used;
	void *priv;		/* the owner's data of a used block */
};

struct kp_arena {
	uint64_t size;		/* bytes the arena manages */
	uint64_t align;		/* every block starts and ends on this */
	uint64_t used;		/* bytes in used blocks */
	uint32_t nused;		/* used blocks */
	struct kp_block *blk;	/* ordered by offset, covering [0, size) */
	size_t nblk, cap;
};

/* @align must be a power of two; @size a multiple of it. */
int kp_arena_init(struct kp_arena *a, uint64_t size, uint64_t align);
void kp_arena_fini(struct kp_arena *a);

/* Best fit: the smallest free block that holds @size (rounded up to the
 * alignment), lowest offset among equals.  0 and *off, or -ENOMEM. */
int kp_arena_alloc(struct kp_arena *a, uint64_t size, uint64_t *off);

/* Free the used block starting at @off; its size in *size.  -EINVAL when
 * no used block starts there. */
int kp_arena_free(struct kp_arena *a, uint64_t off, uint64_t *size);

/* The used block containing @off: its start and size.  -ENOENT if none. */
int kp_arena_find(const struct kp_arena *a, uint64_t off, uint64_t *start,
		  uint64_t *size, void **priv);

/* Attach @priv to the used block starting at @off (-EINVAL if none). */
int kp_arena_set_priv(struct kp_arena *a, uint64_t off, void *priv);

/* Largest free block, for quick rejection. */
uint64_t kp_arena_largest_free(const struct kp_arena *a);

static inline int kp_arena_empty(const struct kp_arena *a)
{
	return a->nused == 0;
}

#endif
