/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared pieces of the kfdpool benchmarks: clocks, statistics, dma-buf
 * exporters, fd passing, and the CSV line every figure is printed as
 * (tools/bench turns those lines into the table, CSV and JSON).
 */
#ifndef KFDPOOL_BENCH_H
#define KFDPOOL_BENCH_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/dma-heap.h>
#include <linux/kfdpool.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static inline void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "bench: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static inline double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * One figure: "CSV,<table>,<row>,<column>,<value>,<unit>".  Tables are
 * printed by tools/bench in the order their rows first appear.
 */
static inline void figure(const char *table, const char *row, const char *col,
			  double value, const char *unit)
{
	if (strchr(table, ',') || strchr(row, ',') || strchr(col, ','))
		die("figure labels must not contain commas: %s/%s/%s", table,
		    row, col);
	printf("CSV,%s,%s,%s,%.6g,%s\n", table, row, col, value, unit);
	fflush(stdout);
}

/* A host-memory dma-buf of @len bytes from the system heap. */
static inline int heap_dmabuf(size_t len)
{
	static int heap = -1;
	struct dma_heap_allocation_data d = {
		.len = len,
		.fd_flags = O_RDWR | O_CLOEXEC,
	};

	if (heap < 0) {
		heap = open("/dev/dma_heap/system", O_RDWR | O_CLOEXEC);
		if (heap < 0)
			die("/dev/dma_heap/system: %s (the benchmarks run on 6.12)",
			    strerror(errno));
	}
	if (ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &d))
		die("dma heap alloc %zu: %s", len, strerror(errno));
	return d.fd;
}

static inline int xioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret < 0 && errno == EINTR);
	return ret;
}

static inline void write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("write: %s", strerror(errno));
		p += n;
		len -= n;
	}
}

static inline void read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("read: %s", n ? strerror(errno) : "peer closed");
		p += n;
		len -= n;
	}
}

/* SCM_RIGHTS carries at most SCM_MAX_FD (253) fds per message. */
#define FDS_PER_MSG 253

static inline void send_fds(int sock, const int *fds, int n)
{
	char c = 0;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int) * FDS_PER_MSG)];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = CMSG_SPACE(sizeof(int) * n),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * n);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * n);
	if (sendmsg(sock, &msg, 0) != 1)
		die("sendmsg: %s", strerror(errno));
}

static inline int recv_fds(int sock, int *fds, int max)
{
	char c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int) * FDS_PER_MSG)];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cm;
	int n;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		die("recvmsg: %s", strerror(errno));
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		die("recvmsg: no fds");
	n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
	if (n > max)
		die("recvmsg: %d fds, room for %d", n, max);
	memcpy(fds, CMSG_DATA(cm), sizeof(int) * n);
	return n;
}

static inline int env_int(const char *name, int def)
{
	const char *v = getenv(name);

	return v && *v ? atoi(v) : def;
}

/*
 * Counting system calls.  Performance counters do not exist under TCG and
 * wrapping the library's entry points would count only what we thought of,
 * so the kernel counts: the raw_syscalls:sys_enter tracepoint, recorded for
 * the chosen threads only (set_event_pid) into a tracefs instance of our
 * own, and the number of events in its buffer read back.  Every system call
 * is counted, whoever makes it on those threads (glibc, liburing, the
 * library, futex waits).  Counting slows the calls down: never count and
 * time in the same pass.
 */
#define SC_TRACEFS	"/sys/kernel/tracing"
#define SC_INSTANCE	SC_TRACEFS "/instances/kfdpool_bench"

struct sc_counter {
	int enable_fd;		/* events/raw_syscalls/sys_enter/enable */
	long overhead;		/* what sc_start + sc_stop count by themselves */
};

static inline int sc_write(const char *file, const char *val)
{
	char path[256];
	int fd, ret = 0;

	snprintf(path, sizeof(path), SC_INSTANCE "/%s", file);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		ret = -errno;
	close(fd);
	return ret;
}

/* Events in the instance's buffers, all CPUs; dies if any were lost. */
static inline long sc_entries(void)
{
	long total = 0;
	int cpu;

	for (cpu = 0;; cpu++) {
		char path[256], line[128];
		long v;
		FILE *f;

		snprintf(path, sizeof(path), SC_INSTANCE "/per_cpu/cpu%d/stats", cpu);
		f = fopen(path, "r");
		if (!f)
			break;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "entries: %ld", &v) == 1)
				total += v;
			else if (sscanf(line, "overrun: %ld", &v) == 1 && v)
				die("syscall count: %ld events lost (buffer too small)", v);
		}
		fclose(f);
	}
	return total;
}

/* Count only the calls @filter (an event filter such as "id == 202")
 * matches; NULL: every call. */
static inline int sc_filter(const char *filter)
{
	return sc_write("events/raw_syscalls/sys_enter/filter",
			filter ? filter : "0");
}

/* Open the counter; @filter (NULL: every call) is an event filter such as
 * "id == 202".  Returns -errno when this kernel cannot count. */
static inline int sc_open(struct sc_counter *c, const char *filter)
{
	struct stat st;
	int ret;

	if (stat(SC_TRACEFS "/instances", &st) &&
	    mount("tracefs", SC_TRACEFS, "tracefs", 0, NULL) && errno != EBUSY)
		return -errno;
	if (mkdir(SC_INSTANCE, 0700) && errno != EEXIST)
		return -errno;
	ret = sc_write("events/raw_syscalls/sys_enter/enable", "0");
	if (!ret)
		ret = sc_write("buffer_size_kb", "4096");
	if (!ret)
		ret = sc_filter(filter);
	if (ret)
		return ret;
	c->enable_fd = open(SC_INSTANCE "/events/raw_syscalls/sys_enter/enable",
			    O_WRONLY | O_CLOEXEC);
	if (c->enable_fd < 0)
		return -errno;
	c->overhead = 0;
	return 0;
}

static inline void sc_close(struct sc_counter *c)
{
	close(c->enable_fd);
	rmdir(SC_INSTANCE);
}

/* Count from here on for the threads @tids (a thread id is its pid). */
static inline void sc_start(struct sc_counter *c, const pid_t *tids, int n)
{
	char list[256] = "";
	int i;

	for (i = 0; i < n; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list),
			 "%d ", (int)tids[i]);
	if (sc_write("set_event_pid", list) || sc_write("trace", ""))
		die("syscall count: %s", strerror(errno));
	/* The last call before counting starts: not counted itself. */
	if (write(c->enable_fd, "1", 1) != 1)
		die("syscall count: %s", strerror(errno));
}

/* The calls made since sc_start, less the counter's own. */
static inline long sc_stop(struct sc_counter *c)
{
	/* Its sys_enter is recorded when the caller is counted: that is
	 * the overhead sc_calibrate measures. */
	if (write(c->enable_fd, "0", 1) != 1)
		die("syscall count: %s", strerror(errno));
	return sc_entries() - c->overhead;
}

/* Measure what counting nothing counts, for these threads. */
static inline void sc_calibrate(struct sc_counter *c, const pid_t *tids, int n)
{
	c->overhead = 0;
	sc_start(c, tids, n);
	c->overhead = sc_stop(c);
}

#endif /* KFDPOOL_BENCH_H */
