// SPDX-License-Identifier: GPL-2.0-only
/*
 * kfdpool: shareable GPU and host memory pools.
 *
 * The control device /dev/kfdpool, the module parameters, and the
 * size-versioned ioctl dispatch shared by the control device and pool fds.
 */
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/nospec.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "kfdpool.h"

unsigned long kfdpool_global_limit;
module_param_named(global_limit, kfdpool_global_limit, ulong, 0644);
MODULE_PARM_DESC(global_limit,
		 "Bytes all pools together may pin (0: no limit)");

unsigned long kfdpool_user_limit;
module_param_named(user_limit, kfdpool_user_limit, ulong, 0644);
MODULE_PARM_DESC(user_limit,
		 "Bytes the pools of one user, and of the user namespaces it owns, may pin (0: no limit)");

unsigned long kfdpool_default_pool_limit;
module_param_named(default_pool_limit, kfdpool_default_pool_limit, ulong,
		   0644);
MODULE_PARM_DESC(default_pool_limit,
		 "Limit of a pool created with limit 0, and the largest limit a pool may ask for (0: none)");

unsigned int kfdpool_max_entries = 65536;
module_param_named(max_entries, kfdpool_max_entries, uint, 0644);
MODULE_PARM_DESC(max_entries, "Entries one pool may hold (default 65536)");

unsigned int kfdpool_max_user_records = 2 * KFDPOOL_MAX_RECORDS;
module_param_named(max_user_records, kfdpool_max_user_records, uint, 0644);
MODULE_PARM_DESC(max_user_records,
		 "Live export records the pools of one user, and of the user namespaces it owns, may hold (default 2097152, 0: no limit)");

bool kfdpool_mem_is_zero(const void *p, size_t len)
{
	return !memchr_inv(p, 0, len);
}

/*
 * Size-versioned dispatch, after dma-heap: the caller's struct size comes
 * from the command number; we copy min(caller, kernel) bytes in, zero-fill
 * the rest, and copy min(caller, kernel) bytes back.
 */
long kfdpool_ioctl_dispatch(struct file *file, unsigned int ucmd,
			    unsigned long arg,
			    const struct kfdpool_ioctl_desc *table,
			    unsigned int nr)
{
	unsigned int in_size, out_size, ksize, usize, idx;
	const struct kfdpool_ioctl_desc *desc;
	struct kfdpool_fd_out fdo;
	char stack[192];	/* every struct of ABI 1 fits (stats: 168) */
	char *kdata;
	long ret;

	if (_IOC_TYPE(ucmd) != KFDPOOL_IOC_MAGIC)
		return -ENOTTY;
	idx = _IOC_NR(ucmd);
	if (idx >= nr)
		return -ENOTTY;
	idx = array_index_nospec(idx, nr);
	desc = &table[idx];
	if (!desc->handler)
		return -ENOTTY;
	/* Same number, other direction or type: not one of ours. */
	if (_IOC_DIR(ucmd) != _IOC_DIR(desc->cmd))
		return -ENOTTY;

	ksize = _IOC_SIZE(desc->cmd);
	usize = _IOC_SIZE(ucmd);
	if (usize < desc->min_size)
		return -EINVAL;
	in_size = (_IOC_DIR(ucmd) & _IOC_WRITE) ? min(usize, ksize) : 0;
	out_size = (_IOC_DIR(ucmd) & _IOC_READ) ? min(usize, ksize) : 0;

	if (ksize <= sizeof(stack)) {
		kdata = stack;
	} else {
		kdata = kmalloc(ksize, GFP_KERNEL);
		if (!kdata)
			return -ENOMEM;
	}

	if (copy_from_user(kdata, (void __user *)arg, in_size)) {
		ret = -EFAULT;
		goto out;
	}
	memset(kdata + in_size, 0, ksize - in_size);

	kfdpool_fd_out_init(&fdo);
	ret = desc->handler(file, kdata, &fdo);
	if (ret < 0)
		goto out;

	/* The fd goes live only once the caller has been told its number. */
	if (copy_to_user((void __user *)arg, kdata, out_size)) {
		kfdpool_fd_abort(&fdo);
		ret = -EFAULT;
		goto out;
	}
	kfdpool_fd_commit(&fdo);
out:
	if (kdata != stack)
		kfree(kdata);
	return ret;
}

void kfdpool_fd_out_init(struct kfdpool_fd_out *fdo)
{
	memset(fdo, 0, sizeof(*fdo));
	fdo->fd = -1;
}

/* Make the prepared file visible at its reserved fd. */
void kfdpool_fd_commit(struct kfdpool_fd_out *fdo)
{
	if (fdo->fd < 0)
		return;
	fd_install(fdo->fd, fdo->file);
	kfdpool_fd_out_init(fdo);
}

/* Throw away a prepared fd, if any, and undo what came with the command. */
void kfdpool_fd_abort(struct kfdpool_fd_out *fdo)
{
	if (fdo->fd >= 0) {
		put_unused_fd(fdo->fd);
		fput(fdo->file);
	}
	if (fdo->undo)
		fdo->undo(fdo);
	kfdpool_fd_out_init(fdo);
}

static long kfdpool_query(struct file *file, void *data,
			  struct kfdpool_fd_out *fdo)
{
	struct kfdpool_query *q = data;
	u64 records;

	if (!kfdpool_mem_is_zero(q, sizeof(*q)))
		return -EINVAL;

	q->abi_version = KFDPOOL_ABI_VERSION;
	q->features = KFDPOOL_FEATURE_BATCH | KFDPOOL_FEATURE_POOL_HANDLE;
#ifdef KFDPOOL_HAVE_URING
	q->features |= KFDPOOL_FEATURE_URING_CMD;
#endif
	/* Held entries nobody references any more are not counted. */
	kfdpool_reap_all();
	kfdpool_user_figures(current_user_ns(), current_euid(),
			     &q->global_pinned, &q->user_pinned, &records);
	q->user_records = min_t(u64, records, U32_MAX);
	q->max_user_records = READ_ONCE(kfdpool_max_user_records);
	q->global_limit = READ_ONCE(kfdpool_global_limit);
	q->user_limit = READ_ONCE(kfdpool_user_limit);
	q->default_pool_limit = READ_ONCE(kfdpool_default_pool_limit);
	q->max_entries = READ_ONCE(kfdpool_max_entries);
	q->max_batch = KFDPOOL_BATCH_MAX;
	return 0;
}

static const struct kfdpool_ioctl_desc kfdpool_ctl_ioctls[] = {
	[_IOC_NR(KFDPOOL_IOC_QUERY)] =
		KFDPOOL_IOCTL(KFDPOOL_IOC_QUERY, KFDPOOL_QUERY_SIZE_VER0,
			      kfdpool_query),
	[_IOC_NR(KFDPOOL_IOC_POOL_CREATE)] =
		KFDPOOL_IOCTL(KFDPOOL_IOC_POOL_CREATE,
			      sizeof(struct kfdpool_pool_create),
			      kfdpool_pool_create),
	[_IOC_NR(KFDPOOL_IOC_POOL_IMPORT_HANDLE)] =
		KFDPOOL_IOCTL(KFDPOOL_IOC_POOL_IMPORT_HANDLE,
			      sizeof(struct kfdpool_pool_import_handle),
			      kfdpool_ioctl_pool_import_handle),
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

static struct miscdevice kfdpool_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "kfdpool",
	.fops = &kfdpool_ctl_fops,
	.mode = 0666,
};

static int __init kfdpool_init(void)
{
	int ret;

	ret = kfdpool_limits_init();
	if (ret)
		return ret;
	ret = kfdpool_pools_init();
	if (ret)
		goto err_limits;
	ret = kfdpool_cover_init();
	if (ret)
		goto err_pools;
	kfdpool_debugfs_init();
	ret = misc_register(&kfdpool_misc);
	if (ret)
		goto err_debugfs;
	return 0;

err_debugfs:
	kfdpool_debugfs_exit();
	kfdpool_cover_exit();
err_pools:
	kfdpool_pools_exit();
err_limits:
	kfdpool_limits_exit();
	return ret;
}

/*
 * Every pool file holds a module reference (kfdpool_pool_fops.owner), so
 * only zombie pools (held.c) exist by the time this runs.
 */
static void __exit kfdpool_exit(void)
{
	misc_deregister(&kfdpool_misc);
	kfdpool_debugfs_exit();
	kfdpool_held_exit();
	WARN_ON(kfdpool_nr_pools());
	kfdpool_cover_exit();
	kfdpool_pools_exit();
	kfdpool_limits_exit();
}

module_init(kfdpool_init);
module_exit(kfdpool_exit);

MODULE_DESCRIPTION("Shareable GPU and host memory pools over dma-buf");
MODULE_LICENSE("GPL");
KFDPOOL_IMPORT_NS_DMA_BUF();
