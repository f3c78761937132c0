// SPDX-License-Identifier: GPL-2.0-only
/*
 * kfdpool: shareable GPU and host memory pools.
 *
 * The control device /dev/kfdpool, the module parameters, and the
 * size-versioned ioctl dispatch of the control device and pool fds.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/file.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/nospec.h>
#include <linux/uaccess.h>

#include "kfdpool.h"

unsigned long kfdpool_default_pool_limit;
module_param_named(default_pool_limit, kfdpool_default_pool_limit, ulong,
		   0644);
MODULE_PARM_DESC(default_pool_limit,
		 "Limit of a pool created with limit 0, and the largest limit a pool may ask for (0: none)");

unsigned int kfdpool_max_entries = 65536;
module_param_named(max_entries, kfdpool_max_entries, uint, 0644);
MODULE_PARM_DESC(max_entries, "Entries one pool may hold (default 65536)");

unsigned int kfdpool_max_user_records = KFDPOOL_MAX_RECORDS;
module_param_named(max_user_records, kfdpool_max_user_records, uint, 0644);
MODULE_PARM_DESC(max_user_records,
		 "Live export records the pools of one user, and of the user namespaces it owns, may hold (default 1048576, 0: no limit)");

/* Handles of policy ANY are bearer tokens, as GEM flink names were. */
bool kfdpool_allow_any_handles;
module_param_named(allow_any_handles, kfdpool_allow_any_handles, bool, 0644);
MODULE_PARM_DESC(allow_any_handles,
		 "Allow pool handles of policy ANY, which admit anyone holding the handle (default: no)");

/*
 * Persistent pools stay with no process (persist.c), so they are the
 * operator's choice: none unless enabled, then few per user, their bytes
 * capped besides RLIMIT_MEMLOCK.
 */
unsigned int kfdpool_max_user_persistent;
module_param_named(max_user_persistent, kfdpool_max_user_persistent, uint,
		   0644);
MODULE_PARM_DESC(max_user_persistent,
		 "Persistent pools one user, and the user namespaces it owns, may keep (default 0: persistence off)");

unsigned long kfdpool_max_user_persistent_bytes = SZ_1G;
module_param_named(max_user_persistent_bytes,
		   kfdpool_max_user_persistent_bytes, ulong, 0644);
MODULE_PARM_DESC(max_user_persistent_bytes,
		 "Bytes the entries of one user's persistent pools may hold (default 1 GiB, 0: no limit)");

/*
 * The caller's struct size is in the command number, as for dma-heap and
 * drm_ioctl(): a smaller struct (an older caller's) is zero-filled, a larger
 * one is accepted only when its bytes past ours are zero (-E2BIG otherwise,
 * nothing done), and min(caller, kernel) bytes are copied back.
 */
long kfdpool_ioctl_dispatch(struct file *file, unsigned int ucmd,
			    unsigned long arg,
			    const struct kfdpool_ioctl_desc *table,
			    unsigned int nr)
{
	void __user *uarg = (void __user *)arg;
	const struct kfdpool_ioctl_desc *desc;
	unsigned int ksize, usize, idx;
	struct kfdpool_fd_out fdo;
	u64 kdata[20];	/* the largest struct is POOL_STATS' */
	long ret;
	int fd;

	idx = _IOC_NR(ucmd);
	if (_IOC_TYPE(ucmd) != KFDPOOL_IOC_MAGIC || idx >= nr)
		return -ENOTTY;
	desc = &table[array_index_nospec(idx, nr)];
	if (!desc->handler || _IOC_DIR(ucmd) != _IOC_DIR(desc->cmd))
		return -ENOTTY;
	ksize = _IOC_SIZE(desc->cmd);
	usize = _IOC_SIZE(ucmd);
	if (WARN_ON_ONCE(ksize > sizeof(kdata)))
		return -ENOTTY;

	ret = copy_struct_from_user(kdata, ksize, uarg, usize);
	if (ret)
		return ret;
	usize = min(usize, ksize);
	/* What cannot be undone must have a place for its answer first. */
	if (desc->final && copy_to_user(uarg, kdata, usize))
		return -EFAULT;
	kfdpool_fd_out_init(&fdo);
	ret = desc->handler(file, idx, kdata, &fdo);
	if (ret < 0)
		return ret;
	/* An fd nobody can be told of is not handed out. */
	if (fdo.file && fdo.fd_off + sizeof(int) > usize) {
		kfdpool_fd_abort(&fdo);
		return -EINVAL;
	}
	/* The fd goes live only once everything else reached the caller. */
	if ((_IOC_DIR(ucmd) & _IOC_READ) && copy_to_user(uarg, kdata, usize)) {
		kfdpool_fd_abort(&fdo);
		return -EFAULT;
	}
	fd = kfdpool_fd_commit(&fdo, fdo.file ?
			       (int __user *)(uarg + fdo.fd_off) : NULL);
	return fd < 0 ? fd : ret;
}

/**
 * kfdpool_fd_commit() - hand out a command's file at a new fd
 * @fdo: the command's output; reset on return
 * @ufd: where the caller learns the fd number, or NULL (io_uring: the
 *	number is the result)
 *
 * Every fd goes through receive_fd(), as SCM_RIGHTS does, so that security
 * modules see each file handed out (kernels that keep it from modules get
 * the fd as dma_buf_fd() gives one).  When no fd can be had, the command is
 * undone.
 *
 * Return: the new fd, 0 when @fdo holds no file, or -errno.
 */
int kfdpool_fd_commit(struct kfdpool_fd_out *fdo, int __user *ufd)
{
	struct file *file = fdo->file;
	int fd;

	if (!file) {
		kfdpool_fd_out_init(fdo);
		return 0;
	}
#if defined(KFDPOOL_HAVE_RECEIVE_FD_UFD)
	fd = receive_fd(file, ufd, O_CLOEXEC);
#elif !defined(KFDPOOL_HAVE_EXPORT_RECEIVE_FD)
	/* No receive path for modules: install as dma_buf_fd() does. */
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd >= 0 && ufd && put_user(fd, ufd)) {
		put_unused_fd(fd);
		fd = -EFAULT;
	}
	if (fd >= 0)
		fd_install(fd, get_file(file));
#else
	fd = receive_fd(file, O_CLOEXEC);
	/* Installed already: only a caller that unmapped its struct fails. */
	if (fd >= 0 && ufd && put_user(fd, ufd)) {
		fdo->undo = NULL;
		fd = -EFAULT;
	}
#endif
	/* Undo first: it may need what the file holds. */
	if (fd < 0 && fdo->undo)
		fdo->undo(fdo);
	fput(file);
	kfdpool_fd_out_init(fdo);
	return fd;
}

/* Undo the command, then drop a prepared file, if any. */
void kfdpool_fd_abort(struct kfdpool_fd_out *fdo)
{
	if (fdo->undo)
		fdo->undo(fdo);
	if (fdo->file)
		fput(fdo->file);
	kfdpool_fd_out_init(fdo);
}

static long kfdpool_query(struct file *file, unsigned int nr, void *data,
			  struct kfdpool_fd_out *fdo)
{
	struct kfdpool_query *q = data;

	if (q->pad)
		return -EINVAL;
	memset(q, 0, sizeof(*q));
	q->abi_version = KFDPOOL_ABI_VERSION;
	q->features = KFDPOOL_FEATURE_BATCH | KFDPOOL_FEATURE_POOL_HANDLE |
		      KFDPOOL_FEATURE_HOST_ALLOC | KFDPOOL_FEATURE_PERSIST;
#ifdef KFDPOOL_HAVE_URING
	q->features |= KFDPOOL_FEATURE_URING_CMD;
#endif
	kfdpool_user_figures(current_user_ns(), current_euid(), q);
	q->default_pool_limit = READ_ONCE(kfdpool_default_pool_limit);
	q->max_entries = READ_ONCE(kfdpool_max_entries);
	q->max_batch = KFDPOOL_BATCH_MAX;
	q->max_records = KFDPOOL_MAX_RECORDS;
	q->max_user_records = READ_ONCE(kfdpool_max_user_records);
	q->max_user_persistent = READ_ONCE(kfdpool_max_user_persistent);
	q->max_user_persistent_bytes =
		READ_ONCE(kfdpool_max_user_persistent_bytes);
	return 0;
}

static const struct kfdpool_ioctl_desc kfdpool_ctl_ioctls[] = {
	KFDPOOL_IOCTL(QUERY, kfdpool_query),
	KFDPOOL_IOCTL(POOL_CREATE, kfdpool_pool_create),
	KFDPOOL_IOCTL(POOL_IMPORT_HANDLE, kfdpool_ioctl_pool_import_handle),
	KFDPOOL_IOCTL(POOL_LIST, kfdpool_ioctl_pool_list),
	KFDPOOL_IOCTL(POOL_ADOPT, kfdpool_ioctl_pool_adopt),
	KFDPOOL_IOCTL(POOL_DESTROY_ID, kfdpool_ioctl_pool_destroy_id),
};

static long kfdpool_ctl_ioctl(struct file *file, unsigned int cmd,
			      unsigned long arg)
{
	return kfdpool_ioctl_dispatch(file, cmd, arg, kfdpool_ctl_ioctls,
				      ARRAY_SIZE(kfdpool_ctl_ioctls));
}

static const struct file_operations kfdpool_ctl_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = kfdpool_ctl_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

/* Loaded at boot (modules-load.d), not on a first open: a dynamic minor. */
static struct miscdevice kfdpool_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "kfdpool",
	.fops = &kfdpool_ctl_fops,
	/* Root only unless a udev rule says otherwise. */
	.mode = 0600,
};

static int __init kfdpool_init(void)
{
	int ret;

	ret = kfdpool_rec_cache_init();
	if (ret)
		return ret;
	kfdpool_debugfs_init();
	ret = misc_register(&kfdpool_misc);
	if (ret)
		goto err_debugfs;
	return 0;

err_debugfs:
	kfdpool_debugfs_exit();
	kfdpool_rec_cache_exit();
	return ret;
}

/*
 * Every pool file, every ALLOC dma-buf and every persistent pool holds a
 * module reference: nothing of ours is left here.
 */
static void __exit kfdpool_exit(void)
{
	misc_deregister(&kfdpool_misc);
	kfdpool_debugfs_exit();
	kfdpool_rec_cache_exit();
	kfdpool_users_exit();
	/* Allocations that failed half-way may have left empty nodes. */
	xa_destroy(&kfdpool_pools);
}

module_init(kfdpool_init);
module_exit(kfdpool_exit);

MODULE_DESCRIPTION("Shareable GPU and host memory pools over dma-buf");
MODULE_AUTHOR("kfdpool developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(KFDPOOL_VERSION);
KFDPOOL_IMPORT_NS_DMA_BUF();
