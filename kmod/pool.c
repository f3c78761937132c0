// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pools and their owner and import files.  A pool lives while an owner file is
 * open (or it persists); its end unpins its entries and frees its records, and
 * files left over answer -ENODEV.  The struct goes with its last reference.
 */
#include <linux/anon_inodes.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/sched/user.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/user_namespace.h>

#include "kfdpool.h"

/*
 * Live pools by serial, which counts creations and is the first 32 bits of
 * the id: found under RCU, a struct staying for a grace period after its
 * last reference.
 */
DEFINE_XARRAY_ALLOC1(kfdpool_pools);
static u32 kfdpool_next_serial;
static atomic64_t kfdpool_file_ids = ATOMIC64_INIT(0);

static const struct file_operations kfdpool_pool_fops;

static u32 kfdpool_id_serial(const u8 *id)
{
	u32 serial;

	memcpy(&serial, id, sizeof(serial));
	return serial;
}

/* The live pool of id @id, with a reference, or NULL. */
struct kfdpool_pool *kfdpool_pool_find(const u8 *id)
{
	struct kfdpool_pool *pool;

	rcu_read_lock();
	pool = xa_load(&kfdpool_pools, kfdpool_id_serial(id));
	if (pool && (memcmp(pool->id, id, KFDPOOL_ID_LEN) ||
		     !kref_get_unless_zero(&pool->ref)))
		pool = NULL;
	rcu_read_unlock();
	return pool;
}

/* The live pool of the lowest serial from *@serial on, referenced, or NULL. */
struct kfdpool_pool *kfdpool_pool_next(unsigned long *serial)
{
	struct kfdpool_pool *pool;

	rcu_read_lock();
	for (;;) {
		pool = xa_find(&kfdpool_pools, serial, U32_MAX, XA_PRESENT);
		/* One at its last put is ending: skip it. */
		if (!pool || kref_get_unless_zero(&pool->ref))
			break;
		++*serial;
	}
	rcu_read_unlock();
	return pool;
}

static void kfdpool_pool_free(struct kref *ref)
{
	struct kfdpool_pool *pool = container_of(ref, struct kfdpool_pool, ref);

	WARN_ON(!pool->ended || pool->nr_entries);
	xa_destroy(&pool->entries);
	kfdpool_user_put(pool->user);
	put_pid(pool->owner_pid);
	mutex_destroy(&pool->lock);
	memzero_explicit(pool->handle_key, sizeof(pool->handle_key));
	memzero_explicit(pool->nonce_key, sizeof(pool->nonce_key));
	kfree_rcu(pool, rcu);
}

void kfdpool_pool_put(struct kfdpool_pool *pool)
{
	kref_put(&pool->ref, kfdpool_pool_free);
}

/* The one way a pool ends, once.  Needs a reference; pool->lock not held. */
void kfdpool_pool_end(struct kfdpool_pool *pool)
{
	bool ended;

	mutex_lock(&pool->lock);
	ended = pool->ended;
	pool->ended = true;
	mutex_unlock(&pool->lock);
	if (ended)
		return;

	xa_erase(&kfdpool_pools, pool->serial);

	mutex_lock(&pool->lock);
	kfdpool_pool_free_entries(pool);
	mutex_unlock(&pool->lock);
	kfdpool_persist_end(pool);
}

/* The owner's pid (creator or adopter) as the caller sees it; 0 once gone. */
pid_t kfdpool_owner_pid(struct kfdpool_pool *pool)
{
	pid_t nr = 0;

	rcu_read_lock();
	if (pid_task(pool->owner_pid, PIDTYPE_TGID))
		nr = pid_vnr(pool->owner_pid);
	rcu_read_unlock();
	return nr;
}

/* Close @pf: drop its imports and counts; the last owner ends the pool. */
static void kfdpool_file_close(struct kfdpool_file *pf)
{
	struct kfdpool_pool *pool = pf->pool;
	bool end = false;

	mutex_lock(&pool->lock);
	if (!pool->ended)
		kfdpool_file_drop_imports(pf);
	if (pf->mode == KFDPOOL_MODE_OWNER)
		end = !--pool->nr_owners && !pool->kept;
	else
		pool->nr_import_fds--;
	mutex_unlock(&pool->lock);
	if (end)
		kfdpool_pool_end(pool);
	xa_destroy(&pf->imports);
	kfree(pf);
	kfdpool_pool_put(pool);
}

/* A @mode file of @pool for @fdo, its fd to go at @fd_off; -ENOENT: ended. */
int kfdpool_file_prepare(struct kfdpool_pool *pool, u32 mode,
			 struct kfdpool_fd_out *fdo, size_t fd_off)
{
	struct kfdpool_file *pf;
	struct file *file;

	pf = kzalloc(sizeof(*pf), GFP_KERNEL_ACCOUNT);
	if (!pf)
		return -ENOMEM;
	pf->pool = pool;
	pf->id = atomic64_inc_return(&kfdpool_file_ids);
	pf->mode = mode;
	xa_init(&pf->imports);

	mutex_lock(&pool->lock);
	if (pool->ended) {
		mutex_unlock(&pool->lock);
		kfree(pf);
		return -ENOENT;
	}
	if (mode == KFDPOOL_MODE_OWNER)
		pool->nr_owners++;
	else
		pool->nr_import_fds++;
	kref_get(&pool->ref);
	mutex_unlock(&pool->lock);

	file = anon_inode_getfile("kfdpool", &kfdpool_pool_fops, pf, O_RDWR);
	if (IS_ERR(file)) {
		kfdpool_file_close(pf);
		return PTR_ERR(file);
	}
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
	return false;
}

long kfdpool_pool_create(struct file *file, unsigned int nr, void *data,
			 struct kfdpool_fd_out *fdo)
{
	struct kfdpool_pool_create *args = data;
	u64 cap = READ_ONCE(kfdpool_default_pool_limit);
	struct kfdpool_pool *pool;
	int ret;

	if ((args->flags & ~KFDPOOL_POOL_PERSIST) || args->pad ||
	    (args->handle_types & ~KFDPOOL_HANDLE_TYPES_ALL) ||
	    !kfdpool_name_valid(args->name))
		return -EINVAL;
	/* The administrator's cap: refused, not lowered behind the caller. */
	if (cap && args->limit > cap)
		return -EDQUOT;

	pool = kzalloc(sizeof(*pool), GFP_KERNEL_ACCOUNT);
	if (!pool)
		return -ENOMEM;
	kref_init(&pool->ref);
	mutex_init(&pool->lock);
	xa_init_flags(&pool->entries, XA_FLAGS_ALLOC1);
	pool->dmabufs = RB_ROOT;
	pool->records.spare = KFDPOOL_RECTAB_NONE;
	pool->owner_pid = get_pid(task_tgid(current));
	pool->uid = current_euid();
	pool->user = kfdpool_user_get(current_user_ns(), current_euid());
	if (!pool->user) {
		pool->ended = true;
		kfdpool_pool_put(pool);
		return -ENOMEM;
	}
	get_random_bytes(pool->handle_key, sizeof(pool->handle_key));
	get_random_bytes(pool->nonce_key, sizeof(pool->nonce_key));
	strscpy(pool->name, args->name, sizeof(pool->name));
	pool->limit = args->limit ? args->limit : cap;
	pool->handle_types = args->handle_types;
	pool->flags = args->flags;
	pool->created = ktime_get_boottime_ns();

	/* The serial reserved, then the id made, then the pool found. */
	ret = xa_alloc_cyclic(&kfdpool_pools, &pool->serial, NULL,
			      XA_LIMIT(1, U32_MAX), &kfdpool_next_serial,
			      GFP_KERNEL);
	if (ret < 0) {
		pool->ended = true;	/* it never began */
		kfdpool_pool_put(pool);
		return ret;
	}
	memcpy(pool->id, &pool->serial, sizeof(pool->serial));
	get_random_bytes(pool->id + sizeof(pool->serial),
			 sizeof(pool->id) - sizeof(pool->serial));
	xa_store(&kfdpool_pools, pool->serial, pool, GFP_KERNEL);
	memcpy(args->id, pool->id, sizeof(args->id));
	memset(&args->owner_handle, 0, sizeof(args->owner_handle));
	ret = kfdpool_file_prepare(pool, KFDPOOL_MODE_OWNER, fdo,
				   offsetof(struct kfdpool_pool_create, fd));
	if (ret) {
		kfdpool_pool_end(pool);
	} else if (pool->flags & KFDPOOL_POOL_PERSIST) {
		ret = kfdpool_persist_begin(pool, fdo);
		/* Its owner handle comes with it: no crash leaves it unadoptable. */
		if (!ret)
			kfdpool_handle_make(pool, true, KFDPOOL_HANDLE_POLICY_UID,
					    0, &args->owner_handle);
	}
	/* The file's close ends a pool that could not persist. */
	if (ret)
		kfdpool_fd_abort(fdo);
	kfdpool_pool_put(pool);
	args->fd = -1;
	return ret;
}

static long kfdpool_ioctl_pool_export(struct file *file, unsigned int nr,
				      void *data, struct kfdpool_fd_out *fdo)
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
	args->fd = -1;
	ret = kfdpool_file_prepare(pf->pool, KFDPOOL_MODE_IMPORT, fdo,
				   offsetof(struct kfdpool_pool_export, fd));
	/* Not a pool that is missing: ours ended. */
	return ret == -ENOENT ? -ENODEV : ret;
}

/* Fill @st from the pool and @pf; pool->lock held. */
static void kfdpool_stats_fill(struct kfdpool_file *pf,
			       struct kfdpool_pool_stats *st)
{
	struct kfdpool_pool *pool = pf->pool;

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
	st->entries = pool->nr_entries;
	st->draining_entries = pool->nr_draining;
	st->records = pool->nr_records;
	st->import_fds = pool->nr_import_fds;
	if (!pool->ended) {	/* else the file's counts are stale */
		st->fd_imported_bytes = pf->imported;
		st->fd_imports = pf->nr_imports;
	}
}

#define KFDPOOL_STATS_RESET_ALL \
	(KFDPOOL_STATS_RESET_RESERVED_HIGH | KFDPOOL_STATS_RESET_USED_HIGH)

static long kfdpool_ioctl_stats(struct file *file, unsigned int nr, void *data,
				struct kfdpool_fd_out *fdo)
{
	struct kfdpool_pool_stats *st = data;
	struct kfdpool_file *pf = file->private_data;
	struct kfdpool_pool *pool = pf->pool;
	u32 flags = st->flags;
	int ret;

	if ((flags & ~KFDPOOL_STATS_RESET_ALL) || st->pad)
		return -EINVAL;
	if (flags && pf->mode != KFDPOOL_MODE_OWNER)
		return -EPERM;

	memset(st, 0, sizeof(*st));
	st->flags = flags;
	ret = kfdpool_lock(pf);
	if (ret)
		return ret;
	if (flags & KFDPOOL_STATS_RESET_RESERVED_HIGH)
		pool->reserved_high = pool->reserved;
	if (flags & KFDPOOL_STATS_RESET_USED_HIGH)
		pool->used_high = pool->used;
	kfdpool_stats_fill(pf, st);
	mutex_unlock(&pool->lock);
	return 0;
}

static const struct kfdpool_ioctl_desc kfdpool_pool_ioctls[] = {
	KFDPOOL_IOCTL_FINAL(POOL_STATS, kfdpool_ioctl_stats),
	KFDPOOL_IOCTL(POOL_EXPORT, kfdpool_ioctl_pool_export),
	KFDPOOL_IOCTL(PIN, kfdpool_ioctl_pin),
	KFDPOOL_IOCTL_FINAL(UNPIN, kfdpool_ioctl_unpin),
	KFDPOOL_IOCTL(EXPORT, kfdpool_ioctl_one),
	KFDPOOL_IOCTL(REVOKE, kfdpool_ioctl_one),
	KFDPOOL_IOCTL(IMPORT, kfdpool_ioctl_one),
	KFDPOOL_IOCTL(RELEASE, kfdpool_ioctl_one),
	KFDPOOL_IOCTL(EXPORT_BATCH, kfdpool_ioctl_batch),
	KFDPOOL_IOCTL(REVOKE_BATCH, kfdpool_ioctl_batch),
	KFDPOOL_IOCTL(IMPORT_BATCH, kfdpool_ioctl_batch),
	KFDPOOL_IOCTL(RELEASE_BATCH, kfdpool_ioctl_batch),
	KFDPOOL_IOCTL(HANDLE_EXPORT, kfdpool_ioctl_handle_export),
	KFDPOOL_IOCTL(HANDLE_ROTATE, kfdpool_ioctl_handle_rotate),
	KFDPOOL_IOCTL(ALLOC, kfdpool_ioctl_alloc),
	KFDPOOL_IOCTL(POOL_DESTROY, kfdpool_ioctl_pool_destroy),
};

static long kfdpool_pool_ioctl(struct file *file, unsigned int cmd,
			       unsigned long arg)
{
	return kfdpool_ioctl_dispatch(file, cmd, arg, kfdpool_pool_ioctls,
				      ARRAY_SIZE(kfdpool_pool_ioctls));
}

static int kfdpool_pool_release(struct inode *inode, struct file *file)
{
	kfdpool_file_close(file->private_data);
	return 0;
}

static void kfdpool_pool_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct kfdpool_file *pf = file->private_data;
	struct kfdpool_pool_stats st = {};
	bool ended;

	mutex_lock(&pf->pool->lock);
	ended = pf->pool->ended;
	kfdpool_stats_fill(pf, &st);
	mutex_unlock(&pf->pool->lock);

	seq_printf(m, "kfdpool-id:\t%*phN\n", KFDPOOL_ID_LEN, st.id);
	seq_printf(m, "kfdpool-name:\t%s\n", st.name);
	seq_printf(m, "kfdpool-mode:\t%s\n",
		   st.mode == KFDPOOL_MODE_OWNER ? "owner" : "import");
	seq_printf(m, "kfdpool-state:\t%s\n", ended ? "ended" : "live");
	seq_printf(m, "kfdpool-owner-pid:\t%d\n", st.owner_pid);
	seq_printf(m, "kfdpool-limit:\t%llu\n", st.limit);
	seq_printf(m, "kfdpool-handle-types:\t%u\n", st.handle_types);
	seq_printf(m, "kfdpool-reserved:\t%llu\n", st.reserved_bytes);
	seq_printf(m, "kfdpool-reserved-high:\t%llu\n", st.reserved_high);
	seq_printf(m, "kfdpool-used:\t%llu\n", st.used_bytes);
	seq_printf(m, "kfdpool-used-high:\t%llu\n", st.used_high);
	seq_printf(m, "kfdpool-draining:\t%llu\n", st.draining_bytes);
	seq_printf(m, "kfdpool-entries:\t%u\n", st.entries);
	seq_printf(m, "kfdpool-draining-entries:\t%u\n", st.draining_entries);
	seq_printf(m, "kfdpool-records:\t%u\n", st.records);
	seq_printf(m, "kfdpool-import-fds:\t%u\n", st.import_fds);
	seq_printf(m, "kfdpool-imported:\t%llu\n", st.imported_bytes);
	seq_printf(m, "kfdpool-fd-imported:\t%llu\n", st.fd_imported_bytes);
	seq_printf(m, "kfdpool-fd-imports:\t%u\n", st.fd_imports);
	seq_printf(m, "kfdpool-file-id:\t%llu\n", pf->id);
	seq_printf(m, "kfdpool-persistent:\t%u\n",
		   !!(pf->pool->flags & KFDPOOL_POOL_PERSIST));
}

static const struct file_operations kfdpool_pool_fops = {
	.owner = THIS_MODULE,
	.release = kfdpool_pool_release,
	.unlocked_ioctl = kfdpool_pool_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.show_fdinfo = kfdpool_pool_show_fdinfo,
#ifdef KFDPOOL_HAVE_URING
	.uring_cmd = kfdpool_uring_cmd,
#endif
};
