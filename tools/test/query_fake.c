// SPDX-License-Identifier: MIT
/*
 * LD_PRELOAD stand-in for libkfdpool's kfdpool_open() and kfdpool_query(),
 * for tools/test/query-test: kfdpool-query runs on the host, without a
 * module, and is told the features of a module that does not exist yet
 * (QUERY_FAKE_FEATURES, a number strtoul() reads).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include <kfdpool.h>

int kfdpool_open(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
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
	return 0;
}
