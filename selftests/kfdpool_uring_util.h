/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers for the io_uring passthrough selftests: kfdpool commands travel
 * in the SQE itself, so rings are made with 128-byte SQEs.  Link with
 * -luring.
 *
 * liburing 2.3 has no io_uring_prep_uring_cmd(): commands are prepared with
 * io_uring_prep_rw(IORING_OP_URING_CMD, ...), sqe->cmd_op and sqe->cmd.
 */
#ifndef KFDPOOL_URING_UTIL_H
#define KFDPOOL_URING_UTIL_H

#include <string.h>
#include <liburing.h>

#define KFD_URING_CMD_BYTES	80	/* of sqe->cmd in a 128-byte SQE */

/* A ring of @entries 128-byte SQEs; 0 or -errno (liburing's). */
static inline int kfd_uring_init(struct io_uring *ring, unsigned int entries)
{
	return io_uring_queue_init(entries, ring, IORING_SETUP_SQE128);
}

/*
 * The next SQE of @ring as command @op on @fd, its payload @len bytes of
 * @payload and zeroes after; NULL when the SQ ring is full.
 */
static inline struct io_uring_sqe *kfd_uring_prep(struct io_uring *ring,
						  int fd, __u32 op,
						  const void *payload,
						  size_t len, __u64 user_data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		return NULL;
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = op;
	memset(sqe->cmd, 0, KFD_URING_CMD_BYTES);
	memcpy(sqe->cmd, payload, len);
	sqe->user_data = user_data;
	return sqe;
}

#endif /* KFDPOOL_URING_UTIL_H */
