// SPDX-License-Identifier: MIT
/* The slow half of a pool's lock (pool/lock.h): waiting, waking. */
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pool/lock.h"

static void futex(int *uaddr, int op, int val)
{
	syscall(SYS_futex, uaddr, op | FUTEX_PRIVATE_FLAG, val, NULL, NULL, 0);
}

/* Held (@c is what the first attempt found): mark it waited for, sleep
 * until it is given back, and take it marked waited for (another may still
 * wait: the unlock that follows wakes it). */
void kp_lock_wait(kp_lock_t *l, int c)
{
	int i;

	/* A short spin first: the holder's sections are short. */
	for (i = 0; i < 100 && c == 1; i++) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
		c = 0;
		if (__atomic_compare_exchange_n(&l->v, &c, 1, 0,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
	}
	if (c != 2)
		c = __atomic_exchange_n(&l->v, 2, __ATOMIC_ACQUIRE);
	while (c) {
		futex(&l->v, FUTEX_WAIT, 2);
		c = __atomic_exchange_n(&l->v, 2, __ATOMIC_ACQUIRE);
	}
}

void kp_lock_wake(kp_lock_t *l)
{
	futex(&l->v, FUTEX_WAKE, 1);
}
