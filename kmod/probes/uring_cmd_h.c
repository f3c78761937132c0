// SPDX-License-Identifier: GPL-2.0-only
/* 6.12 moved the uring_cmd API to <linux/io_uring/cmd.h>. */
#include <linux/io_uring/cmd.h>

const void *kfdpool_probe(struct io_uring_cmd *cmd);
const void *kfdpool_probe(struct io_uring_cmd *cmd)
{
	return io_uring_sqe_cmd(cmd->sqe);
}
