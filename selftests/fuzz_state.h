/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The stateful half of fuzz_test.  Each fuzzing thread owns a few pools and
 * dma-bufs of its own and keeps a model of them (fuzz_model.h).  It mostly
 * makes valid calls from the model, through the ioctls, the batches and
 * io_uring (single and vectored), and one call in three it changes one
 * thing: a field off by one, a revoked record, a record of another pool, an
 * import fd for an owner command, a bigger struct with a zero or non-zero
 * tail, bad flags or pad, a read-only argument, another kind of file.  It forks children that hold import fds and imports of its pools
 * and kills them at any point.  Every result is checked against the model.
 */
#ifndef KFDPOOL_FUZZ_STATE_H
#define KFDPOOL_FUZZ_STATE_H

#include <poll.h>

#include "fuzz_model.h"

/* ------------------------------------------------------------------ */
/* Single ioctls                                                      */
/* ------------------------------------------------------------------ */

/*
 * A command that needs handle type @type on a pool without it can only
 * fail: try it now and then, not every time.
 */
static bool fs_skip_untyped(struct fs_thread *s, struct fs_pool *P,
			    uint32_t type)
{
	return !(P->types & type) && fs_below(s, 8);
}

/* An open fd of pool @p, or a pipe's when it has none (parked). */
static int fs_pool_fd(struct fs_thread *s, int p)
{
	int f = fs_first_fd(&s->pool[p]);

	return f >= 0 ? s->pool[p].fd[f] : s->others[0];
}

/* The argument area: the struct, then room for a bigger version's tail. */
static void *fs_arg(struct fs_thread *s)
{
	memset(s->buf, 0, 512);
	return s->buf;
}

static bool fs_pin(struct fs_thread *s, int p)
{
	struct fs_pool *P = &s->pool[p];
	struct kfdpool_pin *x = fs_arg(s);
	struct fs_call c = { .fd = P->fd[0] };
	enum fs_mut m = fs_pick_mut(s);
	int b, e, over;
	long ret;

	b = FS_PICK(s, FS_NBUF, s->bufs[__i] >= 0 &&
		    fs_buf_live(s, P, __i) < 0);
	if (FS_PICK(s, FS_ENTRIES, !P->ent[__i].id) < 0)
		b = -1;		/* no room in the model */
	if (b < 0 && fs_below(s, 4))
		return false;
	x->cookie = rel_rand(&s->seed);
	if (m == FS_SEMANTIC) {
		/* A live entry whose dma-buf we still hold the fd of. */
		e = FS_PICK(s, FS_ENTRIES, P->ent[__i].id &&
			    !P->ent[__i].draining &&
			    fs_buf_open(s, &P->ent[__i]));
		c.must_fail = true;
		if (e >= 0 && fs_below(s, 2)) {
			b = P->ent[e].buf;
			x->dmabuf_fd = s->bufs[b];
			c.why = "dma-buf pinned in the pool already";
		} else {
			b = -1;
			x->dmabuf_fd = fs_below(s, 2) ? -1 : P->fd[0];
			c.why = "not a dma-buf";
		}
	} else if (b < 0) {
		return false;
	} else {
		x->dmabuf_fd = s->bufs[b];
	}
	over = c.must_fail ? -1 : fs_pbytes_over(s, p, s->bufsize[b]);
	if (over == 1) {
		c.must_fail = true;
		c.why = "more than max_user_persistent_bytes";
		/* Without a pool limit nothing else refuses it first. */
		if (!P->limit && fs_plain(m))
			c.want = -EDQUOT;
		__atomic_add_fetch(&s->st->edquot, 1, __ATOMIC_RELAXED);
	}
	fs_apply(s, &c, p, KFDPOOL_IOC_PIN, sizeof(*x), m);
	ret = fs_call(s, &c, "PIN");
	/*
	 * Refused within the cap: a fork of another thread may keep an entry
	 * the model let go.  Once the user's figures are the model's, the
	 * same call must pass.
	 */
	if (ret == -EDQUOT && !over && fs_plain(m) && fs_user_settle(s))
		ret = fs_call(s, &c, "PIN (again)");
	if (ret == -EDQUOT && !over && fs_plain(m))
		fs_violation(s, "pool %d: PIN refused with EDQUOT within max_user_persistent_bytes",
			     p);
	if (ret < 0 || c.must_fail)
		return true;
	fs_did_pin(s, p, b, (void *)s->buf);
	return true;
}

/* Close dma-buf slot @b: its entries stay pinned. */
static void fs_buf_close(struct fs_thread *s, int b)
{
	int p;

	fs_fd_mark(s->bufs[b], false);
	close(s->bufs[b]);
	s->bufs[b] = -1;
	s->bufgen[b]++;
	for (p = 0; p < FS_POOLS; p++)
		fs_drop_drained(s, p);
}

/* Host memory from the module, pinned: a dma-buf like the others. */
static bool fs_alloc(struct fs_thread *s, int p)
{
	struct fs_pool *P = &s->pool[p];
	struct kfdpool_alloc *x = fs_arg(s);
	struct fs_call c = { .fd = P->fd[0] };
	enum fs_mut m = fs_pick_mut(s);
	uint64_t size, cookie;
	int over;
	long ret;

	if (FS_PICK(s, FS_ENTRIES, !P->ent[__i].id) < 0 && m != FS_SEMANTIC)
		return false;	/* no room in the model */
	size = x->size = FS_PAGE * (1 + fs_below(s, 4));
	cookie = x->cookie = rel_rand(&s->seed);
	if (m == FS_SEMANTIC) {
		c.must_fail = true;
		switch (fs_below(s, 4)) {
		case 0:
			x->size = 0;
			c.why = "size 0";
			break;
		case 1:
			x->size += 1 + fs_below(s, FS_PAGE - 1);
			c.why = "size not a page multiple";
			break;
		case 2:
			/* Made as the thread's user: no CAP_IPC_LOCK. */
			if (s->memlock) {
				c.as_user = true;
				x->size = (s->memlock & ~(uint64_t)(FS_PAGE - 1)) +
					  FS_PAGE;
				c.why = "more than RLIMIT_MEMLOCK";
				break;
			}
			/* fall through */
		default:
			x->size = 1ull << (50 + fs_below(s, 13));
			c.why = "more than the machine has";
		}
	}
	/* The RLIMIT_MEMLOCK charge may refuse it first: no errno wanted. */
	over = c.must_fail ? -1 : fs_pbytes_over(s, p, size);
	if (over == 1) {
		c.must_fail = true;
		c.why = "more than max_user_persistent_bytes";
		__atomic_add_fetch(&s->st->edquot, 1, __ATOMIC_RELAXED);
	}
	fs_apply(s, &c, p, KFDPOOL_IOC_ALLOC, sizeof(*x), m);
	ret = fs_call(s, &c, "ALLOC");
	if (ret == -EDQUOT && !over && fs_plain(m) && fs_user_settle(s))
		ret = fs_call(s, &c, "ALLOC (again)");
	if (ret == -EDQUOT && !over && fs_plain(m))
		fs_violation(s, "pool %d: ALLOC refused with EDQUOT within max_user_persistent_bytes",
			     p);
	x = (void *)s->buf;
	if (ret < 0)
		return true;
	if (c.must_fail) {
		if (!c.read_only && x->fd > 2)
			close(x->fd);
		return true;
	}
	fs_did_alloc(s, p, size, cookie, x);
	return true;
}

/*
 * The CPU side of an ALLOC'd dma-buf: a shared mapping works and sees what
 * the previous one wrote (the same pages), with begin/end CPU access
 * around the writes; a private writable one is refused.
 */
static bool fs_touch(struct fs_thread *s)
{
	struct dma_buf_sync sync = { .flags = DMA_BUF_SYNC_START |
					      DMA_BUF_SYNC_RW };
	int b = FS_PICK(s, FS_ABUFS, s->bufs[FS_BUFS + __i] >= 0);
	uint64_t len, i;
	uint8_t *m, *pm;
	uint8_t tag;

	if (b < 0)
		return false;
	b += FS_BUFS;
	len = s->bufsize[b];
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, s->bufs[b], 0);
	if (m == MAP_FAILED) {
		fs_violation(s, "mmap of an ALLOC'd dma-buf: %s",
			     strerror(errno));
		return true;
	}
	/* What the last touch wrote (0 at first) is in every page. */
	tag = m[0];
	for (i = 0; i < len; i += FS_PAGE)
		if (m[i] != tag)
			fs_violation(s, "ALLOC'd page %llu holds %u, page 0 %u",
				     (unsigned long long)(i / FS_PAGE), m[i],
				     tag);
	if (ioctl(s->bufs[b], DMA_BUF_IOCTL_SYNC, &sync))
		fs_violation(s, "DMA_BUF_IOCTL_SYNC start: %s",
			     strerror(errno));
	for (i = 0; i < len; i += FS_PAGE)
		m[i] = tag + 1;
	sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW;
	if (ioctl(s->bufs[b], DMA_BUF_IOCTL_SYNC, &sync))
		fs_violation(s, "DMA_BUF_IOCTL_SYNC end: %s", strerror(errno));
	munmap(m, len);
	pm = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, s->bufs[b],
		  0);
	if (pm != MAP_FAILED) {
		fs_violation(s, "a private writable mapping of an ALLOC'd dma-buf");
		munmap(pm, len);
	}
	return true;
}

/*
 * A device's view of an ALLOC'd dma-buf, through the selftests' importer
 * module: it attaches its device, maps the attachment and reads the
 * pattern we wrote through the DMA addresses, writes the next one, unmaps
 * and detaches, then reads and writes through vmap between begin and end
 * of CPU access.  Our mapping must see its last pattern.  What fs_touch()
 * keeps at each page's first byte is put back.
 */
static bool fs_device(struct fs_thread *s)
{
	int b = FS_PICK(s, FS_ABUFS, s->bufs[FS_BUFS + __i] >= 0);
	struct importer_check c = {};
	uint32_t *w, seed;
	uint64_t len, i;
	uint8_t tag;
	int ret;

	if (b < 0 || fs_importer < 0 || s->no_device)
		return false;
	b += FS_BUFS;
	len = s->bufsize[b];
	w = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, s->bufs[b], 0);
	if (w == MAP_FAILED) {
		fs_violation(s, "mmap of an ALLOC'd dma-buf: %s", strerror(errno));
		return true;
	}
	tag = *(uint8_t *)w;
	seed = rel_rand(&s->seed);
	for (i = 0; i < len; i += 4)
		w[i / 4] = importer_word(seed, i);
	c.fd = s->bufs[b];
	c.seed = seed;
	ret = ioctl(fs_importer, IMPORTER_CHECK, &c) ? -errno : 0;
	if (ret == -EOPNOTSUPP) {
		s->no_device = true;	/* DMA addresses are not physical */
	} else if (ret) {
		fs_violation(s, "importer module on an ALLOC'd dma-buf: %s at stage %u, offset %llu",
			     strerror(-ret), c.stage,
			     (unsigned long long)c.bad_offset);
	} else {
		for (i = 0; i < len; i += 4) {
			if (w[i / 4] != importer_word(seed + 2, i)) {
				fs_violation(s, "ALLOC'd dma-buf after the importer: offset %llu holds 0x%x",
					     (unsigned long long)i, w[i / 4]);
				break;
			}
		}
		__atomic_add_fetch(&s->st->device, 1, __ATOMIC_RELAXED);
	}
	for (i = 0; i < len; i += FS_PAGE)
		((uint8_t *)w)[i] = tag;
	munmap(w, len);
	return true;
}

/* What of POOL_LIST element @in, pool @P's, differs from figures @g. */
static const char *fs_list_figs(struct fs_pool *P, const struct fs_figs *g,
				const struct kfdpool_pool_info *in,
				char *what, size_t len)
{
	const struct fs_fig figs[] = {
		FS_FIG(in, entries, g->nent),
		FS_FIG(in, draining_entries, g->ndrain),
		FS_FIG(in, records, g->nrec),
		FS_FIG(in, reserved_bytes, g->reserved),
		FS_FIG(in, draining_bytes, g->draining),
		FS_FIG(in, imported_bytes, g->imported),
		FS_FIG(in, import_fds, g->nimp),
		FS_FIG(in, used_bytes, g->used),
		FS_FIG(in, owner_fds, fs_owners(P)),
	};

	return fs_figs_cmp(what, len, "", figs,
			   sizeof(figs) / sizeof(figs[0]));
}

/* POOL_LIST elements of our pools that differ from the model. */
static const char *fs_list_elem(struct fs_thread *s, int q,
				const struct kfdpool_pool_info *in)
{
	struct fs_pool *P = &s->pool[q];
	static __thread char what[160];
	char name[KFDPOOL_NAME_LEN];
	struct fs_figs g;

	snprintf(name, sizeof(name), "fz%d.%d", s->id, q);
	if (strncmp(in->name, name, sizeof(name)) || in->limit != P->limit ||
	    in->handle_types != P->types)
		return "name, limit or handle types";
	if (in->flags != (P->persist ? KFDPOOL_POOL_PERSIST : 0u) ||
	    in->uid != (P->persist ? s->uid : 0u))
		return "persistent flag or uid";
	if (fs_child_on(s, q))
		return NULL;
	fs_figures(P, &g);
	return fs_list_figs(P, &g, in, what, sizeof(what));
}

/*
 * One listing, a page at a time: NULL when each pool of ours is in it
 * once, as the model has it, and the element tails past the kernel's
 * struct are zeroed; else what is wrong.
 */
static const char *fs_list_all(struct fs_thread *s, size_t isz,
			       unsigned int per, enum fs_mut m)
{
	const size_t ksz = sizeof(struct kfdpool_pool_info);
	unsigned int seen[FS_POOLS] = {}, i, q, pages;
	struct kfdpool_pool_list *x;
	uint64_t cursor = 0;
	const char *bad;
	size_t k;

	for (pages = 0; pages < 64; pages++) {
		struct fs_call c = { .fd = s->ctl };

		x = fs_arg(s);
		x->pools = (uintptr_t)s->elems;
		x->count = per;
		x->info_size = isz;
		x->cursor = cursor;
		memset(s->elems, 0xa5, per * isz);
		fs_apply(s, &c, -1, KFDPOOL_IOC_POOL_LIST, sizeof(*x), m);
		if (fs_call(s, &c, "POOL_LIST") < 0)
			return NULL;	/* no memory, say: nothing to check */
		x = (void *)s->buf;
		if (x->count > per)
			return "more elements than asked";
		for (i = 0; i < x->count; i++) {
			const unsigned char *el = s->elems + i * isz;

			for (k = ksz; k < isz; k++)
				if (el[k])
					return "element tail not zeroed";
			for (q = 0; q < FS_POOLS; q++) {
				if (!fs_pool_exists(&s->pool[q]) ||
				    memcmp(el, s->pool[q].id, KFDPOOL_ID_LEN))
					continue;
				seen[q]++;
				bad = fs_list_elem(s, q, (const void *)el);
				if (bad)
					return bad;
			}
		}
		cursor = x->next_cursor;
		if (!cursor)
			break;
	}
	if (cursor)
		return NULL;	/* more pools than we look at: no verdict */
	for (q = 0; q < FS_POOLS; q++)
		if (fs_pool_exists(&s->pool[q]) && seen[q] != 1)
			return seen[q] ? "a pool of ours listed twice" :
					 "a pool of ours not listed";
	return NULL;
}

/*
 * POOL_LIST: every pool of ours listed exactly once with the model's
 * figures (a mismatch counts only if it stays, as in fs_check), or one
 * call with one thing changed.
 */
static bool fs_list(struct fs_thread *s, int p)
{
	size_t isz = sizeof(struct kfdpool_pool_info);
	struct kfdpool_pool_list *x;
	enum fs_mut m = fs_pick_mut(s);
	const char *bad = NULL;
	unsigned int per;
	int tries;

	if (fs_below(s, 2))
		isz += 8 * (1 + fs_below(s, 4));	/* a later version's */
	per = 1 + fs_below(s, 16);
	if (m == FS_VALID || m == FS_LONG_ZERO) {
		/* As long as fs_check waits: a fork's copy may hold on. */
		for (tries = 0; tries < FS_SETTLE_TRIES; tries++) {
			bad = fs_list_all(s, isz, per, m);
			if (!bad)
				return true;
			usleep(FS_SETTLE_US);
		}
		fs_diag(s, p);
		fs_violation(s, "POOL_LIST: %s", bad);
		return true;
	}
	{
		struct fs_call c = { .fd = s->ctl };

		x = fs_arg(s);
		x->pools = (uintptr_t)s->elems;
		x->count = per;
		x->info_size = isz;
		if (m == FS_SEMANTIC) {
			c.must_fail = true;
			switch (fs_below(s, 2)) {
			case 0:
				x->info_size = fs_below(s, 16) * 8;
				c.why = "info_size under the first version's";
				break;
			default:
				x->info_size = 4097 + fs_below(s, 4096);
				c.why = "info_size over 4096";
			}
		} else if (m == FS_IMPORT_FD || m == FS_OTHER_FILE) {
			c.fd = fs_pool_fd(s, p);
			c.must_fail = true;
			c.why = "control command on a pool fd";
			m = FS_VALID;
		}
		fs_apply(s, &c, -1, KFDPOOL_IOC_POOL_LIST, sizeof(*x), m);
		fs_call(s, &c, "POOL_LIST");
	}
	return true;
}

static bool fs_unpin(struct fs_thread *s, int p)
{
	struct fs_pool *P = &s->pool[p];
	struct kfdpool_unpin *x = fs_arg(s);
	struct fs_call c = { .fd = P->fd[0] };
	enum fs_mut m = fs_pick_mut(s);
	int e = fs_live_entry(s, P), d;

	/* Unpin takes away: a failed copy back does not undo it. */
	if (m == FS_READ_ONLY)
		m = FS_VALID;
	if (m == FS_SEMANTIC) {
		d = FS_PICK(s, FS_ENTRIES, P->ent[__i].draining);
		c.must_fail = true;
		if (d >= 0 && fs_below(s, 2)) {
			x->entry_id = P->ent[d].id;
			c.why = "draining entry";
		} else if (e >= 0 && fs_below(s, 2)) {
			/* Off by one: another live entry, or none. */
			x->entry_id = P->ent[e].id + (fs_below(s, 2) ? 1 : -1);
			d = fs_find_entry(P, x->entry_id);
			c.must_fail = d < 0 || P->ent[d].draining;
			c.why = "no such entry";
		} else {
			/* Ids are handed out cyclically: far ahead is free. */
			x->entry_id = e >= 0 ? P->ent[e].id + 100000 : 0;
			c.why = "no such entry";
		}
	} else if (e < 0) {
		return false;
	} else {
		x->entry_id = P->ent[e].id;
	}
	fs_apply(s, &c, p, KFDPOOL_IOC_UNPIN, sizeof(*x), m);
	if (fs_call(s, &c, "UNPIN") >= 0 && !c.must_fail)
		fs_did_unpin(s, p, (void *)s->buf);
	return true;
}

/* A valid export of live entry @e into @x, or with @spoil one past it. */
static const char *fs_export_args(struct fs_thread *s, struct fs_pool *P,
				  int e, bool spoil, struct kfdpool_export *x)
{
	uint64_t size = P->ent[e].size;

	x->entry_id = P->ent[e].id;
	x->offset = fs_below(s, 4) ? fs_below(s, size) : 0;
	x->size = 1 + fs_below(s, size - x->offset);
	if (!fs_below(s, 4))
		x->size = size - x->offset;	/* to the end */
	if (!spoil)
		return NULL;
	switch (fs_below(s, 3)) {
	case 0:
		x->size = 0;
		return "export of 0 bytes";
	case 1:
		x->size = size - x->offset + 1;
		return "export past the entry's end";
	default:
		x->offset = size + 1 + fs_below(s, 3);
		x->size = 1;
		return "export from past the entry's end";
	}
}

static bool fs_export(struct fs_thread *s, int p)
{
	struct fs_pool *P = &s->pool[p];
	struct kfdpool_export *x = fs_arg(s);
	struct fs_call c = { .fd = P->fd[0] };
	enum fs_mut m = fs_pick_mut(s);
	int e = fs_live_entry(s, P), d;

	if (e < 0 || FS_PICK(s, FS_RECS, !P->rec[__i].live) < 0 ||
	    fs_skip_untyped(s, P, KFDPOOL_HANDLE_TYPES_ALL))
		return false;
	c.why = fs_export_args(s, P, e, m == FS_SEMANTIC, x);
	if (m == FS_SEMANTIC) {
		c.must_fail = true;
		d = FS_PICK(s, FS_ENTRIES, P->ent[__i].draining);
		if (d >= 0 && fs_below(s, 2)) {
			x->entry_id = P->ent[d].id;
			c.why = "export from a draining entry";
		} else if (fs_below(s, 2)) {
			/* Off by one, in range: must fail unless it hit
			 * another live entry as big. */
			fs_export_args(s, P, e, false, x);
			x->entry_id += fs_below(s, 2) ? 1 : -1;
			d = fs_find_entry(P, x->entry_id);
			c.must_fail = d < 0 || P->ent[d].draining ||
				      x->offset + x->size > P->ent[d].size;
			c.why = "export from no such entry";
		}
	}
	if (!P->types) {
		c.must_fail = true;
		c.why = "export from a pool without handle types";
	}
	fs_apply(s, &c, p, KFDPOOL_IOC_EXPORT, sizeof(*x), m);
	if (fs_call(s, &c, "EXPORT") >= 0 && !c.must_fail)
		fs_did_export(s, p, (void *)s->buf);
	return true;
}

static bool fs_revoke(struct fs_thread *s, int p)
{
	struct kfdpool_revoke *x = fs_arg(s);
	struct fs_call c = { .fd = s->pool[p].fd[0] };
	enum fs_mut m = fs_pick_mut(s);
	struct kfdpool_record r;
	int slot;

	if (m == FS_READ_ONLY)
		m = FS_VALID;
	c.why = fs_pick_record(s, p, m == FS_SEMANTIC, &r, &slot);
	if (!c.why)
		return false;
	c.must_fail = m == FS_SEMANTIC;
	x->record = r;
	fs_apply(s, &c, p, KFDPOOL_IOC_REVOKE, sizeof(*x), m);
	if (fs_call(s, &c, "REVOKE") >= 0 && !c.must_fail)
		fs_did_revoke(s, p, &r);
	return true;
}

static bool fs_import(struct fs_thread *s, int p)
{
	struct fs_pool *P = &s->pool[p];
	struct kfdpool_import *x = fs_arg(s), in;
	enum fs_mut m = fs_pick_mut(s);
	int f = fs_open_fd(s, P), slot;
	struct fs_call c = { .fd = f >= 0 ? P->fd[f] : -1 };
	struct kfdpool_record r;
	long ret;

	if (f < 0)
		return false;
	c.why = fs_pick_record(s, p, m == FS_SEMANTIC, &r, &slot);
	if (!c.why)
		return false;
	c.must_fail = m == FS_SEMANTIC;
	x->record = r;
	if (!fs_below(s, 4)) {
		x->flags = KFDPOOL_IMPORT_VALIDATE;
		if (slot >= 0 && !P->holds[f][P->rec[slot].ent]) {
			c.must_fail = true;
			c.why = "VALIDATE without an import";
		}
	}
	in = *x;
	fs_apply(s, &c, p, KFDPOOL_IOC_IMPORT, sizeof(*x), m);
	ret = fs_call(s, &c, "IMPORT");
	if (ret < 0 || c.must_fail) {
		/* A must-fail import that made an fd: do not leak it. */
		if (ret >= 0 && !(in.flags & KFDPOOL_IMPORT_VALIDATE) &&
		    ((struct kfdpool_import *)s->buf)->fd >= 0)
			close(((struct kfdpool_import *)s->buf)->fd);
		return true;
	}
	memcpy(x, s->buf, sizeof(*x));
	x->record = in.record;
	x->flags = in.flags;
	fs_did_import(s, p, f, x, x->fd);
	return true;
}

static bool fs_release(struct fs_thread *s, int p)
{
	struct fs_pool *P = &s->pool[p];
	struct kfdpool_release *x = fs_arg(s);
	enum fs_mut m = fs_pick_mut(s);
	int f = fs_open_fd(s, P), e;
	struct fs_call c = { .fd = f >= 0 ? P->fd[f] : -1 };

	if (f < 0)
		return false;
	if (m == FS_READ_ONLY)
		m = FS_VALID;
	e = FS_PICK(s, FS_ENTRIES, P->holds[f][__i] > 0);
	if (e < 0 && m != FS_SEMANTIC)
		return false;
	if (m == FS_SEMANTIC) {
		c.why = "release of an entry the fd holds no import of";
		c.must_fail = true;
		if (e >= 0 && fs_below(s, 2)) {
			/* Off by one: held, or not. */
			x->entry_id = P->ent[e].id + (fs_below(s, 2) ? 1 : -1);
			e = fs_find_entry(P, x->entry_id);
			c.must_fail = e < 0 || !P->holds[f][e];
		} else {
			e = FS_PICK(s, FS_ENTRIES,
				    P->ent[__i].id && !P->holds[f][__i]);
			x->entry_id = e >= 0 ? P->ent[e].id : 0;
		}
	} else if (e < 0) {
		return false;
	} else {
		x->entry_id = P->ent[e].id;
	}
	fs_apply(s, &c, p, KFDPOOL_IOC_RELEASE, sizeof(*x), m);
	if (fs_call(s, &c, "RELEASE") >= 0 && !c.must_fail)
		fs_did_release(s, p, f, x->entry_id);
	return true;
}

/* A new import fd of pool @p in a free slot; -1 if the call failed. */
static bool fs_pool_export(struct fs_thread *s, int p)
{
	struct fs_pool *P = &s->pool[p];
	struct kfdpool_pool_export *x = fs_arg(s);
	struct fs_call c = { .fd = P->fd[0] };
	enum fs_mut m = fs_pick_mut(s);
	int f = FS_PICK(s, FS_FDS, __i && P->fd[__i] < 0);

	if (fs_skip_untyped(s, P, KFDPOOL_HANDLE_TYPE_FD))
		return false;
	if (f < 0) {
		/* Every slot taken: close one instead. */
		f = 1 + fs_below(s, FS_IMPS);
		fs_close_fd(s, p, f);
		return true;
	}
	if (!(P->types & KFDPOOL_HANDLE_TYPE_FD)) {
		c.must_fail = true;
		c.why = "pool without fd handles";
	}
	fs_apply(s, &c, p, KFDPOOL_IOC_POOL_EXPORT, sizeof(*x), m);
	if (fs_call(s, &c, "POOL_EXPORT") < 0)
		return true;
	x = (void *)s->buf;
	if (c.must_fail) {
		close(x->fd);
	} else {
		fs_slot_set(P, f, x->fd);
	}
	return true;
}

static bool fs_handle_export(struct fs_thread *s, int p)
{
	struct fs_pool *P = &s->pool[p];
	struct kfdpool_handle_export *x = fs_arg(s);
	struct fs_call c = { .fd = P->fd[0] };
	enum fs_mut m = fs_pick_mut(s);
	int h;

	if (fs_skip_untyped(s, P, KFDPOOL_HANDLE_TYPE_FABRIC))
		return false;
	x->policy = fs_below(s, 3);
	if (x->policy == KFDPOOL_HANDLE_POLICY_GID)
		x->gid = getegid();
	if (m == FS_SEMANTIC) {
		c.must_fail = true;
		switch (fs_below(s, 3)) {
		case 0:
			x->policy = KFDPOOL_HANDLE_POLICY_ANY + 1 +
				    fs_below(s, 3);
			c.why = "unknown handle policy";
			break;
		case 1:
			x->policy = fs_below(s, 2) ? KFDPOOL_HANDLE_POLICY_UID :
				    KFDPOOL_HANDLE_POLICY_ANY;
			x->gid = 1 + fs_below(s, 100);
			c.why = "a gid without the gid policy";
			break;
		default:
			x->policy = KFDPOOL_HANDLE_POLICY_GID;
			x->gid = (uint32_t)-1;
			c.why = "an invalid gid";
		}
	}
	if (!(P->types & KFDPOOL_HANDLE_TYPE_FABRIC)) {
		c.must_fail = true;
		c.why = "pool without fabric handles";
	} else if (x->policy == KFDPOOL_HANDLE_POLICY_ANY && !fs_any_allowed &&
		   !c.must_fail) {
		c.must_fail = true;
		c.why = "policy ANY while allow_any_handles is off";
		if (m == FS_VALID || m == FS_LONG_ZERO)
			c.want = -EPERM;
	}
	fs_apply(s, &c, p, KFDPOOL_IOC_HANDLE_EXPORT, sizeof(*x), m);
	if (fs_call(s, &c, "HANDLE_EXPORT") < 0 || c.must_fail)
		return true;
	x = (void *)s->buf;
	if (memcmp(HND(&x->handle)->pool_id, P->id, KFDPOOL_ID_LEN) ||
	    HND(&x->handle)->magic != KFDPOOL_HANDLE_MAGIC) {
		fs_broken(s, p, "HANDLE_EXPORT made a handle of another pool");
		return true;
	}
	h = P->nhandles++ % FS_HANDLES;
	P->handle[h] = x->handle;
	P->handle_dead[h] = false;
	return true;
}

static bool fs_handle_import(struct fs_thread *s, int p)
{
	struct fs_pool *P = &s->pool[p];
	struct kfdpool_pool_import_handle *x = fs_arg(s);
	struct fs_call c = { .fd = s->ctl };
	enum fs_mut m = fs_pick_mut(s);
	int n = P->nhandles < FS_HANDLES ? P->nhandles : FS_HANDLES;
	bool any = false;
	int h, f;

	if (!n)
		return false;
	h = fs_below(s, n);
	x->handle = P->handle[h];
	if (P->handle_dead[h]) {
		c.must_fail = true;
		c.why = "handle of a rotated key";
	}
	if (fs_have_any_handle && !fs_below(s, 4)) {
		/* Refused before its pool is looked up, whatever the key. */
		x->handle = fs_any_handle;
		any = true;
		c.must_fail = !fs_any_allowed;
		c.why = "policy ANY while allow_any_handles is off";
		if (c.must_fail && (m == FS_VALID || m == FS_LONG_ZERO))
			c.want = -EPERM;
	}
	if (m == FS_SEMANTIC && P->nowner && !fs_below(s, 3)) {
		/* Owner handles adopt, never import. */
		x->handle = P->owner[fs_below(s, P->nowner < FS_HANDLES ?
					      P->nowner : FS_HANDLES)];
		any = false;
		c.must_fail = true;
		c.why = "an owner handle to import";
		c.want = -EINVAL;
	} else if (m == FS_SEMANTIC) {
		uint8_t *b = (uint8_t *)&x->handle;

		/* Any byte but the pad (its own mutation) changes the MAC. */
		b[fs_below(s, offsetof(struct kfd_hnd, pad))] ^=
			1 << fs_below(s, 8);
		c.must_fail = true;
		c.why = "altered handle";
	} else if (m == FS_IMPORT_FD || m == FS_OTHER_FILE) {
		c.fd = fs_pool_fd(s, p);	/* a control command on a pool fd */
		c.must_fail = true;
		c.why = "control command on a pool fd";
		m = FS_VALID;
	}
	fs_apply(s, &c, -1, KFDPOOL_IOC_POOL_IMPORT_HANDLE, sizeof(*x), m);
	if (fs_call(s, &c, "POOL_IMPORT_HANDLE") < 0)
		return true;
	x = (void *)s->buf;
	f = FS_PICK(s, FS_FDS, __i && P->fd[__i] < 0);
	if (c.must_fail || f < 0 || any) {	/* (ANY's is a shared pool) */
		close(x->fd);
	} else {
		fs_slot_set(P, f, x->fd);
	}
	return true;
}

static bool fs_rotate(struct fs_thread *s, int p)
{
	struct fs_pool *P = &s->pool[p];
	struct kfdpool_handle_rotate *x = fs_arg(s);
	struct fs_call c = { .fd = P->fd[0] };
	enum fs_mut m = fs_pick_mut(s);
	int h;

	if (!P->persist && fs_skip_untyped(s, P, KFDPOOL_HANDLE_TYPE_FABRIC))
		return false;
	/* A persistent pool's owner handles go with the same key. */
	if (!(P->types & KFDPOOL_HANDLE_TYPE_FABRIC) && !P->persist) {
		c.must_fail = true;
		c.why = "pool without fabric handles";
	}
	fs_apply(s, &c, p, KFDPOOL_IOC_HANDLE_ROTATE, sizeof(*x), m);
	if (fs_call(s, &c, "HANDLE_ROTATE") < 0 || c.must_fail)
		return true;
	for (h = 0; h < FS_HANDLES; h++) {
		P->handle_dead[h] = true;
		P->owner_dead[h] = true;
	}
	return true;
}

static bool fs_stats(struct fs_thread *s, int p)
{
	struct fs_pool *P = &s->pool[p];
	struct kfdpool_pool_stats *x = fs_arg(s);
	enum fs_mut m = fs_pick_mut(s);
	int f = fs_open_fd(s, P);
	struct fs_call c = { .fd = f >= 0 ? P->fd[f] : -1 };
	const char *bad;

	if (f < 0)
		return false;
	x->flags = fs_below(s, 4);
	if (x->flags && f) {
		c.must_fail = true;
		c.why = "reset on an import fd";
	}
	fs_apply(s, &c, p, KFDPOOL_IOC_POOL_STATS, sizeof(*x), m);
	if (fs_call(s, &c, "POOL_STATS") < 0 || c.mut != FS_VALID)
		return true;
	bad = rel_stats_invalid((void *)s->buf);
	if (bad)
		fs_broken(s, p, "POOL_STATS: %s", bad);
	return true;
}

#define FS_DEBUGFS_USERS "/sys/kernel/debug/kfdpool/users"

/*
 * debugfs "users" against the model: the thread's user with its persistent
 * pools, their bytes and its records (no line: none of them).  NULL when
 * they agree, or when debugfs cannot be read (no verdict).
 */
static const char *fs_debugfs_diff(struct fs_thread *s)
{
	unsigned int uid, owner, persistent;
	unsigned long long pbytes;
	const char *bad = NULL;
	bool found = false;
	char line[512];
	long records;
	FILE *f;
	int level;

	if (!s->persist || s->persist_unsure)
		return NULL;
	f = fopen(FS_DEBUGFS_USERS, "re");
	if (!f)
		return NULL;
	while (!found && fgets(line, sizeof(line), f)) {
		if (line[0] == '#' ||
		    sscanf(line, "%*u %d %u %u %ld %*d %u %llu", &level, &uid,
			   &owner, &records, &persistent, &pbytes) != 6 ||
		    level || uid != s->uid)
			continue;
		found = true;
		bad = fs_user_cmp(s, persistent, pbytes, records,
				  "debugfs users");
	}
	fclose(f);
	/* A user nothing holds any more is not listed. */
	return found ? bad : fs_user_cmp(s, 0, 0, 0, "debugfs users (none)");
}

/*
 * Read the module's debugfs files (as root): they must agree with the
 * model (a mismatch counts only if it stays), and reading them changes
 * nothing: pool @p is checked against the model right after.
 */
static bool fs_debugfs(struct fs_thread *s, int p)
{
	const char *bad = NULL;
	int i;

	for (i = 0; i < FS_SETTLE_TRIES; i++) {
		bad = fs_debugfs_diff(s);
		if (!bad)
			break;
		usleep(FS_SETTLE_US);
	}
	if (bad) {
		fs_diag(s, p);
		fs_violation(s, "debugfs %s", bad);
	}
	__atomic_add_fetch(&s->st->debugfs, 1, __ATOMIC_RELAXED);
	fs_check(s, p);
	return true;
}

/*
 * fdinfo (its persistent flag is the model's), debugfs and QUERY (the
 * user's figures are the model's): the module's read-only views.
 */
static bool fs_observe(struct fs_thread *s, int p)
{
	struct fs_pool *P = &s->pool[p];
	struct kfdpool_query *q = fs_arg(s);
	struct fs_call c = { .fd = s->ctl };
	int f = fs_open_fd(s, P);
	char path[64], line[128];
	unsigned int v = 2;
	FILE *fp;

	switch (fs_below(s, 3)) {
	case 0:
		if (f < 0)
			return false;
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", P->fd[f]);
		fp = fopen(path, "re");
		if (!fp)	/* the fd table may be full a moment: EMFILE */
			return true;
		while (fgets(line, sizeof(line), fp))
			if (sscanf(line, "kfdpool-persistent:\t%u", &v) == 1)
				break;
		fclose(fp);
		if (v != P->persist)
			fs_violation(s, "pool %d: fdinfo kfdpool-persistent %u, model %d",
				     p, v, P->persist);
		return true;
	case 1:
		return fs_debugfs(s, p);
	default:
		if (s->persist && fs_below(s, 2)) {
			fs_user_settle(s);
			return true;
		}
		fs_apply(s, &c, -1, KFDPOOL_IOC_QUERY, sizeof(*q),
			 fs_pick_mut(s));
		fs_call(s, &c, "QUERY");
		return true;
	}
}

/* ------------------------------------------------------------------ */
/* Batches, by ioctl or io_uring's vectored form                       */
/* ------------------------------------------------------------------ */

static const uint32_t fs_batch_cmd[4] = {
	KFDPOOL_IOC_EXPORT_BATCH, KFDPOOL_IOC_REVOKE_BATCH,
	KFDPOOL_IOC_IMPORT_BATCH, KFDPOOL_IOC_RELEASE_BATCH,
};
static const size_t fs_batch_ksize[4] = {
	sizeof(struct kfdpool_export), sizeof(struct kfdpool_revoke),
	sizeof(struct kfdpool_import), sizeof(struct kfdpool_release),
};
static const size_t fs_batch_status[4] = {
	offsetof(struct kfdpool_export, status),
	offsetof(struct kfdpool_revoke, status),
	offsetof(struct kfdpool_import, status),
	offsetof(struct kfdpool_release, status),
};

/*
 * Element of a batch of @kind at @el (zeroed) for fd slot @f of pool @p.
 * Returns why it must fail, or NULL.  Whether an element may succeed can
 * depend on the elements before it; only what no earlier element can
 * change makes one must-fail.
 */
static const char *fs_elem(struct fs_thread *s, int p, int kind, int f,
			   void *el, bool spoil)
{
	struct fs_pool *P = &s->pool[p];
	const char *why = NULL;
	int e, slot;

	if (spoil && !fs_below(s, 4)) {
		/* Flags: the second u32 of export and release elements, after
		 * the record in revoke and import elements. */
		size_t off = kind == 0 || kind == 3 ? 4 :
			     sizeof(struct kfdpool_record);

		((uint8_t *)el)[off + 3] = 0x80;
		why = "element with unknown flags";
		spoil = false;	/* the rest stays valid */
	}
	switch (kind) {
	case 0: {
		struct kfdpool_export *x = el;
		uint32_t flags = x->flags;

		e = fs_live_entry(s, P);
		if (e < 0)
			return why ?: "export element of no entry";
		why = fs_export_args(s, P, e, spoil, x) ?: why;
		x->flags = flags;
		if (!P->types)
			why = "export from a pool without handle types";
		return why;
	}
	case 1:
	case 2: {
		struct kfdpool_record r = {};
		const char *w = fs_pick_record(s, p, spoil, &r, &slot);

		if (!w)
			w = "zeroed record";	/* the magic is wrong */
		memcpy(el, &r, sizeof(r));
		if (kind == 2 && !fs_below(s, 4))
			((struct kfdpool_import *)el)->flags |=
				KFDPOOL_IMPORT_VALIDATE;
		return *w ? w : why;
	}
	default: {
		struct kfdpool_release *x = el;

		e = spoil ? -1 : FS_PICK(s, FS_ENTRIES, P->holds[f][__i] > 0);
		if (e >= 0) {
			x->entry_id = P->ent[e].id;
			return why;
		}
		/* Not held now: no earlier release can make it held. */
		e = FS_PICK(s, FS_ENTRIES, P->ent[__i].id && !P->holds[f][__i]);
		x->entry_id = e >= 0 ? P->ent[e].id : 0;
		return why ?: "release of an entry the fd holds no import of";
	}
	}
}

/* The model after element @el of a @kind batch succeeded: 0, or -1 broken. */
static int fs_did_elem(struct fs_thread *s, int p, int kind, int f, void *el)
{
	switch (kind) {
	case 0:
		return fs_did_export(s, p, el);
	case 1:
		return fs_did_revoke(s, p,
				     &((struct kfdpool_revoke *)el)->record);
	case 2:
		return fs_did_import(s, p, f, el,
				     ((struct kfdpool_import *)el)->fd);
	default:
		return fs_did_release(s, p, f,
				      ((struct kfdpool_release *)el)->entry_id);
	}
}

/*
 * An import batch broke the model: say what it was (elements up to the
 * offending @bad, their outcome, the model's holds) and what the kernel
 * counts for the fd, to tell a model slip from a module bug.
 */
static void fs_batch_dump(struct fs_thread *s, int p, int f, int fd,
			  bool uring, int n, long ret, int bad, size_t esz)
{
	struct fs_pool *P = &s->pool[p];
	int j, r, e;

	fprintf(stderr, "# batch dump (fuzzer %d, call %llu): pool %d slot %d fd %d %s, %d elements, %ld processed, element %d; fd-imports %llu\n",
		s->id, (unsigned long long)s->calls, p, f, fd,
		uring ? "io_uring" : "ioctl", n, ret, bad,
		(unsigned long long)fs_fdinfo(fd, "kfdpool-fd-imports"));
	for (j = 0; j <= bad; j++) {
		struct kfdpool_import *x = (void *)(s->elems + j * esz);

		r = fs_find_rec(P, &x->record);
		e = r >= 0 ? P->rec[r].ent : -1;
		fprintf(stderr, "#   %d: flags %u record %u entry %u (slot %d, holds %u) status %d fd %d\n",
			j, x->flags, REC(&x->record)->record_id, REC(&x->record)->entry_id,
			e, e >= 0 ? P->holds[f][e] : 0, x->status, x->fd);
	}
}

static bool fs_batch(struct fs_thread *s, int p, bool uring)
{
	struct fs_pool *P = &s->pool[p];
	/* A parked pool has no owner fd: imports and releases only. */
	int kind = fs_below(s, 4) | (P->fd[0] < 0 ? 2 : 0), f, i, n;
	uint32_t cmd = fs_batch_cmd[kind];
	size_t ksize = fs_batch_ksize[kind], esz = ksize;
	const char *elem_why[FS_MAXBATCH];
	struct kfdpool_batch *b = fs_arg(s);
	enum fs_mut m = fs_pick_mut(s);
	struct fs_call c = { 0 };
	bool tails = false;
	long ret;

	f = kind < 2 ? 0 : fs_open_fd(s, P);
	if (f < 0)
		return false;
	c.fd = P->fd[f];
	n = 1 + fs_below(s, FS_MAXBATCH);
	if (kind == 0) {
		int room = 0;

		for (i = 0; i < FS_RECS; i++)
			room += !P->rec[i].live;
		if (n > room)
			n = room;
		if (!n)
			return false;
	}
	if (!fs_below(s, 4)) {
		esz = ksize + 8 * (1 + fs_below(s, 4));
		tails = !fs_below(s, 4);	/* non-zero: either outcome */
	}
	memset(s->elems, 0, n * esz);
	for (i = 0; i < n; i++) {
		unsigned char *el = s->elems + i * esz;

		elem_why[i] = fs_elem(s, p, kind, f, el,
				      m == FS_VALID && !fs_below(s, 4));
		if (tails && !fs_below(s, 2)) {
			el[ksize + fs_below(s, esz - ksize)] = 1;
			elem_why[i] = NULL;
		}
	}
	b->ops = (uintptr_t)s->elems;
	b->count = n;
	b->elem_size = esz;
	if (m == FS_SEMANTIC) {
		c.must_fail = true;
		switch (fs_below(s, 4)) {
		case 0:
			b->count = fs_below(s, 2) ? 0 : KFD_BATCH_MAX + 1;
			c.why = "batch count out of range";
			break;
		case 1:
			/* Too small for its status: an older one is served. */
			b->elem_size = fs_below(s, fs_batch_status[kind] + 4);
			c.why = "batch element without room for its status";
			break;
		case 2:
			b->ops = 0;
			c.why = "batch array at NULL";
			break;
		default:
			if (kind < 2 && P->fd[1] >= 0) {
				c.fd = P->fd[1];
				c.why = "owner batch on an import fd";
			} else {
				b->count = 0;
				c.why = "batch count out of range";
			}
		}
	}
	if (uring) {
		if (m != FS_VALID && m != FS_SEMANTIC)
			m = FS_VALID;	/* the payload has no size to vary */
		if (!s->have_ring)
			return false;
		ret = fs_uring(s, &s->ring, c.fd, cmd, b);
		if (ret >= 0 && c.must_fail)
			fs_violation(s, "uring %s succeeded with %s",
				     fs_op_names[_IOC_NR(cmd)], c.why);
	} else {
		fs_apply(s, &c, p, cmd, sizeof(*b), m);
		ret = fs_call(s, &c, fs_op_names[_IOC_NR(cmd)]);
	}
	if (ret < 0 || c.must_fail)
		return true;
	if (ret > n) {
		fs_broken(s, p, "batch of %d processed %ld", n, ret);
		return true;
	}
	for (i = 0; i < ret; i++) {
		unsigned char *el = s->elems + i * esz;
		int32_t status;

		memcpy(&status, el + fs_batch_status[kind], 4);
		if (status)
			continue;
		if (elem_why[i]) {
			if (kind == 2 && !(((struct kfdpool_import *)el)->flags &
					   KFDPOOL_IMPORT_VALIDATE))
				close(((struct kfdpool_import *)el)->fd);
			fs_broken(s, p, "%s element %d succeeded with %s",
				  fs_op_names[_IOC_NR(cmd)], i, elem_why[i]);
			continue;
		}
		if (fs_did_elem(s, p, kind, f, el) && kind == 2)
			fs_batch_dump(s, p, f, c.fd, uring, n, ret, i, esz);
	}
	return true;
}

/* ------------------------------------------------------------------ */
/* io_uring single commands                                           */
/* ------------------------------------------------------------------ */

static bool fs_uring_one(struct fs_thread *s, int p)
{
	static const uint32_t ops[4] = {
		KFDPOOL_URING_EXPORT, KFDPOOL_URING_REVOKE,
		KFDPOOL_URING_IMPORT, KFDPOOL_URING_RELEASE,
	};
	struct fs_pool *P = &s->pool[p];
	/* A parked pool has no owner fd: imports and releases only. */
	int kind = fs_below(s, 4) | (P->fd[0] < 0 ? 2 : 0);
	int f = kind < 2 ? 0 : fs_open_fd(s, P);
	struct rel_ring *ring = &s->ring;
	unsigned char pl[80] = {};
	bool must_fail = false, validate = false, ro = false;
	const char *why = NULL;
	uint32_t op = ops[kind];
	struct kfdpool_record r;
	int e, slot = -1, fd;
	long res;

	if (f < 0 || !s->have_ring)
		return false;
	fd = P->fd[f];
	switch (kind) {
	case 0: {
		struct kfdpool_uring_export *x = (void *)pl;
		struct kfdpool_export ex = {};

		e = fs_live_entry(s, P);
		if (e < 0 || FS_PICK(s, FS_RECS, !P->rec[__i].live) < 0 ||
		    fs_skip_untyped(s, P, KFDPOOL_HANDLE_TYPES_ALL))
			return false;
		why = fs_export_args(s, P, e, !fs_below(s, 6), &ex);
		must_fail = why != NULL;
		if (!P->types) {
			must_fail = true;
			why = "export from a pool without handle types";
		}
		x->entry_id = ex.entry_id;
		x->offset = ex.offset;
		x->size = ex.size;
		memset(s->buf, 0, sizeof(r));
		x->record_ptr = (uintptr_t)s->buf;
		if (!fs_below(s, 12)) {
			/* The record cannot be written: undone, must fail. */
			x->record_ptr = (uintptr_t)s->ro;
			must_fail = ro = true;
			why = "read-only record_ptr";
		}
		break;
	}
	case 1:
	case 2: {
		struct kfdpool_uring_record *x = (void *)pl;

		why = fs_pick_record(s, p, !fs_below(s, 6), &r, &slot);
		if (!why)
			return false;
		must_fail = *why;
		x->record = r;
		if (kind == 2 && !fs_below(s, 4)) {
			x->flags = KFDPOOL_IMPORT_VALIDATE;
			validate = true;
			if (slot >= 0 && !P->holds[f][P->rec[slot].ent]) {
				must_fail = true;
				why = "VALIDATE without an import";
			}
		}
		break;
	}
	default: {
		struct kfdpool_release *x = (void *)pl;

		e = FS_PICK(s, FS_ENTRIES, P->holds[f][__i] > 0);
		if (e < 0 && fs_below(s, 4))
			return false;
		if (e < 0 || !fs_below(s, 6)) {
			e = FS_PICK(s, FS_ENTRIES,
				    P->ent[__i].id && !P->holds[f][__i]);
			must_fail = true;
			why = "release of an entry the fd holds no import of";
		}
		x->entry_id = e >= 0 ? P->ent[e].id : 0;
		break;
	}
	}
	switch (fs_below(s, 16)) {
	case 0:		/* flags: the second u32, or after the record */
		pl[(kind == 0 || kind == 3 ? 4 : sizeof(r)) + 3] |= 0x40;
		must_fail = true;
		why = "unknown flags";
		break;
	case 1:
		if (kind == 0)
			break;	/* no pad */
		pl[kind == 3 ? 12 : sizeof(r) + 4] = 1;
		must_fail = true;
		why = "non-zero pad";
		break;
	case 2:		/* bytes no command uses: refused or ignored */
		pl[79 - fs_below(s, 8)] = 1 + fs_below(s, 255);
		break;
	case 3:
		if (!s->have_ring64)
			break;
		ring = &s->ring64;
		must_fail = true;
		why = "a ring without 128-byte SQEs";
		break;
	case 4:
		if (kind > 1 || P->fd[1] < 0)
			break;
		fd = P->fd[1];
		must_fail = true;
		why = "owner command on an import fd";
		break;
	case 5:
		op = _IOC(_IOC_WRITE, KFDPOOL_IOC_MAGIC, 0x44 + fs_below(s, 16),
			  80);
		must_fail = true;
		why = "unknown command";
		break;
	}
	if (must_fail)
		__atomic_add_fetch(&s->st->must_fail, 1, __ATOMIC_RELAXED);
	res = fs_uring(s, ring, fd, op, pl);
	if (res < 0)
		return true;
	if (must_fail) {
		if (kind == 2 && !validate && res > 0)
			close(res);
		fs_broken(s, p, "uring command 0x%x succeeded with %s", op, why);
		return true;
	}
	switch (kind) {
	case 0: {
		struct kfdpool_uring_export *x = (void *)pl;
		struct kfdpool_export ex = {
			.entry_id = x->entry_id, .offset = x->offset,
			.size = x->size,
		};

		(void)ro;
		memcpy(&ex.record, s->buf, sizeof(ex.record));
		fs_did_export(s, p, &ex);
		break;
	}
	case 1:
		fs_did_revoke(s, p, &r);
		break;
	case 2: {
		struct kfdpool_import imp = { .record = r };

		/* The outputs travel only in the CQE: check the record. */
		if (validate) {
			imp.flags = KFDPOOL_IMPORT_VALIDATE;
			res = -1;
		}
		if (slot >= 0) {
			e = P->rec[slot].ent;
			imp.offset = REC(&r)->offset;
			imp.size = REC(&r)->size;
			imp.entry_size = P->ent[e].size;
			imp.cookie = P->ent[e].cookie;
			imp.entry_id = P->ent[e].id;
		}
		fs_did_import(s, p, f, &imp, res);
		break;
	}
	default:
		fs_did_release(s, p, f, ((struct kfdpool_release *)pl)->entry_id);
	}
	return true;
}

/* ------------------------------------------------------------------ */
/* Pools, children, the step                                          */
/* ------------------------------------------------------------------ */

/* Open fds the model holds. */
static int fs_nfds(struct fs_thread *s)
{
	int p, f, n = 0;

	for (p = 0; p < FS_POOLS; p++)
		for (f = 0; f < FS_FDS; f++)
			n += s->pool[p].fd[f] >= 0;
	for (f = FS_BUFS; f < FS_NBUF; f++)
		n += s->bufs[f] >= 0;
	return n;
}

static void fs_reap(struct fs_thread *s);

/* Close every fd of pool @p and empty its slot. */
static void fs_pool_forget(struct fs_thread *s, int p)
{
	struct fs_pool *P = &s->pool[p];
	int f;

	for (f = 0; f < FS_FDS; f++) {
		if (P->fd[f] >= 0) {
			fs_fd_mark(P->fd[f], false);
			close(P->fd[f]);
		}
	}
	memset(P, 0, sizeof(*P));
	for (f = 0; f < FS_FDS; f++)
		P->fd[f] = -1;
}

/* Pool @p was destroyed: every fd of it answers ENODEV, at once. */
static void fs_expect_ended(struct fs_thread *s, int p)
{
	struct fs_pool *P = &s->pool[p];
	struct kfdpool_pool_stats st;
	long ret;
	int f;

	for (f = 0; f < FS_FDS; f++) {
		if (P->fd[f] < 0)
			continue;
		memset(&st, 0, sizeof(st));
		ret = fs_ioctl(s, P->fd[f], KFDPOOL_IOC_POOL_STATS, &st);
		if (ret != -ENODEV)
			fs_violation(s, "pool %d: STATS on fd slot %d of a destroyed pool: %ld",
				     p, f, ret);
	}
	__atomic_add_fetch(&s->st->destroyed, 1, __ATOMIC_RELAXED);
}

/*
 * Destroy persistent pool @p: by its owner fd, or as root by id.  False
 * (a violation) if neither would.
 */
static bool fs_end_persistent(struct fs_thread *s, int p)
{
	struct fs_pool *P = &s->pool[p];
	struct kfdpool_pool_destroy d = {};
	struct kfdpool_pool_destroy_id di = {};
	long ret = -EBADF;

	if (P->fd[0] >= 0 && fs_below(s, 2))
		ret = fs_ioctl(s, P->fd[0], KFDPOOL_IOC_POOL_DESTROY, &d);
	if (ret < 0) {
		memcpy(di.id, P->id, KFDPOOL_ID_LEN);
		ret = fs_ioctl(s, s->ctl, KFDPOOL_IOC_POOL_DESTROY_ID, &di);
	}
	if (ret < 0) {
		fs_violation(s, "pool %d: a persistent pool could not be destroyed: %ld",
			     p, ret);
		return false;
	}
	fs_expect_ended(s, p);
	return true;
}

/*
 * Close pool @p, its owner fd first: the pool ends, and an import fd left
 * over answers ENODEV (once another thread's fork let go of its copy).  A
 * persistent pool would stay: it is destroyed first.
 */
static void fs_pool_close(struct fs_thread *s, int p)
{
	struct fs_pool *P = &s->pool[p];
	struct kfdpool_pool_stats st;
	int left, tries;
	long ret;

	if (fs_child_on(s, p))
		fs_reap(s);
	if (P->persist) {
		fs_end_persistent(s, p);
		fs_pool_forget(s, p);
		return;
	}
	left = FS_PICK(s, FS_FDS, __i && P->fd[__i] >= 0);
	if (P->fd[0] >= 0) {
		fs_fd_mark(P->fd[0], false);
		close(P->fd[0]);
		P->fd[0] = -1;
		for (tries = 0; left > 0 && tries < FS_SETTLE_TRIES; tries++) {
			memset(&st, 0, sizeof(st));
			ret = fs_ioctl(s, P->fd[left], KFDPOOL_IOC_POOL_STATS,
				       &st);
			if (ret == -ENODEV)
				break;
			usleep(FS_SETTLE_US);
		}
		if (left > 0 && tries == FS_SETTLE_TRIES)
			fs_violation(s, "pool %d: STATS on an import fd after the owner's close: %ld",
				     p, ret);
	}
	fs_pool_forget(s, p);
}

/*
 * Make pool @p: its handle types, limit and name drawn at random, and one
 * in three persistent, made as the thread's user.  A persistent pool past
 * max_user_persistent must fail with EDQUOT; then a plain one is made.
 */
static void fs_pool_open(struct fs_thread *s, int p)
{
	static const uint32_t types[] = {
		KFDPOOL_HANDLE_TYPES_ALL, KFDPOOL_HANDLE_TYPES_ALL,
		KFDPOOL_HANDLE_TYPES_ALL, KFDPOOL_HANDLE_TYPE_FD,
		KFDPOOL_HANDLE_TYPE_FABRIC, 0,
	};
	struct fs_pool *P = &s->pool[p];
	bool persist = s->persist && !fs_below(s, 3);
	struct kfdpool_pool_create *x;
	struct fs_ufigs u;
	bool over;
	int tries;
	long ret;

	for (tries = 0; tries < 4; tries++) {
		struct fs_call c = { .fd = s->ctl, .as_user = persist };
		enum fs_mut m = tries ? FS_VALID : fs_pick_mut(s);

		x = fs_arg(s);
		over = false;	/* a retry after EDQUOT is a plain pool */
		x->handle_types = types[fs_below(s, 6)];
		x->limit = fs_below(s, 6) ? 0 : FS_PAGE * (4 + fs_below(s, 16));
		snprintf(x->name, sizeof(x->name), "fz%d.%d", s->id, p);
		if (persist) {
			x->flags = KFDPOOL_POOL_PERSIST;
			fs_user_model(s, &u);
			over = !s->persist_unsure && u.pools >= s->max_persist;
		}
		if (over) {
			c.must_fail = true;
			c.why = "a persistent pool past max_user_persistent";
			c.want = -EDQUOT;
			__atomic_add_fetch(&s->st->edquot, 1, __ATOMIC_RELAXED);
		}
		if (m == FS_SEMANTIC) {
			c.must_fail = true;
			c.want = 0;
			switch (fs_below(s, 3)) {
			case 0:
				x->name[1] = ' ';
				c.why = "name with a space";
				break;
			case 1:
				memset(x->name, 'n', sizeof(x->name));
				c.why = "name without a NUL";
				break;
			default:
				x->handle_types |= 0x10u << fs_below(s, 28);
				c.why = "unknown handle type";
			}
		}
		if (!fs_plain(m))
			c.want = 0;
		P->types = x->handle_types;
		P->limit = x->limit;
		fs_apply(s, &c, -1, KFDPOOL_IOC_POOL_CREATE, sizeof(*x), m);
		ret = fs_call(s, &c, "POOL_CREATE");
		if (ret == -EDQUOT && persist && !over && fs_plain(m) &&
		    !s->persist_unsure && (!s->pool_cap || x->limit <= s->pool_cap))
			fs_violation(s, "pool %d: a persistent pool within max_user_persistent refused: EDQUOT",
				     p);
		if (ret == -EDQUOT && persist)
			persist = false;	/* a plain one, then */
		if (ret < 0)
			continue;
		x = (void *)s->buf;
		if (c.must_fail) {
			/* (A violation already.)  Persistent, it would stay. */
			if (persist)
				fs_ioctl(s, x->fd, KFDPOOL_IOC_POOL_DESTROY,
					 &(struct kfdpool_pool_destroy){});
			close(x->fd);
			continue;
		}
		fs_slot_set(P, 0, x->fd);
		memcpy(P->id, x->id, KFDPOOL_ID_LEN);
		P->persist = persist;
		if (persist)
			__atomic_add_fetch(&s->st->persistent, 1,
					   __ATOMIC_RELAXED);
		return;
	}
}

/* A child's violation: no stdio in a child of a threaded process. */
static void fs_child_violation(struct fs_thread *s, const char *what)
{
	uint64_t n = __atomic_fetch_add(&s->st->violations, 1,
					__ATOMIC_RELAXED);
	char line[240];
	int len;

	len = snprintf(line, sizeof(line),
		       "# fuzz: VIOLATION (child of fuzzer %d): %s\n", s->id,
		       what);
	if (write(2, line, len) < 0)
		return;
	if (n < FS_NMSG)
		snprintf(s->st->msg[n], sizeof(s->st->msg[n]),
			 "child of fuzzer %d: %s", s->id, what);
}

/* Close every fd from 3 up but @a, @b and @c (a child's, after fork()). */
static void fs_close_all_but(int a, int b, int c)
{
	int keep[3] = { a, b, c }, i, j, t;
	unsigned int lo = 3;

	for (i = 0; i < 3; i++)
		for (j = i + 1; j < 3; j++)
			if (keep[j] < keep[i]) {
				t = keep[i];
				keep[i] = keep[j];
				keep[j] = t;
			}
	for (i = 0; i < 3; i++) {
		if (keep[i] < (int)lo)
			continue;
		if (keep[i] > (int)lo)
			syscall(SYS_close_range, lo, keep[i] - 1, 0);
		lo = keep[i] + 1;
	}
	syscall(SYS_close_range, lo, ~0U, 0);
}

/*
 * A child of pool @p: holds import fd @fd of its own and imports through
 * it, runs a long import batch, runs out of fds, or becomes another user
 * and presents the pool's handles.  Killed at any point (or it ends).
 */
static void __attribute__((noreturn))
fs_child(struct fs_thread *s, int p, int fd, const struct kfdpool_record *recs,
	 int n, int scenario)
{
	struct fs_pool *P = &s->pool[p];
	struct kfdpool_pool_import_handle ih;
	struct kfdpool_pool_destroy_id di = {};
	struct kfdpool_pool_adopt ad;
	struct kfdpool_import imp;
	struct kfdpool_batch b = {};
	struct rlimit rl;
	int i, k, lo;

	/*
	 * Nothing of the parent's but what this child uses: closing a pool
	 * fd in the parent must release it.  fork() copied every fd of every
	 * thread, and what another thread closes meanwhile stays referenced
	 * (a pool file's imports, a dma-buf) until the copy goes, a moment
	 * fs_check() waits out: a few close_range() calls keep it short,
	 * where one close() per number up to 4096 did not on the debug
	 * kernel.
	 */
	fs_close_all_but(fd, P->fd[0], s->ctl);
	switch (scenario) {
	case 0:		/* hold imports (and their dma-bufs), then die */
		for (i = 0; i < n; i++) {
			memset(&imp, 0, sizeof(imp));
			imp.record = recs[i];
			ioctl(fd, KFDPOOL_IOC_IMPORT, &imp);
		}
		if (fs_below(s, 2))
			_exit(0);
		for (;;)
			pause();
	case 1:		/* a long import batch, killed while it runs */
		k = FS_ELEMS_BYTES / sizeof(imp);
		if (k > KFD_BATCH_MAX)
			k = KFD_BATCH_MAX;
		for (i = 0; i < k && n; i++) {
			memset(&imp, 0, sizeof(imp));
			imp.record = recs[i % n];
			memcpy(s->elems + i * sizeof(imp), &imp, sizeof(imp));
		}
		b.ops = (uintptr_t)s->elems;
		b.count = i;
		b.elem_size = sizeof(imp);
		ioctl(fd, KFDPOOL_IOC_IMPORT_BATCH, &b);
		_exit(0);
	case 2:		/* no fd left: what makes one fails, leaves nothing */
		/* The lowest free number: every one below it is taken. */
		lo = fcntl(s->ctl, F_DUPFD, 0);
		if (lo < 0)
			_exit(0);
		close(lo);
		rl.rlim_cur = rl.rlim_max = lo;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			_exit(0);
		for (i = 0; i < n; i++) {
			memset(&imp, 0, sizeof(imp));
			imp.record = recs[i];
			if (ioctl(fd, KFDPOOL_IOC_IMPORT, &imp) >= 0)
				fs_child_violation(s, "IMPORT made an fd past RLIMIT_NOFILE");
		}
		if (n) {
			memcpy(s->elems, &imp, sizeof(imp));
			b.ops = (uintptr_t)s->elems;
			b.count = 1;
			b.elem_size = sizeof(imp);
			ioctl(fd, KFDPOOL_IOC_IMPORT_BATCH, &b);
		}
		if (ioctl(P->fd[0], KFDPOOL_IOC_POOL_EXPORT,
			  &(struct kfdpool_pool_export){}) >= 0)
			fs_child_violation(s, "POOL_EXPORT made an fd past RLIMIT_NOFILE");
		if (ioctl(s->ctl, KFDPOOL_IOC_POOL_CREATE,
			  &(struct kfdpool_pool_create){}) >= 0)
			fs_child_violation(s, "POOL_CREATE made an fd past RLIMIT_NOFILE");
		for (i = 0; i < FS_HANDLES && i < (int)P->nhandles; i++) {
			memset(&ih, 0, sizeof(ih));
			ih.handle = P->handle[i];
			if (ioctl(s->ctl, KFDPOOL_IOC_POOL_IMPORT_HANDLE, &ih) >= 0)
				fs_child_violation(s, "IMPORT_HANDLE made an fd past RLIMIT_NOFILE");
		}
		_exit(0);
	default:	/* another user presents the handles */
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(0);
		for (i = 0; i < FS_HANDLES && i < (int)P->nhandles; i++) {
			memset(&ih, 0, sizeof(ih));
			ih.handle = P->handle[i];
			if (ioctl(s->ctl, KFDPOOL_IOC_POOL_IMPORT_HANDLE, &ih) < 0 ||
			    HND(&ih.handle)->policy == KFDPOOL_HANDLE_POLICY_ANY)
				continue;
			fs_child_violation(s, HND(&ih.handle)->policy ==
					   KFDPOOL_HANDLE_POLICY_UID ?
					   "another uid imported a uid handle" :
					   "a non-member imported a gid handle");
		}
		/* Adoption is the pool's user's, or an administrator's. */
		for (i = 0; i < FS_HANDLES && i < (int)P->nowner; i++) {
			memset(&ad, 0, sizeof(ad));
			ad.handle = P->owner[i];
			if (ioctl(s->ctl, KFDPOOL_IOC_POOL_ADOPT, &ad) >= 0)
				fs_child_violation(s, "another uid adopted with an owner handle");
		}
		memset(&ad, 0, sizeof(ad));
		ad.flags = KFDPOOL_ADOPT_BY_ID;
		memcpy(ad.id, P->id, KFDPOOL_ID_LEN);
		if (ioctl(s->ctl, KFDPOOL_IOC_POOL_ADOPT, &ad) >= 0)
			fs_child_violation(s, "another uid adopted by id");
		memcpy(di.id, P->id, KFDPOOL_ID_LEN);
		if (ioctl(s->ctl, KFDPOOL_IOC_POOL_DESTROY_ID, &di) >= 0)
			fs_child_violation(s, "another uid destroyed by id");
		_exit(0);
	}
}

/*
 * A producer that dies: a child becomes the pool's user, adopts parked
 * pool @p with an owner handle, says so through a pipe and holds the owner
 * fd until it is killed.  Meanwhile the pool has an owner (adoption fails
 * with EBUSY); once the child is reaped it is parked again, as it was.
 */
static bool fs_fork_adopter(struct fs_thread *s, int p)
{
	struct fs_pool *P = &s->pool[p];
	int n = P->nowner < FS_HANDLES ? P->nowner : FS_HANDLES;
	int h = FS_PICK(s, n, !P->owner_dead[__i]), pfd[2], i;
	struct pollfd pf;
	uint8_t r = 0;
	pid_t pid;

	if (h < 0 || !s->persist || pipe2(pfd, O_CLOEXEC))
		return false;
	pid = fork();
	if (!pid) {
		struct kfdpool_pool_adopt a = { .handle = P->owner[h] };

		fs_close_all_but(pfd[1], s->ctl, -1);
		r = EPERM;
		if (!syscall(SYS_setresuid, s->uid, s->uid, s->uid)) {
			/* A fork's copy of the last owner fd may linger. */
			for (i = 0; i < FS_SETTLE_TRIES; i++) {
				r = ioctl(s->ctl, KFDPOOL_IOC_POOL_ADOPT, &a) ?
				    errno : 0;
				if (r != EBUSY)
					break;
				usleep(FS_SETTLE_US);
			}
		}
		if (write(pfd[1], &r, 1) != 1 || r)
			_exit(0);
		for (;;)
			pause();
	}
	close(pfd[1]);
	if (pid < 0) {
		close(pfd[0]);
		return true;
	}
	pf.fd = pfd[0];
	pf.events = POLLIN;
	n = poll(&pf, 1, 20000) == 1 ? read(pfd[0], &r, 1) : 0;
	close(pfd[0]);
	s->child = pid;
	s->child_pool = p;
	s->child_left = fs_below(s, 200);
	__atomic_add_fetch(&s->st->children, 1, __ATOMIC_RELAXED);
	if (n != 1 || r)
		fs_violation(s, "pool %d: a child of the pool's user could not adopt it: %s",
			     p, n == 1 ? strerror(r) : "no answer");
	else
		P->child_owner = true;
	return true;
}

static bool fs_fork(struct fs_thread *s, int p)
{
	struct fs_pool *P = &s->pool[p];
	struct kfdpool_record recs[8];
	struct kfdpool_pool_export x = {};
	int i, n = 0, scenario = fs_below(s, 4), e;
	pid_t pid;

	if (s->child)
		return false;
	if (fs_parked(P))
		return fs_fork_adopter(s, p);
	if (!(P->types & KFDPOOL_HANDLE_TYPE_FD))
		return false;
	/* The child's own import fd: its imports die with it. */
	if (fs_ioctl(s, P->fd[0], KFDPOOL_IOC_POOL_EXPORT, &x) < 0)
		return true;
	for (i = 0; i < FS_RECS && n < 8; i++)
		if (P->rec[i].live)
			recs[n++] = P->rec[i].r;
	pid = fork();
	if (!pid)
		fs_child(s, p, x.fd, recs, n, scenario);
	close(x.fd);
	if (pid < 0)
		return true;
	for (e = 0; e < FS_ENTRIES; e++) {
		if (P->ent[e].id && !P->ent[e].draining)
			P->ent[e].child = true;
	}
	s->child = pid;
	s->child_pool = p;
	s->child_left = fs_below(s, 4) ? fs_below(s, 200) : 0;
	__atomic_add_fetch(&s->st->children, 1, __ATOMIC_RELAXED);
	return true;
}

static void fs_reap(struct fs_thread *s)
{
	bool marked[FS_POOLS] = {};
	int status = 0, e, p;

	if (s->child <= 0)
		return;
	for (p = 0; p < FS_POOLS; p++)
		marked[p] = fs_child_on(s, p);
	kill(s->child, SIGKILL);
	while (waitpid(s->child, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		__atomic_add_fetch(&s->st->killed, 1, __ATOMIC_RELAXED);
	else if (WIFSIGNALED(status))
		fs_violation(s, "the forked adopter died of signal %d, not our SIGKILL",
			     WTERMSIG(status));
	s->child = 0;
	/* Its imports (or the owner fd it adopted) went with it. */
	for (e = 0; e < FS_ENTRIES; e++)
		s->pool[s->child_pool].ent[e].child = false;
	s->pool[s->child_pool].child_owner = false;
	for (p = 0; p < FS_POOLS; p++) {
		if (!marked[p])
			continue;
		fs_drop_drained(s, p);
		fs_check(s, p);
	}
}

static bool fs_close_import_fd(struct fs_thread *s, int p)
{
	struct fs_pool *P = &s->pool[p];
	int f = FS_PICK(s, FS_FDS, __i && P->fd[__i] >= 0);

	if (f < 0)
		return false;
	fs_close_fd(s, p, f);
	return true;
}

/* ------------------------------------------------------------------ */
/* Persistent pools: owner handles, parking, adoption, destruction     */
/* ------------------------------------------------------------------ */

/*
 * An owner handle of pool @p: the pool's user gets one of a persistent
 * pool; a pool that is not persistent has none (EOPNOTSUPP), root may not
 * ask for the user's (EPERM), and it has the UID policy only (EINVAL).
 */
static bool fs_owner_handle(struct fs_thread *s, int p)
{
	struct fs_pool *P = &s->pool[p];
	struct kfdpool_handle_export *x = fs_arg(s);
	struct fs_call c = { .fd = P->fd[0], .as_user = true };
	enum fs_mut m = fs_pick_mut(s);
	int h;

	if (P->fd[0] < 0 || !s->persist)
		return false;
	x->policy = KFDPOOL_HANDLE_POLICY_UID;
	x->flags = KFDPOOL_HANDLE_EXPORT_OWNER;
	if (!P->persist) {
		c.must_fail = true;
		c.why = "owner handle of a pool that is not persistent";
		c.want = -EOPNOTSUPP;
	}
	if (m == FS_SEMANTIC && (fs_below(s, 2) || !P->persist)) {
		x->policy = 1 + fs_below(s, 2);
		x->gid = x->policy == KFDPOOL_HANDLE_POLICY_GID ? getegid() : 0;
		c.must_fail = true;
		c.why = "owner handle of another policy";
		c.want = -EINVAL;
	} else if (m == FS_SEMANTIC) {
		c.as_user = false;
		c.must_fail = true;
		c.why = "owner handle asked for by another user";
		c.want = -EPERM;
	}
	if (!fs_plain(m))
		c.want = 0;
	fs_apply(s, &c, p, KFDPOOL_IOC_HANDLE_EXPORT, sizeof(*x), m);
	if (fs_call(s, &c, "HANDLE_EXPORT (owner)") < 0 || c.must_fail)
		return true;
	x = (void *)s->buf;
	if (memcmp(HND(&x->handle)->pool_id, P->id, KFDPOOL_ID_LEN) ||
	    HND(&x->handle)->magic != KFDPOOL_OWNER_HANDLE_MAGIC ||
	    HND(&x->handle)->uid != s->uid) {
		fs_broken(s, p, "HANDLE_EXPORT made an owner handle of another pool or user");
		return true;
	}
	h = P->nowner++ % FS_HANDLES;
	P->owner[h] = x->handle;
	P->owner_dead[h] = false;
	return true;
}

/*
 * POOL_ADOPT of pool @p, by one of its owner handles as the pool's user or
 * by id as root.  A parked pool's new owner fd takes slot 0, and the pool
 * is as the model left it.  The ABI's refusals: EBUSY while an owner fd is
 * open, EOPNOTSUPP for a pool that is not persistent, EACCES for a rotated
 * handle or another user's, ENOENT by id for another user's pool without
 * CAP_SYS_ADMIN or an id no pool has, EINVAL for a handle and an id at
 * once, or an import handle.
 */
static bool fs_adopt(struct fs_thread *s, int p)
{
	struct fs_pool *P = &s->pool[p];
	struct kfdpool_pool_adopt *x = fs_arg(s);
	struct fs_call c = { .fd = s->ctl };
	enum fs_mut m = fs_pick_mut(s);
	int n = P->nowner < FS_HANDLES ? P->nowner : FS_HANDLES;
	bool by_id = !n || !fs_below(s, 3), parked = fs_parked(P);
	int h = -1, tries, how;
	long ret;

	if (!fs_pool_exists(P) || (!by_id && !s->persist))
		return false;
	if (by_id) {
		x->flags = KFDPOOL_ADOPT_BY_ID;
		memcpy(x->id, P->id, KFDPOOL_ID_LEN);
	} else {
		h = fs_below(s, n);
		x->handle = P->owner[h];
		c.as_user = true;
	}
	c.must_fail = true;
	if (!P->persist) {
		c.why = "adoption of a pool that is not persistent";
		c.want = -EOPNOTSUPP;
	} else if (h >= 0 && P->owner_dead[h]) {
		c.why = "owner handle of a rotated key";
		c.want = -EACCES;
	} else if (!parked) {
		c.why = "adoption while an owner fd is open";
		c.want = -EBUSY;
	} else {
		c.must_fail = false;
	}
	if (m == FS_SEMANTIC) {
		how = fs_below(s, 4);
		if ((how == 0 && !s->persist) || (how == 2 && !P->nhandles))
			how = 3;
		c.must_fail = true;
		switch (how) {
		case 0:
			c.as_user = by_id;
			if (by_id && P->persist) {
				/* Its own user, as ipcrm: as a valid call. */
				c.must_fail = !parked;
				c.want = parked ? 0 : -EBUSY;
				c.why = parked ? NULL :
					"adoption while an owner fd is open";
				break;
			}
			c.why = by_id ? "adoption by id of a pool not the user's" :
				"owner handle presented by another user";
			c.want = by_id ? -ENOENT : -EACCES;
			break;
		case 1:
			if (by_id)
				memset(&x->handle, 0xa5, sizeof(x->handle));
			else
				x->id[fs_below(s, KFDPOOL_ID_LEN)] = 1;
			c.why = "a handle and an id at once";
			c.want = -EINVAL;
			break;
		case 2:
			/* An import handle: of the wrong kind. */
			memset(x, 0, sizeof(*x));
			x->handle = P->handle[fs_below(s, P->nhandles < FS_HANDLES ?
						       P->nhandles : FS_HANDLES)];
			c.why = "an import handle for adoption";
			c.want = -EINVAL;
			break;
		default:
			if (by_id) {
				x->id[fs_below(s, KFDPOOL_ID_LEN)] ^=
					1 << fs_below(s, 8);
				c.why = "adoption of an id no pool has";
				c.want = -ENOENT;
			} else {
				/* Any byte but the pad changes the MAC. */
				((uint8_t *)&x->handle)[fs_below(s,
					offsetof(struct kfd_hnd, pad))] ^=
					1 << fs_below(s, 8);
				c.why = "altered owner handle";
				c.want = 0;
			}
		}
	} else if (m == FS_IMPORT_FD || m == FS_OTHER_FILE) {
		c.fd = fs_pool_fd(s, p);
		c.must_fail = true;
		c.why = "control command on a pool fd";
		c.want = 0;
		m = FS_VALID;
	}
	if (!fs_plain(m))
		c.want = 0;
	fs_apply(s, &c, -1, KFDPOOL_IOC_POOL_ADOPT, sizeof(*x), m);
	ret = fs_call(s, &c, "POOL_ADOPT");
	/* A fork of another thread may hold the last owner file a moment. */
	for (tries = 0; ret == -EBUSY && !c.must_fail && fs_plain(m) &&
	     tries < FS_SETTLE_TRIES; tries++) {
		usleep(FS_SETTLE_US);
		ret = fs_call(s, &c, "POOL_ADOPT");
	}
	if (ret < 0 && !c.must_fail && fs_plain(m) && ret != -ENOMEM &&
	    ret != -EMFILE)
		fs_violation(s, "pool %d: adoption of a parked pool (%s) refused: %ld",
			     p, by_id ? "by id" : "by owner handle", ret);
	x = (void *)s->buf;
	if (ret < 0)
		return true;
	if (c.must_fail || !parked) {
		close(x->fd);
		return true;
	}
	fs_slot_set(P, 0, x->fd);
	__atomic_add_fetch(&s->st->adopted, 1, __ATOMIC_RELAXED);
	fs_check(s, p);
	return true;
}

/*
 * Close the owner fd of persistent pool @p, and half the time every import
 * fd too: the pool stays, its entries and records with it, until it is
 * adopted or destroyed.  An owner handle is made first, mostly, to come
 * back with.
 */
static bool fs_park(struct fs_thread *s, int p)
{
	struct fs_pool *P = &s->pool[p];
	int f;

	if (!P->persist || P->fd[0] < 0)
		return false;
	if (fs_child_on(s, p))
		fs_reap(s);
	if (FS_PICK(s, P->nowner < FS_HANDLES ? P->nowner : FS_HANDLES,
		    !P->owner_dead[__i]) < 0 && fs_below(s, 4))
		fs_owner_handle(s, p);
	fs_close_fd(s, p, 0);
	if (fs_below(s, 2))
		for (f = 1; f < FS_FDS; f++)
			if (P->fd[f] >= 0)
				fs_close_fd(s, p, f);
	__atomic_add_fetch(&s->st->parked, 1, __ATOMIC_RELAXED);
	/* Through its import fds, if any: it did not end. */
	fs_check(s, p);
	return true;
}

/*
 * End pool @p now, persistent or not: POOL_DESTROY on its owner fd, or
 * POOL_DESTROY_ID as root.  Every fd of it answers ENODEV then; the slot
 * is made anew at its next step.  Refused: on an import fd (EPERM), by id
 * of another user's pool without CAP_SYS_ADMIN or an id no pool has
 * (ENOENT).
 */
static bool fs_destroy(struct fs_thread *s, int p)
{
	struct fs_pool *P = &s->pool[p];
	enum fs_mut m = fs_pick_mut(s);
	bool by_id = P->fd[0] < 0 || !fs_below(s, 3);
	struct fs_call c = { .fd = by_id ? s->ctl : P->fd[0] };
	int f;
	long ret;

	if (!fs_pool_exists(P))
		return false;
	if (fs_child_on(s, p))
		fs_reap(s);
	if (by_id) {
		struct kfdpool_pool_destroy_id *x = fs_arg(s);

		memcpy(x->id, P->id, KFDPOOL_ID_LEN);
		if (m == FS_SEMANTIC) {
			c.must_fail = true;
			if (s->persist && fs_below(s, 2)) {
				/* Its own user ends its persistent pool. */
				c.as_user = true;
				c.must_fail = !P->persist;
				c.why = P->persist ? NULL :
					"DESTROY_ID of a pool not the user's";
				c.want = P->persist ? 0 : -ENOENT;
			} else {
				x->id[fs_below(s, KFDPOOL_ID_LEN)] ^=
					1 << fs_below(s, 8);
				c.why = "DESTROY_ID of an id no pool has";
				c.want = -ENOENT;
			}
		} else if (m == FS_IMPORT_FD || m == FS_OTHER_FILE) {
			c.fd = fs_pool_fd(s, p);
			c.must_fail = true;
			c.why = "control command on a pool fd";
			m = FS_VALID;
		}
		fs_apply(s, &c, -1, KFDPOOL_IOC_POOL_DESTROY_ID, sizeof(*x), m);
	} else {
		fs_arg(s);
		f = FS_PICK(s, FS_FDS, __i && P->fd[__i] >= 0);
		if (m == FS_SEMANTIC && f > 0) {
			c.fd = P->fd[f];
			c.must_fail = true;
			c.why = "POOL_DESTROY on an import fd";
			c.want = -EPERM;
		}
		fs_apply(s, &c, p, KFDPOOL_IOC_POOL_DESTROY,
			 sizeof(struct kfdpool_pool_destroy), m);
	}
	if (!fs_plain(m))
		c.want = 0;
	ret = fs_call(s, &c, by_id ? "POOL_DESTROY_ID" : "POOL_DESTROY");
	if (ret < 0 && !c.must_fail && (m == FS_VALID || m == FS_LONG_ZERO))
		fs_violation(s, "pool %d: %s of a live pool refused: %ld", p,
			     by_id ? "POOL_DESTROY_ID" : "POOL_DESTROY", ret);
	if (ret < 0 || c.must_fail)
		return true;
	fs_expect_ended(s, p);
	fs_pool_forget(s, p);
	return true;
}

/*
 * A step on a parked pool (no owner fd): imports and releases through the
 * import fds left, new import fds from its handles, stats, adoption,
 * destruction by id, the listings, a child that adopts it and is killed.
 */
static void fs_parked_step(struct fs_thread *s, int p)
{
	int w = fs_below(s, 100);
	bool done;

	if (w < 20)
		done = fs_import(s, p);
	else if (w < 28)
		done = fs_release(s, p);
	else if (w < 38)
		done = fs_batch(s, p, fs_below(s, 3) == 0);
	else if (w < 46)
		done = fs_uring_one(s, p);
	else if (w < 54)
		done = fs_stats(s, p);
	else if (w < 64)
		done = fs_handle_import(s, p);
	else if (w < 68)
		done = fs_close_import_fd(s, p);
	else if (w < 84)
		done = fs_adopt(s, p);
	else if (w < 86)
		done = fs_destroy(s, p);
	else if (w < 91)
		done = fs_debugfs(s, p);
	else if (w < 95)
		done = fs_list(s, p);
	else
		done = fs_fork(s, p);
	if (!done && !fs_import(s, p))
		fs_adopt(s, p);
}

/* One stateful action on one of the thread's pools. */
static void fs_step(struct fs_thread *s)
{
	int p = fs_below(s, FS_POOLS), w;
	struct fs_pool *P = &s->pool[p];
	bool done;

	if (s->child && !s->child_left--)
		fs_reap(s);
	if (!fs_pool_exists(P) || P->broken || !fs_below(s, 2000)) {
		if (fs_pool_exists(P))
			__atomic_add_fetch(&s->st->recreated, 1,
					   __ATOMIC_RELAXED);
		fs_pool_close(s, p);
		fs_pool_open(s, p);
		return;
	}
	if (P->fd[0] < 0) {
		fs_parked_step(s, p);
		goto check;
	}
	w = fs_below(s, 226);
	if (w < 20)
		done = fs_pin(s, p);
	else if (w < 30)
		done = fs_unpin(s, p);
	else if (w < 54)
		done = fs_export(s, p);
	else if (w < 66)
		done = fs_revoke(s, p);
	else if (w < 94)
		done = fs_import(s, p);
	else if (w < 110)
		done = fs_release(s, p);
	else if (w < 130)
		done = fs_batch(s, p, false);
	else if (w < 150)
		done = fs_uring_one(s, p);
	else if (w < 160)
		done = fs_batch(s, p, true);
	else if (w < 166)
		done = fs_pool_export(s, p);
	else if (w < 170)
		done = fs_close_import_fd(s, p);
	else if (w < 176)
		done = fs_handle_export(s, p);
	else if (w < 182)
		done = fs_handle_import(s, p);
	else if (w < 184)
		done = fs_rotate(s, p);
	else if (w < 192)
		done = fs_stats(s, p);
	else if (w < 197)
		done = fs_observe(s, p);
	else if (w < 200)
		done = fs_fork(s, p);
	else if (w < 206)
		done = fs_alloc(s, p);
	else if (w < 208)
		done = fs_touch(s);
	else if (w < 212)
		done = fs_list(s, p);
	else if (w < 215)
		done = fs_owner_handle(s, p);
	else if (w < 218)
		done = fs_adopt(s, p);
	else if (w < 221)
		done = fs_park(s, p);
	else if (w < 222)
		done = fs_destroy(s, p);
	else if (w < 225)
		done = fs_device(s);
	else
		done = fs_debugfs(s, p);
	if (!done && !fs_pin(s, p) && !fs_export(s, p))
		fs_unpin(s, p);
check:
	if (++P->since_check >= FS_CHECK_EVERY)
		fs_check(s, p);
}

static void *fs_map(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * Persistent pools are made as the thread's own user, FS_UID_BASE + id,
 * whose figures must start at nothing; the module's caps are QUERY's.
 * Without the feature, root, or a clean user, the thread makes none.
 */
static void fs_persist_init(struct fs_thread *s)
{
	struct kfdpool_query q = {};
	struct rlimit rl;

	s->uid = FS_UID_BASE + s->id;
	if (ioctl(s->ctl, KFDPOOL_IOC_QUERY, &q) ||
	    !(q.features & KFDPOOL_FEATURE_PERSIST))
		return;
	s->max_persist = q.max_user_persistent;
	s->max_pbytes = q.max_user_persistent_bytes;
	s->pool_cap = q.default_pool_limit;
	if (!getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != RLIM_INFINITY)
		s->memlock = rl.rlim_cur;
	if (fs_seteuid(s->uid))
		return;
	memset(&q, 0, sizeof(q));
	if (ioctl(s->ctl, KFDPOOL_IOC_QUERY, &q))
		q.user_persistent = 1;
	if (fs_seteuid(0)) {
		fprintf(stderr, "# fuzz: fuzzer %d cannot become root again\n",
			s->id);
		_exit(3);
	}
	s->persist = !q.user_persistent && !q.user_persistent_bytes &&
		     !q.user_records;
	if (!s->persist)
		fprintf(stderr, "# fuzz: fuzzer %d: uid %u holds persistent pools or records already: none made\n",
			s->id, s->uid);
}

/* 0, or -errno when the thread's dma-bufs or memory could not be had. */
static int fs_init(struct fs_thread *s, struct fs_stats *st, int ctl,
		   uint64_t seed, int id)
{
	int b, p, f, pfd[2];

	memset(s, 0, sizeof(*s));
	s->st = st;
	s->ctl = ctl;
	s->seed = seed ?: 1;
	s->id = id;
	for (p = 0; p < FS_POOLS; p++)
		for (f = 0; f < FS_FDS; f++)
			s->pool[p].fd[f] = -1;
	for (b = FS_BUFS; b < FS_NBUF; b++)
		s->bufs[b] = -1;
	for (b = 0; b < FS_BUFS; b++) {
		s->bufsize[b] = FS_PAGE * (1 + b);
		s->bufs[b] = rel_dmabuf_new(s->bufsize[b]);
		if (s->bufs[b] < 0)
			return s->bufs[b];
	}
	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	close(pfd[1]);
	s->others[0] = pfd[0];
	s->others[1] = ctl;
	s->others[2] = memfd_create("fuzz-state", MFD_CLOEXEC);
	s->others[3] = s->bufs[0];
	s->others[4] = -1;
	s->others[5] = 4000 + id;	/* never open: the fuzzers stay far below */
	s->ro = fs_map(FS_PAGE, PROT_READ);
	s->buf = fs_map(2 * FS_PAGE, PROT_READ | PROT_WRITE);
	s->elems = fs_map(FS_ELEMS_BYTES, PROT_READ | PROT_WRITE);
	if (!s->ro || !s->buf || !s->elems || s->others[2] < 0)
		return -ENOMEM;
	s->have_ring = !rel_ring_init(&s->ring, 8, IORING_SETUP_SQE128);
	s->have_ring64 = !rel_ring_init(&s->ring64, 4, 0);
	fs_persist_init(s);
	for (p = 0; p < FS_POOLS; p++)
		fs_pool_open(s, p);
	return 0;
}

/* Check every pool a last time and close everything. */
static void fs_fini(struct fs_thread *s)
{
	int b, p;

	fs_reap(s);
	for (p = 0; p < FS_POOLS; p++) {
		if (!s->pool[p].broken)
			fs_check(s, p);
		fs_pool_close(s, p);
	}
	/*
	 * Through fs_buf_close(), which unmarks a number before closing it:
	 * another thread's random half, still running, takes the numbers
	 * again and closes the fds it is handed only where they are not
	 * marked (a stale mark leaked one fd per ALLOC buffer left).
	 */
	for (b = 0; b < FS_NBUF; b++)
		if (s->bufs[b] >= 0)
			fs_buf_close(s, b);
	close(s->others[0]);
	close(s->others[2]);
	if (s->have_ring)
		rel_ring_exit(&s->ring);
	if (s->have_ring64)
		rel_ring_exit(&s->ring64);
	munmap(s->ro, FS_PAGE);
	munmap(s->buf, 2 * FS_PAGE);
	munmap(s->elems, FS_ELEMS_BYTES);
}

#endif /* KFDPOOL_FUZZ_STATE_H */
