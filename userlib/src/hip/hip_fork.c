// SPDX-License-Identifier: MIT
/*
 * fork() while another thread holds one of the library's locks would leave
 * the child's copy locked for ever.  The process-wide locks are held
 * across fork, taken here in the one order in which they nest at run time:
 *
 *   the runtime lookup's lock (rt/runtime.c; nests with no other),
 *   kp_mu, the fabric policy's lock, the address table's writers' lock,
 *   the stream table's lock, the lock of the library's pool fds (taken
 *   around making one), the backends' locks (rocr, kfd, vgem; taken
 *   alone).
 *
 * The pools' own locks are not: a child must not use its parent's pools,
 * so in the child they are made anew, the pools marked unusable and every
 * pool fd of the library closed (kp_pools_fork_child): the child holds no
 * part of its parent's pools, which end when the parent does.
 *
 * One handler, not one per lock: the prepare handlers of pthread_atfork
 * run in the reverse order of registration, which is the order of the
 * objects on the link line.  libkfdpool's control fd takes no lock
 * (published once, atomically).
 */
#include <pthread.h>

#include "hip_internal.h"

static void fork_prepare(void)
{
	kp_rt_fork(1);
	pthread_mutex_lock(&kp_mu);
	kp_fabric_fork(1);
	kp_addr_fork(1);
	kp_order_fork(1);
	kp_fd_fork(1);
	kp_rocr_fork(1);
	kp_kfd_fork(1);
	kp_vgem_fork(1);
}

static void fork_release(void)
{
	kp_vgem_fork(0);
	kp_kfd_fork(0);
	kp_rocr_fork(0);
	kp_fd_fork(0);
	kp_order_fork(0);
	kp_addr_fork(0);
	kp_fabric_fork(0);
	pthread_mutex_unlock(&kp_mu);
	kp_rt_fork(0);
}

static void fork_child(void)
{
	kp_pools_fork_child();
	fork_release();
}

__attribute__((constructor)) static void fork_init(void)
{
	pthread_atfork(fork_prepare, fork_release, fork_child);
}
