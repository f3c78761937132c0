// SPDX-License-Identifier: MIT
/* The control device: open and query. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kfdpool.h"
#include "internal.h"

KFDPOOL_EXPORT int kfdpool_open(void)
{
	int fd = open(KFDPOOL_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

KFDPOOL_EXPORT int kfdpool_query(int ctl_fd, struct kfdpool_query *q)
{
	memset(q, 0, sizeof(*q));
	return kfdpool_xioctl(ctl_fd, KFDPOOL_IOC_QUERY, q);
}
