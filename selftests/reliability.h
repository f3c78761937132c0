/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers shared by the reliability selftests (fuzz, killanywhere,
 * faultinject, stress): dma-buf sources, leak counters (dma-bufs, pools,
 * module references, fds), module unload and reload, a raw io_uring ring
 * with 128-byte SQEs, and a seeded PRNG.
 *
 * Header-only and static: every test is one program.
 */
#ifndef KFDPOOL_RELIABILITY_H
#define KFDPOOL_RELIABILITY_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <linux/io_uring.h>
#include <linux/udmabuf.h>

#include <linux/kfdpool.h>
#include "kfdpool_format.h"
#include "kfdpool_util.h"

#ifndef F_SEAL_SHRINK
#define F_SEAL_SHRINK 0x0002
#endif
#ifndef MFD_ALLOW_SEALING
#define MFD_ALLOW_SEALING 0x0002U
#endif

/* ------------------------------------------------------------------ */
/* PRNG: xorshift64*, so a seed replays the same sequence anywhere      */
/* ------------------------------------------------------------------ */

static inline uint64_t rel_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x ? x : 0x9e3779b97f4a7c15ull;
	return x * 0x2545f4914f6cdd1dull;
}

static inline uint64_t rel_below(uint64_t *s, uint64_t n)
{
	return n ? rel_rand(s) % n : 0;
}

/* Read a number from the environment, or @def. */
static inline uint64_t rel_env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);
	char *end;
	uint64_t n;

	if (!v || !*v)
		return def;
	errno = 0;
	n = strtoull(v, &end, 0);
	if (errno || *end)
		return def;
	return n;
}

/* The seed from @env, or a fresh one from the clock and pid. */
static inline uint64_t rel_seed(const char *env)
{
	struct timespec ts;

	if (getenv(env) && *getenv(env))
		return rel_env_u64(env, 1);
	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^
	       ((uint64_t)getpid() << 16);
}

/* True on the debug kernel (the VM runner says which kernel it booted). */
static inline bool rel_debug_kernel(void)
{
	const char *k = getenv("KFDPOOL_KERNEL");

	return k && !strcmp(k, "debug");
}

/* ------------------------------------------------------------------ */
/* Leak counters                                                        */
/* ------------------------------------------------------------------ */

#define REL_BUFINFO "/sys/kernel/debug/dma_buf/bufinfo"
#define REL_REFCNT "/sys/module/kfdpool/refcnt"

/* dma-bufs alive on the system ("Total N objects"), -1 if unknown. */
static inline long rel_dmabuf_count(void)
{
	char line[256];
	long n = -1;
	FILE *f;

	f = fopen(REL_BUFINFO, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Total %ld objects", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* References on the kfdpool module, -1 if unknown. */
static inline long rel_module_refcnt(void)
{
	long n = -1;
	FILE *f;

	f = fopen(REL_REFCNT, "re");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &n) != 1)
		n = -1;
	fclose(f);
	return n;
}

/* Open fds of this process. */
static inline int rel_fd_count(void)
{
	struct dirent *d;
	DIR *dir;
	int n = 0;

	dir = opendir("/proc/self/fd");
	if (!dir)
		return -1;
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.')
			n++;
	closedir(dir);
	return n - 1;	/* the directory's own fd */
}

struct rel_counts {
	long dmabufs;
	long pools;
	long refcnt;
};

static inline void rel_counts_read(struct rel_counts *c)
{
	c->dmabufs = rel_dmabuf_count();
	c->pools = kfd_pool_count();
	c->refcnt = rel_module_refcnt();
}

/* An unknown (-1) figure matches anything: the facility is missing. */
static inline bool rel_counts_match(const struct rel_counts *a,
				    const struct rel_counts *b)
{
	return (a->dmabufs < 0 || b->dmabufs < 0 || a->dmabufs == b->dmabufs) &&
	       (a->pools < 0 || b->pools < 0 || a->pools == b->pools) &&
	       (a->refcnt < 0 || b->refcnt < 0 || a->refcnt == b->refcnt);
}

/*
 * Wait until the counters come back to @want.  The last reference of a file
 * dropped by an exiting task is put from a workqueue (delayed fput), so the
 * counts may lag a waitpid() by a moment; this waits, bounded, and does not
 * judge how long it took.  Returns true when they matched.
 */
static inline bool rel_counts_settle(const struct rel_counts *want,
				     struct rel_counts *got)
{
	int i;

	for (i = 0; i < 3000; i++) {
		rel_counts_read(got);
		if (rel_counts_match(want, got))
			return true;
		usleep(10000);
	}
	return false;
}

/* ------------------------------------------------------------------ */
/* dma-buf sources: the system heap, udmabuf, vgem                      */
/* ------------------------------------------------------------------ */

/* The DRM uapi the vgem path needs, stable since forever. */
struct rel_drm_version {
	int version_major, version_minor, version_patchlevel;
	size_t name_len;
	char *name;
	size_t date_len;
	char *date;
	size_t desc_len;
	char *desc;
};

struct rel_drm_create_dumb {
	uint32_t height, width, bpp, flags, handle, pitch;
	uint64_t size;
};

struct rel_drm_prime_handle {
	uint32_t handle, flags;
	int32_t fd;
};

struct rel_drm_gem_close {
	uint32_t handle, pad;
};

#define REL_DRM_IOCTL_VERSION _IOWR('d', 0x00, struct rel_drm_version)
#define REL_DRM_IOCTL_GEM_CLOSE _IOW('d', 0x09, struct rel_drm_gem_close)
#define REL_DRM_IOCTL_PRIME_HANDLE_TO_FD \
	_IOWR('d', 0x2d, struct rel_drm_prime_handle)
#define REL_DRM_IOCTL_MODE_CREATE_DUMB \
	_IOWR('d', 0xB2, struct rel_drm_create_dumb)
#define REL_DRM_CLOEXEC O_CLOEXEC
#define REL_DRM_RDWR O_RDWR

enum rel_src { REL_SRC_NONE, REL_SRC_HEAP, REL_SRC_UDMABUF, REL_SRC_VGEM };

static enum rel_src rel_src_chosen;
static int rel_src_fd = -1;

static inline const char *rel_src_name(void)
{
	static const char *const names[] = { "none", "system heap", "udmabuf",
					     "vgem" };

	return names[rel_src_chosen];
}

static inline int rel_vgem_open(void)
{
	char path[64], name[32];
	int i, fd;

	for (i = 0; i < 16; i++) {
		struct rel_drm_version v = {};

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(name, 0, sizeof(name));
		v.name = name;
		v.name_len = sizeof(name) - 1;
		if (!ioctl(fd, REL_DRM_IOCTL_VERSION, &v) &&
		    !strcmp(name, "vgem"))
			return fd;
		close(fd);
	}
	return -1;
}

/*
 * Pick a dma-buf source once per process: the system heap, else udmabuf,
 * else vgem (the one Debian's 6.1 has).  Returns false if there is none.
 */
static inline bool rel_src_init(void)
{
	if (rel_src_chosen != REL_SRC_NONE)
		return true;
	rel_src_fd = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
	if (rel_src_fd >= 0) {
		rel_src_chosen = REL_SRC_HEAP;
		return true;
	}
	rel_src_fd = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (rel_src_fd >= 0) {
		rel_src_chosen = REL_SRC_UDMABUF;
		return true;
	}
	rel_src_fd = rel_vgem_open();
	if (rel_src_fd >= 0) {
		rel_src_chosen = REL_SRC_VGEM;
		return true;
	}
	return false;
}

/* A new dma-buf of @size bytes (a multiple of the page size), or -errno. */
static inline int rel_dmabuf_new(size_t size)
{
	int fd, mfd, err;

	if (!rel_src_init())
		return -ENODEV;
	switch (rel_src_chosen) {
	case REL_SRC_HEAP: {
		struct dma_heap_allocation_data a = {
			.len = size,
			.fd_flags = O_RDWR | O_CLOEXEC,
		};

		if (ioctl(rel_src_fd, DMA_HEAP_IOCTL_ALLOC, &a))
			return -errno;
		return a.fd;
	}
	case REL_SRC_UDMABUF: {
		struct udmabuf_create c = { .flags = UDMABUF_FLAGS_CLOEXEC,
					    .size = size };

		mfd = memfd_create("kfdpool-rel", MFD_ALLOW_SEALING | MFD_CLOEXEC);
		if (mfd < 0)
			return -errno;
		if (ftruncate(mfd, size) ||
		    fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
			err = -errno;
			close(mfd);
			return err;
		}
		c.memfd = mfd;
		fd = ioctl(rel_src_fd, UDMABUF_CREATE, &c);
		err = -errno;
		close(mfd);
		return fd < 0 ? err : fd;
	}
	case REL_SRC_VGEM: {
		struct rel_drm_create_dumb d = { .height = size / 4096,
						 .width = 1024, .bpp = 32 };
		struct rel_drm_prime_handle p = {};
		struct rel_drm_gem_close gc = {};

		if (ioctl(rel_src_fd, REL_DRM_IOCTL_MODE_CREATE_DUMB, &d))
			return -errno;
		p.handle = d.handle;
		p.flags = REL_DRM_CLOEXEC | REL_DRM_RDWR;
		err = ioctl(rel_src_fd, REL_DRM_IOCTL_PRIME_HANDLE_TO_FD, &p) ?
			-errno : 0;
		gc.handle = d.handle;
		ioctl(rel_src_fd, REL_DRM_IOCTL_GEM_CLOSE, &gc);
		return err ? err : p.fd;
	}
	default:
		return -ENODEV;
	}
}

/* The pattern word at byte @off of buffer @tag: what survivors check. */
static inline uint32_t rel_pattern(uint32_t tag, uint64_t off)
{
	return (tag * 0x9e3779b1u) ^ (uint32_t)(off / 4) ^ 0xa5a5a5a5u;
}

/* Fill (@write) or check a dma-buf with the pattern of @tag. */
static inline int rel_dmabuf_pattern(int fd, size_t size, uint32_t tag,
				     bool write)
{
	struct dma_buf_sync sync = {
		.flags = DMA_BUF_SYNC_START |
			 (write ? DMA_BUF_SYNC_WRITE : DMA_BUF_SYNC_READ),
	};
	uint32_t *p;
	size_t i;
	int ret = 0;

	p = mmap(NULL, size, PROT_READ | (write ? PROT_WRITE : 0), MAP_SHARED,
		 fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	ioctl(fd, DMA_BUF_IOCTL_SYNC, &sync);
	for (i = 0; i < size / 4; i += write ? 1 : 61) {
		if (write) {
			p[i] = rel_pattern(tag, i * 4);
		} else if (p[i] != rel_pattern(tag, i * 4)) {
			ret = -EILSEQ;
			break;
		}
	}
	sync.flags = DMA_BUF_SYNC_END |
		     (write ? DMA_BUF_SYNC_WRITE : DMA_BUF_SYNC_READ);
	ioctl(fd, DMA_BUF_IOCTL_SYNC, &sync);
	munmap(p, size);
	return ret;
}

/* ------------------------------------------------------------------ */
/* kfdpool shorthands (return -errno on failure)                        */
/* ------------------------------------------------------------------ */

static inline int rel_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

static inline int rel_pool_create(int ctl, uint64_t limit, uint32_t types,
				  const char *name)
{
	struct kfdpool_pool_create c = { .limit = limit, .handle_types = types };
	int ret;

	snprintf(c.name, sizeof(c.name), "%s", name);
	ret = rel_ioctl(ctl, KFDPOOL_IOC_POOL_CREATE, &c);
	return ret ? ret : c.fd;
}

static inline int rel_pool_export(int pool)
{
	struct kfdpool_pool_export e = {};
	int ret = rel_ioctl(pool, KFDPOOL_IOC_POOL_EXPORT, &e);

	return ret ? ret : e.fd;
}

/* Pin @dmabuf; the entry id, or -errno. */
static inline long rel_pin(int pool, int dmabuf, uint64_t cookie)
{
	struct kfdpool_pin p = { .dmabuf_fd = dmabuf, .cookie = cookie };
	int ret = rel_ioctl(pool, KFDPOOL_IOC_PIN, &p);

	return ret ? ret : (long)p.entry_id;
}

/*
 * KFDPOOL_IOC_ALLOC: host memory from the module, pinned; the dma-buf fd
 * (its entry in *entry), or -errno (-ENOTTY on a module without it).
 */
static inline int rel_alloc(int pool, uint64_t size, uint64_t cookie,
			    uint32_t *entry)
{
	struct kfdpool_alloc a = { .size = size, .cookie = cookie };
	int ret = rel_ioctl(pool, KFDPOOL_IOC_ALLOC, &a);

	if (ret)
		return ret;
	*entry = a.entry_id;
	return a.fd;
}

static inline int rel_unpin(int pool, uint32_t entry)
{
	struct kfdpool_unpin u = { .entry_id = entry };

	return rel_ioctl(pool, KFDPOOL_IOC_UNPIN, &u);
}

static inline int rel_export(int pool, uint32_t entry, uint64_t off,
			     uint64_t size, struct kfdpool_record *rec)
{
	struct kfdpool_export e = { .entry_id = entry, .offset = off,
				    .size = size };
	int ret = rel_ioctl(pool, KFDPOOL_IOC_EXPORT, &e);

	if (!ret)
		*rec = e.record;
	return ret;
}

static inline int rel_revoke(int pool, const struct kfdpool_record *rec)
{
	struct kfdpool_revoke r = { .record = *rec };

	return rel_ioctl(pool, KFDPOOL_IOC_REVOKE, &r);
}

/*
 * Import @rec; fills @imp (may be NULL); the dma-buf fd (or 0 with VALIDATE)
 * or -errno.
 */
static inline int rel_import(int pool, const struct kfdpool_record *rec,
			     uint32_t flags, struct kfdpool_import *imp)
{
	struct kfdpool_import local;
	int ret;

	if (!imp)	/* the caller wants the answer only */
		imp = &local;
	memset(imp, 0, sizeof(*imp));
	imp->record = *rec;
	imp->flags = flags;
	ret = rel_ioctl(pool, KFDPOOL_IOC_IMPORT, imp);
	if (ret)
		return ret;
	return (flags & KFDPOOL_IMPORT_VALIDATE) ? 0 : imp->fd;
}

static inline int rel_release(int pool, uint32_t entry)
{
	struct kfdpool_release r = { .entry_id = entry };

	return rel_ioctl(pool, KFDPOOL_IOC_RELEASE, &r);
}

static inline int rel_stats(int pool, struct kfdpool_pool_stats *st)
{
	memset(st, 0, sizeof(*st));
	return rel_ioctl(pool, KFDPOOL_IOC_POOL_STATS, st);
}

/*
 * The invariants every pool's figures keep whatever was done to it; returns
 * NULL or which one broke.
 */
static inline const char *rel_stats_invalid(const struct kfdpool_pool_stats *st)
{
	if (st->reserved_high < st->reserved_bytes)
		return "reserved_high < reserved";
	if (st->used_high < st->used_bytes)
		return "used_high < used";
	if (st->used_bytes > st->reserved_bytes)
		return "used > reserved";
	if (st->draining_entries > st->entries)
		return "draining_entries > entries";
	if (!st->entries && (st->reserved_bytes || st->draining_bytes))
		return "bytes reserved without entries";
	if (!st->records && st->used_bytes)
		return "bytes used without records";
	if (st->fd_imported_bytes > st->imported_bytes)
		return "fd_imported > imported";
	if (!st->fd_imports && st->fd_imported_bytes)
		return "fd_imported_bytes without fd_imports";
	if (st->fd_imports > st->entries)
		return "fd_imports > entries";
	if (st->limit && st->reserved_bytes > st->limit)
		return "reserved over the limit";
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Module unload and reload                                             */
/* ------------------------------------------------------------------ */

/* Unload kfdpool.  0 or -errno. */
static inline int rel_module_unload(void)
{
	int i, ret = -EBUSY;

	/* An exiting holder may still be dropping its file: retry, bounded. */
	for (i = 0; i < 500; i++) {
		if (!syscall(__NR_delete_module, "kfdpool", O_NONBLOCK))
			return 0;
		ret = -errno;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EBUSY)
			return ret;
		usleep(10000);
	}
	return ret;
}

/* Load the module at @ko.  0 or -errno (of open or finit_module). */
static inline int rel_module_load(const char *ko)
{
	int fd = open(ko, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = syscall(__NR_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return ret;
}

/*
 * Unload kfdpool and load it again from $KFDPOOL_KO (the VM runner sets it).
 * Returns 0, 1 if $KFDPOOL_KO is not set (skip), or -errno of the step that
 * failed; @what names it.
 */
static inline int rel_module_reload(const char **what)
{
	const char *ko = getenv("KFDPOOL_KO");
	int ret;

	if (!ko || !*ko)
		return 1;
	*what = "delete_module";
	ret = rel_module_unload();
	if (ret)
		return ret;
	*what = "open and finit_module of $KFDPOOL_KO";
	return rel_module_load(ko);
}

/* ------------------------------------------------------------------ */
/* A raw io_uring with 128-byte SQEs: no liburing needed                */
/* ------------------------------------------------------------------ */

struct rel_ring {
	int fd;
	uint64_t seq;
	unsigned int entries;
	unsigned int sqe_size;	/* 64, or 128 with IORING_SETUP_SQE128 */
	void *sq_ptr, *cq_ptr;
	size_t sq_len, cq_len, sqes_len;
	unsigned int *sq_head, *sq_tail, *sq_mask, *sq_array;
	unsigned int *cq_head, *cq_tail, *cq_mask;
	struct io_uring_cqe *cqes;
	unsigned char *sqes;	/* 128 bytes each */
};

static inline int rel_ring_init(struct rel_ring *r, unsigned int entries,
				unsigned int flags)
{
	struct io_uring_params p = { .flags = flags };

	memset(r, 0, sizeof(*r));
	r->fd = syscall(__NR_io_uring_setup, entries, &p);
	if (r->fd < 0)
		return -errno;
	r->entries = p.sq_entries;
	r->sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	r->cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe) *
		    ((flags & IORING_SETUP_CQE32) ? 2 : 1);
	r->sqe_size = (flags & IORING_SETUP_SQE128) ? 128 : 64;
	r->sqes_len = p.sq_entries * r->sqe_size;
	r->sq_ptr = mmap(NULL, r->sq_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 r->fd, IORING_OFF_SQ_RING);
	r->cq_ptr = mmap(NULL, r->cq_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 r->fd, IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, r->sqes_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       r->fd, IORING_OFF_SQES);
	if (r->sq_ptr == MAP_FAILED || r->cq_ptr == MAP_FAILED ||
	    r->sqes == MAP_FAILED) {
		close(r->fd);
		r->fd = -1;
		return -ENOMEM;
	}
	r->sq_head = (unsigned int *)((char *)r->sq_ptr + p.sq_off.head);
	r->sq_tail = (unsigned int *)((char *)r->sq_ptr + p.sq_off.tail);
	r->sq_mask = (unsigned int *)((char *)r->sq_ptr + p.sq_off.ring_mask);
	r->sq_array = (unsigned int *)((char *)r->sq_ptr + p.sq_off.array);
	r->cq_head = (unsigned int *)((char *)r->cq_ptr + p.cq_off.head);
	r->cq_tail = (unsigned int *)((char *)r->cq_ptr + p.cq_off.tail);
	r->cq_mask = (unsigned int *)((char *)r->cq_ptr + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)((char *)r->cq_ptr + p.cq_off.cqes);
	return 0;
}

static inline void rel_ring_exit(struct rel_ring *r)
{
	if (r->fd < 0)
		return;
	munmap(r->sq_ptr, r->sq_len);
	munmap(r->cq_ptr, r->cq_len);
	munmap(r->sqes, r->sqes_len);
	close(r->fd);
	r->fd = -1;
}

/* Seconds a command may take before rel_uring_cmd() calls it lost. */
#define REL_URING_WAIT 60

/*
 * Submit one IORING_OP_URING_CMD on @fd with @cmd_op and @payload (up to
 * 80 bytes; 16 on a ring without SQE128) and wait for its completion.
 * Returns 0 and the CQE's res in @res, or -errno when io_uring itself
 * refused, or -ETIME when no completion came within REL_URING_WAIT seconds
 * (a lost command: the caller reports it rather than hang the whole run).
 */
static inline int rel_uring_cmd(struct rel_ring *r, int fd, uint32_t cmd_op,
				const void *payload, size_t len, int *res)
{
	unsigned int tail = *r->sq_tail, idx = tail & *r->sq_mask, head;
	struct io_uring_sqe *sqe = (void *)(r->sqes + idx * r->sqe_size);
	size_t room = r->sqe_size - offsetof(struct io_uring_sqe, cmd);
	struct __kernel_timespec ts = { .tv_sec = REL_URING_WAIT };
	struct io_uring_getevents_arg ga = { .ts = (uintptr_t)&ts };
	uint64_t tag = ++r->seq;
	struct io_uring_cqe *cqe;
	int ret, submitted = 0;

	memset(sqe, 0, r->sqe_size);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = cmd_op;
	sqe->user_data = tag;
	memcpy(sqe->cmd, payload, len > room ? room : len);
	r->sq_array[idx] = idx;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);

	for (;;) {
		/* Our CQE, skipping any stale one a failed wait left. */
		head = *r->cq_head;
		while (head != __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE)) {
			cqe = &r->cqes[head & *r->cq_mask];
			__atomic_store_n(r->cq_head, ++head, __ATOMIC_RELEASE);
			if (cqe->user_data == tag) {
				*res = cqe->res;
				return 0;
			}
		}
		ret = syscall(__NR_io_uring_enter, r->fd, submitted ? 0 : 1, 1,
			      IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG,
			      &ga, sizeof(ga));
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0 && errno == ETIME)
			return -ETIME;
		if (ret < 0 && !submitted) {
			ret = -errno;
			/* Not consumed (head did not move): take it back. */
			if (__atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE) == tail)
				__atomic_store_n(r->sq_tail, tail,
						 __ATOMIC_RELEASE);
			return ret;
		}
		if (ret < 0)
			return -errno;
		submitted = 1;
	}
}

#endif /* KFDPOOL_RELIABILITY_H */
