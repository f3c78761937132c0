// SPDX-License-Identifier: GPL-2.0-only
/*
 * kfdpool-stat against live pools: its figures (debugfs listing and
 * per-process fdinfo, through --json) must equal KFDPOOL_IOC_POOL_STATS,
 * its text output must show them, and without root it must show the
 * caller's own pools and say what it could not read.
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
#include <sys/prctl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#if __has_include(<drm/drm.h>)
#include <drm/drm.h>
#else
#include <libdrm/drm.h>
#endif

#include <linux/kfdpool.h>

#include "kselftest_harness.h"

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

static void stat_binary(char *out, size_t len)
{
	char self[PATH_MAX];
	ssize_t n;

	if (getenv("KFDPOOL_STAT")) {
		snprintf(out, len, "%s", getenv("KFDPOOL_STAT"));
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	snprintf(out, len, "%s/../bin/kfdpool-stat", dirname(self));
}

/* Run kfdpool-stat with @args; its stdout in a malloc'd string. */
static char *stat_run(const char *args, int *status)
{
	char bin[PATH_MAX], cmd[PATH_MAX + 256];
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	FILE *f;

	stat_binary(bin, sizeof(bin));
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

/* The line of @json that starts with @prefix (a pool or fd object). */
static const char *stat_line(const char *json, const char *prefix, char *line,
			     size_t len)
{
	const char *p = strstr(json, prefix);
	size_t n;

	if (!p)
		return NULL;
	n = strcspn(p, "\n");
	if (n >= len)
		n = len - 1;
	memcpy(line, p, n);
	line[n] = '\0';
	return line;
}

/* The number after "key": in @line; UINT64_MAX if absent. */
static uint64_t stat_num(const char *line, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	p = strstr(line, pat);
	if (!p)
		return UINT64_MAX;
	return strtoull(p + strlen(pat), NULL, 10);
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
	stat_binary(bin, sizeof(bin));
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
static void stat_check_pool(struct __test_metadata *_metadata, const char *json,
			    int fd, const char *id, const char *name)
{
	struct kfdpool_pool_stats st;
	char prefix[80], line[4096];

	ASSERT_EQ(0, stat_stats(fd, &st));
	stat_print_stats(name[0] ? name : "(unnamed)", &st);
	snprintf(prefix, sizeof(prefix), "{\"id\": \"%s\", \"name\": \"%s\"", id, name);
	ASSERT_NE(NULL, stat_line(json, prefix, line, sizeof(line)));
	EXPECT_EQ(st.owner_pid, (int32_t)stat_num(line, "owner_pid"));
	EXPECT_EQ(getuid(), stat_num(line, "uid"));
	EXPECT_EQ(st.limit, stat_num(line, "limit"));
	EXPECT_EQ(st.reserved_bytes, stat_num(line, "reserved"));
	EXPECT_EQ(st.reserved_high, stat_num(line, "reserved_high"));
	EXPECT_EQ(st.used_bytes, stat_num(line, "used"));
	EXPECT_EQ(st.used_high, stat_num(line, "used_high"));
	EXPECT_EQ(st.draining_bytes, stat_num(line, "draining"));
	EXPECT_EQ(st.entries, stat_num(line, "entries"));
	EXPECT_EQ(st.records, stat_num(line, "records"));
	EXPECT_EQ(st.import_fds, stat_num(line, "import_fds"));
	EXPECT_EQ(st.imported_bytes, stat_num(line, "imported"));
}

/* The per-fd figures of (this process, @fd) equal the ioctl on that fd. */
static void stat_check_fd(struct __test_metadata *_metadata, const char *json,
			  int fd, const char *mode)
{
	struct kfdpool_pool_stats st;
	char prefix[64], line[4096], modekey[32];

	ASSERT_EQ(0, stat_stats(fd, &st));
	snprintf(prefix, sizeof(prefix), "{\"pid\": %d, \"comm\": ", getpid());
	/* this process's objects; find the one for @fd */
	{
		const char *p = json;
		char want[32];

		snprintf(want, sizeof(want), "\"fd\": %d, \"mode\"", fd);
		for (;;) {
			p = strstr(p, prefix);
			ASSERT_NE(NULL, p);
			ASSERT_NE(NULL, stat_line(p, prefix, line, sizeof(line)));
			if (strstr(line, want))
				break;
			p++;
		}
	}
	snprintf(modekey, sizeof(modekey), "\"mode\": \"%s\"", mode);
	EXPECT_NE(NULL, strstr(line, modekey));
	EXPECT_EQ(st.fd_imports, stat_num(line, "fd_imports"));
	EXPECT_EQ(st.fd_imported_bytes, stat_num(line, "fd_imported"));
	EXPECT_EQ(st.reserved_bytes, stat_num(line, "reserved"));
	EXPECT_EQ(st.used_bytes, stat_num(line, "used"));
	EXPECT_EQ(st.draining_entries, stat_num(line, "draining_entries"));
	EXPECT_EQ(st.handle_types, stat_num(line, "handle_types"));
}

TEST_F(stat, json_matches_stats_ioctl)
{
	struct kfdpool_pool_stats st;
	char imp[96];
	char *json;
	int status;

	json = stat_run("--json", &status);
	ASSERT_NE(NULL, json);
	ASSERT_EQ(0, status);
	EXPECT_NE(NULL, strstr(json, "\"pools_source\": \"debugfs\""));
	stat_check_pool(_metadata, json, self->a, self->a_id, "stat-a");
	stat_check_pool(_metadata, json, self->b, self->b_id, "");
	stat_check_fd(_metadata, json, self->a, "owner");
	stat_check_fd(_metadata, json, self->a_imp, "import");
	stat_check_fd(_metadata, json, self->b, "owner");

	/* A's importer is listed with its imported bytes. */
	ASSERT_EQ(0, stat_stats(self->a_imp, &st));
	EXPECT_EQ(2 * MIB, st.fd_imported_bytes);
	snprintf(imp, sizeof(imp), "{\"pid\": %d, \"fd\": %d, \"imports\": 1, \"imported\": %llu}",
		 getpid(), self->a_imp, (unsigned long long)st.fd_imported_bytes);
	EXPECT_NE(NULL, strstr(json, imp));
	free(json);
}

TEST_F(stat, figures_follow_changes)
{
	struct kfdpool_revoke rv = { .record = self->rec[0] };
	struct kfdpool_unpin un = { .entry_id = self->a_e2 };
	char *json;
	int status;

	/* revoke one record, unpin the imported entry: it drains */
	ASSERT_EQ(0, ioctl(self->a, KFDPOOL_IOC_REVOKE, &rv));
	ASSERT_EQ(0, ioctl(self->a, KFDPOOL_IOC_UNPIN, &un));
	EXPECT_EQ(1, un.draining);
	json = stat_run("--json", &status);
	ASSERT_NE(NULL, json);
	stat_check_pool(_metadata, json, self->a, self->a_id, "stat-a");
	stat_check_fd(_metadata, json, self->a_imp, "import");
	free(json);

	/* the importer lets go: nothing drains any more */
	close(self->a_imp);
	self->a_imp = -1;
	json = stat_run("--json", &status);
	ASSERT_NE(NULL, json);
	stat_check_pool(_metadata, json, self->a, self->a_id, "stat-a");
	free(json);
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
	/* 1 MiB + 2 MiB pinned, 4 KiB + 512 KiB exported, 2 MiB imported */
	EXPECT_NE(NULL, strstr(txt, "reserved 3.00 MiB (high 3.00 MiB)  used 516 KiB (high 516 KiB)"));
	snprintf(want, sizeof(want), "importer pid %d (stat_test) fd %d: 1 entry, 2.00 MiB",
		 getpid(), self->a_imp);
	EXPECT_NE(NULL, strstr(txt, want));
	snprintf(want, sizeof(want), "pool -  id %s", self->b_id);
	EXPECT_NE(NULL, strstr(txt, want));
	if (_metadata->exit_code)
		printf("%s", txt);
	free(txt);
}

TEST_F(stat, watch_repeats)
{
	char bin[PATH_MAX], buf[8192];
	size_t len = 0;
	int pfd[2], st, n = 0;
	const char *p;
	ssize_t r;
	pid_t pid;

	stat_binary(bin, sizeof(bin));
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		dup2(pfd[1], 1);
		execl(bin, bin, "--json", "--watch", "0.1", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	/* read until the second snapshot has begun, however long it takes */
	while (n < 2 && len < sizeof(buf) - 1) {
		r = read(pfd[0], buf + len, sizeof(buf) - 1 - len);
		if (r <= 0)
			break;
		len += (size_t)r;
		buf[len] = '\0';
		for (n = 0, p = buf; (p = strstr(p, "{\"version\": 1")); p++)
			n++;
		if (len > sizeof(buf) / 2) {	/* keep the tail only */
			memmove(buf, buf + len / 2, len - len / 2 + 1);
			len -= len / 2;
		}
	}
	EXPECT_LE(2, n);
	/* SIGTERM ends the watch cleanly */
	kill(pid, SIGTERM);
	close(pfd[0]);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) || WTERMSIG(st) == SIGPIPE);
	if (WIFEXITED(st))
		EXPECT_EQ(0, WEXITSTATUS(st));
}

/* Without root: the caller's own pools, and notes about the rest. */
TEST_F(stat, unprivileged)
{
	char *out;
	pid_t pid;
	int st;

	if (getuid() != 0)
		SKIP(return, "needs root to drop to nobody");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char id[33], want[128];
		int pool, status;

		/* root's pools stay with root */
		close(self->a);
		close(self->b);
		close(self->a_imp);
		if (setgid(65534) || setuid(65534))
			_exit(10);
		/* setuid made us non-dumpable: /proc/self/fd would be root's */
		prctl(PR_SET_DUMPABLE, 1);
		pool = stat_pool_create(self->ctl, "nobody-pool", 0,
					KFDPOOL_HANDLE_TYPE_FD, id);
		if (pool < 0)
			_exit(11);
		out = stat_run("--json", &status);
		if (!out)
			_exit(12);
		printf("# as nobody:\n%s", out);
		snprintf(want, sizeof(want), "{\"id\": \"%s\", \"name\": \"nobody-pool\"", id);
		if (!strstr(out, want))
			_exit(13);
		if (!strstr(out, "\"pools_source\": \"fdinfo\""))
			_exit(14);
		if (!strstr(out, "needs root"))
			_exit(15);
		if (!strstr(out, "not readable") || strstr(out, "\"unreadable_processes\": 0,"))
			_exit(16);
		/* root's pool A is not visible to nobody */
		if (strstr(out, self->a_id))
			_exit(17);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
}

TEST_HARNESS_MAIN
