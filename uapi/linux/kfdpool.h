/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note */
/*
 * kfdpool: shareable GPU and host memory pools.
 *
 * /dev/kfdpool (the control device) creates and lists pools.  A pool is an
 * anonymous-inode file; its fds are either owner fds (may pin, allocate,
 * unpin, export and revoke) or import fds (may import, release and read
 * stats).
 * The pool lives while any of its fds lives.
 *
 * ABI rules, for every struct below:
 *  - Fields marked "in" are read, "out" are written; what an "out" field
 *    holds on input is ignored.  Fields named pad or marked "must be 0"
 *    must be zero on input, and unknown flag bits must be zero, else the
 *    call fails with -EINVAL.
 *  - Every ioctl is size-versioned, as clone3() and openat2(): the size
 *    encoded in the command number is the caller's struct size.  A smaller
 *    struct than the kernel's is zero-extended; a caller struct smaller than
 *    the first version's is refused (-EINVAL).  A larger one is accepted
 *    only when every byte past the kernel's struct is zero: otherwise the
 *    call fails with -E2BIG and does nothing, so that a newer caller learns
 *    that this kernel cannot do what the newer fields ask.  The kernel
 *    copies back min(caller, kernel) bytes.  Batch elements follow the same
 *    rule one by one (an element with a non-zero tail gets -E2BIG in its
 *    status and is not run), and so do io_uring payloads (see below).
 *  - Unknown commands fail with -ENOTTY.
 *  - Every fd returned is O_CLOEXEC, goes through the kernel's receive path
 *    (security_file_receive(), as for SCM_RIGHTS, so security modules may
 *    refuse it) and is installed only after everything else has been
 *    copied back successfully; its number is written just before it goes
 *    live (see KFDPOOL_IOC_IMPORT).
 *
 * The ioctl magic, 0xB9, was free in Documentation/userspace-api/ioctl/
 * ioctl-number.rst of Linux 6.12 (0xB8 is the last one taken there) and is
 * not registered: an upstream submission adds a line for "0xB9 all
 * linux/kfdpool.h" to that table.
 */
#ifndef _UAPI_LINUX_KFDPOOL_H
#define _UAPI_LINUX_KFDPOOL_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define KFDPOOL_ABI_VERSION	1

#define KFDPOOL_NAME_LEN	32
#define KFDPOOL_ID_LEN		16
#define KFDPOOL_SECRET_LEN	16
#define KFDPOOL_RECORD_SIZE	64
#define KFDPOOL_HANDLE_SIZE	64

/* Live export records one pool may hold (bounds its kernel memory). */
#define KFDPOOL_MAX_RECORDS	0x100000

/* The largest count a batch command accepts. */
#define KFDPOOL_BATCH_MAX	4096

/*
 * Handle types a pool may be shared through.  The values are those of
 * hipMemAllocationHandleType (and CUmemAllocationHandleType).
 */
#define KFDPOOL_HANDLE_TYPE_FD		0x1	/* an import-mode pool fd */
#define KFDPOOL_HANDLE_TYPE_FABRIC	0x8	/* a 64-byte pool handle */
#define KFDPOOL_HANDLE_TYPES_ALL \
	(KFDPOOL_HANDLE_TYPE_FD | KFDPOOL_HANDLE_TYPE_FABRIC)

/* Mode of a pool fd, as reported in kfdpool_pool_stats.mode and fdinfo. */
#define KFDPOOL_MODE_OWNER	1
#define KFDPOOL_MODE_IMPORT	2

/* Magic words, so that a record or handle of another kind never parses. */
#define KFDPOOL_RECORD_MAGIC	0x6b667052	/* "Rpfk" little-endian */
#define KFDPOOL_HANDLE_MAGIC	0x6b667048	/* "Hpfk" little-endian */

/**
 * struct kfdpool_record - the 64-byte record of one exported pointer
 * @pool_id: id of the pool the record belongs to
 * @magic: KFDPOOL_RECORD_MAGIC
 * @record_id: the record's slot in its pool
 * @entry_id: the entry the pointer lies in
 * @generation: the pool's export counter when the record was made
 * @offset: offset of the pointer in the entry's dma-buf
 * @size: bytes from @offset that the record covers
 * @nonce: bytes only the kernel can make (a keyed PRF of the record's slot
 *	and generation); a record only imports if they match
 *
 * This is the encoding of hipMemPoolPtrExportData.  The kernel checks every
 * field against what it stored when the record was made: a record that was
 * revoked, forged, altered or made by another pool never imports.
 */
struct kfdpool_record {
	__u8 pool_id[KFDPOOL_ID_LEN];
	__u32 magic;
	__u32 record_id;
	__u32 entry_id;
	__u32 generation;
	__u64 offset;
	__u64 size;
	__u8 nonce[16];
};

/* ------------------------------------------------------------------ */
/* Commands on the control device, /dev/kfdpool                       */
/* ------------------------------------------------------------------ */

/* Feature bits reported in kfdpool_query.features. */
#define KFDPOOL_FEATURE_BATCH		0x1	/* batch ioctls */
#define KFDPOOL_FEATURE_URING_CMD	0x2	/* io_uring passthrough */
#define KFDPOOL_FEATURE_POOL_HANDLE	0x4	/* 64-byte pool handles */
#define KFDPOOL_FEATURE_HOST_ALLOC	0x8	/* KFDPOOL_IOC_ALLOC */
/*
 * POOL_LIST fills kfdpool_pool_info's @held_bytes, @held_entries and
 * @state.  Without it (an older module, whose element is
 * KFDPOOL_POOL_INFO_SIZE_VER0 bytes) they read as 0: unknown, not none.
 */
#define KFDPOOL_FEATURE_POOL_HELD	0x10

/**
 * struct kfdpool_query - ABI version, features and limits of the module
 *	(only @pad is read)
 * @abi_version: out: KFDPOOL_ABI_VERSION of the running module
 * @features: out: KFDPOOL_FEATURE_* bits
 * @global_limit: out: bytes all pools together may pin, 0 for no limit
 * @user_limit: out: bytes the pools of one uid may pin, 0 for no limit
 * @default_pool_limit: out: limit of a pool created with limit 0, and the
 *	largest limit a pool may ask for; 0 for neither
 * @max_entries: out: entries one pool may hold
 * @max_batch: out: KFDPOOL_BATCH_MAX
 * @global_pinned: out: bytes pinned in all pools now; a dma-buf pinned in
 *	several pools counts once
 * @user_pinned: out: bytes charged now to the caller's user: its euid in
 *	its user namespace, for the dma-bufs that pools of that user, or of
 *	users of namespaces it owns, pin (each dma-buf once).  A user is also
 *	charged at every ancestor namespace's level, to the namespace's owner;
 *	PIN fails with -EDQUOT when any level would pass @user_limit
 * @pad: must be 0
 * @max_user_records: out: live export records the pools of one user (and
 *	of the namespaces it owns) may hold together, 0 for no limit
 * @user_records: out: live export records charged now to the caller's user
 *
 * The struct is size-versioned: @max_user_records and @user_records are
 * not in the first version (KFDPOOL_QUERY_SIZE_VER0 bytes).
 */
struct kfdpool_query {
	__u32 abi_version;
	__u32 features;
	__u64 global_limit;
	__u64 user_limit;
	__u64 default_pool_limit;
	__u32 max_entries;
	__u32 max_batch;
	__u64 global_pinned;
	__u64 user_pinned;
	__u64 pad[4];
	__u32 max_user_records;
	__u32 user_records;
};

#define KFDPOOL_QUERY_SIZE_VER0		80

/**
 * struct kfdpool_pool_create - create a pool
 * @limit: in: bytes the pool may pin, 0 for the module's default_pool_limit.
 *	When default_pool_limit is set it is also a cap: a larger @limit fails
 *	with -EDQUOT (it is not lowered to the cap)
 * @flags: in: must be 0
 * @handle_types: in: KFDPOOL_HANDLE_TYPE_* the pool may be shared through;
 *	0 makes a pool that cannot be shared (pointer export is refused)
 * @name: in: NUL-terminated name for observability, printable ASCII without
 *	spaces (0x21..0x7e); may be empty.  No NUL within the array: -EINVAL.
 * @fd: out: the owner fd of the new pool
 * @pad: must be 0
 * @id: out: the pool's random 128-bit id
 */
struct kfdpool_pool_create {
	__u64 limit;
	__u32 flags;
	__u32 handle_types;
	char name[KFDPOOL_NAME_LEN];
	__s32 fd;
	__u32 pad;
	__u8 id[KFDPOOL_ID_LEN];
};

/**
 * struct kfdpool_pool_handle - a pool exported as 64 bytes
 * @pool_id: id of the pool
 * @magic: KFDPOOL_HANDLE_MAGIC
 * @policy: KFDPOOL_HANDLE_POLICY_* chosen at export
 * @gid: under KFDPOOL_HANDLE_POLICY_GID, the admitted group as the
 *	exporter's user namespace numbers it (what the exporter asked for);
 *	else 0
 * @uid: the exporter's effective uid as the exporter's user namespace
 *	numbers it
 * @secret: proves the holder was given the handle: a MAC, under the pool's
 *	current key, of the fields above and of the kernel-wide id the policy
 *	admits (the exporter's user, or the group), which the handle itself
 *	does not contain
 * @pad: 0
 *
 * Presenting a handle to KFDPOOL_IOC_POOL_IMPORT_HANDLE yields an import fd
 * of the pool, without passing any fd between processes.  Rotating the
 * pool's key (KFDPOOL_IOC_HANDLE_ROTATE) kills every handle given out.
 *
 * @uid and @gid say what the exporter chose, in its own numbering; they are
 * never host ids shown to a container.  Admission goes by identity, not by
 * number: the importing kernel recomputes the MAC with the caller's own
 * kernel-wide uid (UID policy) or each of its groups (GID policy), so the
 * exporter's user is admitted under whatever number its namespace gives it,
 * and nobody else is, whatever number it has.  Altering any field makes the
 * import fail (-EACCES, or -EINVAL for a malformed field).
 */
struct kfdpool_pool_handle {
	__u8 pool_id[KFDPOOL_ID_LEN];
	__u32 magic;
	__u32 policy;
	__u32 gid;
	__u32 uid;
	__u8 secret[KFDPOOL_SECRET_LEN];
	__u8 pad[16];
};

/*
 * Who may import a pool handle.  The default (0) is the exporter's user.
 * KFDPOOL_HANDLE_POLICY_ANY makes the 64 bytes a bearer token for the
 * pool's memory (as GEM flink names were): it is refused (-EPERM, at export
 * and at import of a handle given out before) unless the administrator
 * sets the module parameter allow_any_handles.
 */
#define KFDPOOL_HANDLE_POLICY_UID	0	/* the exporter's effective user */
#define KFDPOOL_HANDLE_POLICY_GID	1	/* members of group @gid */
#define KFDPOOL_HANDLE_POLICY_ANY	2	/* anyone holding the handle */

/**
 * struct kfdpool_pool_import_handle - open a pool from its 64-byte handle
 * @handle: in: what KFDPOOL_IOC_HANDLE_EXPORT returned
 * @flags: in: must be 0
 * @fd: out: a new import fd of the pool
 *
 * Fails with -EPERM for a KFDPOOL_HANDLE_POLICY_ANY handle while the
 * module's allow_any_handles is off, -ENOENT when no pool has that id (or
 * it was destroyed), -EACCES when the secret does not match (rotated,
 * forged, altered) or the caller is not admitted by the policy.
 */
struct kfdpool_pool_import_handle {
	struct kfdpool_pool_handle handle;
	__u32 flags;
	__s32 fd;
};

/**
 * struct kfdpool_pool_info - one pool as KFDPOOL_IOC_POOL_LIST reports it
 * @id: the pool's id
 * @name: the pool's name, NUL-terminated
 * @limit: bytes the pool may pin, 0 for no limit
 * @handle_types: KFDPOOL_HANDLE_TYPE_* the pool allows
 * @owner_pid: pid (in the caller's pid namespace) of the pool's creator, 0
 *	if not visible there
 * @uid: euid of the creator, in the caller's user namespace (the overflow
 *	uid if unmapped there)
 * @entries: entries, draining ones included
 * @reserved_bytes: bytes of all entries, draining ones included
 * @reserved_high: high-water mark of @reserved_bytes
 * @used_bytes: bytes covered by live export records (overlaps once)
 * @used_high: high-water mark of @used_bytes
 * @draining_bytes: bytes of unpinned entries still alive (imports counted
 *	on pool fds, or held: @held_bytes)
 * @imported_bytes: sum over import holders of the bytes of the entries each
 *	holds
 * @draining_entries: entries unpinned but still alive
 * @records: live export records
 * @import_fds: import-mode files of the pool that are open
 * @pad: 0
 * @held_bytes: bytes of held entries (kfdpool_pool_stats.held_bytes)
 * @held_entries: held entries
 * @state: KFDPOOL_POOL_INFO_ZOMBIE when every file of the pool is closed
 *	and only its held entries keep it (and their charges) until the last
 *	outside reference to them goes; else 0
 *
 * The figures are those of struct kfdpool_pool_stats, read together under
 * the pool's lock.  The struct is size-versioned: @held_bytes,
 * @held_entries and @state are not in the first version
 * (KFDPOOL_POOL_INFO_SIZE_VER0 bytes).
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
	__u32 pad;
	__u64 held_bytes;
	__u32 held_entries;
	__u32 state;
};

#define KFDPOOL_POOL_INFO_SIZE_VER0	136

/* kfdpool_pool_info.state */
#define KFDPOOL_POOL_INFO_ZOMBIE	1

/* The most elements one KFDPOOL_IOC_POOL_LIST call fills. */
#define KFDPOOL_POOL_LIST_MAX	256

/* kfdpool_pool_list.scope: which pools the caller is shown. */
#define KFDPOOL_POOL_LIST_ALL	1	/* every pool (CAP_SYS_ADMIN) */
#define KFDPOOL_POOL_LIST_OWN	2	/* pools created by the caller's euid */

/**
 * struct kfdpool_pool_list - list the pools the caller may see, a page at
 *	a time (on /dev/kfdpool)
 * @pools: in: user pointer to an array of @count elements of @info_size
 *	bytes each (struct kfdpool_pool_info); may be 0 when @count is 0
 * @count: in: elements the array holds, 0..KFDPOOL_POOL_LIST_MAX (else
 *	-EINVAL); out: elements written
 * @info_size: in: the size of one element as the caller knows it, at least
 *	the first version's (KFDPOOL_POOL_INFO_SIZE_VER0) and at most 4096
 *	(else -EINVAL).  The kernel
 *	writes min(@info_size, its size) bytes of each element and zeroes the
 *	rest of it
 * @flags: in: must be 0
 * @cursor: in: 0 for the first page, else the previous call's @next_cursor
 * @next_cursor: out: the cursor of the next page; 0 when no pool the caller
 *	may see is left after this page
 * @scope: out: KFDPOOL_POOL_LIST_ALL when the caller has CAP_SYS_ADMIN in
 *	the initial user namespace (every pool is listed), else
 *	KFDPOOL_POOL_LIST_OWN (the pools created by the caller's euid)
 * @pad: must be 0
 *
 * Pools are listed in creation order, zombies (see
 * kfdpool_pool_info.state) included.  A pool that exists from the first
 * call to the last is listed exactly once; a pool created or destroyed
 * meanwhile may or may not be.  A call looks at a bounded number of pools
 * (visible or not): it may return fewer than @count, even none, with a
 * non-zero @next_cursor; only @next_cursor 0 says the listing is done.
 * @count 0 asks only whether any pool is there (@next_cursor).  Nothing
 * is copied to user space under a lock: a page is read into the kernel,
 * then copied out (-EFAULT if that fails).
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

/* ------------------------------------------------------------------ */
/* Commands on a pool fd                                              */
/* ------------------------------------------------------------------ */

/* kfdpool_pool_stats.flags: reset a high-water mark to its current value. */
#define KFDPOOL_STATS_RESET_RESERVED_HIGH	0x1
#define KFDPOOL_STATS_RESET_USED_HIGH		0x2

/**
 * struct kfdpool_pool_stats - the pool's accounting
 * @flags: in: KFDPOOL_STATS_RESET_* (owner fd only, else -EPERM); the
 *	figures returned are read after the reset
 * @mode: out: KFDPOOL_MODE_* of the fd the call was made on
 * @id: out: the pool's id
 * @name: out: the pool's name, NUL-terminated
 * @limit: out: bytes the pool may pin, 0 for no limit
 * @handle_types: out: KFDPOOL_HANDLE_TYPE_* the pool allows
 * @owner_pid: out: pid (in the caller's namespace) of the pool's creator
 *	while it lives; 0 once it was reaped (its number may then name
 *	another process) or when it is not visible
 * @reserved_bytes: out: bytes of all entries, draining ones included
 * @reserved_high: out: high-water mark of @reserved_bytes.  High-water marks
 *	record every peak the pool reached, including that of a command the
 *	kernel undid because its result could not be copied back (-EFAULT):
 *	such a command leaves every other figure as it found it
 * @used_bytes: out: bytes covered by live export records; bytes that
 *	several records cover (interior pointers, the same pointer exported
 *	twice) count once
 * @used_high: out: high-water mark of @used_bytes
 * @draining_bytes: out: bytes of unpinned entries still alive: imports
 *	counted on a pool fd keep them, or fds of them the pool handed out
 *	(@held_bytes)
 * @imported_bytes: out: sum over import holders of the bytes of the entries
 *	each holds (an entry held by two fds counts twice)
 * @fd_imported_bytes: out: bytes of the entries this fd holds imports of
 * @entries: out: entries, draining ones included
 * @draining_entries: out: entries unpinned but still alive
 * @records: out: live export records
 * @import_fds: out: import-mode fds of the pool that are open
 * @fd_imports: out: entries this fd holds imports of
 * @pad: must be 0
 * @held_bytes: out: bytes of unpinned entries with no import counted that
 *	the pool keeps because their dma-buf is still referenced outside the
 *	module after the pool handed out fds of it (an importer that released
 *	but kept its fd or mapping, or never released and closed its pool fd).
 *	Held entries stay charged to the pool's limit, its user and the global
 *	limit until the last outside reference goes; they are part of
 *	@draining_bytes and @reserved_bytes
 * @held_entries: out: such entries
 * @pad2: must be 0
 *
 * The struct is size-versioned: @held_bytes, @held_entries and @pad2 are not
 * in the first version (KFDPOOL_POOL_STATS_SIZE_VER0 bytes).
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
	__u32 pad[5];
	__u64 held_bytes;
	__u32 held_entries;
	__u32 pad2;
};

#define KFDPOOL_POOL_STATS_SIZE_VER0	168

/**
 * struct kfdpool_pool_export - make an import fd of a pool (owner fd only)
 * @flags: in: must be 0
 * @fd: out: a new import-mode fd of the same pool; this fd is the shareable
 *	handle of hipMemHandleTypePosixFileDescriptor
 *
 * Fails with -EOPNOTSUPP when the pool lacks KFDPOOL_HANDLE_TYPE_FD.
 */
struct kfdpool_pool_export {
	__u32 flags;
	__s32 fd;
};

/**
 * struct kfdpool_pin - pin a dma-buf in a pool (owner fd only)
 * @dmabuf_fd: in: a dma-buf fd (-EBADF if not open, -EINVAL if not a dma-buf)
 * @flags: in: must be 0
 * @cookie: in: opaque to the kernel, returned by imports of the entry
 *	(importers may be other users: libkfdpool-hip stores the chunk's
 *	number in its pool, never an address)
 * @size: out: the dma-buf's size, now charged to the pool
 * @entry_id: out: the new entry's id, never 0
 * @pad: must be 0
 *
 * Takes a reference on the dma-buf.  The pool's limit counts each of its
 * entries; the global and per-user limits count each dma-buf once, however
 * many pools pin it: the first entry of a dma-buf charges it, the last one
 * freed returns the charge.  Two users pinning one dma-buf are each charged
 * once.  Fails with -ENOSPC over the pool's limit, the global limit or the
 * per-pool entry cap, -EDQUOT over the per-user limit (at the caller's or
 * any ancestor user namespace's level), and -EEXIST when the dma-buf is
 * pinned in this pool already.
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
 * struct kfdpool_unpin - remove an entry from a pool (owner fd only)
 * @entry_id: in: the entry (-ENOENT if the pool has no such live entry)
 * @flags: in: must be 0
 * @revoked: out: export records of the entry that this revoked
 * @draining: out: 1 if the entry stays alive, counted as draining: imports
 *	on pool fds keep it until the last is released, or fds of it the pool
 *	handed out are still open (held, see kfdpool_pool_stats.held_bytes);
 *	else 0 (the entry is gone)
 *
 * Every record of the entry is revoked; the entry can no longer be imported.
 */
struct kfdpool_unpin {
	__u32 entry_id;
	__u32 flags;
	__u32 revoked;
	__u32 draining;
};

/**
 * struct kfdpool_export - export a pointer as a record (owner fd only)
 * @entry_id: in: the entry the pointer lies in
 * @flags: in: must be 0
 * @offset: in: offset of the pointer in the entry
 * @size: in: bytes covered, > 0; @offset + @size must not pass the entry's
 *	end (-EINVAL)
 * @record: out: the record to hand to importers
 * @status: out: 0 or -errno of this element (batch); 0 for the single ioctl
 * @pad: must be 0
 *
 * Fails with -EOPNOTSUPP when the pool has no handle types, -ENOENT when
 * the entry is not live, -ENOSPC when the pool already holds
 * KFDPOOL_MAX_RECORDS live records, and -EDQUOT when the pool's user holds
 * kfdpool_query.max_user_records.  Records that overlap count once in the
 * pool's used bytes.
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
 * struct kfdpool_revoke - revoke an export record (owner fd only)
 * @record: in: the record as KFDPOOL_IOC_EXPORT made it
 * @flags: in: must be 0
 * @status: out: 0 or -errno of this element (batch)
 *
 * Fails with -ENOENT when the record is not live, -EXDEV when it is of
 * another pool, -EINVAL when its magic is wrong.
 */
struct kfdpool_revoke {
	struct kfdpool_record record;
	__u32 flags;
	__s32 status;
};

/* kfdpool_import.flags: the caller holds an import of the entry already. */
#define KFDPOOL_IMPORT_VALIDATE		0x1

/**
 * struct kfdpool_import - import an exported pointer (any fd of the pool)
 * @record: in: the record
 * @flags: in: KFDPOOL_IMPORT_VALIDATE or 0
 * @fd: out: without VALIDATE, a new dma-buf fd of the entry (O_CLOEXEC), and
 *	the entry is counted as imported by this pool fd; with VALIDATE, -1, and
 *	the call fails with -ENXIO unless this pool fd holds an import of the
 *	entry.  The other outputs are written first, then the fd is received
 *	(its number written here just before it goes live); when no fd can be
 *	received (-EMFILE, or a security module's refusal) the import is
 *	undone, @fd is -1 and the call fails with that error.  (On kernels
 *	whose receive_fd() cannot write the number first, such as 6.1, the
 *	number is written right after: a caller that unmaps its own struct
 *	meanwhile gets -EFAULT and an fd it was not told of.)
 * @offset: out: offset of the pointer in the dma-buf
 * @size: out: bytes the record covers
 * @entry_size: out: size of the entry's dma-buf
 * @cookie: out: the cookie given at pin
 * @entry_id: out: the entry
 * @status: out: 0 or -errno of this element (batch)
 *
 * Fails with -EXDEV for a record of another pool, -ESTALE for a record
 * whose slot was reused, -ENOENT for a record that was revoked, never
 * existed, or does not match what the kernel stored, -EINVAL for a bad
 * magic.
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
 * struct kfdpool_release - drop one import of an entry (any fd of the pool)
 * @entry_id: in: the entry
 * @flags: in: must be 0
 * @status: out: 0 or -errno of this element (batch)
 * @pad: must be 0
 *
 * Fails with -ENOENT when this pool fd holds no import of the entry.
 * Closing a pool fd releases all of its imports.
 */
struct kfdpool_release {
	__u32 entry_id;
	__u32 flags;
	__s32 status;
	__u32 pad;
};

/**
 * struct kfdpool_batch - many exports, revokes, imports or releases at once
 * @ops: in: user pointer to an array of @count elements
 *	(struct kfdpool_export, _revoke, _import or _release by command)
 * @count: in: 1..KFDPOOL_BATCH_MAX, else -EINVAL
 * @elem_size: in: the size of one element as the caller knows it, at least
 *	the first version's; elements are size-versioned like ioctl structs
 * @flags: in: must be 0
 * @pad: must be 0
 *
 * Elements are processed in order, each on its own: the outcome of each is
 * written to its status field, and a failing element does not stop the
 * others.  The call returns how many elements were processed (their status
 * and outputs written).  It stops early, returning the count so far, only
 * when it cannot read or write an element (-EFAULT if that is the first) or
 * a fatal signal is pending (-EINTR if first).  An import fd sending an
 * owner-only batch fails as a whole with -EPERM.  Import elements that
 * return fds: an element's fd is installed only after that element was
 * copied back.  An import undone because its fd could not be installed
 * (-EMFILE) counts for none of the elements after it: a VALIDATE element
 * behind it that held only through it fails with -ENXIO.
 */
struct kfdpool_batch {
	__u64 ops;
	__u32 count;
	__u32 elem_size;
	__u32 flags;
	__u32 pad;
};

/**
 * struct kfdpool_handle_export - export a pool as a 64-byte handle
 *	(owner fd only)
 * @policy: in: KFDPOOL_HANDLE_POLICY_*
 * @gid: in: the admitted group for KFDPOOL_HANDLE_POLICY_GID, else must be 0
 * @flags: in: must be 0
 * @pad: must be 0
 * @handle: out: the handle
 *
 * Fails with -EPERM on an import fd or for KFDPOOL_HANDLE_POLICY_ANY while
 * the module's allow_any_handles is off, -EINVAL for a bad policy, a gid
 * given with another policy than GID, or a gid not mapped in the caller's
 * user namespace, -EOPNOTSUPP when the pool lacks
 * KFDPOOL_HANDLE_TYPE_FABRIC.
 */
struct kfdpool_handle_export {
	__u32 policy;
	__u32 gid;
	__u32 flags;
	__u32 pad;
	struct kfdpool_pool_handle handle;
};

/**
 * struct kfdpool_handle_rotate - give the pool a new handle key (owner fd
 *	only); every handle exported before no longer imports
 * @flags: in: must be 0
 * @pad: must be 0
 *
 * Fails with -EOPNOTSUPP when the pool lacks KFDPOOL_HANDLE_TYPE_FABRIC.
 * Import fds obtained before the rotation keep working.
 */
struct kfdpool_handle_rotate {
	__u32 flags;
	__u32 pad;
};

/**
 * struct kfdpool_alloc - allocate host memory in the module and pin it as an
 *	entry (owner fd only)
 * @size: in: bytes, a non-zero multiple of the page size (else -EINVAL)
 * @cookie: in: as kfdpool_pin.cookie
 * @flags: in: must be 0
 * @fd: out: a dma-buf fd of the new memory (O_RDWR, O_CLOEXEC), installed
 *	only after everything else was copied back
 * @entry_id: out: the new entry's id, never 0
 * @pad: must be 0
 *
 * The memory is shmem, zero-filled and allocated in full before the call
 * returns, in the caller's context: its pages are charged to the caller's
 * memory cgroup, and a charge or allocation that cannot be met fails the
 * call with -ENOMEM rather than invoke the OOM killer.  The kfdpool limits
 * are charged before any page is allocated: -ENOSPC over the pool's limit,
 * the global limit or the per-pool entry cap, -EDQUOT over the per-user
 * limit, as for KFDPOOL_IOC_PIN.  -ENOMEM also when @size exceeds the
 * machine's memory, what the kernel estimates it can make available, or
 * the memory.max of the caller's cgroup or one of its ancestors.  -EINTR
 * when a fatal signal arrives while the pages are being allocated.
 *
 * The dma-buf is an ordinary exporter (attach, DMA mapping of its pages,
 * CPU access, vmap).  Its mmap() maps the shmem pages themselves, not
 * VM_PFNMAP: get_user_pages(), io_uring fixed buffers and GPU host
 * registration accept the mappings of the allocating process and of every
 * importer.  A mapping keeps the pages it maps alive on its own (like a
 * memfd mapping) after the dma-buf and the entry are gone; the kfdpool
 * limits are returned when the entry is freed, the memory cgroup's charge
 * when the last page is.  COW (MAP_PRIVATE writable) mappings are refused
 * (-EINVAL).
 *
 * Unpinning, releasing and importing the entry work as for a pinned
 * dma-buf.  Available when KFDPOOL_FEATURE_HOST_ALLOC is reported.
 */
struct kfdpool_alloc {
	__u64 size;
	__u64 cookie;
	__u32 flags;
	__s32 fd;
	__u32 entry_id;
	__u32 pad;
};

/* See the ABI rules at the top: 0xB9 is free in Linux 6.12's table. */
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
	_IOWR(KFDPOOL_IOC_MAGIC, 0x15, struct kfdpool_revoke)
#define KFDPOOL_IOC_IMPORT \
	_IOWR(KFDPOOL_IOC_MAGIC, 0x16, struct kfdpool_import)
#define KFDPOOL_IOC_RELEASE \
	_IOWR(KFDPOOL_IOC_MAGIC, 0x17, struct kfdpool_release)
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

/* ------------------------------------------------------------------ */
/* io_uring passthrough on pool fds                                   */
/* ------------------------------------------------------------------ */

/*
 * IORING_OP_URING_CMD on a pool fd, on a ring set up with
 * IORING_SETUP_SQE128 (80 bytes of command payload in sqe->cmd).  sqe->cmd_op
 * is one of the command numbers below; commands complete inline, and the
 * CQE's res is the result:
 *
 *  KFDPOOL_URING_EXPORT   payload struct kfdpool_uring_export; res 0 or
 *                         -errno, the record is written to @record_ptr
 *  KFDPOOL_URING_REVOKE   payload struct kfdpool_uring_record; res 0 or -errno
 *  KFDPOOL_URING_IMPORT   payload struct kfdpool_uring_record with @flags as
 *                         kfdpool_import.flags; res the new dma-buf fd, 0 with
 *                         KFDPOOL_IMPORT_VALIDATE, or -errno
 *  KFDPOOL_URING_RELEASE  payload struct kfdpool_release; res 0 or -errno
 *  KFDPOOL_IOC_*_BATCH    payload struct kfdpool_batch (vectored form);
 *                         res as the batch ioctl returns
 *
 * Owner-only commands from an import fd complete with -EPERM, unknown
 * cmd_op with -ENOTTY, a ring without SQE128 with -EINVAL.  Padding and
 * unknown flags must be zero as for the ioctls.  Payloads are size-versioned
 * like ioctl structs: the size in cmd_op is the caller's struct size (at
 * most 80); bytes of the 80 past it must be zero (-EINVAL), and a struct
 * larger than the kernel's may only add zero bytes (-E2BIG).
 *
 * The payload's lifetime: the kernel reads a command's payload once, when
 * it first calls the module for it, and never again; the module never asks
 * io_uring to call it again (-EAGAIN).  Commands issued inline run to
 * completion there, sleeping on the pool's lock and faulting user pages as
 * the ioctls do, vectored batches included; IOSQE_ASYNC moves a command to
 * io_uring's workers.  After io_uring_enter() returned, a slot may be
 * refilled while its command is in flight, with one exception that is
 * io_uring's, not kfdpool's: on kernels whose io_uring hands a linked
 * command (or the head of a link left open at the end of a submission) a
 * pointer into the SQ ring instead of a copy (Debian's 6.12.117 does;
 * 6.1 copies), the module's first call for that command happens when the
 * link reaches it and reads whatever the slot holds then.  Leave such
 * slots alone until the link completed, or use IOSQE_ASYNC.
 */

/**
 * struct kfdpool_uring_export - inline payload of KFDPOOL_URING_EXPORT
 * @entry_id: in: as in struct kfdpool_export
 * @flags: in: must be 0
 * @offset: in: as in struct kfdpool_export
 * @size: in: as in struct kfdpool_export
 * @record_ptr: in: user pointer where the 64-byte record is written
 */
struct kfdpool_uring_export {
	__u32 entry_id;
	__u32 flags;
	__u64 offset;
	__u64 size;
	__u64 record_ptr;
};

/**
 * struct kfdpool_uring_record - inline payload of KFDPOOL_URING_IMPORT and
 *	KFDPOOL_URING_REVOKE: a record travels in the SQE itself
 * @record: in: the record
 * @flags: in: KFDPOOL_IMPORT_VALIDATE or 0 for import, 0 for revoke
 * @pad: must be 0
 */
struct kfdpool_uring_record {
	struct kfdpool_record record;
	__u32 flags;
	__u32 pad;
};

#define KFDPOOL_URING_EXPORT \
	_IOW(KFDPOOL_IOC_MAGIC, 0x40, struct kfdpool_uring_export)
#define KFDPOOL_URING_REVOKE \
	_IOW(KFDPOOL_IOC_MAGIC, 0x41, struct kfdpool_uring_record)
#define KFDPOOL_URING_IMPORT \
	_IOW(KFDPOOL_IOC_MAGIC, 0x42, struct kfdpool_uring_record)
#define KFDPOOL_URING_RELEASE \
	_IOW(KFDPOOL_IOC_MAGIC, 0x43, struct kfdpool_release)

#endif /* _UAPI_LINUX_KFDPOOL_H */
