/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the tests change of the machine, put back whatever became of a test.
 *
 * The kselftest harness can skip FIXTURE_TEARDOWN after a failed ASSERT
 * (in the forked test, longjmp() may hand back the pid variable as it was
 * before fork()), so a fixture's own restore cannot be relied on: one
 * failure would leave a module parameter, the device's mode or the shmem
 * huge page policy changed for every test after it, and the report would
 * bury the first failure under its consequences.  A program that includes
 * this header saves them when it starts; kfd_state_restore() puts them
 * back, from each fixture's setup and at the program's exit.
 */
#ifndef KFDPOOL_STATE_H
#define KFDPOOL_STATE_H

#include "kfdpool_util.h"

#define KFD_STATE_MAX	32
#define KFD_STATE_LEN	64
#define KFD_SHMEM_THP	"/sys/kernel/mm/transparent_hugepage/shmem_enabled"

static struct {
	pid_t pid;	/* the program's own process, not a test's */
	int n;
	char name[KFD_STATE_MAX][KFD_STATE_LEN];
	char value[KFD_STATE_MAX][KFD_STATE_LEN];
	mode_t devmode;	/* 0: there was no device */
	gid_t devgid;
	char thp[KFD_STATE_LEN];	/* "": no shmem huge pages */
} kfd_state;

/*
 * The selected shmem huge page policy ("never", "always", ...: the word in
 * brackets) into @buf; 0 or -errno.
 */
static inline int kfd_shmem_thp_get(char *buf, size_t len)
{
	char line[256], *a, *b;
	int ret = kfd_file_read(KFD_SHMEM_THP, line, sizeof(line));

	if (ret)
		return ret;
	a = strchr(line, '[');
	b = a ? strchr(a, ']') : NULL;
	if (!b || (size_t)(b - a) > len)
		return -EINVAL;
	memcpy(buf, a + 1, b - a - 1);
	buf[b - a - 1] = 0;
	return 0;
}

static inline int kfd_shmem_thp_set(const char *policy)
{
	return kfd_file_write(KFD_SHMEM_THP, policy);
}

/*
 * Put back every parameter, and the device's mode and group, that differ
 * from the start.
 */
static inline void kfd_state_restore(void)
{
	char cur[KFD_STATE_LEN];
	struct stat sb;
	int i, ret;

	for (i = 0; i < kfd_state.n; i++) {
		if (!kfd_param_read(kfd_state.name[i], cur, sizeof(cur)) &&
		    !strcmp(cur, kfd_state.value[i]))
			continue;
		ret = kfd_param_write(kfd_state.name[i], kfd_state.value[i]);
		/* Unloaded, or not ours to write, is no failure to restore. */
		if (ret && ret != -ENOENT && ret != -EACCES)
			fprintf(stderr, "# could not restore %s\n",
				kfd_state.name[i]);
	}
	if (kfd_state.devmode && !stat(KFD_DEV, &sb) &&
	    (sb.st_mode & 07777) != kfd_state.devmode)
		chmod(KFD_DEV, kfd_state.devmode);
	if (kfd_state.devmode && !stat(KFD_DEV, &sb) &&
	    sb.st_gid != kfd_state.devgid &&
	    chown(KFD_DEV, -1, kfd_state.devgid))
		fprintf(stderr, "# could not restore the group of %s\n", KFD_DEV);
	if (kfd_state.thp[0] && !kfd_shmem_thp_get(cur, sizeof(cur)) &&
	    strcmp(cur, kfd_state.thp))
		kfd_shmem_thp_set(kfd_state.thp);
}

static void kfd_state_at_exit(void)
{
	/* A test's own children exit too: only the program restores. */
	if (getpid() == kfd_state.pid)
		kfd_state_restore();
}

__attribute__((constructor)) static void kfd_state_save(void)
{
	DIR *d = opendir(KFD_PARAMS);
	struct dirent *de;
	struct stat sb;
	int i;

	kfd_state.pid = getpid();
	if (!stat(KFD_DEV, &sb)) {
		kfd_state.devmode = sb.st_mode & 07777;
		kfd_state.devgid = sb.st_gid;
	}
	if (kfd_shmem_thp_get(kfd_state.thp, sizeof(kfd_state.thp)))
		kfd_state.thp[0] = 0;
	while (d && (de = readdir(d)) && kfd_state.n < KFD_STATE_MAX) {
		i = kfd_state.n;
		if (de->d_name[0] == '.' || strlen(de->d_name) >= KFD_STATE_LEN ||
		    kfd_param_read(de->d_name, kfd_state.value[i],
				   KFD_STATE_LEN))
			continue;
		strcpy(kfd_state.name[i], de->d_name);
		kfd_state.n++;
	}
	if (d)
		closedir(d);
	atexit(kfd_state_at_exit);
}

#endif /* KFDPOOL_STATE_H */
