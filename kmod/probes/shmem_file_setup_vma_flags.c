// SPDX-License-Identifier: GPL-2.0-only
/* shmem_file_setup() takes its flags as a vma_flags_t, no longer a long. */
#include <linux/mm.h>
#include <linux/shmem_fs.h>

struct file *kfdpool_probe(void);
struct file *kfdpool_probe(void)
{
	return shmem_file_setup("kfdpool", PAGE_SIZE, EMPTY_VMA_FLAGS);
}
