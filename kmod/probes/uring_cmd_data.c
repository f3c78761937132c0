// SPDX-License-Identifier: GPL-2.0-only
/*
 * 6.14 gave a command's async data a type, struct io_uring_cmd_data, and
 * made io_uring point ->sqe at its copy of the SQE when a command asks to
 * be issued again.
 */
#include <linux/io_uring/cmd.h>

size_t kfdpool_probe(void);
size_t kfdpool_probe(void)
{
	return sizeof(struct io_uring_cmd_data);
}
