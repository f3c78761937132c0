// SPDX-License-Identifier: GPL-2.0-only
/*
 * In <linux/io_uring.h> (before <linux/io_uring/cmd.h> existed),
 * io_uring_cmd_done() took (cmd, ret, res2); later 6.1 stable releases
 * gained a fourth argument, issue_flags.
 */
#include <linux/io_uring.h>

void kfdpool_probe(struct io_uring_cmd *cmd);
void kfdpool_probe(struct io_uring_cmd *cmd)
{
	io_uring_cmd_done(cmd, 0, 0, 0);
}
