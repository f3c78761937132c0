// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzz kfdpool's ioctls and io_uring commands from several threads and
 * processes at once.  Most steps are stateful (fuzz_state.h): each thread
 * keeps a model of pools (persistent ones among them: parked, adopted and
 * destroyed), entries, records, import fds, handles and children of its
 * own, makes mostly valid calls from it with one thing changed at a time,
 * and checks every result, the pools' figures and its user's against the
 * model; ALLOC'd memory also goes through the selftests' importer module
 * ($KFDPOOL_IMPORTER_KO), a device's view of it.  The other steps
 * (FZ_WILD_PCT) are random, on pools all fuzzers share: valid structs
 * with one field corrupted, random bytes, random commands and sizes, wrong
 * fd types (pipes, memfds, eventfds, dma-bufs as pools, pools as dma-bufs,
 * closed fds), huge counts, NULL, unmapped, read-only, misaligned and
 * page-straddling user pointers.
 *
 * The kernel must survive (the VM runner fails the run on any KASAN,
 * lockdep or WARN report), no model violation may occur, and afterwards
 * every pool's figures must be consistent, no fd may have leaked into the
 * fuzzers, no persistent pool may be left (the fuzzers destroy theirs),
 * the dma-buf count, the pool count and the module's reference count must
 * be back to their baselines, and the module must unload and load again.
 * The success fraction of the calls, overall and per command, is printed.
 *
 *   KFDPOOL_FUZZ_SEED   replay a run (the seed is printed)
 *   KFDPOOL_FUZZ_CALLS  steps in all (default FZ_STEPS_DEBUG on the debug
 *                       kernel, FZ_STEPS elsewhere)
 *   KFDPOOL_FUZZ_CHECK_FDS=1  one fuzzer, one thread, the fd count checked
 *                       after every step
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/eventfd.h>
#include <sys/wait.h>

#include "reliability.h"
#include "fuzz_state.h"
#include "kfdpool_persist_util.h"
#include "kselftest_harness.h"
#include "kfdpool_state.h"

#define FZ_PROCS 2
#define FZ_THREADS 2
#define FZ_WILD_PCT 20		/* random steps; the rest are stateful */
#define FZ_STEPS 20000
/* The debug kernel's run is the deep one: 10^5 stateful calls at least. */
#define FZ_STEPS_DEBUG 130000
#define FZ_STATEFUL_DEBUG 100000
#define FZ_POOLS 3
#define FZ_BUFS 4
#define FZ_RECS 16
#define FZ_PAGE 4096
#define FZ_FAKE_FD 1000		/* an fd number nobody holds, at first */
#define FZ_BATCH_BYTES (KFD_BATCH_MAX * 128)
/*
 * Inaccessible space after the batch buffer.  The kernel walks a batch at
 * stride elem_size; a stride past this would land in our other mappings
 * and have the kernel write (and install fds) there, so batches are kept
 * inside buffer + guard.
 */
#define FZ_BATCH_GUARD (64ull << 20)

/* What every fuzzer starts from; made before the fork, inherited. */
struct fz_env {
	int ctl;
	int pools[FZ_POOLS];	/* owner fds */
	int imports[FZ_POOLS];	/* import fds (-1 where the pool refuses) */
	int bufs[FZ_BUFS];	/* dma-bufs */
	int pipe[2], memfd, evfd, closed;
	int fds[32];		/* every fd above, and some that are not fds */
	int nfds;
	uint32_t entries[FZ_POOLS][FZ_BUFS];
	struct kfdpool_record recs[FZ_POOLS][FZ_RECS];
	int nrecs[FZ_POOLS];
	void *unmapped;
};

/* Figures all fuzzers add to (MAP_SHARED across the fork). */
struct fz_stats {
	struct fs_stats fs;	/* per command, both halves; the model's */
	uint64_t steps;
	uint64_t calls, ok, uring, uring_ok, fds_closed, pins, exports,
		imports;
	uint64_t errnos[160];
	uint64_t fd_leaks;
	uint64_t uring_lost;
};

struct fz_thread {
	struct fz_env *env;
	struct fz_stats *st;
	uint64_t seed;
	uint64_t calls;
	struct rel_ring ring;
	bool have_ring;
	unsigned char *arena;	/* 2 pages, then a PROT_NONE guard page */
	unsigned char *ro;	/* a read-only page */
	unsigned char *batch;	/* FZ_BATCH_BYTES, then a guard page */
	unsigned int pidx;	/* the pool the current call is aimed at */
	/* The last successful calls, to tell where a leaked fd came from. */
	struct { uint32_t cmd; int fd; long ret; int uring; } trace[64];
	unsigned int ntrace;
	/* The call in flight, for KFDPOOL_FUZZ_CHECK_FDS. */
	struct { uint32_t cmd; int fd, uring, mode; long ret;
		 unsigned char arg[168]; } last;
	struct kfdpool_record recs[FZ_POOLS][FZ_RECS];	/* learnt */
	uint32_t entries[FZ_POOLS][FZ_RECS];
	struct fs_thread fs;	/* the stateful half */
	bool fs_ok;
	int id;
};

static const struct fz_cmd {
	unsigned int cmd;
	unsigned int size;
	bool on_ctl;
} fz_cmds[] = {
	{ KFDPOOL_IOC_QUERY, sizeof(struct kfdpool_query), true },
	{ KFDPOOL_IOC_POOL_CREATE, sizeof(struct kfdpool_pool_create), true },
	{ KFDPOOL_IOC_POOL_IMPORT_HANDLE,
	  sizeof(struct kfdpool_pool_import_handle), true },
	{ KFDPOOL_IOC_POOL_STATS, sizeof(struct kfdpool_pool_stats), false },
	{ KFDPOOL_IOC_POOL_EXPORT, sizeof(struct kfdpool_pool_export), false },
	{ KFDPOOL_IOC_PIN, sizeof(struct kfdpool_pin), false },
	{ KFDPOOL_IOC_UNPIN, sizeof(struct kfdpool_unpin), false },
	{ KFDPOOL_IOC_EXPORT, sizeof(struct kfdpool_export), false },
	{ KFDPOOL_IOC_REVOKE, sizeof(struct kfdpool_revoke), false },
	{ KFDPOOL_IOC_IMPORT, sizeof(struct kfdpool_import), false },
	{ KFDPOOL_IOC_RELEASE, sizeof(struct kfdpool_release), false },
	{ KFDPOOL_IOC_EXPORT_BATCH, sizeof(struct kfdpool_batch), false },
	{ KFDPOOL_IOC_REVOKE_BATCH, sizeof(struct kfdpool_batch), false },
	{ KFDPOOL_IOC_IMPORT_BATCH, sizeof(struct kfdpool_batch), false },
	{ KFDPOOL_IOC_RELEASE_BATCH, sizeof(struct kfdpool_batch), false },
	{ KFDPOOL_IOC_HANDLE_EXPORT, sizeof(struct kfdpool_handle_export), false },
	{ KFDPOOL_IOC_HANDLE_ROTATE, sizeof(struct kfdpool_handle_rotate), false },
};

#define FZ_NCMDS (sizeof(fz_cmds) / sizeof(fz_cmds[0]))

static const uint64_t fz_interesting[] = {
	0, 1, 2, 3, 4, 7, 8, 63, 64, 65, 4095, 4096, 4097, 0x7fff, 0x8000,
	0xffff, KFD_BATCH_MAX, KFD_BATCH_MAX + 1, 0x7fffffff,
	0x80000000, 0xffffffff, 0x100000000ull, 0x7fffffffffffffffull,
	0x8000000000000000ull, 0xfffffffffffff000ull, 0xffffffffffffffffull,
	(uint64_t)-4096,
};

static uint64_t fz_value(uint64_t *s)
{
	if (rel_below(s, 3))
		return fz_interesting[rel_below(s, sizeof(fz_interesting) /
						      sizeof(fz_interesting[0]))];
	return rel_rand(s);
}

static int fz_pick_fd(struct fz_thread *t)
{
	struct fz_env *e = t->env;
	int fd = e->fds[rel_below(&t->seed, e->nfds)];

	/* A number once closed may be the stateful half's now. */
	return fs_fd_private(fd) ? e->ctl : fd;
}

static int fz_pick_pool(struct fz_thread *t)
{
	struct fz_env *e = t->env;
	unsigned int i = rel_below(&t->seed, FZ_POOLS);

	t->pidx = i;
	if (rel_below(&t->seed, 4) == 0 && e->imports[i] >= 0)
		return e->imports[i];
	return e->pools[i];
}

static struct kfdpool_record *fz_pick_rec(struct fz_thread *t)
{
	struct fz_env *e = t->env;
	unsigned int p = t->pidx;

	/* Mostly a record of the pool the call goes to. */
	if (!rel_below(&t->seed, 8))
		p = rel_below(&t->seed, FZ_POOLS);
	if (rel_below(&t->seed, 2) || !e->nrecs[p])
		return &t->recs[p][rel_below(&t->seed, FZ_RECS)];
	return &e->recs[p][rel_below(&t->seed, e->nrecs[p])];
}

static uint32_t fz_pick_entry(struct fz_thread *t)
{
	unsigned int p = t->pidx;

	if (!rel_below(&t->seed, 8))
		p = rel_below(&t->seed, FZ_POOLS);
	if (rel_below(&t->seed, 2))
		return t->entries[p][rel_below(&t->seed, FZ_RECS)];
	return t->env->entries[p][rel_below(&t->seed, FZ_BUFS)];
}

/* A valid element of batch command @nr at @p. */
static void fz_elem(struct fz_thread *t, unsigned int nr, void *p)
{
	switch (nr) {
	case _IOC_NR(KFDPOOL_IOC_EXPORT_BATCH): {
		struct kfdpool_export *x = p;

		memset(x, 0, sizeof(*x));
		x->entry_id = fz_pick_entry(t);
		x->offset = rel_below(&t->seed, 4) * 1024;
		x->size = 1 + rel_below(&t->seed, 4096);
		break;
	}
	case _IOC_NR(KFDPOOL_IOC_REVOKE_BATCH): {
		struct kfdpool_revoke *x = p;

		memset(x, 0, sizeof(*x));
		x->record = *fz_pick_rec(t);
		break;
	}
	case _IOC_NR(KFDPOOL_IOC_IMPORT_BATCH): {
		struct kfdpool_import *x = p;

		memset(x, 0, sizeof(*x));
		x->record = *fz_pick_rec(t);
		x->flags = rel_below(&t->seed, 3) ? 0 : KFDPOOL_IMPORT_VALIDATE;
		break;
	}
	default: {
		struct kfdpool_release *x = p;

		memset(x, 0, sizeof(*x));
		x->entry_id = fz_pick_entry(t);
		break;
	}
	}
}

static size_t fz_elem_size(unsigned int nr)
{
	switch (nr) {
	case _IOC_NR(KFDPOOL_IOC_EXPORT_BATCH):
		return sizeof(struct kfdpool_export);
	case _IOC_NR(KFDPOOL_IOC_REVOKE_BATCH):
		return sizeof(struct kfdpool_revoke);
	case _IOC_NR(KFDPOOL_IOC_IMPORT_BATCH):
		return sizeof(struct kfdpool_import);
	default:
		return sizeof(struct kfdpool_release);
	}
}

/*
 * Keep the kernel's walk of a batch whose header is at @p inside our buffer
 * and its guard (see FZ_BATCH_GUARD), whatever the mutations did.
 */
static void fz_batch_clamp(struct fz_thread *t, unsigned int cmd, void *p)
{
	unsigned int nr = _IOC_NR(cmd);
	struct kfdpool_batch b;
	uint64_t lo = (uintptr_t)t->batch;

	if (_IOC_TYPE(cmd) != KFDPOOL_IOC_MAGIC ||
	    nr < _IOC_NR(KFDPOOL_IOC_EXPORT_BATCH) ||
	    nr > _IOC_NR(KFDPOOL_IOC_RELEASE_BATCH))
		return;
	memcpy(&b, p, sizeof(b));
	if (b.ops >= lo && b.ops < lo + FZ_BATCH_BYTES + FZ_BATCH_GUARD) {
		if ((b.ops - lo) + (uint64_t)b.count * b.elem_size >
		    FZ_BATCH_BYTES + FZ_BATCH_GUARD)
			b.count = b.elem_size ? (FZ_BATCH_BYTES +
				  FZ_BATCH_GUARD) / b.elem_size ?: 1 : 1;
	} else if (b.ops < 0x800000000000ull && b.ops >= 65536) {
		/* Somewhere else in our address space: not there. */
		b.ops = (uintptr_t)t->env->unmapped;
	}
	memcpy(p, &b, sizeof(b));
}

/* Fill t->batch with elements of @nr; returns the batch header to use. */
static void fz_batch(struct fz_thread *t, unsigned int nr,
		     struct kfdpool_batch *b)
{
	size_t esz = fz_elem_size(nr);
	uint32_t count, i, n;

	switch (rel_below(&t->seed, 8)) {
	case 0:
		count = fz_value(&t->seed);
		break;
	case 1:
		count = KFD_BATCH_MAX - rel_below(&t->seed, 2);
		break;
	default:
		count = 1 + rel_below(&t->seed, 16);
	}
	memset(b, 0, sizeof(*b));
	b->count = count;
	b->elem_size = rel_below(&t->seed, 6) ? esz : fz_value(&t->seed);
	/* Elements as the kernel will read them: at stride elem_size. */
	n = count;
	if ((uint64_t)n * esz > FZ_BATCH_BYTES)
		n = FZ_BATCH_BYTES / esz;
	if (n > 64 && rel_below(&t->seed, 4))
		n = 64;	/* the rest stays what it was: stale elements */
	for (i = 0; i < n; i++) {
		fz_elem(t, nr, t->batch + i * esz);
		if (!rel_below(&t->seed, 16))
			t->batch[i * esz + rel_below(&t->seed, esz)] =
				rel_rand(&t->seed);
	}
	switch (rel_below(&t->seed, 12)) {
	case 0:
		b->ops = 0;
		break;
	case 1:
		b->ops = (uintptr_t)t->env->unmapped;
		break;
	case 2:
		b->ops = (uintptr_t)t->batch + 1 + rel_below(&t->seed, 7);
		break;
	case 3:	/* the array runs into the guard page */
		b->ops = (uintptr_t)t->batch + FZ_BATCH_BYTES - esz / 2;
		break;
	case 4:
		b->ops = (uintptr_t)t->ro;
		break;
	case 5:
		b->ops = fz_value(&t->seed);
		break;
	default:
		b->ops = (uintptr_t)t->batch;
	}
	if (!rel_below(&t->seed, 16))
		b->flags = fz_value(&t->seed);
	if (!rel_below(&t->seed, 16))
		b->pad = fz_value(&t->seed);
}

/* A valid struct for @c at @p (at most 2 pages). */
static void fz_template(struct fz_thread *t, const struct fz_cmd *c, void *p)
{
	memset(p, 0, c->size);
	switch (_IOC_NR(c->cmd)) {
	case _IOC_NR(KFDPOOL_IOC_POOL_CREATE): {
		struct kfdpool_pool_create *x = p;

		x->limit = rel_below(&t->seed, 2) ? 0 : fz_value(&t->seed);
		x->handle_types = rel_below(&t->seed, 4);
		strcpy(x->name, "fuzz");
		break;
	}
	case _IOC_NR(KFDPOOL_IOC_POOL_STATS): {
		struct kfdpool_pool_stats *x = p;

		x->flags = rel_below(&t->seed, 4);
		break;
	}
	case _IOC_NR(KFDPOOL_IOC_PIN): {
		struct kfdpool_pin *x = p;

		x->dmabuf_fd = rel_below(&t->seed, 2) ?
			t->env->bufs[rel_below(&t->seed, FZ_BUFS)] :
			fz_pick_fd(t);
		x->cookie = rel_rand(&t->seed);
		break;
	}
	case _IOC_NR(KFDPOOL_IOC_UNPIN): {
		struct kfdpool_unpin *x = p;

		x->entry_id = fz_pick_entry(t);
		break;
	}
	case _IOC_NR(KFDPOOL_IOC_EXPORT): {
		struct kfdpool_export *x = p;

		x->entry_id = fz_pick_entry(t);
		x->offset = rel_below(&t->seed, 4) * 1024;
		x->size = 1 + rel_below(&t->seed, 4096);
		break;
	}
	case _IOC_NR(KFDPOOL_IOC_REVOKE): {
		struct kfdpool_revoke *x = p;

		x->record = *fz_pick_rec(t);
		break;
	}
	case _IOC_NR(KFDPOOL_IOC_IMPORT): {
		struct kfdpool_import *x = p;

		x->record = *fz_pick_rec(t);
		x->flags = rel_below(&t->seed, 3) ? 0 : KFDPOOL_IMPORT_VALIDATE;
		break;
	}
	case _IOC_NR(KFDPOOL_IOC_RELEASE): {
		struct kfdpool_release *x = p;

		x->entry_id = fz_pick_entry(t);
		break;
	}
	case _IOC_NR(KFDPOOL_IOC_EXPORT_BATCH):
	case _IOC_NR(KFDPOOL_IOC_REVOKE_BATCH):
	case _IOC_NR(KFDPOOL_IOC_IMPORT_BATCH):
	case _IOC_NR(KFDPOOL_IOC_RELEASE_BATCH):
		fz_batch(t, _IOC_NR(c->cmd), p);
		break;
	case _IOC_NR(KFDPOOL_IOC_HANDLE_EXPORT): {
		struct kfdpool_handle_export *x = p;

		x->policy = rel_below(&t->seed, 4);
		break;
	}
	case _IOC_NR(KFDPOOL_IOC_POOL_IMPORT_HANDLE): {
		struct kfdpool_pool_import_handle *x = p;

		memcpy(HND(&x->handle)->pool_id, REC(&t->env->recs[0][0])->pool_id,
		       KFDPOOL_ID_LEN);
		HND(&x->handle)->magic = KFDPOOL_HANDLE_MAGIC;
		break;
	}
	}
}

/* Corrupt @p (@size bytes) one way or another, or leave it valid. */
static void fz_mutate(struct fz_thread *t, unsigned char *p, size_t size)
{
	size_t off, i;
	uint64_t v;

	switch (rel_below(&t->seed, 14)) {
	case 0: case 1: case 2: case 3: case 4: case 5: case 6:
		return;			/* valid: keep the state moving */
	case 7:				/* random bytes */
		for (i = 0; i < size; i++)
			p[i] = rel_rand(&t->seed);
		return;
	case 8:				/* a few flipped bits */
		for (i = 0; i < 1 + rel_below(&t->seed, 3); i++)
			p[rel_below(&t->seed, size)] ^=
				1u << rel_below(&t->seed, 8);
		return;
	case 9: case 10:		/* one u32 field */
		off = rel_below(&t->seed, size / 4) * 4;
		v = fz_value(&t->seed);
		memcpy(p + off, &v, 4);
		return;
	default:			/* one u64 field */
		if (size < 8)
			return;
		off = rel_below(&t->seed, size / 8) * 8;
		v = fz_value(&t->seed);
		memcpy(p + off, &v, 8);
	}
}

/*
 * Is @fd one the kernel just made for us?  Not if it is one of the set-up's
 * (the closed one's number is free, so new fds may take it).
 */
static bool fz_own_fd(struct fz_thread *t, int fd)
{
	struct fz_env *e = t->env;
	int i;

	for (i = 0; i < e->nfds; i++)
		if (fd == e->fds[i] && fd != e->closed && fd < FZ_FAKE_FD)
			return false;
	return !fs_fd_private(fd) && fcntl(fd, F_GETFD) >= 0;
}

static void fz_close(struct fz_thread *t, int fd)
{
	if (fd >= 0 && fz_own_fd(t, fd)) {
		close(fd);
		__atomic_add_fetch(&t->st->fds_closed, 1, __ATOMIC_RELAXED);
	}
}

/*
 * After a successful call: close every fd the kernel said it made, so the
 * fd table stays small and an fd it made without saying so shows up as a
 * leak at the end.  @buf is what we passed (only if it is our memory).
 */
static void fz_reap(struct fz_thread *t, unsigned int cmd, long ret,
		    unsigned char *buf)
{
	unsigned int usize = _IOC_SIZE(cmd), nr = _IOC_NR(cmd);
	size_t off;

	if (!buf || _IOC_TYPE(cmd) != KFDPOOL_IOC_MAGIC ||
	    !(_IOC_DIR(cmd) & _IOC_READ))
		goto batch;
	switch (nr) {
	case _IOC_NR(KFDPOOL_IOC_POOL_CREATE):
		off = offsetof(struct kfdpool_pool_create, fd);
		break;
	case _IOC_NR(KFDPOOL_IOC_POOL_IMPORT_HANDLE):
		off = offsetof(struct kfdpool_pool_import_handle, fd);
		break;
	case _IOC_NR(KFDPOOL_IOC_POOL_EXPORT):
		off = offsetof(struct kfdpool_pool_export, fd);
		break;
	case _IOC_NR(KFDPOOL_IOC_IMPORT):
		off = offsetof(struct kfdpool_import, fd);
		break;
	case _IOC_NR(KFDPOOL_IOC_ALLOC):	/* reached by random numbers */
		off = offsetof(struct kfdpool_alloc, fd);
		break;
	default:
		return;
	}
	/* Pool commands share numbers with nothing on the control device. */
	if (off + 4 <= usize) {
		uint32_t flags = 0;
		int fd;

		memcpy(&fd, buf + off, 4);
		if (nr == _IOC_NR(KFDPOOL_IOC_POOL_CREATE))
			memcpy(&flags, buf + offsetof(struct kfdpool_pool_create,
						      flags), 4);
		/* A persistent pool would outlive its fd: it goes first. */
		if ((flags & KFDPOOL_POOL_PERSIST) && fz_own_fd(t, fd))
			ioctl(fd, KFDPOOL_IOC_POOL_DESTROY,
			      &(struct kfdpool_pool_destroy){});
		fz_close(t, fd);
	}
	return;
batch:
	/*
	 * An older caller's smaller header runs with its tail read as zero:
	 * one that reaches elem_size is a batch like any other.
	 */
	if (buf && _IOC_TYPE(cmd) == KFDPOOL_IOC_MAGIC &&
	    nr == _IOC_NR(KFDPOOL_IOC_IMPORT_BATCH) &&
	    usize >= offsetofend(struct kfdpool_batch, elem_size) && ret > 0) {
		struct kfdpool_batch b = {};
		uint64_t start;
		long i;

		/* Elements in our batch buffer, aligned or not. */
		memcpy(&b, buf, usize < sizeof(b) ? usize : sizeof(b));
		start = b.ops - (uintptr_t)t->batch;
		if (b.ops < (uintptr_t)t->batch || start >= FZ_BATCH_BYTES ||
		    b.elem_size < sizeof(struct kfdpool_import))
			return;
		/* The kernel reads and writes min(elem_size, its size). */
		for (i = 0; i < ret && start + i * (uint64_t)b.elem_size +
			    sizeof(struct kfdpool_import) <= FZ_BATCH_BYTES; i++) {
			struct kfdpool_import x;

			memcpy(&x, t->batch + start + i * b.elem_size, sizeof(x));
			if (!x.status && x.fd >= 0)
				fz_close(t, x.fd);
		}
	}
}

/* Remember what valid calls made, so later calls can use it. */
static void fz_learn(struct fz_thread *t, unsigned int cmd, void *buf)
{
	/* @buf may be misaligned: copy out. */
	if (cmd == KFDPOOL_IOC_PIN) {
		struct kfdpool_pin x;

		memcpy(&x, buf, sizeof(x));
		t->entries[t->pidx][rel_below(&t->seed, FZ_RECS)] = x.entry_id;
		__atomic_add_fetch(&t->st->pins, 1, __ATOMIC_RELAXED);
	} else if (cmd == KFDPOOL_IOC_EXPORT) {
		struct kfdpool_export x;

		memcpy(&x, buf, sizeof(x));
		t->recs[t->pidx][rel_below(&t->seed, FZ_RECS)] = x.record;
		__atomic_add_fetch(&t->st->exports, 1, __ATOMIC_RELAXED);
	} else if (cmd == KFDPOOL_IOC_IMPORT) {
		__atomic_add_fetch(&t->st->imports, 1, __ATOMIC_RELAXED);
	}
}

static void fz_count(struct fz_thread *t, long ret, int err)
{
	__atomic_add_fetch(&t->st->calls, 1, __ATOMIC_RELAXED);
	if (ret >= 0)
		__atomic_add_fetch(&t->st->ok, 1, __ATOMIC_RELAXED);
	else if (err > 0 && err < 160)
		__atomic_add_fetch(&t->st->errnos[err], 1, __ATOMIC_RELAXED);
}

static void fz_trace(struct fz_thread *t, uint32_t cmd, int fd, long ret,
		     int uring)
{
	unsigned int i = t->ntrace++ % 64;

	t->trace[i].cmd = cmd;
	t->trace[i].fd = fd;
	t->trace[i].ret = ret;
	t->trace[i].uring = uring;
}

static void fz_one_ioctl(struct fz_thread *t)
{
	const struct fz_cmd *c = &fz_cmds[rel_below(&t->seed, FZ_NCMDS)];
	unsigned char *buf = t->arena;
	unsigned int cmd = c->cmd;
	uintptr_t arg;
	int fd, err;
	long ret;

	/* The fd: usually the right kind, sometimes anything. */
	switch (rel_below(&t->seed, 16)) {
	case 0:
		fd = fz_pick_fd(t);
		break;
	case 1:
		fd = c->on_ctl ? fz_pick_pool(t) : t->env->ctl;
		break;
	default:
		fd = c->on_ctl ? t->env->ctl : fz_pick_pool(t);
	}
	/* The command: usually right, sometimes another size, dir or nr. */
	switch (rel_below(&t->seed, 24)) {
	case 0:
		cmd = _IOC(_IOC_DIR(cmd), KFDPOOL_IOC_MAGIC, _IOC_NR(cmd),
			   rel_below(&t->seed, 2) ? rel_below(&t->seed, 512) :
			   c->size + 8 * (rel_below(&t->seed, 5) - 2));
		break;
	case 1:
		cmd = _IOC(rel_below(&t->seed, 4), KFDPOOL_IOC_MAGIC,
			   _IOC_NR(cmd), _IOC_SIZE(cmd));
		break;
	case 2:
		cmd = _IOC(rel_below(&t->seed, 4), KFDPOOL_IOC_MAGIC,
			   rel_below(&t->seed, 256), rel_below(&t->seed, 512));
		break;
	case 3:	/* anything at all, but only on our own files */
		if (fd == t->env->ctl || fd == fz_pick_pool(t))
			cmd = rel_rand(&t->seed);
		break;
	}
	/* Other drivers' ioctls are not ours to fuzz. */
	if (_IOC_TYPE(cmd) != KFDPOOL_IOC_MAGIC && fd != t->env->ctl) {
		int i, ours = 0;

		for (i = 0; i < FZ_POOLS; i++)
			ours |= fd == t->env->pools[i] || fd == t->env->imports[i];
		if (!ours)
			cmd = c->cmd;
	}
	/*
	 * A destroy would end a shared pool for every fuzzer at once (any
	 * owner fd may end its pool); the stateful half destroys its own.
	 */
	if (_IOC_TYPE(cmd) == KFDPOOL_IOC_MAGIC &&
	    (_IOC_NR(cmd) == _IOC_NR(KFDPOOL_IOC_POOL_DESTROY) ||
	     _IOC_NR(cmd) == _IOC_NR(KFDPOOL_IOC_POOL_DESTROY_ID)))
		cmd = c->cmd;

	fz_template(t, c, buf);
	fz_mutate(t, buf, c->size);
	fz_batch_clamp(t, cmd, buf);
	switch (rel_below(&t->seed, 30)) {
	case 0:
		arg = 0;
		buf = NULL;
		break;
	case 1:
		arg = (uintptr_t)t->env->unmapped;
		buf = NULL;
		break;
	case 2:	/* readable, not writable: the copy back fails */
		mprotect(t->ro, FZ_PAGE, PROT_READ | PROT_WRITE);
		memcpy(t->ro, buf, c->size);
		mprotect(t->ro, FZ_PAGE, PROT_READ);
		arg = (uintptr_t)t->ro;
		buf = t->ro;	/* _IOW batches still run: reap their fds */
		break;
	case 3:	/* misaligned (and still ours to read back) */
		arg = 1 + rel_below(&t->seed, 7);
		memmove(buf + arg, buf, c->size);
		buf += arg;
		arg = (uintptr_t)buf;
		break;
	case 4:	/* straddles the guard page */
		arg = (uintptr_t)t->arena + 2 * FZ_PAGE - c->size / 2;
		memcpy((void *)arg, t->arena, c->size / 2);
		buf = NULL;
		break;
	case 5:	/* a kernel address */
		arg = 0xffff888000000000ull + rel_below(&t->seed, 1 << 20);
		buf = NULL;
		break;
	default:
		arg = (uintptr_t)buf;
	}

	t->last.cmd = cmd;
	t->last.fd = fd;
	t->last.uring = 0;
	t->last.mode = arg == (uintptr_t)t->arena ? 0 : arg == (uintptr_t)t->ro ? 2 :
		       arg == (uintptr_t)buf ? 3 : 9;
	if (buf)
		memcpy(t->last.arg, buf, c->size < 168 ? c->size : 168);
	ret = ioctl(fd, cmd, arg);
	err = errno;
	t->last.ret = ret < 0 ? -err : ret;
	fz_count(t, ret, err);
	fs_count(&t->st->fs, cmd, false, t->last.ret);
	if (ret >= 0) {
		fz_trace(t, cmd, fd, ret, 0);
		fz_reap(t, cmd, ret, buf);
		if (buf && cmd == c->cmd && fd != t->env->ctl)
			fz_learn(t, cmd, buf);
	}
}

/* Is io_uring command @op command @cmd, whatever its size? */
static bool fz_uring_nr(uint32_t op, uint32_t cmd)
{
	return _IOC_TYPE(op) == KFDPOOL_IOC_MAGIC && _IOC_DIR(op) == _IOC_WRITE &&
	       _IOC_NR(op) == _IOC_NR(cmd);
}

static void fz_one_uring(struct fz_thread *t)
{
	static const uint32_t ops[] = {
		KFDPOOL_URING_EXPORT, KFDPOOL_URING_REVOKE,
		KFDPOOL_URING_IMPORT, KFDPOOL_URING_RELEASE,
		KFDPOOL_IOC_EXPORT_BATCH, KFDPOOL_IOC_REVOKE_BATCH,
		KFDPOOL_IOC_IMPORT_BATCH, KFDPOOL_IOC_RELEASE_BATCH,
	};
	uint32_t op = ops[rel_below(&t->seed, 8)];
	unsigned char payload[80] = {};
	int fd, res = 0, ret;

	fd = rel_below(&t->seed, 6) ? fz_pick_pool(t) : fz_pick_fd(t);
	switch (op) {
	case KFDPOOL_URING_EXPORT: {
		struct kfdpool_uring_export *x = (void *)payload;

		x->entry_id = fz_pick_entry(t);
		x->offset = rel_below(&t->seed, 4) * 1024;
		x->size = 1 + rel_below(&t->seed, 4096);
		switch (rel_below(&t->seed, 6)) {
		case 0:
			x->record_ptr = (uintptr_t)t->env->unmapped;
			break;
		case 1:
			x->record_ptr = (uintptr_t)t->ro;
			break;
		case 2:
			x->record_ptr = (uintptr_t)t->arena + 2 * FZ_PAGE - 32;
			break;
		default:
			x->record_ptr = (uintptr_t)t->arena;
		}
		break;
	}
	case KFDPOOL_URING_REVOKE:
	case KFDPOOL_URING_IMPORT: {
		struct kfdpool_uring_record *x = (void *)payload;

		x->record = *fz_pick_rec(t);
		if (op == KFDPOOL_URING_IMPORT && !rel_below(&t->seed, 3))
			x->flags = KFDPOOL_IMPORT_VALIDATE;
		break;
	}
	case KFDPOOL_URING_RELEASE: {
		struct kfdpool_release *x = (void *)payload;

		x->entry_id = fz_pick_entry(t);
		break;
	}
	default:
		fz_batch(t, _IOC_NR(op), (void *)payload);
	}
	fz_mutate(t, payload, sizeof(payload));
	if (!rel_below(&t->seed, 8))
		op = rel_below(&t->seed, 2) ? (uint32_t)rel_rand(&t->seed) :
		     _IOC(rel_below(&t->seed, 4), KFDPOOL_IOC_MAGIC,
			  rel_below(&t->seed, 256), rel_below(&t->seed, 128));
	fz_batch_clamp(t, op, payload);

	t->last.cmd = op;
	t->last.fd = fd;
	t->last.uring = 1;
	memcpy(t->last.arg, payload, sizeof(payload));
	ret = rel_uring_cmd(&t->ring, fd, op, payload, sizeof(payload), &res);
	t->last.ret = ret ? ret : res;
	fs_count(&t->st->fs, op, true, t->last.ret);
	__atomic_add_fetch(&t->st->uring, 1, __ATOMIC_RELAXED);
	if (ret == -ETIME) {
		unsigned int i;

		/* Never completed: say what it was (the seed replays it). */
		__atomic_add_fetch(&t->st->uring_lost, 1, __ATOMIC_RELAXED);
		fprintf(stderr, "# lost io_uring command 0x%x on fd %d, payload:",
			op, fd);
		for (i = 0; i < sizeof(payload); i++)
			fprintf(stderr, " %02x", payload[i]);
		fprintf(stderr, "\n");
	}
	if (ret) {
		fz_count(t, -1, -ret);
		return;
	}
	fz_count(t, res, -res);
	if (res < 0)
		return;
	__atomic_add_fetch(&t->st->uring_ok, 1, __ATOMIC_RELAXED);
	fz_trace(t, op, fd, res, 1);
	/*
	 * Commands are told apart by number: a size other than the uapi's is
	 * a later (or earlier) version of the same command, and an IMPORT of
	 * another size makes an fd as well.
	 */
	if (fz_uring_nr(op, KFDPOOL_URING_IMPORT) && res > 0)
		fz_close(t, res);
	else if (fz_uring_nr(op, KFDPOOL_IOC_IMPORT_BATCH))
		fz_reap(t, op, res, payload);
	else if (op == KFDPOOL_URING_EXPORT)
		memcpy(&t->recs[t->pidx][rel_below(&t->seed, FZ_RECS)],
		       t->arena, sizeof(struct kfdpool_record));
}

/*
 * The fuzzers unpin and revoke much faster than random calls pin and
 * export: now and then put live entries and records back, with valid calls,
 * so that the deeper paths keep being reached.
 */
static void fz_replenish(struct fz_thread *t)
{
	struct fz_env *e = t->env;
	unsigned int p, b;

	for (p = 0; p < FZ_POOLS; p++) {
		for (b = 0; b < FZ_BUFS; b++) {
			long id = rel_pin(e->pools[p], e->bufs[b], b);

			if (id > 0)
				t->entries[p][rel_below(&t->seed, FZ_RECS)] = id;
		}
		for (b = 0; b < 4; b++) {
			uint32_t id = t->entries[p][rel_below(&t->seed, FZ_RECS)];

			rel_export(e->pools[p], id, 0, 64,
				   &t->recs[p][rel_below(&t->seed, FZ_RECS)]);
		}
	}
}

/*
 * For the stateful half: whether ANY pool handles are allowed, and one of
 * pool @pool (shared) made with allow_any_handles on for that moment, so
 * that the fuzzers present an ANY handle while it is off (EPERM).
 */
static void fz_any_handle(int pool)
{
	struct kfdpool_handle_export x = {
		.policy = KFDPOOL_HANDLE_POLICY_ANY,
	};
	int was = kfd_any_handles(true);

	if (was < 0)
		return;
	fs_any_allowed = was;
	fs_have_any_handle = !ioctl(pool, KFDPOOL_IOC_HANDLE_EXPORT, &x);
	fs_any_handle = x.handle;
	if (!was)
		kfd_any_handles(false);
}

/* KFDPOOL_FUZZ_CHECK_FDS=1: one fuzzer, fds counted after every step. */
static int fz_check_fds;

/* Open fds not counting those the stateful half keeps on purpose. */
static int fz_fd_count(struct fz_thread *t)
{
	return rel_fd_count() - (t->fs_ok ? fs_nfds(&t->fs) : 0);
}

static void *fz_thread_main(void *arg)
{
	struct fz_thread *t = arg;
	uint64_t i;

	for (i = 0; i < t->calls; i++) {
		uint64_t stateful_calls = t->fs.calls;
		int before;

		if (!(i % 512))
			fz_replenish(t);
		before = fz_check_fds ? fz_fd_count(t) : 0;
		__atomic_add_fetch(&t->st->steps, 1, __ATOMIC_RELAXED);
		if (t->fs_ok && rel_below(&t->seed, 100) >= FZ_WILD_PCT)
			fs_step(&t->fs);
		else if (t->have_ring && !rel_below(&t->seed, 5))
			fz_one_uring(t);
		else
			fz_one_ioctl(t);
		if (fz_check_fds && fz_fd_count(t) != before) {
			unsigned int k;

			if (t->fs.calls != stateful_calls) {
				fprintf(stderr, "# fd count %d -> %d after stateful step %llu (seed replays it)\n",
					before, fz_fd_count(t),
					(unsigned long long)i);
				_exit(1);
			}
			fprintf(stderr, "# fd count %d -> %d after %s 0x%x on fd %d (arg mode %d): %ld; arg:",
				before, fz_fd_count(t),
				t->last.uring ? "uring" : "ioctl", t->last.cmd,
				t->last.fd, t->last.mode, t->last.ret);
			for (k = 0; k < sizeof(t->last.arg); k++)
				fprintf(stderr, " %02x", t->last.arg[k]);
			fprintf(stderr, "\n");
			_exit(1);
		}
	}
	if (t->fs_ok)
		fs_fini(&t->fs);
	return NULL;
}

/* @len bytes with @prot, followed by @guard inaccessible bytes. */
static void *fz_map_guard(size_t len, int prot, size_t guard)
{
	unsigned char *p = mmap(NULL, len + guard, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				-1, 0);

	if (p == MAP_FAILED)
		return NULL;
	mprotect(p + len, guard, PROT_NONE);
	if (prot != (PROT_READ | PROT_WRITE))
		mprotect(p, len, prot);
	return p;
}

static void *fz_map(size_t len, int prot)
{
	return fz_map_guard(len, prot, FZ_PAGE);
}

/* Say what the fds this process did not open itself are. */
static void fz_dump_fds(struct fz_env *env, struct fz_thread *th)
{
	char path[64], target[256], line[256];
	int fd, i;
	ssize_t n;
	FILE *f;

	for (fd = 3; fd < 4096; fd++) {
		bool ring = fd == rel_src_fd;

		for (i = 0; i < env->nfds; i++)
			ring |= fd == env->fds[i] && fd != env->closed &&
				fd < FZ_FAKE_FD;

		for (i = 0; i < FZ_THREADS; i++)
			ring |= th[i].have_ring && th[i].ring.fd == fd;
		ring |= fd == fs_importer;
		if (ring || fcntl(fd, F_GETFD) < 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = 0;
		fprintf(stderr, "# leaked fd %d: %s\n", fd, target);
		for (i = 0; i < FZ_THREADS * 64; i++) {
			struct fz_thread *x = &th[i / 64];
			unsigned int k = i % 64;

			if (k < x->ntrace)
				fprintf(stderr, "#   thread %d: %s 0x%x on fd %d: %ld\n",
					i / 64, x->trace[k].uring ? "uring" : "ioctl",
					x->trace[k].cmd, x->trace[k].fd,
					x->trace[k].ret);
		}
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
		f = fopen(path, "re");
		while (f && fgets(line, sizeof(line), f))
			fprintf(stderr, "#   %s", line);
		if (f)
			fclose(f);
	}
}

/*
 * One fuzzing process: FZ_THREADS threads, @calls calls in all.  Returns
 * the exit status: 0, or 1 if an fd leaked into this process.
 */
static int fz_process(struct fz_env *env, struct fz_stats *st, uint64_t seed,
		      uint64_t calls, int proc)
{
	struct fz_thread th[FZ_THREADS];
	pthread_t tid[FZ_THREADS];
	int i, j, fds_before, fds_after;
	int n = fz_check_fds ? 1 : FZ_THREADS;

	memset(th, 0, sizeof(th));
	for (i = 0; i < n; i++) {
		struct fz_thread *t = &th[i];

		t->env = env;
		t->st = st;
		t->id = proc * FZ_THREADS + i;
		t->seed = seed * 0x100000001b3ull + i + 1;
		t->calls = calls / n;
		t->arena = fz_map(2 * FZ_PAGE, PROT_READ | PROT_WRITE);
		t->ro = fz_map(FZ_PAGE, PROT_READ);
		t->batch = fz_map_guard(FZ_BATCH_BYTES, PROT_READ | PROT_WRITE,
					FZ_BATCH_GUARD);
		if (!t->arena || !t->ro || !t->batch)
			return 2;
		t->have_ring = !rel_ring_init(&t->ring, 8, IORING_SETUP_SQE128);
		memcpy(t->recs, env->recs, sizeof(t->recs));
		for (j = 0; j < FZ_POOLS * FZ_RECS; j++)
			t->entries[j / FZ_RECS][j % FZ_RECS] =
				env->entries[j / FZ_RECS][j % FZ_BUFS];
	}
	fds_before = rel_fd_count();
	/*
	 * Every stateful half is set up before any thread runs: a random
	 * half's import batch fills the fd table for a moment, and a set-up
	 * that met it would fail half-way.
	 */
	for (i = 0; i < n; i++) {
		th[i].fs_ok = !fs_init(&th[i].fs, &st->fs, env->ctl,
				       th[i].seed ^ 0x5eed5eed5eedull, th[i].id);
		if (!th[i].fs_ok)
			fprintf(stderr, "# fuzzer %d: no stateful half (set-up failed)\n",
				th[i].id);
	}
	for (i = 0; i < n; i++)
		pthread_create(&tid[i], NULL, fz_thread_main, &th[i]);
	for (i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
	fds_after = rel_fd_count();
	for (i = 0; i < n; i++)
		rel_ring_exit(&th[i].ring);
	if (fds_after != fds_before) {
		__atomic_add_fetch(&st->fd_leaks, fds_after - fds_before,
				   __ATOMIC_RELAXED);
		fz_dump_fds(env, &th[0]);
		return 1;
	}
	return 0;
}

FIXTURE(fuzz) {
	struct fz_env env;
	struct rel_counts base;
	struct fz_stats *st;
};

static int fz_add_fd(struct fz_env *e, int fd)
{
	e->fds[e->nfds++] = fd;
	return fd;
}

FIXTURE_SETUP(fuzz)
{
	struct fz_env *e = &self->env;
	int i, j, fd;

	kfd_state_restore();
	memset(e, 0, sizeof(*e));
	self->st = NULL;
	rel_counts_read(&self->base);
	e->ctl = open("/dev/kfdpool", O_RDWR | O_CLOEXEC);
	if (e->ctl < 0)
		SKIP(return, "/dev/kfdpool: %s (module not loaded?)",
		     strerror(errno));
	fd = rel_dmabuf_new(FZ_PAGE * 4);
	if (fd < 0)
		SKIP(return, "no dma-buf source (heap, udmabuf, vgem): %s",
		     strerror(-fd));
	close(fd);

	fz_add_fd(e, e->ctl);
	for (i = 0; i < FZ_POOLS; i++) {
		/* All handle types, fd handles only, not shareable+limited. */
		static const uint32_t types[] = { KFDPOOL_HANDLE_TYPES_ALL,
						  KFDPOOL_HANDLE_TYPE_FD, 0 };

		e->pools[i] = rel_pool_create(e->ctl, i == 2 ? 3 * FZ_PAGE * 4 : 0,
					      types[i], "fuzz");
		ASSERT_LE(0, e->pools[i]);
		fz_add_fd(e, e->pools[i]);
		e->imports[i] = types[i] & KFDPOOL_HANDLE_TYPE_FD ?
				rel_pool_export(e->pools[i]) : -1;
		if (e->imports[i] >= 0)
			fz_add_fd(e, e->imports[i]);
	}
	fz_any_handle(e->pools[0]);
	for (j = 0; j < FZ_BUFS; j++) {
		e->bufs[j] = rel_dmabuf_new(FZ_PAGE * (1 + j));
		ASSERT_LE(0, e->bufs[j]);
		fz_add_fd(e, e->bufs[j]);
		for (i = 0; i < FZ_POOLS; i++) {
			long id = rel_pin(e->pools[i], e->bufs[j], j);

			e->entries[i][j] = id > 0 ? id : 0;
		}
	}
	for (i = 0; i < FZ_POOLS; i++)
		for (j = 0; j < FZ_RECS; j++)
			if (!rel_export(e->pools[i], e->entries[i][j % FZ_BUFS],
					0, 64 + j, &e->recs[i][e->nrecs[i]]))
				e->nrecs[i]++;
	ASSERT_EQ(0, pipe2(e->pipe, O_CLOEXEC));
	fz_add_fd(e, e->pipe[0]);
	fz_add_fd(e, e->pipe[1]);
	e->memfd = fz_add_fd(e, memfd_create("fuzz", MFD_CLOEXEC));
	e->evfd = fz_add_fd(e, eventfd(0, EFD_CLOEXEC));
	/* A closed fd, -1, and numbers nobody holds. */
	e->closed = dup(e->ctl);
	close(e->closed);
	e->fds[e->nfds++] = e->closed;
	e->fds[e->nfds++] = -1;
	e->fds[e->nfds++] = FZ_FAKE_FD;	/* a batch of imports may reach it */
	e->fds[e->nfds++] = 0x7fffffff;
	/* Reserved but inaccessible, so no later mapping lands there. */
	e->unmapped = mmap(NULL, FZ_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);

	self->st = mmap(NULL, sizeof(*self->st), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->st);
	memset(self->st, 0, sizeof(*self->st));
}

/*
 * The selftests' importer module, for the stateful half's device steps
 * (fs_device()): loaded here unless it is already, and unloaded again by
 * whoever loaded it, so that the tests after this one load it themselves.
 */
static bool fz_importer_ours;

static void fz_importer_open(void)
{
	const char *ko = getenv("KFDPOOL_IMPORTER_KO");
	int ret;

	if (!ko || !*ko || access(ko, R_OK)) {
		ksft_print_msg("no importer module (KFDPOOL_IMPORTER_KO): ALLOC'd memory is not attached\n");
		return;
	}
	ret = rel_module_load(ko);
	fz_importer_ours = !ret;
	if (ret && ret != -EEXIST) {
		ksft_print_msg("importer module not loaded: %s\n", strerror(-ret));
		return;
	}
	fs_importer = importer_dev_open();
	if (fs_importer < 0)
		fs_importer = -1;
	/* The random half never aims at it. */
	fs_fd_mark(fs_importer, true);
}

static void fz_importer_close(void)
{
	if (fs_importer >= 0) {
		fs_fd_mark(fs_importer, false);
		close(fs_importer);
		fs_importer = -1;
	}
	if (fz_importer_ours)
		syscall(SYS_delete_module, "kfdpool_importer", O_NONBLOCK);
	fz_importer_ours = false;
}

FIXTURE_TEARDOWN(fuzz)
{
	fz_importer_close();
}

static double fz_pct(uint64_t part, uint64_t all)
{
	return all ? 100.0 * part / all : 0;
}

/* The three most frequent errnos of @err, as text. */
static void fz_top_errnos(const uint64_t *err, char *line, size_t len)
{
	int k, e, best, n = 0;
	bool used[FS_NERR] = {};

	line[0] = 0;
	for (k = 0; k < 3; k++) {
		best = 0;
		for (e = 1; e < FS_NERR; e++)
			if (!used[e] && err[e] > err[best])
				best = e;
		if (!best)
			break;
		used[best] = true;
		n += snprintf(line + n, len - n, "%s %s %llu", k ? "," : ";",
			      strerrorname_np(best) ?: "?",
			      (unsigned long long)err[best]);
	}
}

/* The figures: success fractions overall and per command, the model's. */
static void fz_print(struct __test_metadata *_metadata, struct fz_stats *st)
{
	struct fs_stats *fs = &st->fs;
	uint64_t calls = 0, ok = 0;
	char line[512];
	int i, n = 0;

	for (i = 0; i < FS_NOPS; i++) {
		calls += fs->calls[i];
		ok += fs->ok[i];
	}
	ksft_print_msg("fuzz: %llu steps, %llu calls, %.1f%% succeeded (stateful: %llu calls, %.1f%% succeeded; random: %llu calls, %.1f%% succeeded)\n",
		       (unsigned long long)st->steps, (unsigned long long)calls,
		       fz_pct(ok, calls), (unsigned long long)fs->stateful,
		       fz_pct(fs->stateful_ok, fs->stateful),
		       (unsigned long long)st->calls, fz_pct(st->ok, st->calls));
	for (i = 0; i < FS_NOPS; i++) {
		if (!fs->calls[i])
			continue;
		fz_top_errnos(fs->err[i], line, sizeof(line));
		ksft_print_msg("fuzz:   %-20s %8llu calls %5.1f%% succeeded%s\n",
			       fs_op_names[i], (unsigned long long)fs->calls[i],
			       fz_pct(fs->ok[i], fs->calls[i]), line);
	}
	ksft_print_msg("fuzz: stateful steps with one thing changed: %llu, calls that must fail: %llu; model checks %llu; children %llu (%llu killed); pools made anew %llu; violations %llu\n",
		       (unsigned long long)fs->mutated,
		       (unsigned long long)fs->must_fail,
		       (unsigned long long)fs->model_checks,
		       (unsigned long long)fs->children,
		       (unsigned long long)fs->killed,
		       (unsigned long long)fs->recreated,
		       (unsigned long long)fs->violations);
	ksft_print_msg("fuzz: persistent pools %llu (%llu calls over a cap), parked %llu, adopted %llu, destroyed %llu; user figures checked %llu times, debugfs %llu, importer module %llu\n",
		       (unsigned long long)fs->persistent,
		       (unsigned long long)fs->edquot,
		       (unsigned long long)fs->parked,
		       (unsigned long long)fs->adopted,
		       (unsigned long long)fs->destroyed,
		       (unsigned long long)fs->user_checks,
		       (unsigned long long)fs->debugfs,
		       (unsigned long long)fs->device);
	for (i = 1; i < 160; i++)
		if (st->errnos[i] && n < (int)sizeof(line) - 32)
			n += snprintf(line + n, sizeof(line) - n, " %s:%llu",
				      strerrorname_np(i) ?: "?",
				      (unsigned long long)st->errnos[i]);
	line[n] = 0;
	TH_LOG("random calls: %llu (%llu io_uring), fds closed: %llu, pins %llu, exports %llu, imports %llu; errors:%s",
	       (unsigned long long)st->calls, (unsigned long long)st->uring,
	       (unsigned long long)st->fds_closed,
	       (unsigned long long)st->pins, (unsigned long long)st->exports,
	       (unsigned long long)st->imports, line);
}

/* Compare the stats ioctl with the fd's fdinfo: the same figures. */
static void fz_check_fdinfo(struct __test_metadata *_metadata, int fd,
			    const struct kfdpool_pool_stats *st)
{
	char path[64], line[256];
	unsigned long long v;
	int seen = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "kfdpool-reserved:\t%llu", &v) == 1) {
			EXPECT_EQ(st->reserved_bytes, v);
			seen++;
		} else if (sscanf(line, "kfdpool-used:\t%llu", &v) == 1) {
			EXPECT_EQ(st->used_bytes, v);
			seen++;
		} else if (sscanf(line, "kfdpool-entries:\t%llu", &v) == 1) {
			EXPECT_EQ(st->entries, v);
			seen++;
		} else if (sscanf(line, "kfdpool-records:\t%llu", &v) == 1) {
			EXPECT_EQ(st->records, v);
			seen++;
		}
	}
	fclose(f);
	EXPECT_EQ(4, seen);
}

/*
 * With every file closed the module must unload, and load again for
 * whatever runs next.  Needs $KFDPOOL_KO (the VM runner sets it).
 */
static void fz_unload_reload(struct __test_metadata *_metadata)
{
	const char *what = "";
	int ret, fd;

	if (!getenv("KFDPOOL_KO") || !*getenv("KFDPOOL_KO")) {
		ksft_print_msg("module unload and reload not tried: KFDPOOL_KO not set\n");
		return;
	}
	ret = rel_module_reload(&what);
	ASSERT_EQ(0, ret) TH_LOG("%s: %s", what, strerror(-ret));
	/* devtmpfs makes the node as the misc device registers. */
	fd = open("/dev/kfdpool", O_RDWR | O_CLOEXEC);
	EXPECT_LE(0, fd);
	if (fd >= 0)
		close(fd);
	ksft_print_msg("module unloaded and loaded again\n");
}

TEST_F_TIMEOUT(fuzz, ioctl_and_uring, 3000)
{
	struct fz_env *e = &self->env;
	uint64_t seed = rel_seed("KFDPOOL_FUZZ_SEED");
	uint64_t calls = rel_env_u64("KFDPOOL_FUZZ_CALLS",
				     rel_debug_kernel() ? FZ_STEPS_DEBUG :
				     FZ_STEPS);
	struct kfdpool_pool_stats st;
	struct rel_counts now;
	long long max_persist, max_pbytes;
	bool device_importer;
	pid_t pids[FZ_PROCS];
	int i, status, nprocs;

	fz_check_fds = rel_env_u64("KFDPOOL_FUZZ_CHECK_FDS", 0) != 0;
	ksft_print_msg("KFDPOOL_FUZZ_SEED=0x%llx KFDPOOL_FUZZ_CALLS=%llu (%d processes x %d threads, dma-bufs from %s)\n",
		       (unsigned long long)seed, (unsigned long long)calls,
		       FZ_PROCS, FZ_THREADS, rel_src_name());

	/*
	 * Persistent pools, off by default, enabled for the run with caps a
	 * thread's persistent pools reach now and then, so that the model
	 * meets EDQUOT (a thread's user has three pools of a few pages each);
	 * each thread reads them back with QUERY.
	 */
	max_persist = kfd_param_get("max_user_persistent");
	max_pbytes = kfd_param_get("max_user_persistent_bytes");
	if (max_persist >= 0 && max_pbytes >= 0) {
		ASSERT_EQ(0, kfd_param_set("max_user_persistent", 2));
		ASSERT_EQ(0, kfd_param_set("max_user_persistent_bytes",
					   64 * 1024));
	}
	fz_importer_open();
	nprocs = fz_check_fds ? 1 : FZ_PROCS;
	for (i = 0; i < nprocs; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i])
			_exit(fz_process(e, self->st, seed + i,
					 calls / nprocs, i));
	}
	for (i = 0; i < nprocs; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status)) {
			TH_LOG("fuzzer %d: %s", i, WEXITSTATUS(status) == 1 ?
			       "an fd leaked into it" : "set-up failed");
		}
	}
	/*
	 * Put back what the fuzzers used before any assertion: this
	 * harness skips the teardown after a failed one.
	 */
	if (max_persist >= 0 && max_pbytes >= 0) {
		kfd_param_set("max_user_persistent", max_persist);
		kfd_param_set("max_user_persistent_bytes", max_pbytes);
	}
	device_importer = fs_importer >= 0;
	fz_importer_close();
	fz_print(_metadata, self->st);
	EXPECT_EQ(0, self->st->fd_leaks);
	EXPECT_EQ(0, self->st->uring_lost);
	EXPECT_EQ(0, self->st->fs.violations) {
		for (i = 0; i < FS_NMSG && self->st->fs.msg[i][0]; i++)
			TH_LOG("violation: %s", self->st->fs.msg[i]);
	}
	EXPECT_LE(calls - calls % (FZ_PROCS * FZ_THREADS), self->st->steps);
	if (rel_debug_kernel() && !getenv("KFDPOOL_FUZZ_CALLS")) {
		struct fs_stats *fs = &self->st->fs;

		EXPECT_LE(FZ_STATEFUL_DEBUG, fs->stateful);
		/* The model's persistent-pool steps and read-only views ran. */
		EXPECT_LT(0, fs->persistent);
		EXPECT_LT(0, fs->parked);
		EXPECT_LT(0, fs->adopted);
		EXPECT_LT(0, fs->destroyed);
		if (max_persist >= 0)
			EXPECT_LT(0, fs->edquot);
		EXPECT_LT(0, fs->user_checks);
		EXPECT_LT(0, fs->debugfs);
		if (device_importer)
			EXPECT_LT(0, fs->device);
	}

	/* Every pool's figures still add up, on every fd, in every view. */
	for (i = 0; i < FZ_POOLS; i++) {
		const char *bad;

		ASSERT_EQ(0, rel_stats(e->pools[i], &st));
		bad = rel_stats_invalid(&st);
		EXPECT_TRUE(bad == NULL) TH_LOG("pool %d owner fd: %s", i, bad);
		fz_check_fdinfo(_metadata, e->pools[i], &st);
		if (e->imports[i] >= 0) {
			ASSERT_EQ(0, rel_stats(e->imports[i], &st));
			bad = rel_stats_invalid(&st);
			EXPECT_TRUE(bad == NULL)
				TH_LOG("pool %d import fd: %s", i, bad);
			/* The fuzzers' copies of it are closed: one left. */
			EXPECT_EQ(1, st.import_fds);
			close(e->imports[i]);
			ASSERT_EQ(0, rel_stats(e->pools[i], &st));
			EXPECT_EQ(0, st.import_fds);
			/* Only the owner fd can hold imports now. */
			EXPECT_EQ(st.imported_bytes, st.fd_imported_bytes);
		}
	}

	/* Everything closed: back to the baseline. */
	for (i = 0; i < e->nfds; i++)
		if (e->fds[i] >= 0 && e->fds[i] < FZ_FAKE_FD &&
		    e->fds[i] != e->closed)
			close(e->fds[i]);
	if (rel_src_fd >= 0)
		close(rel_src_fd);
	/*
	 * A random call may have asked for a persistent pool (flags 1): it
	 * stays by design, so it goes by id before the count.
	 */
	kfd_persist_sweep("");
	EXPECT_TRUE(rel_counts_settle(&self->base, &now)) {
		TH_LOG("dma-bufs %ld -> %ld, pools %ld -> %ld, module refs %ld -> %ld",
		       self->base.dmabufs, now.dmabufs, self->base.pools,
		       now.pools, self->base.refcnt, now.refcnt);
	}
	fz_unload_reload(_metadata);
}

/*
 * The fd a command makes goes live only after the copy back succeeded: with
 * the struct on a read-only page the copy back fails, and no fd, import or
 * record may be left behind.
 */
TEST_F(fuzz, no_fd_leaks_when_copy_back_fails)
{
	struct fz_env *e = &self->env;
	struct kfdpool_pool_stats before, after;
	struct kfdpool_import imp = {};
	struct kfdpool_batch b = {};
	struct rel_counts c0, c1;
	unsigned char *ro;
	int fds;

	ro = fz_map(3 * FZ_PAGE, PROT_READ | PROT_WRITE);
	ASSERT_NE(NULL, ro);
	ASSERT_LT(0, e->nrecs[0]);

	/* Page 0: the ioctl structs; page 1: a batch array; page 2: spare. */
	imp.record = e->recs[0][0];
	memcpy(ro + 2048, &imp, sizeof(imp));
	memcpy(ro + FZ_PAGE, &imp, sizeof(imp));
	memcpy(ro + FZ_PAGE + sizeof(imp), &imp, sizeof(imp));
	b.ops = (uintptr_t)(ro + FZ_PAGE);
	b.count = 2;
	b.elem_size = sizeof(imp);
	memcpy(ro + 3072, &b, sizeof(b));
	mprotect(ro, 2 * FZ_PAGE, PROT_READ);

	ASSERT_EQ(0, rel_stats(e->pools[0], &before));
	rel_counts_read(&c0);
	fds = rel_fd_count();

	EXPECT_EQ(-1, ioctl(e->ctl, KFDPOOL_IOC_POOL_CREATE, ro));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(e->pools[0], KFDPOOL_IOC_POOL_EXPORT, ro));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(e->pools[0], KFDPOOL_IOC_IMPORT, ro + 2048));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(e->imports[0], KFDPOOL_IOC_IMPORT, ro + 2048));
	EXPECT_EQ(EFAULT, errno);
	/* A batch whose elements cannot be written back: none processed. */
	EXPECT_EQ(-1, ioctl(e->pools[0], KFDPOOL_IOC_IMPORT_BATCH, ro + 3072));
	EXPECT_EQ(EFAULT, errno);

	EXPECT_EQ(fds, rel_fd_count());
	ASSERT_EQ(0, rel_stats(e->pools[0], &after));
	EXPECT_EQ(before.fd_imports, after.fd_imports);
	EXPECT_EQ(before.imported_bytes, after.imported_bytes);
	EXPECT_EQ(before.import_fds, after.import_fds);
	EXPECT_EQ(before.records, after.records);
	rel_counts_read(&c1);
	EXPECT_EQ(c0.pools, c1.pools);
	EXPECT_EQ(c0.dmabufs, c1.dmabufs);
	EXPECT_EQ(c0.refcnt, c1.refcnt);
	munmap(ro, 4 * FZ_PAGE);
}

TEST_HARNESS_MAIN
