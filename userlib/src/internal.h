/* SPDX-License-Identifier: MIT */
#ifndef KFDPOOL_INTERNAL_H
#define KFDPOOL_INTERNAL_H

#include <errno.h>
#include <sys/ioctl.h>

#define KFDPOOL_EXPORT __attribute__((visibility("default")))

/* ioctl() that retries on EINTR and returns the result or -errno. */
static inline int kfdpool_xioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : ret;
}

#endif
