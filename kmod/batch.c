// SPDX-License-Identifier: GPL-2.0-only
/*
 * Batch commands: EXPORT, REVOKE, IMPORT and RELEASE over a user array of
 * size-versioned elements, each with its own status.  Reached through the
 * *_BATCH ioctls and io_uring's vectored form.
 */
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>

#include "kfdpool.h"

/**
 * union kfdpool_batch_elem - a kernel copy of one element
 * @exp: of EXPORT_BATCH
 * @rev: of REVOKE_BATCH
 * @imp: of IMPORT_BATCH
 * @rel: of RELEASE_BATCH
 */
union kfdpool_batch_elem {
	struct kfdpool_export exp;
	struct kfdpool_revoke rev;
	struct kfdpool_import imp;
	struct kfdpool_release rel;
};

static int kfdpool_batch_one(struct kfdpool_file *pf, unsigned int nr,
			     union kfdpool_batch_elem *el,
			     struct kfdpool_fd_out *fdo)
{
	int status;

	switch (nr) {
	case _IOC_NR(KFDPOOL_IOC_EXPORT_BATCH):
		status = kfdpool_do_export(pf, &el->exp);
		el->exp.status = status;
		if (!status)
			kfdpool_export_arm_undo(fdo, pf, &el->exp.record);
		break;
	case _IOC_NR(KFDPOOL_IOC_REVOKE_BATCH):
		status = kfdpool_do_revoke(pf, &el->rev);
		el->rev.status = status;
		break;
	case _IOC_NR(KFDPOOL_IOC_IMPORT_BATCH):
		status = kfdpool_do_import(pf, &el->imp, fdo);
		el->imp.status = status;
		break;
	default:
		status = kfdpool_do_release(pf, &el->rel);
		el->rel.status = status;
		break;
	}
	return status;
}

/**
 * kfdpool_batch() - run a batch command
 * @pf: the pool file
 * @nr: _IOC_NR() of the KFDPOOL_IOC_*_BATCH command
 * @b: the batch descriptor (a kernel copy)
 *
 * Return: elements processed, or -errno when none was (see struct
 * kfdpool_batch in the uapi header).
 */
long kfdpool_batch(struct kfdpool_file *pf, unsigned int nr,
		   const struct kfdpool_batch *b)
{
	union kfdpool_batch_elem el;
	struct kfdpool_fd_out fdo;
	bool owner_only = false;
	char __user *uel;
	size_t ksize, len;
	long ret = 0;
	u32 i;

	switch (nr) {
	case _IOC_NR(KFDPOOL_IOC_EXPORT_BATCH):
		ksize = sizeof(el.exp);
		owner_only = true;
		break;
	case _IOC_NR(KFDPOOL_IOC_REVOKE_BATCH):
		ksize = sizeof(el.rev);
		owner_only = true;
		break;
	case _IOC_NR(KFDPOOL_IOC_IMPORT_BATCH):
		ksize = sizeof(el.imp);
		break;
	case _IOC_NR(KFDPOOL_IOC_RELEASE_BATCH):
		ksize = sizeof(el.rel);
		break;
	default:
		return -ENOTTY;
	}
	if (owner_only && pf->mode != KFDPOOL_MODE_OWNER)
		return -EPERM;
	if (b->flags || b->pad || !b->count || b->count > KFDPOOL_BATCH_MAX ||
	    b->elem_size < ksize)
		return -EINVAL;

	len = ksize;	/* min(elem_size, ksize): larger elements keep tails */
	uel = u64_to_user_ptr(b->ops);
	for (i = 0; i < b->count; i++, uel += b->elem_size) {
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		if (copy_from_user(&el, uel, len)) {
			ret = -EFAULT;
			break;
		}
		kfdpool_fd_out_init(&fdo);
		kfdpool_batch_one(pf, nr, &el, &fdo);
		/* An element's fd goes live after the element is written. */
		if (copy_to_user(uel, &el, len)) {
			kfdpool_fd_abort(&fdo);
			ret = -EFAULT;
			break;
		}
		kfdpool_fd_commit(&fdo);
		cond_resched();
	}
	return i ? i : ret;
}

long kfdpool_ioctl_export_batch(struct file *file, void *data,
				struct kfdpool_fd_out *fdo)
{
	return kfdpool_batch(file->private_data,
			     _IOC_NR(KFDPOOL_IOC_EXPORT_BATCH), data);
}

long kfdpool_ioctl_revoke_batch(struct file *file, void *data,
				struct kfdpool_fd_out *fdo)
{
	return kfdpool_batch(file->private_data,
			     _IOC_NR(KFDPOOL_IOC_REVOKE_BATCH), data);
}

long kfdpool_ioctl_import_batch(struct file *file, void *data,
				struct kfdpool_fd_out *fdo)
{
	return kfdpool_batch(file->private_data,
			     _IOC_NR(KFDPOOL_IOC_IMPORT_BATCH), data);
}

long kfdpool_ioctl_release_batch(struct file *file, void *data,
				 struct kfdpool_fd_out *fdo)
{
	return kfdpool_batch(file->private_data,
			     _IOC_NR(KFDPOOL_IOC_RELEASE_BATCH), data);
}
