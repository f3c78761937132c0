// SPDX-License-Identifier: GPL-2.0-only
/*
 * io_uring passthrough (IORING_OP_URING_CMD) on pool files.
 *
 * The payload's lifetime.  A command's payload lives in its SQE, and the SQE
 * may be a slot of the SQ ring that user space refills as soon as
 * io_uring_enter() returned.  Whether io_uring copied it first depends on
 * the kernel and the path: 6.1 copies it before any later issue (-EAGAIN
 * retry, link, IOSQE_ASYNC); 6.12 copies it at submission only for
 * IOSQE_ASYNC and drained requests, and on -EAGAIN copies it to its cache
 * but still hands the retry a pointer into the ring.  So each command here
 * takes one copy of its payload when it is first called and never reads
 * the SQE again, and it is never called twice: it does not return -EAGAIN.
 * From io_uring's nonblocking inline issue (IO_URING_F_NONBLOCK) it sleeps
 * on the pool lock and faults user pages like the ioctls do, which holds up
 * only the submitting task's own ring for as long as an ioctl would.  A
 * driver cannot keep the copy for a retry either: nothing tells a retry
 * from a first issue, since the command's pdu is not cleared between
 * requests.
 *
 * The vectored batches run inline too, in the submitter's context, for the
 * same reason.  Their whole point is many elements per system call; a
 * caller who wants them off its own thread sets IOSQE_ASYNC, and io_uring
 * copies the SQE before queueing the command to a worker on every kernel.
 *
 * What the module cannot change: 6.12 (Debian's 6.12.117) gives a linked
 * command, or the head of a link left open at the end of a submission, a
 * pointer into the ring, which its first call reads whenever the link gets
 * to it; by then the slot may hold another command.  Prepare linked kfdpool
 * commands' slots only after the link completed, or use IOSQE_ASYNC.
 *
 * Payloads are size-versioned like ioctl structs: the size in cmd_op is the
 * caller's struct size, up to the 80 bytes of a 128-byte SQE's command
 * area.  Bytes past the caller's struct must be zero (-EINVAL); a caller's
 * struct larger than ours may only add zero bytes (-E2BIG).
 *
 * Commands complete inline: the value returned here is the CQE's res, as in
 * ublk's control path.
 */
#include <linux/uaccess.h>

#include "kfdpool.h"

#ifdef KFDPOOL_HAVE_URING
#if defined(KFDPOOL_HAVE_URING_CMD_SQE128) || defined(KFDPOOL_HAVE_URING_CMD_H)
#include <linux/io_uring/cmd.h>
#else
#include <linux/io_uring.h>
#endif

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

static const void *kfdpool_uring_sqe_payload(struct io_uring_cmd *cmd)
{
#if defined(KFDPOOL_HAVE_URING_CMD_SQE128)
	return io_uring_sqe128_cmd(cmd->sqe, union kfdpool_uring_payload);
#elif defined(KFDPOOL_HAVE_URING_CMD_H)
	return io_uring_sqe_cmd(cmd->sqe);
#else
	return cmd->cmd;
#endif
}

static int kfdpool_uring_export(struct kfdpool_file *pf,
				const struct kfdpool_uring_export *ue)
{
	void __user *dst = u64_to_user_ptr(ue->record_ptr);
	struct kfdpool_export e = {};
	struct kfdpool_fd_out fdo;
	int ret;

	e.entry_id = ue->entry_id;
	e.flags = ue->flags;
	e.offset = ue->offset;
	e.size = ue->size;
	ret = kfdpool_do_export(pf, &e);
	if (ret)
		return ret;
	kfdpool_fd_out_init(&fdo);
	kfdpool_export_arm_undo(&fdo, pf, &e.record);
	if (copy_to_user(dst, &e.record, sizeof(e.record))) {
		kfdpool_fd_abort(&fdo);
		return -EFAULT;
	}
	return kfdpool_fd_commit(&fdo, NULL);
}

static int kfdpool_uring_import(struct kfdpool_file *pf,
				const struct kfdpool_uring_record *ur)
{
	struct kfdpool_import imp = {};
	struct kfdpool_fd_out fdo;
	int ret;

	if (ur->pad)
		return -EINVAL;
	imp.record = ur->record;
	imp.flags = ur->flags;
	kfdpool_fd_out_init(&fdo);
	ret = kfdpool_do_import(pf, &imp, &fdo);
	if (ret)
		return ret;
	/* Nothing is copied back: the fd number is the CQE's res. */
	return kfdpool_fd_commit(&fdo, NULL);
}

static int kfdpool_uring_revoke(struct kfdpool_file *pf,
				const struct kfdpool_uring_record *ur)
{
	struct kfdpool_revoke r = {};

	if (ur->pad)
		return -EINVAL;
	r.record = ur->record;
	r.flags = ur->flags;
	return kfdpool_do_revoke(pf, &r);
}

static int kfdpool_uring_release(struct kfdpool_file *pf,
				 const struct kfdpool_release *ur)
{
	struct kfdpool_release rel = *ur;

	rel.status = 0;	/* out only */
	return kfdpool_do_release(pf, &rel);
}

/*
 * Check @p against the sizes of a command whose first version is @min_size
 * bytes and whose struct is @ksize bytes here; @usize is the caller's.
 */
static int kfdpool_uring_sizes(const union kfdpool_uring_payload *p,
			       unsigned int usize, unsigned int min_size,
			       unsigned int ksize)
{
	if (usize < min_size || usize > KFDPOOL_URING_PAYLOAD)
		return -EINVAL;
	/* Past the caller's struct: no field of any version. */
	if (!kfdpool_mem_is_zero(p->raw + usize, KFDPOOL_URING_PAYLOAD - usize))
		return -EINVAL;
	/* A newer caller's fields we do not know: refuse, as the ioctls do. */
	if (usize > ksize && !kfdpool_mem_is_zero(p->raw + ksize, usize - ksize))
		return -E2BIG;
	return 0;
}

static int kfdpool_uring_run(struct kfdpool_file *pf, u32 op,
			     const union kfdpool_uring_payload *p)
{
	unsigned int usize = _IOC_SIZE(op);
	unsigned int nr = _IOC_NR(op);
	unsigned int ksize;
	int ret;

	if (_IOC_TYPE(op) != KFDPOOL_IOC_MAGIC || _IOC_DIR(op) != _IOC_WRITE)
		return -ENOTTY;
	switch (nr) {
	case _IOC_NR(KFDPOOL_URING_EXPORT):
		ksize = sizeof(p->exp);
		break;
	case _IOC_NR(KFDPOOL_URING_REVOKE):
	case _IOC_NR(KFDPOOL_URING_IMPORT):
		ksize = sizeof(p->rec);
		break;
	case _IOC_NR(KFDPOOL_URING_RELEASE):
		ksize = sizeof(p->rel);
		break;
	case _IOC_NR(KFDPOOL_IOC_EXPORT_BATCH):
	case _IOC_NR(KFDPOOL_IOC_REVOKE_BATCH):
	case _IOC_NR(KFDPOOL_IOC_IMPORT_BATCH):
	case _IOC_NR(KFDPOOL_IOC_RELEASE_BATCH):
		ksize = sizeof(p->batch);
		break;
	default:
		return -ENOTTY;
	}
	/* ABI 1: every payload's first version is the struct above. */
	ret = kfdpool_uring_sizes(p, usize, ksize, ksize);
	if (ret)
		return ret;

	switch (nr) {
	case _IOC_NR(KFDPOOL_URING_EXPORT):
		return kfdpool_uring_export(pf, &p->exp);
	case _IOC_NR(KFDPOOL_URING_REVOKE):
		return kfdpool_uring_revoke(pf, &p->rec);
	case _IOC_NR(KFDPOOL_URING_IMPORT):
		return kfdpool_uring_import(pf, &p->rec);
	case _IOC_NR(KFDPOOL_URING_RELEASE):
		return kfdpool_uring_release(pf, &p->rel);
	default:
		return kfdpool_batch(pf, nr, &p->batch);
	}
}

/*
 * The io_uring of 6.1 (the one with the command API in <linux/io_uring.h>)
 * completes a positive result returned from ->uring_cmd only when the
 * command was issued inline: issued from an io-wq worker, the request is
 * never completed.  There, complete positive results (fds, batch counts)
 * with io_uring_cmd_done() and tell io_uring the command is queued, as
 * drivers completing asynchronously do.
 */
static int kfdpool_uring_result(struct io_uring_cmd *cmd, int ret,
				unsigned int issue_flags)
{
#ifdef KFDPOOL_HAVE_URING_CMD_LEGACY
	if (ret > 0) {
#ifdef KFDPOOL_HAVE_URING_CMD_DONE4
		io_uring_cmd_done(cmd, ret, 0, issue_flags);
#else
		io_uring_cmd_done(cmd, ret, 0);
#endif
		return -EIOCBQUEUED;
	}
#endif
	return ret;
}

/**
 * kfdpool_uring_cmd() - file_operations.uring_cmd of pool files
 * @cmd: the command; its payload is read from the SQE once, here
 * @issue_flags: IO_URING_F_*; IO_URING_F_NONBLOCK is not honoured (see the
 *	top of this file)
 *
 * Return: the CQE's res.
 */
int kfdpool_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	struct kfdpool_file *pf = cmd->file->private_data;
	union kfdpool_uring_payload p;
	int ret;

	BUILD_BUG_ON(sizeof(p) != KFDPOOL_URING_PAYLOAD);
	/* Only a 128-byte SQE has room for a record. */
	if (!(issue_flags & IO_URING_F_SQE128))
		return -EINVAL;
	/* The one read of the SQE. */
	memcpy(&p, kfdpool_uring_sqe_payload(cmd), sizeof(p));
	ret = kfdpool_uring_run(pf, cmd->cmd_op, &p);
	/*
	 * -EAGAIN would make io_uring call us again, with an SQE pointer that
	 * may point at a refilled ring slot.  Nothing here returns it; keep
	 * it that way even if a security module says so.
	 */
	if (ret == -EAGAIN)
		ret = -EBUSY;
	return kfdpool_uring_result(cmd, ret, issue_flags);
}
#endif /* KFDPOOL_HAVE_URING */
