/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers of the host-memory selftests (KFDPOOL_IOC_ALLOC): allocate, map,
 * look for the OOM killer in the kernel log, read /proc/meminfo, unload and
 * load the module.  Like kfdpool_util.h, every helper returns a value or
 * -errno and never aborts.
 */
#ifndef KFDPOOL_HOSTMEM_UTIL_H
#define KFDPOOL_HOSTMEM_UTIL_H

#include <sys/klog.h>
#include <sys/uio.h>
#include <sys/utsname.h>

#include "kfdpool_util.h"

/* ALLOC @size bytes in @pool; the dma-buf fd, *entry set, or -errno. */
static inline int hm_alloc(int pool, __u64 size, __u64 cookie, __u32 *entry)
{
	struct kfdpool_alloc a = {};

	a.size = size;
	a.cookie = cookie;
	a.fd = -1;
	if (ioctl(pool, KFDPOOL_IOC_ALLOC, &a))
		return -errno;
	if (entry)
		*entry = a.entry_id;
	return a.fd;
}

/* Does the module have ALLOC? */
static inline bool hm_supported(void)
{
	struct kfdpool_query q;

	return !kfd_query(&q) && (q.features & KFDPOOL_FEATURE_HOST_ALLOC);
}

/*
 * Lines of the kernel log that say the OOM killer ran.  A test takes the
 * count before and expects it unchanged after.  -errno if the log cannot
 * be read.
 */
static inline int hm_oom_lines(void)
{
	static const char *const marks[] = {
		"invoked oom-killer", "Out of memory", "oom-kill:",
		"Killed process", "Memory cgroup out of memory",
	};
	int len = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	char *buf, *line, *save = NULL;
	int n, count = 0;
	unsigned int i;

	if (len <= 0)
		return len < 0 ? -errno : 0;
	buf = malloc(len + 1);
	if (!buf)
		return -ENOMEM;
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, len);
	if (n < 0) {
		n = -errno;
		free(buf);
		return n;
	}
	buf[n] = 0;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		for (i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
			if (strstr(line, marks[i])) {
				count++;
				break;
			}
	free(buf);
	return count;
}

/* A /proc/meminfo figure in KiB, or -1. */
static inline long long hm_meminfo(const char *key)
{
	char line[256];
	size_t klen = strlen(key);
	long long v = -1;
	FILE *f;
	int fd;

	/*
	 * /proc/meminfo does not fold the per-CPU vmstat deltas: without
	 * this, Shmem lags by up to the per-CPU threshold times the CPUs
	 * (hundreds of KiB), which a 1 MiB test cannot tell from a leak.
	 * stat_refresh folds them (root; the tests run as root).
	 */
	fd = open("/proc/sys/vm/stat_refresh", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "1", 1) != 1)
			v = -1;
		close(fd);
	}
	f = fopen("/proc/meminfo", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtoll(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* The machine's memory in bytes. */
static inline unsigned long long hm_total_ram(void)
{
	long long kib = hm_meminfo("MemTotal");

	return kib < 0 ? 0 : (unsigned long long)kib << 10;
}

/* 1 if @addr lies in a VM_PFNMAP mapping ("pf" in smaps), 0 if not. */
static inline int hm_is_pfnmap(const void *addr)
{
	unsigned long a = (unsigned long)addr, lo, hi;
	char line[512];
	int in = 0, ret = -ENOENT;
	FILE *f = fopen("/proc/self/smaps", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = a >= lo && a < hi;
			continue;
		}
		if (in && !strncmp(line, "VmFlags:", 8)) {
			ret = strstr(line, " pf") ? 1 : 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

/* @key of the mapping of @addr in smaps ("FilePmdMapped": kB), or -errno. */
static inline long long hm_smaps_kb(const void *addr, const char *key)
{
	unsigned long a = (unsigned long)addr, lo, hi;
	size_t klen = strlen(key);
	long long ret = -ENOENT;
	char line[512];
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = a >= lo && a < hi;
			continue;
		}
		if (in && !strncmp(line, key, klen) && line[klen] == ':') {
			ret = strtoll(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return ret;
}

/*
 * io_uring before 6.5 looks at a fixed buffer's vmas itself and refuses
 * every file mapping but shmem's and hugetlbfs's with EOPNOTSUPP
 * (io_sqe_buffer_register() in 5.10's io_uring/io_uring.c, io_pin_pages()
 * in 6.1's io_uring/rsrc.c); from 6.5 on it leaves the question to
 * pin_user_pages().  Is this such a kernel?
 */
static inline bool hm_uring_refuses_file_maps(void)
{
	struct utsname u;
	int major, minor;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major < 6 || (major == 6 && minor < 5);
}

/* process_vm_readv/writev on our own @remote: get_user_pages() on it. */
static inline int hm_vm_rw(void *remote, void *local, size_t len, bool write)
{
	struct iovec l = { .iov_base = local, .iov_len = len };
	struct iovec r = { .iov_base = remote, .iov_len = len };
	ssize_t n = write ? process_vm_writev(getpid(), &l, 1, &r, 1, 0) :
			    process_vm_readv(getpid(), &l, 1, &r, 1, 0);

	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
}

/* Fill @len bytes at @p with the pattern of @seed, or check it (1 ok). */
static inline void hm_fill(void *p, size_t len, uint32_t seed)
{
	uint32_t *w = p;
	size_t i;

	for (i = 0; i < len / 4; i++)
		w[i] = seed * 2654435761u + (uint32_t)i;
}

static inline int hm_check(const void *p, size_t len, uint32_t seed)
{
	const uint32_t *w = p;
	size_t i;

	for (i = 0; i < len / 4; i++)
		if (w[i] != seed * 2654435761u + (uint32_t)i)
			return 0;
	return 1;
}

static inline int hm_unload(void)
{
	int i;

	/* A dying holder may still be dropping its file: retry, bounded. */
	for (i = 0; i < 300; i++) {
		if (!syscall(SYS_delete_module, "kfdpool", O_NONBLOCK))
			return 0;
		if (errno != EWOULDBLOCK && errno != EAGAIN)
			break;
		usleep(10000);
	}
	return -errno;
}

/* Load $KFDPOOL_KO and wait for /dev/kfdpool; 0 or -errno. */
static inline int hm_load(void)
{
	const char *ko = getenv("KFDPOOL_KO");
	int fd, i, ret;

	if (!ko || !*ko)
		return -ENOENT;
	fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	for (i = 0; !ret && i < 100; i++) {
		fd = kfd_open();
		if (fd >= 0) {
			close(fd);
			return 0;
		}
		usleep(10000);
	}
	return ret ? ret : -ENODEV;
}

#endif /* KFDPOOL_HOSTMEM_UTIL_H */
