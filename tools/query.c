// SPDX-License-Identifier: MIT
/*
 * kfdpool-query: print the loaded module's ABI version, features, limits and
 * what the caller's user holds.  Bytes have no quota of the module's own
 * (RLIMIT_MEMLOCK, the memory cgroup and the exporters bound them): QUERY's
 * byte limits and pinned figures read 0, and are printed only when an older
 * module still fills them.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <kfdpool.h>

/* What debugfs shows of each user (root only). */
#define KFDPOOL_QUERY_USERS	"/sys/kernel/debug/kfdpool/users"

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

/*
 * The caller's record table pages, which QUERY does not report: from
 * debugfs (root's), the line of the caller's euid in its own user
 * namespace.  -1 when it cannot be read.
 */
static long rec_pages(void)
{
	unsigned long long inum, pbytes;
	unsigned int uid, owner, persistent;
	long records, pages = -1;
	struct stat st;
	char line[256];
	int level;
	FILE *f;

	if (stat("/proc/self/ns/user", &st))
		return -1;
	f = fopen(KFDPOOL_QUERY_USERS, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llu %d %u %u %ld %ld %u %llu", &inum, &level,
			   &uid, &owner, &records, &pages, &persistent,
			   &pbytes) == 8 &&
		    inum == (unsigned long long)st.st_ino && uid == geteuid())
			break;
		pages = -1;
	}
	fclose(f);
	return pages;
}

int main(void)
{
	struct kfdpool_query q;
	long pages;
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
	/* An older module's byte quotas, which this one no longer has. */
	if (q.global_limit)
		limit("global limit", q.global_limit);
	if (q.user_limit)
		limit("per-user limit", q.user_limit);
	limit("default pool limit", q.default_pool_limit);
	printf("%-22s %u\n", "entries per pool", q.max_entries);
	printf("%-22s %u\n", "records per pool", q.max_records);
	if (q.max_user_records)
		printf("%-22s %u\n", "records per user", q.max_user_records);
	else
		printf("%-22s none\n", "records per user");
	printf("%-22s %u\n", "batch maximum", q.max_batch);
	if (q.global_pinned || q.user_pinned)
		printf("%-22s %llu bytes, %llu bytes yours\n", "pinned now",
		       (unsigned long long)q.global_pinned,
		       (unsigned long long)q.user_pinned);
	printf("%-22s %u\n", "records now (you)", q.user_records);
	pages = rec_pages();
	if (pages >= 0)
		printf("%-22s %ld\n", "record pages (you)", pages);
	if (q.features & KFDPOOL_FEATURE_PERSIST) {
		if (q.max_user_persistent)
			printf("%-22s %u\n", "persistent per user",
			       q.max_user_persistent);
		else
			printf("%-22s none (off: max_user_persistent=0)\n",
			       "persistent per user");
		limit("persistent bytes/user", q.max_user_persistent_bytes);
		printf("%-22s %u pools, %llu bytes\n", "persistent now (you)",
		       q.user_persistent,
		       (unsigned long long)q.user_persistent_bytes);
	}
	printf("%-22s RLIMIT_MEMLOCK (module memory), the memory cgroup, the exporters\n",
	       "bytes bounded by");
	return 0;
}
