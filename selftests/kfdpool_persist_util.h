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

/* A persistent pool with every handle type, on a control fd of its own. */
static inline int kfd_persist_new(const char *name, __u8 *id)
{
	int ctl = kfd_open(), fd;

	if (ctl < 0)
		return ctl;
	fd = kfd_pool_create_flags(ctl, 0, KFDPOOL_POOL_PERSIST, name,
				   KFDPOOL_HANDLE_TYPES_ALL, id);
	close(ctl);
	return fd;
}

/*
 * A persistent pool of @handle_types, its owner handle as the creating call
 * returns it in *@owner (if not NULL): the owner fd, or -errno.
 */
static inline int kfd_persist_create(int ctl, const char *name,
				     __u32 handle_types, __u8 *id,
				     struct kfdpool_pool_handle *owner)
{
	struct kfdpool_pool_create c = {};

	c.flags = KFDPOOL_POOL_PERSIST;
	c.handle_types = handle_types;
	strncpy(c.name, name, sizeof(c.name) - 1);
	if (ioctl(ctl, KFDPOOL_IOC_POOL_CREATE, &c))
		return -errno;
	if (id)
		memcpy(id, c.id, sizeof(c.id));
	if (owner)
		*owner = c.owner_handle;
	return c.fd;
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
	return kfd_handle_export(pool, KFDPOOL_HANDLE_POLICY_UID, 0, h);
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
 * Call @fn(@info, @arg) for every pool POOL_LIST shows the caller, until
 * it returns non-zero: that value, 0 after the last, or -errno.
 */
static inline int kfd_list_each(int (*fn)(const struct kfdpool_pool_info *,
					  void *), void *arg)
{
	struct kfdpool_pool_info page[64];
	__u64 cursor = 0;
	int ctl = kfd_open(), n, i, ret = 0;

	if (ctl < 0)
		return ctl;
	do {
		n = kfd_list_page(ctl, page, 64, &cursor);
		if (n < 0)
			ret = n;
		for (i = 0; i < n && !ret; i++)
			ret = fn(&page[i], arg);
	} while (cursor && !ret);
	close(ctl);
	return ret;
}

struct kfd_find {
	const __u8 *id;
	struct kfdpool_pool_info *info;
};

static inline int kfd_find_one(const struct kfdpool_pool_info *p, void *arg)
{
	struct kfd_find *f = arg;

	if (memcmp(p->id, f->id, KFDPOOL_ID_LEN))
		return 0;
	if (f->info)
		*f->info = *p;
	return 1;
}

/*
 * Look for the pool of @id in POOL_LIST (what the caller may see): 1 and
 * *@info filled if listed, 0 if not, -errno.  @info may be NULL.
 */
static inline int kfd_list_find(const __u8 *id, struct kfdpool_pool_info *info)
{
	struct kfd_find f = { id, info };

	return kfd_list_each(kfd_find_one, &f);
}

static inline int kfd_count_one(const struct kfdpool_pool_info *p, void *arg)
{
	++*(int *)arg;
	return 0;
}

/* How many pools POOL_LIST shows the caller, or -errno. */
static inline int kfd_list_count(void)
{
	int n = 0, ret = kfd_list_each(kfd_count_one, &n);

	return ret < 0 ? ret : n;
}

static inline int kfd_sweep_one(const struct kfdpool_pool_info *p, void *arg)
{
	const char *prefix = arg;

	if ((p->flags & KFDPOOL_POOL_PERSIST) &&
	    !strncmp(p->name, prefix, strlen(prefix)))
		kfd_destroy_id(p->id);
	return 0;
}

/*
 * Destroy every persistent pool visible to the caller whose name starts
 * with @prefix ("" for all).  Tests clean up with it.
 */
static inline void kfd_persist_sweep(const char *prefix)
{
	kfd_list_each(kfd_sweep_one, (void *)prefix);
}

/*
 * Persistent pools are off by default (max_user_persistent 0): allow
 * @n per user for a test.  The value before, or -errno; put it back with
 * kfd_param_set("max_user_persistent", old).
 */
static inline long long kfd_persist_enable(unsigned int n)
{
	long long old = kfd_param_get("max_user_persistent");

	if (old >= 0 && kfd_param_set("max_user_persistent", n))
		return -EIO;
	return old;
}

/* References on the kfdpool module, -1 if unknown. */
static inline long kfd_module_refcnt(void)
{
	long n = -1;
	FILE *f = fopen("/sys/module/kfdpool/refcnt", "re");

	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

#endif /* KFDPOOL_PERSIST_UTIL_H */
