/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The selftests' dma-buf importer module (selftests/importer), as user
 * space sees it.  IMPORTER_CHECK attaches its device to a dma-buf holding
 * pattern(seed), reads it through the DMA addresses and writes
 * pattern(seed + 1), then reads that through vmap and leaves
 * pattern(seed + 2): a 32-bit word per 4 bytes, importer_word().
 */
#ifndef KFDPOOL_IMPORTER_UTIL_H
#define KFDPOOL_IMPORTER_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>
#include <linux/ioctl.h>
#include <linux/types.h>

struct importer_check {
	__s32 fd;
	__u32 seed;
	__u32 stage;
	__u32 segments;
	__u64 bad_offset;
};

#define IMPORTER_CHECK _IOWR('K', 1, struct importer_check)

static inline uint32_t importer_word(uint32_t seed, uint64_t off)
{
	return seed * 2654435761u + (uint32_t)(off / 4);
}

/* Its device, once devtmpfs made the node after the load: fd or -errno. */
static inline int importer_dev_open(void)
{
	int fd = -1, i;

	for (i = 0; i < 100 && fd < 0; i++) {
		fd = open("/dev/kfdpool_importer", O_RDWR | O_CLOEXEC);
		if (fd < 0)
			usleep(10000);
	}
	return fd < 0 ? -errno : fd;
}

#endif /* KFDPOOL_IMPORTER_UTIL_H */
