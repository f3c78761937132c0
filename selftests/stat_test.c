// SPDX-License-Identifier: GPL-2.0-only
/*
 * kfdpool-stat against live pools: its figures (POOL_LIST and per-process
 * fdinfo, through --json, read with json-c) must equal
 * KFDPOOL_IOC_POOL_STATS, its text output must show them, an import fd
 * shared through fork must be one importer held by two processes, --watch
 * must be NDJSON, and without root it must show the caller's own pools and
 * say what it could not read.
 *
 * kfdpool-stat is found next to the selftests: <build>/bin/kfdpool-stat
 * (this program is <build>/selftests/stat_test), or at $KFDPOOL_STAT.
 * dma-bufs come from vgem (both Debian kernels have it).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#if __has_include(<drm/drm.h>)
#include <drm/drm.h>
#else
#include <libdrm/drm.h>
#endif

#include <json-c/json.h>
#include <linux/kfdpool.h>

#include "kselftest_harness.h"
#include "kfdpool_util.h"

#define KFD_DEV_PATH "/dev/kfdpool"

#define MIB (1024ull * 1024)

/* ---- helpers ---------------------------------------------------------- */

static int stat_open_vgem(void)
{
	char path[32], name[16];
	int i, fd;

	for (i = 0; i < 16; i++) {
		struct drm_version v = { .name = name, .name_len = sizeof(name) - 1 };

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(name, 0, sizeof(name));
		if (!ioctl(fd, DRM_IOCTL_VERSION, &v) && !strcmp(name, "vgem"))
			return fd;
		close(fd);
	}
	return -1;
}

/* A vgem dma-buf of @bytes (a multiple of 4 KiB). */
static int stat_vgem_dmabuf(int vgem, uint64_t bytes)
{
	struct drm_mode_create_dumb c = {
		.width = 1024, .bpp = 32, .height = (uint32_t)(bytes / 4096),
	};
	struct drm_prime_handle p = {};
	struct drm_gem_close gc = {};

	if (ioctl(vgem, DRM_IOCTL_MODE_CREATE_DUMB, &c))
		return -1;
	p.handle = c.handle;
	p.flags = DRM_CLOEXEC | DRM_RDWR;
	if (ioctl(vgem, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p))
		p.fd = -1;
	gc.handle = c.handle;
	ioctl(vgem, DRM_IOCTL_GEM_CLOSE, &gc);	/* the dma-buf keeps it */
	return p.fd;
}

static int stat_pool_create(int ctl, const char *name, uint64_t limit,
			    uint32_t types, char id_hex[33])
{
	struct kfdpool_pool_create c = { .limit = limit, .handle_types = types };
	int i;

	snprintf(c.name, sizeof(c.name), "%s", name);
	if (ioctl(ctl, KFDPOOL_IOC_POOL_CREATE, &c))
		return -1;
	for (i = 0; i < KFDPOOL_ID_LEN; i++)
		sprintf(id_hex + 2 * i, "%02x", c.id[i]);
	return c.fd;
}

/* Pin a fresh vgem dma-buf of @bytes in @pool; returns the entry id. */
static uint32_t stat_pin(int pool, int vgem, uint64_t bytes)
{
	struct kfdpool_pin p = {};
	int dfd = stat_vgem_dmabuf(vgem, bytes);

	if (dfd < 0)
		return 0;
	p.dmabuf_fd = dfd;
	if (ioctl(pool, KFDPOOL_IOC_PIN, &p))
		p.entry_id = 0;
	close(dfd);	/* the pool holds its own reference */
	return p.entry_id;
}

static int stat_export(int pool, uint32_t entry, uint64_t off, uint64_t size,
		       struct kfdpool_record *rec)
{
	struct kfdpool_export e = { .entry_id = entry, .offset = off, .size = size };

	if (ioctl(pool, KFDPOOL_IOC_EXPORT, &e))
		return -1;
	*rec = e.record;
	return 0;
}

static int stat_stats(int fd, struct kfdpool_pool_stats *st)
{
	memset(st, 0, sizeof(*st));
	return ioctl(fd, KFDPOOL_IOC_POOL_STATS, st);
}

/* Run kfdpool-stat with @args; its stdout in a malloc'd string. */
static char *stat_run(const char *args, int *status)
{
	char bin[PATH_MAX], cmd[PATH_MAX + 256];
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	FILE *f;

	kfd_stat_binary(bin, sizeof(bin));
	if (access(bin, X_OK))
		return NULL;
	snprintf(cmd, sizeof(cmd), "%s %s", bin, args);
	f = popen(cmd, "r");
	if (!f || !buf)
		return NULL;
	for (;;) {
		size_t r;

		if (cap - len < 4096) {
			buf = realloc(buf, cap *= 2);
			if (!buf)
				return NULL;
		}
		r = fread(buf + len, 1, cap - len - 1, f);
		if (!r)
			break;
		len += r;
	}
	buf[len] = '\0';
	*status = pclose(f);
	return buf;
}

/* kfdpool-file-id of @fd in /proc/self/fdinfo, -1 when absent. */
static long long stat_file_id(int fd)
{
	char path[64], line[256];
	long long id = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "kfdpool-file-id: %lld", &id) == 1)
			break;
	fclose(f);
	return id;
}

/* Parse kfdpool-stat's one-line JSON document; NULL if it is not one. */
static json_object *stat_doc(const char *text)
{
	const char *nl = strchr(text, '\n');

	/* NDJSON: exactly one line */
	if (!nl || nl[1])
		return NULL;
	return json_tokener_parse(text);
}

static json_object *jget(json_object *o, const char *key)
{
	json_object *v = NULL;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static uint64_t jnum(json_object *o, const char *key)
{
	json_object *v = jget(o, key);

	return v && json_object_is_type(v, json_type_int) ?
		json_object_get_uint64(v) : UINT64_MAX;
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v = jget(o, key);

	return v && json_object_is_type(v, json_type_string) ?
		json_object_get_string(v) : "";
}

/* The element of array @key of @o whose @field is @want. */
static json_object *jfind(json_object *o, const char *key, const char *field,
			  const char *want)
{
	json_object *a = jget(o, key);
	size_t i;

	for (i = 0; a && i < json_object_array_length(a); i++)
		if (!strcmp(jstr(json_object_array_get_idx(a, i), field), want))
			return json_object_array_get_idx(a, i);
	return NULL;
}

/* This process's entry for @fd in the document's fd list. */
static json_object *jfd(json_object *doc, int fd)
{
	json_object *a = jget(doc, "fds");
	size_t i;

	for (i = 0; a && i < json_object_array_length(a); i++) {
		json_object *e = json_object_array_get_idx(a, i);

		if (jnum(e, "pid") == (uint64_t)getpid() && jnum(e, "fd") == (uint64_t)fd)
			return e;
	}
	return NULL;
}

/* Run kfdpool-stat --json and parse it; NULL on any failure. */
static json_object *stat_json(void)
{
	json_object *doc;
	char *out;
	int status;

	out = stat_run("--json", &status);
	if (!out)
		return NULL;
	doc = status == 0 ? stat_doc(out) : NULL;
	if (!doc)
		printf("# not one JSON line:\n%s", out);
	free(out);
	return doc;
}

static void stat_print_stats(const char *what, const struct kfdpool_pool_stats *s)
{
	printf("# %s: reserved %llu (high %llu) used %llu (high %llu) draining %llu entries %u records %u import_fds %u imported %llu fd_imports %u fd_imported %llu\n",
	       what, (unsigned long long)s->reserved_bytes,
	       (unsigned long long)s->reserved_high, (unsigned long long)s->used_bytes,
	       (unsigned long long)s->used_high, (unsigned long long)s->draining_bytes,
	       s->entries, s->records, s->import_fds,
	       (unsigned long long)s->imported_bytes, s->fd_imports,
	       (unsigned long long)s->fd_imported_bytes);
}

/* ---- fixture: two pools, entries, records, an importer ---------------- */

FIXTURE(stat) {
	int ctl, vgem;
	int a, b, a_imp;	/* owner fds of pools A and B, an import fd of A */
	char a_id[33], b_id[33];
	uint32_t a_e1, a_e2, b_e1;
	struct kfdpool_record rec[3];
};

FIXTURE_SETUP(stat)
{
	struct kfdpool_pool_export pe = {};
	struct kfdpool_import im = {};
	char bin[PATH_MAX];

	self->ctl = self->vgem = self->a = self->b = self->a_imp = -1;
	kfd_stat_binary(bin, sizeof(bin));
	if (access(bin, X_OK))
		SKIP(return, "kfdpool-stat not built (make stat)");
	self->ctl = open("/dev/kfdpool", O_RDWR | O_CLOEXEC);
	if (self->ctl < 0)
		SKIP(return, "/dev/kfdpool: %s", strerror(errno));
	self->vgem = stat_open_vgem();
	if (self->vgem < 0)
		SKIP(return, "no vgem device");

	self->a = stat_pool_create(self->ctl, "stat-a", 64 * MIB,
				   KFDPOOL_HANDLE_TYPE_FD, self->a_id);
	ASSERT_LE(0, self->a);
	self->b = stat_pool_create(self->ctl, "", 0, KFDPOOL_HANDLE_TYPES_ALL,
				   self->b_id);
	ASSERT_LE(0, self->b);
	self->a_e1 = stat_pin(self->a, self->vgem, 1 * MIB);
	self->a_e2 = stat_pin(self->a, self->vgem, 2 * MIB);
	self->b_e1 = stat_pin(self->b, self->vgem, 4 * MIB);
	ASSERT_NE(0, self->a_e1);
	ASSERT_NE(0, self->a_e2);
	ASSERT_NE(0, self->b_e1);
	ASSERT_EQ(0, stat_export(self->a, self->a_e1, 0, 4096, &self->rec[0]));
	ASSERT_EQ(0, stat_export(self->a, self->a_e2, MIB, 512 * 1024, &self->rec[1]));
	ASSERT_EQ(0, stat_export(self->b, self->b_e1, 0, 3 * MIB, &self->rec[2]));

	ASSERT_EQ(0, ioctl(self->a, KFDPOOL_IOC_POOL_EXPORT, &pe));
	self->a_imp = pe.fd;
	im.record = self->rec[1];
	ASSERT_EQ(0, ioctl(self->a_imp, KFDPOOL_IOC_IMPORT, &im));
	close(im.fd);	/* the import stays counted on a_imp */
}

FIXTURE_TEARDOWN(stat)
{
	int *fds[] = { &self->a_imp, &self->a, &self->b, &self->vgem, &self->ctl };
	size_t i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0)
			close(*fds[i]);
}

/* Every pool figure kfdpool-stat shows equals the stats ioctl's. */
static void stat_check_pool(struct __test_metadata *_metadata, json_object *doc,
			    int fd, const char *id, const char *name)
{
	struct kfdpool_pool_stats st;
	json_object *p;

	ASSERT_EQ(0, stat_stats(fd, &st));
	stat_print_stats(name[0] ? name : "(unnamed)", &st);
	p = jfind(doc, "pools", "id", id);
	ASSERT_NE(NULL, p);
	EXPECT_STREQ(name, jstr(p, "name"));
	EXPECT_EQ(st.owner_pid, (int32_t)jnum(p, "owner_pid"));
	EXPECT_EQ(getuid(), jnum(p, "uid"));
	EXPECT_EQ(st.limit, jnum(p, "limit"));
	EXPECT_EQ(st.handle_types, jnum(p, "handle_types"));
	EXPECT_EQ(st.reserved_bytes, jnum(p, "reserved"));
	EXPECT_EQ(st.reserved_high, jnum(p, "reserved_high"));
	EXPECT_EQ(st.used_bytes, jnum(p, "used"));
	EXPECT_EQ(st.used_high, jnum(p, "used_high"));
	EXPECT_EQ(st.draining_bytes, jnum(p, "draining"));
	EXPECT_EQ(st.entries, jnum(p, "entries"));
	EXPECT_EQ(st.draining_entries, jnum(p, "draining_entries"));
	EXPECT_EQ(st.records, jnum(p, "records"));
	EXPECT_EQ(st.import_fds, jnum(p, "import_fds"));
	EXPECT_EQ(st.imported_bytes, jnum(p, "imported"));
}

/* The per-fd figures of (this process, @fd) equal the ioctl on that fd. */
static void stat_check_fd(struct __test_metadata *_metadata, json_object *doc,
			  int fd, const char *mode)
{
	struct kfdpool_pool_stats st;
	json_object *e;

	ASSERT_EQ(0, stat_stats(fd, &st));
	e = jfd(doc, fd);
	ASSERT_NE(NULL, e);
	EXPECT_STREQ(mode, jstr(e, "mode"));
	EXPECT_STREQ("stat_test", jstr(e, "comm"));
	EXPECT_EQ(st.fd_imports, jnum(e, "fd_imports"));
	EXPECT_EQ(st.fd_imported_bytes, jnum(e, "fd_imported"));
	EXPECT_EQ(st.reserved_bytes, jnum(e, "reserved"));
	EXPECT_EQ(st.used_bytes, jnum(e, "used"));
	EXPECT_EQ(st.draining_entries, jnum(e, "draining_entries"));
	EXPECT_EQ(st.handle_types, jnum(e, "handle_types"));
	EXPECT_EQ((uint64_t)stat_file_id(fd), jnum(e, "file_id"));
	EXPECT_EQ(1, jnum(e, "file_holders"));
}

TEST_F(stat, json_matches_stats_ioctl)
{
	struct kfdpool_pool_stats st;
	json_object *doc, *p, *f, *h;

	doc = stat_json();
	ASSERT_NE(NULL, doc);
	EXPECT_STREQ("ioctl", jstr(doc, "source"));
	EXPECT_STREQ("all", jstr(doc, "scope"));
	stat_check_pool(_metadata, doc, self->a, self->a_id, "stat-a");
	stat_check_pool(_metadata, doc, self->b, self->b_id, "");
	stat_check_fd(_metadata, doc, self->a, "owner");
	stat_check_fd(_metadata, doc, self->a_imp, "import");
	stat_check_fd(_metadata, doc, self->b, "owner");

	/* A's import file: its imported bytes, held by this process's fd. */
	ASSERT_EQ(0, stat_stats(self->a_imp, &st));
	EXPECT_EQ(2 * MIB, st.fd_imported_bytes);
	p = jfind(doc, "pools", "id", self->a_id);
	f = jfind(p, "files", "mode", "import");
	ASSERT_NE(NULL, f);
	EXPECT_EQ(stat_file_id(self->a_imp), (long long)jnum(f, "file_id"));
	EXPECT_EQ(1, jnum(f, "imports"));
	EXPECT_EQ(st.fd_imported_bytes, jnum(f, "imported"));
	ASSERT_EQ(1, json_object_array_length(jget(f, "holders")));
	h = json_object_array_get_idx(jget(f, "holders"), 0);
	EXPECT_EQ(getpid(), (pid_t)jnum(h, "pid"));
	EXPECT_EQ(self->a_imp, (int)jnum(h, "fd"));
	json_object_put(doc);
}

TEST_F(stat, figures_follow_changes)
{
	struct kfdpool_revoke rv = { .record = self->rec[0] };
	struct kfdpool_unpin un = { .entry_id = self->a_e2 };
	json_object *doc;

	/* revoke one record, unpin the imported entry: it drains */
	ASSERT_EQ(0, ioctl(self->a, KFDPOOL_IOC_REVOKE, &rv));
	ASSERT_EQ(0, ioctl(self->a, KFDPOOL_IOC_UNPIN, &un));
	EXPECT_EQ(1, un.draining);
	doc = stat_json();
	ASSERT_NE(NULL, doc);
	stat_check_pool(_metadata, doc, self->a, self->a_id, "stat-a");
	stat_check_fd(_metadata, doc, self->a_imp, "import");
	json_object_put(doc);

	/* the importer lets go: nothing drains any more */
	close(self->a_imp);
	self->a_imp = -1;
	doc = stat_json();
	ASSERT_NE(NULL, doc);
	stat_check_pool(_metadata, doc, self->a, self->a_id, "stat-a");
	EXPECT_EQ(NULL, jfind(jfind(doc, "pools", "id", self->a_id), "files", "mode", "import"));
	json_object_put(doc);
}

/*
 * A child forked while the import fd was open holds the same open file:
 * one importer (the kernel counts one import file), two holders.
 */
TEST_F(stat, fork_shares_one_import_file)
{
	json_object *doc, *p, *f, *files;
	int go[2], n_import = 0;
	char want[160], *txt;
	size_t i;
	pid_t pid;
	int st;

	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char c;

		close(go[1]);
		prctl(PR_SET_NAME, "stat_child");
		_exit(read(go[0], &c, 1) < 0);	/* holds a_imp until told */
	}
	close(go[0]);
	usleep(100000);		/* let it take its name */
	doc = stat_json();
	ASSERT_NE(NULL, doc);
	p = jfind(doc, "pools", "id", self->a_id);
	ASSERT_NE(NULL, p);
	EXPECT_EQ(1, jnum(p, "import_fds"));
	files = jget(p, "files");
	for (i = 0; files && i < json_object_array_length(files); i++) {
		f = json_object_array_get_idx(files, i);
		if (strcmp(jstr(f, "mode"), "import"))
			continue;
		n_import++;
		EXPECT_EQ(2, json_object_array_length(jget(f, "holders")));
	}
	EXPECT_EQ(1, n_import);
	/* each of the two fds says it shares its file */
	EXPECT_EQ(2, jnum(jfd(doc, self->a_imp), "file_holders"));
	json_object_put(doc);

	txt = stat_run("", &st);
	ASSERT_NE(NULL, txt);
	/* holders are listed by pid */
	if (getpid() < pid)
		snprintf(want, sizeof(want), "held by pid %d (stat_test) fd %d, pid %d (stat_child) fd %d (one open file",
			 getpid(), self->a_imp, pid, self->a_imp);
	else
		snprintf(want, sizeof(want), "held by pid %d (stat_child) fd %d, pid %d (stat_test) fd %d (one open file",
			 pid, self->a_imp, getpid(), self->a_imp);
	EXPECT_NE(NULL, strstr(txt, want)) TH_LOG("want '%s' in:\n%s", want, txt);
	free(txt);

	close(go[1]);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
}

TEST_F(stat, text_output)
{
	char want[128];
	char *txt;
	int status;

	txt = stat_run("", &status);
	ASSERT_NE(NULL, txt);
	ASSERT_EQ(0, status);
	snprintf(want, sizeof(want), "pool stat-a  id %s", self->a_id);
	EXPECT_NE(NULL, strstr(txt, want));
	/* 1 MiB + 2 MiB pinned, both with a record, 2 MiB imported */
	EXPECT_NE(NULL, strstr(txt, "reserved 3.00 MiB (high 3.00 MiB)  used 3.00 MiB (high 3.00 MiB)"));
	snprintf(want, sizeof(want), ": 1 entry, 2.00 MiB; held by pid %d (stat_test) fd %d\n",
		 getpid(), self->a_imp);
	EXPECT_NE(NULL, strstr(txt, want));
	snprintf(want, sizeof(want), "pool -  id %s", self->b_id);
	EXPECT_NE(NULL, strstr(txt, want));
	if (_metadata->exit_code)
		printf("%s", txt);
	free(txt);
}

/* --json --watch: NDJSON, one document per line, each on its own. */
TEST_F(stat, watch_is_ndjson)
{
	char bin[PATH_MAX], line[1 << 16];
	int pfd[2], st, n = 0;
	FILE *f;
	pid_t pid;

	kfd_stat_binary(bin, sizeof(bin));
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		dup2(pfd[1], 1);
		execl(bin, bin, "--json", "--watch", "0.1", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	ASSERT_NE(NULL, f);
	while (n < 3 && fgets(line, sizeof(line), f)) {
		json_object *doc = stat_doc(line);

		ASSERT_NE(NULL, doc) TH_LOG("line %d is not a JSON document: %.200s", n, line);
		EXPECT_NE(NULL, jfind(doc, "pools", "id", self->a_id));
		json_object_put(doc);
		n++;
	}
	EXPECT_EQ(3, n);
	/* SIGTERM ends the watch cleanly */
	kill(pid, SIGTERM);
	fclose(f);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) || WTERMSIG(st) == SIGPIPE);
	if (WIFEXITED(st))
		EXPECT_EQ(0, WEXITSTATUS(st));
}

TEST_F(stat, version)
{
	char *out;
	int status;

	out = stat_run("--version", &status);
	ASSERT_NE(NULL, out);
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, strncmp(out, "kfdpool-stat ", 13));
	EXPECT_NE(NULL, strstr(out, "(kfdpool ABI 2)"));
	free(out);
}

/* Without root: the caller's own pools, and notes about the rest. */
/*
 * As nobody, in a child that creates its own pool through the inherited
 * control fd: 0 when it saw what it should (@listed: through POOL_LIST,
 * else from its fds with a note on the device), else the step that failed.
 */
static int stat_as_nobody(FIXTURE_DATA(stat) *self, int listed)
{
	json_object *doc, *p;
	char id[33], *out;
	int pool, status;

	/* root's pools stay with root */
	close(self->a);
	close(self->b);
	close(self->a_imp);
	if (setgid(65534) || setuid(65534))
		return 10;
	/* setuid made us non-dumpable: /proc/self/fd would be root's */
	prctl(PR_SET_DUMPABLE, 1);
	pool = stat_pool_create(self->ctl, "nobody-pool", 0,
				KFDPOOL_HANDLE_TYPE_FD, id);
	if (pool < 0)
		return 11;
	out = stat_run("--json", &status);
	if (!out)
		return 12;
	printf("# as nobody (device %s):\n%s", listed ? "open to all" : "root's", out);
	doc = stat_doc(out);
	if (!doc)
		return 13;
	p = jfind(doc, "pools", "id", id);
	if (!p || strcmp(jstr(p, "name"), "nobody-pool"))
		return 14;
	if (listed) {
		/* POOL_LIST shows nobody its own pools, with their uid */
		if (strcmp(jstr(doc, "source"), "ioctl") ||
		    strcmp(jstr(doc, "scope"), "own") || jnum(p, "uid") != 65534)
			return 15;
	} else {
		/* no device: from its own fds, and it says why */
		if (strcmp(jstr(doc, "source"), "fdinfo") ||
		    !strstr(out, "cannot open /dev/kfdpool"))
			return 16;
	}
	if (!strstr(out, "not readable") || jnum(doc, "unreadable_processes") == 0)
		return 17;
	/* root's pool A is not visible to nobody */
	if (strstr(out, self->a_id))
		return 18;
	return 0;
}

/*
 * Without root: the caller's own pools, and notes about the rest; through
 * POOL_LIST when the device is open to the user (as the udev rule opens it
 * to group render), else from the user's fds.
 */
TEST_F(stat, unprivileged)
{
	struct stat sb;
	int listed, st;
	pid_t pid;

	if (getuid() != 0)
		SKIP(return, "needs root to drop to nobody");
	ASSERT_EQ(0, stat("/dev/kfdpool", &sb));
	for (listed = 0; listed < 2; listed++) {
		ASSERT_EQ(0, chmod("/dev/kfdpool", listed ? 0666 : 0600));
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0)
			_exit(stat_as_nobody(self, listed));
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		ASSERT_TRUE(WIFEXITED(st));
		EXPECT_EQ(0, WEXITSTATUS(st)) TH_LOG("device open to nobody: %d", listed);
	}
	chmod("/dev/kfdpool", sb.st_mode & 07777);
}

/*
 * A pool whose owner closed its fd while a child still holds an import fd
 * and an entry it imported: the pool ended, and kfdpool-stat shows it no
 * more (JSON and text), left-over import fd or not.
 */
TEST_F(stat, ended_pool_not_shown)
{
	struct kfdpool_pool_export pe = {};
	struct kfdpool_record rec;
	json_object *doc, *p;
	int pool, imp, ready[2], go[2], st;
	char id[33], *txt;
	uint32_t e;
	pid_t pid;

	pool = stat_pool_create(self->ctl, "stat-ended", 0,
				KFDPOOL_HANDLE_TYPE_FD, id);
	ASSERT_LE(0, pool);
	e = stat_pin(pool, self->vgem, 1 * MIB);
	ASSERT_NE(0, e);
	ASSERT_EQ(0, stat_export(pool, e, 0, 1 * MIB, &rec));
	ASSERT_EQ(0, ioctl(pool, KFDPOOL_IOC_POOL_EXPORT, &pe));
	imp = pe.fd;
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct kfdpool_import im = { .record = rec };
		char c = 1;

		close(go[1]);
		if (ioctl(imp, KFDPOOL_IOC_IMPORT, &im))
			_exit(2);
		close(pool);
		if (write(ready[1], &c, 1) != 1)
			_exit(3);
		_exit(read(go[0], &c, 1) < 0);
	}
	close(go[0]);
	close(ready[1]);
	{
		char c;

		ASSERT_EQ(1, read(ready[0], &c, 1));
	}
	doc = stat_json();
	ASSERT_NE(NULL, doc);
	p = jfind(doc, "pools", "id", id);
	ASSERT_NE(NULL, p);
	EXPECT_EQ(1 * MIB, jnum(p, "imported"));
	json_object_put(doc);

	/* the owner's fd goes: the pool ends, the child's import fd stays */
	close(imp);
	close(pool);
	doc = stat_json();
	ASSERT_NE(NULL, doc);
	EXPECT_EQ(NULL, jfind(doc, "pools", "id", id));
	json_object_put(doc);
	txt = stat_run("", &st);
	ASSERT_NE(NULL, txt);
	EXPECT_EQ(NULL, strstr(txt, "pool stat-ended")) TH_LOG("in:\n%s", txt);
	free(txt);

	close(go[1]);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	close(ready[0]);
}

/*
 * Run kfdpool-stat --destroy @id as @uid (0: as we are); its status, or 93
 * when @want is not in what it printed (stdout and stderr).
 */
static int stat_destroy_as(uid_t uid, const char *id, const char *want)
{
	char args[80], *out;
	int status = -1;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		if (uid && (setgid(uid) || setuid(uid)))
			_exit(90);
		snprintf(args, sizeof(args), "--destroy %s 2>&1", id);
		out = stat_run(args, &status);
		if (!out)
			_exit(91);
		printf("# %s", out);
		if (want && !strstr(out, want))
			_exit(93);
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 92);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * Set module parameter @name to @value: the value before (a static
 * buffer), or NULL.  Persistent pools are off unless enabled.
 */
static const char *stat_param(const char *name, const char *value)
{
	static char old[32];
	char path[128], val[32];
	FILE *f;

	/* @value may be the buffer of the call before. */
	snprintf(val, sizeof(val), "%s", value);
	snprintf(path, sizeof(path), "/sys/module/kfdpool/parameters/%s", name);
	f = fopen(path, "r+e");
	if (!f)
		return NULL;
	if (!fgets(old, sizeof(old), f) || fseek(f, 0, SEEK_SET) ||
	    fputs(val, f) < 0) {
		fclose(f);
		return NULL;
	}
	old[strcspn(old, "\n")] = 0;
	return fclose(f) ? NULL : old;
}

/*
 * As @uid, a persistent pool of its own, its id in @id_hex and nothing
 * holding it: 0, or -1.
 */
static int stat_persist_as(uid_t uid, char id_hex[33])
{
	struct kfdpool_pool_create c = {
		.flags = KFDPOOL_POOL_PERSIST,
		.handle_types = KFDPOOL_HANDLE_TYPE_FD,
	};
	int p[2], ctl, i, status;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(p[0]);
		snprintf(c.name, sizeof(c.name), "stat-own");
		if (setgid(uid) || setuid(uid))
			_exit(1);
		ctl = open("/dev/kfdpool", O_RDWR | O_CLOEXEC);
		if (ctl < 0 || ioctl(ctl, KFDPOOL_IOC_POOL_CREATE, &c))
			_exit(2);
		/* Its fds close with it: the pool stays, held by nothing. */
		_exit(write(p[1], c.id, sizeof(c.id)) == sizeof(c.id) ? 0 : 3);
	}
	close(p[1]);
	i = read(p[0], c.id, sizeof(c.id));
	close(p[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) || i != sizeof(c.id))
		return -1;
	for (i = 0; i < KFDPOOL_ID_LEN; i++)
		sprintf(id_hex + 2 * i, "%02x", c.id[i]);
	return 0;
}

/*
 * A persistent pool nobody holds is listed with its age and no owner fd,
 * says how it goes, and goes with --destroy as root (not as nobody, to
 * whom it is no pool of its own); nobody's own goes with nobody's
 * --destroy.
 */
TEST_F(stat, persistent_pool_shown_and_destroyed)
{
	struct kfdpool_pool_create c = {
		.flags = KFDPOOL_POOL_PERSIST,
		.handle_types = KFDPOOL_HANDLE_TYPE_FD,
	};
	struct kfdpool_record rec;
	struct stat sb;
	json_object *doc, *p;
	char id[33], own[33], want[128], *txt;
	const char *old;
	int i, st;
	uint32_t e;

	snprintf(c.name, sizeof(c.name), "stat-persist");
	old = stat_param("max_user_persistent", "4");
	ASSERT_NE(NULL, old);
	ASSERT_EQ(0, ioctl(self->ctl, KFDPOOL_IOC_POOL_CREATE, &c));
	stat_param("max_user_persistent", old);
	for (i = 0; i < KFDPOOL_ID_LEN; i++)
		sprintf(id + 2 * i, "%02x", c.id[i]);
	e = stat_pin(c.fd, self->vgem, 1 * MIB);
	ASSERT_NE(0, e);
	ASSERT_EQ(0, stat_export(c.fd, e, 0, 1 * MIB, &rec));
	close(c.fd);

	doc = stat_json();
	ASSERT_NE(NULL, doc);
	p = jfind(doc, "pools", "id", id);
	ASSERT_NE(NULL, p);
	EXPECT_TRUE(json_object_get_boolean(jget(p, "persistent")));
	EXPECT_EQ(0, jnum(p, "owner_fds"));
	EXPECT_GT(UINT64_MAX, jnum(p, "age_s"));
	EXPECT_EQ(1, jnum(p, "records"));
	EXPECT_EQ(1 * MIB, jnum(p, "reserved"));
	json_object_put(doc);
	txt = stat_run("", &st);
	ASSERT_NE(NULL, txt);
	snprintf(want, sizeof(want), "pool stat-persist  id %s", id);
	EXPECT_NE(NULL, strstr(txt, want)) TH_LOG("in:\n%s", txt);
	EXPECT_NE(NULL, strstr(txt, "  persistent: 0 owner fd(s), age ")) TH_LOG("in:\n%s", txt);
	EXPECT_NE(NULL, strstr(txt, "kfdpool-stat --destroy")) TH_LOG("in:\n%s", txt);
	free(txt);

	/*
	 * nobody may not destroy root's pool, but its own; root may, once;
	 * a bad id is a usage error.
	 */
	ASSERT_EQ(0, stat(KFD_DEV_PATH, &sb));
	ASSERT_EQ(0, chmod(KFD_DEV_PATH, 0666));
	EXPECT_EQ(1, stat_destroy_as(65534, id, "no pool of yours has this id"));
	old = stat_param("max_user_persistent", "4");
	ASSERT_NE(NULL, old);
	EXPECT_EQ(0, stat_persist_as(65534, own));
	stat_param("max_user_persistent", old);
	doc = stat_json();
	ASSERT_NE(NULL, doc);
	p = jfind(doc, "pools", "id", own);
	EXPECT_NE(NULL, p);
	if (p)
		EXPECT_EQ(0, jnum(p, "owner_fds"));
	json_object_put(doc);
	EXPECT_EQ(0, stat_destroy_as(65534, own, "destroyed"));
	EXPECT_EQ(1, stat_destroy_as(65534, own, "no pool of yours"));
	chmod(KFD_DEV_PATH, sb.st_mode & 07777);
	EXPECT_EQ(0, stat_destroy_as(0, id, NULL));
	EXPECT_EQ(1, stat_destroy_as(0, id, NULL));
	EXPECT_EQ(2, stat_destroy_as(0, "not-an-id", NULL));
	doc = stat_json();
	ASSERT_NE(NULL, doc);
	EXPECT_EQ(NULL, jfind(doc, "pools", "id", id));
	EXPECT_EQ(NULL, jfind(doc, "pools", "id", own));
	json_object_put(doc);
}

TEST_HARNESS_MAIN
