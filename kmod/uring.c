// SPDX-License-Identifier: GPL-2.0-only
/*
 * io_uring passthrough (IORING_OP_URING_CMD) on pool files, for rings set
 * up with IORING_SETUP_SQE128 so that a record travels in the SQE.
 *
 * A command's payload is read from its SQE when the module is called for it:
 * the SQE may be a ring slot that user space refills as soon as
 * io_uring_enter() returned.  Under IO_URING_F_NONBLOCK a command runs inline
 * only if it needs no wait (a busy pool lock, a fault, an fd table that may
 * grow, a batch's arrays): else -EAGAIN has io_uring issue it again from
 * io-wq, as ublk's control path does.  Payloads are size-versioned like
 * ioctl structs.
 */
#include <linux/uaccess.h>

#include "kfdpool.h"

#ifdef KFDPOOL_HAVE_URING

/* Bytes of command payload in a 128-byte SQE. */
#define KFDPOOL_URING_PAYLOAD	80

/**
 * union kfdpool_uring_payload - a command's kernel copy of its payload
 * @raw: the payload as the SQE held it when the command was first called
 * @exp: of KFDPOOL_URING_EXPORT
 * @rec: of KFDPOOL_URING_IMPORT and KFDPOOL_URING_REVOKE
 * @rel: of KFDPOOL_URING_RELEASE
 * @batch: of the vectored KFDPOOL_IOC_*_BATCH
 */
union kfdpool_uring_payload {
	u8 raw[KFDPOOL_URING_PAYLOAD];
	struct kfdpool_uring_export exp;
	struct kfdpool_uring_record rec;
	struct kfdpool_release rel;
	struct kfdpool_batch batch;
};

/*
 * The record reaches its place while the pool is locked, without a fault;
 * else, where nothing may wait, it is taken back: -EAGAIN.
 */
static int kfdpool_uring_export(struct kfdpool_file *pf,
				const struct kfdpool_uring_export *ue,
				bool nowait)
{
	union kfdpool_elem el = {
		.exp = { .entry_id = ue->entry_id, .flags = ue->flags,
			 .offset = ue->offset, .size = ue->size },
	};
	void __user *dst = u64_to_user_ptr(ue->record_ptr);
	struct kfdpool_record *rec = &el.exp.record;
	union kfdpool_elem rv = {};
	bool written = false;
	int ret;

	ret = kfdpool_export_prep(pf, &el.exp) ?:
	      (nowait ? kfdpool_trylock(pf) : kfdpool_lock(pf));
	if (ret)
		return ret;
	ret = kfdpool_export_locked(pf, &el.exp, nowait ?
				    GFP_NOWAIT | __GFP_ACCOUNT :
				    GFP_KERNEL_ACCOUNT);
	if (!ret) {
		written = !copy_to_user_nofault(dst, rec, sizeof(*rec));
		if (!written && nowait) {
			rv.rev.record = *rec;
			kfdpool_revoke_locked(pf, &rv.rev);
			ret = -EAGAIN;
		}
	}
	mutex_unlock(&pf->pool->lock);
	if (ret)
		return nowait && ret == -ENOMEM ? -EAGAIN : ret;
	if (written || !copy_to_user(dst, rec, sizeof(*rec)))
		return 0;
	/* Nobody learnt of the record: revoke it. */
	rv.rev.record = *rec;
	kfdpool_one(pf, _IOC_NR(KFDPOOL_IOC_REVOKE_BATCH), &rv, NULL, false);
	return -EFAULT;
}

/* IMPORT and REVOKE: a record in the SQE.  An import's fd is the res. */
static int kfdpool_uring_record(struct kfdpool_file *pf, unsigned int nr,
				const struct kfdpool_uring_record *ur,
				bool nowait)
{
	struct kfdpool_fd_out fdo;
	union kfdpool_elem el;
	int ret;

	if (ur->pad)
		return -EINVAL;
	if (nr == _IOC_NR(KFDPOOL_URING_IMPORT)) {
		/* A new fd may need the fd table to grow. */
		if (nowait && !(ur->flags & KFDPOOL_IMPORT_VALIDATE))
			return -EAGAIN;
		el.imp.record = ur->record;
		el.imp.flags = ur->flags;
		nr = _IOC_NR(KFDPOOL_IOC_IMPORT_BATCH);
	} else {
		el.rev.record = ur->record;
		el.rev.flags = ur->flags;
		nr = _IOC_NR(KFDPOOL_IOC_REVOKE_BATCH);
	}
	kfdpool_fd_out_init(&fdo);
	ret = kfdpool_one(pf, nr, &el, &fdo, nowait);
	return ret || !fdo.file ? ret : kfdpool_fd_commit(&fdo, NULL);
}

/*
 * Check @p, @usize bytes by the caller's count, against our @ksize; an older
 * caller's smaller payload reads as zero-filled.
 */
static int kfdpool_uring_sizes(const union kfdpool_uring_payload *p,
			       unsigned int usize, unsigned int ksize)
{
	if (usize > KFDPOOL_URING_PAYLOAD)
		return -EINVAL;
	/* Past the caller's struct: no field of any version. */
	if (memchr_inv(p->raw + usize, 0, KFDPOOL_URING_PAYLOAD - usize))
		return -EINVAL;
	/* A newer caller's fields we do not know: refuse, as the ioctls do. */
	if (usize > ksize && memchr_inv(p->raw + ksize, 0, usize - ksize))
		return -E2BIG;
	return 0;
}

static int kfdpool_uring_run(struct kfdpool_file *pf, u32 op,
			     const union kfdpool_uring_payload *p, bool nowait)
{
	unsigned int usize = _IOC_SIZE(op);
	unsigned int nr = _IOC_NR(op);
	union kfdpool_elem el;

	if (_IOC_TYPE(op) != KFDPOOL_IOC_MAGIC || _IOC_DIR(op) != _IOC_WRITE)
		return -ENOTTY;
	switch (nr) {
	case _IOC_NR(KFDPOOL_URING_EXPORT):
		return kfdpool_uring_sizes(p, usize, sizeof(p->exp)) ?:
		       kfdpool_uring_export(pf, &p->exp, nowait);
	case _IOC_NR(KFDPOOL_URING_REVOKE):
	case _IOC_NR(KFDPOOL_URING_IMPORT):
		return kfdpool_uring_sizes(p, usize, sizeof(p->rec)) ?:
		       kfdpool_uring_record(pf, nr, &p->rec, nowait);
	case _IOC_NR(KFDPOOL_URING_RELEASE):
		el.rel = p->rel;
		return kfdpool_uring_sizes(p, usize, sizeof(p->rel)) ?:
		       kfdpool_one(pf, _IOC_NR(KFDPOOL_IOC_RELEASE_BATCH), &el,
				   NULL, nowait);
	case _IOC_NR(KFDPOOL_IOC_EXPORT_BATCH):
	case _IOC_NR(KFDPOOL_IOC_REVOKE_BATCH):
	case _IOC_NR(KFDPOOL_IOC_IMPORT_BATCH):
	case _IOC_NR(KFDPOOL_IOC_RELEASE_BATCH):
		/* Its arrays are read and written as the ioctl's are. */
		return kfdpool_uring_sizes(p, usize, sizeof(p->batch)) ?:
		       nowait ? -EAGAIN : kfdpool_batch(pf, nr, &p->batch);
	}
	return -ENOTTY;
}

/**
 * kfdpool_uring_cmd() - file_operations.uring_cmd of pool files
 * @cmd: the command; its payload is read from its SQE here
 * @issue_flags: IO_URING_F_*
 *
 * Return: the CQE's res, or -EAGAIN to be issued again where it may wait.
 */
int kfdpool_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	struct kfdpool_file *pf = cmd->file->private_data;
	bool nowait = issue_flags & IO_URING_F_NONBLOCK;
	union kfdpool_uring_payload p;
	int ret;

	BUILD_BUG_ON(sizeof(p) != KFDPOOL_URING_PAYLOAD);
	/* Only a 128-byte SQE has room for a record. */
	if (!(issue_flags & IO_URING_F_SQE128))
		return -EINVAL;
	memcpy(&p, kfdpool_uring_cmd_payload(cmd, union kfdpool_uring_payload),
	       sizeof(p));
	ret = kfdpool_uring_run(pf, cmd->cmd_op, &p, nowait);
	if (ret == -EAGAIN && nowait)
		return kfdpool_uring_cmd_again(cmd);
	return kfdpool_uring_cmd_result(cmd, ret, issue_flags);
}
#endif /* KFDPOOL_HAVE_URING */
