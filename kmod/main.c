// SPDX-License-Identifier: GPL-2.0-only
/*
 * kfdpool: shareable GPU and host memory pools.
 *
 * The control device /dev/kfdpool, the module parameters, and the
 * size-versioned ioctl dispatch shared by the control device and pool fds.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

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
/*
 * A handle of KFDPOOL_HANDLE_POLICY_ANY admits whoever holds its 64 bytes:
 * a bearer token for the pool's memory, which is what GEM flink names were
 * retired for.  Off unless the administrator turns it on; turning it off
 * again stops every ANY handle given out (import fds already made stay).
 */
bool kfdpool_allow_any_handles;
module_param_named(allow_any_handles, kfdpool_allow_any_handles, bool, 0644);
MODULE_PARM_DESC(allow_any_handles,
		 "Allow pool handles of policy ANY, which admit anyone holding the handle (default: no)");

bool kfdpool_mem_is_zero(const void *p, size_t len)
{
	return !memchr_inv(p, 0, len);
}

/*
 * Size-versioned dispatch, after dma-heap and clone3: the caller's struct
 * size comes from the command number.  copy_struct_from_user() zero-fills a
 * smaller struct and refuses (-E2BIG) a larger one whose bytes past ours are
 * not zero: a newer caller asking for something this kernel does not know
 * must learn that it was not done.  We copy min(caller, kernel) bytes back.
 */
long kfdpool_ioctl_dispatch(struct file *file, unsigned int ucmd,
			    unsigned long arg,
			    const struct kfdpool_ioctl_desc *table,
			    unsigned int nr)
{
	void __user *uarg = (void __user *)arg;
	unsigned int out_size, ksize, usize, idx;
	const struct kfdpool_ioctl_desc *desc;
	struct kfdpool_fd_out fdo;
	char stack[192];	/* every struct of ABI 1 fits (stats: 184) */
	char *kdata;
	long ret;
	int fd;

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
	out_size = (_IOC_DIR(ucmd) & _IOC_READ) ? min(usize, ksize) : 0;

	if (ksize <= sizeof(stack)) {
		kdata = stack;
	} else {
		kdata = kmalloc(ksize, GFP_KERNEL);
		if (!kdata)
			return -ENOMEM;
	}

	/* Every command of ours reads its struct (_IOC_WRITE). */
	ret = copy_struct_from_user(kdata, ksize, uarg, usize);
	if (ret)
		goto out;

	kfdpool_fd_out_init(&fdo);
	ret = desc->handler(file, kdata, &fdo);
	if (ret < 0)
		goto out;

	/*
	 * The fd goes live only once everything else reached the caller.
	 * (Nothing to copy for _IOW: a copy of 0 bytes would still be a
	 * fault-injection point, one that cannot fail.)
	 */
	if (out_size && copy_to_user(uarg, kdata, out_size)) {
		kfdpool_fd_abort(&fdo);
		ret = -EFAULT;
		goto out;
	}
	fd = kfdpool_fd_commit(&fdo, fdo.file ?
			       (int __user *)((char __user *)uarg +
						 fdo.fd_off) : NULL);
	if (fd < 0)
		ret = fd;
out:
	if (kdata != stack)
		kfree(kdata);
	return ret;
}

/*
 * The other fields are arguments of @undo, set with it: clearing the whole
 * struct (its record included) twice per batch element was a tenth of a
 * validate-only import's cost.
 */
void kfdpool_fd_out_init(struct kfdpool_fd_out *fdo)
{
	fdo->file = NULL;
	fdo->fd_off = 0;
	fdo->undo = NULL;
}

/**
 * kfdpool_fd_commit() - hand out a command's file at a new fd
 * @fdo: the command's output; reset on return
 * @ufd: where the caller learns the fd number (its struct's fd field), or
 *	NULL when the number is the result itself (io_uring)
 *
 * Every fd goes through the kernel's receive path, receive_fd(), as files
 * passed by SCM_RIGHTS or pidfd_getfd() do, so that security modules see
 * (and may refuse, security_file_receive()) each file handed out.  Where
 * the kernel's receive_fd() takes @ufd, the number is written there before
 * the fd goes live; when the fd cannot be installed the command is undone.
 * Kernels that do not export receive_fd() get the fd as dma_buf_fd() gives
 * one, without that hook.
 *
 * Return: the new fd (O_CLOEXEC), 0 when @fdo holds no file, or -errno.
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
	/*
	 * The kernel keeps its receive path from modules: install the fd as
	 * dma_buf_fd() does, its number written first.
	 */
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd >= 0 && ufd && put_user(fd, ufd)) {
		put_unused_fd(fd);
		fd = -EFAULT;
	}
	if (fd >= 0)
		fd_install(fd, get_file(file));
#else
	fd = receive_fd(file, O_CLOEXEC);
	if (fd >= 0 && ufd && put_user(fd, ufd)) {
		/*
		 * This receive_fd() installs before we can write the number
		 * (only a caller racing against itself, unmapping its own
		 * argument, gets here).  The fd is live: closing it might
		 * close a file a racing thread opened at that number, so it
		 * stays, with what it holds, and the caller is told -EFAULT.
		 */
		fdo->undo = NULL;
		fd = -EFAULT;
	}
#endif
	/* The fd table took its own reference. */
	fput(file);
	if (fd < 0 && fdo->undo)
		fdo->undo(fdo);
	kfdpool_fd_out_init(fdo);
	return fd;
}

/* Drop a prepared file, if any, and undo what came with the command. */
void kfdpool_fd_abort(struct kfdpool_fd_out *fdo)
{
	if (fdo->file)
		fput(fdo->file);
	if (fdo->undo)
		fdo->undo(fdo);
	kfdpool_fd_out_init(fdo);
}

static long kfdpool_query(struct file *file, void *data,
			  struct kfdpool_fd_out *fdo)
{
	struct kfdpool_query *q = data;
	u64 records;

	/* Only pad is input; what the caller left in the outputs is ignored. */
	if (!kfdpool_mem_is_zero(q->pad, sizeof(q->pad)))
		return -EINVAL;
	memset(q, 0, sizeof(*q));

	q->abi_version = KFDPOOL_ABI_VERSION;
	q->features = KFDPOOL_FEATURE_BATCH | KFDPOOL_FEATURE_POOL_HANDLE |
		      KFDPOOL_FEATURE_HOST_ALLOC | KFDPOOL_FEATURE_POOL_HELD;
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
	[_IOC_NR(KFDPOOL_IOC_POOL_LIST)] =
		KFDPOOL_IOCTL(KFDPOOL_IOC_POOL_LIST,
			      sizeof(struct kfdpool_pool_list),
			      kfdpool_ioctl_pool_list),
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

/*
 * A fixed minor from the misc range reserved for local use (243-254 in
 * Documentation/admin-guide/devices.txt), so that the module can carry the
 * char-major-10-N and devname: aliases: depmod lists the node in
 * modules.devname, "kmod static-nodes" creates it at boot, and the first
 * open of /dev/kfdpool loads the module.
 */
#define KFDPOOL_MINOR	247

static struct miscdevice kfdpool_misc = {
	.minor = KFDPOOL_MINOR,
	.name = "kfdpool",
	.fops = &kfdpool_ctl_fops,
	/*
	 * Root only unless a udev rule says otherwise: the packaged one
	 * (packaging/60-kfdpool.rules) gives group render 0660, as /dev/kfd.
	 */
	.mode = 0600,
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
	ret = kfdpool_rec_cache_init();
	if (ret)
		goto err_cover;
	kfdpool_debugfs_init();
	ret = misc_register(&kfdpool_misc);
	if (ret == -EBUSY)
		pr_err("misc minor %d is taken by another driver\n", KFDPOOL_MINOR);
	if (ret)
		goto err_debugfs;
	return 0;

err_debugfs:
	kfdpool_debugfs_exit();
	kfdpool_rec_cache_exit();
err_cover:
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
	kfdpool_rec_cache_exit();
	kfdpool_cover_exit();
	kfdpool_pools_exit();
	kfdpool_limits_exit();
}

module_init(kfdpool_init);
module_exit(kfdpool_exit);

MODULE_DESCRIPTION("Shareable GPU and host memory pools over dma-buf");
MODULE_AUTHOR("The kfdpool authors");
MODULE_LICENSE("GPL");
MODULE_VERSION(KFDPOOL_VERSION);
MODULE_ALIAS_MISCDEV(KFDPOOL_MINOR);
MODULE_ALIAS("devname:kfdpool");
KFDPOOL_IMPORT_NS_DMA_BUF();
