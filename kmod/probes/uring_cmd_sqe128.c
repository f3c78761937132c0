// SPDX-License-Identifier: GPL-2.0-only
/*
 * Newer <linux/io_uring/cmd.h> reads a command's payload with
 * io_uring_sqe_cmd(sqe, type) and, for a 128-byte SQE,
 * io_uring_sqe128_cmd(sqe, type), each checking the type fits.
 */
#include <linux/io_uring/cmd.h>

struct kfdpool_probe_payload {
	u8 raw[80];
};

const void *kfdpool_probe(struct io_uring_cmd *cmd);
const void *kfdpool_probe(struct io_uring_cmd *cmd)
{
	return io_uring_sqe128_cmd(cmd->sqe, struct kfdpool_probe_payload);
}
