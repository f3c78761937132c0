// SPDX-License-Identifier: GPL-2.0-only
/*
 * scale_bench: how the cost of a pointer import and the kernel memory of an
 * export record grow with the number of live records in one pool (1,000 to
 * 1,000,000).  Memory is the growth of the kernel's unreclaimable slab
 * (SUnreclaim in /proc/meminfo) while the records are made, divided by
 * their number: the records themselves, the xarray that indexes them, and
 * anything else a record costs.
 */
#include <sys/mman.h>

#include "bench.h"

#define CHUNK		(2u << 20)
#define PTR		4096u
#define SAMPLES		20000u

static long sunreclaim_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		die("/proc/meminfo: %s", strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SUnreclaim: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void run(int ctl, unsigned int nrec, double *import_ns, double *batch_ns,
		double *bytes)
{
	static struct kfdpool_export ex[KFDPOOL_BATCH_MAX];
	static struct kfdpool_import im[512];
	struct kfdpool_pool_create pc = { .handle_types = KFDPOOL_HANDLE_TYPE_FD };
	struct kfdpool_pin pin = { 0 };
	struct kfdpool_record *rec = calloc(nrec, sizeof(*rec));
	struct kfdpool_import first = { 0 };
	unsigned int i, j, k;
	long before, after;
	uint64_t t0;

	if (!rec)
		die("out of memory");
	strcpy(pc.name, "scale_bench");
	if (xioctl(ctl, KFDPOOL_IOC_POOL_CREATE, &pc))
		die("pool create: %s", strerror(errno));
	pin.dmabuf_fd = heap_dmabuf(CHUNK);
	if (xioctl(pc.fd, KFDPOOL_IOC_PIN, &pin))
		die("pin: %s", strerror(errno));
	close(pin.dmabuf_fd);

	/* Let the kernel's per-cpu caches settle before the first reading. */
	usleep(100000);
	before = sunreclaim_kb();
	for (i = 0; i < nrec; i += k) {
		struct kfdpool_batch b = { .ops = (uintptr_t)ex,
			.elem_size = sizeof(ex[0]) };

		k = nrec - i < KFDPOOL_BATCH_MAX ? nrec - i : KFDPOOL_BATCH_MAX;
		for (j = 0; j < k; j++)
			ex[j] = (struct kfdpool_export){
				.entry_id = pin.entry_id,
				.offset = (uint64_t)((i + j) % (CHUNK / PTR)) * PTR,
				.size = PTR,
			};
		b.count = k;
		if (xioctl(pc.fd, KFDPOOL_IOC_EXPORT_BATCH, &b) != (int)k)
			die("export batch at %u records: %s", i, strerror(errno));
		for (j = 0; j < k; j++) {
			if (ex[j].status)
				die("export at %u records: %s", i + j,
				    strerror(-ex[j].status));
			rec[i + j] = ex[j].record;
		}
	}
	usleep(100000);
	after = sunreclaim_kb();
	*bytes = (double)(after - before) * 1024 / nrec;

	/* Hold the entry, then validate random live records. */
	first.record = rec[0];
	if (xioctl(pc.fd, KFDPOOL_IOC_IMPORT, &first))
		die("import: %s", strerror(errno));
	t0 = now_ns();
	for (i = 0; i < SAMPLES; i++) {
		struct kfdpool_import v = {
			.record = rec[rnd() % nrec],
			.flags = KFDPOOL_IMPORT_VALIDATE,
		};

		if (xioctl(pc.fd, KFDPOOL_IOC_IMPORT, &v))
			die("validate: %s", strerror(errno));
	}
	*import_ns = (double)(now_ns() - t0) / SAMPLES;

	t0 = now_ns();
	for (i = 0; i < SAMPLES; i += 512) {
		struct kfdpool_batch b = { .ops = (uintptr_t)im, .count = 512,
			.elem_size = sizeof(im[0]) };

		for (j = 0; j < 512; j++)
			im[j] = (struct kfdpool_import){
				.record = rec[rnd() % nrec],
				.flags = KFDPOOL_IMPORT_VALIDATE,
			};
		if (xioctl(pc.fd, KFDPOOL_IOC_IMPORT_BATCH, &b) != 512)
			die("validate batch: %s", strerror(errno));
	}
	*batch_ns = (double)(now_ns() - t0) / (SAMPLES / 512 * 512);

	close(first.fd);
	close(pc.fd);
	free(rec);
}

int main(void)
{
	static const unsigned int counts[] = { 1000, 10000, 100000, 1000000 };
	unsigned int max = env_int("BENCH_SCALE_MAX", 1000000);
	double imp[4], bat[4], mem[4];
	char row[32];
	int ctl, n = 0, i;

	ctl = open("/dev/kfdpool", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		die("/dev/kfdpool: %s", strerror(errno));
	printf("# scale_bench: one pool, one 2 MiB entry, N live records of 4 KiB; "
	       "%u random validate-only imports per N\n", SAMPLES);
	for (i = 0; i < 4 && counts[i] <= max; i++, n++) {
		run(ctl, counts[i], &imp[i], &bat[i], &mem[i]);
		snprintf(row, sizeof(row), "%u records", counts[i]);
		figure("scaling", row, "import (ioctl)", imp[i], "ns");
		figure("scaling", row, "import (batch 512)", bat[i], "ns");
		figure("scaling", row, "kernel bytes per record", mem[i], "B");
		figure("scaling", row, "import cost vs 1000", imp[i] / imp[0], "x");
	}
	return n ? 0 : 1;
}
