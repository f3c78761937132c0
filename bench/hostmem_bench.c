// SPDX-License-Identifier: GPL-2.0-only
/*
 * hostmem_bench: host memory from the module (KFDPOOL_IOC_ALLOC) against
 * the system dma heap, for a 2 MiB chunk and a 64 MiB one: the allocation
 * (both allocate every page up front; ALLOC also pins the entry); mmap of
 * the dma-buf (for the module also with MAP_POPULATE, which maps every page
 * at once as the heap's remap_pfn_range() does: without it each first write
 * takes a fault); the first touch of every page through that mapping; the
 * same in an importer (IMPORT on an import fd, mmap, touch); munmap; and
 * io_uring buffer registration of the mapping (the heap's VM_PFNMAP mapping
 * is refused, so it has no figure).  Medians of BENCH_ROUNDS.  Prints
 * figures only; nothing is asserted.
 */
#include <sys/mman.h>
#include <liburing.h>

#include "bench.h"

#define PAGE 4096ul

struct cost {
	double alloc, map, touch, imp_map, imp_touch, unmap, reg;
};

static uint64_t t0;

static void start(void)
{
	t0 = now_ns();
}

static double lap(void)
{
	uint64_t t = now_ns(), d = t - t0;

	t0 = t;
	return (double)d;
}

static void touch(volatile char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i += PAGE)
		p[i] = (char)i;
}

static int entry_of(int pool, int dmabuf, uint32_t *entry)
{
	struct kfdpool_pin pin = { .dmabuf_fd = dmabuf };

	if (xioctl(pool, KFDPOOL_IOC_PIN, &pin))
		return -errno;
	*entry = pin.entry_id;
	return 0;
}

/* One round: @module picks ALLOC, else the heap plus PIN. */
static void round_once(int pool, int imp, size_t len, int module,
		       int populate, struct cost *c)
{
	int mflags = MAP_SHARED | (populate ? MAP_POPULATE : 0);
	struct kfdpool_export ex = { 0 };
	struct kfdpool_import im = { 0 };
	struct kfdpool_unpin un = { 0 };
	struct iovec iov;
	struct io_uring ring;
	uint32_t entry = 0;
	char *p, *q;
	int fd;

	start();
	if (module) {
		struct kfdpool_alloc a = { .size = len };

		if (xioctl(pool, KFDPOOL_IOC_ALLOC, &a))
			die("alloc %zu: %s", len, strerror(errno));
		fd = a.fd;
		entry = a.entry_id;
	} else {
		fd = heap_dmabuf(len);
		if (entry_of(pool, fd, &entry))
			die("pin: %s", strerror(errno));
	}
	c->alloc = lap();
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, mflags, fd, 0);
	if (p == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	c->map = lap();
	touch(p, len);
	c->touch = lap();

	ex.entry_id = entry;
	ex.size = len;
	if (xioctl(pool, KFDPOOL_IOC_EXPORT, &ex))
		die("export: %s", strerror(errno));
	im.record = ex.record;
	start();
	if (xioctl(imp, KFDPOOL_IOC_IMPORT, &im))
		die("import: %s", strerror(errno));
	q = mmap(NULL, len, PROT_READ | PROT_WRITE, mflags, im.fd, 0);
	if (q == MAP_FAILED)
		die("mmap import: %s", strerror(errno));
	c->imp_map = lap();
	touch(q, len);
	c->imp_touch = lap();

	c->reg = -1;
	if (io_uring_queue_init(2, &ring, 0))
		die("io_uring_queue_init");
	iov.iov_base = p;
	iov.iov_len = len;
	start();
	if (!io_uring_register_buffers(&ring, &iov, 1)) {
		c->reg = lap();
		io_uring_unregister_buffers(&ring);
	}
	io_uring_queue_exit(&ring);

	start();
	munmap(p, len);
	c->unmap = lap();
	munmap(q, len);
	close(im.fd);
	close(fd);
	un.entry_id = entry;
	xioctl(imp, KFDPOOL_IOC_RELEASE, &(struct kfdpool_release){
		.entry_id = entry });
	if (xioctl(pool, KFDPOOL_IOC_UNPIN, &un))
		die("unpin: %s", strerror(errno));
}

int main(void)
{
	static const size_t lens[] = { 2ul << 20, 64ul << 20 };
	static const char *const names[] = { "module", "module MAP_POPULATE",
					     "dma-heap" };
	int rounds = env_int("BENCH_ROUNDS", 7), ctl, pool, imp, r, m;
	struct kfdpool_pool_create pc = { .handle_types = KFDPOOL_HANDLE_TYPE_FD };
	struct kfdpool_pool_export pe = { 0 };
	struct kfdpool_query q = { 0 };
	double *v[7];
	unsigned int l, k;
	char row[64];

	for (k = 0; k < 7; k++)
		v[k] = calloc(rounds, sizeof(double));
	ctl = open("/dev/kfdpool", O_RDWR | O_CLOEXEC);
	if (ctl < 0 || xioctl(ctl, KFDPOOL_IOC_QUERY, &q))
		die("/dev/kfdpool: %s", strerror(errno));
	if (!(q.features & KFDPOOL_FEATURE_HOST_ALLOC))
		die("the module has no KFDPOOL_IOC_ALLOC");
	if (xioctl(ctl, KFDPOOL_IOC_POOL_CREATE, &pc))
		die("pool create: %s", strerror(errno));
	pool = pc.fd;
	if (xioctl(pool, KFDPOOL_IOC_POOL_EXPORT, &pe))
		die("pool export: %s", strerror(errno));
	imp = pe.fd;

	for (l = 0; l < 2; l++) {
		for (m = 0; m < 3; m++) {
			for (r = 0; r < rounds; r++) {
				struct cost c;

				round_once(pool, imp, lens[l], m < 2, m == 1,
					   &c);
				v[0][r] = c.alloc;
				v[1][r] = c.map;
				v[2][r] = c.touch;
				v[3][r] = c.imp_map;
				v[4][r] = c.imp_touch;
				v[5][r] = c.unmap;
				v[6][r] = c.reg;
			}
			snprintf(row, sizeof(row), "%s %zu MiB", names[m],
				 lens[l] >> 20);
			figure("host memory", row, "allocate ns", median(v[0], rounds), "ns");
			figure("host memory", row, "mmap ns", median(v[1], rounds), "ns");
			figure("host memory", row, "first touch ns", median(v[2], rounds), "ns");
			figure("host memory", row, "importer mmap ns", median(v[3], rounds), "ns");
			figure("host memory", row, "importer touch ns", median(v[4], rounds), "ns");
			figure("host memory", row, "munmap ns", median(v[5], rounds), "ns");
			if (v[6][0] >= 0)
				figure("host memory", row, "io_uring register ns",
				       median(v[6], rounds), "ns");
		}
	}
	close(imp);
	close(pool);
	close(ctl);
	return 0;
}
