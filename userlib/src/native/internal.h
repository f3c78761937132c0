/* SPDX-License-Identifier: MIT */
#ifndef KFDPOOL_INTERNAL_H
#define KFDPOOL_INTERNAL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
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

/*
 * A KFDPOOL_* environment variable has a value the library refuses: say so
 * on stderr, one line naming the variable, the value and what is accepted.
 * The caller then fails the call (-EINVAL, hipErrorInvalidValue).
 */
static inline void kp_env_invalid(const char *name, const char *value,
				  const char *accepted)
{
	/* One line, whole, so that lines of several threads do not mix.  Inline:
	 * both libraries use it, and a program may link both static archives. */
	fprintf(stderr, "libkfdpool: %s=\"%s\" is not valid (accepted: %s)\n",
		name, value, accepted);
}

#endif
