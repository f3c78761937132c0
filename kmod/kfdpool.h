/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kfdpool internals shared by the module's files.
 *
 * Locking, outermost first:
 *   kfdpool_pools_lock (global list of pools, debugfs, freeing pools)
 *     pool->lock (everything inside one pool, including the per-fd import
 *                 counts of that pool's files)
 *       kfdpool_limits_lock (spinlock: users and charges, limits.c)
 *       kfdpool_held_lock (spinlock: the pools that hold entries, held.c)
 * No lock is held across a copy to or from user space: ioctl handlers work
 * on kernel copies, and the batch and io_uring paths copy each element in
 * and out around the locked section.  Pool ids are looked up without a lock
 * (RCU, kfdpool_pool_ids).
 */
#ifndef _KFDPOOL_H
#define _KFDPOOL_H

#include <linux/bits.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/rcupdate.h>
#include <linux/rhashtable-types.h>
#include <linux/siphash.h>
#include <linux/sizes.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/xarray.h>
#include <linux/kfdpool.h>

#include "kfdpool_features.h"

#ifdef KFDPOOL_HAVE_IMPORT_NS_IDENT
#define KFDPOOL_IMPORT_NS_DMA_BUF()	MODULE_IMPORT_NS(DMA_BUF)
#else
#define KFDPOOL_IMPORT_NS_DMA_BUF()	MODULE_IMPORT_NS("DMA_BUF")
#endif

/*
 * Secrets (record nonces, handle MACs) are compared with crypto_memneq(),
 * which the kernel builds with CRYPTO_LIB_UTILS (6.5 on; CRYPTO selects it)
 * and, before that symbol existed, with CRYPTO.  Say so here rather than
 * as an unresolved symbol at modpost or insmod time.
 */
#if !IS_ENABLED(CONFIG_CRYPTO_LIB_UTILS) && !IS_ENABLED(CONFIG_CRYPTO)
#error "kfdpool needs crypto_memneq(): enable CONFIG_CRYPTO_LIB_UTILS or CONFIG_CRYPTO"
#endif

#if IS_ENABLED(CONFIG_IO_URING) && \
	(defined(KFDPOOL_HAVE_URING_CMD_SQE128) || \
	 defined(KFDPOOL_HAVE_URING_CMD_H) || \
	 defined(KFDPOOL_HAVE_URING_CMD_LEGACY))
#define KFDPOOL_HAVE_URING	1
#elif IS_ENABLED(CONFIG_IO_URING) && defined(KFDPOOL_HAVE_FOPS_URING_CMD)
#error "kfdpool: unknown io_uring command API (see kmod/probes/uring_cmd_*.c)"
#endif

/* Bytes of a record's nonce. */
#define KFDPOOL_NONCE_LEN	16

/* Bits of the dma-buf hash of a pool (finds a dma-buf pinned twice). */
#define KFDPOOL_DMABUF_HASH_BITS	8

/*
 * Objects freed per lock hold in long teardowns (an entry's records, a
 * pool's entries, a file's imports): between batches the lock is dropped
 * and the CPU yielded.
 */
#define KFDPOOL_TEARDOWN_BATCH	256

/* Module parameters (main.c). */
extern unsigned long kfdpool_global_limit;
extern unsigned long kfdpool_user_limit;
extern unsigned long kfdpool_default_pool_limit;
extern unsigned int kfdpool_max_entries;
extern unsigned int kfdpool_max_user_records;
extern bool kfdpool_allow_any_handles;

struct dma_buf;
struct kfdpool_user;
struct kfdpool_bp;
struct seq_file;
struct user_namespace;

/**
 * struct kfdpool_cover - the bytes of an entry its records cover (cover.c)
 * @root: breakpoints (struct kfdpool_bp), by offset
 * @bytes: bytes at least one record covers
 * @noted: in a transaction (struct kfdpool_cover_txn), @bytes to recount
 */
struct kfdpool_cover {
	struct rb_root root;
	u64 bytes;
	bool noted;
};

/* Breakpoint summaries a pool may leave stale between settles. */
#define KFDPOOL_COVER_DIRTY	32

/**
 * struct kfdpool_cover_dirty - a breakpoint whose summary is stale
 * @c: the coverage it is in
 * @rb: the breakpoint; NULL for @c itself, whose bytes are to recount
 */
struct kfdpool_cover_dirty {
	struct kfdpool_cover *c;
	struct rb_node *rb;
};

/**
 * struct kfdpool_cover_txn - coverage changes not settled yet (cover.c)
 * @deferred: paths are recomputed at settle; else at each change (one
 *	record's changes gain nothing from waiting, see cover.c)
 * @n: how many of @d are used
 * @d: the breakpoints whose paths to their roots are stale
 */
struct kfdpool_cover_txn {
	bool deferred;
	unsigned int n;
	struct kfdpool_cover_dirty d[KFDPOOL_COVER_DIRTY];
};

/*
 * rectab.c: a page of records is a 4 KiB object of its slab cache, 73
 * records of 56 bytes (struct kfdpool_rec, defined below).
 */
#define KFDPOOL_RECS_PER_PAGE	(SZ_4K / sizeof(struct kfdpool_rec))
#define KFDPOOL_RECTAB_PAGES	DIV_ROUND_UP(KFDPOOL_MAX_RECORDS, \
					     KFDPOOL_RECS_PER_PAGE)
/* Record id - 1: page << KFDPOOL_RECTAB_SHIFT | slot (rectab.c) */
#define KFDPOOL_RECTAB_SHIFT	7
#define KFDPOOL_RECTAB_MASK	(BIT(KFDPOOL_RECTAB_SHIFT) - 1)
#define KFDPOOL_RECTAB_NONE	U32_MAX

/**
 * struct kfdpool_rec_page - a page of the record table
 * @recs: its KFDPOOL_RECS_PER_PAGE records, or NULL
 * @nr_live: how many of them are live
 */
struct kfdpool_rec_page {
	struct kfdpool_rec *recs;
	u32 nr_live;
};

/**
 * struct kfdpool_rectab - a pool's records by id (rectab.c)
 * @dir: @nr_dir pages, in record id order
 * @nr_dir: places in @dir
 * @nr_pages: pages allocated (debugfs shows them)
 * @hole: no place of @dir below it is empty
 * @spare: the page with no live record kept, or KFDPOOL_RECTAB_NONE
 * @free: id of the first free slot (a list through struct kfdpool_rec's
 *	@next and @prev), last freed first; 0 for none
 */
struct kfdpool_rectab {
	struct kfdpool_rec_page *dir;
	u32 nr_dir;
	u32 nr_pages;
	u32 hole;
	u32 spare;
	u32 free;
};

/**
 * struct kfdpool_pool - a pool of pinned dma-bufs
 * @ref: one reference per open pool file (and per transient lookup)
 * @lock: protects everything below that is not marked constant
 * @node: in kfdpool_pools, under kfdpool_pools_lock, until the pool is freed
 *	(zombies included)
 * @serial_node: in kfdpool_pools_by_serial (by @serial), exactly while
 *	@node is in kfdpool_pools
 * @idnode: in kfdpool_pool_ids (by @id) while @ref is not zero
 * @rcu: frees the pool after lookups by id that may still see it
 * @serial: creation number, never reused: the list is in @serial order, and
 *	POOL_LIST's cursor is a @serial (constant)
 * @id: random 128-bit id (constant)
 * @name: NUL-terminated name (constant)
 * @limit: bytes the pool may pin, 0 for no limit (constant)
 * @handle_types: KFDPOOL_HANDLE_TYPE_* allowed (constant)
 * @owner_pid: thread-group pid of the creator (constant)
 * @uid: euid of the creator, charged for the pool's pins (constant)
 * @user: the user charged: @uid in the creator's user namespace (constant)
 * @entries: entry id -> struct kfdpool_entry, live and draining
 * @next_entry: cursor of the cyclic entry id allocation
 * @dmabufs: live entries hashed by dma-buf, to refuse a double pin
 * @records: record id -> struct kfdpool_rec (rectab.c)
 * @generation: export counter; each record stores its value, and the
 *	record's generation is its low 32 bits
 * @reserved: bytes of all entries, draining ones included
 * @charging: bytes ALLOC charged for entries whose pages it is still
 *	allocating; counted against @limit with @reserved, not reported
 * @reserved_high: high-water mark of @reserved
 * @used: bytes at least one live record covers
 * @used_high: high-water mark of @used
 * @draining: bytes of draining entries
 * @imported: sum over pool files of the bytes of the entries each holds
 * @nr_entries: entries, draining ones included
 * @nr_draining: draining entries
 * @nr_records: live records
 * @nr_import_fds: open import-mode files
 * @held: held entries (entry->held_node), see held.c
 * @held_bytes: bytes of held entries
 * @nr_held: held entries
 * @held_node: in kfdpool_held_pools while @nr_held is not zero, under
 *	kfdpool_held_lock
 * @zombie: every file is closed but held entries keep the pool (and its
 *	charges) until the reaper frees them
 * @handle_key: key of the MACs that are the secrets of the pool's handles
 *	(handle.c); replaced by HANDLE_ROTATE
 * @nonce_key: keys of the PRF that makes record nonces, one per half
 *	(record.c)
 * @bp_stash: breakpoints an export allocated and did not use, for the next
 *	(cover.c)
 * @cover_txn: coverage changes whose effect on @used is not counted yet;
 *	kfdpool_pool_settle() counts them, before pool->lock is dropped
 */
struct kfdpool_pool {
	struct kref ref;
	struct mutex lock;	/* see the kernel-doc above */
	struct list_head node;
	struct rb_node serial_node;
	struct rhash_head idnode;
	struct rcu_head rcu;
	u64 serial;
	u8 id[KFDPOOL_ID_LEN];
	char name[KFDPOOL_NAME_LEN];
	u64 limit;
	u32 handle_types;
	struct pid *owner_pid;
	kuid_t uid;
	struct kfdpool_user *user;

	struct xarray entries;
	u32 next_entry;
	DECLARE_HASHTABLE(dmabufs, KFDPOOL_DMABUF_HASH_BITS);
	struct kfdpool_rectab records;
	u64 generation;

	u64 reserved;
	u64 charging;
	u64 reserved_high;
	u64 used;
	u64 used_high;
	u64 draining;
	u64 imported;
	u32 nr_entries;
	u32 nr_draining;
	u32 nr_records;
	u32 nr_import_fds;
	struct list_head held;
	u64 held_bytes;
	u32 nr_held;
	bool zombie;
	struct list_head held_node;
	siphash_key_t handle_key[2];
	siphash_key_t nonce_key[2];
	struct kfdpool_bp *bp_stash[2];
	struct kfdpool_cover_txn cover_txn;
};

/**
 * struct kfdpool_file - one open pool file (the private data of the file)
 * @pool: the pool; the file holds a reference
 * @id: number of the open file, never reused (fdinfo's kfdpool-file-id: fds
 *	that show the same id share one open file, through fork, dup or fd
 *	passing) (constant)
 * @mode: KFDPOOL_MODE_OWNER or KFDPOOL_MODE_IMPORT (constant)
 * @imports: entry id -> xa_mk_value(imports this file holds of the entry),
 *	under pool->lock
 * @nr_imports: entries this file holds imports of, under pool->lock
 * @imported: bytes of those entries, under pool->lock
 */
struct kfdpool_file {
	struct kfdpool_pool *pool;
	u64 id;
	u32 mode;
	struct xarray imports;
	u32 nr_imports;
	u64 imported;
};

/**
 * struct kfdpool_entry - a pinned dma-buf; owned by its pool, all fields
 *	under pool->lock
 * @id: the entry's id in pool->entries
 * @dmabuf: the pinned dma-buf; the entry holds a reference
 * @size: the dma-buf's size, charged to the pool
 * @cookie: the user's cookie given at pin
 * @draining: unpinned, kept while imports of it are counted or it is held
 * @handed_out: an import gave out an fd of the dma-buf
 * @held: draining with no import counted, kept because fds the pool
 *	handed out may still be open (on pool->held through @held_node)
 * @busy: UNPIN is freeing the entry's revoked records with the pool's lock
 *	dropped between batches: nobody else may free the entry
 * @holders: pool files that hold imports of the entry
 * @nr_records: live records of the entry
 * @records: id of the first live record of the entry (a list through
 *	struct kfdpool_rec's @next and @prev), 0 for none
 * @cover: the bytes the records cover
 * @hnode: in pool->dmabufs while live
 * @held_node: in pool->held while held
 */
struct kfdpool_entry {
	u32 id;
	struct dma_buf *dmabuf;
	u64 size;
	u64 cookie;
	bool draining;
	bool handed_out;
	bool held;
	bool busy;
	u32 holders;
	u32 nr_records;
	u32 records;
	struct kfdpool_cover cover;
	struct hlist_node hnode;
	struct list_head held_node;
};

/**
 * struct kfdpool_rec - what the kernel stored of an export record
 * @entry: the entry the record points into
 * @offset: offset in the entry
 * @size: bytes covered
 * @next: id of the next record on the list the record is on (its entry's
 *	while live, else the table's free slots or an unpinned entry's dead
 *	ones), 0 at the end
 * @prev: id of the one before, 0 at the head
 * @id: the record's slot in pool->records, plus one (constant)
 * @generation: the low 32 bits of pool->generation when made, which the
 *	record carries
 * @nonce: the record's nonce, made when it was (kfdpool_rec_nonce())
 *
 * The nonce is stored, not recomputed when the record is presented: two
 * SipHash-2-4 runs (~370 guest instructions) were a third of a validated
 * import.  The lists link record ids rather than pointers: 8 bytes
 * rather than 16 of a list_head, which keeps the record at 56 bytes and
 * 73 of them to a page of the record table (issue 14's bound is 64 bytes
 * a record, the table's directory included).
 */
struct kfdpool_rec {
	struct kfdpool_entry *entry;
	u64 offset;
	u64 size;
	u32 next;
	u32 prev;
	u32 id;
	u32 generation;
	u8 nonce[KFDPOOL_NONCE_LEN];
};

/**
 * struct kfdpool_fd_out - what a command hands out, made final by its caller
 * @file: the file to hand out at a new fd (a reference the command took),
 *	or NULL
 * @fd_off: where the fd number goes in the caller's ioctl struct
 * @undo: called when the caller cannot be told of the command's result (the
 *	copy back failed, or no fd could be installed) to take back what the
 *	command made, may be NULL
 * @pfile: argument of @undo
 * @entry_id: argument of @undo
 * @dmabuf: argument of @undo: the dma-buf a pin pinned (its identity)
 * @record: argument of @undo: the record an export made
 *
 * A command prepares the file and arms @undo; the caller copies its results
 * to user space and only then installs the fd through the kernel's receive
 * path (kfdpool_fd_commit()), or, when the copy failed, drops the file and
 * undoes the command (kfdpool_fd_abort()): nothing the caller never learnt
 * of may stay behind in the pool.
 */
struct kfdpool_fd_out {
	struct file *file;
	size_t fd_off;
	void (*undo)(struct kfdpool_fd_out *fdo);
	struct kfdpool_file *pfile;
	u32 entry_id;
	struct dma_buf *dmabuf;
	struct kfdpool_record record;
};

void kfdpool_fd_out_init(struct kfdpool_fd_out *fdo);
int kfdpool_fd_commit(struct kfdpool_fd_out *fdo, int __user *ufd);
void kfdpool_fd_abort(struct kfdpool_fd_out *fdo);
void kfdpool_export_arm_undo(struct kfdpool_fd_out *fdo,
			     struct kfdpool_file *pf,
			     const struct kfdpool_record *record);

/**
 * struct kfdpool_ioctl_desc - one size-versioned ioctl
 * @cmd: the command as defined in the uapi header (the kernel's size)
 * @min_size: the size of the command's first version; a caller struct
 *	smaller than this is refused
 * @handler: called with a kernel copy of the caller's struct, zero-filled
 *	past what the caller passed; what it leaves there is copied back.  A
 *	handler that hands out an fd fills @fdo and leaves -1 in the struct's
 *	fd field; the dispatcher installs the fd, writing its number there,
 *	after the copy back succeeded.
 */
struct kfdpool_ioctl_desc {
	unsigned int cmd;
	unsigned int min_size;
	long (*handler)(struct file *file, void *data,
			struct kfdpool_fd_out *fdo);
};

/* Table entry: index the table with _IOC_NR() of the command. */
#define KFDPOOL_IOCTL(_cmd, _min_size, _handler)			\
	{ .cmd = (_cmd), .min_size = (_min_size), .handler = (_handler) }

long kfdpool_ioctl_dispatch(struct file *file, unsigned int ucmd,
			    unsigned long arg,
			    const struct kfdpool_ioctl_desc *table,
			    unsigned int nr);

bool kfdpool_mem_is_zero(const void *p, size_t len);

/* pool.c */
extern const struct file_operations kfdpool_pool_fops;
extern struct mutex kfdpool_pools_lock;
extern struct list_head kfdpool_pools;
extern struct rb_root kfdpool_pools_by_serial;

int kfdpool_pools_init(void);
void kfdpool_pools_exit(void);
struct kfdpool_pool *kfdpool_pool_find_id(const u8 *id);
void kfdpool_pool_unlist(struct kfdpool_pool *pool);
void kfdpool_pool_destroy(struct kfdpool_pool *pool);
long kfdpool_pool_create(struct file *file, void *data,
			 struct kfdpool_fd_out *fdo);
void kfdpool_pool_put(struct kfdpool_pool *pool);
int kfdpool_file_prepare(struct kfdpool_pool *pool, u32 mode,
			 struct kfdpool_fd_out *fdo, size_t fd_off);
unsigned int kfdpool_nr_pools(void);
pid_t kfdpool_owner_pid(struct kfdpool_pool *pool);

/* Does @size more fit the pool's limit?  pool->lock held. */
static inline bool kfdpool_pool_limit_fits(const struct kfdpool_pool *pool,
					   u64 size)
{
	/* reserved + charging never passes the limit: no overflow below. */
	return !pool->limit ||
	       (size <= pool->limit &&
		pool->reserved + pool->charging <= pool->limit - size);
}

/* entry.c */
long kfdpool_ioctl_pin(struct file *file, void *data,
		       struct kfdpool_fd_out *fdo);
int kfdpool_entry_charge_locked(struct kfdpool_pool *pool,
				struct dma_buf *dmabuf, u64 size);
int kfdpool_entry_insert_locked(struct kfdpool_pool *pool,
				struct kfdpool_entry *entry);
void kfdpool_pin_undo(struct kfdpool_fd_out *fdo);
long kfdpool_ioctl_unpin(struct file *file, void *data,
			 struct kfdpool_fd_out *fdo);
void kfdpool_entry_free(struct kfdpool_pool *pool,
			struct kfdpool_entry *entry);
bool kfdpool_entry_settle(struct kfdpool_pool *pool,
			  struct kfdpool_entry *entry);
int kfdpool_import_get(struct kfdpool_file *pf, struct kfdpool_entry *entry);
int kfdpool_import_put(struct kfdpool_file *pf, u32 entry_id);
void kfdpool_file_drop_imports(struct kfdpool_file *pf);
void kfdpool_pool_free_all(struct kfdpool_pool *pool);

/* record.c: the commands of ioctls, batches and io_uring alike */
int kfdpool_export_prep(struct kfdpool_file *pf,
			const struct kfdpool_export *e);
int kfdpool_export_locked(struct kfdpool_file *pf, struct kfdpool_export *e);
int kfdpool_revoke_prep(struct kfdpool_file *pf,
			const struct kfdpool_revoke *r);
int kfdpool_revoke_locked(struct kfdpool_file *pf,
			  const struct kfdpool_revoke *r);
int kfdpool_import_prep(struct kfdpool_file *pf, struct kfdpool_import *imp);
int kfdpool_import_locked(struct kfdpool_file *pf, struct kfdpool_import *imp,
			  struct kfdpool_fd_out *fdo, u32 *held);
int kfdpool_release_prep(const struct kfdpool_release *rel);
int kfdpool_release_locked(struct kfdpool_file *pf,
			   const struct kfdpool_release *rel);
int kfdpool_do_export(struct kfdpool_file *pf, struct kfdpool_export *e);
int kfdpool_do_revoke(struct kfdpool_file *pf, struct kfdpool_revoke *r);
int kfdpool_do_import(struct kfdpool_file *pf, struct kfdpool_import *imp,
		      struct kfdpool_fd_out *fdo);
int kfdpool_do_release(struct kfdpool_file *pf, struct kfdpool_release *rel);
void kfdpool_rec_free(struct kfdpool_pool *pool, struct kfdpool_rec *rec);
long kfdpool_ioctl_export(struct file *file, void *data,
			  struct kfdpool_fd_out *fdo);
long kfdpool_ioctl_revoke(struct file *file, void *data,
			  struct kfdpool_fd_out *fdo);
long kfdpool_ioctl_import(struct file *file, void *data,
			  struct kfdpool_fd_out *fdo);
long kfdpool_ioctl_release(struct file *file, void *data,
			   struct kfdpool_fd_out *fdo);

/* rectab.c */
int kfdpool_rec_cache_init(void);
void kfdpool_rec_cache_exit(void);
void kfdpool_rectab_init(struct kfdpool_rectab *t);
void kfdpool_rectab_destroy(struct kfdpool_rectab *t);
struct kfdpool_rec *kfdpool_rectab_get(struct kfdpool_rectab *t);
void kfdpool_rectab_put(struct kfdpool_rectab *t, struct kfdpool_rec *rec);
struct kfdpool_rec *kfdpool_rectab_find(struct kfdpool_rectab *t, u32 id);
struct kfdpool_rec *kfdpool_rectab_slot(struct kfdpool_rectab *t, u32 id);
void kfdpool_reclist_add(struct kfdpool_rectab *t, u32 *head,
			 struct kfdpool_rec *rec);
void kfdpool_reclist_del(struct kfdpool_rectab *t, u32 *head,
			 struct kfdpool_rec *rec);

/* batch.c */
long kfdpool_batch(struct kfdpool_file *pf, unsigned int nr,
		   const struct kfdpool_batch *b);
long kfdpool_ioctl_export_batch(struct file *file, void *data,
				struct kfdpool_fd_out *fdo);
long kfdpool_ioctl_revoke_batch(struct file *file, void *data,
				struct kfdpool_fd_out *fdo);
long kfdpool_ioctl_import_batch(struct file *file, void *data,
				struct kfdpool_fd_out *fdo);
long kfdpool_ioctl_release_batch(struct file *file, void *data,
				 struct kfdpool_fd_out *fdo);

/* uring.c */
#ifdef KFDPOOL_HAVE_URING
struct io_uring_cmd;
int kfdpool_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags);
#endif

/* limits.c */
int kfdpool_limits_init(void);
void kfdpool_limits_exit(void);
struct kfdpool_user *kfdpool_user_get(struct user_namespace *ns, kuid_t uid);
void kfdpool_user_put(struct kfdpool_user *user);
int kfdpool_charge(struct kfdpool_user *user, const void *obj, u64 size);
void kfdpool_uncharge(struct kfdpool_user *user, const void *obj);
bool kfdpool_charge_outside_refs(const void *obj, struct file *file);
int kfdpool_records_charge(struct kfdpool_user *user);
void kfdpool_records_uncharge(struct kfdpool_user *user, unsigned long nr);
void kfdpool_user_figures(const struct user_namespace *ns, kuid_t uid,
			  u64 *global, u64 *pinned, u64 *records);
void kfdpool_users_show(struct seq_file *m);

/* cover.c */
int kfdpool_cover_init(void);
void kfdpool_cover_exit(void);
int kfdpool_bp_stash_take(struct kfdpool_bp *stash[2],
			  struct kfdpool_bp *spare[2]);
void kfdpool_bp_stash_keep(struct kfdpool_bp *stash[2],
			   struct kfdpool_bp *spare[2]);
void kfdpool_cover_release(struct kfdpool_bp *spare[2]);
void kfdpool_pool_settle(struct kfdpool_pool *pool);
bool kfdpool_cover_txn_full(const struct kfdpool_cover_txn *t);
u64 kfdpool_cover_add(struct kfdpool_cover_txn *t, struct kfdpool_cover *c,
		      u64 start, u64 size, struct kfdpool_bp *spare[2]);
u64 kfdpool_cover_del(struct kfdpool_cover_txn *t, struct kfdpool_cover *c,
		      u64 start, u64 size);
s64 kfdpool_cover_settle(struct kfdpool_cover_txn *t);
u64 kfdpool_cover_take(struct kfdpool_cover *c, struct rb_root *out);
void kfdpool_cover_free(struct rb_root *root);

/* held.c */
void kfdpool_held_add(struct kfdpool_pool *pool, struct kfdpool_entry *entry);
void kfdpool_held_del(struct kfdpool_pool *pool, struct kfdpool_entry *entry);
unsigned int kfdpool_pool_reap_locked(struct kfdpool_pool *pool);
unsigned int kfdpool_reap_all(void);
void kfdpool_held_exit(void);

/* hostmem.c */
long kfdpool_ioctl_alloc(struct file *file, void *data,
			 struct kfdpool_fd_out *fdo);

/* handle.c */
void kfdpool_handle_key_init(struct kfdpool_pool *pool);
long kfdpool_ioctl_handle_export(struct file *file, void *data,
				 struct kfdpool_fd_out *fdo);
long kfdpool_ioctl_handle_rotate(struct file *file, void *data,
				 struct kfdpool_fd_out *fdo);
long kfdpool_ioctl_pool_import_handle(struct file *file, void *data,
				      struct kfdpool_fd_out *fdo);

/* list.c */
long kfdpool_ioctl_pool_list(struct file *file, void *data,
			     struct kfdpool_fd_out *fdo);

/* debugfs.c */
void kfdpool_debugfs_init(void);
void kfdpool_debugfs_exit(void);

#endif /* _KFDPOOL_H */
