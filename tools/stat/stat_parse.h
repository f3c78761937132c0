/* SPDX-License-Identifier: MIT */
/*
 * kfdpool-stat: parsers for the two places the module publishes accounting,
 * kept apart from the I/O so they can be tested on sample text.
 *
 *  - /proc/PID/fdinfo/FD of a pool fd: one "key:\tvalue" per line; the
 *    kfdpool keys start with "kfdpool-", every other key is ignored.
 *  - /sys/kernel/debug/kfdpool/pools: a '#' header line, then one line per
 *    pool of space-separated fields (see kps_parse_pools()).
 */
#ifndef KFDPOOL_STAT_PARSE_H
#define KFDPOOL_STAT_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <linux/kfdpool.h>

#define KPS_ID_HEX	(2 * KFDPOOL_ID_LEN)

/* One pool as the debugfs listing shows it. */
struct kps_pool {
	char id[KPS_ID_HEX + 1];
	char name[KFDPOOL_NAME_LEN + 1];	/* "" for an unnamed pool */
	int32_t owner_pid;
	uint32_t uid;
	uint64_t limit;
	uint64_t reserved;
	uint64_t reserved_high;
	uint64_t used;
	uint64_t used_high;
	uint64_t draining;
	uint32_t entries;
	uint32_t records;
	uint32_t import_fds;
	uint64_t imported;
};

/* Bits of kps_fdinfo.seen: which keys the fdinfo text had. */
enum {
	KPS_F_ID		= 1u << 0,
	KPS_F_NAME		= 1u << 1,
	KPS_F_MODE		= 1u << 2,
	KPS_F_OWNER_PID		= 1u << 3,
	KPS_F_LIMIT		= 1u << 4,
	KPS_F_HANDLE_TYPES	= 1u << 5,
	KPS_F_RESERVED		= 1u << 6,
	KPS_F_RESERVED_HIGH	= 1u << 7,
	KPS_F_USED		= 1u << 8,
	KPS_F_USED_HIGH		= 1u << 9,
	KPS_F_DRAINING		= 1u << 10,
	KPS_F_ENTRIES		= 1u << 11,
	KPS_F_DRAINING_ENTRIES	= 1u << 12,
	KPS_F_RECORDS		= 1u << 13,
	KPS_F_IMPORT_FDS	= 1u << 14,
	KPS_F_IMPORTED		= 1u << 15,
	KPS_F_FD_IMPORTED	= 1u << 16,
	KPS_F_FD_IMPORTS	= 1u << 17,
};

/* One pool fd as /proc/PID/fdinfo/FD shows it. */
struct kps_fdinfo {
	uint32_t seen;
	char id[KPS_ID_HEX + 1];
	char name[KFDPOOL_NAME_LEN + 1];
	int mode;			/* KFDPOOL_MODE_OWNER / _IMPORT, 0 unknown */
	int32_t owner_pid;
	uint64_t limit;
	uint32_t handle_types;
	uint64_t reserved;
	uint64_t reserved_high;
	uint64_t used;
	uint64_t used_high;
	uint64_t draining;
	uint32_t entries;
	uint32_t draining_entries;
	uint32_t records;
	uint32_t import_fds;
	uint64_t imported;
	uint64_t fd_imported;
	uint32_t fd_imports;
};

/*
 * Parse fdinfo text (NUL-terminated).  Returns 1 when it is a kfdpool pool
 * fd (it has a valid kfdpool-id), 0 when it is not, -1 when a kfdpool key
 * has a malformed value (the other keys are still filled in).
 */
int kps_parse_fdinfo(const char *text, struct kps_fdinfo *fi);

/*
 * Parse the debugfs pools listing (NUL-terminated).  Fills up to @max pools
 * and returns how many lines described a pool (may exceed @max: call again
 * with a bigger array).  Lines that do not parse are counted in *@bad.
 */
size_t kps_parse_pools(const char *text, struct kps_pool *pools, size_t max,
		       size_t *bad);

/* "1.5 GiB", "512 B": @buf of at least KPS_SIZE_LEN bytes. */
#define KPS_SIZE_LEN 24
const char *kps_size(uint64_t bytes, char *buf);

/* True for exactly 32 lowercase hex digits. */
int kps_valid_id(const char *s);

#endif /* KFDPOOL_STAT_PARSE_H */
