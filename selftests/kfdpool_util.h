/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers for the kfdpool selftests: dma-bufs from whatever exporter the
 * kernel has (udmabuf, the system dma heap, vgem), counting dma-bufs,
 * pools and their commands, fdinfo, module parameters.
 *
 * Every helper returns a value or -errno and never aborts, so that tests
 * decide what a failure means (ASSERT, EXPECT or SKIP).
 */
#ifndef KFDPOOL_UTIL_H
#define KFDPOOL_UTIL_H

#include <dirent.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>
#include <linux/kfdpool.h>
#include "kfdpool_format.h"

#if __has_include(<drm/drm.h>)
#include <drm/drm.h>
#else
/* Debian ships the DRM uapi headers with libdrm-dev only. */
#include <libdrm/drm.h>
#endif

#define KFD_DEV		"/dev/kfdpool"
#define KFD_BUFINFO	"/sys/kernel/debug/dma_buf/bufinfo"
#define KFD_DEBUGFS_USERS	"/sys/kernel/debug/kfdpool/users"
#define KFD_PARAMS	"/sys/module/kfdpool/parameters/"

#ifndef offsetofend
#define offsetofend(type, member) \
	(offsetof(type, member) + sizeof(((type *)0)->member))
#endif

#ifndef MFD_ALLOW_SEALING
#define MFD_ALLOW_SEALING	0x0002U
#endif
#ifndef F_ADD_SEALS
#define F_ADD_SEALS		1033
#define F_SEAL_SHRINK		0x0002
#endif

static inline long kfd_page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

static inline size_t kfd_round_page(size_t n)
{
	size_t p = kfd_page_size();

	return (n + p - 1) / p * p;
}

/* ---------------------------------------------------------------- */
/* dma-buf exporters                                                 */
/* ---------------------------------------------------------------- */

/* udmabuf: a sealed memfd turned into a dma-buf (6.12; not on Debian 6.1). */
static inline int kfd_dmabuf_udmabuf(size_t size)
{
	struct udmabuf_create c = {};
	int dev, memfd, fd, err;

	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -errno;
	memfd = syscall(SYS_memfd_create, "kfdpool-test",
			MFD_ALLOW_SEALING | 1 /* MFD_CLOEXEC */);
	if (memfd < 0 || ftruncate(memfd, size) ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		err = -errno;
		if (memfd >= 0)
			close(memfd);
		close(dev);
		return err;
	}
	c.memfd = memfd;
	c.flags = UDMABUF_FLAGS_CLOEXEC;
	c.size = size;
	fd = ioctl(dev, UDMABUF_CREATE, &c);
	err = fd < 0 ? -errno : fd;
	close(memfd);
	close(dev);
	return err;
}

/* The system dma heap (6.12). */
static inline int kfd_dmabuf_heap(size_t size)
{
	struct dma_heap_allocation_data a = {};
	int heap, err;

	heap = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
	if (heap < 0)
		return -errno;
	a.len = size;
	a.fd_flags = O_RDWR | O_CLOEXEC;
	err = ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &a) ? -errno : (int)a.fd;
	close(heap);
	return err;
}

/* An fd of the vgem device (found by driver name), kept open. */
static inline int kfd_vgem_fd(void)
{
	static int vgem = -2;
	char path[300], name[16];
	struct dirent *de;
	DIR *dir;

	if (vgem != -2)
		return vgem;
	vgem = -ENODEV;
	dir = opendir("/dev/dri");
	if (!dir)
		return vgem;
	while ((de = readdir(dir))) {
		struct drm_version v = {};
		int fd;

		if (strncmp(de->d_name, "card", 4))
			continue;
		snprintf(path, sizeof(path), "/dev/dri/%s", de->d_name);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(name, 0, sizeof(name));
		v.name = name;
		v.name_len = sizeof(name) - 1;
		if (!ioctl(fd, DRM_IOCTL_VERSION, &v) && !strcmp(name, "vgem")) {
			vgem = fd;
			break;
		}
		close(fd);
	}
	closedir(dir);
	return vgem;
}

/* vgem (both kernels): a dumb buffer exported read/write by PRIME. */
static inline int kfd_dmabuf_vgem(size_t size)
{
	struct drm_mode_create_dumb d = {};
	struct drm_prime_handle p = {};
	struct drm_gem_close gc = {};
	int vgem = kfd_vgem_fd();
	int err;

	if (vgem < 0)
		return vgem;
	d.width = kfd_page_size();
	d.height = kfd_round_page(size) / kfd_page_size();
	d.bpp = 8;
	if (ioctl(vgem, DRM_IOCTL_MODE_CREATE_DUMB, &d))
		return -errno;
	p.handle = d.handle;
	p.flags = DRM_CLOEXEC | DRM_RDWR;
	err = ioctl(vgem, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p) ? -errno : p.fd;
	/* The dma-buf keeps the object alive; drop the GEM handle. */
	gc.handle = d.handle;
	ioctl(vgem, DRM_IOCTL_GEM_CLOSE, &gc);
	return err;
}

/*
 * A new dma-buf of @size bytes (rounded up to pages), mappable read/write,
 * from the exporter named by $KFDPOOL_EXPORTER (udmabuf, heap, vgem) or the
 * first that works.  Returns the fd (O_CLOEXEC) or -errno.
 */
static inline int kfd_dmabuf_new(size_t size)
{
	const char *want = getenv("KFDPOOL_EXPORTER");
	int fd = -ENODEV;

	size = kfd_round_page(size);
	if (!want || !strcmp(want, "udmabuf")) {
		fd = kfd_dmabuf_udmabuf(size);
		if (fd >= 0 || want)
			return fd;
	}
	if (!want || !strcmp(want, "heap")) {
		fd = kfd_dmabuf_heap(size);
		if (fd >= 0 || want)
			return fd;
	}
	if (!want || !strcmp(want, "vgem"))
		fd = kfd_dmabuf_vgem(size);
	return fd;
}

static inline size_t kfd_dmabuf_size(int fd)
{
	off_t end = lseek(fd, 0, SEEK_END);

	lseek(fd, 0, SEEK_SET);
	return end < 0 ? 0 : (size_t)end;
}

static inline void kfd_dmabuf_sync(int fd, __u64 flags)
{
	struct dma_buf_sync s = { .flags = flags };

	ioctl(fd, DMA_BUF_IOCTL_SYNC, &s);
}

/* Fill a dma-buf with a pattern derived from @seed; 0 or -errno. */
static inline int kfd_dmabuf_fill(int fd, size_t size, uint32_t seed)
{
	uint32_t *p;
	size_t i;

	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	kfd_dmabuf_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE);
	for (i = 0; i < size / 4; i++)
		p[i] = seed * 2654435761u + i;
	kfd_dmabuf_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);
	munmap(p, size);
	return 0;
}

/* 1 if the bytes at @off..@off+@len of @fd are the pattern of @seed, 0 if
 * not, -errno if the buffer cannot be mapped.
 */
static inline int kfd_dmabuf_check(int fd, size_t size, uint32_t seed,
				   size_t off, size_t len)
{
	uint32_t *p;
	size_t i;
	int ok = 1;

	p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	kfd_dmabuf_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	for (i = off / 4; i < (off + len) / 4; i++)
		if (p[i] != seed * 2654435761u + i) {
			ok = 0;
			break;
		}
	kfd_dmabuf_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	munmap(p, size);
	return ok;
}

/*
 * dma-bufs alive on the system: the "Total N objects" line of bufinfo.
 * -errno when debugfs is not there.
 */
static inline int kfd_dmabuf_count_now(void)
{
	char line[512];
	int n = -ENOENT;
	FILE *f;

	f = fopen(KFD_BUFINFO, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		/* Not the per-buffer "Total N devices attached" lines. */
		if (strstr(line, " objects,") &&
		    sscanf(line, "Total %d objects", &n) == 1)
			break;
	fclose(f);
	return n;
}

/*
 * The dma-buf count once it settled at @want, or what it is after a short
 * wait: the last fput of a dma-buf may run asynchronously (delayed fput from
 * kernel threads and io_uring workers).  This waits, it asserts nothing.
 */
static inline int kfd_dmabuf_count(int want)
{
	int i, n = kfd_dmabuf_count_now();

	for (i = 0; i < 200 && n >= 0 && n != want; i++) {
		usleep(10000);
		n = kfd_dmabuf_count_now();
	}
	return n;
}

/* ---------------------------------------------------------------- */
/* Pools                                                              */
/* ---------------------------------------------------------------- */

static inline int kfd_open(void)
{
	int fd = open(KFD_DEV, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static inline int kfd_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

/* A page of POOL_LIST from *@cursor into @info; how many, or -errno. */
static inline int kfd_list_page(int ctl, struct kfdpool_pool_info *info,
				__u32 n, __u64 *cursor)
{
	struct kfdpool_pool_list l = {
		.pools = (uintptr_t)info, .count = n,
		.info_size = sizeof(*info), .cursor = *cursor,
	};
	int ret = kfd_ioctl(ctl, KFDPOOL_IOC_POOL_LIST, &l);

	if (ret)
		return ret;
	*cursor = l.next_cursor;
	return l.count;
}

/*
 * The pools POOL_LIST shows (root: every pool on the system): how many, or
 * -errno.  With @id, *@out becomes that pool's element and the answer is 1
 * if it is listed, 0 if not.
 */
static inline int kfd_pool_find(const __u8 *id, struct kfdpool_pool_info *out)
{
	struct kfdpool_pool_info info[64];
	int ctl = open(KFD_DEV, O_RDWR | O_CLOEXEC), i, n, found = 0, all = 0;
	__u64 cursor = 0;

	if (ctl < 0)
		return -errno;
	do {
		n = kfd_list_page(ctl, info, 64, &cursor);
		for (i = 0; i < n; i++) {
			if (!id || memcmp(info[i].id, id, KFDPOOL_ID_LEN))
				continue;
			*out = info[i];
			found = 1;
		}
		all += n;
	} while (n >= 0 && cursor);
	close(ctl);
	return n < 0 ? n : id ? found : all;
}

static inline int kfd_pool_count(void)
{
	return kfd_pool_find(NULL, NULL);
}

/* A new pool with @flags; its owner fd or -errno.  @id may be NULL. */
static inline int kfd_pool_create_flags(int ctl, __u64 limit, __u32 flags,
					const char *name, __u32 handle_types,
					__u8 *id)
{
	struct kfdpool_pool_create c = {};

	c.limit = limit;
	c.flags = flags;
	c.handle_types = handle_types;
	if (name)
		strncpy(c.name, name, sizeof(c.name) - 1);
	if (ioctl(ctl, KFDPOOL_IOC_POOL_CREATE, &c))
		return -errno;
	if (id)
		memcpy(id, c.id, sizeof(c.id));
	return c.fd;
}

static inline int kfd_pool_create(int ctl, __u64 limit, const char *name,
				  __u32 handle_types, __u8 *id)
{
	return kfd_pool_create_flags(ctl, limit, 0, name, handle_types, id);
}

/* A pool with every handle type and no limit, opening /dev/kfdpool. */
static inline int kfd_pool_new(const char *name)
{
	int ctl = kfd_open(), fd;

	if (ctl < 0)
		return ctl;
	fd = kfd_pool_create(ctl, 0, name, KFDPOOL_HANDLE_TYPES_ALL, NULL);
	close(ctl);
	return fd;
}

/* An import fd of the pool of owner fd @pool, or -errno. */
static inline int kfd_pool_export(int pool)
{
	struct kfdpool_pool_export e = {};

	return ioctl(pool, KFDPOOL_IOC_POOL_EXPORT, &e) ? -errno : e.fd;
}

static inline int kfd_stats(int pool, struct kfdpool_pool_stats *st)
{
	memset(st, 0, sizeof(*st));
	return kfd_ioctl(pool, KFDPOOL_IOC_POOL_STATS, st);
}

/* Pin @dmabuf; the entry id (> 0) or -errno. */
static inline int kfd_pin(int pool, int dmabuf, __u64 cookie)
{
	struct kfdpool_pin p = {};

	p.dmabuf_fd = dmabuf;
	p.cookie = cookie;
	if (ioctl(pool, KFDPOOL_IOC_PIN, &p))
		return -errno;
	return p.entry_id;
}

/* Unpin; 0 or -errno, *draining (may be NULL) set. */
static inline int kfd_unpin(int pool, __u32 entry_id, __u32 *draining)
{
	struct kfdpool_unpin u = {};

	u.entry_id = entry_id;
	if (ioctl(pool, KFDPOOL_IOC_UNPIN, &u))
		return -errno;
	if (draining)
		*draining = u.draining;
	return 0;
}

static inline int kfd_export(int pool, __u32 entry_id, __u64 offset,
			     __u64 size, struct kfdpool_record *rec)
{
	struct kfdpool_export e = {};

	e.entry_id = entry_id;
	e.offset = offset;
	e.size = size;
	if (ioctl(pool, KFDPOOL_IOC_EXPORT, &e))
		return -errno;
	*rec = e.record;
	return 0;
}

static inline int kfd_revoke(int pool, const struct kfdpool_record *rec)
{
	struct kfdpool_revoke r = {};

	r.record = *rec;
	return kfd_ioctl(pool, KFDPOOL_IOC_REVOKE, &r);
}

/*
 * Import @rec; 0 or -errno.  Without KFDPOOL_IMPORT_VALIDATE, imp->fd is
 * the new dma-buf fd.  @imp may be NULL (the fd is then closed).
 */
static inline int kfd_import(int pool, const struct kfdpool_record *rec,
			     __u32 flags, struct kfdpool_import *imp)
{
	struct kfdpool_import i = {};
	int ret;

	i.record = *rec;
	i.flags = flags;
	i.fd = -1;
	ret = kfd_ioctl(pool, KFDPOOL_IOC_IMPORT, &i);
	if (ret) {
		i.fd = -1;
		if (imp)
			*imp = i;
		return ret;
	}
	if (imp)
		*imp = i;
	else if (i.fd >= 0)
		close(i.fd);
	return 0;
}

static inline int kfd_release(int pool, __u32 entry_id)
{
	struct kfdpool_release r = {};

	r.entry_id = entry_id;
	return kfd_ioctl(pool, KFDPOOL_IOC_RELEASE, &r);
}

/*
 * Batch ioctl @cmd over @count elements of @elem_size bytes at @ops: the
 * number of elements run (each has its own status), or -errno.
 */
static inline int kfd_batch(int fd, unsigned long cmd, void *ops, __u32 count,
			    __u32 elem_size)
{
	struct kfdpool_batch b = {};
	int ret;

	b.ops = (uintptr_t)ops;
	b.count = count;
	b.elem_size = elem_size;
	ret = ioctl(fd, cmd, &b);
	return ret < 0 ? -errno : ret;
}

static inline int kfd_query(struct kfdpool_query *q)
{
	int ctl = kfd_open(), ret;

	if (ctl < 0)
		return ctl;
	memset(q, 0, sizeof(*q));
	ret = kfd_ioctl(ctl, KFDPOOL_IOC_QUERY, q);
	close(ctl);
	return ret;
}

/* ---------------------------------------------------------------- */
/* fdinfo, debugfs, module parameters                                 */
/* ---------------------------------------------------------------- */

/*
 * The value of @key in /proc/self/fdinfo/@fd copied to @val; 0 or -errno
 * (-ENOENT when the key is absent).
 */
static inline int kfd_fdinfo(int fd, const char *key, char *val, size_t len)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	int ret = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || line[klen] != ':' ||
		    line[klen + 1] != '\t')
			continue;
		{
			const char *v = line + klen + 2;
			size_t n = strcspn(v, "\n");

			if (n >= len)
				n = len - 1;
			memcpy(val, v, n);
			val[n] = 0;
		}
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

/* A numeric fdinfo value, or -1 when absent. */
static inline long long kfd_fdinfo_num(int fd, const char *key)
{
	char val[128];

	if (kfd_fdinfo(fd, key, val, sizeof(val)))
		return -1;
	return strtoll(val, NULL, 10);
}

static inline void kfd_hex(const __u8 *id, size_t n, char *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
}

/*
 * Read the file at @path (sysfs, procfs, debugfs knobs) into @buf as a
 * string, its trailing newline cut: 0 or -errno.
 */
static inline int kfd_file_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return n;
	buf[n] = 0;
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = 0;
	return 0;
}

/* Write the string @s to the file at @path: 0 or -errno. */
static inline int kfd_file_write(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;
	ssize_t len = strlen(s), n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	if (n != len)
		ret = n < 0 ? -errno : -EIO;
	close(fd);
	return ret;
}

/* A kfdpool module parameter's text: 0, -EIO when empty, or -errno. */
static inline int kfd_param_read(const char *name, char *buf, size_t len)
{
	char path[128];
	int ret;

	snprintf(path, sizeof(path), KFD_PARAMS "%s", name);
	ret = kfd_file_read(path, buf, len);
	return ret ? ret : buf[0] ? 0 : -EIO;
}

static inline int kfd_param_write(const char *name, const char *s)
{
	char path[128];

	snprintf(path, sizeof(path), KFD_PARAMS "%s", name);
	return kfd_file_write(path, s);
}

/* Read a kfdpool module parameter; -errno when not readable. */
static inline long long kfd_param_get(const char *name)
{
	char buf[64];
	int ret = kfd_param_read(name, buf, sizeof(buf));

	return ret ? ret : strtoll(buf, NULL, 10);
}

static inline int kfd_param_set(const char *name, unsigned long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu\n", v);
	return kfd_param_write(name, buf);
}

/* ---------------------------------------------------------------- */
/* Passing fds between processes                                      */
/* ---------------------------------------------------------------- */

/* Send @len bytes of @data and, if @fd >= 0, the fd. */
static inline int kfd_send(int sock, int fd, const void *data, size_t len)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {};
	struct iovec iov = { (void *)data, len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	if (fd >= 0) {
		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	return sendmsg(sock, &msg, 0) == (ssize_t)len ? 0 : -errno;
}

/* Receive @len bytes; *fd is the passed fd or -1.  0 or -errno. */
static inline int kfd_recv(int sock, int *fd, void *data, size_t len)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {};
	struct iovec iov = { data, len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;

	if (fd)
		*fd = -1;
	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != (ssize_t)len)
		return -EIO;
	cm = CMSG_FIRSTHDR(&msg);
	if (fd && cm && cm->cmsg_type == SCM_RIGHTS)
		memcpy(fd, CMSG_DATA(cm), sizeof(int));
	return 0;
}

/* Is @fd open with FD_CLOEXEC? */
static inline bool kfd_cloexec(int fd)
{
	int fl = fcntl(fd, F_GETFD);

	return fl >= 0 && (fl & FD_CLOEXEC);
}

/* Small deterministic PRNG (xorshift64*), so failures reproduce. */
static inline uint64_t kfd_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

/* ---- the set-up most pool tests share ---- */

#define KFD_SET_MAX	8

/**
 * struct kfd_set - a pool, an import fd of it, dma-bufs and their entries
 * @pool: the owner fd
 * @imp: an import fd of the pool
 * @n: dma-bufs in @buf
 * @buf: the dma-bufs
 * @entry: their entry ids, when pinned
 * @baseline: the dma-buf count before, which teardown expects back
 * @why: what kfd_set_open() could not do
 */
struct kfd_set {
	int pool;
	int imp;
	int n;
	int buf[KFD_SET_MAX];
	int entry[KFD_SET_MAX];
	int baseline;
	char why[128];
};

/*
 * Create pool @name, an import fd of it, and @n dma-bufs of @size bytes,
 * each filled with kfd_dmabuf_fill(seed @fill + i) when @fill >= 0 and
 * pinned with cookie @cookie + i when @cookie is not 0.  Returns 0; -1 when
 * a facility is missing (skip: @why says which); -2 when a step failed
 * (fail: @why says which).  kfd_set_close() undoes whatever was done.
 */
static inline int kfd_set_open(struct kfd_set *s, const char *name, int n,
			       size_t size, int fill, __u64 cookie)
{
	int i, ret;

	s->pool = s->imp = -1;
	s->n = n;
	for (i = 0; i < KFD_SET_MAX; i++)
		s->buf[i] = -1;
	s->baseline = kfd_dmabuf_count_now();
	s->pool = kfd_pool_new(name);
	if (s->pool < 0) {
		snprintf(s->why, sizeof(s->why), "no pool: %s",
			 strerror(-s->pool));
		return -1;
	}
	s->imp = kfd_pool_export(s->pool);
	if (s->imp < 0) {
		snprintf(s->why, sizeof(s->why), "pool export: %s",
			 strerror(-s->imp));
		return -2;
	}
	for (i = 0; i < n; i++) {
		s->buf[i] = kfd_dmabuf_new(size);
		if (s->buf[i] < 0) {
			snprintf(s->why, sizeof(s->why),
				 "no dma-buf exporter: %s", strerror(-s->buf[i]));
			return -1;
		}
		if (fill >= 0) {
			ret = kfd_dmabuf_fill(s->buf[i], size, fill + i);
			if (ret) {
				snprintf(s->why, sizeof(s->why), "fill: %s",
					 strerror(-ret));
				return -2;
			}
		}
		if (!cookie)
			continue;
		s->entry[i] = kfd_pin(s->pool, s->buf[i], cookie + i);
		if (s->entry[i] <= 0) {
			snprintf(s->why, sizeof(s->why), "pin: %s",
				 strerror(-s->entry[i]));
			return -2;
		}
	}
	return 0;
}

static inline void kfd_set_close(struct kfd_set *s)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (s->buf[i] >= 0)
			close(s->buf[i]);
	if (s->imp >= 0)
		close(s->imp);
	if (s->pool >= 0)
		close(s->pool);
}

/* FIXTURE_SETUP's body for a struct kfd_set member named s. */
#define KFD_SET_SETUP(name, n, size, fill, cookie)			\
	do {								\
		int r_ = kfd_set_open(&self->s, name, n, size, fill,	\
				      cookie);				\
		if (r_ == -1)						\
			SKIP(return, "%s", self->s.why);		\
		ASSERT_EQ(0, r_)					\
			TH_LOG("%s", self->s.why);			\
	} while (0)

/* FIXTURE_TEARDOWN's body: close, and the dma-bufs are back to baseline. */
#define KFD_SET_TEARDOWN()						\
	do {								\
		kfd_set_close(&self->s);				\
		if (self->s.baseline >= 0)				\
			EXPECT_EQ(self->s.baseline,			\
				  kfd_dmabuf_count(self->s.baseline));	\
	} while (0)

/* kfdpool-stat: $KFDPOOL_STAT, else the build tree's bin/ beside selftests/. */
static inline void kfd_stat_binary(char *out, size_t len)
{
	char self[PATH_MAX];
	ssize_t n;

	if (getenv("KFDPOOL_STAT")) {
		snprintf(out, len, "%s", getenv("KFDPOOL_STAT"));
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	snprintf(out, len, "%s/../bin/kfdpool-stat", dirname(self));
}

#endif /* KFDPOOL_UTIL_H */
