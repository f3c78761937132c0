/* SPDX-License-Identifier: MIT */
/*
 * libkfdpool: the native C API over /dev/kfdpool.
 *
 * Functions return 0 (or a non-negative count or fd) on success and a
 * negative errno on failure; they never set errno as their only report.
 * The structs are those of <linux/kfdpool.h>; the wrappers zero the fields
 * the kernel wants zero, so callers fill only what they mean.
 *
 * All functions are thread-safe.  The batch functions (kfdpool_*v) use a
 * per-thread io_uring ring when the kernel and module support it and fall
 * back to the batch ioctls, then to single ioctls.
 */
#ifndef KFDPOOL_H
#define KFDPOOL_H

#include <stddef.h>
#include <stdint.h>
#include <linux/kfdpool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KFDPOOL_DEVICE_PATH "/dev/kfdpool"

/* Open /dev/kfdpool (O_RDWR | O_CLOEXEC).  Returns the fd or -errno. */
int kfdpool_open(void);

/* Fill @q with the module's ABI version, features and limits. */
int kfdpool_query(int ctl_fd, struct kfdpool_query *q);

/*
 * The library's own control fd of /dev/kfdpool, shared by everything in
 * the process that uses it (the batch calls, libkfdpool-hip): opened on
 * first use (O_CLOEXEC) and kept for the life of the process; never close
 * it.  The module's QUERY result, read once, is copied to @q when not
 * NULL.  Returns the fd, or -errno when /dev/kfdpool cannot be opened (the
 * next call tries again).
 */
int kfdpool_ctl(struct kfdpool_query *q);

/*
 * Create a pool.  @name may be NULL (empty).  Returns the owner fd; the
 * pool's id is written to @id when not NULL.
 */
int kfdpool_pool_create(int ctl_fd, uint64_t limit, uint32_t handle_types,
			const char *name, uint8_t id[KFDPOOL_ID_LEN]);

/*
 * The same with @flags: KFDPOOL_POOL_PERSIST makes a persistent pool,
 * which stays when its last file descriptor closes (its creator's exit
 * included) until it is destroyed; -EDQUOT past the module's
 * max_user_persistent.
 */
int kfdpool_pool_create_flags(int ctl_fd, uint64_t limit,
			      uint32_t handle_types, uint32_t flags,
			      const char *name, uint8_t id[KFDPOOL_ID_LEN]);

/*
 * Persistent pools.  The owner handle (owner fd of a persistent pool)
 * admits the pool's user alone; kfdpool_pool_adopt() turns it into a new
 * owner fd when the pool has none (-EBUSY while one is open, -EACCES for
 * another user), kfdpool_pool_adopt_id() does so by id for CAP_SYS_ADMIN.
 * kfdpool_pool_destroy() (owner fd) and kfdpool_pool_destroy_id()
 * (CAP_SYS_ADMIN) end a pool now: its entries are unpinned, its records
 * stop; importers keep the memory they hold.  The adopt calls return the
 * new fd, the others 0.
 */
int kfdpool_owner_handle_export(int pool_fd,
				struct kfdpool_pool_handle *handle);
int kfdpool_pool_adopt(int ctl_fd, const struct kfdpool_pool_handle *handle);
int kfdpool_pool_adopt_id(int ctl_fd, const uint8_t id[KFDPOOL_ID_LEN]);
int kfdpool_pool_destroy(int pool_fd);
int kfdpool_pool_destroy_id(int ctl_fd, const uint8_t id[KFDPOOL_ID_LEN]);

/* Open a pool from a 64-byte handle.  Returns a new import fd. */
int kfdpool_pool_import_handle(int ctl_fd,
			       const struct kfdpool_pool_handle *handle);

/* The pool's figures; @flags KFDPOOL_STATS_RESET_* (owner fd only). */
int kfdpool_pool_stats(int pool_fd, uint32_t flags,
		       struct kfdpool_pool_stats *st);

/*
 * The pools the caller may see (every pool with CAP_SYS_ADMIN, else those
 * of its euid), a page at a time: up to @count (at most 256 per call)
 * into @pools from *@cursor on, 0 for the first page.  *@cursor gets the
 * next page's cursor, 0 after the last; *@scope (may be NULL)
 * KFDPOOL_POOL_LIST_ALL or _OWN.  Returns how many
 * were written: possibly fewer than @count, even 0, with a non-zero
 * *@cursor (the kernel looks at a bounded number of pools per call).
 */
int kfdpool_pool_list(int ctl_fd, struct kfdpool_pool_info *pools,
		      uint32_t count, uint64_t *cursor, uint32_t *scope);

/* A new import fd of the pool (owner fd only).  Returns the fd. */
int kfdpool_pool_export(int pool_fd);

/* Pin a dma-buf.  @size and @entry_id may be NULL. */
int kfdpool_pin(int pool_fd, int dmabuf_fd, uint64_t cookie, uint64_t *size,
		uint32_t *entry_id);

/*
 * Allocate @size bytes (a page multiple) of host memory in the module and
 * pin it as an entry (KFDPOOL_IOC_ALLOC, when the module reports
 * KFDPOOL_FEATURE_HOST_ALLOC).  Returns the new dma-buf fd (O_CLOEXEC);
 * @entry_id may be NULL.
 */
int kfdpool_alloc(int pool_fd, uint64_t size, uint64_t cookie,
		  uint32_t *entry_id);

/* Unpin an entry.  @revoked and @draining may be NULL. */
int kfdpool_unpin(int pool_fd, uint32_t entry_id, uint32_t *revoked,
		  uint32_t *draining);

/* Export [@offset, @offset + @size) of an entry as a record. */
int kfdpool_export(int pool_fd, uint32_t entry_id, uint64_t offset,
		   uint64_t size, struct kfdpool_record *record);

/* Revoke a record. */
int kfdpool_revoke(int pool_fd, const struct kfdpool_record *record);

/*
 * Import a record.  @flags 0: returns a new dma-buf fd; with
 * KFDPOOL_IMPORT_VALIDATE: returns 0.  The outputs (offset, size,
 * entry_size, cookie, entry_id) are written to @out when not NULL.
 */
int kfdpool_import(int pool_fd, const struct kfdpool_record *record,
		   uint32_t flags, struct kfdpool_import *out);

/* Drop one import of an entry held by this pool fd. */
int kfdpool_release(int pool_fd, uint32_t entry_id);

/* Export the pool as a 64-byte handle (owner fd only). */
int kfdpool_handle_export(int pool_fd, uint32_t policy, uint32_t gid,
			  struct kfdpool_pool_handle *handle);

/* Give the pool a new handle key; older handles stop importing. */
int kfdpool_handle_rotate(int pool_fd);

/*
 * A pool handle as text (docs/handles.md): 128 lowercase hex digits of its
 * 64 bytes, for channels that carry strings.  format writes them and a NUL
 * to @buf (at least KFDPOOL_HANDLE_TEXT_LEN + 1 bytes, else -ENOSPC) and
 * returns KFDPOOL_HANDLE_TEXT_LEN; parse takes exactly 128 hex digits
 * (either case), else -EINVAL.  Parsing checks the form only: the kernel
 * judges the handle when it is imported.
 */
#define KFDPOOL_HANDLE_TEXT_LEN	(2 * KFDPOOL_HANDLE_SIZE)
int kfdpool_handle_format(const struct kfdpool_pool_handle *handle,
			  char *buf, size_t len);
int kfdpool_handle_parse(const char *text,
			 struct kfdpool_pool_handle *handle);

/*
 * The batch ioctls, exactly: @count elements (1..QUERY's max_batch), each
 * element's status field written.  Returns how many were processed.
 */
int kfdpool_export_batch(int pool_fd, struct kfdpool_export *ops,
			 uint32_t count);
int kfdpool_revoke_batch(int pool_fd, struct kfdpool_revoke *ops,
			 uint32_t count);
int kfdpool_import_batch(int pool_fd, struct kfdpool_import *ops,
			 uint32_t count);
int kfdpool_release_batch(int pool_fd, struct kfdpool_release *ops,
			  uint32_t count);

/*
 * Batches of any length.  Each element's status field receives 0 or
 * -errno; one failing element does not stop the others.  Returns how many
 * leading elements were processed (all of them unless the kernel stopped
 * early: -EFAULT, a fatal signal, no memory; elements past them are not
 * written and made nothing) or -errno when none was.  Inputs as for the
 * single calls; flags and pad fields must be zero except
 * kfdpool_import.flags (0 or KFDPOOL_IMPORT_VALIDATE).
 *
 * The transport is chosen per call: io_uring (one SQE per element, records
 * inline; imports use the vectored command so that every output field is
 * filled) when the module reports KFDPOOL_FEATURE_URING_CMD and a ring can
 * be set up, else the batch ioctls (KFDPOOL_FEATURE_BATCH), else one ioctl
 * per element.  In the automatic mode a single element is one plain ioctl
 * and imports use the batch ioctl (the vectored io_uring command runs the
 * same batch code inline, a slice per system call either way: the ring
 * would add only its overhead).  The results are the same: a descriptor
 * that is not open (-EBADF), not a pool (-ENOTTY), or an import descriptor
 * for export or revoke (-EPERM) fails the whole call, on every transport,
 * and no element is written.  A count of 0 returns 0.
 */
int kfdpool_exportv(int pool_fd, struct kfdpool_export *ops, size_t count);
int kfdpool_revokev(int pool_fd, struct kfdpool_revoke *ops, size_t count);
int kfdpool_importv(int pool_fd, struct kfdpool_import *ops, size_t count);
int kfdpool_releasev(int pool_fd, struct kfdpool_release *ops, size_t count);

/* Force a transport for the kfdpool_*v calls of the whole process (tests,
 * benchmarks).  The environment variable KFDPOOL_BATCH=auto|uring|ioctl|
 * single sets the initial mode.  Returns the previous mode. */
enum kfdpool_batch_mode {
	KFDPOOL_BATCH_AUTO = 0,
	KFDPOOL_BATCH_URING = 1,	/* io_uring, else -EOPNOTSUPP */
	KFDPOOL_BATCH_IOCTL = 2,	/* batch ioctls, else -EOPNOTSUPP */
	KFDPOOL_BATCH_SINGLE = 3,	/* one ioctl per element */
};
enum kfdpool_batch_mode kfdpool_set_batch_mode(enum kfdpool_batch_mode m);

/* The transport the last kfdpool_*v call of this thread used. */
enum kfdpool_batch_mode kfdpool_last_batch_mode(void);

#ifdef __cplusplus
}
#endif

#endif /* KFDPOOL_H */
