// SPDX-License-Identifier: GPL-2.0-only
/*
 * receive_fd() installs a file through the kernel's receive path
 * (security_file_receive()).  Newer kernels (6.12) take a user pointer that
 * gets the fd number before the fd goes live; older ones (6.1) take
 * (file, o_flags), and there only the unexported __receive_fd() writes the
 * number first.
 */
#include <linux/fcntl.h>
#include <linux/file.h>

int kfdpool_probe(struct file *file, int __user *ufd);
int kfdpool_probe(struct file *file, int __user *ufd)
{
	return receive_fd(file, ufd, O_CLOEXEC);
}
