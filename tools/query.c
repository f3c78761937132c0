// SPDX-License-Identifier: MIT
/* kfdpool-query: print the loaded module's ABI version, features and limits. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <kfdpool.h>

static void limit(const char *what, unsigned long long v)
{
	if (v)
		printf("%-22s %llu bytes\n", what, v);
	else
		printf("%-22s none\n", what);
}

/* Every KFDPOOL_FEATURE_* bit of the uapi, by the name printed. */
static const struct {
	uint32_t bit;
	const char *name;
} known[] = {
	{ KFDPOOL_FEATURE_BATCH, "batch" },
	{ KFDPOOL_FEATURE_URING_CMD, "uring_cmd" },
	{ KFDPOOL_FEATURE_POOL_HANDLE, "pool-handle" },
	{ KFDPOOL_FEATURE_HOST_ALLOC, "host-alloc" },
	{ KFDPOOL_FEATURE_PERSIST, "persist" },
};

static void features(uint32_t f)
{
	uint32_t bit;
	size_t i;

	printf("%-22s", "features");
	if (!f)
		printf(" none");
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (f & known[i].bit)
			printf(" %s", known[i].name);
		f &= ~known[i].bit;
	}
	/* A newer module's bits: shown as numbers rather than dropped. */
	for (bit = 1; f; bit <<= 1) {
		if (f & bit)
			printf(" 0x%x", bit);
		f &= ~bit;
	}
	printf("\n");
}

int main(void)
{
	struct kfdpool_query q;
	int fd, ret;

	fd = kfdpool_open();
	if (fd < 0) {
		fprintf(stderr, "kfdpool-query: %s: %s\n", KFDPOOL_DEVICE_PATH,
			strerror(-fd));
		return 1;
	}
	ret = kfdpool_query(fd, &q);
	close(fd);
	if (ret < 0) {
		fprintf(stderr, "kfdpool-query: query: %s\n", strerror(-ret));
		return 1;
	}
	printf("%-22s %u\n", "abi version", q.abi_version);
	features(q.features);
	limit("global limit", q.global_limit);
	limit("per-user limit", q.user_limit);
	limit("default pool limit", q.default_pool_limit);
	printf("%-22s %u\n", "entries per pool", q.max_entries);
	printf("%-22s %u\n", "records per pool", q.max_records);
	if (q.max_user_records)
		printf("%-22s %u\n", "records per user", q.max_user_records);
	else
		printf("%-22s none\n", "records per user");
	printf("%-22s %u\n", "batch maximum", q.max_batch);
	printf("%-22s %llu bytes\n", "pinned now (all)",
	       (unsigned long long)q.global_pinned);
	printf("%-22s %llu bytes, %u records\n", "charged now (you)",
	       (unsigned long long)q.user_pinned, q.user_records);
	if (q.features & KFDPOOL_FEATURE_PERSIST) {
		printf("%-22s %u\n", "persistent per user",
		       q.max_user_persistent);
		limit("persistent bytes/user", q.max_user_persistent_bytes);
		printf("%-22s %u pools, %llu bytes\n", "persistent now (you)",
		       q.user_persistent,
		       (unsigned long long)q.user_persistent_bytes);
	}
	return 0;
}
