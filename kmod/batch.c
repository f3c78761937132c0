// SPDX-License-Identifier: GPL-2.0-only
/*
 * Batch commands: EXPORT, REVOKE, IMPORT and RELEASE over a user array of
 * size-versioned elements, each with its own status.  Reached through the
 * *_BATCH ioctls and io_uring's vectored form.  Elements follow the ioctl
 * rule: one larger than ours is read with copy_struct_from_user() and, when
 * its bytes past ours are not zero, not run (its status is -E2BIG).
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

/* Set the status of @el, a refused element of batch @nr; -1 in an fd. */
static void kfdpool_batch_refuse(unsigned int nr, union kfdpool_batch_elem *el,
				 int status)
{
	switch (nr) {
	case _IOC_NR(KFDPOOL_IOC_EXPORT_BATCH):
		el->exp.status = status;
		break;
	case _IOC_NR(KFDPOOL_IOC_REVOKE_BATCH):
		el->rev.status = status;
		break;
	case _IOC_NR(KFDPOOL_IOC_IMPORT_BATCH):
		el->imp.status = status;
		el->imp.fd = -1;
		break;
	default:
		el->rel.status = status;
		break;
	}
}

/*
 * Run the element at @uel of batch @nr (@ksize bytes here, @usize the
 * caller's) and write its outcome back.  Return: 0, or -errno when the
 * element could not be read or written (the batch stops there).
 */
static int kfdpool_batch_elem(struct kfdpool_file *pf, unsigned int nr,
			      char __user *uel, size_t ksize, size_t usize)
{
	union kfdpool_batch_elem el;
	struct kfdpool_fd_out fdo;
	int err;

	err = copy_struct_from_user(&el, ksize, uel, usize);
	if (err == -E2BIG) {
		/* It asks for what we do not know: not run; its tail kept. */
		if (copy_from_user(&el, uel, ksize))
			return -EFAULT;
		kfdpool_batch_refuse(nr, &el, err);
		return copy_to_user(uel, &el, ksize) ? -EFAULT : 0;
	}
	if (err)
		return err;

	kfdpool_fd_out_init(&fdo);
	kfdpool_batch_one(pf, nr, &el, &fdo);
	/* An element's fd goes live after the element is written. */
	if (copy_to_user(uel, &el, ksize)) {
		kfdpool_fd_abort(&fdo);
		return -EFAULT;
	}
	if (!fdo.file) {
		kfdpool_fd_commit(&fdo, NULL);
		return 0;
	}
	err = kfdpool_fd_commit(&fdo, (int __user *)(uel +
				offsetof(struct kfdpool_import, fd)));
	if (err >= 0)
		return 0;
	/* No fd, the import undone: say so in the element. */
	kfdpool_batch_refuse(nr, &el, err);
	return copy_to_user(uel, &el, ksize) ? -EFAULT : 0;
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
	bool owner_only = false;
	char __user *uel;
	size_t ksize;
	long ret = 0;
	u32 i;

	switch (nr) {
	case _IOC_NR(KFDPOOL_IOC_EXPORT_BATCH):
		ksize = sizeof(struct kfdpool_export);
		owner_only = true;
		break;
	case _IOC_NR(KFDPOOL_IOC_REVOKE_BATCH):
		ksize = sizeof(struct kfdpool_revoke);
		owner_only = true;
		break;
	case _IOC_NR(KFDPOOL_IOC_IMPORT_BATCH):
		ksize = sizeof(struct kfdpool_import);
		break;
	case _IOC_NR(KFDPOOL_IOC_RELEASE_BATCH):
		ksize = sizeof(struct kfdpool_release);
		break;
	default:
		return -ENOTTY;
	}
	if (owner_only && pf->mode != KFDPOOL_MODE_OWNER)
		return -EPERM;
	if (b->flags || b->pad || !b->count || b->count > KFDPOOL_BATCH_MAX ||
	    b->elem_size < ksize)
		return -EINVAL;

	uel = u64_to_user_ptr(b->ops);
	for (i = 0; i < b->count; i++, uel += b->elem_size) {
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		ret = kfdpool_batch_elem(pf, nr, uel, ksize, b->elem_size);
		if (ret)
			break;
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
