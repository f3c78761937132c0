/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kfdpool internals shared by the module's files.
 */
#ifndef _KFDPOOL_H
#define _KFDPOOL_H

#include <linux/fs.h>
#include <linux/types.h>
#include <linux/kfdpool.h>

#include "kfdpool_features.h"

#ifdef KFDPOOL_HAVE_IMPORT_NS_IDENT
#define KFDPOOL_IMPORT_NS_DMA_BUF()	MODULE_IMPORT_NS(DMA_BUF)
#else
#define KFDPOOL_IMPORT_NS_DMA_BUF()	MODULE_IMPORT_NS("DMA_BUF")
#endif

/* Module parameters (main.c). */
extern unsigned long kfdpool_global_limit;
extern unsigned long kfdpool_user_limit;
extern unsigned long kfdpool_default_pool_limit;
extern unsigned int kfdpool_max_entries;

/**
 * struct kfdpool_ioctl_desc - one size-versioned ioctl
 * @cmd: the command as defined in the uapi header (the kernel's size)
 * @min_size: the size of the command's first version; a caller struct
 *	smaller than this is refused
 * @handler: called with a kernel copy of the caller's struct, zero-filled
 *	past what the caller passed; what it leaves there is copied back
 *
 * Handlers that hand out fds return them through @fd_out of
 * kfdpool_ioctl_dispatch() so that the fd is installed after the copy back.
 */
struct kfdpool_ioctl_desc {
	unsigned int cmd;
	unsigned int min_size;
	long (*handler)(struct file *file, void *data);
};

/* Table entry: index the table with _IOC_NR() of the command. */
#define KFDPOOL_IOCTL(_cmd, _min_size, _handler)			\
	{ .cmd = (_cmd), .min_size = (_min_size), .handler = (_handler) }

long kfdpool_ioctl_dispatch(struct file *file, unsigned int ucmd,
			    unsigned long arg,
			    const struct kfdpool_ioctl_desc *table,
			    unsigned int nr);

bool kfdpool_mem_is_zero(const void *p, size_t len);

#endif /* _KFDPOOL_H */
