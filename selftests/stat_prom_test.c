// SPDX-License-Identifier: GPL-2.0-only
/*
 * kfdpool-stat --prometheus against live pools of two users, one of them
 * persistent and one with an importer: every pool's samples must equal its
 * KFDPOOL_IOC_POOL_STATS, the per-user and global sums the pools' own
 * figures, the limits QUERY's (at the module's defaults and at others);
 * root sees every pool, a user their own; --output replaces its file
 * whole.  When $KFDPOOL_OUT is set (tools/vm/run --out), the output with
 * all of them present is left there as kfdpool.prom, for promtool on the
 * host (make stat-prom-check).
 *
 * kfdpool-stat is <build>/bin/kfdpool-stat (this program is
 * <build>/selftests/stat_prom_test), or $KFDPOOL_STAT.
 */
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>

#include "kselftest_harness.h"
#include "kfdpool_util.h"
#include "kfdpool_state.h"
#include "kfdpool_persist_util.h"

#define MIB		(1024ull * 1024)
#define PREFIX		"prom-"
#define NOBODY		65534
#define INF		UINT64_MAX	/* a "+Inf" sample */

/*
 * Run kfdpool-stat @args as @uid (0: as this process is); its stdout in a
 * malloc'd string (NULL if it could not run), *@status its wait status.
 */
static char *prom_run(uid_t uid, const char *args, int *status)
{
	char bin[PATH_MAX], cmd[PATH_MAX + 256];
	size_t len = 0, cap = 1 << 16;
	char *buf;
	int p[2];
	ssize_t r;
	pid_t pid;

	kfd_stat_binary(bin, sizeof(bin));
	if (access(bin, X_OK) || pipe(p))
		return NULL;
	snprintf(cmd, sizeof(cmd), "exec %s %s", bin, args);
	pid = fork();
	if (pid < 0)
		return NULL;
	if (!pid) {
		if (uid && (setgid(uid) || setuid(uid)))
			_exit(125);
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(126);
	}
	close(p[1]);
	buf = malloc(cap);
	while (buf) {
		if (cap - len < 4096) {
			char *nb = realloc(buf, cap *= 2);

			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
		}
		r = read(p[0], buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(p[0]);
	waitpid(pid, status, 0);
	if (buf)
		buf[len] = '\0';
	return buf;
}

/*
 * The value of the sample "@series VALUE" (a line of its own) of @text:
 * 1 and *@v when there is exactly one, INF for +Inf; 0 when none, -1 when
 * more than one or not a number.
 */
static int prom_value(const char *text, const char *series, uint64_t *v)
{
	size_t len = strlen(series);
	const char *p = text;
	int found = 0;
	char *end;

	while ((p = strstr(p, series))) {
		if ((p == text || p[-1] == '\n') && p[len] == ' ') {
			if (found++)
				return -1;
			if (!strncmp(p + len + 1, "+Inf\n", 5)) {
				*v = INF;
			} else {
				errno = 0;
				*v = strtoull(p + len + 1, &end, 10);
				if (errno || *end != '\n')
					return -1;
			}
		}
		p += len;
	}
	return found;
}

/* The sample's value, or a value no figure has when it is not there once. */
static uint64_t prom_get(const char *text, const char *series)
{
	uint64_t v;

	return prom_value(text, series, &v) == 1 ? v : INF - 1;
}

/* @metric with a pool's labels, as kfdpool-stat writes them. */
static const char *pool_series(char *buf, size_t len, const char *metric,
			       const __u8 id[KFDPOOL_ID_LEN], const char *label_name,
			       uid_t uid, bool persistent)
{
	char hex[2 * KFDPOOL_ID_LEN + 1];

	kfd_hex(id, KFDPOOL_ID_LEN, hex);
	snprintf(buf, len, "%s{id=\"%s\",name=\"%s\",uid=\"%u\",persistent=\"%s\"}",
		 metric, hex, label_name, (unsigned int)uid,
		 persistent ? "true" : "false");
	return buf;
}

static const char *user_series(char *buf, size_t len, const char *metric, uid_t uid)
{
	snprintf(buf, len, "%s{uid=\"%u\"}", metric, (unsigned int)uid);
	return buf;
}

/* Every limit kfdpool-stat shows equals QUERY's (0 for none: +Inf). */
static void check_limits(struct __test_metadata *_metadata, const char *text)
{
	struct kfdpool_query q;

	ASSERT_EQ(0, kfd_query(&q));
	EXPECT_EQ(q.default_pool_limit ? q.default_pool_limit : INF,
		  prom_get(text, "kfdpool_pool_max_bytes"));
	EXPECT_EQ(q.max_entries, prom_get(text, "kfdpool_pool_max_entries"));
	EXPECT_EQ(q.max_records, prom_get(text, "kfdpool_pool_max_records"));
	EXPECT_EQ(q.max_user_records ? q.max_user_records : INF,
		  prom_get(text, "kfdpool_user_max_records"));
	EXPECT_EQ(q.max_user_persistent, prom_get(text, "kfdpool_user_max_persistent_pools"));
	EXPECT_EQ(q.max_user_persistent_bytes ? q.max_user_persistent_bytes : INF,
		  prom_get(text, "kfdpool_user_max_persistent_bytes"));
	EXPECT_EQ(NULL, strstr(text, "user_limit"));
	EXPECT_EQ(NULL, strstr(text, "global_limit"));
}

/*
 * Root's pool A (a name that needs escaping, a limit, two entries, two
 * records, an importer holding an entry it unpinned: draining), root's
 * persistent pool P, and nobody's pool U, made and held by a child.
 */
FIXTURE(prom) {
	int ctl, baseline;
	int a, p, imp, buf[3];
	__u8 a_id[KFDPOOL_ID_LEN], p_id[KFDPOOL_ID_LEN], u_id[KFDPOOL_ID_LEN];
	struct kfdpool_pool_stats u_st;
	pid_t child;
	int go;		/* the child holds U until this closes */
};

FIXTURE_SETUP(prom)
{
	struct kfdpool_record rec[2];
	struct kfdpool_import im;
	int fromchild[2], tochild[2], e1, e2, e;
	char bin[PATH_MAX];

	self->ctl = self->a = self->p = self->imp = self->go = -1;
	self->buf[0] = self->buf[1] = self->buf[2] = -1;
	self->child = -1;
	self->baseline = kfd_dmabuf_count_now();
	kfd_state_restore();
	kfd_stat_binary(bin, sizeof(bin));
	if (access(bin, X_OK))
		SKIP(return, "kfdpool-stat not built (make stat)");
	if (getuid())
		SKIP(return, "needs root: pools of two users");
	self->ctl = kfd_open();
	if (self->ctl < 0)
		SKIP(return, "/dev/kfdpool: %s", strerror(-self->ctl));
	kfd_persist_sweep(PREFIX);
	/* open to nobody, as the udev rule opens it to group render */
	ASSERT_EQ(0, chmod(KFD_DEV, 0666));
	self->buf[0] = kfd_dmabuf_new(2 * MIB);
	self->buf[1] = kfd_dmabuf_new(1 * MIB);
	self->buf[2] = kfd_dmabuf_new(1 * MIB);
	ASSERT_LE(0, self->buf[0]);
	ASSERT_LE(0, self->buf[1]);
	ASSERT_LE(0, self->buf[2]);

	self->a = kfd_pool_create(self->ctl, 64 * MIB, PREFIX "a\"b\\c",
				  KFDPOOL_HANDLE_TYPE_FD, self->a_id);
	ASSERT_LE(0, self->a);
	e1 = kfd_pin(self->a, self->buf[0], 0);
	e2 = kfd_pin(self->a, self->buf[1], 0);
	ASSERT_LT(0, e1);
	ASSERT_LT(0, e2);
	ASSERT_EQ(0, kfd_export(self->a, e1, 0, MIB, &rec[0]));
	ASSERT_EQ(0, kfd_export(self->a, e2, 4096, 8192, &rec[1]));
	self->imp = kfd_pool_export(self->a);
	ASSERT_LE(0, self->imp);
	ASSERT_EQ(0, kfd_import(self->imp, &rec[1], 0, &im));
	close(im.fd);
	ASSERT_EQ(0, kfd_unpin(self->a, e2, NULL));

	/* Persistence is for the operator to enable (max_user_persistent). */
	ASSERT_EQ(0, kfd_param_set("max_user_persistent", 4));
	self->p = kfd_pool_create_flags(self->ctl, 0, KFDPOOL_POOL_PERSIST,
					PREFIX "persist", KFDPOOL_HANDLE_TYPE_FD,
					self->p_id);
	ASSERT_LE(0, self->p);
	e = kfd_pin(self->p, self->buf[2], 0);
	ASSERT_LT(0, e);
	ASSERT_EQ(0, kfd_export(self->p, e, 0, 4096, &rec[0]));

	/* nobody's pool, through root's control fd: the pool is nobody's */
	ASSERT_EQ(0, pipe(fromchild));
	ASSERT_EQ(0, pipe(tochild));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		struct kfdpool_pool_stats st = {};
		struct kfdpool_record r;
		char c;
		int u, ue;

		close(fromchild[0]);
		close(tochild[1]);
		if (setgid(NOBODY) || setuid(NOBODY))
			_exit(1);
		u = kfd_pool_create(self->ctl, 0, "", KFDPOOL_HANDLE_TYPE_FD, NULL);
		ue = u < 0 ? -1 : kfd_pin(u, self->buf[0], 0);
		if (ue <= 0 || kfd_export(u, ue, 0, 4096, &r) ||
		    kfd_export(u, ue, 8192, 4096, &r) || kfd_stats(u, &st))
			_exit(1);
		if (write(fromchild[1], &st, sizeof(st)) != sizeof(st))
			_exit(1);
		while (read(tochild[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(fromchild[1]);
	close(tochild[0]);
	self->go = tochild[1];
	ASSERT_EQ(sizeof(self->u_st), read(fromchild[0], &self->u_st, sizeof(self->u_st)));
	close(fromchild[0]);
	memcpy(self->u_id, self->u_st.id, KFDPOOL_ID_LEN);
}

FIXTURE_TEARDOWN(prom)
{
	int i;

	if (self->go >= 0)
		close(self->go);
	if (self->child > 0)
		waitpid(self->child, NULL, 0);
	if (self->imp >= 0)
		close(self->imp);
	if (self->a >= 0)
		close(self->a);
	if (self->p >= 0)
		close(self->p);
	kfd_persist_sweep(PREFIX);
	for (i = 0; i < 3; i++)
		if (self->buf[i] >= 0)
			close(self->buf[i]);
	if (self->ctl >= 0)
		close(self->ctl);
	kfd_state_restore();
	if (self->baseline >= 0)
		EXPECT_EQ(self->baseline, kfd_dmabuf_count(self->baseline));
}

/* Every sample of one pool equals its POOL_STATS. */
static void check_pool(struct __test_metadata *_metadata, const char *text,
		       const struct kfdpool_pool_stats *st, const char *label_name,
		       uid_t uid, bool persistent, uint64_t owner_fds)
{
	char s[512];
	const __u8 *id = st->id;

	printf("# pool %s: reserved %llu used %llu draining %llu imported %llu entries %u records %u import_fds %u\n",
	       label_name, (unsigned long long)st->reserved_bytes,
	       (unsigned long long)st->used_bytes, (unsigned long long)st->draining_bytes,
	       (unsigned long long)st->imported_bytes, st->entries, st->records,
	       st->import_fds);
#define POOL(metric) pool_series(s, sizeof(s), metric, id, label_name, uid, persistent)
	EXPECT_EQ(st->limit ? st->limit : INF, prom_get(text, POOL("kfdpool_pool_limit_bytes")));
	EXPECT_EQ(st->reserved_bytes, prom_get(text, POOL("kfdpool_pool_reserved_bytes")));
	EXPECT_EQ(st->reserved_high, prom_get(text, POOL("kfdpool_pool_reserved_high_bytes")));
	EXPECT_EQ(st->used_bytes, prom_get(text, POOL("kfdpool_pool_used_bytes")));
	EXPECT_EQ(st->used_high, prom_get(text, POOL("kfdpool_pool_used_high_bytes")));
	EXPECT_EQ(st->draining_bytes, prom_get(text, POOL("kfdpool_pool_draining_bytes")));
	EXPECT_EQ(st->imported_bytes, prom_get(text, POOL("kfdpool_pool_imported_bytes")));
	EXPECT_EQ(st->entries, prom_get(text, POOL("kfdpool_pool_entries")));
	EXPECT_EQ(st->draining_entries, prom_get(text, POOL("kfdpool_pool_draining_entries")));
	EXPECT_EQ(st->records, prom_get(text, POOL("kfdpool_pool_records")));
	EXPECT_EQ(st->import_fds, prom_get(text, POOL("kfdpool_pool_import_fds")));
	EXPECT_EQ(owner_fds, prom_get(text, POOL("kfdpool_pool_owner_fds")));
	/* made a moment ago */
	EXPECT_GE(60, prom_get(text, POOL("kfdpool_pool_age_seconds")));
#undef POOL
}

/* As root: each pool, each user's sums, the global sums, the limits. */
TEST_F(prom, root_sees_every_pool_as_its_stats)
{
	struct kfdpool_pool_stats a, p, *u = &self->u_st;
	char s[256], path[PATH_MAX], *text;
	int status;
	FILE *f;

	ASSERT_EQ(0, kfd_stats(self->a, &a));
	ASSERT_EQ(0, kfd_stats(self->p, &p));
	/* what the fixture made: an importer, draining, records */
	ASSERT_EQ(1, a.import_fds);
	ASSERT_EQ(MIB, a.imported_bytes);
	ASSERT_EQ(MIB, a.draining_bytes);
	text = prom_run(0, "--prometheus", &status);
	ASSERT_NE(NULL, text);
	ASSERT_EQ(0, status);
	if (getenv("KFDPOOL_OUT")) {
		snprintf(path, sizeof(path), "%s/kfdpool.prom", getenv("KFDPOOL_OUT"));
		f = fopen(path, "we");
		ASSERT_NE(NULL, f);
		fputs(text, f);
		ASSERT_EQ(0, fclose(f));
	}
	/* A's name, prom-a"b\c, escaped as a label value */
	check_pool(_metadata, text, &a, PREFIX "a\\\"b\\\\c", 0, false, 1);
	check_pool(_metadata, text, &p, PREFIX "persist", 0, true, 1);
	check_pool(_metadata, text, u, "", NOBODY, false, 1);

	EXPECT_EQ(1, prom_get(text, "kfdpool_stat_sees_all_pools"));
	EXPECT_EQ(3, prom_get(text, "kfdpool_pools"));
	EXPECT_EQ(a.reserved_bytes + p.reserved_bytes + u->reserved_bytes,
		  prom_get(text, "kfdpool_pinned_bytes"));
	EXPECT_EQ(a.records + p.records + u->records, prom_get(text, "kfdpool_records"));
#define USER(metric, uid) user_series(s, sizeof(s), metric, uid)
	EXPECT_EQ(2, prom_get(text, USER("kfdpool_user_pools", 0)));
	EXPECT_EQ(a.reserved_bytes + p.reserved_bytes,
		  prom_get(text, USER("kfdpool_user_pinned_bytes", 0)));
	EXPECT_EQ(a.records + p.records, prom_get(text, USER("kfdpool_user_records", 0)));
	EXPECT_EQ(1, prom_get(text, USER("kfdpool_user_persistent_pools", 0)));
	EXPECT_EQ(p.reserved_bytes, prom_get(text, USER("kfdpool_user_persistent_bytes", 0)));
	EXPECT_EQ(1, prom_get(text, USER("kfdpool_user_pools", NOBODY)));
	EXPECT_EQ(u->reserved_bytes, prom_get(text, USER("kfdpool_user_pinned_bytes", NOBODY)));
	EXPECT_EQ(2, u->records);
	EXPECT_EQ(u->records, prom_get(text, USER("kfdpool_user_records", NOBODY)));
	EXPECT_EQ(0, prom_get(text, USER("kfdpool_user_persistent_pools", NOBODY)));
	EXPECT_EQ(0, prom_get(text, USER("kfdpool_user_persistent_bytes", NOBODY)));
#undef USER
	check_limits(_metadata, text);
	EXPECT_EQ(4, prom_get(text, "kfdpool_user_max_persistent_pools"));
	free(text);
}

/* As nobody: their own pool and sums, nothing of root's, and said so. */
TEST_F(prom, a_user_sees_their_own)
{
	char s[512], *text;
	int status;

	text = prom_run(NOBODY, "--prometheus", &status);
	ASSERT_NE(NULL, text);
	ASSERT_EQ(0, status);
	EXPECT_EQ(0, prom_get(text, "kfdpool_stat_sees_all_pools"));
	EXPECT_EQ(1, prom_get(text, "kfdpool_pools"));
	check_pool(_metadata, text, &self->u_st, "", NOBODY, false, 1);
	EXPECT_EQ(self->u_st.reserved_bytes, prom_get(text, "kfdpool_pinned_bytes"));
	EXPECT_EQ(self->u_st.reserved_bytes,
		  prom_get(text, user_series(s, sizeof(s), "kfdpool_user_pinned_bytes", NOBODY)));
	EXPECT_EQ(NULL, strstr(text, "uid=\"0\""));
	check_limits(_metadata, text);
	free(text);
}

/*
 * --output with --watch: the file is replaced whole each time (a reader
 * never sees a part of a snapshot), is readable by others, and no
 * temporary file stays when the watch ends.
 */
TEST_F(prom, output_replaced_whole)
{
	char dir[] = "/tmp/prom-XXXXXX", file[64], path[320], bin[PATH_MAX];
	struct stat sb;
	int i, whole = 0, status;
	struct dirent *de;
	pid_t pid;
	DIR *d;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/kfdpool.prom", dir);
	kfd_stat_binary(bin, sizeof(bin));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		execl(bin, bin, "--prometheus", "--watch", "0.05", "--output", file,
		      (char *)NULL);
		_exit(126);
	}
	for (i = 0; whole < 100 && i < 10000; i++) {
		char text[16384];
		ssize_t n;
		int fd = open(file, O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			usleep(10000);
			continue;
		}
		n = read(fd, text, sizeof(text) - 1);
		close(fd);
		ASSERT_LT(0, n);
		text[n] = '\0';
		/* first family first, the last family's samples last */
		ASSERT_EQ(0, strncmp(text, "# HELP kfdpool_stat_sees_all_pools ", 35));
		ASSERT_NE(NULL, strstr(text, "\nkfdpool_pool_age_seconds{"));
		ASSERT_EQ('\n', text[n - 1]);
		whole++;
		usleep(2000);
	}
	EXPECT_EQ(100, whole);
	kill(pid, SIGTERM);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, stat(file, &sb));
	EXPECT_EQ(0644, sb.st_mode & 0777);
	d = opendir(dir);
	ASSERT_NE(NULL, d);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		EXPECT_STREQ("kfdpool.prom", de->d_name);
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/*
 * The limits are QUERY's, at the module's defaults (as loaded) and at
 * other values; none of them is the removed user_limit or global_limit.
 */
TEST(limits_follow_the_module)
{
	char *text;
	int status;

	kfd_state_restore();
	if (access(KFD_PARAMS "max_user_records", W_OK))
		SKIP(return, "needs root and the module's parameters");
	text = prom_run(0, "--prometheus", &status);
	ASSERT_NE(NULL, text);
	ASSERT_EQ(0, status);
	check_limits(_metadata, text);
	free(text);

	ASSERT_EQ(0, kfd_param_set("max_user_records", 1000));
	ASSERT_EQ(0, kfd_param_set("default_pool_limit", 8 * MIB));
	ASSERT_EQ(0, kfd_param_set("max_entries", 77));
	ASSERT_EQ(0, kfd_param_set("max_user_persistent", 3));
	ASSERT_EQ(0, kfd_param_set("max_user_persistent_bytes", 16 * MIB));
	text = prom_run(0, "--prometheus", &status);
	ASSERT_NE(NULL, text);
	ASSERT_EQ(0, status);
	check_limits(_metadata, text);
	EXPECT_EQ(1000, prom_get(text, "kfdpool_user_max_records"));
	EXPECT_EQ(8 * MIB, prom_get(text, "kfdpool_pool_max_bytes"));
	EXPECT_EQ(77, prom_get(text, "kfdpool_pool_max_entries"));
	EXPECT_EQ(3, prom_get(text, "kfdpool_user_max_persistent_pools"));
	EXPECT_EQ(16 * MIB, prom_get(text, "kfdpool_user_max_persistent_bytes"));
	free(text);
	kfd_state_restore();
}

TEST_HARNESS_MAIN
