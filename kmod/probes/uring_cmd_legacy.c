// SPDX-License-Identifier: GPL-2.0-only
/* 6.1 has the uring_cmd API in <linux/io_uring.h> with cmd->cmd. */
#include <linux/io_uring.h>

const void *kfdpool_probe(struct io_uring_cmd *cmd);
const void *kfdpool_probe(struct io_uring_cmd *cmd)
{
	return cmd->cmd;
}
