// SPDX-License-Identifier: MIT
/*
 * fork() while another thread holds one of the library's locks would leave
 * the child's copy locked for ever.  Every lock is held across fork, taken
 * here in the one order in which they nest at run time:
 *
 *   the runtime lookup's lock (hip_runtime.c; nests with no other),
 *   kp_mu, then what is taken under it: the fabric policy's lock and the
 *   backends' locks (kfd, vgem; vgem's is also taken alone).
 *
 * One handler, not one per lock: the prepare handlers of pthread_atfork
 * run in the reverse order of registration, which is the order of the
 * objects on the link line, and a handler taking vgem's lock before kp_mu
 * deadlocked against a thread allocating a vgem chunk under kp_mu.
 * libkfdpool's control fd takes no lock (published once, atomically).
 */
#include <pthread.h>

#include "hip_internal.h"

static void fork_prepare(void)
{
	kp_rt_fork(1);
	pthread_mutex_lock(&kp_mu);
	kp_fabric_fork(1);
	kp_kfd_fork(1);
	kp_vgem_fork(1);
}

static void fork_done(void)
{
	kp_vgem_fork(0);
	kp_kfd_fork(0);
	kp_fabric_fork(0);
	pthread_mutex_unlock(&kp_mu);
	kp_rt_fork(0);
}

__attribute__((constructor)) static void fork_init(void)
{
	pthread_atfork(fork_prepare, fork_done, fork_done);
}
