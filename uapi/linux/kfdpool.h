/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note */
/*
 * kfdpool: shareable GPU and host memory pools.
 *
 * The rules every struct follows (size versioning, zeroed padding, fds
 * handed out last) and what each command does are in docs/uapi.md.
 */
#ifndef _UAPI_LINUX_KFDPOOL_H
#define _UAPI_LINUX_KFDPOOL_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define KFDPOOL_ABI_VERSION	2

#define KFDPOOL_NAME_LEN	32
#define KFDPOOL_ID_LEN		16
#define KFDPOOL_RECORD_SIZE	64
#define KFDPOOL_HANDLE_SIZE	64

/* How a pool may be shared: an fd, or handle bytes (KFDPOOL_IOC_HANDLE_EXPORT). */
#define KFDPOOL_HANDLE_TYPE_FD		0x1
#define KFDPOOL_HANDLE_TYPE_FABRIC	0x8
#define KFDPOOL_HANDLE_TYPES_ALL \
	(KFDPOOL_HANDLE_TYPE_FD | KFDPOOL_HANDLE_TYPE_FABRIC)

/* The mode of a pool fd. */
#define KFDPOOL_MODE_OWNER	1
#define KFDPOOL_MODE_IMPORT	2

/**
 * struct kfdpool_record - an exported pointer
 * @data: opaque bytes made by KFDPOOL_IOC_EXPORT
 *
 * A record grants whoever presents it on an fd of its pool the whole
 * dma-buf of the entry it was made in, whatever its offset and size.
 */
struct kfdpool_record {
	__u8 data[KFDPOOL_RECORD_SIZE];
};

/**
 * struct kfdpool_pool_handle - a pool exported as bytes
 * @data: opaque bytes made by KFDPOOL_IOC_HANDLE_EXPORT
 */
struct kfdpool_pool_handle {
	__u8 data[KFDPOOL_HANDLE_SIZE];
};

#define KFDPOOL_FEATURE_BATCH		0x1
#define KFDPOOL_FEATURE_URING_CMD	0x2
#define KFDPOOL_FEATURE_POOL_HANDLE	0x4
#define KFDPOOL_FEATURE_HOST_ALLOC	0x8
#define KFDPOOL_FEATURE_PERSIST		0x10

/**
 * struct kfdpool_query - KFDPOOL_IOC_QUERY: the module's limits and figures
 * @abi_version: KFDPOOL_ABI_VERSION
 * @features: KFDPOOL_FEATURE_* bits
 * @global_limit: 0 (no longer used)
 * @user_limit: 0 (no longer used)
 * @default_pool_limit: limit of a pool created with limit 0 and the
 *	largest a pool may ask for, 0 for neither
 * @max_entries: entries one pool may hold
 * @max_batch: elements one batch may hold
 * @max_records: live records one pool may hold
 * @max_user_records: live records one user's pools may hold, 0 for no limit
 * @global_pinned: 0 (no longer used)
 * @user_pinned: 0 (no longer used)
 * @user_records: live records charged now to the caller's user
 * @pad: must be 0
 * @max_user_persistent: persistent pools one user may keep, 0 for none
 * @user_persistent: persistent pools charged now to the caller's user
 * @max_user_persistent_bytes: bytes of entries the persistent pools of one
 *	user may hold, 0 for no limit
 * @user_persistent_bytes: bytes of entries of the caller's user's
 *	persistent pools now
 */
struct kfdpool_query {
	__u32 abi_version;
	__u32 features;
	__u64 global_limit;
	__u64 user_limit;
	__u64 default_pool_limit;
	__u32 max_entries;
	__u32 max_batch;
	__u32 max_records;
	__u32 max_user_records;
	__u64 global_pinned;
	__u64 user_pinned;
	__u32 user_records;
	__u32 pad;
	__u32 max_user_persistent;
	__u32 user_persistent;
	__u64 max_user_persistent_bytes;
	__u64 user_persistent_bytes;
};

/* kfdpool_pool_create.flags: the pool stays when its last fd closes */
#define KFDPOOL_POOL_PERSIST	0x1

/**
 * struct kfdpool_pool_create - KFDPOOL_IOC_POOL_CREATE: create a pool
 * @limit: bytes the pool may pin, 0 for the module's default
 * @flags: KFDPOOL_POOL_PERSIST or 0
 * @handle_types: KFDPOOL_HANDLE_TYPE_* the pool may be shared through
 * @name: NUL-terminated name of printable ASCII without spaces
 * @fd: returns the pool's owner fd
 * @pad: must be 0
 * @id: returns the pool's 128-bit id: its serial (the first 32 bits,
 *	counting creations) and 96 random bits
 * @owner_handle: returns, for a persistent pool, an owner handle that
 *	admits the caller's euid; zero otherwise
 */
struct kfdpool_pool_create {
	__u64 limit;
	__u32 flags;
	__u32 handle_types;
	char name[KFDPOOL_NAME_LEN];
	__s32 fd;
	__u32 pad;
	__u8 id[KFDPOOL_ID_LEN];
	struct kfdpool_pool_handle owner_handle;
};

/* Who may import a pool handle. */
#define KFDPOOL_HANDLE_POLICY_UID	0
#define KFDPOOL_HANDLE_POLICY_GID	1
#define KFDPOOL_HANDLE_POLICY_ANY	2

/**
 * struct kfdpool_pool_import_handle - KFDPOOL_IOC_POOL_IMPORT_HANDLE: open
 *	a pool from its handle
 * @handle: a handle KFDPOOL_IOC_HANDLE_EXPORT made
 * @flags: must be 0
 * @fd: returns a new import fd of the pool
 */
struct kfdpool_pool_import_handle {
	struct kfdpool_pool_handle handle;
	__u32 flags;
	__s32 fd;
};

/**
 * struct kfdpool_pool_info - one pool as KFDPOOL_IOC_POOL_LIST reports it
 * @id: the pool's id
 * @name: the pool's name
 * @limit: bytes the pool may pin, 0 for no limit
 * @handle_types: KFDPOOL_HANDLE_TYPE_* the pool allows
 * @owner_pid: pid of the pool's creator or last adopter, 0 once it is gone
 * @uid: euid of the pool's creator
 * @entries: entries, draining ones included
 * @reserved_bytes: bytes of all entries
 * @reserved_high: high-water mark of @reserved_bytes
 * @used_bytes: bytes of the entries that have a live record
 * @used_high: high-water mark of @used_bytes
 * @draining_bytes: bytes of unpinned entries that imports keep
 * @imported_bytes: sum over import holders of the bytes they hold
 * @draining_entries: unpinned entries that imports keep
 * @records: live records
 * @import_fds: open import files
 * @serial: the pool's serial: a listing from this cursor starts with it
 * @flags: KFDPOOL_POOL_PERSIST if the pool is persistent
 * @owner_fds: open owner files, 0 for a persistent pool nobody holds
 * @age_ns: nanoseconds since the pool was created (CLOCK_BOOTTIME)
 */
struct kfdpool_pool_info {
	__u8 id[KFDPOOL_ID_LEN];
	char name[KFDPOOL_NAME_LEN];
	__u64 limit;
	__u32 handle_types;
	__s32 owner_pid;
	__u32 uid;
	__u32 entries;
	__u64 reserved_bytes;
	__u64 reserved_high;
	__u64 used_bytes;
	__u64 used_high;
	__u64 draining_bytes;
	__u64 imported_bytes;
	__u32 draining_entries;
	__u32 records;
	__u32 import_fds;
	__u32 serial;
	__u32 flags;
	__u32 owner_fds;
	__u64 age_ns;
};

/* kfdpool_pool_list.scope */
#define KFDPOOL_POOL_LIST_ALL	1
#define KFDPOOL_POOL_LIST_OWN	2

/**
 * struct kfdpool_pool_list - KFDPOOL_IOC_POOL_LIST: a page of the pools
 *	the caller may see
 * @pools: pointer to an array of @count elements of @info_size bytes
 * @count: elements the array holds; returns how many were written
 * @info_size: bytes of one element, 152 to 4096
 * @flags: must be 0
 * @scope: returns KFDPOOL_POOL_LIST_ALL or KFDPOOL_POOL_LIST_OWN
 * @cursor: 0, or the @next_cursor of the previous page
 * @next_cursor: returns where the next page starts, 0 after the last
 * @pad: must be 0
 */
struct kfdpool_pool_list {
	__u64 pools;
	__u32 count;
	__u32 info_size;
	__u32 flags;
	__u32 scope;
	__u64 cursor;
	__u64 next_cursor;
	__u64 pad;
};

/* kfdpool_pool_stats.flags: reset a high-water mark to the current value */
#define KFDPOOL_STATS_RESET_RESERVED_HIGH	0x1
#define KFDPOOL_STATS_RESET_USED_HIGH		0x2

/**
 * struct kfdpool_pool_stats - KFDPOOL_IOC_POOL_STATS: a pool's figures
 * @flags: KFDPOOL_STATS_RESET_* (owner fd only)
 * @mode: returns KFDPOOL_MODE_* of the fd
 * @id: returns the pool's id
 * @name: returns the pool's name
 * @limit: returns the pool's limit, 0 for none
 * @handle_types: returns the pool's KFDPOOL_HANDLE_TYPE_*
 * @owner_pid: returns the pid of the creator or last adopter, 0 once it
 *	is gone
 * @reserved_bytes: returns the bytes of all entries
 * @reserved_high: returns the high-water mark of @reserved_bytes
 * @used_bytes: returns the bytes of the entries that have a live record
 * @used_high: returns the high-water mark of @used_bytes
 * @draining_bytes: returns the bytes of unpinned entries imports keep
 * @imported_bytes: returns the sum over import holders of their bytes
 * @fd_imported_bytes: returns the bytes this fd holds imports of
 * @entries: returns the entries, draining ones included
 * @draining_entries: returns the unpinned entries imports keep
 * @records: returns the live records
 * @import_fds: returns the open import files
 * @fd_imports: returns the entries this fd holds imports of
 * @pad: must be 0
 */
struct kfdpool_pool_stats {
	__u32 flags;
	__u32 mode;
	__u8 id[KFDPOOL_ID_LEN];
	char name[KFDPOOL_NAME_LEN];
	__u64 limit;
	__u32 handle_types;
	__s32 owner_pid;
	__u64 reserved_bytes;
	__u64 reserved_high;
	__u64 used_bytes;
	__u64 used_high;
	__u64 draining_bytes;
	__u64 imported_bytes;
	__u64 fd_imported_bytes;
	__u32 entries;
	__u32 draining_entries;
	__u32 records;
	__u32 import_fds;
	__u32 fd_imports;
	__u32 pad;
};

/**
 * struct kfdpool_pool_export - KFDPOOL_IOC_POOL_EXPORT: a new import fd
 * @flags: must be 0
 * @fd: returns an import fd of the pool
 */
struct kfdpool_pool_export {
	__u32 flags;
	__s32 fd;
};

/**
 * struct kfdpool_pin - KFDPOOL_IOC_PIN: pin a dma-buf as a new entry
 * @dmabuf_fd: the dma-buf
 * @flags: must be 0
 * @cookie: returned by imports of the entry
 * @size: returns the dma-buf's size, now charged
 * @entry_id: returns the entry's id, never 0
 * @pad: must be 0
 */
struct kfdpool_pin {
	__s32 dmabuf_fd;
	__u32 flags;
	__u64 cookie;
	__u64 size;
	__u32 entry_id;
	__u32 pad;
};

/**
 * struct kfdpool_unpin - KFDPOOL_IOC_UNPIN: unpin an entry, revoking its
 *	records
 * @entry_id: the entry
 * @flags: must be 0
 * @revoked: returns how many records this revoked
 * @draining: returns 1 if imports keep the entry, else 0
 */
struct kfdpool_unpin {
	__u32 entry_id;
	__u32 flags;
	__u32 revoked;
	__u32 draining;
};

/**
 * struct kfdpool_export - KFDPOOL_IOC_EXPORT: make a record
 * @entry_id: the entry the pointer lies in
 * @flags: must be 0
 * @offset: offset of the pointer in the entry
 * @size: bytes from @offset, at least 1, within the entry
 * @record: returns the record
 * @status: returns 0 or -errno (batches)
 * @pad: must be 0
 */
struct kfdpool_export {
	__u32 entry_id;
	__u32 flags;
	__u64 offset;
	__u64 size;
	struct kfdpool_record record;
	__s32 status;
	__u32 pad;
};

/**
 * struct kfdpool_revoke - KFDPOOL_IOC_REVOKE: revoke a record
 * @record: the record
 * @flags: must be 0
 * @status: returns 0 or -errno (batches)
 */
struct kfdpool_revoke {
	struct kfdpool_record record;
	__u32 flags;
	__s32 status;
};

/* kfdpool_import.flags: only check the record; the fd holds the entry */
#define KFDPOOL_IMPORT_VALIDATE		0x1

/**
 * struct kfdpool_import - KFDPOOL_IOC_IMPORT: import a record
 * @record: the record
 * @flags: KFDPOOL_IMPORT_VALIDATE or 0
 * @fd: returns a dma-buf fd of the entry, or -1 with VALIDATE
 * @offset: returns the pointer's offset in the dma-buf
 * @size: returns the bytes the record was made for
 * @entry_size: returns the dma-buf's size
 * @cookie: returns the entry's cookie
 * @entry_id: returns the entry's id
 * @status: returns 0 or -errno (batches)
 */
struct kfdpool_import {
	struct kfdpool_record record;
	__u32 flags;
	__s32 fd;
	__u64 offset;
	__u64 size;
	__u64 entry_size;
	__u64 cookie;
	__u32 entry_id;
	__s32 status;
};

/**
 * struct kfdpool_release - KFDPOOL_IOC_RELEASE: drop one import of an entry
 * @entry_id: the entry
 * @flags: must be 0
 * @status: returns 0 or -errno (batches)
 * @pad: must be 0
 */
struct kfdpool_release {
	__u32 entry_id;
	__u32 flags;
	__s32 status;
	__u32 pad;
};

/**
 * struct kfdpool_batch - KFDPOOL_IOC_*_BATCH: many commands of one kind
 * @ops: pointer to an array of @count elements
 * @count: elements, 1 to kfdpool_query.max_batch
 * @elem_size: bytes of one element, at most 4096
 * @flags: must be 0
 * @pad: must be 0
 */
struct kfdpool_batch {
	__u64 ops;
	__u32 count;
	__u32 elem_size;
	__u32 flags;
	__u32 pad;
};

/* kfdpool_handle_export.flags: an owner handle of a persistent pool */
#define KFDPOOL_HANDLE_EXPORT_OWNER	0x1

/**
 * struct kfdpool_handle_export - KFDPOOL_IOC_HANDLE_EXPORT: make a handle
 * @policy: KFDPOOL_HANDLE_POLICY_*; KFDPOOL_HANDLE_POLICY_UID for an owner
 *	handle
 * @gid: the admitted group with KFDPOOL_HANDLE_POLICY_GID, else 0
 * @flags: KFDPOOL_HANDLE_EXPORT_OWNER or 0
 * @pad: must be 0
 * @handle: returns the handle
 */
struct kfdpool_handle_export {
	__u32 policy;
	__u32 gid;
	__u32 flags;
	__u32 pad;
	struct kfdpool_pool_handle handle;
};

/**
 * struct kfdpool_handle_rotate - KFDPOOL_IOC_HANDLE_ROTATE: invalidate
 *	every handle of the pool
 * @flags: must be 0
 * @pad: must be 0
 */
struct kfdpool_handle_rotate {
	__u32 flags;
	__u32 pad;
};

/**
 * struct kfdpool_alloc - KFDPOOL_IOC_ALLOC: host memory as a new entry
 * @size: bytes, a multiple of the page size
 * @cookie: returned by imports of the entry
 * @flags: must be 0
 * @fd: returns a dma-buf fd of the memory
 * @entry_id: returns the entry's id, never 0
 * @pad: must be 0
 */
struct kfdpool_alloc {
	__u64 size;
	__u64 cookie;
	__u32 flags;
	__s32 fd;
	__u32 entry_id;
	__u32 pad;
};

/* kfdpool_pool_adopt.flags: adopt the pool of @id (its uid or CAP_SYS_ADMIN) */
#define KFDPOOL_ADOPT_BY_ID	0x1

/**
 * struct kfdpool_pool_adopt - KFDPOOL_IOC_POOL_ADOPT: an owner fd of a
 *	persistent pool that has none
 * @handle: an owner handle, or zero with KFDPOOL_ADOPT_BY_ID
 * @id: the pool's id with KFDPOOL_ADOPT_BY_ID, else zero
 * @flags: KFDPOOL_ADOPT_BY_ID or 0
 * @fd: returns the new owner fd
 */
struct kfdpool_pool_adopt {
	struct kfdpool_pool_handle handle;
	__u8 id[KFDPOOL_ID_LEN];
	__u32 flags;
	__s32 fd;
};

/**
 * struct kfdpool_pool_destroy_id - KFDPOOL_IOC_POOL_DESTROY_ID: end a pool
 *	by id (its uid or CAP_SYS_ADMIN)
 * @id: the pool's id
 * @flags: must be 0
 * @pad: must be 0
 */
struct kfdpool_pool_destroy_id {
	__u8 id[KFDPOOL_ID_LEN];
	__u32 flags;
	__u32 pad;
};

/**
 * struct kfdpool_pool_destroy - KFDPOOL_IOC_POOL_DESTROY: end the pool of
 *	an owner fd now, persistent or not
 * @flags: must be 0
 * @pad: must be 0
 */
struct kfdpool_pool_destroy {
	__u32 flags;
	__u32 pad;
};

#define KFDPOOL_IOC_MAGIC	0xB9

/* On /dev/kfdpool */
#define KFDPOOL_IOC_QUERY \
	_IOWR(KFDPOOL_IOC_MAGIC, 0x00, struct kfdpool_query)
#define KFDPOOL_IOC_POOL_CREATE \
	_IOWR(KFDPOOL_IOC_MAGIC, 0x01, struct kfdpool_pool_create)
#define KFDPOOL_IOC_POOL_IMPORT_HANDLE \
	_IOWR(KFDPOOL_IOC_MAGIC, 0x02, struct kfdpool_pool_import_handle)
#define KFDPOOL_IOC_POOL_LIST \
	_IOWR(KFDPOOL_IOC_MAGIC, 0x03, struct kfdpool_pool_list)
#define KFDPOOL_IOC_POOL_ADOPT \
	_IOWR(KFDPOOL_IOC_MAGIC, 0x04, struct kfdpool_pool_adopt)
#define KFDPOOL_IOC_POOL_DESTROY_ID \
	_IOW(KFDPOOL_IOC_MAGIC, 0x05, struct kfdpool_pool_destroy_id)

/* On pool fds */
#define KFDPOOL_IOC_POOL_STATS \
	_IOWR(KFDPOOL_IOC_MAGIC, 0x10, struct kfdpool_pool_stats)
#define KFDPOOL_IOC_POOL_EXPORT \
	_IOWR(KFDPOOL_IOC_MAGIC, 0x11, struct kfdpool_pool_export)
#define KFDPOOL_IOC_PIN \
	_IOWR(KFDPOOL_IOC_MAGIC, 0x12, struct kfdpool_pin)
#define KFDPOOL_IOC_UNPIN \
	_IOWR(KFDPOOL_IOC_MAGIC, 0x13, struct kfdpool_unpin)
#define KFDPOOL_IOC_EXPORT \
	_IOWR(KFDPOOL_IOC_MAGIC, 0x14, struct kfdpool_export)
#define KFDPOOL_IOC_REVOKE \
	_IOW(KFDPOOL_IOC_MAGIC, 0x15, struct kfdpool_revoke)
#define KFDPOOL_IOC_IMPORT \
	_IOWR(KFDPOOL_IOC_MAGIC, 0x16, struct kfdpool_import)
#define KFDPOOL_IOC_RELEASE \
	_IOW(KFDPOOL_IOC_MAGIC, 0x17, struct kfdpool_release)
#define KFDPOOL_IOC_EXPORT_BATCH \
	_IOW(KFDPOOL_IOC_MAGIC, 0x18, struct kfdpool_batch)
#define KFDPOOL_IOC_REVOKE_BATCH \
	_IOW(KFDPOOL_IOC_MAGIC, 0x19, struct kfdpool_batch)
#define KFDPOOL_IOC_IMPORT_BATCH \
	_IOW(KFDPOOL_IOC_MAGIC, 0x1a, struct kfdpool_batch)
#define KFDPOOL_IOC_RELEASE_BATCH \
	_IOW(KFDPOOL_IOC_MAGIC, 0x1b, struct kfdpool_batch)
#define KFDPOOL_IOC_HANDLE_EXPORT \
	_IOWR(KFDPOOL_IOC_MAGIC, 0x1c, struct kfdpool_handle_export)
#define KFDPOOL_IOC_HANDLE_ROTATE \
	_IOW(KFDPOOL_IOC_MAGIC, 0x1d, struct kfdpool_handle_rotate)
#define KFDPOOL_IOC_ALLOC \
	_IOWR(KFDPOOL_IOC_MAGIC, 0x1e, struct kfdpool_alloc)
#define KFDPOOL_IOC_POOL_DESTROY \
	_IOW(KFDPOOL_IOC_MAGIC, 0x1f, struct kfdpool_pool_destroy)

/**
 * struct kfdpool_uring_export - payload of KFDPOOL_URING_EXPORT
 * @entry_id: as in struct kfdpool_export
 * @flags: must be 0
 * @offset: as in struct kfdpool_export
 * @size: as in struct kfdpool_export
 * @record_ptr: pointer where the record is written
 */
struct kfdpool_uring_export {
	__u32 entry_id;
	__u32 flags;
	__u64 offset;
	__u64 size;
	__u64 record_ptr;
};

/**
 * struct kfdpool_uring_record - payload of KFDPOOL_URING_IMPORT and
 *	KFDPOOL_URING_REVOKE
 * @record: the record
 * @flags: KFDPOOL_IMPORT_VALIDATE or 0 to import, 0 to revoke
 * @pad: must be 0
 */
struct kfdpool_uring_record {
	struct kfdpool_record record;
	__u32 flags;
	__u32 pad;
};

/* IORING_OP_URING_CMD on a pool fd, on an IORING_SETUP_SQE128 ring */
#define KFDPOOL_URING_EXPORT \
	_IOW(KFDPOOL_IOC_MAGIC, 0x40, struct kfdpool_uring_export)
#define KFDPOOL_URING_REVOKE \
	_IOW(KFDPOOL_IOC_MAGIC, 0x41, struct kfdpool_uring_record)
#define KFDPOOL_URING_IMPORT \
	_IOW(KFDPOOL_IOC_MAGIC, 0x42, struct kfdpool_uring_record)
#define KFDPOOL_URING_RELEASE \
	_IOW(KFDPOOL_IOC_MAGIC, 0x43, struct kfdpool_release)

#endif /* _UAPI_LINUX_KFDPOOL_H */
