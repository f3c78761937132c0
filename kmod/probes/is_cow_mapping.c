// SPDX-License-Identifier: GPL-2.0-only
/*
 * Newer kernels share is_cow_mapping() in <linux/mm.h>; older ones keep it
 * inside mm.
 */
#include <linux/mm.h>

bool kfdpool_probe(vm_flags_t flags);
bool kfdpool_probe(vm_flags_t flags)
{
	return is_cow_mapping(flags);
}
