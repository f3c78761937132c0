// SPDX-License-Identifier: GPL-2.0-only
/*
 * user_struct.locked_vm, the per-user count of pages charged to
 * RLIMIT_MEMLOCK (io_uring's registered buffers, iommufd), exists only with
 * some options (CONFIG_NET, CONFIG_IO_URING, ...), which differ between
 * kernels.
 */
#include <linux/cred.h>
#include <linux/sched/user.h>

long kfdpool_probe(void);
long kfdpool_probe(void)
{
	return atomic_long_read(&current_user()->locked_vm);
}
