// SPDX-License-Identifier: MIT
/*
 * Native unit test of kfdpool-stat's fdinfo parser on sample text in
 * exactly the format the module writes (plus malformed and future cases),
 * of its pool model, its grouping of fds into open files and its JSON
 * document (json-c reads it back).  TAP out.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "stat.h"

static int n, failed;

static void check(int cond, const char *what)
{
	n++;
	if (!cond)
		failed++;
	printf("%sok %d %s\n", cond ? "" : "not ", n, what);
}

static const char owner_fdinfo[] =
	"pos:\t0\n"
	"flags:\t02000002\n"
	"mnt_id:\t15\n"
	"ino:\t1057\n"
	"kfdpool-id:\t00112233445566778899aabbccddeeff\n"
	"kfdpool-name:\tdemo-pool\n"
	"kfdpool-mode:\towner\n"
	"kfdpool-state:\tlive\n"
	"kfdpool-owner-pid:\t4242\n"
	"kfdpool-limit:\t1073741824\n"
	"kfdpool-handle-types:\t9\n"
	"kfdpool-reserved:\t8388608\n"
	"kfdpool-reserved-high:\t12582912\n"
	"kfdpool-used:\t4194304\n"
	"kfdpool-used-high:\t6291456\n"
	"kfdpool-draining:\t2097152\n"
	"kfdpool-entries:\t3\n"
	"kfdpool-draining-entries:\t1\n"
	"kfdpool-records:\t17\n"
	"kfdpool-import-fds:\t2\n"
	"kfdpool-imported:\t10485760\n"
	"kfdpool-fd-imported:\t0\n"
	"kfdpool-fd-imports:\t0\n"
	"kfdpool-file-id:\t41\n"
	"kfdpool-persistent:\t1\n";

static const char import_fdinfo_future[] =
	"pos:\t0\n"
	"kfdpool-id:\tffeeddccbbaa99887766554433221100\n"
	"kfdpool-name:\t\n"
	"kfdpool-mode:\timport\n"
	"kfdpool-some-new-key:\twhatever 12\n"
	"kfdpool-fd-imports:\t2\n"
	"kfdpool-fd-imported:\t0x600000\n"
	"unrelated-driver-key:\t7\n";

/* The field @key of JSON object @o, or NULL. */
static json_object *field(json_object *o, const char *key)
{
	json_object *v = NULL;

	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static int is_utf8(const char *s)
{
	size_t len = 3 * strlen(s) + 1;	/* room for every byte replaced */
	char *buf = malloc(len);
	int ok;

	if (!buf)
		return 0;
	kps_utf8_clean(s, buf, len);
	ok = !strcmp(buf, s);
	free(buf);
	return ok;
}

/* Holders: pid 100 fd 4 (owner), pids 200 and 201 fd 7 (one import file,
 * forked), pid 200 fd 9 (another import file of the same pool). */
static void json_checks(void)
{
	static const char id[] = "00112233445566778899aabbccddeeff";
	struct kps_holder h[4];
	struct kps_pool pool[2];
	struct kfdpool_pool_info info;
	struct kps_snapshot s;
	struct kps_opts o = { .device = "/dev/kfdpool" };
	json_object *doc, *pools, *p, *files, *f, *fds;
	char *line;
	size_t i;

	memset(&s, 0, sizeof(s));
	memset(h, 0, sizeof(h));
	memset(&info, 0, sizeof(info));
	for (i = 0; i < 16; i++)
		info.id[i] = (unsigned char)(i * 0x11);
	memcpy(info.name, "demo", 5);
	info.owner_pid = 100;
	info.uid = 1000;
	info.reserved_bytes = 8388608;
	info.imported_bytes = 4194304;
	info.import_fds = 2;
	kps_pool_from_info(&info, &pool[0]);
	check(!strcmp(pool[0].id, id) && !strcmp(pool[0].name, "demo") &&
	      pool[0].uid_known && pool[0].uid == 1000 &&
	      pool[0].reserved == 8388608 && pool[0].import_fds == 2,
	      "pool from POOL_LIST's info");
	info.id[0] = 0xee;
	kps_pool_from_info(&info, &pool[1]);
	s.pools = pool;
	s.npools = 2;
	s.source = KPS_SOURCE_IOCTL;
	s.scope = KFDPOOL_POOL_LIST_ALL;

	h[0].pid = 100; h[0].fd = 4; strcpy(h[0].comm, "exporter");
	h[0].fi.mode = KFDPOOL_MODE_OWNER; h[0].fi.file_id = 40;
	h[1].pid = 200; h[1].fd = 7; strcpy(h[1].comm, "imp\xc3\xa4\xc3");	/* cut UTF-8 */
	h[1].fi.mode = KFDPOOL_MODE_IMPORT; h[1].fi.file_id = 41;
	h[1].fi.fd_imports = 1; h[1].fi.fd_imported = 2097152;
	h[2] = h[1];
	h[2].pid = 201; strcpy(h[2].comm, "child\t\x01\"q\\");
	h[3] = h[1];
	h[3].fd = 9; h[3].fi.file_id = 42;
	for (i = 0; i < 4; i++)
		memcpy(h[i].fi.id, id, sizeof(h[i].fi.id));
	s.holders = h;
	s.nholders = 4;
	check(kps_group_files(&s) == 0 && s.nfiles == 3, "4 fds are 3 open files");
	check(s.files[1].nholders == 2 && h[1].file == h[2].file && h[3].file != h[1].file,
	      "the forked child's fd is the parent's open file");
	snprintf(s.notes[0], sizeof(s.notes[0]), "bad \xff byte");
	s.nnotes = 1;

	line = kps_json(&s, &o, 1234);
	check(line && strchr(line, '\n') == line + strlen(line) - 1,
	      "one document, one line (NDJSON)");
	check(line && is_utf8(line), "the document is valid UTF-8");
	doc = line ? json_tokener_parse(line) : NULL;
	check(doc != NULL, "json-c parses it back");
	if (!doc) {
		free(line);
		return;
	}
	check(json_object_get_int(field(doc, "version")) == 3 &&
	      !strcmp(json_object_get_string(field(doc, "source")), "ioctl") &&
	      !strcmp(json_object_get_string(field(doc, "scope")), "all"),
	      "version, source, scope");
	pools = field(doc, "pools");
	p = json_object_array_get_idx(pools, 0);
	check(json_object_array_length(pools) == 2 &&
	      !strcmp(json_object_get_string(field(p, "id")), id) &&
	      json_object_get_uint64(field(p, "reserved")) == 8388608 &&
	      json_object_get_uint64(field(p, "uid")) == 1000,
	      "pool figures");
	files = field(p, "files");
	check(json_object_array_length(files) == 3, "three open files in the pool");
	f = json_object_array_get_idx(files, 1);
	check(json_object_get_uint64(field(f, "file_id")) == 41 &&
	      !strcmp(json_object_get_string(field(f, "mode")), "import") &&
	      json_object_array_length(field(f, "holders")) == 2 &&
	      json_object_get_uint64(field(f, "imported")) == 2097152,
	      "the shared import file: counted once, two holders");
	check(!strcmp(json_object_get_string(field(json_object_array_get_idx(
			field(f, "holders"), 0), "comm")), "imp\xc3\xa4\xef\xbf\xbd"),
	      "a comm cut inside a UTF-8 sequence ends in U+FFFD");
	check(!strcmp(json_object_get_string(field(json_object_array_get_idx(
			field(f, "holders"), 1), "comm")), "child\t\x01\"q\\"),
	      "control characters, quote and backslash round-trip");
	fds = field(doc, "fds");
	check(json_object_array_length(fds) == 4 &&
	      json_object_get_uint64(field(json_object_array_get_idx(fds, 2),
					   "file_holders")) == 2,
	      "per-fd list: each fd says how many fds share its file");
	check(!strcmp(json_object_get_string(json_object_array_get_idx(
			field(doc, "notes"), 0)), "bad \xef\xbf\xbd byte"),
	      "notes made valid UTF-8");
	json_object_put(doc);
	free(line);

	/* An fd without a file id (older module) stands alone. */
	for (i = 0; i < s.nfiles; i++)
		free(s.files[i].holders);
	free(s.files);
	h[2].fi.file_id = h[1].fi.file_id = 0;
	check(kps_group_files(&s) == 0 && s.nfiles == 4,
	      "without file ids every fd is its own file");
	for (i = 0; i < s.nfiles; i++)
		free(s.files[i].holders);
	free(s.files);
}

/* The number after "NAME{LABELS} " on its own line of @text, or -1. */
static double sample(const char *text, const char *series)
{
	const char *p = text;
	size_t len = strlen(series);

	while ((p = strstr(p, series))) {
		if ((p == text || p[-1] == '\n') && p[len] == ' ') {
			if (!strncmp(p + len + 1, "+Inf\n", 5))
				return 1e300;
			return strtod(p + len + 1, NULL);
		}
		p += len;
	}
	return -1;
}

/*
 * Three pools of two users (one persistent, one with an importer and a
 * name that needs escaping): per-pool samples, per-user and global sums,
 * limits, "no limit" as +Inf, HELP and TYPE once per family.  argv[1], when
 * given, gets the text (tools/stat/test/prom-lint hands it to promtool).
 */
static void prom_checks(const char *save)
{
	static const char a[] = "{id=\"00112233445566778899aabbccddeeff\",name=\"we\\\"ird\\\\\",uid=\"0\",persistent=\"true\"}";
	static const char c[] = "{id=\"cc112233445566778899aabbccddeeff\",name=\"\",uid=\"1000\",persistent=\"false\"}";
	struct kps_limits l = { .known = 1, .default_pool_limit = 0, .max_entries = 65536,
				.max_records = 1048576, .max_user_records = 1000,
				.max_user_persistent = 4, .max_user_persistent_bytes = 0 };
	struct kfdpool_pool_info info;
	struct kps_pool pool[3];
	struct kps_snapshot s;
	char *text;
	FILE *f;
	int i;

	memset(&s, 0, sizeof(s));
	memset(&info, 0, sizeof(info));
	for (i = 0; i < 16; i++)
		info.id[i] = (unsigned char)(i * 0x11);
	memcpy(info.name, "we\"ird\\", 7);
	info.uid = 0;
	info.flags = KFDPOOL_POOL_PERSIST;
	info.reserved_bytes = 4194304;
	info.reserved_high = 6291456;
	info.used_bytes = 1048576;
	info.entries = 2;
	info.records = 3;
	info.age_ns = 90500000000ull;
	kps_pool_from_info(&info, &pool[0]);
	memset(&info, 0, sizeof(info));
	info.id[0] = 0xbb;
	memcpy(info.name, "plain", 6);
	info.limit = 8388608;
	info.reserved_bytes = 2097152;
	info.records = 1;
	info.owner_fds = 1;
	kps_pool_from_info(&info, &pool[1]);
	memset(&info, 0, sizeof(info));
	for (i = 0; i < 16; i++)
		info.id[i] = (unsigned char)(i * 0x11);
	info.id[0] = 0xcc;
	info.uid = 1000;
	info.reserved_bytes = 1048576;
	info.draining_bytes = 524288;
	info.draining_entries = 1;
	info.import_fds = 1;
	info.imported_bytes = 524288;
	info.records = 5;
	info.owner_fds = 2;
	kps_pool_from_info(&info, &pool[2]);
	s.pools = pool;
	s.npools = 3;
	s.source = KPS_SOURCE_IOCTL;
	s.scope = KFDPOOL_POOL_LIST_ALL;

	text = kps_prometheus(&s, &l);
	check(text != NULL, "prometheus: text made");
	if (!text)
		return;
	if (save && (f = fopen(save, "w"))) {
		fputs(text, f);
		fclose(f);
	}
	for (const char *ln = text; *ln; ln = strchr(ln, '\n') + 1)
		printf("# %.*s\n", (int)(strchr(ln, '\n') - ln), ln);
	check(sample(text, "kfdpool_pool_reserved_bytes") < 0 &&
	      sample(text, "kfdpool_pool_reserved_bytes{") < 0,
	      "prometheus: pool samples carry their labels");
	check(sample(text, "kfdpool_pool_reserved_high_bytes") < 0 && strstr(text,
	      "kfdpool_pool_reserved_high_bytes{id=\"00112233445566778899aabbccddeeff\",name=\"we\\\"ird\\\\\",uid=\"0\",persistent=\"true\"} 6291456\n"),
	      "prometheus: a quote and a backslash in a name are escaped");
	{
		char series[256];

		snprintf(series, sizeof(series), "kfdpool_pool_reserved_bytes%s", a);
		check(sample(text, series) == 4194304, "prometheus: reserved bytes");
		snprintf(series, sizeof(series), "kfdpool_pool_age_seconds%s", a);
		check(sample(text, series) == 90, "prometheus: age in whole seconds");
		snprintf(series, sizeof(series), "kfdpool_pool_limit_bytes%s", a);
		check(sample(text, series) == 1e300, "prometheus: a pool without a limit: +Inf");
		snprintf(series, sizeof(series), "kfdpool_pool_draining_bytes%s", c);
		check(sample(text, series) == 524288, "prometheus: draining bytes");
		snprintf(series, sizeof(series), "kfdpool_pool_imported_bytes%s", c);
		check(sample(text, series) == 524288, "prometheus: imported bytes");
		snprintf(series, sizeof(series), "kfdpool_pool_import_fds%s", c);
		check(sample(text, series) == 1, "prometheus: importer fds");
		snprintf(series, sizeof(series), "kfdpool_pool_owner_fds%s", c);
		check(sample(text, series) == 2, "prometheus: owner fds");
	}
	check(strstr(text, "kfdpool_pool_limit_bytes{id=\"bb000000000000000000000000000000\",name=\"plain\",uid=\"0\",persistent=\"false\"} 8388608\n") != NULL,
	      "prometheus: a pool's limit");
	check(sample(text, "kfdpool_user_pinned_bytes{uid=\"0\"}") == 6291456 &&
	      sample(text, "kfdpool_user_pinned_bytes{uid=\"1000\"}") == 1048576,
	      "prometheus: pinned bytes per user: the sum of their pools' reserved");
	check(sample(text, "kfdpool_user_records{uid=\"0\"}") == 4 &&
	      sample(text, "kfdpool_user_records{uid=\"1000\"}") == 5 &&
	      sample(text, "kfdpool_user_pools{uid=\"0\"}") == 2,
	      "prometheus: records and pools per user");
	check(sample(text, "kfdpool_user_persistent_pools{uid=\"0\"}") == 1 &&
	      sample(text, "kfdpool_user_persistent_bytes{uid=\"0\"}") == 4194304 &&
	      sample(text, "kfdpool_user_persistent_pools{uid=\"1000\"}") == 0,
	      "prometheus: persistent pools and bytes per user");
	check(sample(text, "kfdpool_pinned_bytes") == 7340032 &&
	      sample(text, "kfdpool_records") == 9 && sample(text, "kfdpool_pools") == 3 &&
	      sample(text, "kfdpool_stat_sees_all_pools") == 1,
	      "prometheus: global sums, and that they cover every pool");
	check(sample(text, "kfdpool_pool_max_bytes") == 1e300 &&
	      sample(text, "kfdpool_user_max_persistent_bytes") == 1e300 &&
	      sample(text, "kfdpool_user_max_records") == 1000 &&
	      sample(text, "kfdpool_user_max_persistent_pools") == 4 &&
	      sample(text, "kfdpool_pool_max_entries") == 65536 &&
	      sample(text, "kfdpool_pool_max_records") == 1048576,
	      "prometheus: the module's limits, 0 for none as +Inf");
	check(!strstr(text, "user_limit") && !strstr(text, "global_limit"),
	      "prometheus: no user_limit or global_limit");
	{
		const char *p = text;
		int help = 0, type = 0;

		while ((p = strstr(p, "# HELP kfdpool_user_records ")))
			help++, p++;
		p = text;
		while ((p = strstr(p, "# TYPE kfdpool_user_records gauge\n")))
			type++, p++;
		check(help == 1 && type == 1, "prometheus: one HELP and one TYPE line a family");
	}
	free(text);

	/* Only the caller's pools (not root), no limits known, no pools. */
	s.scope = KFDPOOL_POOL_LIST_OWN;
	s.npools = 0;
	l.known = 0;
	text = kps_prometheus(&s, &l);
	check(text && sample(text, "kfdpool_stat_sees_all_pools") == 0 &&
	      sample(text, "kfdpool_pools") == 0 && !strstr(text, "kfdpool_pool_") &&
	      !strstr(text, "kfdpool_user_"),
	      "prometheus: a user's view without pools: no empty families");
	free(text);
	s.source = KPS_SOURCE_FDINFO;
	check(kps_prometheus(&s, &l) == NULL, "prometheus: pools seen only through fds: no metrics");
}

static void text_checks(void)
{
	char buf[64];

	kps_utf8_clean("plain", buf, sizeof(buf));
	check(!strcmp(buf, "plain"), "ASCII unchanged");
	kps_utf8_clean("\xe2\x82\xac \xf0\x9f\x98\x80", buf, sizeof(buf));
	check(!strcmp(buf, "\xe2\x82\xac \xf0\x9f\x98\x80"), "3- and 4-byte UTF-8 kept");
	kps_utf8_clean("\xc0\xaf\xed\xa0\x80\xf5", buf, sizeof(buf));
	check(!strcmp(buf, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"),
	      "overlong, surrogate and out-of-range bytes replaced one by one");
	kps_utf8_clean("\xe2\x82\xac\xe2\x82\xac", buf, 5);
	check(!strcmp(buf, "\xe2\x82\xac"), "truncation never splits a sequence");
	check(!strcmp(kps_age(59999999999ull, buf), "59s") &&
	      !strcmp(kps_age(725000000000ull, buf), "12m05s") &&
	      !strcmp(kps_age(11040000000000ull, buf), "3h04m") &&
	      !strcmp(kps_age(190800000000000ull, buf), "2d05h"),
	      "ages: seconds, minutes, hours, days");
	{
		uint8_t id[KFDPOOL_ID_LEN];

		kps_id_bytes("00112233445566778899aabbccddeeff", id);
		check(id[0] == 0 && id[1] == 0x11 && id[15] == 0xff,
		      "an id's hex digits as its bytes");
	}
	kps_printable("a\033[2Jb\xc3\xa4", buf, sizeof(buf));
	check(!strcmp(buf, "a?[2Jb??"), "escape sequences and non-ASCII not sent to a terminal");
}

int main(int argc, char **argv)
{
	struct kps_pool pool;
	struct kps_fdinfo fi;
	char buf[KPS_SIZE_LEN];
	int r;

	printf("TAP version 13\n");

	r = kps_parse_fdinfo(owner_fdinfo, &fi);
	check(r == 1, "owner fdinfo is a pool fd");
	check(!strcmp(fi.id, "00112233445566778899aabbccddeeff"), "id");
	check(!strcmp(fi.name, "demo-pool"), "name");
	check(fi.mode == KFDPOOL_MODE_OWNER, "mode owner");
	check(fi.owner_pid == 4242 && fi.limit == 1073741824 && fi.handle_types == 9,
	      "owner pid, limit, handle types");
	check(fi.reserved == 8388608 && fi.reserved_high == 12582912 &&
	      fi.used == 4194304 && fi.used_high == 6291456 && fi.draining == 2097152,
	      "reserved/used current and high, draining");
	check(fi.entries == 3 && fi.draining_entries == 1 && fi.records == 17 &&
	      fi.import_fds == 2 && fi.imported == 10485760, "counts and imported");
	check(fi.seen == (1u << 21) - 1, "all 21 keys seen");
	check(fi.persistent == 1, "a persistent pool");
	kps_pool_from_fdinfo(&fi, &pool);
	check(pool.persistent && !pool.list_known, "persistent from fdinfo, no age there");
	check(!fi.ended, "a live pool");
	check(kps_parse_fdinfo("kfdpool-id:\t00112233445566778899aabbccddeeff\n"
			       "kfdpool-state:\tended\n", &fi) == 1 && fi.ended,
	      "an ended pool's left-over fd");
	check(kps_parse_fdinfo("kfdpool-id:\t00112233445566778899aabbccddeeff\n"
			       "kfdpool-state:\tzombie\n", &fi) == -1,
	      "an unknown state is malformed");

	r = kps_parse_fdinfo(import_fdinfo_future, &fi);
	check(r == 1 && fi.mode == KFDPOOL_MODE_IMPORT, "import fdinfo with unknown keys");
	kps_pool_from_fdinfo(&fi, &pool);
	check(pool.entries == 0, "pool from fdinfo");
	check(fi.name[0] == '\0' && fi.fd_imports == 2 && fi.fd_imported == 0x600000,
	      "empty name, per-fd figures, hex value");
	check(!(fi.seen & KPS_F_RESERVED), "missing keys stay unseen");

	check(kps_parse_fdinfo("pos:\t0\nflags:\t02\nmnt_id:\t9\n", &fi) == 0,
	      "a non-pool fdinfo is not a pool fd");
	check(kps_parse_fdinfo("kfdpool-id:\t0011\n", &fi) == -1, "short id is malformed");
	check(kps_parse_fdinfo("kfdpool-id:\t00112233445566778899AABBCCDDEEFF\n", &fi) == -1,
	      "uppercase id is malformed");
	check(kps_parse_fdinfo("kfdpool-id:\t00112233445566778899aabbccddeeff\n"
			       "kfdpool-used:\t12abc\n", &fi) == -1 && (fi.seen & KPS_F_ID),
	      "bad number reported, id kept");
	check(kps_parse_fdinfo("kfdpool-id:\t00112233445566778899aabbccddeeff\n"
			       "kfdpool-mode:\tsideways\n", &fi) == -1, "bad mode reported");
	check(kps_parse_fdinfo("kfdpool-id:\t00112233445566778899aabbccddeeff\n"
			       "kfdpool-entries:\t4294967296\n", &fi) == -1,
	      "u32 overflow reported");
	check(kps_parse_fdinfo("kfdpool-id:\t00112233445566778899aabbccddeeff\n"
			       "kfdpool-used:\t-1\n", &fi) == -1, "negative size reported");

	r = kps_parse_fdinfo(owner_fdinfo, &fi);
	check(r == 1 && fi.file_id == 41 && (fi.seen & KPS_F_FILE_ID), "file id");

	json_checks();
	text_checks();
	prom_checks(argc > 1 ? argv[1] : NULL);

	check(!strcmp(kps_size(0, buf), "0 B"), "size 0");
	check(!strcmp(kps_size(1023, buf), "1023 B"), "size 1023");
	check(!strcmp(kps_size(1536, buf), "1.50 KiB"), "size 1.5 KiB");
	check(!strcmp(kps_size(150ull << 20, buf), "150 MiB"), "size 150 MiB");
	check(!strcmp(kps_size(UINT64_MAX, buf), "16.0 EiB"), "size max");

	printf("1..%d\n# %d passed, %d failed\n", n, n - failed, failed);
	return failed ? 1 : 0;
}
