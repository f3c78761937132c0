// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench_budget BUDGETS [--suggest]: make check's instruction budgets.
 *
 * Measures the allocation pair (pair.h), the kernel's per-pointer costs
 * (kcost.h) and host memory from the module (hostmem.h), the code the
 * benchmarks report, in guest instructions: it runs
 * only under tools/vm/run --icount, where 1 ns of guest time is one guest
 * instruction and the figures are deterministic (they do not move with the
 * host's load, so the budgets do not flake).  Prints KTAP, one line per
 * budget of BUDGETS (bench/budgets, which says how to update it) with the
 * measured value and the budget; a value above its budget is "not ok".
 * --suggest prints new budget lines instead: 1.5 times each value.
 */
#include "hostmem.h"
#include "kcost.h"
#include "pair.h"

#define ROUNDS 7
#define PAIRS 1000

struct budget {
	char name[64];
	double budget;
};

static hipMemPool_t pools[3];	/* plain, IPC, plain at threshold 0 */
static struct kcost kc;
static int kc_ready;

static double kernel_cost(enum kc_op op)
{
	if (!kc_ready) {
		kc_setup(&kc);
		kc_ready = 1;
	}
	return kc_cost(&kc, op, ROUNDS);
}

/* The typical pair: exact under icount (pair.h says why not the mean).
 * @which: 0 plain, 1 IPC, 2 plain at HIP's default release threshold. */
static double pair(int which, size_t size)
{
	struct pair_figures f;

	if (!pools[which])
		pools[which] = which == 2 ? pair_pool_threshold(0, 0) :
			       pair_pool(which);
	pair_cost(pools[which], size, PAIRS, ROUNDS, &f);
	return f.typical;
}

/*
 * ALLOC of @len bytes (@import: an importer's IMPORT, mmap and write to
 * every page of it): the median of ROUNDS of hostmem.h's rounds.
 */
static double hostmem(size_t len, int import)
{
	static struct hm_pools p;
	static int ready;
	double v[ROUNDS];
	struct hm_cost c;
	int r;

	if (!ready++)
		hm_setup(&p);
	for (r = 0; r < ROUNDS; r++) {
		hm_round(&p, len, 1, 0, &c);
		v[r] = import ? c.imp_map + c.imp_touch : c.alloc;
	}
	return median(v, ROUNDS);
}

/*
 * What each budget name measures: instructions per pair, per pointer, or
 * per host memory allocation or import.
 */
static int measure(const char *name, double *v)
{
	static const struct { const char *name; enum kc_op op; } kn[] = {
		{ "export-ioctl", KC_EXPORT },
		{ "export-batch", KC_EXPORT_BATCH },
		{ "export-uring64", KC_EXPORT_URING },
		{ "revoke-ioctl", KC_REVOKE },
		{ "revoke-batch", KC_REVOKE_BATCH },
		{ "validate-ioctl", KC_VALIDATE },
		{ "validate-batch", KC_VALIDATE_BATCH },
		{ "validate-uring64", KC_VALIDATE_URING },
	};
	unsigned int i;

	if (!strcmp(name, "pair-plain-4k"))
		*v = pair(0, 4096);
	else if (!strcmp(name, "pair-plain-1m"))
		*v = pair(0, 1 << 20);
	else if (!strcmp(name, "pair-ipc-4k"))
		*v = pair(1, 4096);
	else if (!strcmp(name, "pair-ipc-1m"))
		*v = pair(1, 1 << 20);
	else if (!strcmp(name, "pair-default-4k"))
		*v = pair(2, 4096);
	else if (!strcmp(name, "pair-default-1m"))
		*v = pair(2, 1 << 20);
	else if (!strcmp(name, "pair-default-32m"))
		*v = pair(2, 32 << 20);
	else if (!strcmp(name, "hostmem-alloc-2m"))
		*v = hostmem(2 << 20, 0);
	else if (!strcmp(name, "hostmem-alloc-64m"))
		*v = hostmem(64 << 20, 0);
	else if (!strcmp(name, "hostmem-import-2m"))
		*v = hostmem(2 << 20, 1);
	else {
		for (i = 0; i < sizeof(kn) / sizeof(kn[0]); i++)
			if (!strcmp(name, kn[i].name))
				break;
		if (i == sizeof(kn) / sizeof(kn[0]))
			return -1;
		*v = kernel_cost(kn[i].op);
	}
	return 0;
}

static int read_budgets(const char *path, struct budget *b, int max)
{
	char line[256];
	FILE *f = fopen(path, "r");
	int n = 0;

	if (!f)
		die("%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *hash = strchr(line, '#');

		if (hash)
			*hash = 0;
		if (strspn(line, " \t\n") == strlen(line))
			continue;
		if (n == max || sscanf(line, "%63s %lf", b[n].name, &b[n].budget) != 2)
			die("%s: bad line: %s", path, line);
		n++;
	}
	fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	struct budget b[64];
	int n, i, suggest, failed = 0;
	const char *icount = getenv("KFDPOOL_ICOUNT");

	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "--suggest")))
		die("usage: bench_budget BUDGETS [--suggest]");
	suggest = argc == 3;
	if (!icount || strcmp(icount, "1"))
		die("instruction budgets need the guest clock to count "
		    "instructions: run under tools/vm/run --icount");
	n = read_budgets(argv[1], b, 64);
	if (!suggest)
		printf("KTAP version 1\n1..%d\n", n);
	for (i = 0; i < n; i++) {
		double v;

		if (measure(b[i].name, &v)) {
			printf("not ok %d %s: no such measurement\n", i + 1, b[i].name);
			failed = 1;
			continue;
		}
		if (suggest) {
			printf("%-24s %8.0f	# measured %.0f\n", b[i].name, v * 1.5, v);
			continue;
		}
		printf("%s %d %s: %.0f instructions (budget %.0f)\n",
		       v <= b[i].budget ? "ok" : "not ok", i + 1, b[i].name, v,
		       b[i].budget);
		failed |= v > b[i].budget;
		fflush(stdout);
	}
	if (kc_ready)
		kc_teardown(&kc);
	return failed;
}
