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

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <liburing.h>

#define KFD_URING_CMD_BYTES	80	/* of sqe->cmd in a 128-byte SQE */

/* How a test names the kernel's lack (tools/must-not-skip matches it). */
#define KFD_URING_MISSING "no io_uring command passthrough in this kernel"

/*
 * Why this kernel cannot take kfdpool's io_uring commands, or NULL when it
 * can: they need rings of 128-byte SQEs and IORING_OP_URING_CMD.  Asked of
 * the kernel with raw system calls, so that tests which use only the
 * library need not link liburing.
 */
static inline const char *kfd_uring_missing(void)
{
	struct io_uring_params prm = {};
	struct io_uring_probe *probe;
	const char *why = NULL;
	int fd;

	prm.flags = IORING_SETUP_SQE128;
	fd = syscall(__NR_io_uring_setup, 2, &prm);
	if (fd < 0)
		return errno == EINVAL ?
			KFD_URING_MISSING " (no 128-byte SQE rings)" : NULL;
	probe = calloc(1, sizeof(*probe) + 256 * sizeof(probe->ops[0]));
	if (probe && !syscall(__NR_io_uring_register, fd, IORING_REGISTER_PROBE,
			      probe, 256) &&
	    (probe->last_op < IORING_OP_URING_CMD ||
	     !(probe->ops[IORING_OP_URING_CMD].flags & IO_URING_OP_SUPPORTED)))
		why = KFD_URING_MISSING " (no IORING_OP_URING_CMD)";
	free(probe);
	close(fd);
	return why;
}

/* Why a test skips when a ring of 128-byte SQEs failed with @err (-errno). */
static inline const char *kfd_uring_skip_reason(int err)
{
	static char why[96];
	const char *missing = kfd_uring_missing();

	if (missing)
		return missing;
	snprintf(why, sizeof(why), "io_uring with SQE128: %s", strerror(-err));
	return why;
}

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
