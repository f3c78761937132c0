/* SPDX-License-Identifier: MIT */
/*
 * kfdpool-stat: the pool model and its two sources, kept apart from the I/O
 * so they can be tested on sample data.
 *
 *  - KFDPOOL_IOC_POOL_LIST on /dev/kfdpool: struct kfdpool_pool_info per
 *    pool (kps_pool_from_info()).
 *  - /proc/PID/fdinfo/FD of a pool fd: one "key:\tvalue" per line; the
 *    kfdpool keys start with "kfdpool-", every other key is ignored
 *    (kps_parse_fdinfo()).
 */
#ifndef KFDPOOL_STAT_PARSE_H
#define KFDPOOL_STAT_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <linux/kfdpool.h>

#define KPS_ID_HEX	(2 * KFDPOOL_ID_LEN)

/* One pool, from POOL_LIST or from the fdinfo of one of its fds. */
struct kps_pool {
	char id[KPS_ID_HEX + 1];
	char name[KFDPOOL_NAME_LEN + 1];	/* "" for an unnamed pool */
	int32_t owner_pid;
	int uid_known;				/* fdinfo does not show it */
	uint32_t uid;
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
	uint32_t persistent;			/* stays with no fd open */
	int list_known;				/* fdinfo shows neither below */
	uint32_t owner_fds;
	uint64_t age_ns;
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
	KPS_F_FILE_ID		= 1u << 18,
	KPS_F_STATE		= 1u << 19,
	KPS_F_PERSISTENT	= 1u << 20,
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
	uint64_t file_id;		/* the open file; 0 when not shown */
	uint32_t persistent;		/* kfdpool-persistent */
	int ended;			/* kfdpool-state: its owner fds closed */
};

/*
 * Parse fdinfo text (NUL-terminated).  Returns 1 when it is a kfdpool pool
 * fd (it has a valid kfdpool-id), 0 when it is not, -1 when a kfdpool key
 * has a malformed value (the other keys are still filled in).
 */
int kps_parse_fdinfo(const char *text, struct kps_fdinfo *fi);

/* The pool as POOL_LIST reports it. */
void kps_pool_from_info(const struct kfdpool_pool_info *info,
			struct kps_pool *p);

/* The pool-wide figures of a pool fd's fdinfo (no uid there). */
void kps_pool_from_fdinfo(const struct kps_fdinfo *fi, struct kps_pool *p);

/*
 * @in as valid UTF-8 in @out (@len bytes with the NUL): every byte that is
 * not part of a well-formed sequence becomes U+FFFD, so that what is
 * handed to JSON is text (a comm is any 15 bytes, cut anywhere).
 */
void kps_utf8_clean(const char *in, char *out, size_t len);

/*
 * @in for a terminal in @out: every control character, DEL and byte
 * >= 0x80 becomes '?' (no escape sequences from a process name).
 */
void kps_printable(const char *in, char *out, size_t len);

/* "1.5 GiB", "512 B": @buf of at least KPS_SIZE_LEN bytes. */
#define KPS_SIZE_LEN 24
const char *kps_size(uint64_t bytes, char *buf);

/* True for exactly 32 lowercase hex digits. */
int kps_valid_id(const char *s);

/* Those digits as the 16 bytes of a pool id. */
void kps_id_bytes(const char *s, uint8_t id[KFDPOOL_ID_LEN]);

/* "45s", "12m05s", "3h04m", "2d05h": @buf of at least KPS_AGE_LEN bytes. */
#define KPS_AGE_LEN 24
const char *kps_age(uint64_t ns, char *buf);

#endif /* KFDPOOL_STAT_PARSE_H */
