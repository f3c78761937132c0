// SPDX-License-Identifier: MIT
/*
 * kfdpool-stat: the snapshot in Prometheus's text exposition format
 * (version 0.0.4), for node_exporter's textfile collector.
 *
 * Every metric is a gauge in base units (bytes, seconds), each family
 * written whole after its HELP and TYPE lines, families without a sample
 * left out, no timestamps (the collector refuses them).  What a user or
 * all pools hold is summed here from POOL_LIST: the module's QUERY gives
 * only the limits.  The table below is what the man page lists
 * (tools/man-check reads the names from this file).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stat.h"

/* "0 for none" limits are +Inf: a ratio against them reads as 0. */
#define KPS_UNLIMITED	UINT64_MAX

enum kps_scope_kind { GLOBAL, LIMIT, USER, POOL };

struct kps_metric {
	const char *name;
	enum kps_scope_kind kind;
	const char *help;
};

/* The per-user and global sums, over the pools listed. */
struct kps_user {
	uint32_t uid;
	uint64_t pools, pinned, records, persistent, persistent_bytes;
};

/* Sums are over the pools listed: every pool as root, else the caller's. */
static const struct kps_metric metrics[] = {
	{ "kfdpool_stat_sees_all_pools", GLOBAL,
	  "1 when the figures cover every pool (kfdpool-stat ran as root), 0 when only the pools of the user it ran as" },
	{ "kfdpool_pools", GLOBAL, "Pools listed: every pool as root, else the caller's own" },
	{ "kfdpool_pinned_bytes", GLOBAL,
	  "Bytes of the entries of the pools listed (draining ones included; a dma-buf in two pools counts twice)" },
	{ "kfdpool_records", GLOBAL, "Live export records of the pools listed" },
	{ "kfdpool_pool_max_bytes", LIMIT,
	  "Module parameter default_pool_limit: the limit of a pool created without one and the most a pool may ask for (+Inf: none)" },
	{ "kfdpool_pool_max_entries", LIMIT, "Module parameter max_entries: entries one pool may hold" },
	{ "kfdpool_pool_max_records", LIMIT, "Live export records one pool may hold" },
	{ "kfdpool_user_max_records", LIMIT,
	  "Module parameter max_user_records: live export records the pools of one user may hold (+Inf: no limit)" },
	{ "kfdpool_user_max_persistent_pools", LIMIT,
	  "Module parameter max_user_persistent: persistent pools one user may keep (0: persistence is off)" },
	{ "kfdpool_user_max_persistent_bytes", LIMIT,
	  "Module parameter max_user_persistent_bytes: bytes of entries the persistent pools of one user may hold (+Inf: no limit)" },
	{ "kfdpool_user_pools", USER, "Pools of the user among those listed" },
	{ "kfdpool_user_pinned_bytes", USER,
	  "Bytes of the entries of the user's pools listed (draining ones included; a dma-buf in two pools counts twice)" },
	{ "kfdpool_user_records", USER,
	  "Live export records of the user's pools listed; limit: kfdpool_user_max_records" },
	{ "kfdpool_user_persistent_pools", USER,
	  "Persistent pools of the user listed; limit: kfdpool_user_max_persistent_pools" },
	{ "kfdpool_user_persistent_bytes", USER,
	  "Bytes of the entries of the user's persistent pools listed; limit: kfdpool_user_max_persistent_bytes" },
	{ "kfdpool_pool_limit_bytes", POOL, "Bytes the pool may pin (+Inf: no limit)" },
	{ "kfdpool_pool_reserved_bytes", POOL,
	  "Bytes of the pool's entries (pinned dma-bufs), draining ones included" },
	{ "kfdpool_pool_reserved_high_bytes", POOL, "High-water mark of kfdpool_pool_reserved_bytes" },
	{ "kfdpool_pool_used_bytes", POOL, "Bytes of the pool's entries that have live export records" },
	{ "kfdpool_pool_used_high_bytes", POOL, "High-water mark of kfdpool_pool_used_bytes" },
	{ "kfdpool_pool_draining_bytes", POOL,
	  "Bytes of unpinned entries that importers keep alive" },
	{ "kfdpool_pool_imported_bytes", POOL, "Bytes imported, over all the pool's import files" },
	{ "kfdpool_pool_entries", POOL, "Entries (pinned dma-bufs) of the pool, draining ones included" },
	{ "kfdpool_pool_draining_entries", POOL, "Entries unpinned but kept alive by importers" },
	{ "kfdpool_pool_records", POOL, "Live export records of the pool" },
	{ "kfdpool_pool_import_fds", POOL, "Import files of the pool open (an importer each)" },
	{ "kfdpool_pool_owner_fds", POOL,
	  "Owner files of the pool open (0 for a persistent pool nobody holds)" },
	{ "kfdpool_pool_age_seconds", POOL, "Seconds since the pool was created" },
};

/* HELP text: a backslash and a newline are escaped. */
static void put_help(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

/* A label value: a backslash, a double quote and a newline are escaped. */
static void put_label(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '"')
			fputs("\\\"", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static void put_value(FILE *f, uint64_t v)
{
	if (v == KPS_UNLIMITED)
		fputs(" +Inf\n", f);
	else
		fprintf(f, " %" PRIu64 "\n", v);
}

static uint64_t or_unlimited(uint64_t v)
{
	return v ? v : KPS_UNLIMITED;
}

static uint64_t pool_value(const struct kps_pool *p, const char *name)
{
	const char *n = name + strlen("kfdpool_pool_");

	if (!strcmp(n, "limit_bytes"))
		return or_unlimited(p->limit);
	if (!strcmp(n, "reserved_bytes"))
		return p->reserved;
	if (!strcmp(n, "reserved_high_bytes"))
		return p->reserved_high;
	if (!strcmp(n, "used_bytes"))
		return p->used;
	if (!strcmp(n, "used_high_bytes"))
		return p->used_high;
	if (!strcmp(n, "draining_bytes"))
		return p->draining;
	if (!strcmp(n, "imported_bytes"))
		return p->imported;
	if (!strcmp(n, "entries"))
		return p->entries;
	if (!strcmp(n, "draining_entries"))
		return p->draining_entries;
	if (!strcmp(n, "records"))
		return p->records;
	if (!strcmp(n, "import_fds"))
		return p->import_fds;
	if (!strcmp(n, "owner_fds"))
		return p->owner_fds;
	/* age_seconds: whole seconds, as the JSON's age_s */
	return p->age_ns / 1000000000u;
}

static uint64_t user_value(const struct kps_user *u, const char *name)
{
	const char *n = name + strlen("kfdpool_user_");

	if (!strcmp(n, "pools"))
		return u->pools;
	if (!strcmp(n, "pinned_bytes"))
		return u->pinned;
	if (!strcmp(n, "records"))
		return u->records;
	if (!strcmp(n, "persistent_pools"))
		return u->persistent;
	return u->persistent_bytes;
}

static uint64_t limit_value(const struct kps_limits *l, const char *name)
{
	if (!strcmp(name, "kfdpool_pool_max_bytes"))
		return or_unlimited(l->default_pool_limit);
	if (!strcmp(name, "kfdpool_pool_max_entries"))
		return l->max_entries;
	if (!strcmp(name, "kfdpool_pool_max_records"))
		return l->max_records;
	if (!strcmp(name, "kfdpool_user_max_records"))
		return or_unlimited(l->max_user_records);
	if (!strcmp(name, "kfdpool_user_max_persistent_pools"))
		return l->max_user_persistent;
	return or_unlimited(l->max_user_persistent_bytes);
}

static int by_uid(const void *a, const void *b)
{
	const struct kps_user *x = a, *y = b;

	return x->uid < y->uid ? -1 : x->uid > y->uid;
}

/* Per-user sums of the pools listed, sorted by uid; NULL when none. */
static struct kps_user *users_of(const struct kps_snapshot *s, size_t *n)
{
	struct kps_user *u = calloc(s->npools ? s->npools : 1, sizeof(*u));
	size_t i, j;

	*n = 0;
	if (!u)
		return NULL;
	for (i = 0; i < s->npools; i++) {
		const struct kps_pool *p = &s->pools[i];

		for (j = 0; j < *n && u[j].uid != p->uid; j++)
			;
		if (j == *n)
			u[(*n)++].uid = p->uid;
		u[j].pools++;
		u[j].pinned += p->reserved;
		u[j].records += p->records;
		if (p->persistent) {
			u[j].persistent++;
			u[j].persistent_bytes += p->reserved;
		}
	}
	qsort(u, *n, sizeof(*u), by_uid);
	return u;
}

static void put_pool_labels(FILE *f, const struct kps_pool *p)
{
	char name[KFDPOOL_NAME_LEN + 1];

	/* Pool names are printable ASCII; anything else is shown as '?'. */
	kps_printable(p->name, name, sizeof(name));
	fprintf(f, "{id=\"%s\",name=\"", p->id);
	put_label(f, name);
	fprintf(f, "\",uid=\"%" PRIu32 "\",persistent=\"%s\"}", p->uid,
		p->persistent ? "true" : "false");
}

char *kps_prometheus(const struct kps_snapshot *s, const struct kps_limits *l)
{
	uint64_t pinned = 0, records = 0;
	struct kps_user *users;
	size_t i, k, nusers;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	/* Only pools the module listed: their uid is known. */
	if (s->source != KPS_SOURCE_IOCTL)
		return NULL;
	users = users_of(s, &nusers);
	if (!users)
		return NULL;
	f = open_memstream(&buf, &len);
	if (!f) {
		free(users);
		return NULL;
	}
	for (i = 0; i < s->npools; i++) {
		pinned += s->pools[i].reserved;
		records += s->pools[i].records;
	}
	for (k = 0; k < sizeof(metrics) / sizeof(metrics[0]); k++) {
		const struct kps_metric *m = &metrics[k];
		size_t samples = m->kind == POOL ? s->npools :
				 m->kind == USER ? nusers :
				 m->kind == LIMIT ? (l && l->known) : 1;

		if (!samples)
			continue;
		fprintf(f, "# HELP %s ", m->name);
		put_help(f, m->help);
		fprintf(f, "\n# TYPE %s gauge\n", m->name);
		switch (m->kind) {
		case GLOBAL:
			fputs(m->name, f);
			put_value(f, !strcmp(m->name, "kfdpool_stat_sees_all_pools") ?
				  s->scope == KFDPOOL_POOL_LIST_ALL :
				  !strcmp(m->name, "kfdpool_pools") ? s->npools :
				  !strcmp(m->name, "kfdpool_pinned_bytes") ? pinned : records);
			break;
		case LIMIT:
			fputs(m->name, f);
			put_value(f, limit_value(l, m->name));
			break;
		case USER:
			for (i = 0; i < nusers; i++) {
				fprintf(f, "%s{uid=\"%" PRIu32 "\"}", m->name, users[i].uid);
				put_value(f, user_value(&users[i], m->name));
			}
			break;
		case POOL:
			for (i = 0; i < s->npools; i++) {
				fputs(m->name, f);
				put_pool_labels(f, &s->pools[i]);
				put_value(f, pool_value(&s->pools[i], m->name));
			}
			break;
		}
	}
	free(users);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}
