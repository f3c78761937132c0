// SPDX-License-Identifier: GPL-2.0-only
/*
 * handle_bench: what the pool-level operations cost: create a pool, export
 * it as an import fd, hand that fd to another process (SCM_RIGHTS) and open
 * it there, open a pool from its 64-byte handle (when the module has pool
 * handles), and the first import of a chunk (dma-buf fd + mmap) against a
 * validate-only import.  Medians of many repetitions.
 */
#include <sys/mman.h>
#include <sys/wait.h>

#include "bench.h"

#define REPS	2000u
#define CHUNK	(2u << 20)

static double *samples;

static void report(const char *row, unsigned int n)
{
	figure("pool handles", row, "time", median(samples, n), "ns");
}

int main(void)
{
	struct kfdpool_query q = { 0 };
	struct kfdpool_pin pin = { 0 };
	struct kfdpool_export ex = { 0 };
	int ctl, pool, sv[2], imp_fd;
	unsigned int i;
	uint64_t t0;
	pid_t child;

	samples = calloc(REPS, sizeof(*samples));
	ctl = open("/dev/kfdpool", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		die("/dev/kfdpool: %s", strerror(errno));
	if (xioctl(ctl, KFDPOOL_IOC_QUERY, &q))
		die("query: %s", strerror(errno));

	for (i = 0; i < REPS; i++) {
		struct kfdpool_pool_create pc = {
			.handle_types = KFDPOOL_HANDLE_TYPES_ALL,
		};

		t0 = now_ns();
		if (xioctl(ctl, KFDPOOL_IOC_POOL_CREATE, &pc))
			die("pool create: %s", strerror(errno));
		samples[i] = now_ns() - t0;
		close(pc.fd);
	}
	report("pool create", REPS);

	{
		struct kfdpool_pool_create pc = {
			.handle_types = KFDPOOL_HANDLE_TYPES_ALL,
		};

		if (xioctl(ctl, KFDPOOL_IOC_POOL_CREATE, &pc))
			die("pool create: %s", strerror(errno));
		pool = pc.fd;
	}
	for (i = 0; i < REPS; i++) {
		struct kfdpool_pool_export pe = { 0 };

		t0 = now_ns();
		if (xioctl(pool, KFDPOOL_IOC_POOL_EXPORT, &pe))
			die("pool export: %s", strerror(errno));
		samples[i] = now_ns() - t0;
		close(pe.fd);
	}
	report("pool export (import fd)", REPS);

	/* The fd's trip to another process and its first use there. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		die("socketpair: %s", strerror(errno));
	child = fork();
	if (child == 0) {
		close(sv[0]);
		for (i = 0; i < REPS; i++) {
			struct kfdpool_pool_stats st = { 0 };
			uint64_t t;
			int fd;

			recv_fds(sv[1], &fd, 1);
			if (xioctl(fd, KFDPOOL_IOC_POOL_STATS, &st))
				die("stats: %s", strerror(errno));
			t = now_ns();
			close(fd);
			write_all(sv[1], &t, sizeof(t));
		}
		exit(0);
	}
	close(sv[1]);
	for (i = 0; i < REPS; i++) {
		struct kfdpool_pool_export pe = { 0 };
		uint64_t t1;

		t0 = now_ns();
		if (xioctl(pool, KFDPOOL_IOC_POOL_EXPORT, &pe))
			die("pool export: %s", strerror(errno));
		send_fds(sv[0], &pe.fd, 1);
		close(pe.fd);
		read_all(sv[0], &t1, sizeof(t1));
		samples[i] = t1 - t0;
	}
	waitpid(child, NULL, 0);
	report("pool import (export + SCM_RIGHTS + first ioctl)", REPS);

	if (q.features & KFDPOOL_FEATURE_POOL_HANDLE) {
		struct kfdpool_handle_export he = { 0 };

		if (xioctl(pool, KFDPOOL_IOC_HANDLE_EXPORT, &he))
			die("handle export: %s", strerror(errno));
		for (i = 0; i < REPS; i++) {
			struct kfdpool_pool_import_handle ih = { .handle = he.handle };

			t0 = now_ns();
			if (xioctl(ctl, KFDPOOL_IOC_POOL_IMPORT_HANDLE, &ih))
				die("handle import: %s", strerror(errno));
			samples[i] = now_ns() - t0;
			close(ih.fd);
		}
		report("pool import from 64-byte handle", REPS);
	} else {
		printf("# pool handles: not in this module\n");
	}

	pin.dmabuf_fd = heap_dmabuf(CHUNK);
	if (xioctl(pool, KFDPOOL_IOC_PIN, &pin))
		die("pin: %s", strerror(errno));
	close(pin.dmabuf_fd);
	ex.entry_id = pin.entry_id;
	ex.size = 4096;
	if (xioctl(pool, KFDPOOL_IOC_EXPORT, &ex))
		die("export: %s", strerror(errno));
	for (i = 0; i < REPS; i++) {
		struct kfdpool_import im = { .record = ex.record };
		struct kfdpool_release rl = { .entry_id = pin.entry_id };
		void *p;

		t0 = now_ns();
		if (xioctl(pool, KFDPOOL_IOC_IMPORT, &im))
			die("import: %s", strerror(errno));
		p = mmap(NULL, im.entry_size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 im.fd, 0);
		if (p == MAP_FAILED)
			die("mmap: %s", strerror(errno));
		samples[i] = now_ns() - t0;
		munmap(p, im.entry_size);
		close(im.fd);
		if (xioctl(pool, KFDPOOL_IOC_RELEASE, &rl))
			die("release: %s", strerror(errno));
	}
	report("first import of a chunk (fd + mmap)", REPS);

	imp_fd = -1;
	{
		struct kfdpool_import im = { .record = ex.record };

		if (xioctl(pool, KFDPOOL_IOC_IMPORT, &im))
			die("import: %s", strerror(errno));
		imp_fd = im.fd;
	}
	for (i = 0; i < REPS; i++) {
		struct kfdpool_import im = {
			.record = ex.record,
			.flags = KFDPOOL_IMPORT_VALIDATE,
		};

		t0 = now_ns();
		if (xioctl(pool, KFDPOOL_IOC_IMPORT, &im))
			die("validate: %s", strerror(errno));
		samples[i] = now_ns() - t0;
	}
	report("validate-only import", REPS);
	close(imp_fd);
	close(pool);
	return 0;
}
