// SPDX-License-Identifier: GPL-2.0-only
/*
 * EXPORT, REVOKE, IMPORT and RELEASE: one element (ioctl, io_uring) or a user
 * array of them (*_BATCH, io_uring's vectored form), each with its status.
 */
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "kfdpool.h"

/* A batch command's element: its size, its status's offset, owner fds only. */
struct kfdpool_batch_kind {
	u16 size;
	u16 status;
	bool owner;
};

#define KFDPOOL_KIND(type, owner) \
	{ sizeof(struct type), offsetof(struct type, status), owner }

/* By _IOC_NR() from KFDPOOL_IOC_EXPORT_BATCH's on. */
static const struct kfdpool_batch_kind kfdpool_batch_kinds[] = {
	KFDPOOL_KIND(kfdpool_export, true),
	KFDPOOL_KIND(kfdpool_revoke, true),
	KFDPOOL_KIND(kfdpool_import, false),
	KFDPOOL_KIND(kfdpool_release, false),
};

/* A chunk is read unlocked (copies may fault), then run under one lock hold. */
#define KFDPOOL_BATCH_CHUNK	16

/* An element of a chunk: @status is 0 while it is to run, else its refusal. */
struct kfdpool_batch_slot {
	union kfdpool_elem el;
	struct kfdpool_fd_out fdo;
	int status;
};

static const struct kfdpool_batch_kind *kfdpool_batch_kind(unsigned int nr)
{
	return &kfdpool_batch_kinds[nr - _IOC_NR(KFDPOOL_IOC_EXPORT_BATCH)];
}

/* Set the status of @el, an element of batch @nr; -1 in a refused fd. */
static void kfdpool_batch_status(unsigned int nr, union kfdpool_elem *el,
				 int status)
{
	*(s32 *)((u8 *)el + kfdpool_batch_kind(nr)->status) = status;
	if (status && nr == _IOC_NR(KFDPOOL_IOC_IMPORT_BATCH))
		el->imp.fd = -1;
}

/* Per element of every batch: kept inline, as it measured cheaper. */
static __always_inline int kfdpool_elem_prep(struct kfdpool_file *pf,
					     unsigned int nr,
					     union kfdpool_elem *el)
{
	switch (nr) {
	case _IOC_NR(KFDPOOL_IOC_EXPORT_BATCH):
		return kfdpool_export_prep(pf, &el->exp);
	case _IOC_NR(KFDPOOL_IOC_REVOKE_BATCH):
		return kfdpool_revoke_prep(pf, &el->rev);
	case _IOC_NR(KFDPOOL_IOC_IMPORT_BATCH):
		return kfdpool_import_prep(pf, &el->imp);
	default:
		return el->rel.flags || el->rel.pad ? -EINVAL : 0;
	}
}

/* Nobody learnt of the record: revoke it. */
static void kfdpool_export_undo(struct kfdpool_fd_out *fdo)
{
	union kfdpool_elem el = { .rev.record = fdo->record };

	kfdpool_one(fdo->pfile, _IOC_NR(KFDPOOL_IOC_REVOKE_BATCH), &el, NULL,
		    false);
}

/*
 * The rest, pool->lock held; @held as for kfdpool_import_locked().  @gfp:
 * what an export may wait for.
 */
static int kfdpool_elem_run(struct kfdpool_file *pf, unsigned int nr,
			    union kfdpool_elem *el, struct kfdpool_fd_out *fdo,
			    u32 *held, gfp_t gfp)
{
	int status;

	switch (nr) {
	case _IOC_NR(KFDPOOL_IOC_EXPORT_BATCH):
		status = kfdpool_export_locked(pf, &el->exp, gfp);
		if (!status && fdo) {
			fdo->undo = kfdpool_export_undo;
			fdo->pfile = pf;
			fdo->record = el->exp.record;
		}
		return status;
	case _IOC_NR(KFDPOOL_IOC_REVOKE_BATCH):
		return kfdpool_revoke_locked(pf, &el->rev);
	case _IOC_NR(KFDPOOL_IOC_IMPORT_BATCH):
		return kfdpool_import_locked(pf, &el->imp, fdo, held);
	default:
		return kfdpool_import_put(pf, el->rel.entry_id);
	}
}

/**
 * kfdpool_one() - run one element from the kernel
 * @pf: the pool file
 * @nr: _IOC_NR() of the batch command of its kind
 * @el: the element; its outputs are filled on success
 * @fdo: what it hands out (an import's fd, an export's undo), or NULL
 * @nowait: never sleep: -EAGAIN where it would, nothing done
 *
 * Return: 0 or -errno.
 */
int kfdpool_one(struct kfdpool_file *pf, unsigned int nr,
		union kfdpool_elem *el, struct kfdpool_fd_out *fdo, bool nowait)
{
	int ret = kfdpool_elem_prep(pf, nr, el) ?:
		  (nowait ? kfdpool_trylock(pf) : kfdpool_lock(pf));

	if (ret)
		return ret;
	ret = kfdpool_elem_run(pf, nr, el, fdo, NULL, nowait ?
			       GFP_NOWAIT | __GFP_ACCOUNT : GFP_KERNEL_ACCOUNT);
	mutex_unlock(&pf->pool->lock);
	/* Only an allocation could not be had without waiting. */
	if (nowait && ret == -ENOMEM)
		ret = -EAGAIN;
	if (!ret)
		kfdpool_batch_status(nr, el, 0);
	return ret;
}

/* EXPORT, REVOKE, IMPORT and RELEASE: their batch's element, one. */
long kfdpool_ioctl_one(struct file *file, unsigned int nr, void *data,
		       struct kfdpool_fd_out *fdo)
{
	nr += _IOC_NR(KFDPOOL_IOC_EXPORT_BATCH) - _IOC_NR(KFDPOOL_IOC_EXPORT);
	fdo->fd_off = offsetof(struct kfdpool_import, fd);
	return kfdpool_one(file->private_data, nr, data, fdo, false);
}

/*
 * 0, -E2BIG (read, not to run) or -errno.  Constant sizes where possible:
 * hardened usercopy checks variable-sized copies against the slab.
 */
static int kfdpool_batch_copy_in(unsigned int nr, union kfdpool_elem *el,
				 const char __user *uel, size_t ksize,
				 size_t usize)
{
	union kfdpool_elem tmp;
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

/* Copy only the outputs of @el back to @uel, with constant sizes. */
static int kfdpool_batch_copy_out(unsigned int nr, char __user *uel,
				  const union kfdpool_elem *el)
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

/* 0, or -errno if @uel could not be read: the batch ends before it. */
static int kfdpool_batch_read(struct kfdpool_file *pf, unsigned int nr,
			      struct kfdpool_batch_slot *sl,
			      char __user *uel, size_t ksize, size_t usize)
{
	int err;

	kfdpool_fd_out_init(&sl->fdo);
	err = kfdpool_batch_copy_in(nr, &sl->el, uel, ksize, usize);
	if (err && err != -E2BIG)
		return err;
	sl->status = err ?: kfdpool_elem_prep(pf, nr, &sl->el);
	kfdpool_batch_status(nr, &sl->el, sl->status);
	/*
	 * A revoke or release cannot be taken back: its status reads 0 before
	 * it runs, so that it says done even if it cannot be written after.
	 */
	if (nr != _IOC_NR(KFDPOOL_IOC_REVOKE_BATCH) &&
	    nr != _IOC_NR(KFDPOOL_IOC_RELEASE_BATCH))
		return 0;
	uel += kfdpool_batch_kind(nr)->status;
	return put_user(0, (int __user *)uel) ? -EFAULT : 0;
}

/*
 * Write @sl back, then install its fd (if none can be, the import is undone
 * and *@undone set).  -EFAULT: not written, what it made undone, batch ends.
 */
static int kfdpool_batch_write(unsigned int nr, struct kfdpool_batch_slot *sl,
			       char __user *uel, bool *undone)
{
	int err;

	if (kfdpool_batch_copy_out(nr, uel, &sl->el)) {
		kfdpool_fd_abort(&sl->fdo);
		/* A revoke or release that ran reads 0 already: it is done. */
		if (!sl->status && (nr == _IOC_NR(KFDPOOL_IOC_REVOKE_BATCH) ||
				    nr == _IOC_NR(KFDPOOL_IOC_RELEASE_BATCH)))
			return 0;
		return -EFAULT;
	}
	if (!sl->fdo.file) {
		kfdpool_fd_out_init(&sl->fdo);	/* done: nothing to undo */
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
 * An earlier import of the chunk got no fd after later validations counted it:
 * answer validation @j again from @pf's imports, less those made after it.
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
	    !(imp->flags & KFDPOOL_IMPORT_VALIDATE) || kfdpool_lock(pf))
		return;
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

/* Run @n elements: how many were written back; *@err is -errno if fewer. */
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

	if (kfdpool_lock(pf)) {
		*err = -ENODEV;
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (slots[i].status)
			continue;
		slots[i].status = kfdpool_elem_run(pf, nr, &slots[i].el,
						   &slots[i].fdo, &held,
						   GFP_KERNEL_ACCOUNT);
		kfdpool_batch_status(nr, &slots[i].el, slots[i].status);
	}
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
	/* The array faulted on the way back: undo what nobody will hear of. */
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
 * Return: elements processed, or -errno when none was.
 */
long kfdpool_batch(struct kfdpool_file *pf, unsigned int nr,
		   const struct kfdpool_batch *b)
{
	const struct kfdpool_batch_kind *k;
	struct kfdpool_batch_slot *slots;
	char __user *uel;
	u32 i = 0, n, done;
	size_t ksize;
	int err = 0;

	if (nr < _IOC_NR(KFDPOOL_IOC_EXPORT_BATCH) ||
	    nr > _IOC_NR(KFDPOOL_IOC_RELEASE_BATCH))
		return -ENOTTY;
	k = kfdpool_batch_kind(nr);
	ksize = k->size;
	if (k->owner && pf->mode != KFDPOOL_MODE_OWNER)
		return -EPERM;
	/* An older caller's smaller element is zero-filled; it has a status. */
	if (b->flags || b->pad || !b->count || b->count > KFDPOOL_BATCH_MAX ||
	    b->elem_size < k->status + sizeof(s32) ||
	    b->elem_size > KFDPOOL_ELEM_MAX)
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

long kfdpool_ioctl_batch(struct file *file, unsigned int nr, void *data,
			 struct kfdpool_fd_out *fdo)
{
	return kfdpool_batch(file->private_data, nr, data);
}
