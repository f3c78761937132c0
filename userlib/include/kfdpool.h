/* SPDX-License-Identifier: MIT */
/*
 * libkfdpool: the native C API over /dev/kfdpool.
 *
 * Functions return 0 (or a non-negative count or fd) on success and a
 * negative errno on failure; they never set errno as their only report.
 */
#ifndef KFDPOOL_H
#define KFDPOOL_H

#include <stdint.h>
#include <linux/kfdpool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KFDPOOL_DEVICE_PATH "/dev/kfdpool"

/* Open /dev/kfdpool (O_RDWR | O_CLOEXEC).  Returns the fd or -errno. */
int kfdpool_open(void);

/* Fill @q with the module's ABI version, features and limits. */
int kfdpool_query(int ctl_fd, struct kfdpool_query *q);

#ifdef __cplusplus
}
#endif

#endif /* KFDPOOL_H */
