// SPDX-License-Identifier: MIT
/*
 * LD_PRELOAD stand-in for libkfdpool's kfdpool_open() and kfdpool_query(),
 * for tools/test/query-test: kfdpool-query runs on the host, without a
 * module, and is told the features of a module that does not exist yet
 * (QUERY_FAKE_FEATURES, a number strtoul() reads).  QUERY_FAKE_FIELDS sets
 * more fields ("name=value,..."), and QUERY_FAKE_USERS names a file read in
 * place of debugfs's kfdpool/users.  (The build defines _GNU_SOURCE, for
 * RTLD_NEXT.)
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kfdpool.h>

int kfdpool_open(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* QUERY_FAKE_FIELDS' value of @name, or 0. */
static unsigned long long field(const char *name)
{
	const char *f = getenv("QUERY_FAKE_FIELDS");
	size_t n = strlen(name);

	for (; f && *f; f = strchr(f, ',') ? strchr(f, ',') + 1 : NULL)
		if (!strncmp(f, name, n) && f[n] == '=')
			return strtoull(f + n + 1, NULL, 0);
	return 0;
}

int kfdpool_query(int ctl_fd, struct kfdpool_query *q)
{
	const char *f = getenv("QUERY_FAKE_FEATURES");

	if (!f)
		return -EINVAL;
	memset(q, 0, sizeof(*q));
	q->abi_version = KFDPOOL_ABI_VERSION;
	q->features = (__u32)strtoul(f, NULL, 0);
	q->max_entries = 1024;
	q->max_batch = 4096;
	q->max_records = 1 << 20;
	q->global_limit = field("global_limit");
	q->user_limit = field("user_limit");
	q->max_user_records = (__u32)field("max_user_records");
	q->global_pinned = field("global_pinned");
	q->user_pinned = field("user_pinned");
	q->user_records = (__u32)field("user_records");
	q->max_user_persistent = (__u32)field("max_user_persistent");
	q->user_persistent = (__u32)field("user_persistent");
	q->max_user_persistent_bytes = field("max_user_persistent_bytes");
	q->user_persistent_bytes = field("user_persistent_bytes");
	return 0;
}

FILE *fopen(const char *path, const char *mode)
{
	FILE *(*next)(const char *, const char *) =
		(FILE *(*)(const char *, const char *))dlsym(RTLD_NEXT, "fopen");
	const char *users = getenv("QUERY_FAKE_USERS");

	if (users && !strcmp(path, "/sys/kernel/debug/kfdpool/users"))
		path = users;
	return next(path, mode);
}
