// SPDX-License-Identifier: MIT
/*
 * kfdpool-stat: the fdinfo parser and the pool model.  The kernel writes
 * these formats; we read them defensively: unknown keys are ignored (newer
 * modules may add some), malformed values are reported rather than guessed.
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
	U64("kfdpool-file-id", KPS_F_FILE_ID, file_id),
	U32("kfdpool-persistent", KPS_F_PERSISTENT, persistent),
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
	if (!strcmp(key, "kfdpool-state")) {
		if (strcmp(val, "live") && strcmp(val, "ended"))
			return -1;
		fi->ended = !strcmp(val, "ended");
		fi->seen |= KPS_F_STATE;
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

void kps_pool_from_info(const struct kfdpool_pool_info *info,
			struct kps_pool *p)
{
	size_t i;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < KFDPOOL_ID_LEN; i++)
		snprintf(p->id + 2 * i, 3, "%02x", info->id[i]);
	memcpy(p->name, info->name, KFDPOOL_NAME_LEN);
	p->name[KFDPOOL_NAME_LEN] = '\0';	/* the kernel's is terminated too */
	p->owner_pid = info->owner_pid;
	p->uid_known = 1;
	p->uid = info->uid;
	p->limit = info->limit;
	p->handle_types = info->handle_types;
	p->reserved = info->reserved_bytes;
	p->reserved_high = info->reserved_high;
	p->used = info->used_bytes;
	p->used_high = info->used_high;
	p->draining = info->draining_bytes;
	p->entries = info->entries;
	p->draining_entries = info->draining_entries;
	p->records = info->records;
	p->import_fds = info->import_fds;
	p->imported = info->imported_bytes;
	p->persistent = !!(info->flags & KFDPOOL_POOL_PERSIST);
	p->list_known = 1;
	p->owner_fds = info->owner_fds;
	p->age_ns = info->age_ns;
}

void kps_pool_from_fdinfo(const struct kps_fdinfo *fi, struct kps_pool *p)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->id, fi->id, sizeof(p->id));
	memcpy(p->name, fi->name, sizeof(p->name));
	p->owner_pid = fi->owner_pid;
	p->limit = fi->limit;
	p->handle_types = fi->handle_types;
	p->reserved = fi->reserved;
	p->reserved_high = fi->reserved_high;
	p->used = fi->used;
	p->used_high = fi->used_high;
	p->draining = fi->draining;
	p->entries = fi->entries;
	p->draining_entries = fi->draining_entries;
	p->records = fi->records;
	p->import_fds = fi->import_fds;
	p->imported = fi->imported;
	p->persistent = !!fi->persistent;
}

void kps_id_bytes(const char *s, uint8_t id[KFDPOOL_ID_LEN])
{
	unsigned int i, v;

	for (i = 0; i < KFDPOOL_ID_LEN; i++) {
		sscanf(s + 2 * i, "%2x", &v);
		id[i] = (uint8_t)v;
	}
}

const char *kps_age(uint64_t ns, char *buf)
{
	uint64_t s = ns / 1000000000u;

	if (s < 60)
		snprintf(buf, KPS_AGE_LEN, "%" PRIu64 "s", s);
	else if (s < 3600)
		snprintf(buf, KPS_AGE_LEN, "%" PRIu64 "m%02" PRIu64 "s",
			 s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, KPS_AGE_LEN, "%" PRIu64 "h%02" PRIu64 "m",
			 s / 3600, s / 60 % 60);
	else
		snprintf(buf, KPS_AGE_LEN, "%" PRIu64 "d%02" PRIu64 "h",
			 s / 86400, s / 3600 % 24);
	return buf;
}

/* Length of the well-formed UTF-8 sequence at @s (RFC 3629), 0 if none. */
static size_t utf8_seq(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (s[0] >= 0xe0 && s[0] <= 0xef) {
		/* no overlongs (e0 a0..), no surrogates (ed 80..9f) */
		unsigned char lo = s[0] == 0xe0 ? 0xa0 : 0x80;
		unsigned char hi = s[0] == 0xed ? 0x9f : 0xbf;

		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		unsigned char lo = s[0] == 0xf0 ? 0x90 : 0x80;
		unsigned char hi = s[0] == 0xf4 ? 0x8f : 0xbf;

		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 &&
		       (s[3] & 0xc0) == 0x80 ? 4 : 0;
	}
	return 0;
}

void kps_utf8_clean(const char *in, char *out, size_t len)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t o = 0, n;

	if (!len)
		return;
	while (*s) {
		n = utf8_seq(s);
		if (n) {
			if (o + n >= len)
				break;
			memcpy(out + o, s, n);
			s += n;
		} else {
			if (o + 3 >= len)
				break;
			memcpy(out + o, "\xef\xbf\xbd", 3);	/* U+FFFD */
			n = 3;
			s++;
		}
		o += n;
	}
	out[o] = '\0';
}

void kps_printable(const char *in, char *out, size_t len)
{
	size_t i;

	if (!len)
		return;
	for (i = 0; in[i] && i + 1 < len; i++)
		out[i] = (unsigned char)in[i] < 0x20 ||
			 (unsigned char)in[i] >= 0x7f ? '?' : in[i];
	out[i] = '\0';
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
