// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pools: the pool object, its anon-inode files (owner and import fds),
 * POOL_CREATE on the control device, POOL_EXPORT, STATS, fdinfo, release.
 */
#include <linux/anon_inodes.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/random.h>
#include <linux/rbtree.h>
#include <linux/rhashtable.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/user_namespace.h>

#include "kfdpool.h"

/*
 * Protects kfdpool_pools: every pool until it is freed (zombies included),
 * in creation order, for debugfs, POOL_LIST and the reaper; and
 * kfdpool_pools_by_serial, the same pools by serial, so that POOL_LIST
 * finds where its cursor left off without walking the list up to it.
 * Lookups by id use kfdpool_pool_ids instead.
 */
DEFINE_MUTEX(kfdpool_pools_lock);
LIST_HEAD(kfdpool_pools);
struct rb_root kfdpool_pools_by_serial = RB_ROOT;
static u64 kfdpool_pool_serial;	/* under kfdpool_pools_lock */
static atomic64_t kfdpool_file_ids = ATOMIC64_INIT(0);

/* Pools whose reference count is not zero, by id; read under RCU. */
static struct rhashtable kfdpool_pool_ids;

static const struct rhashtable_params kfdpool_pool_id_params = {
	.key_len = KFDPOOL_ID_LEN,
	.key_offset = offsetof(struct kfdpool_pool, id),
	.head_offset = offsetof(struct kfdpool_pool, idnode),
	.automatic_shrinking = true,
};

int kfdpool_pools_init(void)
{
	return rhashtable_init(&kfdpool_pool_ids, &kfdpool_pool_id_params);
}

void kfdpool_pools_exit(void)
{
	rhashtable_destroy(&kfdpool_pool_ids);
}

/**
 * kfdpool_pool_find_id() - the pool with id @id, with a reference, or NULL
 * @id: KFDPOOL_ID_LEN bytes
 *
 * Takes no lock: the table is read under RCU, and a pool whose last
 * reference is gone (its release is about to unlist it) is not revived.
 */
struct kfdpool_pool *kfdpool_pool_find_id(const u8 *id)
{
	struct kfdpool_pool *pool;

	rcu_read_lock();
	pool = rhashtable_lookup(&kfdpool_pool_ids, id, kfdpool_pool_id_params);
	if (pool && !kref_get_unless_zero(&pool->ref))
		pool = NULL;
	rcu_read_unlock();
	return pool;
}

static bool kfdpool_serial_less(struct rb_node *a, const struct rb_node *b)
{
	return rb_entry(a, struct kfdpool_pool, serial_node)->serial <
	       rb_entry(b, struct kfdpool_pool, serial_node)->serial;
}

#ifndef KFDPOOL_HAVE_RB_ADD
/* What rb_add() does where the kernel lacks it. */
static void rb_add(struct rb_node *node, struct rb_root *tree,
		   bool (*less)(struct rb_node *, const struct rb_node *))
{
	struct rb_node **link = &tree->rb_node, *parent = NULL;

	while (*link) {
		parent = *link;
		link = less(node, parent) ? &parent->rb_left : &parent->rb_right;
	}
	rb_link_node(node, parent, link);
	rb_insert_color(node, tree);
}
#endif

/* Take @pool off kfdpool_pools and its index; kfdpool_pools_lock held. */
void kfdpool_pool_unlist(struct kfdpool_pool *pool)
{
	lockdep_assert_held(&kfdpool_pools_lock);
	list_del(&pool->node);
	rb_erase(&pool->serial_node, &kfdpool_pools_by_serial);
}

/* Free a pool that is unlisted and holds nothing. */
void kfdpool_pool_destroy(struct kfdpool_pool *pool)
{
	xa_destroy(&pool->entries);
	kfdpool_rectab_destroy(&pool->records);
	kfdpool_user_put(pool->user);
	put_pid(pool->owner_pid);
	mutex_destroy(&pool->lock);
	memzero_explicit(pool->handle_key, sizeof(pool->handle_key));
	memzero_explicit(pool->nonce_key, sizeof(pool->nonce_key));
	kfdpool_cover_release(pool->bp_stash);
	/* Lookups by id may still be looking at it. */
	kfree_rcu(pool, rcu);
}

static void kfdpool_pool_release(struct kref *ref)
{
	struct kfdpool_pool *pool = container_of(ref, struct kfdpool_pool, ref);
	bool zombie;

	rhashtable_remove_fast(&kfdpool_pool_ids, &pool->idnode,
			       kfdpool_pool_id_params);
	kfdpool_pool_free_all(pool);

	/* Held entries keep the pool until the reaper frees them (held.c). */
	mutex_lock(&kfdpool_pools_lock);
	mutex_lock(&pool->lock);
	zombie = pool->nr_held;
	pool->zombie = zombie;
	mutex_unlock(&pool->lock);
	if (!zombie)
		kfdpool_pool_unlist(pool);
	mutex_unlock(&kfdpool_pools_lock);
	if (!zombie)
		kfdpool_pool_destroy(pool);
}

void kfdpool_pool_put(struct kfdpool_pool *pool)
{
	kref_put(&pool->ref, kfdpool_pool_release);
}

unsigned int kfdpool_nr_pools(void)
{
	struct kfdpool_pool *pool;
	unsigned int n = 0;

	mutex_lock(&kfdpool_pools_lock);
	list_for_each_entry(pool, &kfdpool_pools, node)
		n++;
	mutex_unlock(&kfdpool_pools_lock);
	return n;
}

/*
 * The creator's pid in the caller's pid namespace while the creator lives
 * (until it is reaped), else 0: once reaped, its number may name another
 * process.
 */
pid_t kfdpool_owner_pid(struct kfdpool_pool *pool)
{
	pid_t nr = 0;

	rcu_read_lock();
	if (pid_task(pool->owner_pid, PIDTYPE_TGID))
		nr = pid_vnr(pool->owner_pid);
	rcu_read_unlock();
	return nr;
}

/* A new file of @pool in @mode; takes a pool reference for the file. */
static struct file *kfdpool_file_open(struct kfdpool_pool *pool, u32 mode)
{
	struct kfdpool_file *pf;
	struct file *file;

	pf = kzalloc(sizeof(*pf), GFP_KERNEL_ACCOUNT);
	if (!pf)
		return ERR_PTR(-ENOMEM);
	pf->pool = pool;
	pf->id = atomic64_inc_return(&kfdpool_file_ids);
	pf->mode = mode;
	xa_init(&pf->imports);

	kref_get(&pool->ref);
	file = anon_inode_getfile("kfdpool", &kfdpool_pool_fops, pf, O_RDWR);
	if (IS_ERR(file)) {
		kfdpool_pool_put(pool);
		kfree(pf);
		return file;
	}
	if (mode == KFDPOOL_MODE_IMPORT) {
		mutex_lock(&pool->lock);
		pool->nr_import_fds++;
		mutex_unlock(&pool->lock);
	}
	return file;
}

/*
 * Open a pool file for @fdo; the caller's dispatcher installs it at a new
 * fd, whose number goes at @fd_off of the caller's struct.
 */
int kfdpool_file_prepare(struct kfdpool_pool *pool, u32 mode,
			 struct kfdpool_fd_out *fdo, size_t fd_off)
{
	struct file *file;

	file = kfdpool_file_open(pool, mode);
	if (IS_ERR(file))
		return PTR_ERR(file);
	fdo->file = file;
	fdo->fd_off = fd_off;
	return 0;
}

static bool kfdpool_name_valid(const char *name)
{
	size_t i;

	for (i = 0; i < KFDPOOL_NAME_LEN; i++) {
		if (!name[i])
			return true;
		if (name[i] < 0x21 || name[i] > 0x7e)
			return false;
	}
	return false;	/* no NUL */
}

long kfdpool_pool_create(struct file *file, void *data,
			 struct kfdpool_fd_out *fdo)
{
	struct kfdpool_pool_create *args = data;
	u64 cap = READ_ONCE(kfdpool_default_pool_limit);
	struct kfdpool_pool *pool;
	int ret;

	if (args->flags || args->pad ||
	    (args->handle_types & ~KFDPOOL_HANDLE_TYPES_ALL) ||
	    !kfdpool_name_valid(args->name))
		return -EINVAL;
	/* The administrator's cap: refused, not lowered behind the caller. */
	if (cap && args->limit > cap)
		return -EDQUOT;

	pool = kzalloc(sizeof(*pool), GFP_KERNEL_ACCOUNT);
	if (!pool)
		return -ENOMEM;
	pool->user = kfdpool_user_get(current_user_ns(), current_euid());
	if (!pool->user) {
		kfree(pool);
		return -ENOMEM;
	}
	kref_init(&pool->ref);
	mutex_init(&pool->lock);
	kfdpool_handle_key_init(pool);
	get_random_bytes(pool->nonce_key, sizeof(pool->nonce_key));
	strscpy(pool->name, args->name, sizeof(pool->name));
	pool->limit = args->limit ? args->limit : cap;
	pool->handle_types = args->handle_types;
	pool->owner_pid = get_pid(task_tgid(current));
	pool->uid = current_euid();
	xa_init_flags(&pool->entries, XA_FLAGS_ALLOC1);
	hash_init(pool->dmabufs);
	kfdpool_rectab_init(&pool->records);
	INIT_LIST_HEAD(&pool->held);
	INIT_LIST_HEAD(&pool->held_node);

	/* 128 random bits do not collide; if they ever did, draw again. */
	do {
		get_random_bytes(pool->id, sizeof(pool->id));
		ret = rhashtable_lookup_insert_fast(&kfdpool_pool_ids,
						    &pool->idnode,
						    kfdpool_pool_id_params);
	} while (ret == -EEXIST);
	if (ret) {
		kfdpool_user_put(pool->user);
		put_pid(pool->owner_pid);
		kfree_sensitive(pool);
		return ret;
	}

	mutex_lock(&kfdpool_pools_lock);
	pool->serial = ++kfdpool_pool_serial;
	list_add_tail(&pool->node, &kfdpool_pools);
	rb_add(&pool->serial_node, &kfdpool_pools_by_serial,
	       kfdpool_serial_less);
	mutex_unlock(&kfdpool_pools_lock);

	memcpy(args->id, pool->id, sizeof(args->id));
	/* The owner file takes its own reference; drop the creation one. */
	ret = kfdpool_file_prepare(pool, KFDPOOL_MODE_OWNER, fdo,
				   offsetof(struct kfdpool_pool_create, fd));
	kfdpool_pool_put(pool);
	if (ret)
		return ret;
	args->fd = -1;
	return 0;
}

static long kfdpool_ioctl_pool_export(struct file *file, void *data,
				      struct kfdpool_fd_out *fdo)
{
	struct kfdpool_pool_export *args = data;
	struct kfdpool_file *pf = file->private_data;
	int ret;

	if (pf->mode != KFDPOOL_MODE_OWNER)
		return -EPERM;
	if (args->flags)
		return -EINVAL;
	if (!(pf->pool->handle_types & KFDPOOL_HANDLE_TYPE_FD))
		return -EOPNOTSUPP;

	ret = kfdpool_file_prepare(pf->pool, KFDPOOL_MODE_IMPORT, fdo,
				   offsetof(struct kfdpool_pool_export, fd));
	if (ret)
		return ret;
	args->fd = -1;
	return 0;
}

/* Fill @st from the pool and @pf; pool->lock held. */
static void kfdpool_stats_fill(struct kfdpool_file *pf,
			       struct kfdpool_pool_stats *st)
{
	struct kfdpool_pool *pool = pf->pool;

	lockdep_assert_held(&pool->lock);
	st->mode = pf->mode;
	memcpy(st->id, pool->id, sizeof(st->id));
	memcpy(st->name, pool->name, sizeof(st->name));
	st->limit = pool->limit;
	st->handle_types = pool->handle_types;
	st->owner_pid = kfdpool_owner_pid(pool);
	st->reserved_bytes = pool->reserved;
	st->reserved_high = pool->reserved_high;
	st->used_bytes = pool->used;
	st->used_high = pool->used_high;
	st->draining_bytes = pool->draining;
	st->imported_bytes = pool->imported;
	st->fd_imported_bytes = pf->imported;
	st->entries = pool->nr_entries;
	st->draining_entries = pool->nr_draining;
	st->records = pool->nr_records;
	st->import_fds = pool->nr_import_fds;
	st->fd_imports = pf->nr_imports;
	st->held_bytes = pool->held_bytes;
	st->held_entries = pool->nr_held;
}

#define KFDPOOL_STATS_RESET_ALL \
	(KFDPOOL_STATS_RESET_RESERVED_HIGH | KFDPOOL_STATS_RESET_USED_HIGH)

static long kfdpool_ioctl_stats(struct file *file, void *data,
				struct kfdpool_fd_out *fdo)
{
	struct kfdpool_pool_stats *st = data;
	struct kfdpool_file *pf = file->private_data;
	struct kfdpool_pool *pool = pf->pool;
	u32 flags = st->flags;

	if ((flags & ~KFDPOOL_STATS_RESET_ALL) ||
	    !kfdpool_mem_is_zero(st->pad, sizeof(st->pad)) || st->pad2)
		return -EINVAL;
	if (flags && pf->mode != KFDPOOL_MODE_OWNER)
		return -EPERM;

	memset(st, 0, sizeof(*st));
	st->flags = flags;
	mutex_lock(&pool->lock);
	/* Held entries nobody references any more go before they are seen. */
	kfdpool_pool_reap_locked(pool);
	if (flags & KFDPOOL_STATS_RESET_RESERVED_HIGH)
		pool->reserved_high = pool->reserved;
	if (flags & KFDPOOL_STATS_RESET_USED_HIGH)
		pool->used_high = pool->used;
	kfdpool_stats_fill(pf, st);
	mutex_unlock(&pool->lock);
	return 0;
}

static const struct kfdpool_ioctl_desc kfdpool_pool_ioctls[] = {
	[_IOC_NR(KFDPOOL_IOC_POOL_STATS)] =
		KFDPOOL_IOCTL(KFDPOOL_IOC_POOL_STATS,
			      KFDPOOL_POOL_STATS_SIZE_VER0,
			      kfdpool_ioctl_stats),
	[_IOC_NR(KFDPOOL_IOC_POOL_EXPORT)] =
		KFDPOOL_IOCTL(KFDPOOL_IOC_POOL_EXPORT,
			      sizeof(struct kfdpool_pool_export),
			      kfdpool_ioctl_pool_export),
	[_IOC_NR(KFDPOOL_IOC_PIN)] =
		KFDPOOL_IOCTL(KFDPOOL_IOC_PIN, sizeof(struct kfdpool_pin),
			      kfdpool_ioctl_pin),
	[_IOC_NR(KFDPOOL_IOC_UNPIN)] =
		KFDPOOL_IOCTL(KFDPOOL_IOC_UNPIN, sizeof(struct kfdpool_unpin),
			      kfdpool_ioctl_unpin),
	[_IOC_NR(KFDPOOL_IOC_EXPORT)] =
		KFDPOOL_IOCTL(KFDPOOL_IOC_EXPORT, sizeof(struct kfdpool_export),
			      kfdpool_ioctl_export),
	[_IOC_NR(KFDPOOL_IOC_REVOKE)] =
		KFDPOOL_IOCTL(KFDPOOL_IOC_REVOKE, sizeof(struct kfdpool_revoke),
			      kfdpool_ioctl_revoke),
	[_IOC_NR(KFDPOOL_IOC_IMPORT)] =
		KFDPOOL_IOCTL(KFDPOOL_IOC_IMPORT, sizeof(struct kfdpool_import),
			      kfdpool_ioctl_import),
	[_IOC_NR(KFDPOOL_IOC_RELEASE)] =
		KFDPOOL_IOCTL(KFDPOOL_IOC_RELEASE,
			      sizeof(struct kfdpool_release),
			      kfdpool_ioctl_release),
	[_IOC_NR(KFDPOOL_IOC_EXPORT_BATCH)] =
		KFDPOOL_IOCTL(KFDPOOL_IOC_EXPORT_BATCH,
			      sizeof(struct kfdpool_batch),
			      kfdpool_ioctl_export_batch),
	[_IOC_NR(KFDPOOL_IOC_REVOKE_BATCH)] =
		KFDPOOL_IOCTL(KFDPOOL_IOC_REVOKE_BATCH,
			      sizeof(struct kfdpool_batch),
			      kfdpool_ioctl_revoke_batch),
	[_IOC_NR(KFDPOOL_IOC_IMPORT_BATCH)] =
		KFDPOOL_IOCTL(KFDPOOL_IOC_IMPORT_BATCH,
			      sizeof(struct kfdpool_batch),
			      kfdpool_ioctl_import_batch),
	[_IOC_NR(KFDPOOL_IOC_RELEASE_BATCH)] =
		KFDPOOL_IOCTL(KFDPOOL_IOC_RELEASE_BATCH,
			      sizeof(struct kfdpool_batch),
			      kfdpool_ioctl_release_batch),
	[_IOC_NR(KFDPOOL_IOC_HANDLE_EXPORT)] =
		KFDPOOL_IOCTL(KFDPOOL_IOC_HANDLE_EXPORT,
			      sizeof(struct kfdpool_handle_export),
			      kfdpool_ioctl_handle_export),
	[_IOC_NR(KFDPOOL_IOC_HANDLE_ROTATE)] =
		KFDPOOL_IOCTL(KFDPOOL_IOC_HANDLE_ROTATE,
			      sizeof(struct kfdpool_handle_rotate),
			      kfdpool_ioctl_handle_rotate),
	[_IOC_NR(KFDPOOL_IOC_ALLOC)] =
		KFDPOOL_IOCTL(KFDPOOL_IOC_ALLOC, sizeof(struct kfdpool_alloc),
			      kfdpool_ioctl_alloc),
};

static long kfdpool_pool_ioctl(struct file *file, unsigned int cmd,
			       unsigned long arg)
{
	return kfdpool_ioctl_dispatch(file, cmd, arg, kfdpool_pool_ioctls,
				      ARRAY_SIZE(kfdpool_pool_ioctls));
}

/*
 * The last close of a pool file (or the exit of its last holder, killed or
 * not) drops its imports, then its pool reference; the last pool reference
 * drops every entry, record and dma-buf reference of the pool.
 */
static int kfdpool_pool_file_release(struct inode *inode, struct file *file)
{
	struct kfdpool_file *pf = file->private_data;
	struct kfdpool_pool *pool = pf->pool;

	mutex_lock(&pool->lock);
	kfdpool_file_drop_imports(pf);
	if (pf->mode == KFDPOOL_MODE_IMPORT)
		pool->nr_import_fds--;
	mutex_unlock(&pool->lock);

	xa_destroy(&pf->imports);
	kfree(pf);
	kfdpool_pool_put(pool);
	return 0;
}

static void kfdpool_pool_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct kfdpool_file *pf = file->private_data;
	struct kfdpool_pool_stats *st;

	st = kzalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return;
	mutex_lock(&pf->pool->lock);
	kfdpool_pool_reap_locked(pf->pool);
	kfdpool_stats_fill(pf, st);
	mutex_unlock(&pf->pool->lock);

	seq_printf(m, "kfdpool-id:\t%*phN\n", KFDPOOL_ID_LEN, st->id);
	seq_printf(m, "kfdpool-name:\t%s\n", st->name);
	seq_printf(m, "kfdpool-mode:\t%s\n",
		   st->mode == KFDPOOL_MODE_OWNER ? "owner" : "import");
	seq_printf(m, "kfdpool-owner-pid:\t%d\n", st->owner_pid);
	seq_printf(m, "kfdpool-limit:\t%llu\n", st->limit);
	seq_printf(m, "kfdpool-handle-types:\t%u\n", st->handle_types);
	seq_printf(m, "kfdpool-reserved:\t%llu\n", st->reserved_bytes);
	seq_printf(m, "kfdpool-reserved-high:\t%llu\n", st->reserved_high);
	seq_printf(m, "kfdpool-used:\t%llu\n", st->used_bytes);
	seq_printf(m, "kfdpool-used-high:\t%llu\n", st->used_high);
	seq_printf(m, "kfdpool-draining:\t%llu\n", st->draining_bytes);
	seq_printf(m, "kfdpool-entries:\t%u\n", st->entries);
	seq_printf(m, "kfdpool-draining-entries:\t%u\n", st->draining_entries);
	seq_printf(m, "kfdpool-records:\t%u\n", st->records);
	seq_printf(m, "kfdpool-import-fds:\t%u\n", st->import_fds);
	seq_printf(m, "kfdpool-imported:\t%llu\n", st->imported_bytes);
	seq_printf(m, "kfdpool-fd-imported:\t%llu\n", st->fd_imported_bytes);
	seq_printf(m, "kfdpool-fd-imports:\t%u\n", st->fd_imports);
	seq_printf(m, "kfdpool-file-id:\t%llu\n", pf->id);
	seq_printf(m, "kfdpool-held:\t%llu\n", st->held_bytes);
	seq_printf(m, "kfdpool-held-entries:\t%u\n", st->held_entries);
	kfree(st);
}

const struct file_operations kfdpool_pool_fops = {
	.owner = THIS_MODULE,
	.release = kfdpool_pool_file_release,
	.unlocked_ioctl = kfdpool_pool_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.show_fdinfo = kfdpool_pool_show_fdinfo,
#ifdef KFDPOOL_HAVE_URING
	.uring_cmd = kfdpool_uring_cmd,
#endif
};
