// SPDX-License-Identifier: GPL-2.0-only
/*
 * shmem_read_folio_gfp() arrived after 6.1; 6.1 has only
 * shmem_read_mapping_page_gfp(), which gives the page.  (Both kernels
 * declare shmem_kernel_file_setup(), but 6.1 does not export it: the module
 * uses shmem_file_setup(), exported by both, which a compile probe could
 * not tell apart.)
 */
#include <linux/shmem_fs.h>

struct folio *kfdpool_probe(struct address_space *mapping);
struct folio *kfdpool_probe(struct address_space *mapping)
{
	return shmem_read_folio_gfp(mapping, 0, GFP_KERNEL);
}
