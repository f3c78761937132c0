/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The model of fuzz_test's stateful half (fuzz_state.h): what one fuzzing
 * thread made (pools, entries, records live and revoked, import fds and the
 * imports each holds, pool handles live and rotated away, a child), the
 * mutations a call may carry, and the checks.  Some pools are persistent:
 * made as a user of the thread's own (FS_UID_BASE + id), so that the
 * per-user figures and caps of persistent pools are the thread's alone;
 * such a pool may be parked (no owner fd), adopted again by owner handle
 * or by id, and destroyed.
 *
 * Nothing here asserts an errno: what a call returns updates the model, and
 * what is checked are the invariants that hold whatever the errno:
 *  - a call the ABI says must fail (bad flags or pad, a
 *    revoked, altered or foreign record, a rotated or altered handle, an
 *    owner command on an import fd, a read-only argument of a command that
 *    copies back) fails, and one that makes something leaves nothing behind;
 *  - a success agrees with the model: an import returns what was exported,
 *    an unpin revokes the records the entry had, a release drops an import
 *    that was held, nothing is revoked or released twice;
 *  - the pool's figures (stats ioctl, and the pool's element of
 *    POOL_LIST) equal the model's whenever no live child may hold
 *    anything of the pool (fs_child_on()): entries,
 *    draining entries, records, reserved, draining and imported bytes, each
 *    fd's imports, import fds, and used bytes (those of the entries that
 *    have a live record);
 *  - a pool ends with its owner fd, unless it is persistent: an import fd
 *    left over answers ENODEV; a persistent pool keeps its entries and
 *    records with no fd at all, until it is destroyed (then every fd of it
 *    answers ENODEV at once);
 *  - the thread's user's figures (QUERY as that user, debugfs "users"):
 *    its persistent pools, their entries' bytes and its live records equal
 *    the model's, and a persistent pool or pin past max_user_persistent or
 *    max_user_persistent_bytes fails with EDQUOT, one within them does not;
 *  - what the ABI pins to one errno does fail with it (ANY pool handles
 *    while allow_any_handles is off: EPERM; adoption while an owner fd is
 *    open: EBUSY; adoption of a pool that is not persistent: EOPNOTSUPP;
 *    an owner handle presented by another user or killed by a rotation:
 *    EACCES; adoption or destruction by id without CAP_SYS_ADMIN: EPERM).
 * A break is a violation: counted, printed, and the test fails.
 *
 * An unpinned entry goes as soon as no pool file holds an import of it,
 * whoever keeps its dma-buf open.
 */
#ifndef KFDPOOL_FUZZ_MODEL_H
#define KFDPOOL_FUZZ_MODEL_H

#include <grp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "reliability.h"
#include "importer_util.h"

#define FS_POOLS	3	/* pools of one thread */
#define FS_BUFS		6	/* dma-bufs of one thread, 1..6 pages */
#define FS_ABUFS	3	/* dma-bufs of ALLOC, kept to pin elsewhere */
#define FS_NBUF		(FS_BUFS + FS_ABUFS)
#define FS_ENTRIES	16	/* entry slots of a pool (live and draining) */
#define FS_RECS		32	/* live record slots of a pool */
#define FS_STALE	16	/* revoked records kept to present again */
#define FS_IMPS		3	/* import fds of a pool */
#define FS_FDS		(1 + FS_IMPS)	/* fd slot 0 is the owner fd */
#define FS_HANDLES	4
#define FS_MAXBATCH	16	/* elements of a generated batch */
#define FS_ELEM_MAX	160	/* bytes of a batch element, tail included */
#define FS_PAGE		4096
#define FS_CHECK_EVERY	64	/* steps on a pool between two checks */
#define FS_ELEMS_BYTES	(KFD_BATCH_MAX * FS_ELEM_MAX)
/* Thread id's user for persistent pools: no one else's figures mix in. */
#define FS_UID_BASE	61000

/* Per-command figures: _IOC_NR of the ioctls, then the io_uring forms. */
#define FS_OP_URING	0x20	/* + 0..3: EXPORT, REVOKE, IMPORT, RELEASE */
#define FS_OP_URING_V	0x24	/* + 0..3: the vectored batches */
#define FS_OP_OTHER	0x28	/* any other command number */
#define FS_NOPS		0x29

static const char *const fs_op_names[FS_NOPS] = {
	[0x00] = "QUERY", [0x01] = "POOL_CREATE",
	[0x02] = "POOL_IMPORT_HANDLE", [0x03] = "POOL_LIST",
	[0x04] = "POOL_ADOPT", [0x05] = "POOL_DESTROY_ID",
	[0x10] = "POOL_STATS",
	[0x11] = "POOL_EXPORT", [0x12] = "PIN", [0x13] = "UNPIN",
	[0x14] = "EXPORT", [0x15] = "REVOKE", [0x16] = "IMPORT",
	[0x17] = "RELEASE", [0x18] = "EXPORT_BATCH", [0x19] = "REVOKE_BATCH",
	[0x1a] = "IMPORT_BATCH", [0x1b] = "RELEASE_BATCH",
	[0x1c] = "HANDLE_EXPORT", [0x1d] = "HANDLE_ROTATE",
	[0x1e] = "ALLOC", [0x1f] = "POOL_DESTROY",
	[FS_OP_URING + 0] = "uring EXPORT", [FS_OP_URING + 1] = "uring REVOKE",
	[FS_OP_URING + 2] = "uring IMPORT", [FS_OP_URING + 3] = "uring RELEASE",
	[FS_OP_URING_V + 0] = "uring EXPORT_BATCH",
	[FS_OP_URING_V + 1] = "uring REVOKE_BATCH",
	[FS_OP_URING_V + 2] = "uring IMPORT_BATCH",
	[FS_OP_URING_V + 3] = "uring RELEASE_BATCH",
	[FS_OP_OTHER] = "other",
};

#define FS_NMSG 6

/*
 * A pool handle of policy ANY (of a pool fuzz_test shares), made before the
 * fuzzers start with allow_any_handles switched on for that moment, and
 * whether the administrator allows ANY handles (else EPERM for them).
 */
static struct kfdpool_pool_handle fs_any_handle;
static bool fs_have_any_handle, fs_any_allowed;

/*
 * The selftests' dma-buf importer module (selftests/importer), opened by
 * fuzz_test before the fuzzers start, or -1: a device's view of ALLOC'd
 * memory (importer_util.h).
 */
static int fs_importer = -1;

/* Figures of all fuzzers (in MAP_SHARED memory). */
#define FS_NERR 134	/* errnos counted per command */

struct fs_stats {
	uint64_t calls[FS_NOPS], ok[FS_NOPS];
	uint64_t err[FS_NOPS][FS_NERR];
	uint64_t stateful, stateful_ok;	/* calls made from the model */
	uint64_t mutated, must_fail;
	uint64_t model_checks, children, killed, recreated;
	uint64_t persistent, parked, adopted, destroyed, edquot, user_checks;
	uint64_t debugfs, device;
	uint64_t violations;
	char msg[FS_NMSG][256];
};

static inline unsigned int fs_op(uint32_t cmd, bool uring)
{
	unsigned int nr = _IOC_NR(cmd);

	if (_IOC_TYPE(cmd) != KFDPOOL_IOC_MAGIC)
		return FS_OP_OTHER;
	if (uring) {
		if (cmd == KFDPOOL_URING_EXPORT || cmd == KFDPOOL_URING_REVOKE ||
		    cmd == KFDPOOL_URING_IMPORT || cmd == KFDPOOL_URING_RELEASE)
			return FS_OP_URING + nr - _IOC_NR(KFDPOOL_URING_EXPORT);
		if (nr >= _IOC_NR(KFDPOOL_IOC_EXPORT_BATCH) &&
		    nr <= _IOC_NR(KFDPOOL_IOC_RELEASE_BATCH))
			return FS_OP_URING_V + nr -
			       _IOC_NR(KFDPOOL_IOC_EXPORT_BATCH);
		return FS_OP_OTHER;
	}
	return nr < FS_OP_URING && fs_op_names[nr] ? nr : FS_OP_OTHER;
}

/* Count one call and whether it succeeded (@ret >= 0). */
static inline void fs_count(struct fs_stats *st, uint32_t cmd, bool uring,
			    long ret)
{
	unsigned int op = fs_op(cmd, uring);

	__atomic_add_fetch(&st->calls[op], 1, __ATOMIC_RELAXED);
	if (ret >= 0)
		__atomic_add_fetch(&st->ok[op], 1, __ATOMIC_RELAXED);
	else if (-ret < FS_NERR)
		__atomic_add_fetch(&st->err[op][-ret], 1, __ATOMIC_RELAXED);
}

struct fs_entry {
	uint32_t id;		/* 0: a free slot */
	int buf;		/* the thread's dma-buf it pins */
	uint64_t size, cookie;
	bool draining;
	bool child;		/* a live child may hold imports of it */
	bool ghost;		/* an fd of ours held imports of it when we
				 * closed it: a fork of another thread may
				 * keep that file a moment longer */
	uint32_t bufgen;	/* s->bufgen[buf] when pinned */
	uint64_t ino;		/* its dma-buf's inode (diagnostics) */
};

/* An entry the model let go, for the diagnostics of a mismatch. */
struct fs_gone {
	uint32_t id;
	int buf;
	uint64_t ino;
	uint64_t call;
};

#define FS_GONE 8

struct fs_rec {
	struct kfdpool_record r;
	int ent;		/* its entry's slot */
	bool live;
};

struct fs_pool {
	int fd[FS_FDS];		/* [0] the owner fd; import fds or -1 */
	uint64_t fid[FS_FDS];	/* the file each fd names (kfdpool-file-id) */
	uint8_t id[KFDPOOL_ID_LEN];
	uint32_t types;
	uint64_t limit;
	struct fs_entry ent[FS_ENTRIES];
	uint32_t holds[FS_FDS][FS_ENTRIES];	/* imports each fd holds */
	struct fs_rec rec[FS_RECS];
	struct kfdpool_record stale[FS_STALE];	/* revoked */
	unsigned int nstale;
	struct kfdpool_pool_handle handle[FS_HANDLES];
	bool handle_dead[FS_HANDLES];	/* the key was rotated since */
	unsigned int nhandles;
	unsigned int since_check;
	struct fs_gone gone[FS_GONE];	/* the last entries let go */
	unsigned int ngone;
	bool broken;		/* out of step with the model: make anew */
	bool persist;		/* made with KFDPOOL_POOL_PERSIST, as s->uid:
				 * parked while fd[0] is -1 */
	bool child_owner;	/* the child adopted it: an owner fd is open */
	struct kfdpool_pool_handle owner[FS_HANDLES];	/* owner handles */
	bool owner_dead[FS_HANDLES];
	unsigned int nowner;
};

struct fs_thread {
	uint64_t seed;
	struct fs_stats *st;
	int id;			/* for messages: process * threads + thread */
	int ctl;
	int bufs[FS_NBUF];	/* [FS_BUFS...]: ALLOC's, -1 when free */
	uint64_t bufsize[FS_NBUF];
	uint32_t bufgen[FS_NBUF];	/* bumped when the slot's fd closes */
	int others[6];		/* not pool fds: files of other kinds, fds
				 * that are not open */
	struct fs_pool pool[FS_POOLS];
	struct rel_ring ring;	/* SQE128 */
	bool have_ring;
	struct rel_ring ring64;	/* 64-byte SQEs: commands are refused */
	bool have_ring64;
	unsigned char *ro;	/* a read-only page */
	unsigned char *buf;	/* 2 pages of scratch for arguments */
	unsigned char *elems;	/* batch elements: FS_ELEMS_BYTES */
	pid_t child;		/* 0: none */
	int child_pool;
	unsigned int child_left;	/* calls before it is killed */
	uint64_t calls;
	uid_t uid;		/* the user of the persistent pools */
	bool persist;		/* persistent pools are made (as @uid) */
	bool persist_unsure;	/* a figure differed: no more predictions */
	uint32_t max_persist;	/* QUERY's max_user_persistent */
	uint64_t max_pbytes;	/* QUERY's max_user_persistent_bytes */
	uint64_t pool_cap;	/* QUERY's default_pool_limit */
	uint64_t memlock;	/* RLIMIT_MEMLOCK, 0 for none */
	bool no_device;		/* the importer module cannot check here */
};

/* ------------------------------------------------------------------ */
/* Reporting                                                          */
/* ------------------------------------------------------------------ */

static void fs_violation(struct fs_thread *s, const char *fmt, ...)
{
	uint64_t n = __atomic_fetch_add(&s->st->violations, 1,
					__ATOMIC_RELAXED);
	char line[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "# fuzz: VIOLATION (fuzzer %d, call %llu): %s\n",
		s->id, (unsigned long long)s->calls, line);
	if (n < FS_NMSG)
		snprintf(s->st->msg[n], sizeof(s->st->msg[n]),
			 "fuzzer %d, call %llu: %s", s->id,
			 (unsigned long long)s->calls, line);
}

static inline uint64_t fs_below(struct fs_thread *s, uint64_t n)
{
	return rel_below(&s->seed, n);
}

/* The calling thread's call count, for the diagnostics. */
static __thread uint64_t fs_now_call;

/* One stateful ioctl; the result, or -errno. */
static long fs_ioctl(struct fs_thread *s, int fd, uint32_t cmd, void *arg)
{
	long ret = ioctl(fd, cmd, arg);

	if (ret < 0)
		ret = -errno;
	s->calls++;
	fs_now_call = s->calls;
	fs_count(s->st, cmd, false, ret);
	__atomic_add_fetch(&s->st->stateful, 1, __ATOMIC_RELAXED);
	if (ret >= 0)
		__atomic_add_fetch(&s->st->stateful_ok, 1, __ATOMIC_RELAXED);
	return ret;
}

/*
 * Make the calling thread's euid @uid, root's set of ids kept: the system
 * call changes one thread's credentials (glibc's wrapper would change every
 * thread's), and going back to 0 gives its capabilities back.
 */
static int fs_seteuid(uid_t uid)
{
	return syscall(SYS_setresuid, -1, uid, -1) ? -errno : 0;
}

/* fs_ioctl(), as the thread's own user when @as_user. */
static long fs_ioctl_as(struct fs_thread *s, int fd, uint32_t cmd, void *arg,
			bool as_user)
{
	long ret;

	if (!as_user)
		return fs_ioctl(s, fd, cmd, arg);
	if (fs_seteuid(s->uid))
		return -EPERM;
	ret = fs_ioctl(s, fd, cmd, arg);
	if (fs_seteuid(0)) {
		/* The rest of the run needs root: stop here, loudly. */
		fprintf(stderr, "# fuzz: fuzzer %d cannot become root again\n",
			s->id);
		_exit(3);
	}
	return ret;
}

/* One stateful io_uring command; the CQE's res, or -errno. */
static long fs_uring(struct fs_thread *s, struct rel_ring *r, int fd,
		     uint32_t op, const void *payload)
{
	int res = 0, ret;

	ret = rel_uring_cmd(r, fd, op, payload, 80, &res);
	if (ret == -ETIME)
		fs_violation(s, "io_uring command 0x%x never completed", op);
	if (ret)
		res = ret;
	s->calls++;
	fs_count(s->st, op, true, res);
	__atomic_add_fetch(&s->st->stateful, 1, __ATOMIC_RELAXED);
	if (res >= 0)
		__atomic_add_fetch(&s->st->stateful_ok, 1, __ATOMIC_RELAXED);
	return res;
}

/* ------------------------------------------------------------------ */
/* The model                                                          */
/* ------------------------------------------------------------------ */

/*
 * Whether a live child may hold imports of pool @p (its own pool), which
 * the model cannot see; the pool's figures are compared once it is reaped.
 */
static bool fs_child_on(struct fs_thread *s, int p)
{
	return s->child > 0 && s->child_pool == p;
}

/* Whether slot @P holds a pool: one with an owner fd, or a parked one. */
static bool fs_pool_exists(const struct fs_pool *P)
{
	return P->fd[0] >= 0 || P->persist;
}

/* A persistent pool with no owner fd: adoption gives it one. */
static bool fs_parked(const struct fs_pool *P)
{
	return P->persist && P->fd[0] < 0 && !P->child_owner;
}

/* Owner files of the pool open, as POOL_LIST and debugfs count them. */
static uint32_t fs_owners(const struct fs_pool *P)
{
	return P->fd[0] >= 0 || P->child_owner;
}

/* The first open fd slot of @P, or -1. */
static int fs_first_fd(const struct fs_pool *P)
{
	int f;

	for (f = 0; f < FS_FDS; f++)
		if (P->fd[f] >= 0)
			return f;
	return -1;
}

static uint32_t fs_holders(struct fs_pool *P, int e)
{
	uint32_t n = 0;
	int f;

	for (f = 0; f < FS_FDS; f++)
		n += P->holds[f][e] > 0;
	return n;
}

static void fs_free_entry(struct fs_pool *P, int e)
{
	struct fs_gone *g = &P->gone[P->ngone++ % FS_GONE];
	int f;

	g->id = P->ent[e].id;
	g->buf = P->ent[e].buf;
	g->ino = P->ent[e].ino;
	g->call = fs_now_call;

	memset(&P->ent[e], 0, sizeof(P->ent[e]));
	for (f = 0; f < FS_FDS; f++)
		P->holds[f][e] = 0;
}

/* Whether entry @e's dma-buf is still the one of our slot, open. */
static bool fs_buf_open(struct fs_thread *s, const struct fs_entry *E)
{
	return s->bufs[E->buf] >= 0 && E->bufgen == s->bufgen[E->buf];
}

/*
 * A draining entry nobody (known) holds any more is gone; kept while a
 * child may hold it (fs_child_on() then skips the pool's checks).
 */
static void fs_drop_drained(struct fs_thread *s, int p)
{
	struct fs_pool *P = &s->pool[p];
	struct fs_entry *E;
	int e;

	for (e = 0; e < FS_ENTRIES; e++) {
		E = &P->ent[e];
		if (E->id && E->draining && !E->child && !fs_holders(P, e))
			fs_free_entry(P, e);
	}
}

static void fs_stale_add(struct fs_pool *P, const struct kfdpool_record *r)
{
	P->stale[P->nstale++ % FS_STALE] = *r;
}

static int fs_find_entry(struct fs_pool *P, uint32_t id)
{
	int e;

	for (e = 0; e < FS_ENTRIES; e++)
		if (id && P->ent[e].id == id)
			return e;
	return -1;
}

static int fs_find_rec(struct fs_pool *P, const struct kfdpool_record *r)
{
	int i;

	for (i = 0; i < FS_RECS; i++)
		if (P->rec[i].live && !memcmp(&P->rec[i].r, r, sizeof(*r)))
			return i;
	return -1;
}

/* A random slot index of @n whose test @ok holds, or -1. */
#define FS_PICK(s, n, ok) ({						\
	int __i, __n = 0, __pick = -1;					\
	for (__i = 0; __i < (n); __i++)					\
		if (ok) __n++;						\
	if (__n) {							\
		int __k = fs_below(s, __n);				\
		for (__i = 0; __i < (n); __i++)				\
			if ((ok) && !__k--) { __pick = __i; break; }	\
	}								\
	__pick;								\
})

static int fs_live_entry(struct fs_thread *s, struct fs_pool *P)
{
	return FS_PICK(s, FS_ENTRIES, P->ent[__i].id && !P->ent[__i].draining);
}

static int fs_live_rec(struct fs_thread *s, struct fs_pool *P)
{
	return FS_PICK(s, FS_RECS, P->rec[__i].live);
}

static int fs_open_fd(struct fs_thread *s, struct fs_pool *P)
{
	return FS_PICK(s, FS_FDS, P->fd[__i] >= 0);
}

/* The fds the model holds, for the random half to keep its hands off. */
static uint64_t fs_fd_bits[4096 / 64];

static inline bool fs_fd_private(int fd)
{
	return fd >= 0 && fd < 4096 &&
	       (__atomic_load_n(&fs_fd_bits[fd / 64], __ATOMIC_RELAXED) >>
		(fd % 64) & 1);
}

static void fs_fd_mark(int fd, bool on)
{
	if (fd < 0 || fd >= 4096)
		return;
	if (on)
		__atomic_or_fetch(&fs_fd_bits[fd / 64], 1ull << (fd % 64),
				  __ATOMIC_RELAXED);
	else
		__atomic_and_fetch(&fs_fd_bits[fd / 64], ~(1ull << (fd % 64)),
				   __ATOMIC_RELAXED);
}

/*
 * The number after "@key:" in @fd's fdinfo: UINT64_MAX when there is no
 * such line, 0 when fdinfo could not be read (the random half's import
 * batches fill the fd table for a moment: EMFILE).
 */
static uint64_t fs_fdinfo(int fd, const char *key)
{
	unsigned long long v = UINT64_MAX;
	char path[64], line[128];
	size_t len = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ':' &&
		    sscanf(line + len + 1, "%llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* The kfdpool-file-id of pool fd @fd; see fs_fdinfo(). */
static uint64_t fs_file_id(int fd)
{
	return fs_fdinfo(fd, "kfdpool-file-id");
}

/* Fd slot @f of @P is @fd, a pool file the model just made. */
static void fs_slot_set(struct fs_pool *P, int f, int fd)
{
	P->fd[f] = fd;
	P->fid[f] = fs_file_id(fd);
	fs_fd_mark(fd, true);
}

/*
 * The model's imports are per slot and the kernel's per file: a slot whose
 * number came to name another file (something closed it, and the number
 * was taken again) would make the model wrong, not the module.  Say which
 * slots no longer name their file, as a violation; return how many (0 when
 * all do).
 */
static int fs_slots_moved(struct fs_thread *s, int p)
{
	struct fs_pool *P = &s->pool[p];
	int f, moved = 0;
	uint64_t now;

	for (f = 0; f < FS_FDS; f++) {
		if (P->fd[f] < 0)
			continue;
		now = fs_file_id(P->fd[f]);
		if (!P->fid[f])		/* unknown when the slot was set */
			P->fid[f] = now;
		if (!now || now == P->fid[f])
			continue;
		moved++;
		fprintf(stderr, "# pool %d: fd slot %d (fd %d) names file %llu, opened as %llu\n",
			p, f, P->fd[f], (unsigned long long)now,
			(unsigned long long)P->fid[f]);
	}
	if (moved)
		fs_violation(s, "pool %d: an fd slot names another file (the harness's fault)",
			     p);
	return moved;
}

/* Close import fd slot @f: its imports are dropped with it. */
static void fs_close_fd(struct fs_thread *s, int p, int f)
{
	struct fs_pool *P = &s->pool[p];
	int e;

	fs_fd_mark(P->fd[f], false);
	close(P->fd[f]);
	P->fd[f] = -1;
	for (e = 0; e < FS_ENTRIES; e++) {
		if (P->holds[f][e])
			P->ent[e].ghost = true;
		P->holds[f][e] = 0;
	}
	fs_drop_drained(s, p);
}

/* ------------------------------------------------------------------ */
/* Mutations                                                          */
/* ------------------------------------------------------------------ */

enum fs_mut {
	FS_VALID,
	FS_BAD_FLAGS,		/* an unknown flag bit: must fail */
	FS_BAD_PAD,		/* a non-zero pad: must fail */
	FS_LONG_ZERO,		/* a bigger struct, zero tail: as valid */
	FS_LONG_TAIL,		/* a bigger struct, non-zero tail: either */
	FS_READ_ONLY,		/* the copy back faults: must fail, undone */
	FS_IMPORT_FD,		/* an owner command on an import fd: must fail */
	FS_OTHER_FILE,		/* not a pool (dma-buf, pipe, control...) */
	FS_SEMANTIC,		/* the command's own: records, ids, ranges */
	FS_NMUT,
};

/* What to do with the next call: valid two times in three. */
static enum fs_mut fs_pick_mut(struct fs_thread *s)
{
	if (fs_below(s, 3))
		return FS_VALID;
	__atomic_add_fetch(&s->st->mutated, 1, __ATOMIC_RELAXED);
	if (fs_below(s, 2))
		return FS_SEMANTIC;
	return 1 + fs_below(s, FS_NMUT - 1);
}

/* Where an ioctl struct keeps its flags and pad, and what it is. */
struct fs_layout {
	uint32_t cmd;
	int flags;		/* offset of a __u32, -1 if none */
	int bad_bit;		/* the lowest flag bit no version defines */
	int pad;		/* offset, -1 if none */
	int pad_len;
	bool owner_only;
	bool copies_back;	/* _IOWR: a read-only argument must fail */
};

static const struct fs_layout fs_layouts[] = {
#define L(c, s, f, b, p, o)						\
	{ c, offsetof(struct s, f), b, p, 4, o,				\
	  (_IOC_DIR(c) & _IOC_READ) != 0 }
	L(KFDPOOL_IOC_PIN, kfdpool_pin, flags, 0,
	  offsetof(struct kfdpool_pin, pad), true),
	L(KFDPOOL_IOC_UNPIN, kfdpool_unpin, flags, 0, -1, true),
	L(KFDPOOL_IOC_EXPORT, kfdpool_export, flags, 0,
	  offsetof(struct kfdpool_export, pad), true),
	L(KFDPOOL_IOC_REVOKE, kfdpool_revoke, flags, 0, -1, true),
	L(KFDPOOL_IOC_IMPORT, kfdpool_import, flags, 1, -1, false),
	L(KFDPOOL_IOC_RELEASE, kfdpool_release, flags, 0,
	  offsetof(struct kfdpool_release, pad), false),
	L(KFDPOOL_IOC_POOL_EXPORT, kfdpool_pool_export, flags, 0, -1, true),
	L(KFDPOOL_IOC_POOL_STATS, kfdpool_pool_stats, flags, 2,
	  offsetof(struct kfdpool_pool_stats, pad), false),
	L(KFDPOOL_IOC_HANDLE_EXPORT, kfdpool_handle_export, flags, 1,
	  offsetof(struct kfdpool_handle_export, pad), true),
	L(KFDPOOL_IOC_HANDLE_ROTATE, kfdpool_handle_rotate, flags, 0,
	  offsetof(struct kfdpool_handle_rotate, pad), true),
	L(KFDPOOL_IOC_POOL_CREATE, kfdpool_pool_create, flags, 1,
	  offsetof(struct kfdpool_pool_create, pad), false),
	L(KFDPOOL_IOC_POOL_IMPORT_HANDLE, kfdpool_pool_import_handle, flags,
	  0, offsetof(struct kfdpool_pool_import_handle, handle) +
	  offsetof(struct kfd_hnd, pad), false),
	L(KFDPOOL_IOC_EXPORT_BATCH, kfdpool_batch, flags, 0,
	  offsetof(struct kfdpool_batch, pad), true),
	L(KFDPOOL_IOC_REVOKE_BATCH, kfdpool_batch, flags, 0,
	  offsetof(struct kfdpool_batch, pad), true),
	L(KFDPOOL_IOC_IMPORT_BATCH, kfdpool_batch, flags, 0,
	  offsetof(struct kfdpool_batch, pad), false),
	L(KFDPOOL_IOC_RELEASE_BATCH, kfdpool_batch, flags, 0,
	  offsetof(struct kfdpool_batch, pad), false),
	L(KFDPOOL_IOC_ALLOC, kfdpool_alloc, flags, 0,
	  offsetof(struct kfdpool_alloc, pad), true),
	L(KFDPOOL_IOC_POOL_LIST, kfdpool_pool_list, flags, 0,
	  offsetof(struct kfdpool_pool_list, pad), false),
	L(KFDPOOL_IOC_POOL_ADOPT, kfdpool_pool_adopt, flags, 1, -1, false),
	L(KFDPOOL_IOC_POOL_DESTROY, kfdpool_pool_destroy, flags, 0,
	  offsetof(struct kfdpool_pool_destroy, pad), true),
	L(KFDPOOL_IOC_POOL_DESTROY_ID, kfdpool_pool_destroy_id, flags, 0,
	  offsetof(struct kfdpool_pool_destroy_id, pad), false),
	{ KFDPOOL_IOC_QUERY, -1, 0, offsetof(struct kfdpool_query, pad), 4,
	  false, true },
#undef L
};

static const struct fs_layout *fs_layout(uint32_t cmd)
{
	size_t i;

	for (i = 0; i < sizeof(fs_layouts) / sizeof(fs_layouts[0]); i++)
		if (fs_layouts[i].cmd == cmd)
			return &fs_layouts[i];
	return NULL;
}

/*
 * A call as made: the fd, the command number (its size may differ from the
 * uapi's), the argument (in s->buf, or s->ro), and whether it must fail.
 */
struct fs_call {
	int fd;
	uint32_t cmd;
	void *arg;
	bool must_fail;
	bool read_only;
	enum fs_mut mut;
	const char *why;	/* what made it a must-fail call */
	int want;		/* -errno it must fail with (0: any) */
	bool as_user;		/* made as the thread's user (s->uid) */
};

/*
 * Whether mutation @m leaves the struct and the fd as the ABI wants them:
 * then an errno the model predicts is the one the call must return.
 */
static bool fs_plain(enum fs_mut m)
{
	return m == FS_VALID || m == FS_LONG_ZERO || m == FS_SEMANTIC;
}

/*
 * Apply a struct-level mutation @m to the call of @cmd whose valid argument
 * (@size bytes) is in s->buf, aimed at @fd of pool @p.  Semantic mutations
 * are the caller's.
 */
static void fs_apply(struct fs_thread *s, struct fs_call *c, int p,
		     uint32_t cmd, size_t size, enum fs_mut m)
{
	const struct fs_layout *l = fs_layout(cmd);
	struct fs_pool *P = p >= 0 ? &s->pool[p] : NULL;
	unsigned char *b = s->buf;
	uint32_t flags;
	size_t extra;
	int f;

	c->cmd = cmd;
	c->arg = b;
	c->mut = m;
	switch (m) {
	case FS_BAD_FLAGS:
		if (!l || l->flags < 0)
			break;
		memcpy(&flags, b + l->flags, 4);
		flags |= 1u << (l->bad_bit + fs_below(s, 32 - l->bad_bit));
		memcpy(b + l->flags, &flags, 4);
		c->must_fail = true;
		c->why = "unknown flags";
		break;
	case FS_BAD_PAD:
		if (!l || l->pad < 0)
			break;
		b[l->pad + fs_below(s, l->pad_len)] = 1 + fs_below(s, 255);
		c->must_fail = true;
		c->why = "non-zero pad";
		break;
	case FS_LONG_ZERO:
	case FS_LONG_TAIL:
		extra = 8 * (1 + fs_below(s, 8));
		memset(b + size, 0, extra);
		if (m == FS_LONG_TAIL)
			b[size + fs_below(s, extra)] = 1 + fs_below(s, 255);
		c->cmd = _IOC(_IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(cmd),
			      size + extra);
		break;
	case FS_READ_ONLY:
		if (!l || !l->copies_back)
			break;
		mprotect(s->ro, FS_PAGE, PROT_READ | PROT_WRITE);
		memcpy(s->ro, b, size);
		mprotect(s->ro, FS_PAGE, PROT_READ);
		c->arg = s->ro;
		c->read_only = true;
		c->must_fail = true;
		c->why = "read-only argument";
		break;
	case FS_IMPORT_FD:
		if (!l || !l->owner_only || !P)
			break;
		f = FS_PICK(s, FS_FDS, __i && P->fd[__i] >= 0);
		if (f < 0)
			break;
		c->fd = P->fd[f];
		c->must_fail = true;
		c->why = "owner command on an import fd";
		break;
	case FS_OTHER_FILE:
		if (!P)
			break;
		c->fd = s->others[fs_below(s, 6)];
		c->must_fail = true;
		c->why = "not a pool fd";
		break;
	default:
		break;
	}
	if (c->must_fail)
		__atomic_add_fetch(&s->st->must_fail, 1, __ATOMIC_RELAXED);
}

/* Make the call; a must-fail call that succeeded is a violation. */
static long fs_call(struct fs_thread *s, struct fs_call *c, const char *what)
{
	long ret = fs_ioctl_as(s, c->fd, c->cmd, c->arg, c->as_user);

	if (ret >= 0 && c->must_fail)
		fs_violation(s, "%s succeeded with %s", what, c->why);
	else if (c->want && ret != c->want)
		fs_violation(s, "%s with %s: %ld, not %d", what, c->why, ret,
			     c->want);
	/* The outputs, wherever they went. */
	if (c->read_only)
		memcpy(s->buf, s->ro, _IOC_SIZE(c->cmd) < FS_PAGE ?
		       _IOC_SIZE(c->cmd) : FS_PAGE);
	return ret;
}

/* Alter one field of a record so that it must no longer be accepted. */
static const char *fs_spoil_record(struct fs_thread *s,
				   struct kfdpool_record *r)
{
	switch (fs_below(s, 8)) {
	case 0:
		REC(r)->pool_id[fs_below(s, KFDPOOL_ID_LEN)] ^=
			1 << fs_below(s, 8);
		return "record with another pool id";
	case 1:
		REC(r)->magic += fs_below(s, 2) ? 1 : -1;
		return "record with a bad magic";
	case 2:
		REC(r)->record_id += fs_below(s, 2) ? 1 : -1;
		return "record with another record id";
	case 3:
		REC(r)->entry_id += fs_below(s, 2) ? 1 : -1;
		return "record with another entry id";
	case 4:
		REC(r)->generation += fs_below(s, 2) ? 1 : -1;
		return "record with another generation";
	case 5:
		REC(r)->offset += fs_below(s, 2) ? 1 : -1;
		return "record with another offset";
	case 6:
		REC(r)->size += fs_below(s, 2) ? 1 : -1;
		return "record with another size";
	default:
		REC(r)->nonce[fs_below(s, 16)] ^= 1 << fs_below(s, 8);
		return "record with another nonce";
	}
}

/*
 * A record to present to pool @p: a live one (*@rec_slot set), or with
 * @spoil, one that must not be accepted: revoked, of another pool, or
 * altered.  Returns NULL when it has none to give, else why it must fail
 * ("" for a live record).
 */
static const char *fs_pick_record(struct fs_thread *s, int p, bool spoil,
				  struct kfdpool_record *out, int *rec_slot)
{
	struct fs_pool *P = &s->pool[p];
	int i, q;

	*rec_slot = -1;
	if (spoil) {
		switch (fs_below(s, 3)) {
		case 0:
			if (!P->nstale)
				break;
			*out = P->stale[fs_below(s, P->nstale < FS_STALE ?
						 P->nstale : FS_STALE)];
			/* The same bytes may have been exported again? No:
			 * every export gets a fresh nonce and generation. */
			return "revoked record";
		case 1:
			q = (p + 1 + fs_below(s, FS_POOLS - 1)) % FS_POOLS;
			i = fs_live_rec(s, &s->pool[q]);
			if (i < 0)
				break;
			*out = s->pool[q].rec[i].r;
			return "record of another pool";
		}
		i = fs_live_rec(s, P);
		if (i < 0)
			return NULL;
		*out = P->rec[i].r;
		return fs_spoil_record(s, out);
	}
	i = fs_live_rec(s, P);
	if (i < 0)
		return NULL;
	*out = P->rec[i].r;
	*rec_slot = i;
	return "";
}


/* ------------------------------------------------------------------ */
/* What a success means for the model, and whether it may be           */
/* ------------------------------------------------------------------ */

static int fs_broken(struct fs_thread *s, int p, const char *fmt, ...)
{
	char line[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fs_violation(s, "pool %d: %s", p, line);
	fs_slots_moved(s, p);
	s->pool[p].broken = true;
	return -1;
}

/* The live entry of @P that pins dma-buf slot @b as it is now, or -1. */
static int fs_buf_live(struct fs_thread *s, struct fs_pool *P, int b)
{
	int e;

	for (e = 0; e < FS_ENTRIES; e++)
		if (P->ent[e].id && !P->ent[e].draining && P->ent[e].buf == b &&
		    P->ent[e].bufgen == s->bufgen[b])
			return e;
	return -1;
}

static int fs_did_pin(struct fs_thread *s, int p, int b,
		       const struct kfdpool_pin *x)
{
	struct fs_pool *P = &s->pool[p];
	int e;

	if (b < 0)
		return fs_broken(s, p, "PIN of no dma-buf of ours succeeded");
	if (x->size != s->bufsize[b])
		return fs_broken(s, p, "PIN size %llu, dma-buf has %llu",
				 (unsigned long long)x->size,
				 (unsigned long long)s->bufsize[b]);
	if (!x->entry_id || fs_find_entry(P, x->entry_id) >= 0)
		return fs_broken(s, p, "PIN gave entry id %u, in use",
				 x->entry_id);
	e = FS_PICK(s, FS_ENTRIES, !P->ent[__i].id);
	if (e < 0)
		return fs_broken(s, p, "more entries than the model holds");
	P->ent[e].id = x->entry_id;
	P->ent[e].buf = b;
	P->ent[e].bufgen = s->bufgen[b];
	P->ent[e].size = x->size;
	P->ent[e].cookie = x->cookie;
	{
		struct stat sb;

		P->ent[e].ino = fstat(s->bufs[b], &sb) ? 0 : sb.st_ino;
	}
	return 0;
}

/*
 * ALLOC made dma-buf @fd of @size bytes, pinned in @p: it takes an ALLOC
 * slot (the oldest is closed when none is free) and an entry.
 */
static void fs_buf_close(struct fs_thread *s, int b);

static int fs_did_alloc(struct fs_thread *s, int p, uint64_t size,
			uint64_t cookie, const struct kfdpool_alloc *x)
{
	struct kfdpool_pin pin = { .size = size, .cookie = cookie,
				   .entry_id = x->entry_id };
	int a;

	if (x->fd < 0) {
		fs_broken(s, p, "ALLOC succeeded without an fd");
		return -1;
	}
	a = FS_PICK(s, FS_ABUFS, s->bufs[FS_BUFS + __i] < 0);
	if (a < 0) {
		a = fs_below(s, FS_ABUFS);
		fs_buf_close(s, FS_BUFS + a);
	}
	a += FS_BUFS;
	s->bufs[a] = x->fd;
	s->bufsize[a] = size;
	fs_fd_mark(x->fd, true);
	if (fs_did_pin(s, p, a, &pin))
		return -1;
	return 0;
}

static int fs_did_unpin(struct fs_thread *s, int p,
			 const struct kfdpool_unpin *x)
{
	struct fs_pool *P = &s->pool[p];
	int e = fs_find_entry(P, x->entry_id), i;
	uint32_t recs = 0;
	bool held;

	if (e < 0 || P->ent[e].draining)
		return fs_broken(s, p, "UNPIN of entry %u, not live, succeeded",
				 x->entry_id);
	for (i = 0; i < FS_RECS; i++)
		recs += P->rec[i].live && P->rec[i].ent == e;
	if (x->revoked != recs)
		return fs_broken(s, p, "UNPIN revoked %u records, entry had %u",
				 x->revoked, recs);
	held = fs_holders(P, e) > 0;
	/*
	 * Without imports of ours it may still be draining: a child's, or a
	 * file of ours another thread's fork has not closed yet.
	 */
	if (held ? !x->draining : x->draining && !P->ent[e].child &&
	    !P->ent[e].ghost)
		return fs_broken(s, p, "UNPIN draining %u, entry %s imports",
				 x->draining, held ? "has" : "has no");
	for (i = 0; i < FS_RECS; i++) {
		if (P->rec[i].live && P->rec[i].ent == e) {
			P->rec[i].live = false;
			fs_stale_add(P, &P->rec[i].r);
		}
	}
	if (x->draining)
		P->ent[e].draining = true;
	else
		fs_free_entry(P, e);
	fs_drop_drained(s, p);
	return 0;
}

static int fs_did_export(struct fs_thread *s, int p,
			  const struct kfdpool_export *x)
{
	struct fs_pool *P = &s->pool[p];
	const struct kfdpool_record *r = &x->record;
	int e = fs_find_entry(P, x->entry_id), i;

	if (e < 0 || P->ent[e].draining)
		return fs_broken(s, p, "EXPORT from entry %u, not live, succeeded",
				 x->entry_id);
	if (x->offset > P->ent[e].size ||
	    x->size > P->ent[e].size - x->offset || !x->size)
		return fs_broken(s, p, "EXPORT of %llu+%llu from %llu bytes succeeded",
				 (unsigned long long)x->offset,
				 (unsigned long long)x->size,
				 (unsigned long long)P->ent[e].size);
	if (memcmp(REC(r)->pool_id, P->id, KFDPOOL_ID_LEN) ||
	    REC(r)->magic != KFDPOOL_RECORD_MAGIC || REC(r)->entry_id != x->entry_id ||
	    REC(r)->offset != x->offset || REC(r)->size != x->size)
		return fs_broken(s, p, "EXPORT made a record that is not what was asked");
	i = FS_PICK(s, FS_RECS, !P->rec[__i].live);
	if (i < 0)
		return fs_broken(s, p, "more records than the model holds");
	P->rec[i].r = *r;
	P->rec[i].ent = e;
	P->rec[i].live = true;
	return 0;
}

static int fs_did_revoke(struct fs_thread *s, int p,
			  const struct kfdpool_record *r)
{
	struct fs_pool *P = &s->pool[p];
	int i = fs_find_rec(P, r);

	if (i < 0)
		return fs_broken(s, p, "REVOKE of a record that is not live succeeded");
	P->rec[i].live = false;
	fs_stale_add(P, r);
	return 0;
}

/* @x: the element as presented (record, flags) with the outputs. */
static int fs_did_import(struct fs_thread *s, int p, int f,
			  const struct kfdpool_import *x, long fd)
{
	struct fs_pool *P = &s->pool[p];
	int i = fs_find_rec(P, &x->record), e;

	if (!(x->flags & KFDPOOL_IMPORT_VALIDATE) && fd >= 0)
		close(fd);
	if (i < 0)
		return fs_broken(s, p, "IMPORT of a record that is not live succeeded");
	e = P->rec[i].ent;
	if (x->offset != REC(&P->rec[i].r)->offset || x->size != REC(&P->rec[i].r)->size ||
	    x->entry_size != P->ent[e].size || x->cookie != P->ent[e].cookie ||
	    x->entry_id != P->ent[e].id)
		return fs_broken(s, p, "IMPORT returned other than what was exported");
	if (x->flags & KFDPOOL_IMPORT_VALIDATE) {
		if (!P->holds[f][e])
			return fs_broken(s, p, "IMPORT VALIDATE without an import succeeded");
		return 0;
	}
	if (fd < 0)
		return fs_broken(s, p, "IMPORT succeeded without an fd");
	P->holds[f][e]++;
	return 0;
}

static int fs_did_release(struct fs_thread *s, int p, int f, uint32_t id)
{
	struct fs_pool *P = &s->pool[p];
	int e = fs_find_entry(P, id);

	if (e < 0 || !P->holds[f][e])
		return fs_broken(s, p, "RELEASE of entry %u, not held, succeeded",
				 id);
	P->holds[f][e]--;
	fs_drop_drained(s, p);
	return 0;
}

/* ------------------------------------------------------------------ */
/* The model against the pool's figures                                */
/* ------------------------------------------------------------------ */

/* The model's figures of a pool. */
struct fs_figs {
	uint64_t reserved, draining, imported, used;
	uint64_t fdbytes[FS_FDS];
	uint32_t nent, ndrain, nrec, nimp, fdimps[FS_FDS];
};

/* A pool's figure as the module reports it, and the model's. */
struct fs_fig {
	const char *name;
	uint64_t got, want;
};

#define FS_FIG(obj, field, want) \
	{ #field, (uint64_t)(obj)->field, (uint64_t)(want) }

/*
 * The first of @n figures that differs from the model's, told in @what
 * after @where ("field got, model want"); NULL when all agree.
 */
static const char *fs_figs_cmp(char *what, size_t len, const char *where,
			       const struct fs_fig *f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (f[i].got == f[i].want)
			continue;
		snprintf(what, len, "%s%s %llu, model %llu", where, f[i].name,
			 (unsigned long long)f[i].got,
			 (unsigned long long)f[i].want);
		return what;
	}
	return NULL;
}

/* Whether entry @e has a live record. */
static bool fs_has_record(struct fs_pool *P, int e)
{
	int i;

	for (i = 0; i < FS_RECS; i++)
		if (P->rec[i].live && P->rec[i].ent == e)
			return true;
	return false;
}

static void fs_figures(struct fs_pool *P, struct fs_figs *g)
{
	int e, f, i;

	memset(g, 0, sizeof(*g));
	for (e = 0; e < FS_ENTRIES; e++) {
		if (!P->ent[e].id)
			continue;
		g->nent++;
		if (fs_has_record(P, e))
			g->used += P->ent[e].size;
		if (P->ent[e].draining) {
			g->ndrain++;
			g->draining += P->ent[e].size;
		} else {
			g->reserved += P->ent[e].size;
		}
		for (f = 0; f < FS_FDS; f++) {
			if (!P->holds[f][e])
				continue;
			g->fdimps[f]++;
			g->fdbytes[f] += P->ent[e].size;
			g->imported += P->ent[e].size;
		}
	}
	for (i = 0; i < FS_RECS; i++)
		g->nrec += P->rec[i].live;
	for (f = 1; f < FS_FDS; f++)
		g->nimp += P->fd[f] >= 0;
}

/*
 * Diagnostics of a mismatch: the entries the model let go lately, who
 * holds their dma-bufs now (any process's fd, with our child marked), and
 * bufinfo's line of each; the child and what it holds.
 */
static void fs_diag_ino(struct fs_thread *s, uint64_t ino)
{
	char path[600], line[300], want[32];
	struct dirent *d, *fd;
	struct stat sb;
	DIR *pd, *fdd;
	FILE *f;

	pd = opendir("/proc");
	while (pd && (d = readdir(pd))) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fd", d->d_name);
		fdd = opendir(path);
		while (fdd && (fd = readdir(fdd))) {
			if (fd->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/fd/%s",
				 d->d_name, fd->d_name);
			if (stat(path, &sb) || sb.st_ino != ino)
				continue;
			fprintf(stderr, "# diag fuzzer %d:   ino %llu open in pid %s fd %s%s\n",
				s->id, (unsigned long long)ino, d->d_name,
				fd->d_name, atoi(d->d_name) == s->child ?
				" (our child)" : atoi(d->d_name) == getpid() ?
				" (us)" : "");
		}
		if (fdd)
			closedir(fdd);
	}
	if (pd)
		closedir(pd);
	snprintf(want, sizeof(want), "\t%08llu\t", (unsigned long long)ino);
	f = fopen(REL_BUFINFO, "re");
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, want))
			fprintf(stderr, "# diag fuzzer %d:   bufinfo: %s", s->id,
				line);
	if (f)
		fclose(f);
}

static void fs_diag(struct fs_thread *s, int p)
{
	char path[64], target[128];
	unsigned int i, n;
	int e, q, k;
	ssize_t len;

	fprintf(stderr, "# diag fuzzer %d: pool %d at call %llu; child %d on pool %d\n",
		s->id, p, (unsigned long long)s->calls, s->child,
		s->child_pool);
	for (q = 0; q < FS_POOLS; q++)
		for (e = 0; e < FS_ENTRIES; e++) {
			struct fs_entry *E = &s->pool[q].ent[e];

			if (!E->id)
				continue;
			fprintf(stderr, "# diag fuzzer %d: pool %d entry %u buf %d gen %u/%u ino %llu%s%s holders %u%s\n",
				s->id, q, E->id, E->buf, E->bufgen,
				s->bufgen[E->buf], (unsigned long long)E->ino,
				E->draining ? " draining" : "",
				E->child ? " child" : "",
				fs_holders(&s->pool[q], e),
				fs_buf_open(s, E) ? " buf open" : "");
		}
	for (q = 0; q < FS_POOLS; q++) {
		struct fs_pool *P = &s->pool[q];

		n = P->ngone < FS_GONE ? P->ngone : FS_GONE;
		for (i = 0; i < n; i++) {
			struct fs_gone *g = &P->gone[(P->ngone - 1 - i) % FS_GONE];

			fprintf(stderr, "# diag fuzzer %d: pool %d let go: entry %u buf %d ino %llu at call %llu\n",
				s->id, q, g->id, g->buf,
				(unsigned long long)g->ino,
				(unsigned long long)g->call);
			fs_diag_ino(s, g->ino);
		}
	}
	if (s->child <= 0)
		return;
	for (k = 0; k < 64; k++) {
		struct stat sb;

		snprintf(path, sizeof(path), "/proc/%d/fd/%d", s->child, k);
		len = readlink(path, target, sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = 0;
		fprintf(stderr, "# diag fuzzer %d: child fd %d: %s ino %llu\n",
			s->id, k, target, stat(path, &sb) ? 0ull :
			(unsigned long long)sb.st_ino);
	}
}

/* What of @st, pool @P's stats on fd slot @f, differs from the model. */
static const char *fs_stats_cmp(struct fs_pool *P, const struct fs_figs *g,
				int f, const struct kfdpool_pool_stats *st,
				char *what, size_t len)
{
	const struct fs_fig figs[] = {
		FS_FIG(st, mode, f ? KFDPOOL_MODE_IMPORT : KFDPOOL_MODE_OWNER),
		FS_FIG(st, entries, g->nent),
		FS_FIG(st, draining_entries, g->ndrain),
		FS_FIG(st, records, g->nrec),
		FS_FIG(st, reserved_bytes, g->reserved),
		FS_FIG(st, draining_bytes, g->draining),
		FS_FIG(st, imported_bytes, g->imported),
		FS_FIG(st, import_fds, g->nimp),
		FS_FIG(st, fd_imports, g->fdimps[f]),
		FS_FIG(st, fd_imported_bytes, g->fdbytes[f]),
		FS_FIG(st, handle_types, P->types),
		FS_FIG(st, limit, P->limit),
		FS_FIG(st, used_bytes, g->used),
	};
	char where[16];

	snprintf(where, sizeof(where), "fd %d: ", f);
	return fs_figs_cmp(what, len, where, figs,
			   sizeof(figs) / sizeof(figs[0]));
}

static bool fs_check_pool(struct fs_thread *s, int p, bool report)
{
	struct fs_pool *P = &s->pool[p];
	struct kfdpool_pool_stats st;
	const char *bad = NULL;
	char what[160] = "";
	struct fs_figs g;
	int f;

	fs_figures(P, &g);

	for (f = 0; f < FS_FDS && !bad; f++) {
		if (P->fd[f] < 0)
			continue;
		memset(&st, 0, sizeof(st));
		if (fs_ioctl(s, P->fd[f], KFDPOOL_IOC_POOL_STATS, &st) < 0)
			continue;	/* no memory, say: nothing to compare */
		bad = rel_stats_invalid(&st);
		if (bad)
			break;
		bad = fs_stats_cmp(P, &g, f, &st, what, sizeof(what));
		if (!bad && memcmp(st.id, P->id, KFDPOOL_ID_LEN))
			bad = "id";
	}
	if (bad && report) {
		fs_diag(s, p);
		fs_broken(s, p, "figures differ from the model: %s",
			  *what ? what : bad);
	}
	return !bad;
}

/*
 * How long a mismatch may last: 2 s.  A file a concurrent fork copied is
 * held until that child closes it, and on a loaded 2-core host running
 * three TCG guests a child lived past the 100-200 ms this once was (a
 * POOL_LIST entry count one over the model's).  A real defect stays.
 */
#define FS_SETTLE_TRIES	250
#define FS_SETTLE_US	8000

/* ------------------------------------------------------------------ */
/* The thread's user: its persistent pools, their bytes, its records   */
/* ------------------------------------------------------------------ */

struct fs_ufigs {
	uint32_t pools, records;
	uint64_t bytes;
	bool bytes_known;	/* no child's imports may keep an entry */
};

/*
 * What the module charges to the thread's user: its persistent pools (the
 * pools made as s->uid), the bytes of their live entries, and their live
 * records.
 */
static void fs_user_model(struct fs_thread *s, struct fs_ufigs *u)
{
	struct fs_pool *P;
	int p, e, i;

	memset(u, 0, sizeof(*u));
	u->bytes_known = true;
	for (p = 0; p < FS_POOLS; p++) {
		P = &s->pool[p];
		if (!P->persist)
			continue;
		u->pools++;
		if (fs_child_on(s, p))
			u->bytes_known = false;
		for (e = 0; e < FS_ENTRIES; e++)
			u->bytes += P->ent[e].id && !P->ent[e].draining ?
				    P->ent[e].size : 0;
		for (i = 0; i < FS_RECS; i++)
			u->records += P->rec[i].live;
	}
}

/* The user's figures @pools, @bytes, @records against the model's. */
static const char *fs_user_cmp(struct fs_thread *s, uint64_t pools,
			       uint64_t bytes, uint64_t records,
			       const char *where)
{
	static __thread char what[160];
	struct fs_ufigs u;

	fs_user_model(s, &u);
	if (pools != u.pools)
		snprintf(what, sizeof(what), "%s: persistent pools %llu, model %u",
			 where, (unsigned long long)pools, u.pools);
	else if (records != u.records)
		snprintf(what, sizeof(what), "%s: records %llu, model %u",
			 where, (unsigned long long)records, u.records);
	else if (u.bytes_known && bytes != u.bytes)
		snprintf(what, sizeof(what), "%s: persistent bytes %llu, model %llu",
			 where, (unsigned long long)bytes,
			 (unsigned long long)u.bytes);
	else
		return NULL;
	return what;
}

/* QUERY as the thread's user: NULL when its figures are the model's. */
static const char *fs_user_diff(struct fs_thread *s)
{
	struct kfdpool_query q;

	memset(&q, 0, sizeof(q));
	if (fs_ioctl_as(s, s->ctl, KFDPOOL_IOC_QUERY, &q, true) < 0)
		return NULL;	/* no memory, say: no verdict */
	return fs_user_cmp(s, q.user_persistent, q.user_persistent_bytes,
			   q.user_records, "QUERY");
}

/*
 * Wait until the user's figures are the model's (a fork of another thread
 * may keep an entry the model let go a moment longer): true when they are,
 * false (a violation, once) when they stay apart or the thread does not
 * make persistent pools.
 */
static bool fs_user_settle(struct fs_thread *s)
{
	const char *bad = NULL;
	int i;

	if (!s->persist || s->persist_unsure)
		return false;
	__atomic_add_fetch(&s->st->user_checks, 1, __ATOMIC_RELAXED);
	for (i = 0; i < FS_SETTLE_TRIES; i++) {
		bad = fs_user_diff(s);
		if (!bad)
			return true;
		usleep(FS_SETTLE_US);
	}
	fs_violation(s, "user %u: %s", s->uid, bad);
	s->persist_unsure = true;
	return false;
}

/*
 * Would @size more bytes in pool @p pass max_user_persistent_bytes?  1 yes,
 * 0 no, -1 no verdict (a child's imports may keep entries the model counts).
 */
static int fs_pbytes_over(struct fs_thread *s, int p, uint64_t size)
{
	struct fs_ufigs u;

	if (!s->pool[p].persist || !s->max_pbytes)
		return 0;
	if (s->persist_unsure)
		return -1;
	fs_user_model(s, &u);
	if (!u.bytes_known)
		return -1;
	return size > s->max_pbytes || u.bytes > s->max_pbytes - size;
}

/*
 * Compare the pool with the model.  A file a child or a concurrent fork
 * held a moment ago is released as its last holder lets go: a mismatch
 * counts only if it stays.
 */
static void fs_check(struct fs_thread *s, int p)
{
	int i;

	s->pool[p].since_check = 0;
	if (s->pool[p].persist && !fs_child_on(s, p))
		fs_user_settle(s);
	if (fs_child_on(s, p) || fs_first_fd(&s->pool[p]) < 0)
		return;
	__atomic_add_fetch(&s->st->model_checks, 1, __ATOMIC_RELAXED);
	if (fs_slots_moved(s, p)) {
		s->pool[p].broken = true;
		return;
	}
	for (i = 0; i < FS_SETTLE_TRIES; i++) {
		if (fs_check_pool(s, p, false))
			return;
		usleep(FS_SETTLE_US);
	}
	fs_check_pool(s, p, true);
}

#endif /* KFDPOOL_FUZZ_MODEL_H */
