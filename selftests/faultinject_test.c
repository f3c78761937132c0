// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fault injection: every allocation (failslab) and user copy
 * (fail_usercopy) a kfdpool command makes is failed in turn, with
 * /proc/thread-self/fail-nth: the n-th fault point this thread reaches
 * fails, for n = 1, 2, ... until the command no longer reaches an n-th.
 * Each time the command must fail cleanly (ENOMEM or EFAULT) or succeed,
 * and leave nothing behind: the pool's figures unchanged by a failed
 * command, no new fd, and once everything is closed the dma-buf count, the
 * pool count and the module's reference count back to their baselines.
 * Leaked kernel objects are kmemleak's to find (tools/vm/kmemleak-check).
 *
 * A second test fails allocations at random (probability, task filter,
 * /proc/self/make-it-fail) under a random workload.
 *
 * KFDPOOL_IOC_ALLOC's page allocations are fault points too
 * (CONFIG_FAIL_PAGE_ALLOC): for its cases the page allocator's fault
 * injection is made to count order-0, highmem and sleeping allocations.
 *
 * Persistent pools (off by default, enabled for the test) are among the
 * cases: creating one, its owner handle, adopting it, destroying it (on
 * its owner fd and by id), and PIN and ALLOC in it.  A failed create or
 * adopt must leave no pool kept, no module reference and nothing charged
 * to the user's persistent figures; a failed adopt leaves the pool
 * adoptable.
 *
 * Needs CONFIG_FAULT_INJECTION_DEBUG_FS and CONFIG_FAILSLAB (the debug
 * kernel); skips elsewhere.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "reliability.h"
#include "kfdpool_persist_util.h"
#include "kselftest_harness.h"

#define FI_FAILSLAB "/sys/kernel/debug/failslab/"
#define FI_USERCOPY "/sys/kernel/debug/fail_usercopy/"
#define FI_PAGEALLOC "/sys/kernel/debug/fail_page_alloc/"
#define FI_BUF_SIZE (4 * 4096)
#define FI_MAX_NTH 2000

/* Settings changed, to be put back. */
/* Persistent pools are off by default: on for the cases that make them. */
#define FI_PERSIST_KNOB	"/sys/module/kfdpool/parameters/max_user_persistent"

static const char *const fi_knobs[] = {
	FI_FAILSLAB "ignore-gfp-wait", FI_FAILSLAB "verbose",
	FI_FAILSLAB "probability", FI_FAILSLAB "interval",
	FI_FAILSLAB "times", FI_FAILSLAB "space", FI_FAILSLAB "task-filter",
	FI_FAILSLAB "cache-filter", FI_FAILSLAB "require-start",
	FI_FAILSLAB "require-end", FI_FAILSLAB "stacktrace-depth",
	FI_USERCOPY "require-start", FI_USERCOPY "require-end",
	FI_USERCOPY "stacktrace-depth", FI_FAILSLAB "reject-start",
	FI_FAILSLAB "reject-end", FI_USERCOPY "reject-start",
	FI_USERCOPY "reject-end",
	FI_USERCOPY "verbose", FI_USERCOPY "probability",
	FI_USERCOPY "interval", FI_USERCOPY "times", FI_USERCOPY "space",
	FI_USERCOPY "task-filter",
	FI_PAGEALLOC "ignore-gfp-wait", FI_PAGEALLOC "ignore-gfp-highmem",
	FI_PAGEALLOC "min-order", FI_PAGEALLOC "verbose",
	FI_PAGEALLOC "probability",
	FI_PERSIST_KNOB,
};
#define FI_NKNOBS (sizeof(fi_knobs) / sizeof(fi_knobs[0]))

/* Write @v to the knob @knob of the fault attribute directory @dir. */
static int fi_write_u64(const char *dir, const char *knob,
			unsigned long long v)
{
	char path[128], val[24];

	snprintf(path, sizeof(path), "%s%s", dir, knob);
	snprintf(val, sizeof(val), "%llu", v);
	return kfd_file_write(path, val);
}

/*
 * Tell the VM runner (tools/vm/run) that stack dumps in the kernel log from
 * here to fi_expect_stacks(false) are ours: the slab dumps one when a
 * cache cannot be made.
 */
static void fi_expect_stacks(bool on)
{
	const char *m = on ? "<4>KFDPOOL-EXPECT-STACKS-BEGIN\n" :
			     "<4>KFDPOOL-EXPECT-STACKS-END\n";
	int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (write(fd, m, strlen(m)) < 0)
		ksft_print_msg("/dev/kmsg: %s\n", strerror(errno));
	close(fd);
}

/* The state a case works on: made fresh for every n. */
struct fi_state {
	int ctl, pool, imp, buf, out;
	uint32_t entry;
	struct kfdpool_record rec;
	struct rel_ring ring;
	bool have_ring;
	struct kfdpool_export ex[4];
	struct kfdpool_import im[4];
	struct kfdpool_revoke rv[4];
	struct kfdpool_release rl[4];
	char fdinfo[64];
	struct kfdpool_pool_handle handle;
	struct kfdpool_pool_handle owner;	/* FI_PERSIST: its owner handle */
	__u8 id[KFDPOOL_ID_LEN];		/* FI_PERSIST: its id */
	bool persist;
	char page[4096];
};

/* What a case needs before its call. */
enum {
	FI_POOL = 1,		/* an owner fd */
	FI_PIN = 2,		/* a pinned dma-buf */
	FI_REC = 4,		/* an export record of it */
	FI_IMP = 8,		/* an import fd */
	FI_HELD = 16,		/* the import fd holds an import of the entry */
	FI_RING = 32,		/* an io_uring with 128-byte SQEs */
	FI_UNDONE = 64,		/* a late EFAULT may leave the deed done */
	FI_HANDLE = 128,	/* a 64-byte handle of the pool */
	FI_PAGES = 256,		/* page allocations are fault points too */
	FI_PERSIST = 512,	/* the pool is persistent (its owner handle) */
	FI_ORPHAN = 1024,	/* ... and its owner fd closed before the call */
};

struct fi_case {
	const char *name;
	/*
	 * FI_* it needs, and FI_UNDONE when the command takes something away
	 * (unpin, revoke, release): if only the copy back of its result
	 * failed, the deed is done and cannot be undone, so a failure may
	 * leave the figures changed.  Commands that make something (pin,
	 * export, import, fds) must undo it when the caller cannot learn of it.
	 */
	unsigned int needs;
	/* The one call; returns >= 0 or -errno. */
	long (*call)(struct fi_state *s);
	/* After a success: close what the call made. */
	void (*reap)(struct fi_state *s, long ret);
	/* After a failure: whatever the case must still find; true if so. */
	bool (*intact)(struct fi_state *s);
};

static long fi_ioctl(int fd, unsigned long cmd, void *arg)
{
	long ret = ioctl(fd, cmd, arg);

	return ret < 0 ? -errno : ret;
}

static long fi_create(struct fi_state *s)
{
	struct kfdpool_pool_create c = { .handle_types = KFDPOOL_HANDLE_TYPES_ALL,
					 .name = "fi" };
	long ret = fi_ioctl(s->ctl, KFDPOOL_IOC_POOL_CREATE, &c);

	s->out = ret ? -1 : c.fd;
	return ret;
}

static long fi_query(struct fi_state *s)
{
	struct kfdpool_query q = {};

	return fi_ioctl(s->ctl, KFDPOOL_IOC_QUERY, &q);
}

static long fi_pool_export(struct fi_state *s)
{
	struct kfdpool_pool_export e = {};
	long ret = fi_ioctl(s->pool, KFDPOOL_IOC_POOL_EXPORT, &e);

	s->out = ret ? -1 : e.fd;
	return ret;
}

static long fi_pin(struct fi_state *s)
{
	struct kfdpool_pin p = { .dmabuf_fd = s->buf, .cookie = 7 };

	return fi_ioctl(s->pool, KFDPOOL_IOC_PIN, &p);
}

static long fi_unpin(struct fi_state *s)
{
	struct kfdpool_unpin u = { .entry_id = s->entry };

	return fi_ioctl(s->pool, KFDPOOL_IOC_UNPIN, &u);
}

static long fi_export(struct fi_state *s)
{
	struct kfdpool_export e = { .entry_id = s->entry, .offset = 4096,
				    .size = 4096 };

	return fi_ioctl(s->pool, KFDPOOL_IOC_EXPORT, &e);
}

static long fi_revoke(struct fi_state *s)
{
	struct kfdpool_revoke r = { .record = s->rec };

	return fi_ioctl(s->pool, KFDPOOL_IOC_REVOKE, &r);
}

static long fi_import(struct fi_state *s)
{
	struct kfdpool_import i = { .record = s->rec };
	long ret = fi_ioctl(s->imp, KFDPOOL_IOC_IMPORT, &i);

	s->out = ret ? -1 : i.fd;
	return ret;
}

static long fi_validate(struct fi_state *s)
{
	struct kfdpool_import i = { .record = s->rec,
				    .flags = KFDPOOL_IMPORT_VALIDATE };

	return fi_ioctl(s->imp, KFDPOOL_IOC_IMPORT, &i);
}

static long fi_release(struct fi_state *s)
{
	struct kfdpool_release r = { .entry_id = s->entry };

	return fi_ioctl(s->imp, KFDPOOL_IOC_RELEASE, &r);
}

static long fi_stats(struct fi_state *s)
{
	struct kfdpool_pool_stats st = {};

	return fi_ioctl(s->pool, KFDPOOL_IOC_POOL_STATS, &st);
}

/* A batch of @count elements of @esz bytes at @ops. */
static long fi_batch(int fd, unsigned long cmd, void *ops, size_t esz,
		     uint32_t count)
{
	struct kfdpool_batch b = { .ops = (uintptr_t)ops, .count = count,
				   .elem_size = esz };

	return fi_ioctl(fd, cmd, &b);
}

static long fi_export_batch(struct fi_state *s)
{
	int i;

	memset(s->ex, 0, sizeof(s->ex));
	for (i = 0; i < 4; i++) {
		s->ex[i].entry_id = s->entry;
		s->ex[i].offset = i * 1024;
		s->ex[i].size = 512;
	}
	return fi_batch(s->pool, KFDPOOL_IOC_EXPORT_BATCH, s->ex,
			sizeof(s->ex[0]), 4);
}

static long fi_import_batch(struct fi_state *s)
{
	int i;

	memset(s->im, 0, sizeof(s->im));
	for (i = 0; i < 4; i++)
		s->im[i].record = s->rec;
	return fi_batch(s->imp, KFDPOOL_IOC_IMPORT_BATCH, s->im,
			sizeof(s->im[0]), 4);
}

static long fi_revoke_batch(struct fi_state *s)
{
	int i;

	/* One live record and three that no longer are. */
	memset(s->rv, 0, sizeof(s->rv));
	for (i = 0; i < 4; i++)
		s->rv[i].record = s->rec;
	return fi_batch(s->pool, KFDPOOL_IOC_REVOKE_BATCH, s->rv,
			sizeof(s->rv[0]), 4);
}

static long fi_release_batch(struct fi_state *s)
{
	int i;

	memset(s->rl, 0, sizeof(s->rl));
	for (i = 0; i < 4; i++)
		s->rl[i].entry_id = s->entry;
	return fi_batch(s->imp, KFDPOOL_IOC_RELEASE_BATCH, s->rl,
			sizeof(s->rl[0]), 4);
}

static long fi_uring(struct fi_state *s, int fd, uint32_t op, void *p,
		     size_t len)
{
	int res = 0, ret;

	ret = rel_uring_cmd(&s->ring, fd, op, p, len, &res);
	return ret ? ret : res;
}

static long fi_uring_export(struct fi_state *s)
{
	struct kfdpool_uring_export ue = { .entry_id = s->entry, .size = 64,
					   .record_ptr = (uintptr_t)s->page };

	return fi_uring(s, s->pool, KFDPOOL_URING_EXPORT, &ue, sizeof(ue));
}

static long fi_uring_import(struct fi_state *s)
{
	struct kfdpool_uring_record ur = { .record = s->rec };
	long ret = fi_uring(s, s->imp, KFDPOOL_URING_IMPORT, &ur, sizeof(ur));

	s->out = ret > 0 ? ret : -1;
	return ret;
}

static long fi_uring_revoke(struct fi_state *s)
{
	struct kfdpool_uring_record ur = { .record = s->rec };

	return fi_uring(s, s->pool, KFDPOOL_URING_REVOKE, &ur, sizeof(ur));
}

static long fi_uring_export_batch(struct fi_state *s)
{
	struct kfdpool_batch b = { .ops = (uintptr_t)s->ex, .count = 4,
				   .elem_size = sizeof(s->ex[0]) };
	int i;

	memset(s->ex, 0, sizeof(s->ex));
	for (i = 0; i < 4; i++) {
		s->ex[i].entry_id = s->entry;
		s->ex[i].size = 100;
	}
	return fi_uring(s, s->pool, KFDPOOL_IOC_EXPORT_BATCH, &b, sizeof(b));
}

static long fi_handle_export(struct fi_state *s)
{
	struct kfdpool_handle_export h = { .policy = KFDPOOL_HANDLE_POLICY_UID };

	return fi_ioctl(s->pool, KFDPOOL_IOC_HANDLE_EXPORT, &h);
}

static long fi_import_handle(struct fi_state *s)
{
	struct kfdpool_pool_import_handle ih = { .handle = s->handle };
	long ret = fi_ioctl(s->ctl, KFDPOOL_IOC_POOL_IMPORT_HANDLE, &ih);

	s->out = ret ? -1 : ih.fd;
	return ret;
}

static long fi_rotate(struct fi_state *s)
{
	struct kfdpool_handle_rotate r = {};

	return fi_ioctl(s->pool, KFDPOOL_IOC_HANDLE_ROTATE, &r);
}

static long fi_create_persist(struct fi_state *s)
{
	struct kfdpool_pool_create c = { .flags = KFDPOOL_POOL_PERSIST,
					 .handle_types = KFDPOOL_HANDLE_TYPES_ALL,
					 .name = "fi" };
	long ret = fi_ioctl(s->ctl, KFDPOOL_IOC_POOL_CREATE, &c);

	s->out = ret ? -1 : c.fd;
	return ret;
}

static long fi_owner_handle(struct fi_state *s)
{
	struct kfdpool_handle_export h = { .policy = KFDPOOL_HANDLE_POLICY_UID,
					   .flags = KFDPOOL_HANDLE_EXPORT_OWNER };

	return fi_ioctl(s->pool, KFDPOOL_IOC_HANDLE_EXPORT, &h);
}

static long fi_adopt(struct fi_state *s)
{
	struct kfdpool_pool_adopt a = { .handle = s->owner };
	long ret = fi_ioctl(s->ctl, KFDPOOL_IOC_POOL_ADOPT, &a);

	s->out = ret ? -1 : a.fd;
	return ret;
}

static long fi_destroy(struct fi_state *s)
{
	struct kfdpool_pool_destroy d = {};

	return fi_ioctl(s->pool, KFDPOOL_IOC_POOL_DESTROY, &d);
}

static long fi_destroy_id(struct fi_state *s)
{
	struct kfdpool_pool_destroy_id d = {};

	memcpy(d.id, s->id, sizeof(d.id));
	return fi_ioctl(s->ctl, KFDPOOL_IOC_POOL_DESTROY_ID, &d);
}

static long fi_alloc(struct fi_state *s)
{
	struct kfdpool_alloc a = { .size = FI_BUF_SIZE, .cookie = 7 };
	long ret = fi_ioctl(s->pool, KFDPOOL_IOC_ALLOC, &a);

	s->out = ret ? -1 : a.fd;
	return ret;
}

/* fdinfo: the show callback allocates; a failure may shorten the text. */
static long fi_fdinfo(struct fi_state *s)
{
	int fd = open(s->fdinfo, O_RDONLY | O_CLOEXEC);
	long n;

	if (fd < 0)
		return -errno;
	n = read(fd, s->page, sizeof(s->page));
	n = n < 0 ? -errno : n;
	close(fd);
	return n;
}

static void fi_reap_out(struct fi_state *s, long ret)
{
	if (s->out >= 0)
		close(s->out);
	s->out = -1;
}

/* A persistent pool just made: destroyed with its fd. */
static void fi_reap_persist(struct fi_state *s, long ret)
{
	if (s->out >= 0)
		kfd_destroy(s->out);
	fi_reap_out(s, ret);
}

/* The pool is still listed, persistent, with no owner fd: adoptable. */
static bool fi_still_orphan(struct fi_state *s)
{
	struct kfdpool_pool_info info;

	return kfd_list_find(s->id, &info) == 1 &&
	       (info.flags & KFDPOOL_POOL_PERSIST) && !info.owner_fds;
}

/* A destroy that failed left the pool as it was: listed. */
static bool fi_still_listed(struct fi_state *s)
{
	return kfd_list_find(s->id, NULL) == 1;
}

static void fi_reap_import_batch(struct fi_state *s, long ret)
{
	long i;

	for (i = 0; i < ret && i < 4; i++)
		if (!s->im[i].status && s->im[i].fd >= 0)
			close(s->im[i].fd);
}

static const struct fi_case fi_cases[] = {
	{ "QUERY", 0, fi_query, NULL },
	{ "POOL_CREATE", 0, fi_create, fi_reap_out },
	{ "POOL_EXPORT", FI_POOL, fi_pool_export, fi_reap_out },
	{ "POOL_STATS", FI_POOL, fi_stats, NULL },
	{ "PIN", FI_POOL, fi_pin, NULL },
	{ "UNPIN", FI_POOL | FI_PIN | FI_REC | FI_UNDONE, fi_unpin, NULL },
	{ "UNPIN (draining)",
	  FI_POOL | FI_PIN | FI_REC | FI_IMP | FI_HELD | FI_UNDONE,
	  fi_unpin, NULL },
	{ "EXPORT", FI_POOL | FI_PIN, fi_export, NULL },
	{ "REVOKE", FI_POOL | FI_PIN | FI_REC | FI_UNDONE, fi_revoke, NULL },
	{ "IMPORT", FI_POOL | FI_PIN | FI_REC | FI_IMP, fi_import, fi_reap_out },
	{ "IMPORT (again)", FI_POOL | FI_PIN | FI_REC | FI_IMP | FI_HELD,
	  fi_import, fi_reap_out },
	{ "IMPORT (validate)", FI_POOL | FI_PIN | FI_REC | FI_IMP | FI_HELD,
	  fi_validate, NULL },
	{ "RELEASE", FI_POOL | FI_PIN | FI_REC | FI_IMP | FI_HELD | FI_UNDONE,
	  fi_release, NULL },
	{ "EXPORT_BATCH", FI_POOL | FI_PIN, fi_export_batch, NULL },
	{ "IMPORT_BATCH", FI_POOL | FI_PIN | FI_REC | FI_IMP, fi_import_batch,
	  fi_reap_import_batch },
	{ "REVOKE_BATCH", FI_POOL | FI_PIN | FI_REC | FI_UNDONE,
	  fi_revoke_batch, NULL },
	{ "RELEASE_BATCH", FI_POOL | FI_PIN | FI_REC | FI_IMP | FI_HELD |
	  FI_UNDONE, fi_release_batch, NULL },
	{ "uring EXPORT", FI_POOL | FI_PIN | FI_RING, fi_uring_export, NULL },
	{ "uring IMPORT", FI_POOL | FI_PIN | FI_REC | FI_IMP | FI_RING,
	  fi_uring_import, fi_reap_out },
	{ "uring REVOKE", FI_POOL | FI_PIN | FI_REC | FI_RING | FI_UNDONE,
	  fi_uring_revoke, NULL },
	{ "uring EXPORT_BATCH", FI_POOL | FI_PIN | FI_RING,
	  fi_uring_export_batch, NULL },
	{ "HANDLE_EXPORT", FI_POOL, fi_handle_export, NULL },
	{ "POOL_IMPORT_HANDLE", FI_POOL | FI_HANDLE, fi_import_handle,
	  fi_reap_out },
	{ "HANDLE_ROTATE", FI_POOL | FI_HANDLE, fi_rotate, NULL },
	{ "fdinfo", FI_POOL | FI_PIN | FI_REC | FI_IMP | FI_HELD, fi_fdinfo, NULL },
	{ "ALLOC", FI_POOL | FI_PAGES, fi_alloc, fi_reap_out },
	{ "ALLOC (pool has entries)", FI_POOL | FI_PIN | FI_REC | FI_PAGES,
	  fi_alloc, fi_reap_out },
	{ "POOL_CREATE (persist)", 0, fi_create_persist, fi_reap_persist },
	{ "HANDLE_EXPORT (owner)", FI_POOL | FI_PERSIST, fi_owner_handle, NULL },
	{ "PIN (persistent)", FI_POOL | FI_PERSIST, fi_pin, NULL },
	{ "ALLOC (persistent)", FI_POOL | FI_PERSIST | FI_PIN | FI_PAGES,
	  fi_alloc, fi_reap_out },
	{ "POOL_ADOPT", FI_POOL | FI_PERSIST | FI_PIN | FI_REC | FI_ORPHAN,
	  fi_adopt, fi_reap_out, fi_still_orphan },
	{ "POOL_DESTROY", FI_POOL | FI_PERSIST | FI_PIN | FI_REC | FI_IMP |
	  FI_HELD, fi_destroy, NULL, fi_still_listed },
	{ "POOL_DESTROY_ID", FI_POOL | FI_PERSIST | FI_PIN | FI_REC | FI_ORPHAN,
	  fi_destroy_id, NULL, fi_still_listed },
};

#define FI_NCASES (sizeof(fi_cases) / sizeof(fi_cases[0]))

/*
 * Let fail-nth count the page allocations of this task (by default the
 * page allocator's injection skips order 0, highmem and sleeping ones).
 * Only failures this task asks for through fail-nth happen: the
 * probability stays 0.
 */
static void fi_page_faults(bool on)
{
	kfd_file_write(FI_PAGEALLOC "ignore-gfp-wait", on ? "N" : "Y");
	kfd_file_write(FI_PAGEALLOC "ignore-gfp-highmem", on ? "N" : "Y");
	kfd_file_write(FI_PAGEALLOC "min-order", on ? "0" : "1");
}

static int fi_prepare(struct fi_state *s, unsigned int needs)
{
	struct kfdpool_import imp;
	long id;
	int ret;

	s->pool = s->imp = s->buf = s->out = -1;
	s->have_ring = false;
	if (!needs)
		return 0;
	s->persist = needs & FI_PERSIST;
	s->pool = s->persist ?
		  kfd_pool_create_flags(s->ctl, 0, KFDPOOL_POOL_PERSIST, "fi",
					KFDPOOL_HANDLE_TYPES_ALL, s->id) :
		  rel_pool_create(s->ctl, 0, KFDPOOL_HANDLE_TYPES_ALL, "fi");
	if (s->pool < 0)
		return s->pool;
	snprintf(s->fdinfo, sizeof(s->fdinfo), "/proc/self/fdinfo/%d", s->pool);
	s->buf = rel_dmabuf_new(FI_BUF_SIZE);
	if (s->buf < 0)
		return s->buf;
	if (needs & FI_PIN) {
		id = rel_pin(s->pool, s->buf, 7);
		if (id < 0)
			return id;
		s->entry = id;
	}
	if (needs & FI_REC) {
		ret = rel_export(s->pool, s->entry, 0, 4096, &s->rec);
		if (ret)
			return ret;
	}
	if (needs & FI_IMP) {
		s->imp = rel_pool_export(s->pool);
		if (s->imp < 0)
			return s->imp;
	}
	if (needs & FI_HELD) {
		ret = rel_import(s->imp, &s->rec, 0, &imp);
		if (ret < 0)
			return ret;
		close(ret);
	}
	if (needs & FI_HANDLE) {
		struct kfdpool_handle_export h = {
			.policy = KFDPOOL_HANDLE_POLICY_UID,
		};

		ret = rel_ioctl(s->pool, KFDPOOL_IOC_HANDLE_EXPORT, &h);
		if (ret)
			return ret;
		s->handle = h.handle;
	}
	if (needs & FI_RING) {
		ret = rel_ring_init(&s->ring, 4, IORING_SETUP_SQE128);
		if (ret)
			return ret;
		s->have_ring = true;
	}
	if (s->persist) {
		ret = kfd_owner_handle(s->pool, &s->owner);
		if (ret)
			return ret;
	}
	if (needs & FI_ORPHAN) {
		close(s->pool);
		s->pool = -1;
	}
	if (needs & FI_PAGES)
		fi_page_faults(true);
	return 0;
}

static void fi_cleanup(struct fi_state *s)
{
	fi_page_faults(false);
	if (s->have_ring)
		rel_ring_exit(&s->ring);
	if (s->out >= 0)
		close(s->out);
	if (s->imp >= 0)
		close(s->imp);
	if (s->buf >= 0)
		close(s->buf);
	if (s->pool >= 0)
		close(s->pool);
	/* A persistent pool stays without its fds: it goes by id. */
	if (s->persist)
		kfd_destroy_id(s->id);
	s->persist = false;
	s->pool = s->imp = s->buf = s->out = -1;
	s->have_ring = false;
}

FIXTURE(fi) {
	int nth;		/* /proc/thread-self/fail-nth */
	char saved[FI_NKNOBS][32];
	bool have_saved[FI_NKNOBS];
	struct fi_state s;
	struct rel_counts base;
	bool expecting_stacks;	/* told tools/vm/run so: fi_expect_stacks() */
};

FIXTURE_SETUP(fi)
{
	unsigned int i;
	int fd;

	self->nth = -1;
	self->expecting_stacks = false;
	memset(self->have_saved, 0, sizeof(self->have_saved));
	self->s.ctl = open("/dev/kfdpool", O_RDWR | O_CLOEXEC);
	if (self->s.ctl < 0)
		SKIP(return, "/dev/kfdpool: %s", strerror(errno));
	if (access(FI_FAILSLAB "probability", W_OK))
		SKIP(return, "no failslab in debugfs (needs CONFIG_FAILSLAB and CONFIG_FAULT_INJECTION_DEBUG_FS)");
	self->nth = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (self->nth < 0)
		SKIP(return, "/proc/thread-self/fail-nth: %s", strerror(errno));
	fd = rel_dmabuf_new(FI_BUF_SIZE);
	if (fd < 0)
		SKIP(return, "no dma-buf source: %s", strerror(-fd));
	close(fd);

	for (i = 0; i < FI_NKNOBS; i++)
		self->have_saved[i] = !kfd_file_read(fi_knobs[i], self->saved[i],
					       sizeof(self->saved[i]));
	/*
	 * Fail sleeping allocations too (GFP_KERNEL is what the module
	 * uses), quietly: a stack dump per failure would read as a kernel
	 * report to the VM runner.  fail-nth works whatever the probability;
	 * keep the random mode off until a test turns it on.
	 */
	ASSERT_EQ(0, kfd_file_write(FI_FAILSLAB "ignore-gfp-wait", "N"));
	ASSERT_EQ(0, kfd_file_write(FI_FAILSLAB "verbose", "0"));
	ASSERT_EQ(0, kfd_file_write(FI_FAILSLAB "probability", "0"));
	kfd_file_write(FI_USERCOPY "verbose", "0");
	kfd_file_write(FI_USERCOPY "probability", "0");
	kfd_file_write(FI_PAGEALLOC "verbose", "0");
	kfd_file_write(FI_PAGEALLOC "probability", "0");
	ASSERT_EQ(0, kfd_file_write(FI_PERSIST_KNOB, "4"));
	rel_counts_read(&self->base);
	/* The control fd is part of the baseline. */
}

/* Write, retrying: a failing allocation may fail the write itself. */
static void fi_write_hard(const char *path, const char *val)
{
	int i;

	for (i = 0; i < 100; i++)
		if (!kfd_file_write(path, val))
			return;
}

FIXTURE_TEARDOWN(fi)
{
	unsigned int i;

	/* Stop the failures before anything else. */
	fi_write_hard("/proc/self/make-it-fail", "0");
	if (self->expecting_stacks)
		fi_expect_stacks(false);
	fi_write_hard(FI_FAILSLAB "probability", "0");
	fi_write_hard(FI_USERCOPY "probability", "0");
	for (i = 0; i < FI_NKNOBS; i++)
		if (self->have_saved[i])
			fi_write_hard(fi_knobs[i], self->saved[i]);
}

/*
 * Fail the @n-th fault point of the next call; returns true if one was
 * failed.  The reads and writes of fail-nth reach fault points of their
 * own only while the count is still running, which is harmless: see below.
 */
static void fi_nth_set(int fd, unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	if (pwrite(fd, buf, len, 0) != len)
		abort();
}

static bool fi_nth_injected(int fd)
{
	char buf[16] = "1";
	ssize_t r;

	/*
	 * 0 means the n-th point was reached and failed.  If the count is
	 * still running this read's own copy-out may be the n-th point and
	 * fail (EFAULT): not injected into the call either.
	 */
	r = pread(fd, buf, sizeof(buf) - 1, 0);
	if (r > 0)
		buf[r] = 0;
	/* One write of 0 always ends with the count at 0. */
	if (pwrite(fd, "0", 1, 0) != 1)
		pwrite(fd, "0", 1, 0);
	return r > 0 && atoi(buf) == 0;
}

TEST_F_TIMEOUT(fi, every_fault_point_in_turn, 3000)
{
	unsigned long long faults = 0, failed_calls = 0, ok_calls = 0;
	struct kfdpool_pool_stats st0, st1;
	struct fi_state *s = &self->s;
	struct rel_counts now;
	unsigned int c, n;

	for (c = 0; c < FI_NCASES; c++) {
		const struct fi_case *fc = &fi_cases[c];
		unsigned int points = 0;

		for (n = 1; n <= FI_MAX_NTH; n++) {
			bool injected;
			int fds;
			long ret;

			ASSERT_EQ(0, fi_prepare(s, fc->needs))
				TH_LOG("%s: set-up failed", fc->name);
			if (s->pool >= 0)
				ASSERT_EQ(0, rel_stats(s->pool, &st0));
			fds = rel_fd_count();

			fi_nth_set(self->nth, n);
			ret = fc->call(s);
			injected = fi_nth_injected(self->nth);

			if (!injected) {
				/* Fewer than n points: all were failed once. */
				points = n - 1;
				EXPECT_LE(0, ret) TH_LOG("%s: fails without injection: %s",
							 fc->name, strerror(-ret));
				if (ret >= 0 && fc->reap)
					fc->reap(s, ret);
				fi_cleanup(s);
				break;
			}
			faults++;
			if (ret < 0) {
				failed_calls++;
				EXPECT_TRUE(ret == -ENOMEM || ret == -EFAULT ||
					    (ret == -EAGAIN &&
					     (fc->needs & FI_RING)))
					TH_LOG("%s, fault point %u: %s",
					       fc->name, n, strerror(-ret));
				/* Failed: nothing changed, no fd appeared. */
				EXPECT_EQ(fds, rel_fd_count())
					TH_LOG("%s, fault point %u: fd leaked",
					       fc->name, n);
				if (s->pool >= 0) {
					const char *why;

					ASSERT_EQ(0, rel_stats(s->pool, &st1));
					why = rel_stats_invalid(&st1);
					EXPECT_TRUE(why == NULL)
						TH_LOG("%s, fault point %u: %s",
						       fc->name, n, why);
					/*
					 * A command undone after its copy back
					 * failed did happen for a moment: the
					 * high-water marks may keep its peak
					 * (never lower), every other figure
					 * must be as it was.
					 */
					EXPECT_TRUE(st0.reserved_high <= st1.reserved_high &&
						    st0.used_high <= st1.used_high)
						TH_LOG("%s, fault point %u: a high-water mark went down",
						       fc->name, n);
					if (ret == -EFAULT) {
						st1.reserved_high = st0.reserved_high;
						st1.used_high = st0.used_high;
					}
					if (!(ret == -EFAULT &&
					      (fc->needs & FI_UNDONE)))
						EXPECT_EQ(0, memcmp(&st0, &st1, sizeof(st0)))
							TH_LOG("%s, fault point %u: failed with %s but the pool's figures changed (reserved %llu -> %llu, entries %u -> %u, records %u -> %u, imported %llu -> %llu)",
							       fc->name, n, strerror(-ret),
							       (unsigned long long)st0.reserved_bytes,
							       (unsigned long long)st1.reserved_bytes,
							       st0.entries, st1.entries,
							       st0.records, st1.records,
							       (unsigned long long)st0.imported_bytes,
							       (unsigned long long)st1.imported_bytes);
				}
				if (fc->intact)
					EXPECT_TRUE(fc->intact(s))
						TH_LOG("%s, fault point %u: failed with %s but the pool changed",
						       fc->name, n, strerror(-ret));
			} else {
				ok_calls++;
				if (fc->reap)
					fc->reap(s, ret);
			}
			fi_cleanup(s);
			{
				struct kfdpool_query q = {};

				ASSERT_EQ(0, rel_ioctl(s->ctl, KFDPOOL_IOC_QUERY, &q));
				EXPECT_TRUE(!q.user_persistent &&
					    !q.user_persistent_bytes)
					TH_LOG("%s, fault point %u: %u persistent pools, %llu bytes left charged",
					       fc->name, n, q.user_persistent,
					       (unsigned long long)q.user_persistent_bytes);
			}
			ASSERT_TRUE(rel_counts_settle(&self->base, &now))
				TH_LOG("%s, fault point %u: dma-bufs %ld -> %ld, pools %ld -> %ld, module refs %ld -> %ld",
				       fc->name, n, self->base.dmabufs,
				       now.dmabufs, self->base.pools, now.pools,
				       self->base.refcnt, now.refcnt);
		}
		EXPECT_GT(FI_MAX_NTH, n) TH_LOG("%s: never ran out of fault points",
					       fc->name);
		ksft_print_msg("%-20s %3u fault points\n", fc->name, points);
	}
	ksft_print_msg("faultinject: %llu faults injected: %llu calls failed cleanly, %llu succeeded anyway\n",
		       faults, failed_calls, ok_calls);
	EXPECT_LT(0, faults);
}

/*
 * A batch of more than one of the kernel's chunks (16 elements), each of
 * its user copies failed in turn: the batch must stop at the element it
 * could not read or write.  So a call that met a failure returns fewer
 * than all (or -EFAULT for none), the elements past what it returns are
 * not written, and what the elements it returns say is so: the pool holds
 * a record for every export that says 0, and the caller an fd for every
 * import that says 0, no other fd.  (A read that failed after others of
 * its chunk had run went unseen: the batch read the element again and
 * went on.)  Only user copies are fault points here: the slab's are the
 * other test's, and some of them are meant to fail unseen (kvmalloc()'s
 * and the xarray's first tries, kmemleak's own allocations).
 */
#define FI_BATCH_N 20
#define FI_UNTOUCHED 0x7eadbeef
_Static_assert(FI_BATCH_N * sizeof(struct kfdpool_import) <=
	       sizeof(((struct fi_state *)0)->page), "fi_state.page too small");

enum fi_long_op { FI_LONG_EXPORT, FI_LONG_IMPORT, FI_LONG_REVOKE, FI_LONG_OPS };

static const char *const fi_long_names[FI_LONG_OPS] = {
	"EXPORT", "IMPORT", "REVOKE",
};

/* Run @op's batch of FI_BATCH_N from s->page; @recs: the revoke's records. */
static long fi_long_batch(struct fi_state *s, enum fi_long_op op,
			  const struct kfdpool_record *recs)
{
	struct kfdpool_export *ex = (void *)s->page;
	struct kfdpool_import *im = (void *)s->page;
	struct kfdpool_revoke *rv = (void *)s->page;
	int i;

	memset(s->page, 0, sizeof(s->page));
	for (i = 0; i < FI_BATCH_N; i++) {
		switch (op) {
		case FI_LONG_EXPORT:
			ex[i].entry_id = s->entry;
			ex[i].offset = i * 512;
			ex[i].size = 256;
			ex[i].status = FI_UNTOUCHED;
			break;
		case FI_LONG_IMPORT:
			im[i].record = s->rec;
			im[i].status = FI_UNTOUCHED;
			break;
		default:
			rv[i].record = recs[i];
			rv[i].status = FI_UNTOUCHED;
			break;
		}
	}
	switch (op) {
	case FI_LONG_EXPORT:
		return fi_batch(s->pool, KFDPOOL_IOC_EXPORT_BATCH, ex,
				sizeof(*ex), FI_BATCH_N);
	case FI_LONG_IMPORT:
		return fi_batch(s->imp, KFDPOOL_IOC_IMPORT_BATCH, im,
				sizeof(*im), FI_BATCH_N);
	default:
		return fi_batch(s->pool, KFDPOOL_IOC_REVOKE_BATCH, rv,
				sizeof(*rv), FI_BATCH_N);
	}
}

/* Status of element @i of fi_long_batch()'s array; closes an import's fd. */
static int fi_long_status(struct fi_state *s, enum fi_long_op op, long i)
{
	struct kfdpool_import *im = (void *)s->page;

	switch (op) {
	case FI_LONG_EXPORT:
		return ((struct kfdpool_export *)s->page)[i].status;
	case FI_LONG_IMPORT:
		if (!im[i].status)
			close(im[i].fd);
		return im[i].status;
	default:
		return ((struct kfdpool_revoke *)s->page)[i].status;
	}
}

TEST_F_TIMEOUT(fi, batch_stops_at_the_element_it_cannot_copy, 1200)
{
	struct kfdpool_record recs[FI_BATCH_N];
	struct kfdpool_pool_stats st0, st1;
	struct fi_state *s = &self->s;
	struct rel_counts now;
	enum fi_long_op op;

	if (access(FI_USERCOPY "probability", W_OK))
		SKIP(return, "no fail_usercopy (CONFIG_FAULT_INJECTION_USERCOPY)");
	/* No slab cache is marked for failslab: no slab allocation is a point. */
	ASSERT_EQ(0, kfd_file_write(FI_FAILSLAB "cache-filter", "Y"));

	for (op = 0; op < FI_LONG_OPS; op++) {
		const char *name = fi_long_names[op];
		unsigned int n, seen = 0;

		for (n = 1; n <= FI_MAX_NTH; n++) {
			unsigned int made = 0;
			bool injected;
			long ret, i;
			int fds;

			ASSERT_EQ(0, fi_prepare(s, op == FI_LONG_IMPORT ?
						FI_POOL | FI_PIN | FI_REC | FI_IMP :
						FI_POOL | FI_PIN));
			for (i = 0; op == FI_LONG_REVOKE && i < FI_BATCH_N; i++)
				ASSERT_EQ(0, rel_export(s->pool, s->entry, i * 512,
							256, &recs[i]));
			/*
			 * Nor a page allocation (the stack depot's may come
			 * at any time; fi_cleanup() puts min-order back).
			 */
			ASSERT_EQ(0, kfd_file_write(FI_PAGEALLOC "min-order", "100"));
			ASSERT_EQ(0, rel_stats(s->pool, &st0));
			fds = rel_fd_count();
			fi_nth_set(self->nth, n);
			ret = fi_long_batch(s, op, recs);
			injected = fi_nth_injected(self->nth);

			for (i = 0; i < FI_BATCH_N; i++) {
				int status = fi_long_status(s, op, i);

				if (i >= ret) {
					EXPECT_EQ(FI_UNTOUCHED, status)
						TH_LOG("%s, fault point %u: element %ld of %ld written",
						       name, n, i, ret);
				} else if (!status) {
					made++;
				} else {
					EXPECT_EQ(0, status)
						TH_LOG("%s, fault point %u: element %ld: %s",
						       name, n, i, strerror(-status));
				}
			}
			/* Imports' fds are closed: none may be left over. */
			EXPECT_EQ(fds, rel_fd_count())
				TH_LOG("%s, fault point %u: an fd leaked", name, n);
			ASSERT_EQ(0, rel_stats(s->pool, &st1));
			if (op != FI_LONG_IMPORT) {
				EXPECT_EQ(op == FI_LONG_EXPORT ?
					  st0.records + made :
					  st0.records - made, st1.records)
					TH_LOG("%s, fault point %u: %u said 0, records %u -> %u",
					       name, n, made, st0.records,
					       st1.records);
			}
			if (injected) {
				EXPECT_TRUE(ret == -EFAULT ||
					    (ret >= 0 && ret < FI_BATCH_N))
					TH_LOG("%s, fault point %u: injected, yet %ld returned",
					       name, n, ret);
				seen++;
			} else {
				EXPECT_EQ(FI_BATCH_N, ret);
				EXPECT_EQ(FI_BATCH_N, made);
			}
			fi_cleanup(s);
			ASSERT_TRUE(rel_counts_settle(&self->base, &now))
				TH_LOG("fault point %u: dma-bufs %ld -> %ld, pools %ld -> %ld, module refs %ld -> %ld",
				       n, self->base.dmabufs, now.dmabufs,
				       self->base.pools, now.pools,
				       self->base.refcnt, now.refcnt);
			if (!injected)
				break;
		}
		EXPECT_GT(FI_MAX_NTH, n);
		/*
		 * The ioctl's own read, and a read and a write per element
		 * (a revoke's status goes back by put_user(): no point).
		 */
		EXPECT_EQ(1 + (op == FI_LONG_REVOKE ? 1 : 2) * FI_BATCH_N, seen);
		ksft_print_msg("%s batch of %d: %u user copies failed in turn\n",
			       name, FI_BATCH_N, seen);
	}
}

/*
 * Random failures: a fifth of this task's allocations and a twentieth of
 * its user copies fail while it runs a random workload.  Every call must
 * succeed or fail with an errno it may return, and afterwards the pools'
 * figures must add up and, closed, leave nothing.
 */
TEST_F_TIMEOUT(fi, random_failures, 3000)
{
	uint64_t seed = rel_seed("KFDPOOL_FI_SEED");
	uint64_t ops = rel_env_u64("KFDPOOL_FI_OPS", 3000);
	unsigned long long calls = 0, fails = 0, bad = 0;
	int pools[4] = { -1, -1, -1, -1 }, imps[4] = { -1, -1, -1, -1 };
	bool imp_of_pool[4] = {};	/* imps[p] is of pools[p], not older */
	struct kfdpool_record recs[16] = {};
	uint32_t entries[16] = {};
	int bufs[4], last_bad = 0, i;
	struct kfdpool_pool_stats st;
	struct rel_counts now;
	uint64_t k;

	for (i = 0; i < 4; i++) {
		bufs[i] = rel_dmabuf_new(FI_BUF_SIZE);
		ASSERT_LE(0, bufs[i]);
	}
	ksft_print_msg("KFDPOOL_FI_SEED=0x%llx KFDPOOL_FI_OPS=%llu\n",
		       (unsigned long long)seed, (unsigned long long)ops);
	/*
	 * The task filter first and the probability last: with the filter
	 * off every task's allocations would fail, init's included.
	 */
	ASSERT_EQ(0, kfd_file_write(FI_FAILSLAB "task-filter", "Y"));
	ASSERT_EQ(0, kfd_file_write(FI_FAILSLAB "interval", "1"));
	ASSERT_EQ(0, kfd_file_write(FI_FAILSLAB "times", "-1"));
	ASSERT_EQ(0, kfd_file_write(FI_FAILSLAB "space", "0"));
	if (!kfd_file_write(FI_USERCOPY "task-filter", "Y")) {
		kfd_file_write(FI_USERCOPY "interval", "1");
		kfd_file_write(FI_USERCOPY "times", "-1");
		kfd_file_write(FI_USERCOPY "probability", "5");
	}
	ASSERT_EQ(0, kfd_file_write(FI_FAILSLAB "probability", "20"));
	ASSERT_EQ(0, kfd_file_write("/proc/self/make-it-fail", "1"));

	/* No output from here on: write(2) may fail too. */
	for (k = 0; k < ops; k++) {
		unsigned int p = rel_below(&seed, 4), j = rel_below(&seed, 16);
		struct kfdpool_import imp;
		bool ended = false;	/* on an import fd of an ended pool */
		long ret = 0;

		switch (rel_below(&seed, 10)) {
		case 0:
			if (pools[p] >= 0) {
				/* The pool ends: an import fd left answers ENODEV. */
				close(pools[p]);
				pools[p] = -1;
				imp_of_pool[p] = false;
			} else {
				ret = rel_pool_create(self->s.ctl, 0,
						      KFDPOOL_HANDLE_TYPES_ALL,
						      "fi-random");
				pools[p] = ret >= 0 ? ret : -1;
			}
			break;
		case 1:
			if (imps[p] >= 0) {
				close(imps[p]);
				imps[p] = -1;
			} else if (pools[p] >= 0) {
				ret = rel_pool_export(pools[p]);
				imps[p] = ret >= 0 ? ret : -1;
				imp_of_pool[p] = ret >= 0;
			}
			break;
		case 2:
			if (pools[p] >= 0) {
				ret = rel_pin(pools[p], bufs[rel_below(&seed, 4)],
					      j);
				if (ret > 0)
					entries[j] = ret;
			}
			break;
		case 3:
			if (pools[p] >= 0)
				ret = rel_unpin(pools[p], entries[j]);
			break;
		case 4:
			if (pools[p] >= 0)
				ret = rel_export(pools[p], entries[j], 0, 64,
						 &recs[j]);
			break;
		case 5:
			if (pools[p] >= 0) {
				uint32_t e = 0;

				ret = rel_alloc(pools[p], FI_BUF_SIZE, j, &e);
				if (ret >= 0) {
					close(ret);
					entries[j] = e;
				} else if (ret == -ENOTTY) {
					ret = 0;	/* an older module */
				}
			}
			break;
		case 6:
			if (pools[p] >= 0)
				ret = rel_revoke(pools[p], &recs[j]);
			break;
		case 7: case 8:
			ended = !imp_of_pool[p];
			if (imps[p] >= 0) {
				ret = rel_import(imps[p], &recs[j],
						 rel_below(&seed, 3) ? 0 :
						 KFDPOOL_IMPORT_VALIDATE, &imp);
				if (ret > 0)
					close(ret);
			}
			break;
		default:
			ended = !imp_of_pool[p];
			if (imps[p] >= 0)
				ret = rel_release(imps[p], entries[j]);
		}
		calls++;
		if (ret >= 0)
			continue;
		fails++;
		/* What these calls may return, plus the injected ones. */
		switch (-ret) {
		case ENOMEM: case EFAULT: case ENOENT: case ESTALE:
		case EEXIST: case EXDEV: case ENXIO: case EINVAL:
		case EOPNOTSUPP: case ENOSPC:
			break;
		case ENODEV:
			if (ended)
				break;
			/* fall through */
		default:
			bad++;
			last_bad = -ret;
		}
	}

	/* Stop failing (the write itself may fail: retry). */
	for (i = 0; i < 100; i++)
		if (!kfd_file_write("/proc/self/make-it-fail", "0"))
			break;
	ASSERT_GT(100, i);
	kfd_file_write(FI_FAILSLAB "probability", "0");
	kfd_file_write(FI_USERCOPY "probability", "0");

	ksft_print_msg("faultinject random: %llu calls, %llu failed (injected or legitimately), %llu with an unexpected errno\n",
		       calls, fails, bad);
	EXPECT_EQ(0, bad) TH_LOG("last unexpected errno: %s", strerror(last_bad));
	for (i = 0; i < 4; i++) {
		if (pools[i] >= 0) {
			const char *why;

			ASSERT_EQ(0, rel_stats(pools[i], &st));
			why = rel_stats_invalid(&st);
			EXPECT_TRUE(why == NULL) TH_LOG("pool %d: %s", i, why);
			EXPECT_EQ(imps[i] >= 0 && imp_of_pool[i] ? 1 : 0,
				  st.import_fds)
				TH_LOG("pool %d: import fd %d, of %s pool", i,
				       imps[i], imp_of_pool[i] ? "this" :
				       "an earlier");
			close(pools[i]);
		}
		if (imps[i] >= 0)
			close(imps[i]);
		close(bufs[i]);
	}
	EXPECT_TRUE(rel_counts_settle(&self->base, &now))
		TH_LOG("dma-bufs %ld -> %ld, pools %ld -> %ld, module refs %ld -> %ld",
		       self->base.dmabufs, now.dmabufs, self->base.pools,
		       now.pools, self->base.refcnt, now.refcnt);
}

/*
 * Module load under every fault point of its own init: each of
 * kfdpool_init()'s failures must unwind what it made (the slab cache,
 * debugfs files, the misc device), so that the load fails
 * cleanly, nothing of the module stays behind, and the next load works.
 * Only points under do_one_initcall() count (the stack trace filter):
 * the loader's own come first and are many.  Those under
 * sysfs_slab_add() do not either: on 6.12 a failure there leaks the slab
 * kobject's name (no kobject_put() after kobject_init_and_add() fails),
 * which kmemleak would lay at our door.
 */
#define FI_MEASURE (1u << 30)

static bool fi_module_loaded(void)
{
	return !access("/sys/module/kfdpool/initstate", F_OK);
}

/* Anything of a kfdpool left in the kernel: "" for nothing. */
static const char *fi_module_traces(void)
{
	static char line[256];
	FILE *f;

	if (!access("/sys/kernel/debug/kfdpool", F_OK))
		return "/sys/kernel/debug/kfdpool";
	if (!access("/sys/class/misc/kfdpool", F_OK))
		return "/sys/class/misc/kfdpool";
	f = fopen("/proc/slabinfo", "re");
	if (!f)
		return "";
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "kfdpool", 7)) {
			fclose(f);
			return line;
		}
	fclose(f);
	return "";
}

/*
 * Where @name's text starts and the next symbol's does, from
 * /proc/kallsyms (root sees the addresses).  0 or -errno.
 */
static int fi_sym_range(const char *name, unsigned long long *start,
			unsigned long long *end)
{
	unsigned long long a, best = ~0ULL;
	char line[512], sym[256], type;
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f)
		return -errno;
	*start = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &type, sym) == 3 &&
		    !strcmp(sym, name))
			*start = a;
	rewind(f);
	while (*start && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx", &a) == 1 && a > *start && a < best)
			best = a;
	fclose(f);
	*end = best;
	return *start && best != ~0ULL ? 0 : -ENOENT;
}

TEST_F_TIMEOUT(fi, module_init_unwinds_every_failure, 1800)
{
	static const char *const dirs[] = { FI_FAILSLAB, FI_USERCOPY };
	const char *ko = getenv("KFDPOOL_KO"), *left;
	unsigned int n, failed = 0, i;
	unsigned long long start = 0, end = 0, rstart = 0, rend = 0;
	int ret;

	if (!ko || !*ko)
		SKIP(return, "KFDPOOL_KO not set (the VM runner sets it)");
	if (access(FI_FAILSLAB "require-start", W_OK))
		SKIP(return, "no stack trace filter (CONFIG_FAULT_INJECTION_STACKTRACE_FILTER)");
	ASSERT_EQ(0, fi_sym_range("do_one_initcall", &start, &end));
	ASSERT_EQ(0, fi_sym_range("sysfs_slab_add", &rstart, &rend));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, fi_write_u64(dirs[i], "reject-start", rstart));
		ASSERT_EQ(0, fi_write_u64(dirs[i], "reject-end", rend));
		ASSERT_EQ(0, fi_write_u64(dirs[i], "require-start", start));
		ASSERT_EQ(0, fi_write_u64(dirs[i], "require-end", end));
		/* The deepest: kfdpool_init(), misc_register(), ..., the slab. */
		ASSERT_EQ(0, fi_write_u64(dirs[i], "stacktrace-depth", 64));
	}
	close(self->s.ctl);
	self->s.ctl = -1;
	self->expecting_stacks = true;
	fi_expect_stacks(true);

	for (n = 1; n <= FI_MAX_NTH; n++) {
		bool injected;

		ASSERT_EQ(0, rel_module_unload());
		ASSERT_STREQ("", fi_module_traces());
		/* Only points under do_one_initcall() count: open()'s do not. */
		fi_nth_set(self->nth, n);
		ret = rel_module_load(ko);
		injected = fi_nth_injected(self->nth);
		if (!ret) {
			ASSERT_TRUE(fi_module_loaded());
			if (!injected)
				break;	/* no n-th point in the init */
			continue;	/* a failure it may absorb: debugfs */
		}
		ASSERT_TRUE(injected) TH_LOG("fault point %u: %s without injection",
					     n, strerror(-ret));
		EXPECT_EQ(-ENOMEM, ret) TH_LOG("fault point %u: %s", n,
					       strerror(-ret));
		EXPECT_FALSE(fi_module_loaded());
		left = fi_module_traces();
		EXPECT_STREQ("", left) TH_LOG("fault point %u: failed with %s, left %s",
					      n, strerror(-ret), left);
		failed++;
		/* It loads again: misc_register() was undone too. */
		ASSERT_EQ(0, rel_module_load(ko))
			TH_LOG("fault point %u: no load after the failure", n);
	}
	EXPECT_GT(FI_MAX_NTH, n);
	fi_expect_stacks(false);
	self->expecting_stacks = false;
	/* The module is loaded, as the fixture found it. */
	self->s.ctl = open("/dev/kfdpool", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->s.ctl);
	EXPECT_LT(0, failed);
	ksft_print_msg("module init: %u fault points failed in turn, %u loads failed cleanly\n",
		       n - 1, failed);
}

TEST_HARNESS_MAIN
