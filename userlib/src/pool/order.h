/* SPDX-License-Identifier: MIT */
/*
 * Stream order (pool/order.c), HIP's rules as clr's hip_mempool_impl
 * keeps them, with real events of the process's HIP runtime:
 *
 *   - hipFreeAsync(p, s) records a marker event on s.  The block is
 *     pending in s's queue of its pool until that event is known to have
 *     completed.
 *   - s reuses its own pending blocks at once (stream order protects them).
 *   - another stream t reuses one
 *       - when t depends on the free (hipMemPoolReuseFollowEventDependencies):
 *         t waited (hipStreamWaitEvent) for an event recorded on s after
 *         the free;
 *       - when the event has completed (hipMemPoolReuseAllowOpportunistic);
 *       - by waiting for it (hipMemPoolReuseAllowInternalDependencies):
 *         hipStreamWaitEvent(t, marker) before the block is handed out.
 *   - a chunk is given back (unmapped, unpinned, freed) only when every
 *     free in it has completed; hipFree and hipMemPoolTrimTo wait.
 *
 * Without a runtime there is no GPU work to order: frees are ready at
 * once and no event is made.
 *
 * Streams are known by what the program passes; the null stream (0,
 * hipStreamLegacy) is one per device, hipStreamPerThread one per device
 * and thread.  A destroyed stream's queues keep its pending blocks (they
 * wait for their events like any other stream's), and a new stream at the
 * same address is a new stream (hip/hip_stream.c interposes
 * hipStreamDestroy).
 */
#ifndef KFDPOOL_ORDER_H
#define KFDPOOL_ORDER_H

struct kp_dep {
	uint64_t sid;			/* a stream's id */
	uint64_t seq;
};

/* A stream of the program, in the process-wide stream table. */
struct kp_stream {
	uint64_t id;			/* never reused */
	uintptr_t handle;
	int dev;			/* null and per-thread streams */
	uint64_t thread;		/* per-thread streams */
	uint64_t seq;			/* events recorded on it (atomic) */
	int sdev;			/* its device (user streams), or -1 */
	uint32_t refs;			/* the table's and the queues' */
	int dead;
	struct kp_dep *deps;		/* what it waited for: seq on s */
	uint32_t ndeps, capdeps;
	struct kp_stream *hnext;
};

/* A marker event of a pool: recorded on a stream at a free. */
struct kp_ev {
	struct kp_tag tag;		/* the arena's view (first) */
	hipEvent_t h;
	int dev;
	int done;			/* seen completed */
	int pins;			/* holders outside the pool lock */
	int queued;			/* in its queue's list */
	uint64_t seq;			/* its stream's record number */
	uint32_t irefs;			/* imported chunks waiting for it */
	struct kp_sq *sq;
	struct kp_ev *next, *prev;	/* the queue's list, or the idle cache */
};

/* A stream's pending frees in one pool. */
struct kp_sq {
	struct kp_fl fl;
	struct kp_stream *st;
	hipStream_t handle;		/* cache key */
	int dev;
	uint64_t thread;
	unsigned int gen;		/* stream table generation checked at */
	struct kp_ev *oldest, *newest;	/* events with pending blocks */
	uint32_t pins;
	struct kp_sq *next;
};

/* How the calling thread's stream is keyed: the device for the null and
 * per-thread streams (asks the runtime), the thread for the latter. */
struct kp_skey {
	hipStream_t handle;
	int dev;
	uint64_t thread;
};
hipError_t kp_stream_key(const struct kp_runtime *rt, hipStream_t s,
			 int per_thread_default, struct kp_skey *k);
/* The device of @k's stream (clr records an event only on a stream of the
 * event's device): the current one for the null and per-thread streams,
 * the runtime's answer (hipStreamGetDevice, kept) for the program's. */
hipError_t kp_stream_device(const struct kp_runtime *rt,
			    const struct kp_skey *k, int *dev);

/* The pool's queue of stream @k (pool locked), made if needed; NULL when
 * out of memory. */
struct kp_sq *kp_sq_get(struct ihipMemPoolHandle_t *pool,
			const struct kp_skey *k);
/* Free what the pool's stream state holds (pool being finalized). */
void kp_order_fini(struct ihipMemPoolHandle_t *pool,
		   const struct kp_runtime *rt);

/* An idle marker event of @dev, or NULL (make one: kp_ev_new, unlocked). */
struct kp_ev *kp_ev_get(struct ihipMemPoolHandle_t *pool, int dev);
hipError_t kp_ev_new(const struct kp_runtime *rt, int dev, struct kp_ev **out);
/* Back to the idle cache (pool locked). */
void kp_ev_put(struct ihipMemPoolHandle_t *pool, struct kp_ev *ev);
/* The marker was recorded on @sq's stream as number @seq. */
void kp_ev_queued(struct kp_sq *sq, struct kp_ev *ev, uint64_t seq);
/* The arena's tag_idle: no block waits for the event any more. */
void kp_ev_idle(struct kp_arena *a, struct kp_tag *t);
void kp_ev_unpin(struct ihipMemPoolHandle_t *pool, struct kp_ev *ev);
/* Back to the cache if no block, import or holder refers to it. */
void kp_ev_maybe_idle(struct ihipMemPoolHandle_t *pool, struct kp_ev *ev);
/* Record a marker on @sq's stream: the number it got. */
uint64_t kp_stream_next(struct kp_stream *st);

/*
 * Ask the runtime about up to @max oldest unfinished markers of the
 * pool's queues other than @except, and settle the blocks of those that
 * completed (when @settle; else only mark them).  Pool locked; unlocks
 * around the runtime.  The number of markers found completed.
 */
int kp_order_poll(struct ihipMemPoolHandle_t *pool, struct kp_sq *except,
		  int settle, unsigned int max);
/* Ask about pinned markers without touching a capture (pool locked;
 * unlocks): @done[i] whether evs[i] completed, waited for when @wait. */
void kp_order_ask(struct ihipMemPoolHandle_t *pool, struct kp_ev **evs,
		  size_t n, int *done, int wait);
/* Wait for every marker of a pending block of @c, and settle them. */
void kp_order_sync_chunk(struct ihipMemPoolHandle_t *pool, struct kp_chunk *c);
/* Whether every pending block of @c has a completed marker (asks the
 * runtime about those not yet seen completed, settles the blocks of those
 * that are; pool locked, unlocks). */
int kp_order_chunk_done(struct ihipMemPoolHandle_t *pool, struct kp_chunk *c);

/* The highest record number on @t that @s waited for (0: none). */
uint64_t kp_stream_dep(struct kp_stream *s, struct kp_stream *t);

/* The program's stream and event calls (hip/hip_stream.c). */
void kp_stream_recorded(hipEvent_t e, const struct kp_skey *k);
void kp_stream_waited(const struct kp_skey *k, hipEvent_t e);
/* Before the runtime destroys @s: wait for the markers of the pools'
 * frees on it, which are never asked about again (clr's event keeps a
 * pointer to its stream, and asks it whether it captures). */
void kp_stream_destroying(hipStream_t s);
void kp_stream_destroyed(hipStream_t s);
void kp_event_destroyed(hipEvent_t e);
void kp_order_fork(int prepare);

/* The runtime's devices, for device switches around runtime calls. */
static inline int kp_is_default_stream(hipStream_t s)
{
	return s == NULL || s == hipStreamLegacy || s == hipStreamPerThread;
}

#endif
