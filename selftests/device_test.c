// SPDX-License-Identifier: GPL-2.0-only
/*
 * The control device: query, size-versioned ioctls, unknown commands.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/kfdpool.h>

#include "kfdpool_format.h"
#include "kselftest_harness.h"

FIXTURE(dev) {
	int fd;
};

FIXTURE_SETUP(dev)
{
	self->fd = open("/dev/kfdpool", O_RDWR | O_CLOEXEC);
	if (self->fd < 0)
		SKIP(return, "/dev/kfdpool: %s (module not loaded?)",
		     strerror(errno));
}

FIXTURE_TEARDOWN(dev)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(dev, query)
{
	struct kfdpool_query q = {};

	ASSERT_EQ(0, ioctl(self->fd, KFDPOOL_IOC_QUERY, &q));
	EXPECT_EQ(KFDPOOL_ABI_VERSION, q.abi_version);
	/* The implementation's limits are QUERY's to report. */
	EXPECT_EQ(KFD_BATCH_MAX, q.max_batch);
	EXPECT_EQ(KFD_MAX_RECORDS, q.max_records);
	EXPECT_LT(0, q.max_entries);
	EXPECT_EQ(0, q.pad);
}

TEST_F(dev, query_pad_must_be_zero)
{
	struct kfdpool_query q = {};
	unsigned int i;

	for (i = 0; i < 32; i++) {
		memset(&q, 0, sizeof(q));
		q.pad = 1u << i;
		EXPECT_EQ(-1, ioctl(self->fd, KFDPOOL_IOC_QUERY, &q));
		EXPECT_EQ(EINVAL, errno);
	}
	/* Outputs are not inputs: whatever they hold coming in is ignored. */
	memset(&q, 0xa5, sizeof(q));
	q.pad = 0;
	ASSERT_EQ(0, ioctl(self->fd, KFDPOOL_IOC_QUERY, &q));
	EXPECT_EQ(KFDPOOL_ABI_VERSION, q.abi_version);
	EXPECT_EQ(KFD_BATCH_MAX, q.max_batch);
	EXPECT_EQ(0, q.pad);
}

TEST_F(dev, unknown_commands)
{
	char buf[256] = {};

	EXPECT_EQ(-1, ioctl(self->fd, _IOWR(KFDPOOL_IOC_MAGIC, 0x3f, buf[0]), buf));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IOWR('x', 0x00, struct kfdpool_query), buf));
	EXPECT_EQ(ENOTTY, errno);
	/* Pool commands are not control-device commands. */
	EXPECT_EQ(-1, ioctl(self->fd, KFDPOOL_IOC_PIN, buf));
	EXPECT_EQ(ENOTTY, errno);
	/* The query's number with the wrong direction. */
	EXPECT_EQ(-1, ioctl(self->fd, _IOR(KFDPOOL_IOC_MAGIC, 0x00, struct kfdpool_query), buf));
	EXPECT_EQ(ENOTTY, errno);
}

TEST_F(dev, size_versioning)
{
	struct {
		struct kfdpool_query q;
		__u64 future[4];
	} big;
	struct kfdpool_query small;

	unsigned int i;

	/* A newer caller's larger struct with a zero tail: served. */
	memset(&big, 0, sizeof(big));
	ASSERT_EQ(0, ioctl(self->fd, _IOWR(KFDPOOL_IOC_MAGIC, 0x00, big), &big));
	EXPECT_EQ(KFDPOOL_ABI_VERSION, big.q.abi_version);
	EXPECT_EQ(0, big.future[0]);
	/* Asking for what this kernel does not know: E2BIG, nothing written. */
	for (i = 0; i < 4; i++) {
		memset(&big, 0, sizeof(big));
		big.future[i] = 1ULL << (i * 13);
		EXPECT_EQ(-1, ioctl(self->fd, _IOWR(KFDPOOL_IOC_MAGIC, 0x00, big),
				    &big));
		EXPECT_EQ(E2BIG, errno);
		EXPECT_EQ(0, big.q.abi_version);
	}

	/* An older caller's smaller struct: its own bytes, no more. */
	memset(&small, 0xee, sizeof(small));
	small.abi_version = 0;
	small.features = 0;
	EXPECT_EQ(0, ioctl(self->fd, _IOWR(KFDPOOL_IOC_MAGIC, 0x00, __u64), &small));
	EXPECT_EQ(KFDPOOL_ABI_VERSION, small.abi_version);
	EXPECT_NE(0, small.features);
	EXPECT_EQ(0xeeeeeeeeeeeeeeeeULL, small.global_limit);
}

/*
 * The module registers the node root-only (0600); the packaged udev rule
 * makes it 0660 group render.  Never world-accessible.
 */
TEST_F(dev, node_mode)
{
	struct stat sb;
	mode_t mode;

	ASSERT_EQ(0, fstat(self->fd, &sb));
	mode = sb.st_mode & 07777;
	EXPECT_TRUE(mode == 0600 || mode == 0660) TH_LOG("mode %o", mode);
	EXPECT_EQ(0, sb.st_uid);
}

TEST_F(dev, bad_user_pointer)
{
	EXPECT_EQ(-1, ioctl(self->fd, KFDPOOL_IOC_QUERY, (void *)16));
	EXPECT_EQ(EFAULT, errno);
}

TEST_HARNESS_MAIN
