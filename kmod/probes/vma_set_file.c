// SPDX-License-Identifier: GPL-2.0-only
/* vma_set_file() (5.11) swaps a vma's file; before it callers did. */
#include <linux/mm.h>

void kfdpool_probe(struct vm_area_struct *vma, struct file *file);
void kfdpool_probe(struct vm_area_struct *vma, struct file *file)
{
	vma_set_file(vma, file);
}
