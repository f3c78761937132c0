// SPDX-License-Identifier: GPL-2.0-only
/*
 * call_mmap() became vfs_mmap(), which also serves files that implement
 * mmap_prepare (shmem among them).
 */
#include <linux/fs.h>

int kfdpool_probe(struct file *file, struct vm_area_struct *vma);
int kfdpool_probe(struct file *file, struct vm_area_struct *vma)
{
	return vfs_mmap(file, vma);
}
