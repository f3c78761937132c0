// SPDX-License-Identifier: GPL-2.0-only
/* vm_flags_set() (6.3); before it, vma->vm_flags was written directly. */
#include <linux/mm.h>

void kfdpool_probe(struct vm_area_struct *vma);
void kfdpool_probe(struct vm_area_struct *vma)
{
	vm_flags_set(vma, VM_DONTEXPAND);
}
