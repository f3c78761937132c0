/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kfdpool internals.  Locking, outermost first: pool->lock (everything in
 * one pool, its files' import counts included), kfdpool_persist_lock (a
 * spinlock).  kfdpool_users_lock is taken with neither held.  Pools are
 * found under RCU (kfdpool_pools).  No lock is held across a copy to or
 * from user space that may fault.
 */
#ifndef _KFDPOOL_H
#define _KFDPOOL_H

#include <linux/bits.h>
#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/rcupdate.h>
#include <linux/siphash.h>
#include <linux/sizes.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/xarray.h>
#include <linux/kfdpool.h>

#include "compat/compat.h"

/* Implementation limits, reported by QUERY. */
#define KFDPOOL_MAX_RECORDS	BIT(20)
#define KFDPOOL_BATCH_MAX	4096
/* The largest element of a batch or a listing. */
#define KFDPOOL_ELEM_MAX	4096

/* Objects freed per lock hold in long teardowns. */
#define KFDPOOL_TEARDOWN_BATCH	256

#define KFDPOOL_NONCE_LEN	16

/* Module parameters (main.c). */
extern unsigned long kfdpool_default_pool_limit;
extern unsigned int kfdpool_max_entries;
extern unsigned int kfdpool_max_user_records;
extern bool kfdpool_allow_any_handles;
extern unsigned int kfdpool_max_user_persistent;
extern unsigned long kfdpool_max_user_persistent_bytes;

struct dma_buf;
struct kfdpool_user;
struct user_namespace;
struct cred;

/*
 * The record table (record.c): 4 KiB pages of 73 records; record id N is
 * slot (N - 1) % 128 of page (N - 1) / 128, a shift and a mask away.
 */
#define KFDPOOL_RECS_PER_PAGE	(SZ_4K / 56)
#define KFDPOOL_RECTAB_SHIFT	7
#define KFDPOOL_RECTAB_MASK	(BIT(KFDPOOL_RECTAB_SHIFT) - 1)
#define KFDPOOL_RECTAB_PAGES	DIV_ROUND_UP(KFDPOOL_MAX_RECORDS, \
					     KFDPOOL_RECS_PER_PAGE)
#define KFDPOOL_RECTAB_NONE	U32_MAX

/* A page of the record table: its records, or NULL, and how many live. */
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
 * @spare: an empty page kept, or KFDPOOL_RECTAB_NONE
 * @free: the list of free slots, 0 for none
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
 * @ref: the memory's references: files and lookups
 * @rcu: frees the struct after lookups under RCU are done with it
 * @lock: protects the fields below that change
 * @nr_owners: open owner files; the pool ends when none is left, unless
 *	it is kept
 * @ended: kfdpool_pool_end() ran: nothing is left, calls get -ENODEV
 * @kept: a persistent pool holding itself and the module (persist.c)
 * @serial: index in kfdpool_pools until the pool ends: the id's first
 *	32 bits
 * @id: random id
 * @name: name
 * @limit: bytes the pool may pin, 0 for no limit
 * @handle_types: KFDPOOL_HANDLE_TYPE_*
 * @flags: KFDPOOL_POOL_PERSIST: its entries count as persistent bytes
 * @created: CLOCK_BOOTTIME of its creation, in ns
 * @owner_pid: the thread group of the creator or of the last adopter
 * @uid: the creator's euid
 * @user: charged for records and, if persistent, the pool and its bytes
 * @entries: entry id -> struct kfdpool_entry
 * @next_entry: cursor of the entry ids
 * @dmabufs: live entries by dma-buf
 * @records: the records
 * @generation: export counter
 * @reserved: bytes of live entries
 * @charging: bytes ALLOCs charged for entries still to come
 * @reserved_high: high-water mark of @reserved
 * @used: bytes of the entries that have a live record
 * @used_high: high-water mark of @used
 * @draining: bytes of draining entries
 * @imported: sum over files of the bytes of the entries each holds
 * @nr_entries: entries, draining ones included
 * @nr_draining: draining entries
 * @nr_records: live records
 * @nr_import_fds: open import files
 * @handle_key: keys of the handles' MACs
 * @nonce_key: keys of the records' nonces
 */
struct kfdpool_pool {
	struct kref ref;
	struct rcu_head rcu;
	struct mutex lock;	/* see above */
	u32 nr_owners;
	bool ended;
	bool kept;
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
 * @pool: the pool, referenced
 * @id: number of the open file, never reused
 * @mode: KFDPOOL_MODE_OWNER or KFDPOOL_MODE_IMPORT
 * @imports: entry id -> xa_mk_value(imports of it held)
 * @nr_imports: entries imported
 * @imported: their bytes
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
 * @KFDPOOL_ENTRY_LIVE: pinned: records are made and imported
 * @KFDPOOL_ENTRY_UNPINNING: UNPIN frees its records, the lock dropped
 *	between batches; only UNPIN, or the pool's end, may free it
 * @KFDPOOL_ENTRY_DRAINING: unpinned, kept while files hold imports of it
 */
enum kfdpool_entry_state {
	KFDPOOL_ENTRY_LIVE,
	KFDPOOL_ENTRY_UNPINNING,
	KFDPOOL_ENTRY_DRAINING,
};

/**
 * struct kfdpool_entry - a pinned dma-buf, under pool->lock
 * @id: its id in pool->entries
 * @state: enum kfdpool_entry_state
 * @dmabuf: the dma-buf, referenced until the entry is unpinned
 * @size: its bytes
 * @cookie: the user's cookie
 * @holders: files that hold imports of it
 * @nr_records: live records
 * @records: the list of live records, 0 for none
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
 * @entry: its entry, NULL while the slot is free
 * @offset: offset in the entry
 * @size: bytes
 * @next: next record id on its list, 0 at the end
 * @prev: previous one, 0 at the head
 * @id: the slot's record id
 * @generation: low 32 bits of pool->generation when made
 * @nonce: made at export
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
 * struct kfdpool_fd_out - what a command hands out after its copy back
 * @file: the file to install at a new fd (a reference), or NULL
 * @fd_off: where the fd number goes in the caller's struct
 * @undo: takes the command back when the caller cannot be told of it
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

static inline void kfdpool_fd_out_init(struct kfdpool_fd_out *fdo)
{
	fdo->file = NULL;
	fdo->undo = NULL;
}

int kfdpool_fd_commit(struct kfdpool_fd_out *fdo, int __user *ufd);
void kfdpool_fd_abort(struct kfdpool_fd_out *fdo);

/**
 * struct kfdpool_ioctl_desc - one size-versioned ioctl, at _IOC_NR(@cmd)
 * @cmd: the command, with the kernel's struct size
 * @final: it acts in a way no undo takes back, and answers in the struct
 * @handler: runs on a kernel copy of the caller's struct; @nr is
 *	_IOC_NR(@cmd)
 */
struct kfdpool_ioctl_desc {
	unsigned int cmd;
	bool final;
	long (*handler)(struct file *file, unsigned int nr, void *data,
			struct kfdpool_fd_out *fdo);
};

#define KFDPOOL_IOCTL(name, fn) \
	[_IOC_NR(KFDPOOL_IOC_##name)] = { .cmd = KFDPOOL_IOC_##name, .handler = fn }
#define KFDPOOL_IOCTL_FINAL(name, fn) \
	[_IOC_NR(KFDPOOL_IOC_##name)] = { .cmd = KFDPOOL_IOC_##name, \
					  .final = true, .handler = fn }

long kfdpool_ioctl_dispatch(struct file *file, unsigned int ucmd,
			    unsigned long arg,
			    const struct kfdpool_ioctl_desc *table,
			    unsigned int nr);

/* pool.c */
extern struct xarray kfdpool_pools;
struct kfdpool_pool *kfdpool_pool_find(const u8 *id);
struct kfdpool_pool *kfdpool_pool_next(unsigned long *serial);
void kfdpool_pool_put(struct kfdpool_pool *pool);
int kfdpool_file_prepare(struct kfdpool_pool *pool, u32 mode,
			 struct kfdpool_fd_out *fdo, size_t fd_off);
pid_t kfdpool_owner_pid(struct kfdpool_pool *pool);
long kfdpool_pool_create(struct file *file, unsigned int nr, void *data,
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

/* As kfdpool_lock(), or -EAGAIN where it would wait. */
static inline int kfdpool_trylock(struct kfdpool_file *pf)
{
	if (!mutex_trylock(&pf->pool->lock))
		return -EAGAIN;
	if (!pf->pool->ended)
		return 0;
	mutex_unlock(&pf->pool->lock);
	return -ENODEV;
}

/* entry.c */
int kfdpool_entry_add_locked(struct kfdpool_pool *pool,
			     struct kfdpool_entry *entry, bool pinned);
void kfdpool_pin_undo(struct kfdpool_fd_out *fdo);
int kfdpool_import_get(struct kfdpool_file *pf, struct kfdpool_entry *entry);
int kfdpool_import_put(struct kfdpool_file *pf, u32 entry_id);
void kfdpool_file_drop_imports(struct kfdpool_file *pf);
void kfdpool_pool_free_entries(struct kfdpool_pool *pool);
long kfdpool_ioctl_pin(struct file *file, unsigned int nr, void *data,
		       struct kfdpool_fd_out *fdo);
long kfdpool_ioctl_unpin(struct file *file, unsigned int nr, void *data,
			 struct kfdpool_fd_out *fdo);

/* Does @size more fit the pool's limit?  pool->lock held. */
static inline bool kfdpool_pool_fits(const struct kfdpool_pool *pool,
				     u64 size)
{
	return !pool->limit ||
	       (size <= pool->limit &&
		pool->reserved + pool->charging <= pool->limit - size);
}

/* record.c: the halves of an element, unlocked and under pool->lock */
int kfdpool_export_prep(struct kfdpool_file *pf,
			const struct kfdpool_export *e);
int kfdpool_export_locked(struct kfdpool_file *pf, struct kfdpool_export *e,
			  gfp_t gfp);
int kfdpool_revoke_prep(struct kfdpool_file *pf,
			const struct kfdpool_revoke *r);
int kfdpool_revoke_locked(struct kfdpool_file *pf,
			  const struct kfdpool_revoke *r);
int kfdpool_import_prep(struct kfdpool_file *pf, struct kfdpool_import *imp);
int kfdpool_import_locked(struct kfdpool_file *pf, struct kfdpool_import *imp,
			  struct kfdpool_fd_out *fdo, u32 *held);
int kfdpool_rec_cache_init(void);
void kfdpool_rec_cache_exit(void);
void kfdpool_rectab_destroy(struct kfdpool_pool *pool);
void kfdpool_recs_put(struct kfdpool_pool *pool, u32 *dead, unsigned int n);

/* batch.c: one element of EXPORT, REVOKE, IMPORT or RELEASE */
union kfdpool_elem {
	struct kfdpool_export exp;
	struct kfdpool_revoke rev;
	struct kfdpool_import imp;
	struct kfdpool_release rel;
};

int kfdpool_one(struct kfdpool_file *pf, unsigned int nr,
		union kfdpool_elem *el, struct kfdpool_fd_out *fdo, bool nowait);
long kfdpool_ioctl_one(struct file *file, unsigned int nr, void *data,
		       struct kfdpool_fd_out *fdo);
long kfdpool_batch(struct kfdpool_file *pf, unsigned int nr,
		   const struct kfdpool_batch *b);
long kfdpool_ioctl_batch(struct file *file, unsigned int nr, void *data,
			 struct kfdpool_fd_out *fdo);

/* uring.c */
#ifdef KFDPOOL_HAVE_URING
struct io_uring_cmd;
int kfdpool_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags);
#endif

/* user.c */
struct kfdpool_user *kfdpool_user_get(struct user_namespace *ns, kuid_t uid);
void kfdpool_user_put(struct kfdpool_user *u);
int kfdpool_records_charge(struct kfdpool_user *u);
void kfdpool_records_uncharge(struct kfdpool_user *u, unsigned long nr);
int kfdpool_rec_pages_charge(struct kfdpool_user *u);
void kfdpool_rec_pages_uncharge(struct kfdpool_user *u);
void kfdpool_user_figures(struct user_namespace *ns, kuid_t uid,
			  struct kfdpool_query *q);
int kfdpool_persist_user_charge(struct kfdpool_user *u, u32 pools, u64 bytes);
void kfdpool_persist_user_uncharge(struct kfdpool_user *u, u32 pools,
				   u64 bytes);
void kfdpool_debugfs_init(void);
void kfdpool_debugfs_exit(void);
void kfdpool_users_exit(void);

/* hostmem.c */
bool kfdpool_is_hostmem(struct dma_buf *dmabuf);
long kfdpool_ioctl_alloc(struct file *file, unsigned int nr, void *data,
			 struct kfdpool_fd_out *fdo);

/* handle.c */
long kfdpool_ioctl_handle_export(struct file *file, unsigned int nr, void *data,
				 struct kfdpool_fd_out *fdo);
long kfdpool_ioctl_handle_rotate(struct file *file, unsigned int nr, void *data,
				 struct kfdpool_fd_out *fdo);
long kfdpool_ioctl_pool_import_handle(struct file *file, unsigned int nr,
				      void *data, struct kfdpool_fd_out *fdo);
void kfdpool_handle_make(struct kfdpool_pool *pool, bool owner, u32 policy,
			 u32 gid, struct kfdpool_pool_handle *out);
int kfdpool_handle_resolve(const struct kfdpool_pool_handle *uh, bool owner,
			   struct kfdpool_pool **poolp);

/* persist.c */
int kfdpool_persist_begin(struct kfdpool_pool *pool, struct kfdpool_fd_out *fdo);
void kfdpool_persist_end(struct kfdpool_pool *pool);
long kfdpool_ioctl_pool_adopt(struct file *file, unsigned int nr, void *data,
			      struct kfdpool_fd_out *fdo);
long kfdpool_ioctl_pool_destroy(struct file *file, unsigned int nr,
				void *data, struct kfdpool_fd_out *fdo);
long kfdpool_ioctl_pool_destroy_id(struct file *file, unsigned int nr,
				   void *data, struct kfdpool_fd_out *fdo);

/* Charge @size more bytes of a persistent pool's entries; pool->lock held. */
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
long kfdpool_ioctl_pool_list(struct file *file, unsigned int nr, void *data,
			     struct kfdpool_fd_out *fdo);

#endif /* _KFDPOOL_H */
