// SPDX-License-Identifier: MIT
/*
 * The importer's side of a pool: each chunk imported from the exporter is
 * mapped once and reference-counted by the pointers imported from it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pool/pool.h"

struct kp_ientry *kp_ientry_find(struct ihipMemPoolHandle_t *pool,
				 uint32_t entry_id)
{
	size_t i;

	for (i = 0; i < pool->nients; i++)
		if (pool->ients[i]->entry_id == entry_id)
			return pool->ients[i];
	return NULL;
}

int kp_ientry_add_ptr(struct kp_ientry *ie, void *ptr)
{
	uint32_t i;

	for (i = 0; i < ie->nptrs; i++) {
		if (ie->ptrs[i].ptr == ptr) {
			ie->ptrs[i].refs++;
			ie->refs++;
			return 0;
		}
	}
	if (kp_grow32((void **)&ie->ptrs, &ie->capptrs, ie->nptrs + 1,
		   sizeof(*ie->ptrs)))
		return -ENOMEM;
	ie->ptrs[ie->nptrs++] = (struct kp_iptr){ ptr, 1 };
	ie->refs++;
	return 0;
}

/* Map a freshly imported chunk.  Consumes @fd. */
int kp_ientry_new(struct ihipMemPoolHandle_t *pool,
		  const struct kfdpool_import *im, struct kp_ientry **out)
{
	struct kp_ientry *ie;
	int ret;

	if (KP_GROW(pool->ients, pool->capients, pool->nients + 1))
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
			ret = kp_range_add(ie->mem.addr, im->entry_size,
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

void kp_ientry_free(struct kp_ientry *ie)
{
	struct ihipMemPoolHandle_t *pool = ie->pool;
	size_t i;

	kp_range_del(ie->mem.addr);
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
