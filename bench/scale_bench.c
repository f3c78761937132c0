// SPDX-License-Identifier: GPL-2.0-only
/*
 * scale_bench: how the cost of a pointer import and the kernel memory of an
 * export record grow with the number of live records in one pool (1,000 to
 * 1,000,000).  Memory is the growth of the kernel's slab, reclaimable and
 * not, and of its vmalloc space (Slab and VmallocUsed in /proc/meminfo)
 * while the records are made, divided by their number: the records
 * themselves, whatever indexes them (the pool's record table; an xarray's
 * nodes are reclaimable slab), and anything else a record costs.
 *
 * What grows with the records is mostly cache and TLB misses, which only
 * wall time shows (icount counts instructions, not misses), and wall time
 * in an emulator on a shared host drifts with the neighbours' load.  So the
 * 1,000-record pool stays alive while each larger one is measured, and the
 * two take turns, round after round: a block of random validate-only
 * imports to warm the caches up and a timed one, on each.  The two timed
 * blocks of a round see the same host; the figure is the median of the
 * rounds' ratios.
 */
#include <sys/mman.h>

#include "bench.h"
#include "../selftests/kfdpool_format.h"

#define CHUNK		(2u << 20)
#define PTR		4096u
#define BLOCK		2048u	/* imports per block: 4 batches of 512 */
#define MAX_ROUNDS	64

struct level {
	unsigned int nrec;
	int pool, held_fd;
	struct kfdpool_record *rec;
	double bytes;		/* kernel bytes per record */
};

/* Slab (reclaimable or not) plus vmalloc space, in KiB. */
static long kernel_kb(void)
{
	long kb, slab = -1, vmalloc = -1;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		die("/proc/meminfo: %s", strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Slab: %ld kB", &kb) == 1)
			slab = kb;
		else if (sscanf(line, "VmallocUsed: %ld kB", &kb) == 1)
			vmalloc = kb;
	fclose(f);
	if (slab < 0 || vmalloc < 0)
		die("/proc/meminfo: no Slab or VmallocUsed line");
	return slab + vmalloc;
}

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A pool with one entry, @nrec live records, and an import that holds the
 * entry (so that imports may validate only). */
static void level_make(int ctl, struct level *l, unsigned int nrec)
{
	static struct kfdpool_export ex[KFD_BATCH_MAX];
	struct kfdpool_pool_create pc = { .handle_types = KFDPOOL_HANDLE_TYPE_FD };
	struct kfdpool_pin pin = { 0 };
	struct kfdpool_import first = { 0 };
	unsigned int i, j, k;
	long before, after;

	l->nrec = nrec;
	l->rec = calloc(nrec, sizeof(*l->rec));
	if (!l->rec)
		die("out of memory");
	strcpy(pc.name, "scale_bench");
	if (xioctl(ctl, KFDPOOL_IOC_POOL_CREATE, &pc))
		die("pool create: %s", strerror(errno));
	l->pool = pc.fd;
	pin.dmabuf_fd = heap_dmabuf(CHUNK);
	if (xioctl(l->pool, KFDPOOL_IOC_PIN, &pin))
		die("pin: %s", strerror(errno));
	close(pin.dmabuf_fd);

	/* Let the kernel's per-cpu caches settle before the first reading. */
	usleep(100000);
	before = kernel_kb();
	for (i = 0; i < nrec; i += k) {
		struct kfdpool_batch b = { .ops = (uintptr_t)ex,
			.elem_size = sizeof(ex[0]) };

		k = nrec - i < KFD_BATCH_MAX ? nrec - i : KFD_BATCH_MAX;
		for (j = 0; j < k; j++)
			ex[j] = (struct kfdpool_export){
				.entry_id = pin.entry_id,
				.offset = (uint64_t)((i + j) % (CHUNK / PTR)) * PTR,
				.size = PTR,
			};
		b.count = k;
		if (xioctl(l->pool, KFDPOOL_IOC_EXPORT_BATCH, &b) != (int)k)
			die("export batch at %u records: %s", i, strerror(errno));
		for (j = 0; j < k; j++) {
			if (ex[j].status)
				die("export at %u records: %s", i + j,
				    strerror(-ex[j].status));
			l->rec[i + j] = ex[j].record;
		}
	}
	usleep(100000);
	after = kernel_kb();
	l->bytes = (double)(after - before) * 1024 / nrec;

	first.record = l->rec[0];
	if (xioctl(l->pool, KFDPOOL_IOC_IMPORT, &first))
		die("import: %s", strerror(errno));
	l->held_fd = first.fd;
}

static void level_free(struct level *l)
{
	close(l->held_fd);
	close(l->pool);
	free(l->rec);
}

/*
 * One block of validate-only imports of random live records: ns each.  The
 * records are picked before the clock starts, as the batches' are: an
 * importer gets its records in a message, and picking them at random from
 * this program's own array (64 MB at 10^6 records) put a cache and TLB
 * miss of the benchmark's in every import timed at 10^6 and none at 10^3.
 */
static double block_ioctl(struct level *l)
{
	static struct kfdpool_import v[BLOCK];
	unsigned int i;
	uint64_t t0;

	for (i = 0; i < BLOCK; i++)
		v[i] = (struct kfdpool_import){
			.record = l->rec[rnd() % l->nrec],
			.flags = KFDPOOL_IMPORT_VALIDATE,
		};
	t0 = now_ns();
	for (i = 0; i < BLOCK; i++)
		if (xioctl(l->pool, KFDPOOL_IOC_IMPORT, &v[i]))
			die("validate: %s", strerror(errno));
	return (double)(now_ns() - t0) / BLOCK;
}

static double block_batch(struct level *l)
{
	static struct kfdpool_import im[512];
	uint64_t t = 0, t0;
	unsigned int i, j;

	for (i = 0; i < BLOCK; i += 512) {
		struct kfdpool_batch b = { .ops = (uintptr_t)im, .count = 512,
			.elem_size = sizeof(im[0]) };

		for (j = 0; j < 512; j++)
			im[j] = (struct kfdpool_import){
				.record = l->rec[rnd() % l->nrec],
				.flags = KFDPOOL_IMPORT_VALIDATE,
			};
		t0 = now_ns();
		if (xioctl(l->pool, KFDPOOL_IOC_IMPORT_BATCH, &b) != 512)
			die("validate batch: %s", strerror(errno));
		t += now_ns() - t0;
	}
	return (double)t / BLOCK;
}

static void report(const struct level *l, double imp, double bat, double ratio)
{
	char row[32];

	snprintf(row, sizeof(row), "%u records", l->nrec);
	figure("scaling", row, "import (ioctl)", imp, "ns");
	figure("scaling", row, "import (batch 512)", bat, "ns");
	figure("scaling", row, "kernel bytes per record", l->bytes, "B");
	figure("scaling", row, "import cost vs 1000", ratio, "x");
}

int main(void)
{
	static const unsigned int counts[] = { 10000, 100000, 1000000 };
	unsigned int max = env_int("BENCH_SCALE_MAX", 1000000);
	unsigned int rounds = env_int("BENCH_ROUNDS", 7) * 3;
	double base_imp[MAX_ROUNDS], base_bat[MAX_ROUNDS];
	double imp[MAX_ROUNDS], bat[MAX_ROUNDS], ratio[MAX_ROUNDS];
	struct level base, l;
	unsigned int i, r;
	int ctl;

	if (rounds > MAX_ROUNDS)
		rounds = MAX_ROUNDS;
	ctl = open("/dev/kfdpool", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		die("/dev/kfdpool: %s", strerror(errno));
	printf("# scale_bench: one pool, one 2 MiB entry, N live records of 4 KiB; "
	       "%u rounds of a block of %u random validate-only imports at N and "
	       "one at 1000 records, medians\n", rounds, BLOCK);
	level_make(ctl, &base, 1000);
	for (r = 0; r < rounds; r++) {
		base_imp[r] = block_ioctl(&base);
		base_bat[r] = block_batch(&base);
	}
	report(&base, median(base_imp, rounds), median(base_bat, rounds), 1.0);
	for (i = 0; i < 3 && counts[i] <= max; i++) {
		level_make(ctl, &l, counts[i]);
		for (r = 0; r < rounds; r++) {
			double b;

			/* Each block after one that warms its caches up. */
			block_ioctl(&base);
			b = block_ioctl(&base);
			block_ioctl(&l);
			imp[r] = block_ioctl(&l);
			ratio[r] = imp[r] / b;
			bat[r] = block_batch(&l);
		}
		report(&l, median(imp, rounds), median(bat, rounds),
		       median(ratio, rounds));
		level_free(&l);
	}
	level_free(&base);
	return 0;
}
