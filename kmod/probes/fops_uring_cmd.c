// SPDX-License-Identifier: GPL-2.0-only
/*
 * Whether files can take io_uring commands at all (->uring_cmd); when they
 * can but no uring_cmd_* probe matched, the build stops (kfdpool.h) rather
 * than leave io_uring out unnoticed.
 */
#include <linux/fs.h>

static int kfdpool_probe_cmd(struct io_uring_cmd *cmd, unsigned int flags)
{
	return 0;
}

const struct file_operations kfdpool_probe_fops = {
	.uring_cmd = kfdpool_probe_cmd,
};
