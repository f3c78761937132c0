// SPDX-License-Identifier: MIT
/*
 * Stream order (pool/order.h): the process's streams as far as the pools
 * need them, each pool's queues of pending frees and their marker events.
 *
 * The stream table (one lock, never taken on the allocation path once a
 * pool has met a stream): every stream a pool or the program's event calls
 * used, with the number of events recorded on it so far, and what it has
 * waited for.  hipEventRecord and our markers both take the next number
 * of the stream they are recorded on, so "the program's event was
 * recorded after this free" is a comparison of numbers; a
 * hipStreamWaitEvent then tells which frees of the event's stream the
 * waiting stream depends on (hipMemPoolReuseFollowEventDependencies).
 * Waits are followed one hop: a stream that waited for a stream that
 * waited for the free is not known to depend on it (its reuse waits for
 * the marker instead, which is always safe).
 *
 * Streams are known to the table by a number given once, never by their
 * address: a destroyed stream's number is never seen again.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pool/pool.h"

#define ST_BUCKETS 256
#define EV_BUCKETS 1024

struct evn {			/* the program's events: where recorded */
	hipEvent_t e;
	uint64_t sid;
	uint64_t seq;
	struct evn *next;
};

static pthread_mutex_t g_st_mu = PTHREAD_MUTEX_INITIALIZER;
static struct kp_stream *g_st[ST_BUCKETS];
static struct evn *g_ev[EV_BUCKETS];
static unsigned int g_gen;		/* bumped at every stream destroy */
static uint64_t g_next_sid;

void kp_order_fork(int prepare)
{
	if (prepare)
		pthread_mutex_lock(&g_st_mu);
	else
		pthread_mutex_unlock(&g_st_mu);
}

static uint64_t thread_id(void)
{
	static __thread uint64_t tid;
	static uint64_t next;

	if (!tid)
		tid = __atomic_add_fetch(&next, 1, __ATOMIC_RELAXED);
	return tid;
}

hipError_t kp_stream_key(const struct kp_runtime *rt, hipStream_t s,
			 int per_thread_default, struct kp_skey *k)
{
	hipError_t e;

	k->handle = s;
	k->dev = -1;
	k->thread = 0;
	if (!kp_is_default_stream(s))
		return hipSuccess;
	if (s == hipStreamPerThread || (!s && per_thread_default)) {
		k->handle = hipStreamPerThread;
		k->thread = thread_id();
	} else {
		k->handle = NULL;	/* the legacy null stream */
	}
	if (!rt->hipGetDevice)
		return hipErrorNotSupported;
	e = rt->hipGetDevice(&k->dev);
	return e;
}

static unsigned int st_hash(const struct kp_skey *k);
static struct kp_stream *st_lookup(const struct kp_skey *k, int create);

hipError_t kp_stream_device(const struct kp_runtime *rt,
			    const struct kp_skey *k, int *dev)
{
	struct kp_stream *s;
	hipError_t e;
	int d = -1;

	if (k->dev >= 0) {
		*dev = k->dev;
		return hipSuccess;
	}
	pthread_mutex_lock(&g_st_mu);
	s = st_lookup(k, 0);
	if (s)
		d = s->sdev;
	pthread_mutex_unlock(&g_st_mu);
	if (d >= 0) {
		*dev = d;
		return hipSuccess;
	}
	/* Runtimes without hipStreamGetDevice (5.2): the current device. */
	e = rt->hipStreamGetDevice ? rt->hipStreamGetDevice(k->handle, &d) :
	    rt->hipGetDevice ? rt->hipGetDevice(&d) : hipErrorNotSupported;
	if (e)
		return e;
	pthread_mutex_lock(&g_st_mu);
	s = st_lookup(k, 1);
	if (s)
		s->sdev = d;	/* a stream's device never changes */
	pthread_mutex_unlock(&g_st_mu);
	*dev = d;
	return hipSuccess;
}

static unsigned int st_hash(const struct kp_skey *k)
{
	uint64_t h = (uintptr_t)k->handle * 0x9E3779B97F4A7C15ULL ^
		     (uint64_t)(k->dev + 1) * 31 ^ k->thread * 1000003;

	return (unsigned int)(h >> 40) % ST_BUCKETS;
}

/* The live stream of @k (g_st_mu held), made if @create. */
static struct kp_stream *st_lookup(const struct kp_skey *k, int create)
{
	unsigned int b = st_hash(k);
	struct kp_stream *s;

	for (s = g_st[b]; s; s = s->hnext)
		if (s->handle == (uintptr_t)k->handle && s->dev == k->dev &&
		    s->thread == k->thread)
			return s;
	if (!create)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->id = ++g_next_sid;
	s->sdev = -1;
	s->handle = (uintptr_t)k->handle;
	s->dev = k->dev;
	s->thread = k->thread;
	s->refs = 1;			/* the table's */
	s->hnext = g_st[b];
	g_st[b] = s;
	return s;
}

static void st_put(struct kp_stream *s)
{
	if (--s->refs)
		return;
	free(s->deps);
	free(s);
}

uint64_t kp_stream_next(struct kp_stream *st)
{
	return __atomic_add_fetch(&st->seq, 1, __ATOMIC_SEQ_CST);
}

uint64_t kp_stream_dep(struct kp_stream *s, struct kp_stream *t)
{
	uint64_t seq = 0, tid = t->id;
	uint32_t i;

	pthread_mutex_lock(&g_st_mu);
	for (i = 0; i < s->ndeps; i++)
		if (s->deps[i].sid == tid)
			seq = s->deps[i].seq;
	pthread_mutex_unlock(&g_st_mu);
	return seq;
}

/* ---- the program's calls ---- */

static struct evn **ev_slot(hipEvent_t e)
{
	unsigned int b = (unsigned int)(((uintptr_t)e * 0x9E3779B97F4A7C15ULL)
					>> 40) % EV_BUCKETS;
	struct evn **pp;

	for (pp = &g_ev[b]; *pp; pp = &(*pp)->next)
		if ((*pp)->e == e)
			break;
	return pp;
}

void kp_stream_recorded(hipEvent_t e, const struct kp_skey *k)
{
	struct kp_stream *s;
	struct evn **pp, *n;

	pthread_mutex_lock(&g_st_mu);
	s = st_lookup(k, 1);
	pp = ev_slot(e);
	n = *pp;
	if (!n && s) {
		n = calloc(1, sizeof(*n));
		if (n) {
			n->e = e;
			*pp = n;
		}
	}
	if (n && s) {
		n->sid = s->id;
		n->seq = kp_stream_next(s);
	} else if (n) {
		/* Out of memory: forget it rather than keep a stale one. */
		*pp = n->next;
		free(n);
	}
	pthread_mutex_unlock(&g_st_mu);
}

void kp_stream_waited(const struct kp_skey *k, hipEvent_t e)
{
	struct kp_stream *w;
	struct evn *n;
	uint32_t i;

	pthread_mutex_lock(&g_st_mu);
	n = *ev_slot(e);
	w = n ? st_lookup(k, 1) : NULL;
	if (!w || w->id == n->sid)
		goto out;
	for (i = 0; i < w->ndeps; i++) {
		if (w->deps[i].sid == n->sid) {
			if (w->deps[i].seq < n->seq)
				w->deps[i].seq = n->seq;
			goto out;
		}
	}
	if (!kp_grow32((void **)&w->deps, &w->capdeps, w->ndeps + 1,
		       sizeof(*w->deps))) {
		w->deps[w->ndeps].sid = n->sid;
		w->deps[w->ndeps].seq = n->seq;
		w->ndeps++;
	}
out:
	pthread_mutex_unlock(&g_st_mu);
}

struct gone {
	const struct kp_runtime *rt;
	uint64_t sid;
};

static void wait_stream_markers(struct ihipMemPoolHandle_t *pool, void *arg)
{
	struct gone *g = arg;
	struct kp_ev **evs = NULL;
	size_t n = 0, cap = 0, i;
	struct kp_sq *sq;
	struct kp_ev *ev;

	for (sq = pool->queues; sq; sq = sq->next) {
		if (!sq->st || sq->st->id != g->sid)
			continue;
		for (ev = sq->oldest; ev; ev = ev->next) {
			if (ev->done || KP_GROW(evs, cap, n + 1))
				continue;
			ev->pins++;
			evs[n++] = ev;
		}
	}
	if (n) {
		kp_pool_leave(pool);
		for (i = 0; i < n; i++)
			g->rt->hipEventSynchronize(evs[i]->h);
		kp_pool_enter(pool);
	}
	for (i = 0; i < n; i++) {
		/* The stream is going: its work ends with it in any case
		 * (the queue's terminate waits for it). */
		evs[i]->done = 1;
		kp_arena_settle_tag(&pool->arena, &evs[i]->tag);
		kp_ev_unpin(pool, evs[i]);
	}
	free(evs);
}

void kp_stream_destroying(hipStream_t h)
{
	struct kp_skey k = { .handle = h, .dev = -1, .thread = 0 };
	struct gone g = { .rt = kp_rt_cached() };
	struct kp_stream *s;

	if (kp_is_default_stream(h) || !g.rt || !g.rt->hipEventSynchronize)
		return;
	pthread_mutex_lock(&g_st_mu);
	s = st_lookup(&k, 0);
	if (s)
		g.sid = s->id;
	pthread_mutex_unlock(&g_st_mu);
	if (g.sid)
		kp_pools_each(wait_stream_markers, &g);
}

void kp_stream_destroyed(hipStream_t h)
{
	struct kp_skey k = { .handle = h, .dev = -1, .thread = 0 };
	struct kp_stream *s, **pp;

	if (kp_is_default_stream(h))
		return;
	pthread_mutex_lock(&g_st_mu);
	for (pp = &g_st[st_hash(&k)]; (s = *pp); pp = &s->hnext) {
		if (s->handle == (uintptr_t)h && s->dev == -1 && !s->thread) {
			*pp = s->hnext;
			__atomic_store_n(&s->dead, 1, __ATOMIC_RELEASE);
			__atomic_add_fetch(&g_gen, 1, __ATOMIC_RELEASE);
			st_put(s);
			break;
		}
	}
	pthread_mutex_unlock(&g_st_mu);
}

void kp_event_destroyed(hipEvent_t e)
{
	struct evn **pp, *n;

	pthread_mutex_lock(&g_st_mu);
	pp = ev_slot(e);
	n = *pp;
	if (n) {
		*pp = n->next;
		free(n);
	}
	pthread_mutex_unlock(&g_st_mu);
}

/* ---- a pool's queues ---- */

static void sq_free(struct kp_sq *sq)
{
	pthread_mutex_lock(&g_st_mu);
	st_put(sq->st);
	pthread_mutex_unlock(&g_st_mu);
	free(sq);
}

struct kp_sq *kp_sq_get(struct ihipMemPoolHandle_t *pool,
			const struct kp_skey *k)
{
	unsigned int gen = __atomic_load_n(&g_gen, __ATOMIC_ACQUIRE);
	struct kp_sq *sq, **pp;
	struct kp_stream *s;

	for (pp = &pool->queues; (sq = *pp);) {
		if (sq->handle == k->handle && sq->dev == k->dev &&
		    sq->thread == k->thread && sq->st) {
			if (sq->gen == gen)
				return sq;
			pthread_mutex_lock(&g_st_mu);
			s = st_lookup(k, 0);
			pthread_mutex_unlock(&g_st_mu);
			if (s == sq->st) {
				sq->gen = gen;
				return sq;
			}
			/* Its stream was destroyed: the queue keeps what is
			 * pending, under no name. */
			sq->handle = (hipStream_t)(intptr_t)-2;
		}
		if (sq->handle == (hipStream_t)(intptr_t)-2 && !sq->fl.nblk &&
		    !sq->oldest && !sq->pins) {
			*pp = sq->next;
			sq_free(sq);
			continue;
		}
		pp = &sq->next;
	}
	sq = calloc(1, sizeof(*sq));
	if (!sq)
		return NULL;
	pthread_mutex_lock(&g_st_mu);
	s = st_lookup(k, 1);
	if (s)
		s->refs++;
	pthread_mutex_unlock(&g_st_mu);
	if (!s) {
		free(sq);
		return NULL;
	}
	sq->st = s;
	sq->handle = k->handle;
	sq->dev = k->dev;
	sq->thread = k->thread;
	sq->gen = gen;
	sq->next = pool->queues;
	pool->queues = sq;
	return sq;
}

/* ---- marker events ---- */

struct kp_ev *kp_ev_get(struct ihipMemPoolHandle_t *pool, int dev)
{
	struct kp_ev *ev;

	for (ev = pool->ev_idle; ev; ev = ev->next)
		if (ev->dev == dev)
			break;
	if (!ev)
		return NULL;
	if (ev->prev)
		ev->prev->next = ev->next;
	else
		pool->ev_idle = ev->next;
	if (ev->next)
		ev->next->prev = ev->prev;
	ev->next = ev->prev = NULL;
	return ev;
}

hipError_t kp_ev_new(const struct kp_runtime *rt, int dev, struct kp_ev **out)
{
	struct kp_ev *ev;
	hipError_t e;
	int prev = -1;

	if (!rt->hipEventCreateWithFlags || !rt->hipEventQuery ||
	    !rt->hipEventSynchronize || !rt->hipEventRecord)
		return hipErrorNotSupported;
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return hipErrorOutOfMemory;
	/* An event is of the device current at its creation (hip::Event). */
	e = kp_rt_dev_enter(rt, dev, &prev);
	if (!e)
		e = rt->hipEventCreateWithFlags(&ev->h, hipEventDisableTiming);
	kp_rt_dev_leave(rt, dev, prev);
	if (e) {
		free(ev);
		return e;
	}
	ev->dev = dev;
	*out = ev;
	return hipSuccess;
}

void kp_ev_put(struct ihipMemPoolHandle_t *pool, struct kp_ev *ev)
{
	ev->done = 0;
	ev->seq = 0;
	ev->sq = NULL;
	ev->prev = NULL;
	ev->next = pool->ev_idle;
	if (ev->next)
		ev->next->prev = ev;
	pool->ev_idle = ev;
}

void kp_ev_queued(struct kp_sq *sq, struct kp_ev *ev, uint64_t seq)
{
	ev->sq = sq;
	ev->seq = seq;
	ev->done = 0;
	ev->queued = 1;
	ev->next = NULL;
	ev->prev = sq->newest;
	if (sq->newest)
		sq->newest->next = ev;
	else
		sq->oldest = ev;
	sq->newest = ev;
}

static void ev_unqueue(struct kp_ev *ev)
{
	struct kp_sq *sq = ev->sq;

	if (!ev->queued)
		return;
	if (ev->prev)
		ev->prev->next = ev->next;
	else
		sq->oldest = ev->next;
	if (ev->next)
		ev->next->prev = ev->prev;
	else
		sq->newest = ev->prev;
	ev->next = ev->prev = NULL;
	ev->queued = 0;
}

/* Back to the cache once nothing refers to it. */
void kp_ev_maybe_idle(struct ihipMemPoolHandle_t *pool, struct kp_ev *ev)
{
	if (ev->tag.refs || ev->irefs || ev->pins)
		return;
	ev_unqueue(ev);
	kp_ev_put(pool, ev);
}

void kp_ev_idle(struct kp_arena *a, struct kp_tag *t)
{
	struct ihipMemPoolHandle_t *pool = (struct ihipMemPoolHandle_t *)
		((char *)a - offsetof(struct ihipMemPoolHandle_t, arena));

	kp_ev_maybe_idle(pool, (struct kp_ev *)t);
}

void kp_ev_unpin(struct ihipMemPoolHandle_t *pool, struct kp_ev *ev)
{
	ev->pins--;
	kp_ev_maybe_idle(pool, ev);
}

/* ---- asking the runtime ---- */

/*
 * Ask the runtime about pinned markers @evs (pool locked; unlocks around
 * the runtime): @done[i] 1 when evs[i] completed (waiting for it when
 * @wait).  clr's event keeps the stream it was recorded on, and asking
 * about it (hipEventQuery, hipEventSynchronize) while that stream
 * captures invalidates the program's capture (hip_event.cpp, rocm-6.2.2):
 * such a marker is not asked about, and counts as not completed.  A
 * per-thread default stream of another thread cannot be named here, and
 * its markers are asked about unchecked.  A destroyed stream's markers
 * were waited for at its destruction.
 */
void kp_order_ask(struct ihipMemPoolHandle_t *pool, struct kp_ev **evs,
		  size_t n, int *done, int wait)
{
	const struct kp_runtime *rt = kp_rt_cached();
	struct where {
		hipEvent_t e;
		hipStream_t h;
		uint64_t thread;
		int dead;
	} *w, one;
	hipStreamCaptureStatus st;
	size_t i;

	w = n > 1 ? calloc(n, sizeof(*w)) : &one;
	for (i = 0; i < n; i++)
		done[i] = !rt;
	if (!rt || !w || !n) {
		if (w != &one)
			free(w);
		return;
	}
	for (i = 0; i < n; i++) {
		struct kp_sq *sq = evs[i]->sq;

		w[i].e = evs[i]->h;
		w[i].h = sq ? sq->handle : NULL;
		w[i].thread = sq ? sq->thread : 0;
		w[i].dead = !sq || !sq->st ||
			    __atomic_load_n(&sq->st->dead, __ATOMIC_ACQUIRE) ||
			    sq->handle == (hipStream_t)(intptr_t)-2;
	}
	kp_pool_leave(pool);
	for (i = 0; i < n; i++) {
		st = hipStreamCaptureStatusNone;
		if (w[i].dead) {
			done[i] = 1;
			continue;
		}
		if (w[i].h && rt->hipStreamIsCapturing &&
		    (w[i].h != hipStreamPerThread ||
		     w[i].thread == thread_id()) &&
		    !rt->hipStreamIsCapturing(w[i].h, &st) &&
		    st == hipStreamCaptureStatusActive)
			continue;
		/* An event the runtime cannot wait for (an error) is done
		 * unless it says otherwise. */
		done[i] = wait ? !rt->hipEventSynchronize(w[i].e) ||
				 rt->hipEventQuery(w[i].e) != hipErrorNotReady :
			  rt->hipEventQuery(w[i].e) == hipSuccess;
	}
	kp_pool_enter(pool);
	if (w != &one)
		free(w);
}

#define POLL_MAX 16

int kp_order_poll(struct ihipMemPoolHandle_t *pool, struct kp_sq *except,
		  int settle, unsigned int max)
{
	struct kp_ev *evs[POLL_MAX];
	int done[POLL_MAX];
	unsigned int n = 0, i;
	struct kp_sq *sq;
	struct kp_ev *ev;
	int found = 0;

	if (!kp_rt_cached())
		return 0;
	if (max > POLL_MAX)
		max = POLL_MAX;
	for (sq = pool->queues; sq && n < max; sq = sq->next) {
		if (sq == except)
			continue;
		for (ev = sq->oldest; ev; ev = ev->next) {
			if (!ev->done) {
				ev->pins++;
				evs[n++] = ev;
				break;
			}
		}
	}
	if (!n)
		return 0;
	kp_order_ask(pool, evs, n, done, 0);
	for (i = 0; i < n; i++) {
		ev = evs[i];
		if (done[i]) {
			ev->done = 1;
			found++;
			if (settle)
				kp_arena_settle_tag(&pool->arena, &ev->tag);
		}
		kp_ev_unpin(pool, ev);
	}
	return found;
}

/* The distinct events of @c's pending blocks not yet seen done, pinned. */
static size_t chunk_events(struct kp_chunk *c, struct kp_ev ***out)
{
	struct kp_ev **evs = NULL;
	size_t n = 0, cap = 0, i;
	struct kp_blk *b;

	for (b = c->reg.first; b; b = b->pnext) {
		struct kp_ev *ev = (struct kp_ev *)b->tag;

		if (b->state != KP_PENDING || ev->done)
			continue;
		for (i = 0; i < n; i++)
			if (evs[i] == ev)
				break;
		if (i < n)
			continue;
		if (KP_GROW(evs, cap, n + 1))
			break;		/* fewer now, the rest next time */
		ev->pins++;
		evs[n++] = ev;
	}
	*out = evs;
	return n;
}

/* Settle @c's pending blocks whose events are done. */
static void chunk_settle_done(struct ihipMemPoolHandle_t *pool,
			      struct kp_chunk *c)
{
	struct kp_blk *b, *next;

	for (b = c->reg.first; b; b = next) {
		next = b->pnext;
		if (b->state == KP_PENDING && ((struct kp_ev *)b->tag)->done) {
			/* Settling merges b with ready neighbours; restart
			 * from the region's start, which stays valid. */
			kp_arena_settle(&pool->arena, b);
			next = c->reg.first;
		}
	}
}

/* Whether every marker of @c's pending blocks completed, waiting for
 * them when @wait, and settle the blocks of those that did. */
static int chunk_wait(struct ihipMemPoolHandle_t *pool, struct kp_chunk *c,
		      int wait)
{
	struct kp_ev **evs;
	size_t n, i;
	int *done, all = 1;

	n = chunk_events(c, &evs);
	done = n ? calloc(n, sizeof(*done)) : NULL;
	if (done)
		kp_order_ask(pool, evs, n, done, wait);
	for (i = 0; i < n; i++) {
		if (done && done[i])
			evs[i]->done = 1;
		else
			all = 0;
		kp_ev_unpin(pool, evs[i]);
	}
	free(done);
	free(evs);
	chunk_settle_done(pool, c);
	return all;
}

void kp_order_sync_chunk(struct ihipMemPoolHandle_t *pool, struct kp_chunk *c)
{
	chunk_wait(pool, c, 1);
}

int kp_order_chunk_done(struct ihipMemPoolHandle_t *pool, struct kp_chunk *c)
{
	return chunk_wait(pool, c, 0);
}

void kp_order_fini(struct ihipMemPoolHandle_t *pool,
		   const struct kp_runtime *rt)
{
	struct kp_sq *sq;
	struct kp_ev *ev;

	while ((sq = pool->queues)) {
		pool->queues = sq->next;
		while ((ev = sq->oldest)) {
			ev_unqueue(ev);
			kp_ev_put(pool, ev);
		}
		sq_free(sq);
	}
	while ((ev = pool->ev_idle)) {
		pool->ev_idle = ev->next;
		if (rt && rt->hipEventDestroy)
			rt->hipEventDestroy(ev->h);
		free(ev);
	}
}
