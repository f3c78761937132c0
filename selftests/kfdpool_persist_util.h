/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers for persistent pools (KFDPOOL_POOL_PERSIST): create, owner
 * handles, adoption, destruction, and finding a pool in POOL_LIST.  Like
 * kfdpool_util.h: every helper returns a value or -errno and never aborts.
 */
#ifndef KFDPOOL_PERSIST_UTIL_H
#define KFDPOOL_PERSIST_UTIL_H

#include <stddef.h>

#include "kfdpool_handle_util.h"

/* A new pool with @flags; its owner fd or -errno.  @id may be NULL. */
static inline int kfd_pool_create_flags(int ctl, __u32 flags, const char *name,
					__u32 handle_types, __u8 *id)
{
	struct kfdpool_pool_create c = {};

	c.flags = flags;
	c.handle_types = handle_types;
	if (name)
		strncpy(c.name, name, sizeof(c.name) - 1);
	if (ioctl(ctl, KFDPOOL_IOC_POOL_CREATE, &c))
		return -errno;
	if (id)
		memcpy(id, c.id, sizeof(c.id));
	return c.fd;
}

/* A persistent pool with every handle type, on a control fd of its own. */
static inline int kfd_persist_new(const char *name, __u8 *id)
{
	int ctl = kfd_open(), fd;

	if (ctl < 0)
		return ctl;
	fd = kfd_pool_create_flags(ctl, KFDPOOL_POOL_PERSIST, name,
				   KFDPOOL_HANDLE_TYPES_ALL, id);
	close(ctl);
	return fd;
}

/* The owner handle of the persistent pool of owner fd @pool. */
static inline int kfd_owner_handle(int pool, struct kfdpool_pool_handle *h)
{
	struct kfdpool_handle_export e = {};

	e.policy = KFDPOOL_HANDLE_POLICY_UID;
	e.flags = KFDPOOL_HANDLE_EXPORT_OWNER;
	if (ioctl(pool, KFDPOOL_IOC_HANDLE_EXPORT, &e))
		return -errno;
	*h = e.handle;
	return 0;
}

/* An import handle (UID policy) of the pool of owner fd @pool. */
static inline int kfd_import_handle(int pool, struct kfdpool_pool_handle *h)
{
	struct kfdpool_handle_export e = {};

	e.policy = KFDPOOL_HANDLE_POLICY_UID;
	if (ioctl(pool, KFDPOOL_IOC_HANDLE_EXPORT, &e))
		return -errno;
	*h = e.handle;
	return 0;
}

/* Adopt by owner handle (@h) or, @h NULL, by @id: the owner fd or -errno. */
static inline int kfd_adopt(int ctl, const struct kfdpool_pool_handle *h,
			    const __u8 *id)
{
	struct kfdpool_pool_adopt a = {};

	if (h) {
		a.handle = *h;
	} else {
		a.flags = KFDPOOL_ADOPT_BY_ID;
		memcpy(a.id, id, sizeof(a.id));
	}
	a.fd = -1;
	if (ioctl(ctl, KFDPOOL_IOC_POOL_ADOPT, &a))
		return -errno;
	return a.fd;
}

/* The same, opening /dev/kfdpool for it. */
static inline int kfd_adopt_open(const struct kfdpool_pool_handle *h,
				 const __u8 *id)
{
	int ctl = kfd_open(), fd;

	if (ctl < 0)
		return ctl;
	fd = kfd_adopt(ctl, h, id);
	close(ctl);
	return fd;
}

static inline int kfd_destroy(int pool)
{
	struct kfdpool_pool_destroy d = {};

	return kfd_ioctl(pool, KFDPOOL_IOC_POOL_DESTROY, &d);
}

static inline int kfd_destroy_id(const __u8 *id)
{
	struct kfdpool_pool_destroy_id d = {};
	int ctl = kfd_open(), ret;

	if (ctl < 0)
		return ctl;
	memcpy(d.id, id, sizeof(d.id));
	ret = kfd_ioctl(ctl, KFDPOOL_IOC_POOL_DESTROY_ID, &d);
	close(ctl);
	return ret;
}

/*
 * Look for the pool of @id in POOL_LIST (what the caller may see): 1 and
 * *@info filled if listed, 0 if not, -errno.  @info may be NULL.
 */
static inline int kfd_list_find(const __u8 *id, struct kfdpool_pool_info *info)
{
	struct kfdpool_pool_info page[64];
	__u64 cursor = 0;
	int ctl = kfd_open(), n, i, found = 0;

	if (ctl < 0)
		return ctl;
	do {
		n = kfd_list_page(ctl, page, 64, &cursor);
		if (n < 0) {
			found = n;
			break;
		}
		for (i = 0; i < n && !found; i++) {
			if (memcmp(page[i].id, id, KFDPOOL_ID_LEN))
				continue;
			found = 1;
			if (info)
				*info = page[i];
		}
	} while (cursor && !found);
	close(ctl);
	return found;
}

/*
 * Destroy every persistent pool visible to the caller whose name starts
 * with @prefix: how many, or -errno.  Tests clean up with it.
 */
static inline int kfd_persist_sweep(const char *prefix)
{
	struct kfdpool_pool_info page[64];
	__u64 cursor = 0;
	int ctl = kfd_open(), n, i, done = 0;

	if (ctl < 0)
		return ctl;
	do {
		n = kfd_list_page(ctl, page, 64, &cursor);
		if (n < 0)
			break;
		for (i = 0; i < n; i++) {
			if (!(page[i].flags & KFDPOOL_POOL_PERSIST) ||
			    strncmp(page[i].name, prefix, strlen(prefix)))
				continue;
			if (!kfd_destroy_id(page[i].id))
				done++;
		}
	} while (cursor);
	close(ctl);
	return n < 0 ? n : done;
}

#endif /* KFDPOOL_PERSIST_UTIL_H */
