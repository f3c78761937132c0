// SPDX-License-Identifier: MIT
/*
 * kfdpool-stat: every kfdpool pool on the system and who holds it.
 *
 * Pools come from KFDPOOL_IOC_POOL_LIST on /dev/kfdpool (every pool for
 * CAP_SYS_ADMIN, else the caller's own); the pool fds of each process from
 * /proc/PID/fdinfo/FD (the caller's own processes, or all with root).  Both
 * are stable interfaces of the module; debugfs is not read.  Whatever
 * cannot be read is said, never silently dropped.  --prometheus writes
 * the pools and the module's limits (KFDPOOL_IOC_QUERY) as metrics,
 * --output FILE replaces FILE with each snapshot atomically.
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
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "stat.h"

#ifndef KFDPOOL_STAT_VERSION
#define KFDPOOL_STAT_VERSION "unknown"
#endif

/* Distinct from every other status, so that "kfdpool-stat && ..." in a
 * monitoring check tells a node without the module from one without pools. */
#define EXIT_NO_MODULE 3

static struct kps_opts opt = { .device = "/dev/kfdpool", .proc = "/proc" };
static int json, prometheus;
static const char *output;
static double watch;

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

__attribute__((format(printf, 2, 3)))
static void note(struct kps_snapshot *s, const char *fmt, ...)
{
	va_list ap;

	if (s->nnotes == KPS_MAX_NOTES)
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
	int fd, e;

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
		if (r == 0) {
			close(fd);
			buf[len] = '\0';
			return buf;
		}
		if (r < 0)
			break;
		len += (size_t)r;
	}
	e = errno;
	close(fd);
	free(buf);
	errno = e;
	return NULL;
}

static int add_pool(struct kps_snapshot *s, const struct kps_pool *p)
{
	struct kps_pool *np = realloc(s->pools, (s->npools + 1) * sizeof(*np));

	if (!np)
		return -1;
	s->pools = np;
	s->pools[s->npools++] = *p;
	return 0;
}

/* Why the last list_pools() could not list (for --prometheus). */
static char list_error[256];

/* Every pool the caller may see, a page at a time. */
static void list_pools(struct kps_snapshot *s)
{
	struct kfdpool_pool_info page[64];
	struct kfdpool_pool_list l = { 0 };
	struct kps_pool p;
	uint32_t i;
	int fd;

	s->source = KPS_SOURCE_FDINFO;
	fd = open(opt.device, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		if (e == ENOENT)
			snprintf(list_error, sizeof(list_error),
				 "%s does not exist (kfdpool not loaded?)", opt.device);
		else
			snprintf(list_error, sizeof(list_error), "cannot open %s: %s",
				 opt.device, strerror(e));
		note(s, "%s: pools listed from the fds this user can see", list_error);
		return;
	}
	do {
		l.pools = (uintptr_t)page;
		l.count = sizeof(page) / sizeof(page[0]);
		l.info_size = sizeof(page[0]);
		l.cursor = l.next_cursor;
		if (ioctl(fd, KFDPOOL_IOC_POOL_LIST, &l)) {
			if (errno == ENOTTY)
				snprintf(list_error, sizeof(list_error),
					 "this kfdpool module has no POOL_LIST");
			else
				snprintf(list_error, sizeof(list_error),
					 "KFDPOOL_IOC_POOL_LIST: %s", strerror(errno));
			note(s, "%s: pools listed from the fds this user can see", list_error);
			s->npools = 0;
			close(fd);
			return;
		}
		for (i = 0; i < l.count; i++) {
			kps_pool_from_info(&page[i], &p);
			add_pool(s, &p);
		}
	} while (l.next_cursor);
	close(fd);
	s->source = KPS_SOURCE_IOCTL;
	s->scope = l.scope;
}

/*
 * No module: the device node does not exist, or its driver is gone (a
 * node made by hand and left behind).  Said on stderr before anything else.
 */
static int no_module(void)
{
	int fd = open(opt.device, O_RDONLY | O_CLOEXEC), e = errno;

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (e != ENOENT && e != ENODEV && e != ENXIO)
		return 0;
	fprintf(stderr, "kfdpool-stat: %s: %s (is the module loaded? modprobe kfdpool)\n",
		opt.device, strerror(e));
	return 1;
}

static int add_holder(struct kps_snapshot *s, int pid, int fd, const char *comm,
		      const struct kps_fdinfo *fi)
{
	struct kps_holder *h;

	if (s->nholders == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;

		h = realloc(s->holders, cap * sizeof(*h));
		if (!h)
			return -1;
		s->holders = h;
		s->cap = cap;
	}
	h = &s->holders[s->nholders++];
	memset(h, 0, sizeof(*h));
	h->pid = pid;
	h->fd = fd;
	snprintf(h->comm, sizeof(h->comm), "%s", comm);
	h->fi = *fi;
	return 0;
}

static void scan_process(struct kps_snapshot *s, int pid)
{
	char path[PATH_MAX], link[256], comm[KPS_COMM_LEN] = "?";
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

static void scan_processes(struct kps_snapshot *s)
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

static struct kps_pool *find_pool(struct kps_snapshot *s, const char *id)
{
	size_t i;

	for (i = 0; i < s->npools; i++)
		if (!strcmp(s->pools[i].id, id))
			return &s->pools[i];
	return NULL;
}

/*
 * Pools the list lacks (not listable, another user's pool whose fd this
 * user holds, or created since): take them from any fd of theirs.  The
 * pool-wide figures are the same on every fd; the uid is not there.
 */
static void pools_from_fds(struct kps_snapshot *s)
{
	struct kps_pool p;
	size_t i;

	for (i = 0; i < s->nholders; i++) {
		/* An ended pool's left-over import fds: no pool any more. */
		if (s->holders[i].fi.ended || find_pool(s, s->holders[i].fi.id))
			continue;
		kps_pool_from_fdinfo(&s->holders[i].fi, &p);
		add_pool(s, &p);
	}
}

static int by_pid_fd(const void *a, const void *b)
{
	const struct kps_holder *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->fd < y->fd ? -1 : x->fd > y->fd;
}

static void collect(struct kps_snapshot *s)
{
	memset(s, 0, sizeof(*s));
	list_pools(s);
	scan_processes(s);
	/* readdir's order is the file system's: sort for stable output */
	if (s->nholders)
		qsort(s->holders, s->nholders, sizeof(*s->holders), by_pid_fd);
	pools_from_fds(s);
	if (kps_group_files(s))
		note(s, "out of memory grouping pool fds into files");
}

/* The module's limits (QUERY answers on any fd of the device). */
static void query_limits(struct kps_limits *l)
{
	struct kfdpool_query q;
	int fd;

	memset(l, 0, sizeof(*l));
	memset(&q, 0, sizeof(q));
	fd = open(opt.device, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (!ioctl(fd, KFDPOOL_IOC_QUERY, &q)) {
		l->known = 1;
		l->default_pool_limit = q.default_pool_limit;
		l->max_entries = q.max_entries;
		l->max_records = q.max_records;
		l->max_user_records = q.max_user_records;
		l->max_user_persistent = q.max_user_persistent;
		l->max_user_persistent_bytes = q.max_user_persistent_bytes;
	}
	close(fd);
}

/*
 * The metrics: the module's own figures (POOL_LIST, QUERY), no process
 * scan.  NULL, with the reason on stderr, when the pools cannot be listed.
 */
static char *metrics_text(void)
{
	struct kps_snapshot s;
	struct kps_limits l;
	char *text;

	memset(&s, 0, sizeof(s));
	list_pools(&s);
	if (s.source != KPS_SOURCE_IOCTL) {
		fprintf(stderr, "kfdpool-stat: %s: no metrics (they come from the module's pool list)\n",
			list_error);
		free(s.pools);
		return NULL;
	}
	query_limits(&l);
	text = kps_prometheus(&s, &l);
	if (!text)
		fprintf(stderr, "kfdpool-stat: out of memory\n");
	free(s.pools);
	return text;
}

/*
 * Replace @path with @text atomically: a temporary file in the same
 * directory, renamed over it, so that a reader (node_exporter's textfile
 * collector) sees the old snapshot or the new one, never a part.  The
 * temporary name does not end in .prom, which the collector skips.
 */
static int write_atomic(const char *path, const char *text)
{
	size_t len = strlen(text), done = 0;
	int fd = -1, made = 0, e;
	char *tmp;
	ssize_t w;

	if (asprintf(&tmp, "%s.XXXXXX", path) < 0) {
		fprintf(stderr, "kfdpool-stat: %s: %s\n", path, strerror(ENOMEM));
		return -1;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		goto fail;
	made = 1;
	/* mkostemp makes it 0600: the collector runs as another user. */
	if (fchmod(fd, 0644))
		goto fail;
	while (done < len) {
		w = write(fd, text + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (!w)
				errno = EIO;
			goto fail;
		}
		done += (size_t)w;
	}
	e = close(fd);
	fd = -1;
	if (e || rename(tmp, path))
		goto fail;
	free(tmp);
	return 0;

fail:
	e = errno;
	if (fd >= 0)
		close(fd);
	if (made)
		unlink(tmp);
	fprintf(stderr, "kfdpool-stat: %s: %s\n", path, strerror(e));
	free(tmp);
	return -1;
}

/* One snapshot's text, to stdout or --output; 0, or 1 on failure. */
static int emit(const char *text)
{
	if (output)
		return write_atomic(output, text) ? 1 : 0;
	fputs(text, stdout);
	return fflush(stdout) ? 1 : 0;
}

static void release(struct kps_snapshot *s)
{
	size_t i;

	for (i = 0; s->files && i < s->nfiles; i++)
		free(s->files[i].holders);
	free(s->files);
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

/* A process name fit for a terminal. */
static const char *comm_text(const char *comm, char *buf, size_t len)
{
	kps_printable(comm, buf, len);
	return buf;
}

static const char *comm_of(struct kps_snapshot *s, int pid)
{
	size_t i;

	for (i = 0; i < s->nholders; i++)
		if (s->holders[i].pid == pid)
			return s->holders[i].comm;
	return NULL;
}

/* "pid 200 (importer) fd 7, pid 201 (importer) fd 7" */
static void print_holders(struct kps_snapshot *s, const struct kps_file *f)
{
	char c[KPS_COMM_LEN];
	size_t i;

	for (i = 0; i < f->nholders; i++) {
		const struct kps_holder *h = &s->holders[f->holders[i]];

		printf("%spid %d (%s) fd %d", i ? ", " : "", h->pid,
		       comm_text(h->comm, c, sizeof(c)), h->fd);
	}
}

static void print_text(struct kps_snapshot *s)
{
	char a[KPS_SIZE_LEN], b[KPS_SIZE_LEN], c[KPS_SIZE_LEN], d[KPS_SIZE_LEN];
	char name[KFDPOOL_NAME_LEN + 1], cm[KPS_COMM_LEN], fid[24];
	size_t i, j, shown = 0;

	printf("kfdpool: %zu pool(s) (%s), %zu open pool file(s) in %zu fd(s) visible\n",
	       s->npools,
	       s->source == KPS_SOURCE_FDINFO ? "from fds only" :
	       s->scope == KFDPOOL_POOL_LIST_ALL ? "all pools" :
	       "your pools; root sees all", s->nfiles, s->nholders);
	for (i = 0; i < s->npools; i++) {
		const struct kps_pool *p = &s->pools[i];
		const char *comm = comm_of(s, p->owner_pid);

		if (!wanted(p->id))
			continue;
		shown++;
		kps_printable(p->name, name, sizeof(name));
		printf("\npool %s  id %s\n", name[0] ? name : "-", p->id);
		printf("  owner pid %d", p->owner_pid);
		if (comm)
			printf(" (%s)", comm_text(comm, cm, sizeof(cm)));
		if (p->uid_known)
			printf("  uid %u", p->uid);
		printf("  limit %s\n", p->limit ? sz(p->limit, a) : "none");
		printf("  reserved %s (high %s)  used %s (high %s)\n",
		       sz(p->reserved, a), sz(p->reserved_high, b),
		       sz(p->used, c), sz(p->used_high, d));
		printf("  entries %u  records %u  draining %s  import files %u  imported %s\n",
		       p->entries, p->records, sz(p->draining, a), p->import_fds,
		       sz(p->imported, b));
		if (p->persistent && p->list_known)
			printf("  persistent: %u owner fd(s), age %s%s\n",
			       p->owner_fds, kps_age(p->age_ns, a),
			       p->owner_fds ? "" :
			       " (kept by the kernel: adopt it, or kfdpool-stat --destroy)");
		else if (p->persistent)
			printf("  persistent\n");
		for (j = 0; j < s->nfiles; j++) {
			const struct kps_file *f = &s->files[j];

			if (strcmp(f->fi->id, p->id) || f->fi->mode != KFDPOOL_MODE_IMPORT)
				continue;
			printf("  importer: import file %s: %u entr%s, %s; ",
			       f->fi->file_id ? (snprintf(fid, sizeof(fid), "%" PRIu64,
							  f->fi->file_id), fid) : "?",
			       f->fi->fd_imports, f->fi->fd_imports == 1 ? "y" : "ies",
			       sz(f->fi->fd_imported, a));
			printf("held by ");
			print_holders(s, f);
			if (f->nholders > 1)
				printf(" (one open file: shared through fork, dup or fd passing)");
			printf("\n");
		}
	}
	if (opt.pool && !shown)
		printf("\nno pool with id %s\n", opt.pool);

	printf("\n%-7s %-16s %5s %-6s %8s %-16s %-32s %8s %10s\n", "PID", "COMMAND", "FD",
	       "MODE", "FILE", "POOL", "ID", "IMPORTS", "IMPORTED");
	for (i = 0; i < s->nholders; i++) {
		const struct kps_holder *h = &s->holders[i];

		if (!wanted(h->fi.id))
			continue;
		kps_printable(h->fi.name, name, sizeof(name));
		if (h->fi.file_id)
			snprintf(fid, sizeof(fid), "%" PRIu64, h->fi.file_id);
		else
			snprintf(fid, sizeof(fid), "?");
		printf("%-7d %-16s %5d %-6s %8s %-16s %-32s %8u %10s\n",
		       h->pid, comm_text(h->comm, cm, sizeof(cm)), h->fd,
		       mode_name(h->fi.mode), fid, name[0] ? name : "-",
		       h->fi.id, h->fi.fd_imports, sz(h->fi.fd_imported, a));
	}
	for (i = 0; i < (size_t)s->nnotes; i++) {
		kps_printable(s->notes[i], s->notes[i], sizeof(s->notes[i]));
		printf("note: %s\n", s->notes[i]);
	}
}

/*
 * --destroy: POOL_DESTROY_ID on the device, for the pool's own user or
 * root; another user's pool is not visible to the caller (ENOENT).
 */
static int destroy_pool(const char *id)
{
	struct kfdpool_pool_destroy_id d;
	int fd, e;

	if (no_module())
		return EXIT_NO_MODULE;
	memset(&d, 0, sizeof(d));
	kps_id_bytes(id, d.id);
	fd = open(opt.device, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "kfdpool-stat: destroy %s: %s: %s\n", id,
			opt.device, strerror(errno));
		return 1;
	}
	if (ioctl(fd, KFDPOOL_IOC_POOL_DESTROY_ID, &d)) {
		e = errno;
		close(fd);
		/* EPERM: an older module, which let only root destroy by id. */
		fprintf(stderr, "kfdpool-stat: destroy %s: %s%s\n", id,
			strerror(e),
			e == EPERM ? " (this module lets only root destroy by id)" :
			e == ENOENT ? " (no pool of yours has this id; root may end any)" : "");
		return 1;
	}
	close(fd);
	printf("pool %s destroyed\n", id);
	return fflush(stdout) ? 1 : 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kfdpool-stat [OPTION]...\n"
		"Lists the kfdpool memory pools (KFDPOOL_IOC_POOL_LIST on /dev/kfdpool: every\n"
		"pool for root, your own otherwise) and the pool fds each process holds\n"
		"(/proc/PID/fdinfo): accounting, owners, importers.\n"
		"\n"
		"  -j, --json           one JSON document on one line instead of text\n"
		"      --prometheus     the pools, per-user and global sums and the module's\n"
		"                       limits as Prometheus metrics (text format 0.0.4)\n"
		"  -o, --output FILE    with --json or --prometheus: replace FILE with each\n"
		"                       snapshot atomically (node_exporter's textfile collector)\n"
		"  -w, --watch SECONDS  repeat every SECONDS (fractions allowed) until\n"
		"                       interrupted; with --json a document per line (NDJSON)\n"
		"  -b, --bytes          sizes in bytes instead of KiB, MiB, GiB\n"
		"  -p, --pool ID        only the pool with this id (32 lowercase hex digits)\n"
		"      --device PATH    list pools through PATH instead of /dev/kfdpool\n"
		"      --proc PATH      read processes from PATH instead of /proc\n"
		"      --destroy ID     end the pool with this id now, persistent or not: your\n"
		"                       own, or any as root; importers keep what they hold\n"
		"  -V, --version        the version, and the module ABI it was built for\n"
		"  -h, --help           this help\n"
		"\n"
		"Exit status:\n"
		"  0  the listing was printed (what could not be read is in its notes)\n"
		"  1  the output could not be written, --prometheus could not list the\n"
		"     pools, or --destroy failed\n"
		"  2  a usage error\n"
		"  %d  no kfdpool module: the device does not exist; nothing is listed\n"
		"     and stderr says so first\n"
		"\n"
		"See kfdpool-stat(8).\n", EXIT_NO_MODULE);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "prometheus", no_argument, NULL, 'M' },
		{ "output", required_argument, NULL, 'o' },
		{ "watch", required_argument, NULL, 'w' },
		{ "bytes", no_argument, NULL, 'b' },
		{ "pool", required_argument, NULL, 'p' },
		{ "device", required_argument, NULL, 'D' },
		{ "proc", required_argument, NULL, 'P' },
		{ "destroy", required_argument, NULL, 'X' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct kps_snapshot s;
	const char *destroy = NULL;
	char *end, *line;
	int c, ret = 0;

	while ((c = getopt_long(argc, argv, "jo:w:bp:Vh", lo, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'M': prometheus = 1; break;
		case 'o': output = optarg; break;
		case 'b': opt.bytes = 1; break;
		case 'p':
			if (!kps_valid_id(optarg)) {
				fprintf(stderr, "kfdpool-stat: --pool wants 32 lowercase hex digits\n");
				return 2;
			}
			opt.pool = optarg;
			break;
		case 'D': opt.device = optarg; break;
		case 'X':
			if (!kps_valid_id(optarg)) {
				fprintf(stderr, "kfdpool-stat: --destroy wants 32 lowercase hex digits\n");
				return 2;
			}
			destroy = optarg;
			break;
		case 'P': opt.proc = optarg; break;
		case 'w':
			watch = strtod(optarg, &end);
			if (*end || !(watch > 0) || watch > 86400) {
				fprintf(stderr, "kfdpool-stat: --watch wants seconds > 0\n");
				return 2;
			}
			break;
		case 'V':
			printf("kfdpool-stat %s (kfdpool ABI %d)\n", KFDPOOL_STAT_VERSION,
			       KFDPOOL_ABI_VERSION);
			return 0;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || (destroy && (json || prometheus || output || watch || opt.pool))) {
		usage(stderr);
		return 2;
	}
	if ((json && prometheus) || (prometheus && opt.pool) || (output && !json && !prometheus)) {
		fprintf(stderr, "kfdpool-stat: %s\n", json && prometheus ?
			"--json or --prometheus, not both" : prometheus && opt.pool ?
			"--prometheus covers every pool: no --pool" :
			"--output wants --json or --prometheus");
		return 2;
	}
	if (destroy)
		return destroy_pool(destroy);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	do {
		if (no_module()) {
			ret = EXIT_NO_MODULE;
			break;
		}
		if (prometheus) {
			line = metrics_text();
			ret = line ? emit(line) : 1;
			free(line);
		} else {
			collect(&s);
			if (watch && !json && isatty(STDOUT_FILENO))
				printf("\033[H\033[2J");
			if (json) {
				line = kps_json(&s, &opt, (long long)time(NULL));
				ret = line ? emit(line) : 1;
				free(line);
			} else {
				print_text(&s);
				if (fflush(stdout))
					ret = 1;
			}
			release(&s);
		}
		if (watch && !stop) {
			struct timespec ts = { (time_t)watch,
				(long)((watch - (double)(time_t)watch) * 1e9) };

			while (nanosleep(&ts, &ts) && errno == EINTR && !stop)
				;
		}
	} while (watch && !stop && !ret);
	return ret;
}
