/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers for the pool handle selftests (KFDPOOL_IOC_HANDLE_EXPORT,
 * HANDLE_ROTATE, POOL_IMPORT_HANDLE).  Like kfdpool_util.h: every helper
 * returns a value or -errno and never aborts.
 */
#ifndef KFDPOOL_HANDLE_UTIL_H
#define KFDPOOL_HANDLE_UTIL_H

#include "kfdpool_util.h"

/* Export the pool of owner fd @pool as a handle; 0 or -errno. */
static inline int kfd_handle_export(int pool, __u32 policy, __u32 gid,
				    struct kfdpool_pool_handle *h)
{
	struct kfdpool_handle_export e = {};

	e.policy = policy;
	e.gid = gid;
	if (ioctl(pool, KFDPOOL_IOC_HANDLE_EXPORT, &e))
		return -errno;
	*h = e.handle;
	return 0;
}

static inline int kfd_handle_rotate(int pool)
{
	struct kfdpool_handle_rotate r = {};

	return kfd_ioctl(pool, KFDPOOL_IOC_HANDLE_ROTATE, &r);
}

/* Import @h on control fd @ctl: a new import fd of the pool, or -errno. */
static inline int kfd_handle_import(int ctl, const struct kfdpool_pool_handle *h)
{
	struct kfdpool_pool_import_handle i = {};

	i.handle = *h;
	i.fd = -1;
	if (ioctl(ctl, KFDPOOL_IOC_POOL_IMPORT_HANDLE, &i))
		return -errno;
	return i.fd;
}

/* Lines of a debugfs listing that are not its header; -errno without it. */
static inline int kfd_debugfs_lines(const char *path)
{
	char line[512];
	FILE *f;
	int n = 0;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (line[0] != '#')
			n++;
	fclose(f);
	return n;
}

/* @count's value once it settled at @want (a release may be deferred). */
#define KFD_SETTLED(count, want) ({					\
	int __n = (count), __i;						\
									\
	for (__i = 0; __i < 200 && __n >= 0 && __n != (want); __i++) {	\
		usleep(10000);						\
		__n = (count);						\
	}								\
	__n;								\
})

static inline int kfd_debugfs_lines_wait(const char *path, int want)
{
	return KFD_SETTLED(kfd_debugfs_lines(path), want);
}

static inline int kfd_pool_count_wait(int want)
{
	return KFD_SETTLED(kfd_pool_count(), want);
}

/*
 * Does this process hold an fd of kfdpool (control or pool) or a dma-buf?
 * Returns the first such fd, or -1.
 */
static inline int kfd_find_inherited_fd(void)
{
	char path[64], target[256];
	struct dirent *de;
	int found = -1;
	DIR *dir;

	dir = opendir("/proc/self/fd");
	if (!dir)
		return -1;
	while ((de = readdir(dir))) {
		ssize_t n;

		if (de->d_name[0] == '.' || atoi(de->d_name) == dirfd(dir))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", atoi(de->d_name));
		n = readlink(path, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = 0;
		if (!strcmp(target, KFD_DEV) ||
		    !strcmp(target, "anon_inode:kfdpool") ||
		    strstr(target, "dmabuf:")) {
			found = atoi(de->d_name);
			break;
		}
	}
	closedir(dir);
	return found;
}

/*
 * The errno the kernel must give for handle @h when the only live pool
 * that could match has id @real_id, in the order the kernel checks:
 * magic, pad and policy/gid (-EINVAL), policy ANY while the module's
 * allow_any_handles is off (-EPERM; @any_allowed says whether it is on),
 * the pool (-ENOENT), then the secret and policy (-EACCES).  For a handle
 * that differs from a valid one in any byte.
 */
static inline int kfd_handle_expect(const struct kfdpool_pool_handle *h,
				    const struct kfdpool_pool_handle *real,
				    bool any_allowed)
{
	static const __u8 zero[sizeof(HND(h)->pad)];

	if (HND(h)->magic != KFDPOOL_HANDLE_MAGIC || memcmp(HND(h)->pad, zero, sizeof(zero)))
		return -EINVAL;
	if (HND(h)->policy > KFDPOOL_HANDLE_POLICY_ANY ||
	    (HND(h)->gid && HND(h)->policy != KFDPOOL_HANDLE_POLICY_GID))
		return -EINVAL;
	if (HND(h)->policy == KFDPOOL_HANDLE_POLICY_ANY && !any_allowed)
		return -EPERM;
	if (memcmp(HND(h)->pool_id, HND(real)->pool_id, KFDPOOL_ID_LEN))
		return -ENOENT;
	return -EACCES;
}

/*
 * Turn the module's allow_any_handles on (@on) or off; the value before
 * (0 or 1), or -errno.  A bool parameter reads back as Y or N.
 */
static inline int kfd_any_handles(bool on)
{
	char c = 0, v = on ? 'Y' : 'N';
	int fd, ret;

	fd = open(KFD_PARAMS "allow_any_handles", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (read(fd, &c, 1) != 1)
		ret = -EIO;
	else if (pwrite(fd, &v, 1, 0) != 1)
		ret = -errno;
	else
		ret = c == 'Y';
	close(fd);
	return ret;
}

#endif /* KFDPOOL_HANDLE_UTIL_H */
