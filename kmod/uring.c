// SPDX-License-Identifier: GPL-2.0-only
/*
 * io_uring passthrough (IORING_OP_URING_CMD) on pool files, for rings set
 * up with IORING_SETUP_SQE128 so that a record travels in the SQE.
 *
 * A command's payload is read from its SQE once, when the module is first
 * called for it: the SQE may be a ring slot that user space refills as
 * soon as io_uring_enter() returned.  Commands complete inline, as in
 * ublk's control path; payloads are size-versioned like ioctl structs.
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

static int kfdpool_uring_export(struct kfdpool_file *pf,
				const struct kfdpool_uring_export *ue)
{
	union kfdpool_elem el = {
		.exp = { .entry_id = ue->entry_id, .flags = ue->flags,
			 .offset = ue->offset, .size = ue->size },
	};
	struct kfdpool_fd_out fdo;
	int ret;

	kfdpool_fd_out_init(&fdo);
	ret = kfdpool_one(pf, _IOC_NR(KFDPOOL_IOC_EXPORT_BATCH), &el, &fdo);
	if (ret)
		return ret;
	if (copy_to_user(u64_to_user_ptr(ue->record_ptr), &el.exp.record,
			 sizeof(el.exp.record))) {
		kfdpool_fd_abort(&fdo);
		return -EFAULT;
	}
	return kfdpool_fd_commit(&fdo, NULL);
}

/* IMPORT and REVOKE: a record in the SQE.  An import's fd is the res. */
static int kfdpool_uring_record(struct kfdpool_file *pf, unsigned int nr,
				const struct kfdpool_uring_record *ur)
{
	struct kfdpool_fd_out fdo;
	union kfdpool_elem el;
	int ret;

	if (ur->pad)
		return -EINVAL;
	if (nr == _IOC_NR(KFDPOOL_URING_IMPORT)) {
		el.imp.record = ur->record;
		el.imp.flags = ur->flags;
		nr = _IOC_NR(KFDPOOL_IOC_IMPORT_BATCH);
	} else {
		el.rev.record = ur->record;
		el.rev.flags = ur->flags;
		nr = _IOC_NR(KFDPOOL_IOC_REVOKE_BATCH);
	}
	kfdpool_fd_out_init(&fdo);
	ret = kfdpool_one(pf, nr, &el, &fdo);
	return ret || !fdo.file ? ret : kfdpool_fd_commit(&fdo, NULL);
}

/* Check @p, @usize bytes by the caller's count, against our @ksize. */
static int kfdpool_uring_sizes(const union kfdpool_uring_payload *p,
			       unsigned int usize, unsigned int ksize)
{
	if (usize < ksize || usize > KFDPOOL_URING_PAYLOAD)
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
			     const union kfdpool_uring_payload *p)
{
	unsigned int usize = _IOC_SIZE(op);
	unsigned int nr = _IOC_NR(op);
	union kfdpool_elem el;

	if (_IOC_TYPE(op) != KFDPOOL_IOC_MAGIC || _IOC_DIR(op) != _IOC_WRITE)
		return -ENOTTY;
	switch (nr) {
	case _IOC_NR(KFDPOOL_URING_EXPORT):
		return kfdpool_uring_sizes(p, usize, sizeof(p->exp)) ?:
		       kfdpool_uring_export(pf, &p->exp);
	case _IOC_NR(KFDPOOL_URING_REVOKE):
	case _IOC_NR(KFDPOOL_URING_IMPORT):
		return kfdpool_uring_sizes(p, usize, sizeof(p->rec)) ?:
		       kfdpool_uring_record(pf, nr, &p->rec);
	case _IOC_NR(KFDPOOL_URING_RELEASE):
		el.rel = p->rel;
		return kfdpool_uring_sizes(p, usize, sizeof(p->rel)) ?:
		       kfdpool_one(pf, _IOC_NR(KFDPOOL_IOC_RELEASE_BATCH), &el,
				   NULL);
	case _IOC_NR(KFDPOOL_IOC_EXPORT_BATCH):
	case _IOC_NR(KFDPOOL_IOC_REVOKE_BATCH):
	case _IOC_NR(KFDPOOL_IOC_IMPORT_BATCH):
	case _IOC_NR(KFDPOOL_IOC_RELEASE_BATCH):
		return kfdpool_uring_sizes(p, usize, sizeof(p->batch)) ?:
		       kfdpool_batch(pf, nr, &p->batch);
	}
	return -ENOTTY;
}

/**
 * kfdpool_uring_cmd() - file_operations.uring_cmd of pool files
 * @cmd: the command; its payload is read from the SQE once, here
 * @issue_flags: IO_URING_F_*
 *
 * IO_URING_F_NONBLOCK is not honoured: a command sleeps on the pool's lock
 * and faults user pages as the ioctl does, holding up only the submitter's
 * own ring.  Answering -EAGAIN would have io_uring call again from io-wq,
 * and some kernels (6.12's stable releases) then hand the retry a pointer
 * into the SQ ring, not the copy they took, so the retry could run a
 * refilled slot; nothing lets a driver tell a retry from a first issue to
 * keep its own copy.  IOSQE_ASYNC moves a command off the submitter's
 * thread, with the SQE copied first on every kernel.
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
	memcpy(&p, kfdpool_uring_cmd_payload(cmd, union kfdpool_uring_payload),
	       sizeof(p));
	ret = kfdpool_uring_run(pf, cmd->cmd_op, &p);
	/* Never be called again for this command (see above). */
	if (ret == -EAGAIN)
		ret = -EBUSY;
	return kfdpool_uring_cmd_result(cmd, ret, issue_flags);
}
#endif /* KFDPOOL_HAVE_URING */
