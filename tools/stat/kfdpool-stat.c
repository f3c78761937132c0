// SPDX-License-Identifier: MIT
/*
 * kfdpool-stat: every kfdpool pool on the system and who holds it.
 *
 * Pools come from the module's debugfs listing (root only); the pool fds of
 * each process come from /proc/PID/fdinfo/FD (the caller's own processes, or
 * all with root).  Whatever cannot be read is said, never silently dropped.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stat_parse.h"

#define DEFAULT_DEBUGFS	"/sys/kernel/debug/kfdpool/pools"
#define DEFAULT_PROC	"/proc"
#define MAX_NOTES	8

struct holder {
	int pid;
	int fd;
	char comm[32];
	struct kps_fdinfo fi;
};

struct snapshot {
	struct kps_pool *pools;
	size_t npools;
	int pools_from_debugfs;	/* else rebuilt from fdinfo */
	struct holder *holders;
	size_t nholders, cap;
	size_t unreadable_procs;
	size_t bad_fdinfo, bad_lines;
	char notes[MAX_NOTES][256];
	int nnotes;
};

static struct {
	const char *debugfs;
	const char *proc;
	const char *pool;
	int json;
	int bytes;
	double watch;
} opt = { DEFAULT_DEBUGFS, DEFAULT_PROC, NULL, 0, 0, 0 };

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

__attribute__((format(printf, 2, 3)))
static void note(struct snapshot *s, const char *fmt, ...)
{
	va_list ap;

	if (s->nnotes == MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(s->notes[s->nnotes++], sizeof(s->notes[0]), fmt, ap);
	va_end(ap);
}

/* Read a whole (small, virtual) file; NULL with errno set on failure. */
static char *slurp(const char *path)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap), *nb;
	ssize_t r;
	int fd;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	for (;;) {
		if (cap - len < 2) {
			nb = realloc(buf, cap *= 2);
			if (!nb)
				break;
			buf = nb;
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0) {
				close(fd);
				buf[len] = '\0';
				return buf;
			}
			break;
		}
		len += (size_t)r;
	}
	r = errno;
	close(fd);
	free(buf);
	errno = (int)r;
	return NULL;
}

static void read_debugfs(struct snapshot *s)
{
	char *text = slurp(opt.debugfs);
	size_t n, bad;

	if (!text) {
		int e = errno;

		if (e == EACCES || e == EPERM)
			note(s, "cannot read %s: %s (needs root): pools listed from the fds this user can see",
			     opt.debugfs, strerror(e));
		else if (e == ENOENT)
			note(s, "%s does not exist (debugfs not mounted, or kfdpool not loaded): pools listed from fds only",
			     opt.debugfs);
		else
			note(s, "cannot read %s: %s", opt.debugfs, strerror(e));
		return;
	}
	n = kps_parse_pools(text, NULL, 0, &bad);
	s->pools = calloc(n ? n : 1, sizeof(*s->pools));
	if (s->pools)
		s->npools = kps_parse_pools(text, s->pools, n, &bad);
	s->bad_lines = bad;
	if (bad)
		note(s, "%zu line(s) of %s did not parse and were skipped", bad, opt.debugfs);
	s->pools_from_debugfs = 1;
	free(text);
}

static int add_holder(struct snapshot *s, int pid, int fd, const char *comm,
		      const struct kps_fdinfo *fi)
{
	struct holder *h;

	if (s->nholders == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;

		h = realloc(s->holders, cap * sizeof(*h));
		if (!h)
			return -1;
		s->holders = h;
		s->cap = cap;
	}
	h = &s->holders[s->nholders++];
	h->pid = pid;
	h->fd = fd;
	snprintf(h->comm, sizeof(h->comm), "%s", comm);
	h->fi = *fi;
	return 0;
}

static void scan_process(struct snapshot *s, int pid)
{
	char path[PATH_MAX], link[256], comm[32] = "?";
	struct dirent *de;
	char *text;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%d/fd", opt.proc, pid);
	d = opendir(path);
	if (!d) {
		if (errno == EACCES || errno == EPERM)
			s->unreadable_procs++;
		return;	/* ENOENT: it exited meanwhile */
	}
	snprintf(path, sizeof(path), "%s/%d/comm", opt.proc, pid);
	text = slurp(path);
	if (text) {
		text[strcspn(text, "\n")] = '\0';
		snprintf(comm, sizeof(comm), "%s", text);
		free(text);
	}
	while ((de = readdir(d))) {
		struct kps_fdinfo fi;
		char *end;
		long fd = strtol(de->d_name, &end, 10);
		ssize_t n;
		int r;

		if (*end || end == de->d_name)
			continue;
		/* Pool fds are anon-inode files: skip the rest cheaply. */
		snprintf(path, sizeof(path), "%s/%d/fd/%ld", opt.proc, pid, fd);
		n = readlink(path, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = '\0';
		if (strncmp(link, "anon_inode:", 11))
			continue;
		snprintf(path, sizeof(path), "%s/%d/fdinfo/%ld", opt.proc, pid, fd);
		text = slurp(path);
		if (!text)
			continue;
		r = kps_parse_fdinfo(text, &fi);
		free(text);
		if (r < 0 && (fi.seen & KPS_F_ID))
			s->bad_fdinfo++;
		if (fi.seen & KPS_F_ID)
			add_holder(s, pid, (int)fd, comm, &fi);
	}
	closedir(d);
}

static void scan_processes(struct snapshot *s)
{
	struct dirent *de;
	DIR *d = opendir(opt.proc);

	if (!d) {
		note(s, "cannot read %s: %s", opt.proc, strerror(errno));
		return;
	}
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (!*end && end != de->d_name && pid > 0)
			scan_process(s, (int)pid);
	}
	closedir(d);
	if (s->unreadable_procs)
		note(s, "%zu process(es) of other users not readable: their pool fds are not shown (run as root)",
		     s->unreadable_procs);
	if (s->bad_fdinfo)
		note(s, "%zu pool fdinfo file(s) had malformed kfdpool keys", s->bad_fdinfo);
}

static struct kps_pool *find_pool(struct snapshot *s, const char *id)
{
	size_t i;

	for (i = 0; i < s->npools; i++)
		if (!strcmp(s->pools[i].id, id))
			return &s->pools[i];
	return NULL;
}

/*
 * Pools the debugfs listing lacks (not readable, or created since): take
 * them from any fd of theirs.  The pool-wide figures are the same on every
 * fd; the uid is unknown there (UINT32_MAX).
 */
static void pools_from_fds(struct snapshot *s)
{
	size_t i;

	for (i = 0; i < s->nholders; i++) {
		const struct kps_fdinfo *fi = &s->holders[i].fi;
		struct kps_pool *p, *np;

		if (find_pool(s, fi->id))
			continue;
		np = realloc(s->pools, (s->npools + 1) * sizeof(*np));
		if (!np)
			return;
		s->pools = np;
		p = &s->pools[s->npools++];
		memset(p, 0, sizeof(*p));
		memcpy(p->id, fi->id, sizeof(p->id));
		memcpy(p->name, fi->name, sizeof(p->name));
		p->owner_pid = fi->owner_pid;
		p->uid = UINT32_MAX;
		p->limit = fi->limit;
		p->reserved = fi->reserved;
		p->reserved_high = fi->reserved_high;
		p->used = fi->used;
		p->used_high = fi->used_high;
		p->draining = fi->draining;
		p->entries = fi->entries;
		p->records = fi->records;
		p->import_fds = fi->import_fds;
		p->imported = fi->imported;
	}
}

static void collect(struct snapshot *s)
{
	memset(s, 0, sizeof(*s));
	read_debugfs(s);
	scan_processes(s);
	pools_from_fds(s);
}

static void release(struct snapshot *s)
{
	free(s->pools);
	free(s->holders);
}

static int wanted(const char *id)
{
	return !opt.pool || !strcmp(opt.pool, id);
}

static const char *sz(uint64_t v, char *buf)
{
	if (opt.bytes) {
		snprintf(buf, KPS_SIZE_LEN, "%" PRIu64, v);
		return buf;
	}
	return kps_size(v, buf);
}

static const char *mode_name(int mode)
{
	return mode == KFDPOOL_MODE_OWNER ? "owner" :
	       mode == KFDPOOL_MODE_IMPORT ? "import" : "?";
}

static const char *comm_of(struct snapshot *s, int pid)
{
	size_t i;

	for (i = 0; i < s->nholders; i++)
		if (s->holders[i].pid == pid)
			return s->holders[i].comm;
	return NULL;
}

static void print_text(struct snapshot *s)
{
	char a[KPS_SIZE_LEN], b[KPS_SIZE_LEN], c[KPS_SIZE_LEN], d[KPS_SIZE_LEN];
	size_t i, j, shown = 0;

	printf("kfdpool: %zu pool(s) (%s), %zu pool fd(s) visible\n", s->npools,
	       s->pools_from_debugfs ? "debugfs" : "from fds only", s->nholders);
	for (i = 0; i < s->npools; i++) {
		const struct kps_pool *p = &s->pools[i];
		const char *comm = comm_of(s, p->owner_pid);

		if (!wanted(p->id))
			continue;
		shown++;
		printf("\npool %s  id %s\n", p->name[0] ? p->name : "-", p->id);
		printf("  owner pid %d%s%s%s", p->owner_pid, comm ? " (" : "",
		       comm ? comm : "", comm ? ")" : "");
		if (p->uid != UINT32_MAX)
			printf("  uid %u", p->uid);
		printf("  limit %s\n", p->limit ? sz(p->limit, a) : "none");
		printf("  reserved %s (high %s)  used %s (high %s)\n",
		       sz(p->reserved, a), sz(p->reserved_high, b),
		       sz(p->used, c), sz(p->used_high, d));
		printf("  entries %u  records %u  draining %s  import fds %u  imported %s\n",
		       p->entries, p->records, sz(p->draining, a), p->import_fds,
		       sz(p->imported, b));
		for (j = 0; j < s->nholders; j++) {
			const struct holder *h = &s->holders[j];

			if (strcmp(h->fi.id, p->id) || h->fi.mode != KFDPOOL_MODE_IMPORT)
				continue;
			printf("  importer pid %d (%s) fd %d: %u entr%s, %s\n", h->pid,
			       h->comm, h->fd, h->fi.fd_imports,
			       h->fi.fd_imports == 1 ? "y" : "ies", sz(h->fi.fd_imported, a));
		}
	}
	if (opt.pool && !shown)
		printf("\nno pool with id %s\n", opt.pool);

	printf("\n%-7s %-16s %5s %-6s %-16s %-32s %8s %10s\n", "PID", "COMMAND", "FD",
	       "MODE", "POOL", "ID", "IMPORTS", "IMPORTED");
	for (i = 0; i < s->nholders; i++) {
		const struct holder *h = &s->holders[i];

		if (!wanted(h->fi.id))
			continue;
		printf("%-7d %-16s %5d %-6s %-16s %-32s %8u %10s\n",
		       h->pid, h->comm, h->fd,
		       mode_name(h->fi.mode), h->fi.name[0] ? h->fi.name : "-",
		       h->fi.id, h->fi.fd_imports, sz(h->fi.fd_imported, a));
	}
	for (i = 0; i < (size_t)s->nnotes; i++)
		printf("note: %s\n", s->notes[i]);
}

static void json_str(const char *str)
{
	const unsigned char *p;

	putchar('"');
	for (p = (const unsigned char *)str; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			printf("\\u%04x", *p);
		else
			putchar(*p);
	}
	putchar('"');
}

/*
 * One object per line inside the arrays, so line tools (and the selftest)
 * can pick a pool by its id without a JSON parser.
 */
static void print_json(struct snapshot *s)
{
	size_t i, j;
	int first = 1, sep;

	printf("{\"version\": 1, \"time\": %lld, \"debugfs\": ", (long long)time(NULL));
	json_str(opt.debugfs);
	printf(", \"pools_source\": \"%s\",\n\"pools\": [",
	       s->pools_from_debugfs ? "debugfs" : "fdinfo");
	for (i = 0; i < s->npools; i++) {
		const struct kps_pool *p = &s->pools[i];

		if (!wanted(p->id))
			continue;
		printf("%s\n {\"id\": \"%s\", \"name\": ", first ? "" : ",", p->id);
		first = 0;
		json_str(p->name);
		printf(", \"owner_pid\": %d, \"uid\": ", p->owner_pid);
		if (p->uid == UINT32_MAX)
			printf("null");
		else
			printf("%u", p->uid);
		printf(", \"limit\": %" PRIu64 ", \"reserved\": %" PRIu64
		       ", \"reserved_high\": %" PRIu64 ", \"used\": %" PRIu64
		       ", \"used_high\": %" PRIu64 ", \"draining\": %" PRIu64
		       ", \"entries\": %u, \"records\": %u, \"import_fds\": %u"
		       ", \"imported\": %" PRIu64 ", \"importers\": [",
		       p->limit, p->reserved, p->reserved_high, p->used, p->used_high,
		       p->draining, p->entries, p->records, p->import_fds, p->imported);
		sep = 0;
		for (j = 0; j < s->nholders; j++) {
			const struct holder *h = &s->holders[j];

			if (strcmp(h->fi.id, p->id) || h->fi.mode != KFDPOOL_MODE_IMPORT)
				continue;
			printf("%s{\"pid\": %d, \"fd\": %d, \"imports\": %u, \"imported\": %" PRIu64 "}",
			       sep ? ", " : "", h->pid, h->fd, h->fi.fd_imports, h->fi.fd_imported);
			sep = 1;
		}
		printf("]}");
	}
	printf("\n],\n\"fds\": [");
	first = 1;
	for (i = 0; i < s->nholders; i++) {
		const struct holder *h = &s->holders[i];
		const struct kps_fdinfo *f = &h->fi;

		if (!wanted(f->id))
			continue;
		printf("%s\n {\"pid\": %d, \"comm\": ", first ? "" : ",", h->pid);
		first = 0;
		json_str(h->comm);
		printf(", \"fd\": %d, \"mode\": \"%s\", \"id\": \"%s\", \"name\": ",
		       h->fd, mode_name(f->mode), f->id);
		json_str(f->name);
		printf(", \"owner_pid\": %d, \"limit\": %" PRIu64 ", \"handle_types\": %u"
		       ", \"reserved\": %" PRIu64 ", \"reserved_high\": %" PRIu64
		       ", \"used\": %" PRIu64 ", \"used_high\": %" PRIu64
		       ", \"draining\": %" PRIu64 ", \"entries\": %u, \"draining_entries\": %u"
		       ", \"records\": %u, \"import_fds\": %u, \"imported\": %" PRIu64
		       ", \"fd_imports\": %u, \"fd_imported\": %" PRIu64 "}",
		       f->owner_pid, f->limit, f->handle_types, f->reserved, f->reserved_high,
		       f->used, f->used_high, f->draining, f->entries, f->draining_entries,
		       f->records, f->import_fds, f->imported, f->fd_imports, f->fd_imported);
	}
	printf("\n],\n\"unreadable_processes\": %zu, \"notes\": [", s->unreadable_procs);
	for (i = 0; i < (size_t)s->nnotes; i++) {
		printf("%s", i ? ", " : "");
		json_str(s->notes[i]);
	}
	printf("]}\n");
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kfdpool-stat [--json] [--watch SECONDS] [--bytes] [--pool ID]\n"
		"                    [--debugfs PATH] [--proc PATH]\n"
		"Lists every kfdpool pool (debugfs, needs root) and the pool fds of each\n"
		"process (/proc/PID/fdinfo): accounting, owners, importers.\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "watch", required_argument, NULL, 'w' },
		{ "bytes", no_argument, NULL, 'b' },
		{ "pool", required_argument, NULL, 'p' },
		{ "debugfs", required_argument, NULL, 'D' },
		{ "proc", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct snapshot s;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "jw:bp:h", lo, NULL)) != -1) {
		switch (c) {
		case 'j': opt.json = 1; break;
		case 'b': opt.bytes = 1; break;
		case 'p':
			if (!kps_valid_id(optarg)) {
				fprintf(stderr, "kfdpool-stat: --pool wants 32 lowercase hex digits\n");
				return 2;
			}
			opt.pool = optarg;
			break;
		case 'D': opt.debugfs = optarg; break;
		case 'P': opt.proc = optarg; break;
		case 'w':
			opt.watch = strtod(optarg, &end);
			if (*end || !(opt.watch > 0) || opt.watch > 86400) {
				fprintf(stderr, "kfdpool-stat: --watch wants seconds > 0\n");
				return 2;
			}
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	do {
		collect(&s);
		if (opt.watch && !opt.json && isatty(STDOUT_FILENO))
			printf("\033[H\033[2J");
		if (opt.json)
			print_json(&s);
		else
			print_text(&s);
		fflush(stdout);
		release(&s);
		if (opt.watch && !stop) {
			struct timespec ts = { (time_t)opt.watch,
				(long)((opt.watch - (double)(time_t)opt.watch) * 1e9) };

			while (nanosleep(&ts, &ts) && errno == EINTR && !stop)
				;
		}
	} while (opt.watch && !stop);
	return 0;
}
