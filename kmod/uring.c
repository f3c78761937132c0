// SPDX-License-Identifier: GPL-2.0-only
/*
 * io_uring passthrough (IORING_OP_URING_CMD) on pool fds.  Commands complete
 * inline: the value returned here is the CQE's res, as in ublk's control
 * path.  From the nonblocking issue (IO_URING_F_NONBLOCK) a command that
 * would sleep returns -EAGAIN and io_uring issues it again from a worker,
 * which shares the submitter's files and memory.
 */
#include <linux/uaccess.h>

#include "kfdpool.h"

#ifdef KFDPOOL_HAVE_URING
#ifdef KFDPOOL_HAVE_URING_CMD_H
#include <linux/io_uring/cmd.h>

static const void *kfdpool_uring_payload(struct io_uring_cmd *cmd)
{
	return io_uring_sqe_cmd(cmd->sqe);
}
#else
#include <linux/io_uring.h>

static const void *kfdpool_uring_payload(struct io_uring_cmd *cmd)
{
	return cmd->cmd;
}
#endif

static int kfdpool_uring_export(struct kfdpool_file *pf, const void *payload,
				bool nonblock)
{
	struct kfdpool_uring_export ue;
	struct kfdpool_export e = {};
	struct kfdpool_fd_out fdo;
	void __user *dst;
	long left;
	int ret;

	memcpy(&ue, payload, sizeof(ue));
	e.entry_id = ue.entry_id;
	e.flags = ue.flags;
	e.offset = ue.offset;
	e.size = ue.size;
	dst = u64_to_user_ptr(ue.record_ptr);

	ret = kfdpool_do_export(pf, &e, nonblock);
	if (ret)
		return ret;
	kfdpool_fd_out_init(&fdo);
	kfdpool_export_arm_undo(&fdo, pf, &e.record);
	/* Must not fault in the nonblocking issue: retry from the worker. */
	if (nonblock)
		left = copy_to_user_nofault(dst, &e.record, sizeof(e.record));
	else
		left = copy_to_user(dst, &e.record, sizeof(e.record));
	if (!left)
		return 0;

	kfdpool_fd_abort(&fdo);
	return nonblock ? -EAGAIN : -EFAULT;
}

static int kfdpool_uring_import(struct kfdpool_file *pf, const void *payload,
				bool nonblock)
{
	struct kfdpool_uring_record ur;
	struct kfdpool_import imp = {};
	struct kfdpool_fd_out fdo;
	int ret;

	memcpy(&ur, payload, sizeof(ur));
	if (ur.pad)
		return -EINVAL;
	imp.record = ur.record;
	imp.flags = ur.flags;
	kfdpool_fd_out_init(&fdo);
	ret = kfdpool_do_import(pf, &imp, &fdo, nonblock);
	if (ret)
		return ret;
	if (imp.flags & KFDPOOL_IMPORT_VALIDATE)
		return 0;
	/* Nothing is copied back: the fd number is the CQE's res. */
	kfdpool_fd_commit(&fdo);
	return imp.fd;
}

static int kfdpool_uring_revoke(struct kfdpool_file *pf, const void *payload,
				bool nonblock)
{
	struct kfdpool_uring_record ur;
	struct kfdpool_revoke r = {};

	memcpy(&ur, payload, sizeof(ur));
	if (ur.pad)
		return -EINVAL;
	r.record = ur.record;
	r.flags = ur.flags;
	return kfdpool_do_revoke(pf, &r, nonblock);
}

static int kfdpool_uring_release(struct kfdpool_file *pf, const void *payload,
				 bool nonblock)
{
	struct kfdpool_release rel;

	memcpy(&rel, payload, sizeof(rel));
	rel.status = 0;
	return kfdpool_do_release(pf, &rel, nonblock);
}

static int kfdpool_uring_batch(struct kfdpool_file *pf, unsigned int cmd_op,
			       const void *payload, bool nonblock)
{
	struct kfdpool_batch b;

	/* Copies whole user arrays: always from the worker. */
	if (nonblock)
		return -EAGAIN;
	memcpy(&b, payload, sizeof(b));
	return kfdpool_batch(pf, _IOC_NR(cmd_op), &b);
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

static int kfdpool_uring_issue(struct io_uring_cmd *cmd, bool nonblock)
{
	struct kfdpool_file *pf = cmd->file->private_data;
	const void *payload = kfdpool_uring_payload(cmd);

	switch (cmd->cmd_op) {
	case KFDPOOL_URING_EXPORT:
		return kfdpool_uring_export(pf, payload, nonblock);
	case KFDPOOL_URING_REVOKE:
		return kfdpool_uring_revoke(pf, payload, nonblock);
	case KFDPOOL_URING_IMPORT:
		return kfdpool_uring_import(pf, payload, nonblock);
	case KFDPOOL_URING_RELEASE:
		return kfdpool_uring_release(pf, payload, nonblock);
	case KFDPOOL_IOC_EXPORT_BATCH:
	case KFDPOOL_IOC_REVOKE_BATCH:
	case KFDPOOL_IOC_IMPORT_BATCH:
	case KFDPOOL_IOC_RELEASE_BATCH:
		return kfdpool_uring_batch(pf, cmd->cmd_op, payload, nonblock);
	default:
		return -ENOTTY;
	}
}

/**
 * kfdpool_uring_cmd() - file_operations.uring_cmd of pool files
 * @cmd: the command; its payload is in the SQE, which user space may still
 *	write, so each handler takes one copy before looking at it
 * @issue_flags: IO_URING_F_*
 *
 * Return: the CQE's res.
 */
int kfdpool_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	/* Only a 128-byte SQE has room for a record. */
	if (!(issue_flags & IO_URING_F_SQE128))
		return -EINVAL;
	return kfdpool_uring_result(cmd, kfdpool_uring_issue(cmd,
				    issue_flags & IO_URING_F_NONBLOCK), issue_flags);
}
#endif /* KFDPOOL_HAVE_URING */
