// SPDX-License-Identifier: MIT
/*
 * Best-fit sub-allocator with coalescing.
 *
 * The blocks of an arena tile [0, size) in offset order, each free or used;
 * two free blocks are never adjacent (free merges them).  A sorted array
 * keeps lookups by address a binary search, which is what pointer export
 * needs (any address inside an allocation), and a chunk holds at most
 * size/align blocks, so the memmove on split and merge stays small.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

int kp_arena_init(struct kp_arena *a, uint64_t size, uint64_t align)
{
	memset(a, 0, sizeof(*a));
	if (!size || !align || (align & (align - 1)) || (size & (align - 1)))
		return -EINVAL;
	a->cap = 16;
	a->blk = malloc(a->cap * sizeof(*a->blk));
	if (!a->blk)
		return -ENOMEM;
	a->size = size;
	a->align = align;
	a->blk[0] = (struct kp_block){ .off = 0, .size = size };
	a->nblk = 1;
	return 0;
}

void kp_arena_fini(struct kp_arena *a)
{
	free(a->blk);
	memset(a, 0, sizeof(*a));
}

/* Index of the block containing @off (blocks tile the arena). */
static size_t find_idx(const struct kp_arena *a, uint64_t off)
{
	size_t lo = 0, hi = a->nblk;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (a->blk[mid].off <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static int make_room(struct kp_arena *a)
{
	struct kp_block *nb;

	if (a->nblk < a->cap)
		return 0;
	nb = realloc(a->blk, 2 * a->cap * sizeof(*nb));
	if (!nb)
		return -ENOMEM;
	a->blk = nb;
	a->cap *= 2;
	return 0;
}

int kp_arena_alloc(struct kp_arena *a, uint64_t size, uint64_t *off)
{
	size_t i, best = (size_t)-1;

	if (!size || size > a->size)
		return -ENOMEM;
	size = (size + a->align - 1) & ~(a->align - 1);
	for (i = 0; i < a->nblk; i++) {
		const struct kp_block *b = &a->blk[i];

		if (b->used || b->size < size)
			continue;
		if (best == (size_t)-1 || b->size < a->blk[best].size)
			best = i;
		if (b->size == size)
			break;
	}
	if (best == (size_t)-1)
		return -ENOMEM;
	if (a->blk[best].size > size) {
		/* Split: the used part first, the rest stays free after it. */
		if (make_room(a))
			return -ENOMEM;
		memmove(&a->blk[best + 2], &a->blk[best + 1],
			(a->nblk - best - 1) * sizeof(*a->blk));
		a->blk[best + 1] = (struct kp_block){
			.off = a->blk[best].off + size,
			.size = a->blk[best].size - size,
			.used = 0,
			.priv = NULL,
		};
		a->blk[best].size = size;
		a->nblk++;
	}
	a->blk[best].used = 1;
	a->used += size;
	a->nused++;
	*off = a->blk[best].off;
	return 0;
}

static void remove_at(struct kp_arena *a, size_t i)
{
	memmove(&a->blk[i], &a->blk[i + 1],
		(a->nblk - i - 1) * sizeof(*a->blk));
	a->nblk--;
}

int kp_arena_free(struct kp_arena *a, uint64_t off, uint64_t *size)
{
	size_t i;

	if (off >= a->size)
		return -EINVAL;
	i = find_idx(a, off);
	if (a->blk[i].off != off || !a->blk[i].used)
		return -EINVAL;
	if (size)
		*size = a->blk[i].size;
	a->used -= a->blk[i].size;
	a->nused--;
	a->blk[i].used = 0;
	a->blk[i].priv = NULL;
	if (i + 1 < a->nblk && !a->blk[i + 1].used) {
		a->blk[i].size += a->blk[i + 1].size;
		remove_at(a, i + 1);
	}
	if (i > 0 && !a->blk[i - 1].used) {
		a->blk[i - 1].size += a->blk[i].size;
		remove_at(a, i);
	}
	return 0;
}

int kp_arena_find(const struct kp_arena *a, uint64_t off, uint64_t *start,
		  uint64_t *size, void **priv)
{
	size_t i;

	if (off >= a->size)
		return -ENOENT;
	i = find_idx(a, off);
	if (!a->blk[i].used)
		return -ENOENT;
	*start = a->blk[i].off;
	*size = a->blk[i].size;
	if (priv)
		*priv = a->blk[i].priv;
	return 0;
}

int kp_arena_set_priv(struct kp_arena *a, uint64_t off, void *priv)
{
	size_t i;

	if (off >= a->size)
		return -EINVAL;
	i = find_idx(a, off);
	if (a->blk[i].off != off || !a->blk[i].used)
		return -EINVAL;
	a->blk[i].priv = priv;
	return 0;
}

uint64_t kp_arena_largest_free(const struct kp_arena *a)
{
	uint64_t m = 0;
	size_t i;

	for (i = 0; i < a->nblk; i++)
		if (!a->blk[i].used && a->blk[i].size > m)
			m = a->blk[i].size;
	return m;
}
