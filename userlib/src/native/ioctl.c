// SPDX-License-Identifier: MIT
/*
 * Thin typed wrappers over every ioctl of <linux/kfdpool.h>.  Each builds a
 * zeroed struct (outputs must come in zeroed too) and copies the outputs
 * back only on success.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kfdpool.h"
#include "internal.h"

KFDPOOL_EXPORT int kfdpool_open(void)
{
	int fd = open(KFDPOOL_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

KFDPOOL_EXPORT int kfdpool_query(int ctl_fd, struct kfdpool_query *q)
{
	if (!q)
		return -EINVAL;
	memset(q, 0, sizeof(*q));
	return kfdpool_xioctl(ctl_fd, KFDPOOL_IOC_QUERY, q);
}

KFDPOOL_EXPORT int kfdpool_pool_create(int ctl_fd, uint64_t limit,
				       uint32_t handle_types, const char *name,
				       uint8_t id[KFDPOOL_ID_LEN])
{
	return kfdpool_pool_create_flags(ctl_fd, limit, handle_types, 0, name,
					 id);
}

KFDPOOL_EXPORT int kfdpool_pool_create_flags(int ctl_fd, uint64_t limit,
					     uint32_t handle_types,
					     uint32_t flags, const char *name,
					     uint8_t id[KFDPOOL_ID_LEN])
{
	struct kfdpool_pool_create c;
	int ret;

	memset(&c, 0, sizeof(c));
	c.limit = limit;
	c.flags = flags;
	c.handle_types = handle_types;
	if (name) {
		if (strlen(name) >= sizeof(c.name))
			return -ENAMETOOLONG;
		strcpy(c.name, name);
	}
	ret = kfdpool_xioctl(ctl_fd, KFDPOOL_IOC_POOL_CREATE, &c);
	if (ret < 0)
		return ret;
	if (id)
		memcpy(id, c.id, sizeof(c.id));
	return c.fd;
}

KFDPOOL_EXPORT int kfdpool_pool_import_handle(int ctl_fd,
				const struct kfdpool_pool_handle *handle)
{
	struct kfdpool_pool_import_handle ih;
	int ret;

	if (!handle)
		return -EINVAL;
	memset(&ih, 0, sizeof(ih));
	ih.handle = *handle;
	ret = kfdpool_xioctl(ctl_fd, KFDPOOL_IOC_POOL_IMPORT_HANDLE, &ih);
	return ret < 0 ? ret : ih.fd;
}

KFDPOOL_EXPORT int kfdpool_pool_stats(int pool_fd, uint32_t flags,
				      struct kfdpool_pool_stats *st)
{
	if (!st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	st->flags = flags;
	return kfdpool_xioctl(pool_fd, KFDPOOL_IOC_POOL_STATS, st);
}

KFDPOOL_EXPORT int kfdpool_pool_export(int pool_fd)
{
	struct kfdpool_pool_export e;
	int ret;

	memset(&e, 0, sizeof(e));
	ret = kfdpool_xioctl(pool_fd, KFDPOOL_IOC_POOL_EXPORT, &e);
	return ret < 0 ? ret : e.fd;
}

KFDPOOL_EXPORT int kfdpool_pin(int pool_fd, int dmabuf_fd, uint64_t cookie,
			       uint64_t *size, uint32_t *entry_id)
{
	struct kfdpool_pin p;
	int ret;

	memset(&p, 0, sizeof(p));
	p.dmabuf_fd = dmabuf_fd;
	p.cookie = cookie;
	ret = kfdpool_xioctl(pool_fd, KFDPOOL_IOC_PIN, &p);
	if (ret < 0)
		return ret;
	if (size)
		*size = p.size;
	if (entry_id)
		*entry_id = p.entry_id;
	return 0;
}

KFDPOOL_EXPORT int kfdpool_alloc(int pool_fd, uint64_t size, uint64_t cookie,
				 uint32_t *entry_id)
{
	struct kfdpool_alloc a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.size = size;
	a.cookie = cookie;
	ret = kfdpool_xioctl(pool_fd, KFDPOOL_IOC_ALLOC, &a);
	if (ret < 0)
		return ret;
	if (entry_id)
		*entry_id = a.entry_id;
	return a.fd;
}

KFDPOOL_EXPORT int kfdpool_unpin(int pool_fd, uint32_t entry_id,
				 uint32_t *revoked, uint32_t *draining)
{
	struct kfdpool_unpin u;
	int ret;

	memset(&u, 0, sizeof(u));
	u.entry_id = entry_id;
	ret = kfdpool_xioctl(pool_fd, KFDPOOL_IOC_UNPIN, &u);
	if (ret < 0)
		return ret;
	if (revoked)
		*revoked = u.revoked;
	if (draining)
		*draining = u.draining;
	return 0;
}

KFDPOOL_EXPORT int kfdpool_export(int pool_fd, uint32_t entry_id,
				  uint64_t offset, uint64_t size,
				  struct kfdpool_record *record)
{
	struct kfdpool_export e;
	int ret;

	if (!record)
		return -EINVAL;
	memset(&e, 0, sizeof(e));
	e.entry_id = entry_id;
	e.offset = offset;
	e.size = size;
	ret = kfdpool_xioctl(pool_fd, KFDPOOL_IOC_EXPORT, &e);
	if (ret < 0)
		return ret;
	*record = e.record;
	return 0;
}

KFDPOOL_EXPORT int kfdpool_revoke(int pool_fd,
				  const struct kfdpool_record *record)
{
	struct kfdpool_revoke r;

	if (!record)
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	r.record = *record;
	return kfdpool_xioctl(pool_fd, KFDPOOL_IOC_REVOKE, &r);
}

KFDPOOL_EXPORT int kfdpool_import(int pool_fd,
				  const struct kfdpool_record *record,
				  uint32_t flags, struct kfdpool_import *out)
{
	struct kfdpool_import im;
	int ret;

	if (!record)
		return -EINVAL;
	memset(&im, 0, sizeof(im));
	im.record = *record;
	im.flags = flags;
	ret = kfdpool_xioctl(pool_fd, KFDPOOL_IOC_IMPORT, &im);
	if (ret < 0)
		return ret;
	if (out)
		*out = im;
	return (flags & KFDPOOL_IMPORT_VALIDATE) ? 0 : im.fd;
}

KFDPOOL_EXPORT int kfdpool_release(int pool_fd, uint32_t entry_id)
{
	struct kfdpool_release r;

	memset(&r, 0, sizeof(r));
	r.entry_id = entry_id;
	return kfdpool_xioctl(pool_fd, KFDPOOL_IOC_RELEASE, &r);
}

static int handle_export(int pool_fd, uint32_t policy, uint32_t gid,
			 uint32_t flags, struct kfdpool_pool_handle *handle)
{
	struct kfdpool_handle_export h;
	int ret;

	if (!handle)
		return -EINVAL;
	memset(&h, 0, sizeof(h));
	h.policy = policy;
	h.gid = gid;
	h.flags = flags;
	ret = kfdpool_xioctl(pool_fd, KFDPOOL_IOC_HANDLE_EXPORT, &h);
	if (ret < 0)
		return ret;
	*handle = h.handle;
	return 0;
}

KFDPOOL_EXPORT int kfdpool_handle_export(int pool_fd, uint32_t policy,
					 uint32_t gid,
					 struct kfdpool_pool_handle *handle)
{
	return handle_export(pool_fd, policy, gid, 0, handle);
}

KFDPOOL_EXPORT int kfdpool_owner_handle_export(int pool_fd,
					struct kfdpool_pool_handle *handle)
{
	return handle_export(pool_fd, KFDPOOL_HANDLE_POLICY_UID, 0,
			     KFDPOOL_HANDLE_EXPORT_OWNER, handle);
}

static int pool_adopt(int ctl_fd, const struct kfdpool_pool_handle *handle,
		      const uint8_t *id)
{
	struct kfdpool_pool_adopt a;
	int ret;

	memset(&a, 0, sizeof(a));
	if (handle) {
		a.handle = *handle;
	} else {
		a.flags = KFDPOOL_ADOPT_BY_ID;
		memcpy(a.id, id, sizeof(a.id));
	}
	ret = kfdpool_xioctl(ctl_fd, KFDPOOL_IOC_POOL_ADOPT, &a);
	return ret < 0 ? ret : a.fd;
}

KFDPOOL_EXPORT int kfdpool_pool_adopt(int ctl_fd,
				      const struct kfdpool_pool_handle *handle)
{
	return handle ? pool_adopt(ctl_fd, handle, NULL) : -EINVAL;
}

KFDPOOL_EXPORT int kfdpool_pool_adopt_id(int ctl_fd,
					 const uint8_t id[KFDPOOL_ID_LEN])
{
	return id ? pool_adopt(ctl_fd, NULL, id) : -EINVAL;
}

KFDPOOL_EXPORT int kfdpool_pool_destroy(int pool_fd)
{
	struct kfdpool_pool_destroy d;

	memset(&d, 0, sizeof(d));
	return kfdpool_xioctl(pool_fd, KFDPOOL_IOC_POOL_DESTROY, &d);
}

KFDPOOL_EXPORT int kfdpool_pool_destroy_id(int ctl_fd,
					   const uint8_t id[KFDPOOL_ID_LEN])
{
	struct kfdpool_pool_destroy_id d;

	if (!id)
		return -EINVAL;
	memset(&d, 0, sizeof(d));
	memcpy(d.id, id, sizeof(d.id));
	return kfdpool_xioctl(ctl_fd, KFDPOOL_IOC_POOL_DESTROY_ID, &d);
}

KFDPOOL_EXPORT int kfdpool_handle_rotate(int pool_fd)
{
	struct kfdpool_handle_rotate r;

	memset(&r, 0, sizeof(r));
	return kfdpool_xioctl(pool_fd, KFDPOOL_IOC_HANDLE_ROTATE, &r);
}

static int batch_ioctl(int fd, unsigned long cmd, void *ops, uint32_t count,
		       uint32_t elem_size)
{
	struct kfdpool_batch b;

	if (!ops)
		return -EINVAL;
	memset(&b, 0, sizeof(b));
	b.ops = (uintptr_t)ops;
	b.count = count;
	b.elem_size = elem_size;
	return kfdpool_xioctl(fd, cmd, &b);
}

KFDPOOL_EXPORT int kfdpool_export_batch(int pool_fd,
					struct kfdpool_export *ops,
					uint32_t count)
{
	return batch_ioctl(pool_fd, KFDPOOL_IOC_EXPORT_BATCH, ops, count,
			   sizeof(*ops));
}

KFDPOOL_EXPORT int kfdpool_revoke_batch(int pool_fd,
					struct kfdpool_revoke *ops,
					uint32_t count)
{
	return batch_ioctl(pool_fd, KFDPOOL_IOC_REVOKE_BATCH, ops, count,
			   sizeof(*ops));
}

KFDPOOL_EXPORT int kfdpool_import_batch(int pool_fd,
					struct kfdpool_import *ops,
					uint32_t count)
{
	return batch_ioctl(pool_fd, KFDPOOL_IOC_IMPORT_BATCH, ops, count,
			   sizeof(*ops));
}

KFDPOOL_EXPORT int kfdpool_release_batch(int pool_fd,
					 struct kfdpool_release *ops,
					 uint32_t count)
{
	return batch_ioctl(pool_fd, KFDPOOL_IOC_RELEASE_BATCH, ops, count,
			   sizeof(*ops));
}

KFDPOOL_EXPORT int kfdpool_pool_list(int ctl_fd, struct kfdpool_pool_info *pools,
				     uint32_t count, uint64_t *cursor,
				     uint32_t *scope)
{
	struct kfdpool_pool_list l;
	int ret;

	/* The module fills up to a page of its own; the rest comes next. */
	if (!cursor || (count && !pools))
		return -EINVAL;
	memset(&l, 0, sizeof(l));
	l.pools = (uintptr_t)pools;
	l.count = count;
	l.info_size = sizeof(*pools);
	l.cursor = *cursor;
	ret = kfdpool_xioctl(ctl_fd, KFDPOOL_IOC_POOL_LIST, &l);
	if (ret < 0)
		return ret;
	*cursor = l.next_cursor;
	if (scope)
		*scope = l.scope;
	return (int)l.count;
}
