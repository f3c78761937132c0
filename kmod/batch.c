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
#include <linux/slab.h>
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

/*
 * Elements run a chunk at a time: read and checked without the pool's lock
 * (copies from user space may fault and sleep), run under one hold of the
 * lock, then written back, each element's fd installed after its element.
 * A chunk bounds the lock hold and the kernel copy (kmalloc'd per call,
 * within a page).
 */
#define KFDPOOL_BATCH_CHUNK	16

/**
 * struct kfdpool_batch_slot - one element of a chunk
 * @el: the kernel copy
 * @fdo: the fd it hands out, or what undoes it
 * @status: 0 while the element is to run; else its refusal
 */
struct kfdpool_batch_slot {
	union kfdpool_batch_elem el;
	struct kfdpool_fd_out fdo;
	int status;
};

/* Set the status of @el, an element of batch @nr; -1 in a refused fd. */
static void kfdpool_batch_status(unsigned int nr, union kfdpool_batch_elem *el,
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
		if (status)
			el->imp.fd = -1;
		break;
	default:
		el->rel.status = status;
		break;
	}
}

static int kfdpool_batch_prep(struct kfdpool_file *pf, unsigned int nr,
			      struct kfdpool_batch_slot *sl)
{
	switch (nr) {
	case _IOC_NR(KFDPOOL_IOC_EXPORT_BATCH):
		return kfdpool_export_prep(pf, &sl->el.exp);
	case _IOC_NR(KFDPOOL_IOC_REVOKE_BATCH):
		return kfdpool_revoke_prep(pf, &sl->el.rev);
	case _IOC_NR(KFDPOOL_IOC_IMPORT_BATCH):
		return kfdpool_import_prep(pf, &sl->el.imp);
	default:
		return kfdpool_release_prep(&sl->el.rel);
	}
}

/* pool->lock held; @held as for kfdpool_import_locked(). */
static int kfdpool_batch_run(struct kfdpool_file *pf, unsigned int nr,
			     struct kfdpool_batch_slot *sl, u32 *held)
{
	int status;

	switch (nr) {
	case _IOC_NR(KFDPOOL_IOC_EXPORT_BATCH):
		status = kfdpool_export_locked(pf, &sl->el.exp);
		if (!status)
			kfdpool_export_arm_undo(&sl->fdo, pf,
						&sl->el.exp.record);
		return status;
	case _IOC_NR(KFDPOOL_IOC_REVOKE_BATCH):
		return kfdpool_revoke_locked(pf, &sl->el.rev);
	case _IOC_NR(KFDPOOL_IOC_IMPORT_BATCH):
		return kfdpool_import_locked(pf, &sl->el.imp, &sl->fdo, held);
	default:
		return kfdpool_release_locked(pf, &sl->el.rel);
	}
}

/*
 * Copy the element at @uel (@usize bytes, the caller's) into @el.  An
 * element of our size, the usual case, is copied straight into the slot
 * with a constant size per command: hardened usercopy checks a copy into a
 * heap object against its slab only when the size is not constant, at a
 * cost that was a fifth of an element's.  A larger one goes through the
 * stack.  Return: 0, -E2BIG (read, not to run: its tail is not zero) or
 * -errno (not read).
 */
static int kfdpool_batch_copy_in(unsigned int nr, union kfdpool_batch_elem *el,
				 const char __user *uel, size_t ksize,
				 size_t usize)
{
	union kfdpool_batch_elem tmp;
	unsigned long left;
	int err;

	if (usize == ksize) {
		switch (nr) {
		case _IOC_NR(KFDPOOL_IOC_EXPORT_BATCH):
			left = copy_from_user(&el->exp, uel, sizeof(el->exp));
			break;
		case _IOC_NR(KFDPOOL_IOC_REVOKE_BATCH):
			left = copy_from_user(&el->rev, uel, sizeof(el->rev));
			break;
		case _IOC_NR(KFDPOOL_IOC_IMPORT_BATCH):
			left = copy_from_user(&el->imp, uel, sizeof(el->imp));
			break;
		default:
			left = copy_from_user(&el->rel, uel, sizeof(el->rel));
			break;
		}
		return left ? -EFAULT : 0;
	}
	err = copy_struct_from_user(&tmp, ksize, uel, usize);
	/* One that asks for what we do not know is not run; its tail kept. */
	if (err == -E2BIG && copy_from_user(&tmp, uel, ksize))
		return -EFAULT;
	if (err && err != -E2BIG)
		return err;
	*el = tmp;
	return err;
}

/*
 * Copy the outputs of @el back to @uel (what the caller wrote of its
 * inputs stays as it was): the record and status of an export, the status
 * of a revoke or release, the fd and what follows it of an import.  Only
 * outputs, a third of the bytes or less but for exports, and with
 * constant sizes (see kfdpool_batch_copy_in()).
 */
static int kfdpool_batch_copy_out(unsigned int nr, char __user *uel,
				  const union kfdpool_batch_elem *el)
{
	unsigned long left;

	switch (nr) {
	case _IOC_NR(KFDPOOL_IOC_EXPORT_BATCH):
		left = copy_to_user(uel + offsetof(struct kfdpool_export, record),
				    &el->exp.record,
				    offsetofend(struct kfdpool_export, status) -
				    offsetof(struct kfdpool_export, record));
		break;
	case _IOC_NR(KFDPOOL_IOC_REVOKE_BATCH):
		left = put_user(el->rev.status, (int __user *)(uel +
				offsetof(struct kfdpool_revoke, status)));
		break;
	case _IOC_NR(KFDPOOL_IOC_IMPORT_BATCH):
		left = copy_to_user(uel + offsetof(struct kfdpool_import, fd),
				    &el->imp.fd,
				    offsetofend(struct kfdpool_import, status) -
				    offsetof(struct kfdpool_import, fd));
		break;
	default:
		left = put_user(el->rel.status, (int __user *)(uel +
				offsetof(struct kfdpool_release, status)));
		break;
	}
	return left ? -EFAULT : 0;
}

/*
 * Read the element at @uel into @sl (@ksize bytes here, @usize the
 * caller's) and prepare it.  Return: 0, or -errno when it could not be
 * read (the batch ends before it).
 */
static int kfdpool_batch_read(struct kfdpool_file *pf, unsigned int nr,
			      struct kfdpool_batch_slot *sl,
			      char __user *uel, size_t ksize, size_t usize)
{
	int err;

	kfdpool_fd_out_init(&sl->fdo);
	err = kfdpool_batch_copy_in(nr, &sl->el, uel, ksize, usize);
	if (err && err != -E2BIG)
		return err;
	sl->status = err ?: kfdpool_batch_prep(pf, nr, sl);
	kfdpool_batch_status(nr, &sl->el, sl->status);
	/*
	 * A revoke or release cannot be taken back if its element cannot be
	 * written: find out now that it can (its status is an output).
	 */
	switch (nr) {
	case _IOC_NR(KFDPOOL_IOC_REVOKE_BATCH):
		uel += offsetof(struct kfdpool_revoke, status);
		break;
	case _IOC_NR(KFDPOOL_IOC_RELEASE_BATCH):
		uel += offsetof(struct kfdpool_release, status);
		break;
	default:
		return 0;
	}
	return put_user(0, (int __user *)uel) ? -EFAULT : 0;
}

/*
 * Write the element of @sl back to @uel, then hand out its fd; *@undone is
 * set when its fd could not be installed and the import was undone.
 * Return: 0, or -errno when it could not be written (what it made is
 * undone and the batch ends before it).
 */
static int kfdpool_batch_write(unsigned int nr, struct kfdpool_batch_slot *sl,
			       char __user *uel, bool *undone)
{
	int err;

	if (kfdpool_batch_copy_out(nr, uel, &sl->el)) {
		kfdpool_fd_abort(&sl->fdo);
		return -EFAULT;
	}
	if (!sl->fdo.file) {
		kfdpool_fd_commit(&sl->fdo, NULL);
		return 0;
	}
	err = kfdpool_fd_commit(&sl->fdo, (int __user *)(uel +
				offsetof(struct kfdpool_import, fd)));
	if (err >= 0)
		return 0;
	/* No fd, the import undone: say so in the element. */
	*undone = true;
	kfdpool_batch_status(nr, &sl->el, err);
	return kfdpool_batch_copy_out(nr, uel, &sl->el);
}

/*
 * An import earlier in the chunk was undone at write-back (no fd could be
 * installed) after the validations behind it ran under the lock, perhaps
 * against it.  Answer validation @j of the chunk's @n again: with the
 * imports @pf holds now, less those the elements after it made (they ran
 * after it, and are still to be committed or undone), so that it answers
 * as if the elements before it had run to their end.  A rare path: only
 * where an fd could not be installed.
 */
static void kfdpool_batch_revalidate(struct kfdpool_file *pf, unsigned int nr,
				     struct kfdpool_batch_slot *slots, u32 j,
				     u32 n)
{
	struct kfdpool_import *imp = &slots[j].el.imp;
	unsigned long held = 0;
	void *v;
	u32 k;

	if (nr != _IOC_NR(KFDPOOL_IOC_IMPORT_BATCH) || slots[j].status ||
	    !(imp->flags & KFDPOOL_IMPORT_VALIDATE))
		return;
	mutex_lock(&pf->pool->lock);
	v = xa_load(&pf->imports, imp->entry_id);
	mutex_unlock(&pf->pool->lock);
	if (v)
		held = xa_to_value(v);
	for (k = j + 1; k < n && held; k++)
		if (slots[k].fdo.file && slots[k].fdo.entry_id == imp->entry_id)
			held--;
	if (!held) {
		slots[j].status = -ENXIO;
		kfdpool_batch_status(nr, &slots[j].el, slots[j].status);
	}
}

/*
 * Run @n elements from @uel.  Return: how many were written back; *@err
 * is -errno when that is fewer than @n.
 */
static u32 kfdpool_batch_chunk(struct kfdpool_file *pf, unsigned int nr,
			       struct kfdpool_batch_slot *slots, u32 n,
			       char __user *uel, size_t ksize, size_t usize,
			       int *err)
{
	struct kfdpool_pool *pool = pf->pool;
	u32 i, done, held = 0;
	bool undone = false;
	int read_err = 0;

	for (i = 0; i < n; i++) {
		read_err = kfdpool_batch_read(pf, nr, &slots[i],
					      uel + i * usize, ksize, usize);
		if (read_err)
			break;
	}
	n = i;

	mutex_lock(&pool->lock);
	/* A chunk's records recompute their shared paths once: cover.c. */
	pool->cover_txn.deferred = true;
	for (i = 0; i < n; i++) {
		if (slots[i].status)
			continue;
		slots[i].status = kfdpool_batch_run(pf, nr, &slots[i], &held);
		kfdpool_batch_status(nr, &slots[i].el, slots[i].status);
	}
	kfdpool_pool_settle(pool);
	pool->cover_txn.deferred = false;
	mutex_unlock(&pool->lock);

	for (done = 0; done < n; done++) {
		if (undone)
			kfdpool_batch_revalidate(pf, nr, slots, done, n);
		*err = kfdpool_batch_write(nr, &slots[done],
					   uel + done * usize, &undone);
		if (*err)
			break;
	}
	/* All written: the batch ends at the element that was not read. */
	if (!*err)
		*err = read_err;
	/*
	 * The caller's array faulted on the way back: take back what the
	 * elements it will not hear of made.  Exports and imports are undone;
	 * revokes and releases were found writable before they ran, so only
	 * a caller unmapping its own array meanwhile loses track of one.
	 */
	for (i = done + 1; i < n; i++)
		kfdpool_fd_abort(&slots[i].fdo);
	return done;
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
	struct kfdpool_batch_slot *slots;
	bool owner_only = false;
	char __user *uel;
	u32 i = 0, n, done;
	size_t ksize;
	int err = 0;

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

	BUILD_BUG_ON(KFDPOOL_BATCH_CHUNK * sizeof(*slots) > PAGE_SIZE);
	slots = kmalloc_array(min_t(u32, b->count, KFDPOOL_BATCH_CHUNK),
			      sizeof(*slots), GFP_KERNEL);
	if (!slots)
		return -ENOMEM;
	uel = u64_to_user_ptr(b->ops);
	while (i < b->count) {
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			break;
		}
		n = min_t(u32, b->count - i, KFDPOOL_BATCH_CHUNK);
		done = kfdpool_batch_chunk(pf, nr, slots, n,
					   uel + (size_t)i * b->elem_size,
					   ksize, b->elem_size, &err);
		i += done;
		if (err)
			break;
		cond_resched();
	}
	kfree(slots);
	return i ? i : err;
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
