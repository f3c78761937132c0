// SPDX-License-Identifier: MIT
/*
 * Batches of any length over io_uring, the batch ioctls or single ioctls.
 *
 * io_uring: a ring per thread (IORING_SETUP_SQE128, so an 80-byte command
 * payload and with it a 64-byte record fit in one SQE), created on first
 * use and torn down at thread exit.  A ring belongs to the process that
 * made it: after fork() the child's copy shares the parent's mapped rings,
 * so the child drops it and makes its own.  liburing 2.3 has no
 * io_uring_prep_uring_cmd(): the SQE is prepared as a plain rw op and
 * cmd_op and the payload are set by hand.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kfdpool.h"
#include "internal.h"

#define RING_ENTRIES 64

/* ---- the library's control fd and module info ---- */

/*
 * The control fd and the module's QUERY result, made once and published
 * with one atomic store, never changed after: no lock, so nothing to hold
 * across fork() and no lock order with the callers' locks (libkfdpool-hip
 * calls the batch functions under its own).  Two threads that race to make
 * it both open /dev/kfdpool; the loser closes its fd.
 */
struct ctl {
	int fd;
	struct kfdpool_query q;
};

static struct ctl *g_ctl;

static int ctl_get(const struct ctl **out)
{
	struct ctl *c = __atomic_load_n(&g_ctl, __ATOMIC_ACQUIRE), *none = NULL;
	int fd;

	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return -ENOMEM;
		fd = kfdpool_open();
		if (fd < 0) {
			free(c);
			return fd;
		}
		if (kfdpool_query(fd, &c->q) < 0)
			memset(&c->q, 0, sizeof(c->q));
		c->fd = fd;
		if (!__atomic_compare_exchange_n(&g_ctl, &none, c, 0,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE)) {
			close(fd);
			free(c);
			c = none;
		}
	}
	*out = c;
	return 0;
}

KFDPOOL_EXPORT int kfdpool_ctl(struct kfdpool_query *q)
{
	const struct ctl *c;
	int ret = ctl_get(&c);

	if (ret < 0)
		return ret;
	if (q)
		*q = c->q;
	return c->fd;
}

/* The module's QUERY result, cached with the control fd. 0 or -errno. */
static int kp_module_info(uint32_t *features, uint32_t *max_batch)
{
	const struct ctl *c;
	int ret = ctl_get(&c);

	if (ret < 0)
		return ret;
	if (features)
		*features = c->q.features;
	if (max_batch)
		*max_batch = c->q.max_batch ? c->q.max_batch : 1;
	return 0;
}

/* ---- transport selection ---- */

static pthread_once_t mode_once = PTHREAD_ONCE_INIT;
static enum kfdpool_batch_mode forced_mode;
static __thread enum kfdpool_batch_mode last_mode;
/* KFDPOOL_BATCH was refused: batches fail until a mode is set. */
static int mode_env_bad;

static void mode_init(void)
{
	const char *e = getenv("KFDPOOL_BATCH");

	if (!e || !*e || !strcmp(e, "auto"))
		return;
	if (!strcmp(e, "uring")) {
		forced_mode = KFDPOOL_BATCH_URING;
	} else if (!strcmp(e, "ioctl")) {
		forced_mode = KFDPOOL_BATCH_IOCTL;
	} else if (!strcmp(e, "single")) {
		forced_mode = KFDPOOL_BATCH_SINGLE;
	} else {
		kp_env_invalid("KFDPOOL_BATCH", e, "auto, uring, ioctl, single");
		mode_env_bad = 1;
	}
}

KFDPOOL_EXPORT enum kfdpool_batch_mode
kfdpool_set_batch_mode(enum kfdpool_batch_mode m)
{
	enum kfdpool_batch_mode old;

	pthread_once(&mode_once, mode_init);
	old = __atomic_exchange_n(&forced_mode, m, __ATOMIC_SEQ_CST);
	__atomic_store_n(&mode_env_bad, 0, __ATOMIC_SEQ_CST);
	return old;
}

KFDPOOL_EXPORT enum kfdpool_batch_mode kfdpool_last_batch_mode(void)
{
	return last_mode;
}

/* ---- the per-thread ring ---- */

struct thread_ring {
	int state;		/* 0 untried, 1 ready, -errno unavailable */
	pid_t pid;		/* the process that made the ring */
	struct io_uring ring;
};

static __thread struct thread_ring tring;
static pthread_key_t ring_key;
static pthread_once_t ring_key_once = PTHREAD_ONCE_INIT;

static void ring_destroy(void *p)
{
	struct thread_ring *tr = p;

	if (tr && tr->state == 1) {
		io_uring_queue_exit(&tr->ring);
		tr->state = 0;
	}
}

static void ring_key_init(void)
{
	pthread_key_create(&ring_key, ring_destroy);
}

static struct io_uring *thread_ring(void)
{
	struct io_uring_params p;
	int ret;

	if (tring.state == 1 && tring.pid != getpid()) {
		/* Inherited through fork: unmap our copy, make our own. */
		io_uring_queue_exit(&tring.ring);
		tring.state = 0;
	}
	if (tring.state == 1)
		return &tring.ring;
	if (tring.state < 0 && tring.pid == getpid())
		return NULL;
	pthread_once(&ring_key_once, ring_key_init);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQE128;
	ret = io_uring_queue_init_params(RING_ENTRIES, &tring.ring, &p);
	tring.pid = getpid();
	if (ret < 0) {
		tring.state = ret;
		return NULL;
	}
	tring.state = 1;
	pthread_setspecific(ring_key, &tring);
	return &tring.ring;
}

enum op { OP_EXPORT, OP_REVOKE, OP_IMPORT, OP_RELEASE };

static const struct {
	size_t elem;
	unsigned long batch_cmd;
	size_t status_off;
} ops_info[] = {
	[OP_EXPORT] = { sizeof(struct kfdpool_export), KFDPOOL_IOC_EXPORT_BATCH,
			offsetof(struct kfdpool_export, status) },
	[OP_REVOKE] = { sizeof(struct kfdpool_revoke), KFDPOOL_IOC_REVOKE_BATCH,
			offsetof(struct kfdpool_revoke, status) },
	[OP_IMPORT] = { sizeof(struct kfdpool_import), KFDPOOL_IOC_IMPORT_BATCH,
			offsetof(struct kfdpool_import, status) },
	[OP_RELEASE] = { sizeof(struct kfdpool_release),
			 KFDPOOL_IOC_RELEASE_BATCH,
			 offsetof(struct kfdpool_release, status) },
};

static int32_t *status_of(enum op op, void *ops, size_t i)
{
	return (int32_t *)((char *)ops + i * ops_info[op].elem +
			   ops_info[op].status_off);
}

/* Prepare the SQE of element @i; the vectored import takes @n elements. */
static void prep(struct io_uring_sqe *sqe, int fd, enum op op, void *ops,
		 size_t i, uint32_t n)
{
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	memset(sqe->cmd, 0, 80);
	sqe->user_data = i;
	switch (op) {
	case OP_EXPORT: {
		struct kfdpool_export *e = (struct kfdpool_export *)ops + i;
		struct kfdpool_uring_export u = {
			.entry_id = e->entry_id, .flags = e->flags,
			.offset = e->offset, .size = e->size,
			.record_ptr = (uintptr_t)&e->record,
		};

		sqe->cmd_op = KFDPOOL_URING_EXPORT;
		memcpy(sqe->cmd, &u, sizeof(u));
		break;
	}
	case OP_REVOKE: {
		struct kfdpool_revoke *r = (struct kfdpool_revoke *)ops + i;
		struct kfdpool_uring_record u = {
			.record = r->record, .flags = r->flags,
		};

		sqe->cmd_op = KFDPOOL_URING_REVOKE;
		memcpy(sqe->cmd, &u, sizeof(u));
		break;
	}
	case OP_IMPORT: {
		/* Vectored: the kernel fills every output of the elements. */
		struct kfdpool_batch b = {
			.ops = (uintptr_t)((struct kfdpool_import *)ops + i),
			.count = n,
			.elem_size = sizeof(struct kfdpool_import),
		};

		sqe->cmd_op = KFDPOOL_IOC_IMPORT_BATCH;
		memcpy(sqe->cmd, &b, sizeof(b));
		break;
	}
	case OP_RELEASE: {
		struct kfdpool_release *r = (struct kfdpool_release *)ops + i;
		struct kfdpool_release u = { .entry_id = r->entry_id,
					     .flags = r->flags };

		sqe->cmd_op = KFDPOOL_URING_RELEASE;
		memcpy(sqe->cmd, &u, sizeof(u));
		break;
	}
	}
}

/*
 * Refusals of the descriptor rather than of an element: not open, not a
 * pool, an owner-only call on an import descriptor.  The batch ioctl and
 * the vectored command refuse the whole call with them; the per-element
 * transports (io_uring's single commands, single ioctls), which get them
 * in every element, refuse it the same way, as the first element shows.
 * io_uring says -EOPNOTSUPP of a file without commands, which a pool's own
 * export may say too (a pool without handle types): the pool ioctl that
 * every pool descriptor answers tells them apart, on this error path only.
 * Return: the call's errno, or 0 when @err is the element's own.
 */
static int fd_refusal(int fd, enum op op, int err)
{
	struct kfdpool_pool_stats st;

	if (err == -EBADF || err == -ENOTTY)
		return err;
	if (err == -EPERM && (op == OP_EXPORT || op == OP_REVOKE))
		return err;
	if (err == -EOPNOTSUPP) {
		err = kfdpool_pool_stats(fd, 0, &st);
		if (err == -EBADF || err == -ENOTTY)
			return err;
	}
	return 0;
}

/*
 * Leave nothing in the ring for a later call to submit or reap (SQEs
 * pointing into this call's array, CQEs naming its elements): drop it;
 * the thread's next call makes a new one.
 */
static void ring_drop(void)
{
	io_uring_queue_exit(&tring.ring);
	tring.state = 0;
}

/*
 * Submit the @n SQEs queued and wait for their completions.  The kernel
 * may take fewer than queued: it stops after an SQE whose preparation
 * failed (its CQE says why) and at one it cannot get a request for; the
 * rest stay in the ring and are submitted again, as long as each try
 * takes some.  Return: how many were submitted, or -errno when none was.
 */
static int submit(struct io_uring *ring, unsigned int n)
{
	unsigned int sub = 0;
	int ret = 0;

	while (sub < n) {
		ret = sub ? io_uring_submit(ring) :
		      io_uring_submit_and_wait(ring, n);
		if (ret == -EINTR)
			continue;
		if (ret <= 0)
			break;
		sub += ret;
	}
	return sub ? (int)sub : ret < 0 ? ret : -EIO;
}

/*
 * One round: up to RING_ENTRIES elements from @done on, one SQE each, or
 * one slice of imports, one vectored SQE.  Imports go a slice per round so
 * that a slice runs only when the ones before it completed whole: the
 * count returned must be of leading elements, and a slice run after one
 * that stopped short would hand out fds nobody hears of.  (Linking the
 * slices' SQEs instead is unsafe: see the uapi header on linked commands.)
 * Return: elements processed, possibly fewer than queued, or -errno when
 * none was; *@end is true when the call must stop there.
 */
static int uring_round(struct io_uring *ring, int fd, enum op op, void *ops,
		       size_t done, size_t count, uint32_t max_batch,
		       bool *end)
{
	unsigned char seen[RING_ENTRIES] = { 0 };
	unsigned int nsqe = 0, k, lead;
	size_t i = done;
	uint32_t n = 1;
	int sub, ret = 0, res = 0;

	while (i < count && nsqe < RING_ENTRIES) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		if (!sqe)
			break;
		if (op == OP_IMPORT)
			n = count - i > max_batch ? max_batch :
			    (uint32_t)(count - i);
		prep(sqe, fd, op, ops, i, n);
		i += n;
		nsqe++;
		if (op == OP_IMPORT)
			break;
	}
	sub = nsqe ? submit(ring, nsqe) : -EBUSY;
	*end = sub != (int)nsqe;
	for (k = 0; sub > 0 && k < (unsigned int)sub; k++) {
		struct io_uring_cqe *cqe;

		do {
			ret = io_uring_wait_cqe(ring, &cqe);
		} while (ret == -EINTR);
		if (ret < 0)
			break;
		res = cqe->res;
		if (op != OP_IMPORT) {
			*status_of(op, ops, cqe->user_data) = res > 0 ? 0 : res;
			seen[cqe->user_data - done] = 1;
		}
		io_uring_cqe_seen(ring, cqe);
	}
	if (sub < 0 || k < (unsigned int)sub)
		*end = true;
	if (*end)
		ring_drop();
	if (sub < 0)
		return sub;
	if (op == OP_IMPORT && k < (unsigned int)sub)
		return ret;
	if (op == OP_IMPORT) {
		/* res: elements of the slice processed, or -errno. */
		if (res < (int)n)
			*end = true;
		return res ? res : -EIO;
	}
	/* Elements are processed in order; their CQEs may come in any. */
	for (lead = 0; lead < k && seen[lead]; lead++)
		;
	return lead ? (int)lead : ret < 0 ? ret : -EIO;
}

static int run_uring(struct io_uring *ring, int fd, enum op op, void *ops,
		     size_t count, uint32_t max_batch)
{
	size_t done = 0, i;
	bool end = false;
	int ret, err;

	while (done < count && !end) {
		ret = uring_round(ring, fd, op, ops, done, count, max_batch,
				  &end);
		if (!done && (ret < 0 || op != OP_IMPORT)) {
			/* Refused as a whole (see fd_refusal()). */
			err = fd_refusal(fd, op, ret < 0 ? ret :
					 *status_of(op, ops, 0));
			if (err) {
				for (i = 0; ret > 0 && i < (size_t)ret; i++)
					*status_of(op, ops, i) = 0;
				return err;
			}
		}
		if (ret < 0)
			return done ? (int)done : ret;
		done += ret;
	}
	return (int)done;
}

static int run_ioctl(int fd, enum op op, void *ops, size_t count,
		     uint32_t max_batch)
{
	size_t done = 0;

	while (done < count) {
		uint32_t n = count - done > max_batch ? max_batch :
			     (uint32_t)(count - done);
		struct kfdpool_batch b = {
			.ops = (uintptr_t)((char *)ops + done * ops_info[op].elem),
			.count = n,
			.elem_size = ops_info[op].elem,
		};
		int ret = kfdpool_xioctl(fd, ops_info[op].batch_cmd, &b);

		if (ret < 0)
			return done ? (int)done : ret;
		done += ret;
		if ((uint32_t)ret < n)
			break;
	}
	return (int)done;
}

static int run_single(int fd, enum op op, void *ops, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++) {
		int ret;

		switch (op) {
		case OP_EXPORT: {
			struct kfdpool_export *e = (struct kfdpool_export *)ops + i;

			e->status = 0;
			ret = kfdpool_xioctl(fd, KFDPOOL_IOC_EXPORT, e);
			e->status = ret < 0 ? ret : 0;
			break;
		}
		case OP_REVOKE: {
			struct kfdpool_revoke *r = (struct kfdpool_revoke *)ops + i;

			r->status = 0;
			ret = kfdpool_xioctl(fd, KFDPOOL_IOC_REVOKE, r);
			r->status = ret < 0 ? ret : 0;
			break;
		}
		case OP_IMPORT: {
			struct kfdpool_import *m = (struct kfdpool_import *)ops + i;

			m->status = 0;
			m->fd = 0;
			ret = kfdpool_xioctl(fd, KFDPOOL_IOC_IMPORT, m);
			m->status = ret < 0 ? ret : 0;
			if (ret < 0)
				m->fd = -1;
			break;
		}
		case OP_RELEASE: {
			struct kfdpool_release *r = (struct kfdpool_release *)ops + i;

			r->status = 0;
			ret = kfdpool_xioctl(fd, KFDPOOL_IOC_RELEASE, r);
			r->status = ret < 0 ? ret : 0;
			break;
		}
		}
		/* Refused as a whole (see fd_refusal()): as it came in. */
		if (!i && ret < 0) {
			ret = fd_refusal(fd, op, ret);
			if (ret) {
				*status_of(op, ops, 0) = 0;
				if (op == OP_IMPORT)
					((struct kfdpool_import *)ops)->fd = 0;
				return ret;
			}
		}
	}
	return (int)count;
}

static int run(int fd, enum op op, void *ops, size_t count)
{
	enum kfdpool_batch_mode mode;
	uint32_t features = 0, max_batch = 1;
	struct io_uring *ring;
	size_t i;

	if (!ops && count)
		return -EINVAL;
	if (!count)
		return 0;
	if (count > INT32_MAX)
		return -EINVAL;
	/* Outputs come in zeroed, as the kernel wants them. */
	for (i = 0; i < count; i++)
		*status_of(op, ops, i) = 0;
	pthread_once(&mode_once, mode_init);
	if (__atomic_load_n(&mode_env_bad, __ATOMIC_SEQ_CST))
		return -EINVAL;
	mode = __atomic_load_n(&forced_mode, __ATOMIC_SEQ_CST);
	if (kp_module_info(&features, &max_batch) < 0)
		features = 0;
	if (!max_batch)
		max_batch = 1;

	/*
	 * Auto: one element is one plain ioctl (a ring buys nothing), and
	 * imports go by batch ioctl: their io_uring form is the vectored
	 * command, which the module runs inline in the submitting thread with
	 * the batch ioctl's own code (kmod/uring.c), a slice per system call
	 * either way, so the ring would only add its own overhead.
	 */
	if (mode == KFDPOOL_BATCH_AUTO && count == 1)
		mode = KFDPOOL_BATCH_SINGLE;
	if (mode == KFDPOOL_BATCH_AUTO && op == OP_IMPORT &&
	    (features & KFDPOOL_FEATURE_BATCH))
		mode = KFDPOOL_BATCH_IOCTL;
	if (mode == KFDPOOL_BATCH_AUTO || mode == KFDPOOL_BATCH_URING) {
		ring = (features & KFDPOOL_FEATURE_URING_CMD) ? thread_ring() :
		       NULL;
		if (ring) {
			last_mode = KFDPOOL_BATCH_URING;
			return run_uring(ring, fd, op, ops, count, max_batch);
		}
		if (mode == KFDPOOL_BATCH_URING)
			return -EOPNOTSUPP;
	}
	if (mode == KFDPOOL_BATCH_AUTO || mode == KFDPOOL_BATCH_IOCTL) {
		if (features & KFDPOOL_FEATURE_BATCH) {
			last_mode = KFDPOOL_BATCH_IOCTL;
			return run_ioctl(fd, op, ops, count, max_batch);
		}
		if (mode == KFDPOOL_BATCH_IOCTL)
			return -EOPNOTSUPP;
	}
	last_mode = KFDPOOL_BATCH_SINGLE;
	return run_single(fd, op, ops, count);
}

KFDPOOL_EXPORT int kfdpool_exportv(int pool_fd, struct kfdpool_export *ops,
				   size_t count)
{
	size_t i;

	for (i = 0; ops && i < count; i++)
		memset(&ops[i].record, 0, sizeof(ops[i].record));
	return run(pool_fd, OP_EXPORT, ops, count);
}

KFDPOOL_EXPORT int kfdpool_revokev(int pool_fd, struct kfdpool_revoke *ops,
				   size_t count)
{
	return run(pool_fd, OP_REVOKE, ops, count);
}

KFDPOOL_EXPORT int kfdpool_importv(int pool_fd, struct kfdpool_import *ops,
				   size_t count)
{
	size_t i;

	for (i = 0; ops && i < count; i++) {
		ops[i].fd = 0;
		ops[i].offset = ops[i].size = ops[i].entry_size = 0;
		ops[i].cookie = 0;
		ops[i].entry_id = 0;
	}
	return run(pool_fd, OP_IMPORT, ops, count);
}

KFDPOOL_EXPORT int kfdpool_releasev(int pool_fd, struct kfdpool_release *ops,
				    size_t count)
{
	return run(pool_fd, OP_RELEASE, ops, count);
}
