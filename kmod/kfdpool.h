/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kfdpool internals shared by the module's files.
 *
 * Locking, outermost first: kfdpool_pools_lock (the list of pools),
 * pool->lock (everything in one pool, the import counts of its files
 * included), kfdpool_charge_lock (a spinlock: the charged bytes of users).
 * kfdpool_users_lock is taken alone.  No lock is held across a copy to or
 * from user space.
 */
#ifndef _KFDPOOL_H
#define _KFDPOOL_H

#include <linux/bits.h>
#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
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

/* Secrets are compared with crypto_memneq(): say so rather than at modpost. */
#if !IS_ENABLED(CONFIG_CRYPTO_LIB_UTILS) && !IS_ENABLED(CONFIG_CRYPTO)
#error "kfdpool needs crypto_memneq(): enable CONFIG_CRYPTO_LIB_UTILS or CONFIG_CRYPTO"
#endif

/* ALLOC's pages are charged to RLIMIT_MEMLOCK in user_struct.locked_vm. */
#ifndef KFDPOOL_HAVE_USER_LOCKED_VM
#error "kfdpool needs user_struct.locked_vm: enable CONFIG_NET or CONFIG_IO_URING"
#endif

#if IS_ENABLED(CONFIG_IO_URING) && \
	(defined(KFDPOOL_HAVE_URING_CMD_H) || \
	 defined(KFDPOOL_HAVE_URING_CMD_LEGACY))
#define KFDPOOL_HAVE_URING	1
#endif

/* Implementation limits, reported by QUERY. */
#define KFDPOOL_MAX_RECORDS	BIT(20)
#define KFDPOOL_BATCH_MAX	4096
/* The largest element of a batch or a listing. */
#define KFDPOOL_ELEM_MAX	4096

/* Objects freed per lock hold in long teardowns. */
#define KFDPOOL_TEARDOWN_BATCH	256

#define KFDPOOL_NONCE_LEN	16

/* Module parameters (main.c). */
extern unsigned long kfdpool_global_limit;
extern unsigned long kfdpool_user_limit;
extern unsigned long kfdpool_default_pool_limit;
extern unsigned int kfdpool_max_entries;
extern unsigned int kfdpool_max_user_records;
extern bool kfdpool_allow_any_handles;
extern unsigned int kfdpool_max_user_persistent;
extern unsigned long kfdpool_max_user_persistent_bytes;

struct dma_buf;
struct kfdpool_charge;
struct kfdpool_rec;
struct kfdpool_user;
struct seq_file;
struct user_namespace;
struct user_struct;

/*
 * The record table (rectab.c): 4 KiB pages of 73 records.  Record id N is
 * slot (N - 1) % 128 of page (N - 1) / 128; a shift and a mask rather than
 * a division keep presenting a record cheap.
 */
#define KFDPOOL_RECS_PER_PAGE	(SZ_4K / 56)
#define KFDPOOL_RECTAB_SHIFT	7
#define KFDPOOL_RECTAB_MASK	(BIT(KFDPOOL_RECTAB_SHIFT) - 1)
#define KFDPOOL_RECTAB_PAGES	DIV_ROUND_UP(KFDPOOL_MAX_RECORDS, \
					     KFDPOOL_RECS_PER_PAGE)
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
 * struct kfdpool_rectab - a pool's records by id
 * @dir: @nr_dir pages, in id order
 * @nr_dir: places in @dir
 * @nr_pages: pages allocated
 * @hole: no place of @dir below it is empty
 * @spare: a page with no live record kept, or KFDPOOL_RECTAB_NONE
 * @free: the first free slot (a list through the records), 0 for none
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
 * @ref: the pool's memory: one reference per file and per lookup
 * @lock: protects everything below not marked constant
 * @nr_owners: open owner files; the pool ends when the last one closes
 * @ended: kfdpool_pool_end() ran: the pool holds nothing and answers
 *	-ENODEV
 * @kept: the pool holds a reference to itself and to the module, and is
 *	charged as a persistent pool: it stays with no file open
 * @idnode: in kfdpool_pool_ids until the pool ends
 * @rcu: frees the pool after lookups by id
 * @serial: index in kfdpool_pools until the pool ends (constant)
 * @id: random id (constant)
 * @name: name (constant)
 * @limit: bytes the pool may pin, 0 for no limit (constant)
 * @handle_types: KFDPOOL_HANDLE_TYPE_* (constant)
 * @flags: KFDPOOL_POOL_PERSIST: entries are charged as persistent bytes
 *	(constant)
 * @created: CLOCK_BOOTTIME of the creation, in ns (constant)
 * @owner_pid: the thread group of the creator or the last adopter
 * @uid: the creator's euid (constant)
 * @user: charged for the pool's entries and records (constant)
 * @locked_user: charged for ALLOC's pages against RLIMIT_MEMLOCK; NULL
 *	when the creator had CAP_IPC_LOCK (constant)
 * @entries: entry id -> struct kfdpool_entry
 * @next_entry: cursor of the cyclic entry id allocation
 * @dmabufs: live entries by dma-buf, to refuse a second pin of one
 * @records: the records (rectab.c)
 * @generation: export counter, part of each record
 * @reserved: bytes of all entries
 * @charging: bytes ALLOC charged for pages it is still allocating
 * @reserved_high: high-water mark of @reserved
 * @used: bytes of the entries that have a live record
 * @used_high: high-water mark of @used
 * @draining: bytes of draining entries
 * @imported: sum over pool files of the bytes of the entries each holds
 * @nr_entries: entries
 * @nr_draining: draining entries
 * @nr_records: live records
 * @nr_import_fds: open import files
 * @handle_key: key of the MACs of the pool's handles
 * @nonce_key: keys of the PRF that makes record nonces
 */
struct kfdpool_pool {
	struct kref ref;
	struct mutex lock;	/* see above */
	u32 nr_owners;
	bool ended;
	bool kept;
	struct rhash_head idnode;
	struct rcu_head rcu;
	u32 serial;
	u8 id[KFDPOOL_ID_LEN];
	char name[KFDPOOL_NAME_LEN];
	u64 limit;
	u32 handle_types;
	u32 flags;
	u64 created;
	struct pid *owner_pid;
	kuid_t uid;
	struct kfdpool_user *user;
	struct user_struct *locked_user;

	struct xarray entries;
	u32 next_entry;
	struct rb_root dmabufs;
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
	siphash_key_t handle_key[2];
	siphash_key_t nonce_key[2];
};

/**
 * struct kfdpool_file - one open pool file
 * @pool: the pool; the file holds a reference
 * @id: number of the open file, never reused (constant)
 * @mode: KFDPOOL_MODE_OWNER or KFDPOOL_MODE_IMPORT (constant)
 * @imports: entry id -> xa_mk_value(imports of it this file holds)
 * @nr_imports: entries this file holds imports of
 * @imported: bytes of those entries
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
 * enum kfdpool_entry_state - where an entry is in its life
 * @KFDPOOL_ENTRY_LIVE: pinned: records can be made and imported
 * @KFDPOOL_ENTRY_UNPINNING: UNPIN is freeing its records, dropping the
 *	pool's lock between batches; only UNPIN may free it
 * @KFDPOOL_ENTRY_DRAINING: unpinned; kept while pool files hold imports
 */
enum kfdpool_entry_state {
	KFDPOOL_ENTRY_LIVE,
	KFDPOOL_ENTRY_UNPINNING,
	KFDPOOL_ENTRY_DRAINING,
};

/**
 * struct kfdpool_entry - a pinned dma-buf; all fields under pool->lock
 * @id: the entry's id in pool->entries
 * @state: enum kfdpool_entry_state
 * @dmabuf: the dma-buf; the entry holds a reference
 * @size: its size, charged to the pool
 * @cookie: the user's cookie
 * @holders: pool files that hold imports of the entry
 * @nr_records: live records
 * @records: first live record id (a list through the records), 0 for none
 * @node: in pool->dmabufs while live
 */
struct kfdpool_entry {
	u32 id;
	enum kfdpool_entry_state state;
	struct dma_buf *dmabuf;
	u64 size;
	u64 cookie;
	u32 holders;
	u32 nr_records;
	u32 records;
	struct rb_node node;
};

/**
 * struct kfdpool_rec - what the kernel keeps of a record (56 bytes)
 * @entry: the entry, NULL while the slot is free
 * @offset: offset in the entry
 * @size: bytes
 * @next: next record id on the list the record is on, 0 at the end
 * @prev: previous record id, 0 at the head
 * @id: the slot's record id (constant)
 * @generation: low 32 bits of pool->generation when made
 * @nonce: made at export, compared when presented
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
 * struct kfdpool_fd_out - what a command hands out once its results reached
 *	the caller
 * @file: the file to install at a new fd (a reference), or NULL
 * @fd_off: where the fd number goes in the caller's struct
 * @undo: takes back what the command made when the caller cannot be told
 * @pfile: argument of @undo
 * @entry_id: argument of @undo
 * @dmabuf: argument of @undo: the dma-buf a pin pinned
 * @record: argument of @undo: the record an export made
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

/**
 * struct kfdpool_ioctl_desc - one size-versioned ioctl, at _IOC_NR(@cmd)
 * @cmd: the command, with the kernel's struct size
 * @handler: runs on a zero-extended kernel copy of the caller's struct
 */
struct kfdpool_ioctl_desc {
	unsigned int cmd;
	long (*handler)(struct file *file, void *data,
			struct kfdpool_fd_out *fdo);
};

long kfdpool_ioctl_dispatch(struct file *file, unsigned int ucmd,
			    unsigned long arg,
			    const struct kfdpool_ioctl_desc *table,
			    unsigned int nr);

static inline bool kfdpool_mem_is_zero(const void *p, size_t len)
{
	return !memchr_inv(p, 0, len);
}

/* pool.c */
extern struct mutex kfdpool_pools_lock;
extern struct xarray kfdpool_pools;
int kfdpool_pools_init(void);
void kfdpool_pools_exit(void);
struct kfdpool_pool *kfdpool_pool_find_id(const u8 *id);
void kfdpool_pool_put(struct kfdpool_pool *pool);
int kfdpool_file_prepare(struct kfdpool_pool *pool, u32 mode,
			 struct kfdpool_fd_out *fdo, size_t fd_off);
pid_t kfdpool_owner_pid(struct kfdpool_pool *pool);
long kfdpool_pool_create(struct file *file, void *data,
			 struct kfdpool_fd_out *fdo);
void kfdpool_pool_end(struct kfdpool_pool *pool);

/* Lock @pf's pool, unless it ended: 0 or -ENODEV (unlocked). */
static inline int kfdpool_lock(struct kfdpool_file *pf)
{
	mutex_lock(&pf->pool->lock);
	if (likely(!pf->pool->ended))
		return 0;
	mutex_unlock(&pf->pool->lock);
	return -ENODEV;
}

/* entry.c */
int kfdpool_entry_add_locked(struct kfdpool_pool *pool,
			     struct kfdpool_entry *entry);
void kfdpool_entry_free(struct kfdpool_pool *pool,
			struct kfdpool_entry *entry);
void kfdpool_pin_undo(struct kfdpool_fd_out *fdo);
int kfdpool_import_get(struct kfdpool_file *pf, struct kfdpool_entry *entry);
int kfdpool_import_put(struct kfdpool_file *pf, u32 entry_id);
void kfdpool_file_drop_imports(struct kfdpool_file *pf);
void kfdpool_pool_free_entries(struct kfdpool_pool *pool);
const void *kfdpool_charge_obj(struct dma_buf *dmabuf);
long kfdpool_ioctl_pin(struct file *file, void *data,
		       struct kfdpool_fd_out *fdo);
long kfdpool_ioctl_unpin(struct file *file, void *data,
			 struct kfdpool_fd_out *fdo);

/* Does @size more fit the pool's limit?  pool->lock held. */
static inline bool kfdpool_pool_fits(const struct kfdpool_pool *pool,
				     u64 size)
{
	return !pool->limit ||
	       (size <= pool->limit &&
		pool->reserved + pool->charging <= pool->limit - size);
}

/* record.c: one element of the ioctls, batches and io_uring alike */
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
int kfdpool_do_export(struct kfdpool_file *pf, struct kfdpool_export *e);
int kfdpool_do_revoke(struct kfdpool_file *pf, struct kfdpool_revoke *r);
int kfdpool_do_import(struct kfdpool_file *pf, struct kfdpool_import *imp,
		      struct kfdpool_fd_out *fdo);
int kfdpool_do_release(struct kfdpool_file *pf, struct kfdpool_release *rel);
void kfdpool_export_arm_undo(struct kfdpool_fd_out *fdo,
			     struct kfdpool_file *pf,
			     const struct kfdpool_record *record);
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
struct kfdpool_user *kfdpool_user_get(struct user_namespace *ns, kuid_t uid);
void kfdpool_user_hold(struct kfdpool_user *u);
void kfdpool_user_put(struct kfdpool_user *u);
struct kfdpool_charge *kfdpool_charge_prepare(struct kfdpool_user *u);
void kfdpool_charge_finish(struct kfdpool_charge *spares);
int kfdpool_charge(struct kfdpool_user *u, const void *obj, u64 size,
		   unsigned int refs, struct kfdpool_charge **spares);
void kfdpool_uncharge(struct kfdpool_user *u, const void *obj);
int kfdpool_records_charge(struct kfdpool_user *u);
void kfdpool_records_uncharge(struct kfdpool_user *u, unsigned long nr);
void kfdpool_user_figures(struct user_namespace *ns, kuid_t uid,
			  u64 *global, u64 *pinned, u32 *records);
int kfdpool_persist_user_charge(struct kfdpool_user *u, u32 pools, u64 bytes);
void kfdpool_persist_user_uncharge(struct kfdpool_user *u, u32 pools,
				   u64 bytes);
void kfdpool_persist_user_figures(struct user_namespace *ns, kuid_t uid,
				  u32 *pools, u64 *bytes);
void kfdpool_users_show(struct seq_file *m);
void kfdpool_limits_exit(void);

/* hostmem.c */
bool kfdpool_is_hostmem(struct dma_buf *dmabuf);
long kfdpool_ioctl_alloc(struct file *file, void *data,
			 struct kfdpool_fd_out *fdo);

/* handle.c */
long kfdpool_ioctl_handle_export(struct file *file, void *data,
				 struct kfdpool_fd_out *fdo);
long kfdpool_ioctl_handle_rotate(struct file *file, void *data,
				 struct kfdpool_fd_out *fdo);
long kfdpool_ioctl_pool_import_handle(struct file *file, void *data,
				      struct kfdpool_fd_out *fdo);
int kfdpool_handle_resolve(const struct kfdpool_pool_handle *uh, bool owner,
			   struct kfdpool_pool **poolp);

/* persist.c */
int kfdpool_persist_begin(struct kfdpool_pool *pool);
void kfdpool_persist_end(struct kfdpool_pool *pool);
int kfdpool_persist_adopt(struct kfdpool_pool *pool,
			  struct kfdpool_fd_out *fdo, size_t fd_off);
long kfdpool_ioctl_pool_adopt(struct file *file, void *data,
			      struct kfdpool_fd_out *fdo);
long kfdpool_ioctl_pool_destroy(struct file *file, void *data,
				struct kfdpool_fd_out *fdo);
long kfdpool_ioctl_pool_destroy_id(struct file *file, void *data,
				   struct kfdpool_fd_out *fdo);

/*
 * Charge @size more bytes of entries of @pool as persistent bytes, if it
 * is a persistent pool; pool->lock held.  0 or -EDQUOT.
 */
static inline int kfdpool_persist_charge(struct kfdpool_pool *pool, u64 size)
{
	if (!(pool->flags & KFDPOOL_POOL_PERSIST))
		return 0;
	return kfdpool_persist_user_charge(pool->user, 0, size);
}

static inline void kfdpool_persist_uncharge(struct kfdpool_pool *pool,
					    u64 size)
{
	if (pool->flags & KFDPOOL_POOL_PERSIST)
		kfdpool_persist_user_uncharge(pool->user, 0, size);
}

/* list.c */
long kfdpool_ioctl_pool_list(struct file *file, void *data,
			     struct kfdpool_fd_out *fdo);

/* debugfs.c */
void kfdpool_debugfs_init(void);
void kfdpool_debugfs_exit(void);

#endif /* _KFDPOOL_H */
