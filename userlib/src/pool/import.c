// SPDX-License-Identifier: MIT
/*
 * The importer's side of a pool: each chunk imported from the exporter is
 * mapped once and reference-counted by the pointers imported from it.  It
 * is unmapped (and its kernel import released) when its last pointer is
 * freed and the marker events of the asynchronous frees of its pointers
 * have completed; until then a new pointer into it reuses the mapping.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pool/pool.h"

struct kp_ientry *kp_ientry_find(struct ihipMemPoolHandle_t *pool,
				 uint32_t entry_id)
{
	struct kp_ientry *ie;

	for (ie = pool->ients; ie; ie = ie->next)
		if (ie->entry_id == entry_id)
			return ie;
	return NULL;
}

int kp_ientry_add_ptr(struct kp_ientry *ie, void *ptr)
{
	uint32_t i;

	for (i = 0; i < ie->nptrs; i++)
		if (ie->ptrs[i].ptr == ptr)
			break;
	if (i == ie->nptrs) {
		if (kp_grow32((void **)&ie->ptrs, &ie->capptrs, ie->nptrs + 1,
			      sizeof(*ie->ptrs)))
			return -ENOMEM;
		ie->ptrs[ie->nptrs++] = (struct kp_iptr){ ptr, 0 };
	}
	ie->ptrs[i].refs++;
	ie->refs++;
	return 0;
}

static void map_undo(struct ihipMemPoolHandle_t *pool, struct kp_mem *m)
{
	kp_rocr_host_unregister(m);
	if (pool->be)
		pool->be->unmap_import(m);
	else
		kp_host_unmap_import(m);
}

int kp_ientry_new(struct ihipMemPoolHandle_t *pool,
		  const struct kfdpool_import *im, struct kp_ientry **out)
{
	struct kp_ientry *ie = kp_ientry_alloc(), *other;
	int ret = ie ? 0 : -ENOMEM;

	if (!ret) {
		kp_pool_leave(pool);
		ret = pool->be ?
		      pool->be->map_import(pool->dev, im->fd, im->entry_size,
					   &ie->mem) :
		      kp_host_map_import(pool->dev, im->fd, im->entry_size,
					 &ie->mem);
		/* Host memory is the runtime's to know, as the exporter's. */
		if (!ret && pool->props.location.type ==
		    hipMemLocationTypeHost && kp_rt_order()) {
			ret = kp_rocr_host_register(&ie->mem);
			if (ret)
				map_undo(pool, &ie->mem);
		}
		kp_pool_enter(pool);
	}
	close(im->fd);
	if (ret)
		goto fail;
	/* Another thread may have mapped the same chunk meanwhile: use its
	 * mapping, held (a pointer reference) while ours is undone. */
	other = kp_ientry_find(pool, im->entry_id);
	if (other) {
		other->refs++;
		kp_pool_leave(pool);
		map_undo(pool, &ie->mem);
		kp_pool_enter(pool);
		other->refs--;
		kfdpool_release(pool->fd, im->entry_id);
		kp_ientry_free_obj(ie);
		*out = other;
		return 0;
	}
	ie->entry_id = im->entry_id;
	ie->range.start = (uintptr_t)ie->mem.addr;
	ie->range.end = ie->range.start + im->entry_size;
	ie->range.kind = R_IMPORT;
	__atomic_store_n(&ie->range.pool, pool, __ATOMIC_RELEASE);
	__atomic_store_n(&ie->range.live, 1, __ATOMIC_RELEASE);
	ret = kp_addr_add(&ie->range);
	if (ret) {
		__atomic_store_n(&ie->range.live, 0, __ATOMIC_RELEASE);
		kp_pool_leave(pool);
		map_undo(pool, &ie->mem);
		kp_pool_enter(pool);
		goto fail;
	}
	ie->next = pool->ients;
	ie->prev = NULL;
	if (ie->next)
		ie->next->prev = ie;
	pool->ients = ie;
	*out = ie;
	return 0;
fail:
	kfdpool_release(pool->fd, im->entry_id);
	if (ie) {
		__atomic_store_n(&ie->range.pool, NULL, __ATOMIC_RELEASE);
		kp_ientry_free_obj(ie);
	}
	return ret;
}

/* Whether the frees of @ie's pointers have completed: asks the runtime
 * about markers not seen completed (unlocked), or waits when @sync. */
static int frees_done(struct ihipMemPoolHandle_t *pool, struct kp_ientry *ie,
		      int sync)
{
	const struct kp_runtime *rt = kp_rt_cached();
	struct kp_ev **evs;
	uint32_t i, n = 0;
	int all = 1, *done;

	if (!rt || (!ie->nevs && !ie->sync_all))
		return 1;
	evs = calloc(ie->nevs + 1, sizeof(*evs));
	done = calloc(ie->nevs + 1, sizeof(*done));
	if (!evs || !done) {
		free(evs);
		free(done);
		return 0;
	}
	for (i = 0; i < ie->nevs; i++) {
		if (ie->evs[i].ev->done)
			continue;
		evs[n] = ie->evs[i].ev;
		evs[n++]->pins++;
	}
	if (ie->sync_all && sync && rt->hipDeviceSynchronize) {
		kp_pool_leave(pool);
		rt->hipDeviceSynchronize();
		kp_pool_enter(pool);
	}
	kp_order_ask(pool, evs, n, done, sync);
	for (i = 0; i < n; i++) {
		if (done[i])
			evs[i]->done = 1;
		else
			all = 0;
		kp_ev_unpin(pool, evs[i]);
	}
	if (ie->sync_all && !sync)
		all = 0;
	free(evs);
	free(done);
	return all;
}

static void ientry_unmap(struct ihipMemPoolHandle_t *pool, struct kp_ientry *ie)
{
	uint32_t i;

	if (ie->release_wanted) {
		ie->release_wanted = 0;
		pool->nrelease--;
	}
	__atomic_store_n(&ie->range.live, 0, __ATOMIC_RELEASE);
	kp_addr_del(&ie->range);
	if (ie->prev)
		ie->prev->next = ie->next;
	else
		pool->ients = ie->next;
	if (ie->next)
		ie->next->prev = ie->prev;
	for (i = 0; i < ie->nevs; i++) {
		ie->evs[i].ev->irefs--;
		kp_ev_maybe_idle(pool, ie->evs[i].ev);
	}
	kfdpool_release(pool->fd, ie->entry_id);
	kp_pool_leave(pool);
	map_undo(pool, &ie->mem);
	kp_pool_enter(pool);
	free(ie->ptrs);
	free(ie->evs);
	__atomic_store_n(&ie->range.pool, NULL, __ATOMIC_RELEASE);
	kp_ientry_free_obj(ie);
}

void kp_ientry_release(struct ihipMemPoolHandle_t *pool, struct kp_ientry *ie)
{
	/* The lock drops while asking: a new pointer may come meanwhile.
	 * Unmapping may wait for the device: only in a call that may
	 * (pool/pool.h). */
	if (kp_rel_may(&ie->mem) &&
	    frees_done(pool, ie, pool->destroyed && kp_rel_may_wait()) &&
	    !ie->refs && __atomic_load_n(&ie->range.live, __ATOMIC_RELAXED)) {
		ientry_unmap(pool, ie);
	} else if (!ie->refs && !ie->release_wanted &&
		   __atomic_load_n(&ie->range.live, __ATOMIC_RELAXED)) {
		ie->release_wanted = 1;
		pool->nrelease++;
		kp_rel_marked();
	}
}

/* Imported chunks waiting for their frees: unmap those now done (or all,
 * waiting, when @sync).  Their objects are never freed, so the list taken
 * before the lock drops stays readable; each is checked again. */
void kp_ientry_release_wanted(struct ihipMemPoolHandle_t *pool, int sync)
{
	struct kp_ientry *ie, **todo = NULL;
	size_t n = 0, cap = 0, i;

	for (ie = pool->ients; ie; ie = ie->next)
		if (ie->release_wanted && !KP_GROW(todo, cap, n + 1))
			todo[n++] = ie;
	for (i = 0; i < n; i++) {
		ie = todo[i];
		if (!__atomic_load_n(&ie->range.live, __ATOMIC_RELAXED) ||
		    __atomic_load_n(&ie->range.pool, __ATOMIC_RELAXED) != pool ||
		    !ie->release_wanted)
			continue;
		if (ie->refs) {
			ie->release_wanted = 0;
			pool->nrelease--;
			continue;
		}
		if (!kp_rel_may(&ie->mem))
			continue;
		if (frees_done(pool, ie, sync && kp_rel_may_wait()) && !ie->refs &&
		    __atomic_load_n(&ie->range.live, __ATOMIC_RELAXED) &&
		    ie->release_wanted)
			ientry_unmap(pool, ie);
	}
	free(todo);
}
