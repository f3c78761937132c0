/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Host memory from the module (KFDPOOL_IOC_ALLOC) or from the system dma
 * heap, one round at a time: the allocation (both allocate every page up
 * front; ALLOC also pins the entry, the heap's buffer is pinned with PIN),
 * mmap of the dma-buf, the first touch of every page through it, the same
 * in an importer (IMPORT on an import fd, mmap, touch), io_uring buffer
 * registration of the mapping (refused for the heap's VM_PFNMAP mapping:
 * -1) and munmap.  Shared by hostmem_bench (the figures) and bench_budget
 * (make check's instruction budgets), so that a budget measures exactly
 * what the benchmark reports.
 */
#ifndef KFDPOOL_HOSTMEM_H
#define KFDPOOL_HOSTMEM_H

#include <sys/mman.h>
#include <liburing.h>

#include "bench.h"

#define HM_PAGE 4096ul

struct hm_cost {
	double alloc, map, touch, imp_map, imp_touch, unmap, reg;
};

/* The pool (and an import fd of it) the rounds allocate in. */
struct hm_pools {
	int ctl, pool, imp;
};

static uint64_t hm_t0;

static inline void hm_start(void)
{
	hm_t0 = now_ns();
}

static inline double hm_lap(void)
{
	uint64_t t = now_ns(), d = t - hm_t0;

	hm_t0 = t;
	return (double)d;
}

static inline void hm_touch(volatile char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i += HM_PAGE)
		p[i] = (char)i;
}

static inline int hm_entry_of(int pool, int dmabuf, uint32_t *entry)
{
	struct kfdpool_pin pin = { .dmabuf_fd = dmabuf };

	if (xioctl(pool, KFDPOOL_IOC_PIN, &pin))
		return -errno;
	*entry = pin.entry_id;
	return 0;
}

/*
 * One round of @len bytes: @module picks ALLOC, else the heap plus PIN;
 * @populate maps with MAP_POPULATE.
 */
static inline void hm_round(const struct hm_pools *p, size_t len, int module,
			    int populate, struct hm_cost *c)
{
	int mflags = MAP_SHARED | (populate ? MAP_POPULATE : 0);
	struct kfdpool_export ex = { 0 };
	struct kfdpool_import im = { 0 };
	struct kfdpool_unpin un = { 0 };
	struct iovec iov;
	struct io_uring ring;
	uint32_t entry = 0;
	char *m, *q;
	int fd;

	hm_start();
	if (module) {
		struct kfdpool_alloc a = { .size = len };

		if (xioctl(p->pool, KFDPOOL_IOC_ALLOC, &a))
			die("alloc %zu: %s", len, strerror(errno));
		fd = a.fd;
		entry = a.entry_id;
	} else {
		fd = heap_dmabuf(len);
		if (hm_entry_of(p->pool, fd, &entry))
			die("pin: %s", strerror(errno));
	}
	c->alloc = hm_lap();
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, mflags, fd, 0);
	if (m == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	c->map = hm_lap();
	hm_touch(m, len);
	c->touch = hm_lap();

	ex.entry_id = entry;
	ex.size = len;
	if (xioctl(p->pool, KFDPOOL_IOC_EXPORT, &ex))
		die("export: %s", strerror(errno));
	im.record = ex.record;
	hm_start();
	if (xioctl(p->imp, KFDPOOL_IOC_IMPORT, &im))
		die("import: %s", strerror(errno));
	q = mmap(NULL, len, PROT_READ | PROT_WRITE, mflags, im.fd, 0);
	if (q == MAP_FAILED)
		die("mmap import: %s", strerror(errno));
	c->imp_map = hm_lap();
	hm_touch(q, len);
	c->imp_touch = hm_lap();

	c->reg = -1;
	if (io_uring_queue_init(2, &ring, 0))
		die("io_uring_queue_init");
	iov.iov_base = m;
	iov.iov_len = len;
	hm_start();
	if (!io_uring_register_buffers(&ring, &iov, 1)) {
		c->reg = hm_lap();
		io_uring_unregister_buffers(&ring);
	}
	io_uring_queue_exit(&ring);

	hm_start();
	munmap(m, len);
	c->unmap = hm_lap();
	munmap(q, len);
	close(im.fd);
	close(fd);
	un.entry_id = entry;
	xioctl(p->imp, KFDPOOL_IOC_RELEASE, &(struct kfdpool_release){
		.entry_id = entry });
	if (xioctl(p->pool, KFDPOOL_IOC_UNPIN, &un))
		die("unpin: %s", strerror(errno));
}

/* A pool and an import fd of it, on a control fd of /dev/kfdpool. */
static inline void hm_setup(struct hm_pools *p)
{
	struct kfdpool_pool_create pc = { .handle_types = KFDPOOL_HANDLE_TYPE_FD };
	struct kfdpool_pool_export pe = { 0 };
	struct kfdpool_query q = { 0 };

	p->ctl = open("/dev/kfdpool", O_RDWR | O_CLOEXEC);
	if (p->ctl < 0 || xioctl(p->ctl, KFDPOOL_IOC_QUERY, &q))
		die("/dev/kfdpool: %s", strerror(errno));
	if (!(q.features & KFDPOOL_FEATURE_HOST_ALLOC))
		die("the module has no KFDPOOL_IOC_ALLOC");
	if (xioctl(p->ctl, KFDPOOL_IOC_POOL_CREATE, &pc))
		die("pool create: %s", strerror(errno));
	p->pool = pc.fd;
	if (xioctl(p->pool, KFDPOOL_IOC_POOL_EXPORT, &pe))
		die("pool export: %s", strerror(errno));
	p->imp = pe.fd;
}

static inline void hm_teardown(struct hm_pools *p)
{
	close(p->imp);
	close(p->pool);
	close(p->ctl);
}

#endif /* KFDPOOL_HOSTMEM_H */
