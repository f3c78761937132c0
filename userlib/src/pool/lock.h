/* SPDX-License-Identifier: MIT */
/*
 * A pool's lock: one word, taken with one atomic instruction when free and
 * given back with one, a futex wait only when another thread holds it (the
 * usual three-state mutex: 0 free, 1 held, 2 held and waited for).  The
 * allocation pair takes its pool's lock twice; pthread_mutex_t cost about
 * a tenth of the pair there, this a few instructions.  Process-private
 * (FUTEX_PRIVATE_FLAG): a child of fork() makes its parent's anew.
 */
#ifndef KFDPOOL_LOCK_H
#define KFDPOOL_LOCK_H

typedef struct {
	int v;
} kp_lock_t;

void kp_lock_wait(kp_lock_t *l, int c);
void kp_lock_wake(kp_lock_t *l);

static inline void kp_lock_init(kp_lock_t *l)
{
	__atomic_store_n(&l->v, 0, __ATOMIC_RELAXED);
}

static inline void kp_lock(kp_lock_t *l)
{
	int c = 0;

	if (!__atomic_compare_exchange_n(&l->v, &c, 1, 0, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		kp_lock_wait(l, c);
}

static inline void kp_unlock(kp_lock_t *l)
{
	if (__atomic_exchange_n(&l->v, 0, __ATOMIC_RELEASE) == 2)
		kp_lock_wake(l);
}

#endif
