// SPDX-License-Identifier: GPL-2.0-only
/*
 * io_uring payload lifetime: user space may refill an SQ ring slot as soon
 * as io_uring_enter() returned, while the command it held is still in
 * flight.  Every completion must still be that of the command submitted.
 *
 * Each round submits kfdpool commands of every kind, including ones that
 * the module used to answer -EAGAIN from the nonblocking issue (vectored
 * batches, an EXPORT whose record lands in a page not yet faulted in),
 * IOSQE_ASYNC ones and a linked one, then overwrites every SQE of the ring
 * (the ring's memory, directly) with other valid payloads (decoys whose
 * use would show) or random bytes, and only then lets the in-flight
 * commands run: an IOSQE_ASYNC open of a FIFO blocks the ring's only
 * io-wq worker until this test opens the FIFO's other end, and the linked
 * command waits behind a read of an empty pipe.  Each CQE is matched to its
 * user_data: results, fds (by inode), records, batch arrays, decoys.
 *
 * Linked commands: some kernels' io_uring (Debian's 6.12) hands a linked
 * command a pointer into the ring, which the module's first call reads
 * whenever the link gets to it.  That is io_uring's doing, before the
 * module is called; a probe that needs no kfdpool (a linked
 * SOCKET_URING_OP_GETSOCKOPT) tells such kernels, where the linked
 * kfdpool command must then complete exactly as the payload it was given
 * (the refill) says, whole.
 */
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <sys/socket.h>

#include "kselftest_harness.h"
#include "kfdpool_util.h"
#include "kfdpool_uring_util.h"

#define NB		4		/* dma-bufs, entries */
#define SZ		(64 * 1024)
#define RING		64
#define SQE_BYTES	128
#define CMD_OFF		48		/* sqe->cmd in an SQE */
#define ROUNDS		24

/* liburing 2.3 does not name the socket command fields: offsets. */
#define SQE_LEVEL	16
#define SQE_OPTNAME	20
#define SQE_OPTLEN	44
#define SQE_OPTVAL	48
#define SOCK_OP_GETSOCKOPT	2	/* SOCKET_URING_OP_GETSOCKOPT */

enum kind {
	K_BLOCKER,	/* IOSQE_ASYNC open of the FIFO: holds the io-wq worker */
	K_HEAD,		/* read of the pipe, the link's head */
	K_IMPORT,	/* record -> fd */
	K_EXPORT,	/* record written to a page not yet faulted in */
	K_IMPORT_BATCH,	/* vectored */
	K_EXPORT_BATCH,	/* vectored */
	K_REVOKE,
	K_RELEASE,
};

/* One submitted SQE and what its completion must be. */
struct cmd {
	enum kind kind;
	int slot;		/* its SQ ring slot */
	bool linked;		/* follows the link head */
	bool async;		/* IOSQE_ASYNC */
	int target;		/* IMPORT: the record; others: unused */
	int refill_target;	/* IMPORT: the record its refill names */
	bool done;
	int res;
};

struct round {
	struct cmd c[16];
	int n;
	/* Command memory and its decoys (what refills point at). */
	struct kfdpool_record *fresh;	/* EXPORT's page, not faulted in */
	struct kfdpool_record decoy_rec;
	struct kfdpool_import ia[NB], ib[NB];	/* IMPORT_BATCH, decoy */
	struct kfdpool_export ea[2], eb[2];	/* EXPORT_BATCH, decoy */
	struct kfdpool_record dispose, keep;	/* REVOKE target, decoy */
	int export_idx;
	__u32 export_entry;
	__u64 export_off, export_size;
	char head_buf;
};

FIXTURE(refill) {
	struct kfd_set s;
	struct io_uring ring;
	bool ring_ok;
	ino_t ino[NB];
	struct kfdpool_record rec[NB];
	int imp2;		/* holds one import for RELEASE */
	int imports[NB];	/* imports self->s.imp holds, per entry */
	char fifo[64];
	int pipe[2];
	int late_links;		/* 1, 0, or -1 (cannot tell) */
	uint64_t seed;
};

static char *slot_ptr(struct io_uring *ring, int slot)
{
	return (char *)ring->sq.sqes + (size_t)slot * SQE_BYTES;
}

static int slot_of(struct io_uring *ring, struct io_uring_sqe *sqe)
{
	return ((char *)sqe - (char *)ring->sq.sqes) / SQE_BYTES;
}

static void put32(void *sqe, int off, __u32 v)
{
	memcpy((char *)sqe + off, &v, sizeof(v));
}

static void put64(void *sqe, int off, __u64 v)
{
	memcpy((char *)sqe + off, &v, sizeof(v));
}

/*
 * Does this kernel's io_uring give a linked uring_cmd a pointer into the
 * ring (1), or a copy taken at submission (0)?  -1: no socket uring_cmd
 * here (before 6.7) to ask with.  Asks with a GETSOCKOPT behind a read of
 * an empty pipe, its optval redirected in the ring after submission.
 */
static int probe_late_links(struct io_uring *ring)
{
	int sv[2], p[2], a = -1, b = -1, late = -1, res = 0, i;
	struct io_uring_sqe *head, *f;
	struct io_uring_cqe *cqe;
	char c = 0;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -1;
	if (pipe2(p, O_CLOEXEC)) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	head = io_uring_get_sqe(ring);
	io_uring_prep_read(head, p[0], &c, 1, 0);
	head->flags |= IOSQE_IO_HARDLINK;
	head->user_data = 1;
	f = io_uring_get_sqe(ring);
	memset(slot_ptr(ring, slot_of(ring, f)), 0, SQE_BYTES);
	f->opcode = IORING_OP_URING_CMD;
	f->fd = sv[0];
	f->user_data = 2;
	put32(f, 8, SOCK_OP_GETSOCKOPT);
	put32(f, SQE_LEVEL, SOL_SOCKET);
	put32(f, SQE_OPTNAME, SO_TYPE);
	put32(f, SQE_OPTLEN, sizeof(int));
	put64(f, SQE_OPTVAL, (uintptr_t)&a);
	if (io_uring_submit(ring) != 2)
		goto out;
	put64(f, SQE_OPTVAL, (uintptr_t)&b);
	if (write(p[1], "x", 1) != 1)
		goto out;
	for (i = 0; i < 2; i++) {
		if (io_uring_wait_cqe(ring, &cqe))
			goto out;
		if (cqe->user_data == 2)
			res = cqe->res;
		io_uring_cqe_seen(ring, cqe);
	}
	if (res >= 0 && b == SOCK_STREAM)
		late = 1;
	else if (res >= 0 && a == SOCK_STREAM)
		late = 0;
out:
	close(sv[0]);
	close(sv[1]);
	close(p[0]);
	close(p[1]);
	return late;
}

FIXTURE_SETUP(refill)
{
	unsigned int workers[2] = { 1, 1 };
	struct stat sb;
	int i, ret;

	self->ring_ok = false;
	self->imp2 = -1;
	self->pipe[0] = self->pipe[1] = -1;
	self->fifo[0] = 0;
	self->seed = 0x7265666c6c303031ULL;
	memset(self->imports, 0, sizeof(self->imports));
	KFD_SET_SETUP("uring_refill", NB, SZ, -1, 0x20);
	for (i = 0; i < NB; i++) {
		ASSERT_EQ(0, fstat(self->s.buf[i], &sb));
		self->ino[i] = sb.st_ino;
		ASSERT_EQ(0, kfd_export(self->s.pool, self->s.entry[i], 0, 4096,
					&self->rec[i]));
	}
	self->imp2 = kfd_pool_export(self->s.pool);
	ASSERT_LE(0, self->imp2);
	ASSERT_EQ(0, pipe2(self->pipe, O_CLOEXEC));
	snprintf(self->fifo, sizeof(self->fifo), "/tmp/kfdpool-refill-%d",
		 getpid());
	unlink(self->fifo);
	ASSERT_EQ(0, mkfifo(self->fifo, 0600));

	ret = kfd_uring_init(&self->ring, RING);
	if (ret)
		SKIP(return, "%s", kfd_uring_skip_reason(ret));
	self->ring_ok = true;
	/* One bounded io-wq worker: the blocker holds it while we refill. */
	ASSERT_EQ(0, io_uring_register_iowq_max_workers(&self->ring, workers));
	self->late_links = probe_late_links(&self->ring);
	TH_LOG("linked uring_cmds get %s",
	       self->late_links == 1 ? "a pointer into the ring (core behaviour: checked against the refill)" :
	       self->late_links == 0 ? "a copy taken at submission" :
	       "? (no socket uring_cmd to ask; checked as copied)");
}

FIXTURE_TEARDOWN(refill)
{
	if (self->ring_ok)
		io_uring_queue_exit(&self->ring);
	if (self->fifo[0])
		unlink(self->fifo);
	if (self->pipe[0] >= 0) {
		close(self->pipe[0]);
		close(self->pipe[1]);
	}
	if (self->imp2 >= 0)
		close(self->imp2);
	KFD_SET_TEARDOWN();
}

static struct cmd *add(struct round *r, enum kind k, struct io_uring *ring,
		       struct io_uring_sqe *sqe)
{
	struct cmd *c = &r->c[r->n];

	memset(c, 0, sizeof(*c));
	c->kind = k;
	c->slot = slot_of(ring, sqe);
	sqe->user_data = r->n++;
	return c;
}

static void import_payload(struct kfdpool_uring_record *ur,
			   const struct kfdpool_record *rec)
{
	memset(ur, 0, sizeof(*ur));
	ur->record = *rec;
}

static void batch_payload(struct kfdpool_batch *b, void *ops, __u32 count,
			  __u32 elem_size)
{
	memset(b, 0, sizeof(*b));
	b->ops = (uintptr_t)ops;
	b->count = count;
	b->elem_size = elem_size;
}

/* Prepare round @n's commands and memory; 0 or a step that failed. */
static int round_prepare(struct __test_metadata *_metadata,
			 FIXTURE_DATA(refill) *self, struct round *r, int n)
{
	struct kfdpool_uring_export ue = {};
	struct kfdpool_uring_record ur;
	struct kfdpool_release rel = {};
	struct kfdpool_batch b;
	struct io_uring_sqe *sqe;
	struct cmd *c;
	int i;

	memset(r, 0, sizeof(*r));
	r->fresh = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->fresh == MAP_FAILED)
		return 1;
	memset(&r->decoy_rec, 0x5a, sizeof(r->decoy_rec));
	for (i = 0; i < NB; i++) {
		r->ia[i].record = self->rec[i];
		r->ia[i].fd = -1;
		r->ia[i].status = 0x7777;
		r->ib[i].record = self->rec[(i + 1) % NB];
		r->ib[i].fd = -1;
		r->ib[i].status = 0x6666;
	}
	for (i = 0; i < 2; i++) {
		r->ea[i].entry_id = self->s.entry[i];
		r->ea[i].offset = 100 * (n + 1);
		r->ea[i].size = 10 + i;
		r->ea[i].status = 0x7777;
		r->eb[i] = r->ea[i];
		r->eb[i].entry_id = self->s.entry[i + 2];
		r->eb[i].status = 0x6666;
	}
	if (kfd_export(self->s.pool, self->s.entry[1], 8192, 100, &r->dispose) ||
	    kfd_export(self->s.pool, self->s.entry[2], 12288, 100, &r->keep))
		return 2;
	/* imp2 holds exactly one import of entry 3: RELEASE drops it. */
	if (kfd_import(self->imp2, &self->rec[3], 0, NULL))
		return 3;

	/* The blocker: opening the FIFO waits for its writer, in io-wq. */
	sqe = io_uring_get_sqe(&self->ring);
	io_uring_prep_openat(sqe, AT_FDCWD, self->fifo, O_RDONLY | O_CLOEXEC,
			     0);
	sqe->flags |= IOSQE_ASYNC;
	c = add(r, K_BLOCKER, &self->ring, sqe);
	c->async = true;

	/* Imports, inline and in io-wq. */
	for (i = 0; i < 2; i++) {
		int t = (n + i) % NB;

		import_payload(&ur, &self->rec[t]);
		sqe = kfd_uring_prep(&self->ring, self->s.imp,
				     KFDPOOL_URING_IMPORT, &ur, sizeof(ur), 0);
		if (i)
			sqe->flags |= IOSQE_ASYNC;
		c = add(r, K_IMPORT, &self->ring, sqe);
		c->async = i;
		c->target = t;
		c->refill_target = (t + 1) % NB;
	}

	/* An export whose record lands in a page not yet faulted in. */
	r->export_idx = n % NB;
	r->export_entry = self->s.entry[r->export_idx];
	r->export_off = 4096 * (n % 4);
	r->export_size = 512 + n;
	ue.entry_id = r->export_entry;
	ue.offset = r->export_off;
	ue.size = r->export_size;
	ue.record_ptr = (uintptr_t)r->fresh;
	sqe = kfd_uring_prep(&self->ring, self->s.pool, KFDPOOL_URING_EXPORT,
			     &ue, sizeof(ue), 0);
	add(r, K_EXPORT, &self->ring, sqe);

	/* Vectored batches, inline and in io-wq. */
	batch_payload(&b, r->ia, NB, sizeof(r->ia[0]));
	sqe = kfd_uring_prep(&self->ring, self->s.imp, KFDPOOL_IOC_IMPORT_BATCH,
			     &b, sizeof(b), 0);
	add(r, K_IMPORT_BATCH, &self->ring, sqe);
	batch_payload(&b, r->ea, 2, sizeof(r->ea[0]));
	sqe = kfd_uring_prep(&self->ring, self->s.pool,
			     KFDPOOL_IOC_EXPORT_BATCH, &b, sizeof(b), 0);
	sqe->flags |= IOSQE_ASYNC;
	c = add(r, K_EXPORT_BATCH, &self->ring, sqe);
	c->async = true;

	import_payload(&ur, &r->dispose);
	sqe = kfd_uring_prep(&self->ring, self->s.pool, KFDPOOL_URING_REVOKE,
			     &ur, sizeof(ur), 0);
	add(r, K_REVOKE, &self->ring, sqe);

	rel.entry_id = self->s.entry[3];
	sqe = kfd_uring_prep(&self->ring, self->imp2, KFDPOOL_URING_RELEASE,
			     &rel, sizeof(rel), 0);
	add(r, K_RELEASE, &self->ring, sqe);

	/* A link: a read of the empty pipe, then an import. */
	sqe = io_uring_get_sqe(&self->ring);
	io_uring_prep_read(sqe, self->pipe[0], &r->head_buf, 1, 0);
	sqe->flags |= IOSQE_IO_HARDLINK;
	add(r, K_HEAD, &self->ring, sqe);
	import_payload(&ur, &self->rec[(n + 2) % NB]);
	sqe = kfd_uring_prep(&self->ring, self->s.imp, KFDPOOL_URING_IMPORT,
			     &ur, sizeof(ur), 0);
	c = add(r, K_IMPORT, &self->ring, sqe);
	c->linked = true;
	c->target = (n + 2) % NB;
	c->refill_target = (c->target + 1) % NB;
	return 0;
}

/*
 * Overwrite every SQE of the ring.  @valid: each command's slot gets a
 * valid payload of its kind naming a decoy; else random bytes with a
 * non-zero byte where every payload must have zero.
 */
static void refill(FIXTURE_DATA(refill) *self, struct round *r, bool valid)
{
	unsigned int slots = self->ring.sq.ring_entries, s;
	int i;

	for (s = 0; s < slots; s++) {
		char *p = slot_ptr(&self->ring, s);

		for (i = 0; i < SQE_BYTES; i += 8) {
			uint64_t x = kfd_rand(&self->seed);

			memcpy(p + i, &x, 8);
		}
		p[CMD_OFF + KFD_URING_CMD_BYTES - 1] |= 1;
	}
	if (!valid)
		return;
	for (i = 0; i < r->n; i++) {
		struct cmd *c = &r->c[i];
		char *p = slot_ptr(&self->ring, c->slot);
		union {
			struct kfdpool_uring_export ue;
			struct kfdpool_uring_record ur;
			struct kfdpool_release rel;
			struct kfdpool_batch b;
		} pl;

		memset(&pl, 0, sizeof(pl));
		switch (c->kind) {
		case K_IMPORT:
			pl.ur.record = self->rec[c->refill_target];
			break;
		case K_EXPORT:
			pl.ue.entry_id = self->s.entry[(r->export_idx + 1) % NB];
			pl.ue.size = 1;
			pl.ue.record_ptr = (uintptr_t)&r->decoy_rec;
			break;
		case K_IMPORT_BATCH:
			batch_payload(&pl.b, r->ib, NB, sizeof(r->ib[0]));
			break;
		case K_EXPORT_BATCH:
			batch_payload(&pl.b, r->eb, 2, sizeof(r->eb[0]));
			break;
		case K_REVOKE:
			pl.ur.record = r->keep;
			break;
		case K_RELEASE:
			pl.rel.entry_id = self->s.entry[0];
			break;
		default:
			continue;
		}
		memset(p + CMD_OFF, 0, KFD_URING_CMD_BYTES);
		memcpy(p + CMD_OFF, &pl, sizeof(pl));
	}
}

static bool fd_is(int fd, ino_t ino)
{
	struct stat sb;

	return fd >= 0 && !fstat(fd, &sb) && sb.st_ino == ino;
}

/* Check command @c's completion; count the imports it made. */
static bool check_cmd(struct __test_metadata *_metadata,
		      FIXTURE_DATA(refill) *self, struct round *r,
		      struct cmd *c, bool valid)
{
	int t = c->target, i;
	bool ok = true;

	switch (c->kind) {
	case K_BLOCKER:
		if (c->res >= 0)
			close(c->res);
		return c->res >= 0;
	case K_HEAD:
		return c->res == 1;
	case K_IMPORT:
		if (c->linked && self->late_links == 1) {
			/* io_uring gave the module the refilled slot. */
			if (!valid)
				return c->res == -EINVAL;
			t = c->refill_target;
		}
		ok = fd_is(c->res, self->ino[t]);
		if (c->res >= 0) {
			close(c->res);
			self->imports[t]++;
		}
		return ok;
	case K_EXPORT:
		return c->res == 0 && REC(r->fresh)->magic == KFDPOOL_RECORD_MAGIC &&
		       REC(r->fresh)->entry_id == r->export_entry &&
		       REC(r->fresh)->offset == r->export_off &&
		       REC(r->fresh)->size == r->export_size;
	case K_IMPORT_BATCH:
		ok = c->res == NB;
		for (i = 0; i < NB; i++) {
			if (r->ia[i].status || !fd_is(r->ia[i].fd, self->ino[i]))
				ok = false;
			if (r->ia[i].fd >= 0) {
				close(r->ia[i].fd);
				if (!r->ia[i].status)
					self->imports[i]++;
			}
		}
		return ok;
	case K_EXPORT_BATCH:
		ok = c->res == 2;
		for (i = 0; i < 2; i++)
			if (r->ea[i].status ||
			    REC(&r->ea[i].record)->magic != KFDPOOL_RECORD_MAGIC ||
			    REC(&r->ea[i].record)->entry_id != self->s.entry[i])
				ok = false;
		return ok;
	case K_REVOKE:
	case K_RELEASE:
		return c->res == 0;
	}
	return false;
}

/* What none of the commands may have touched: the decoys. */
static int decoys_changed(FIXTURE_DATA(refill) *self, struct round *r)
{
	struct kfdpool_record five;
	int i, n = 0, ret;

	memset(&five, 0x5a, sizeof(five));
	n += !!memcmp(&r->decoy_rec, &five, sizeof(five));
	for (i = 0; i < NB; i++)
		n += r->ib[i].status != 0x6666 || r->ib[i].fd != -1;
	for (i = 0; i < 2; i++)
		n += r->eb[i].status != 0x6666;
	/* The kept record is live: revoking it now works (and cleans up). */
	n += kfd_revoke(self->s.pool, &r->keep) != 0;
	/* The revoked one is gone (its slot may hold a later record). */
	ret = kfd_revoke(self->s.pool, &r->dispose);
	n += ret != -ENOENT && ret != -ESTALE;
	/* imp2 let go of its import. */
	n += kfd_fdinfo_num(self->imp2, "kfdpool-fd-imports") != 0;
	return n;
}

/* Undo what a round made that its checks did not: records, imports. */
static void round_cleanup(FIXTURE_DATA(refill) *self, struct round *r)
{
	int i;

	if (REC(r->fresh)->magic == KFDPOOL_RECORD_MAGIC)
		kfd_revoke(self->s.pool, r->fresh);
	if (REC(&r->decoy_rec)->magic == KFDPOOL_RECORD_MAGIC)
		kfd_revoke(self->s.pool, &r->decoy_rec);
	for (i = 0; i < 2; i++) {
		if (REC(&r->ea[i].record)->magic == KFDPOOL_RECORD_MAGIC)
			kfd_revoke(self->s.pool, &r->ea[i].record);
		if (REC(&r->eb[i].record)->magic == KFDPOOL_RECORD_MAGIC)
			kfd_revoke(self->s.pool, &r->eb[i].record);
	}
	for (i = 0; i < NB; i++)
		if (r->ib[i].fd >= 0)
			close(r->ib[i].fd);
	for (i = 0; i < NB; i++)
		for (; self->imports[i] > 0; self->imports[i]--)
			kfd_release(self->s.imp, self->s.entry[i]);
	while (!kfd_release(self->imp2, self->s.entry[3]))
		;
	munmap(r->fresh, 4096);
}

TEST_F_TIMEOUT(refill, every_slot_refilled, 900)
{
	struct kfdpool_pool_stats st;
	int n, bad = 0, bad_decoys = 0, total = 0;

	for (n = 0; n < ROUNDS; n++) {
		bool valid = !(n & 1);
		struct round r;
		struct io_uring_cqe *cqe;
		int i, w, seen;

		ASSERT_EQ(0, round_prepare(_metadata, self, &r, n));
		ASSERT_EQ(r.n, io_uring_submit(&self->ring));
		refill(self, &r, valid);

		/* Let the commands in flight go on, with their slots refilled. */
		w = open(self->fifo, O_WRONLY | O_CLOEXEC);
		ASSERT_LE(0, w);
		close(w);
		ASSERT_EQ(1, write(self->pipe[1], "x", 1));

		for (seen = 0; seen < r.n; seen++) {
			ASSERT_EQ(0, io_uring_wait_cqe(&self->ring, &cqe));
			ASSERT_GT(r.n, cqe->user_data);
			r.c[cqe->user_data].done = true;
			r.c[cqe->user_data].res = cqe->res;
			io_uring_cqe_seen(&self->ring, cqe);
		}
		for (i = 0; i < r.n; i++) {
			total++;
			if (check_cmd(_metadata, self, &r, &r.c[i], valid))
				continue;
			if (bad++ < 20)
				TH_LOG("round %d (%s refill): command %d (kind %d%s%s) completed with %d",
				       n, valid ? "valid" : "random", i,
				       r.c[i].kind, r.c[i].linked ? ", linked" : "",
				       r.c[i].async ? ", IOSQE_ASYNC" : "",
				       r.c[i].res);
		}
		i = decoys_changed(self, &r);
		if (i && bad_decoys++ < 10)
			TH_LOG("round %d (%s refill): %d decoys touched", n,
			       valid ? "valid" : "random", i);
		round_cleanup(self, &r);
	}
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, bad_decoys);
	TH_LOG("%d rounds, %d completions checked", ROUNDS, total);
	/* Everything made was taken back. */
	ASSERT_EQ(0, kfd_stats(self->s.imp, &st));
	EXPECT_EQ(NB, st.records);
	EXPECT_EQ(0, st.imported_bytes);
}

/*
 * An EXPORT submitted while another thread holds the pool's lock: its
 * nonblocking issue must not wait for the lock (the submitter is never seen
 * asleep in state D, which it could reach only inside the command), but be
 * issued again from io-wq; the SQE slot's record_ptr is rewritten as soon
 * as the submission returns, and the record must still land where the
 * payload said when the command was submitted.
 *
 * Holding the lock: a thread of the lowest class (SCHED_IDLE) UNPINs an
 * entry of many records on CPU 0, holding the lock a batch at a time;
 * under full preemption the submitter, waking on CPU 0, preempts it in its
 * locked section, and a busy thread keeps the UNPIN off CPU 0 while a
 * watcher on CPU 1 looks at the submitter's state.  Kernels without
 * PREEMPT_DYNAMIC (the debug kernel) cannot be told to preempt so:
 * skipped there (nonblocking_issue_takes_no_fault in uring_test covers
 * the fault on every kernel).
 */
#define HOLD_RECS	65536
#define HOLD_WANT	6
#define HOLD_ROUNDS	40
#define SCHED_PREEMPT	"/sys/kernel/debug/sched/preempt"

struct hold {
	int pool;
	__u32 entry;
	pid_t tid;			/* the submitter */
	volatile int go, asleep, unpinned, done;
};

static void pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* The state letter of thread @tid ("R", "S", "D", ...), or 0. */
static char thread_state(pid_t tid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

static void *hold_unpin(void *arg)
{
	struct sched_param sp = { 0 };
	struct hold *h = arg;

	pin_cpu(0);
	sched_setscheduler(0, SCHED_IDLE, &sp);
	while (!h->go)
		;
	kfd_unpin(h->pool, h->entry, NULL);
	h->unpinned = 1;
	return NULL;
}

static void *hold_busy(void *arg)
{
	struct hold *h = arg;

	pin_cpu(0);
	while (!h->done)
		;
	return NULL;
}

static void *hold_watch(void *arg)
{
	struct hold *h = arg;

	pin_cpu(1);
	while (!h->go)
		;
	while (!h->done)
		if (thread_state(h->tid) == 'D')
			h->asleep = 1;
	return NULL;
}

/* Write @mode to the scheduler's preemption mode: 0 or -1 (errno). */
static int set_preempt(const char *mode)
{
	int fd = open(SCHED_PREEMPT, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -1;
	if (write(fd, mode, strlen(mode)) != (ssize_t)strlen(mode))
		ret = -1;
	close(fd);
	return ret;
}

TEST_F_TIMEOUT(refill, export_never_waits_inline_on_the_pool_lock, 900)
{
	struct kfdpool_uring_export ue = {};
	struct kfdpool_record *mine, *decoy;
	char mode[64] = "", *sp;
	struct kfdpool_export *ex;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct kfdpool_batch b = {};
	int hbuf, round, busy = 0, asleep = 0, i, k, fd;
	volatile __u64 *slot_ptr;
	pthread_t tu, tr, tb;
	struct hold h;

	fd = open(SCHED_PREEMPT, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		SKIP(return, "no %s (no PREEMPT_DYNAMIC)", SCHED_PREEMPT);
	i = read(fd, mode, sizeof(mode) - 1);
	close(fd);
	if (i <= 0 || set_preempt("full"))
		SKIP(return, "cannot switch to full preemption: %s",
		     strerror(errno));
	/* "none (voluntary) full": the parenthesised one is the current */
	sp = strchr(mode, '(');
	mode[0] = 0;
	if (sp)
		sscanf(sp + 1, "%63[^)]", mode);
	mine = calloc(1, sizeof(*mine));
	decoy = calloc(1, sizeof(*decoy));
	ex = calloc(HOLD_RECS, sizeof(*ex));
	ASSERT_TRUE(mine && decoy && ex);
	hbuf = kfd_dmabuf_new(SZ);
	ASSERT_LE(0, hbuf);
	pin_cpu(0);
	for (round = 0; round < HOLD_ROUNDS && busy < HOLD_WANT; round++) {
		memset(&h, 0, sizeof(h));
		h.pool = self->s.pool;
		h.tid = gettid();
		k = kfd_pin(self->s.pool, hbuf, 0);
		ASSERT_LT(0, k);
		h.entry = k;
		for (i = 0; i < HOLD_RECS; i++) {
			memset(&ex[i], 0, sizeof(ex[i]));
			ex[i].entry_id = h.entry;
			ex[i].size = 1;
		}
		for (i = 0; i < HOLD_RECS; i += KFD_BATCH_MAX) {
			b.ops = (uintptr_t)&ex[i];
			b.count = KFD_BATCH_MAX;
			b.elem_size = sizeof(*ex);
			ASSERT_EQ(KFD_BATCH_MAX,
				  ioctl(self->s.pool, KFDPOOL_IOC_EXPORT_BATCH,
					&b));
		}
		memset(mine, 0, sizeof(*mine));
		ue.entry_id = self->s.entry[0];
		ue.size = 4096;
		ue.record_ptr = (uintptr_t)mine;
		sqe = kfd_uring_prep(&self->ring, self->s.pool,
				     KFDPOOL_URING_EXPORT, &ue, sizeof(ue), 7);
		ASSERT_NE(NULL, sqe);
		slot_ptr = (volatile __u64 *)((char *)sqe + CMD_OFF +
			offsetof(struct kfdpool_uring_export, record_ptr));
		ASSERT_EQ(0, pthread_create(&tu, NULL, hold_unpin, &h));
		ASSERT_EQ(0, pthread_create(&tr, NULL, hold_watch, &h));
		h.go = 1;
		usleep(300);	/* the UNPIN under way */
		ASSERT_EQ(0, pthread_create(&tb, NULL, hold_busy, &h));
		ASSERT_EQ(1, io_uring_submit(&self->ring));
		*slot_ptr = (uintptr_t)decoy;
		busy += !h.unpinned;
		h.done = 1;
		pthread_join(tr, NULL);
		pthread_join(tb, NULL);
		pthread_join(tu, NULL);
		ASSERT_EQ(0, io_uring_wait_cqe(&self->ring, &cqe));
		EXPECT_EQ(0, cqe->res);
		io_uring_cqe_seen(&self->ring, cqe);
		EXPECT_EQ(KFDPOOL_RECORD_MAGIC, REC(mine)->magic);
		EXPECT_EQ(0, REC(decoy)->magic)
			TH_LOG("round %d: the record went where the SQE said after submission",
			       round);
		if (REC(mine)->magic == KFDPOOL_RECORD_MAGIC)
			EXPECT_EQ(0, kfd_revoke(self->s.pool, mine));
		if (REC(decoy)->magic)
			break;
		asleep += h.asleep;
	}
	if (mode[0])
		set_preempt(mode);
	ksft_print_msg("%d of %d rounds submitted while the UNPIN held on, %d saw the submitter asleep\n",
		       busy, round, asleep);
	EXPECT_LT(0, busy) TH_LOG("no round submitted during the UNPIN");
	EXPECT_EQ(0, asleep) TH_LOG("the nonblocking issue slept");
	close(hbuf);
	free(ex);
	free(mine);
	free(decoy);
}

TEST_HARNESS_MAIN
