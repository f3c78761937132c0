// SPDX-License-Identifier: MIT
/*
 * kfdpool-stat parsers.  The kernel writes these formats; we read them
 * defensively: unknown keys and extra fields are ignored (newer modules may
 * add some), malformed values are reported rather than guessed.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stat_parse.h"

int kps_valid_id(const char *s)
{
	size_t i;

	for (i = 0; i < KPS_ID_HEX; i++)
		if (!isdigit((unsigned char)s[i]) && !(s[i] >= 'a' && s[i] <= 'f'))
			return 0;
	return s[i] == '\0';
}

/* A whole-string unsigned number; base 0 accepts 0x for hex. */
static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	return 0;
}

static int parse_u32(const char *s, uint32_t *v)
{
	uint64_t x;

	if (parse_u64(s, &x) || x > UINT32_MAX)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

static int parse_s32(const char *s, int32_t *v)
{
	char *end;
	long x;

	if (!*s)
		return -1;
	errno = 0;
	x = strtol(s, &end, 10);
	if (errno || *end || x < INT32_MIN || x > INT32_MAX)
		return -1;
	*v = (int32_t)x;
	return 0;
}

static int copy_name(char *dst, const char *src)
{
	size_t n = strlen(src);

	if (n > KFDPOOL_NAME_LEN)
		return -1;
	memcpy(dst, src, n + 1);
	return 0;
}

enum kind { K_U64, K_U32, K_S32 };

static const struct fdkey {
	const char *key;
	uint32_t bit;
	enum kind kind;
	size_t off;
} fdkeys[] = {
#define U64(k, b, f) { k, b, K_U64, offsetof(struct kps_fdinfo, f) }
#define U32(k, b, f) { k, b, K_U32, offsetof(struct kps_fdinfo, f) }
	{ "kfdpool-owner-pid", KPS_F_OWNER_PID, K_S32,
	  offsetof(struct kps_fdinfo, owner_pid) },
	U64("kfdpool-limit", KPS_F_LIMIT, limit),
	U32("kfdpool-handle-types", KPS_F_HANDLE_TYPES, handle_types),
	U64("kfdpool-reserved", KPS_F_RESERVED, reserved),
	U64("kfdpool-reserved-high", KPS_F_RESERVED_HIGH, reserved_high),
	U64("kfdpool-used", KPS_F_USED, used),
	U64("kfdpool-used-high", KPS_F_USED_HIGH, used_high),
	U64("kfdpool-draining", KPS_F_DRAINING, draining),
	U32("kfdpool-entries", KPS_F_ENTRIES, entries),
	U32("kfdpool-draining-entries", KPS_F_DRAINING_ENTRIES, draining_entries),
	U32("kfdpool-records", KPS_F_RECORDS, records),
	U32("kfdpool-import-fds", KPS_F_IMPORT_FDS, import_fds),
	U64("kfdpool-imported", KPS_F_IMPORTED, imported),
	U64("kfdpool-fd-imported", KPS_F_FD_IMPORTED, fd_imported),
	U32("kfdpool-fd-imports", KPS_F_FD_IMPORTS, fd_imports),
#undef U64
#undef U32
};

/* One "key:<tab or spaces>value" line; @val is trimmed of blanks. */
static int fdinfo_line(char *line, struct kps_fdinfo *fi)
{
	char *colon = strchr(line, ':');
	char *key = line, *val, *end;
	size_t i;

	if (!colon || strncmp(line, "kfdpool-", 8))
		return 0;	/* pos:, flags:, mnt_id:, ... */
	*colon = '\0';
	val = colon + 1;
	while (*val == '\t' || *val == ' ')
		val++;
	end = val + strlen(val);
	while (end > val && isspace((unsigned char)end[-1]))
		*--end = '\0';

	if (!strcmp(key, "kfdpool-id")) {
		if (!kps_valid_id(val))
			return -1;
		memcpy(fi->id, val, KPS_ID_HEX + 1);
		fi->seen |= KPS_F_ID;
		return 0;
	}
	if (!strcmp(key, "kfdpool-name")) {
		if (copy_name(fi->name, val))
			return -1;
		fi->seen |= KPS_F_NAME;
		return 0;
	}
	if (!strcmp(key, "kfdpool-mode")) {
		if (!strcmp(val, "owner"))
			fi->mode = KFDPOOL_MODE_OWNER;
		else if (!strcmp(val, "import"))
			fi->mode = KFDPOOL_MODE_IMPORT;
		else
			return -1;
		fi->seen |= KPS_F_MODE;
		return 0;
	}
	for (i = 0; i < sizeof(fdkeys) / sizeof(fdkeys[0]); i++) {
		const struct fdkey *k = &fdkeys[i];
		void *p = (char *)fi + k->off;
		int r;

		if (strcmp(key, k->key))
			continue;
		if (k->kind == K_U64)
			r = parse_u64(val, p);
		else if (k->kind == K_U32)
			r = parse_u32(val, p);
		else
			r = parse_s32(val, p);
		if (r)
			return -1;
		fi->seen |= k->bit;
		return 0;
	}
	return 0;	/* a kfdpool key this version does not know */
}

int kps_parse_fdinfo(const char *text, struct kps_fdinfo *fi)
{
	char *copy, *line, *save = NULL;
	int bad = 0;

	memset(fi, 0, sizeof(*fi));
	copy = strdup(text);
	if (!copy)
		return -1;
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (fdinfo_line(line, fi))
			bad = 1;
	free(copy);
	if (!(fi->seen & KPS_F_ID))
		return bad ? -1 : 0;
	return bad ? -1 : 1;
}

#define POOL_FIELDS 14

static int pool_line(char *line, struct kps_pool *p)
{
	char *f[POOL_FIELDS], *save = NULL, *tok;
	int n = 0;

	for (tok = strtok_r(line, " \t", &save); tok && n < POOL_FIELDS;
	     tok = strtok_r(NULL, " \t", &save))
		f[n++] = tok;
	if (n < POOL_FIELDS)
		return -1;	/* extra fields beyond 14 are ignored */
	memset(p, 0, sizeof(*p));
	if (!kps_valid_id(f[0]))
		return -1;
	memcpy(p->id, f[0], KPS_ID_HEX + 1);
	if (strcmp(f[1], "-") && copy_name(p->name, f[1]))
		return -1;
	if (parse_s32(f[2], &p->owner_pid) || parse_u32(f[3], &p->uid) ||
	    parse_u64(f[4], &p->limit) || parse_u64(f[5], &p->reserved) ||
	    parse_u64(f[6], &p->reserved_high) || parse_u64(f[7], &p->used) ||
	    parse_u64(f[8], &p->used_high) || parse_u64(f[9], &p->draining) ||
	    parse_u32(f[10], &p->entries) || parse_u32(f[11], &p->records) ||
	    parse_u32(f[12], &p->import_fds) || parse_u64(f[13], &p->imported))
		return -1;
	return 0;
}

size_t kps_parse_pools(const char *text, struct kps_pool *pools, size_t max,
		       size_t *bad)
{
	char *copy, *line, *save = NULL;
	size_t n = 0;
	struct kps_pool tmp;

	*bad = 0;
	copy = strdup(text);
	if (!copy) {
		*bad = 1;
		return 0;
	}
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *s = line;

		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s || *s == '#')
			continue;
		if (pool_line(s, &tmp)) {
			(*bad)++;
			continue;
		}
		if (n < max)
			pools[n] = tmp;
		n++;
	}
	free(copy);
	return n;
}

const char *kps_size(uint64_t bytes, char *buf)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	int u = -1;

	if (bytes < 1024) {
		snprintf(buf, KPS_SIZE_LEN, "%" PRIu64 " B", bytes);
		return buf;
	}
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	/* 3 significant digits: 1.50 MiB, 15.0 MiB, 150 MiB */
	snprintf(buf, KPS_SIZE_LEN, v < 10 ? "%.2f %s" : v < 100 ? "%.1f %s" : "%.0f %s",
		 v, unit[u]);
	return buf;
}
