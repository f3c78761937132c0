// SPDX-License-Identifier: GPL-2.0-only
/*
 * libkfdpool's native API where the HIP layer does not take it: the exact
 * batch ioctls (kfdpool_*_batch) and kfdpool_revoke, what every wrapper
 * returns and leaves alone when the kernel refuses, the optional outputs of
 * pin and unpin, KFDPOOL_BATCH choosing the transport of kfdpool_*v, and
 * the argument checks of kfdpool_*v.
 */
#include <stdint.h>

#include <kfdpool.h>
#include "kfdpool_util.h"
#include "lib_hip_util.h"
#include "kselftest_harness.h"

#define NBUF 2
#define BUF_SIZE (64u << 10)

FIXTURE(core) {
	int ctl, pool, dmabufs;
	int buf[NBUF];
	uint32_t entry[NBUF];
};

FIXTURE_SETUP(core)
{
	int i;

	self->pool = -1;
	self->dmabufs = lh_dmabufs(-1);
	self->ctl = kfdpool_open();
	if (self->ctl < 0)
		SKIP(return, "/dev/kfdpool: %s", strerror(-self->ctl));
	self->pool = kfdpool_pool_create(self->ctl, 0, KFDPOOL_HANDLE_TYPE_FD,
					 "core", NULL);
	ASSERT_LE(0, self->pool);
	for (i = 0; i < NBUF; i++) {
		self->buf[i] = kfd_dmabuf_new(BUF_SIZE);
		if (self->buf[i] < 0)
			SKIP(return, "no dma-buf source");
		ASSERT_EQ(0, kfdpool_pin(self->pool, self->buf[i], 100 + i,
					 NULL, &self->entry[i]));
	}
}

FIXTURE_TEARDOWN(core)
{
	int i;

	if (self->pool >= 0)
		close(self->pool);
	for (i = 0; i < NBUF; i++)
		if (self->buf[i] > 0)
			close(self->buf[i]);
	if (self->ctl >= 0)
		close(self->ctl);
	/* Everything the pool pinned or handed out is gone. */
	if (self->dmabufs >= 0)
		EXPECT_EQ(self->dmabufs, lh_dmabufs(self->dmabufs));
}

static uint32_t core_records(int pool)
{
	struct kfdpool_pool_stats st;

	return kfdpool_pool_stats(pool, 0, &st) ? ~0u : st.records;
}

/* The batch ioctls as they are: one call each, a status per element. */
TEST_F(core, exact_batch_ioctls)
{
	struct kfdpool_export ex[3] = {};
	struct kfdpool_revoke rv[3] = {};
	struct kfdpool_import im[3] = {};
	struct kfdpool_release rl[3] = {};
	int ifd;

	ex[0].entry_id = self->entry[0];
	ex[0].size = 4096;
	ex[1].entry_id = self->entry[1];
	ex[1].offset = 8192;
	ex[1].size = 100;
	ex[2].entry_id = self->entry[1];
	ex[2].size = 0;				/* refused: empty */
	ASSERT_EQ(3, kfdpool_export_batch(self->pool, ex, 3));
	EXPECT_EQ(0, ex[0].status);
	EXPECT_EQ(0, ex[1].status);
	EXPECT_EQ(-EINVAL, ex[2].status);
	EXPECT_EQ(self->entry[1], REC(&ex[1].record)->entry_id);
	EXPECT_EQ(8192, REC(&ex[1].record)->offset);
	EXPECT_EQ(2, core_records(self->pool));

	/* Imports on an import fd: the second validates, the third is a
	 * record that never was. */
	ifd = kfdpool_pool_export(self->pool);
	ASSERT_LE(0, ifd);
	im[0].record = ex[1].record;
	im[1].record = ex[1].record;
	im[1].flags = KFDPOOL_IMPORT_VALIDATE;
	im[2].record = ex[2].record;
	ASSERT_EQ(3, kfdpool_import_batch(ifd, im, 3));
	EXPECT_EQ(0, im[0].status);
	EXPECT_LE(0, im[0].fd);
	EXPECT_EQ(8192, im[0].offset);
	EXPECT_EQ(100, im[0].size);
	EXPECT_EQ(BUF_SIZE, im[0].entry_size);
	EXPECT_EQ(101, im[0].cookie);
	EXPECT_EQ(0, im[1].status);
	EXPECT_EQ(-1, im[1].fd);
	EXPECT_NE(0, im[2].status);
	if (im[0].fd >= 0)
		close(im[0].fd);

	/* Releases: the import, then once more (nothing held). */
	rl[0].entry_id = self->entry[1];
	rl[1].entry_id = self->entry[1];
	rl[2].entry_id = self->entry[0];
	ASSERT_EQ(3, kfdpool_release_batch(ifd, rl, 3));
	EXPECT_EQ(0, rl[0].status);
	EXPECT_EQ(-ENOENT, rl[1].status);
	EXPECT_EQ(-ENOENT, rl[2].status);
	/* An import fd cannot revoke: the whole batch is refused. */
	rv[0].record = ex[0].record;
	EXPECT_EQ(-EPERM, kfdpool_revoke_batch(ifd, rv, 1));
	close(ifd);

	/* Revokes: the same record twice, then a record of no pool. */
	rv[0].record = ex[0].record;
	rv[1].record = ex[0].record;
	rv[2].record = ex[1].record;
	REC(&rv[2].record)->pool_id[0] ^= 1;
	ASSERT_EQ(3, kfdpool_revoke_batch(self->pool, rv, 3));
	EXPECT_EQ(0, rv[0].status);
	EXPECT_EQ(-ENOENT, rv[1].status);
	EXPECT_EQ(-EXDEV, rv[2].status);
	EXPECT_EQ(1, core_records(self->pool));
	/* And the single revoke. */
	EXPECT_EQ(0, kfdpool_revoke(self->pool, &ex[1].record));
	EXPECT_EQ(-ENOENT, kfdpool_revoke(self->pool, &ex[1].record));
	EXPECT_EQ(0, core_records(self->pool));
	/* Count 0 is the kernel's to refuse, as documented. */
	EXPECT_EQ(-EINVAL, kfdpool_export_batch(self->pool, ex, 0));
}

/* A refused call returns -errno and writes no output. */
TEST_F(core, refusals_leave_outputs_alone)
{
	struct kfdpool_record rec;
	struct kfdpool_pool_handle h;
	uint32_t id = 77, revoked = 77, draining = 77;
	uint64_t size = 77;
	int p[2];

	ASSERT_EQ(0, pipe(p));
	EXPECT_EQ(-EINVAL, kfdpool_pin(self->pool, p[0], 0, &size, &id));
	EXPECT_EQ(77, size);
	EXPECT_EQ(77, id);
	close(p[0]);
	close(p[1]);
	EXPECT_EQ(-EEXIST, kfdpool_pin(self->pool, self->buf[0], 0, &size, &id));
	EXPECT_EQ(77, id);
	EXPECT_EQ(-ENOENT, kfdpool_unpin(self->pool, 12345, &revoked, &draining));
	EXPECT_EQ(77, revoked);
	EXPECT_EQ(77, draining);
	memset(&rec, 0x5a, sizeof(rec));
	EXPECT_EQ(-ENOENT, kfdpool_export(self->pool, 12345, 0, 1, &rec));
	EXPECT_EQ(0x5a, REC(&rec)->nonce[0]);
	EXPECT_EQ(-EINVAL, kfdpool_pool_create(self->ctl, 0, 0, "two words", NULL));
	/* An fd pool has no fabric handles. */
	memset(&h, 0x5a, sizeof(h));
	EXPECT_EQ(-EOPNOTSUPP, kfdpool_handle_export(self->pool,
			KFDPOOL_HANDLE_POLICY_UID, 0, &h));
	EXPECT_EQ(0x5a, HND(&h)->secret[0]);
}

/* Pin and unpin fill their optional outputs. */
TEST_F(core, pin_and_unpin_outputs)
{
	struct kfdpool_record rec;
	uint32_t id, revoked = 77, draining = 77;
	uint64_t size = 0;
	int d = kfd_dmabuf_new(2 * BUF_SIZE), ifd, fd;

	ASSERT_LE(0, d);
	ASSERT_EQ(0, kfdpool_pin(self->pool, d, 7, &size, &id));
	EXPECT_EQ(2 * BUF_SIZE, size);
	ASSERT_EQ(0, kfdpool_export(self->pool, id, 0, 1, &rec));
	ASSERT_EQ(0, kfdpool_export(self->pool, id, 1, 1, &rec));
	ifd = kfdpool_pool_export(self->pool);
	ASSERT_LE(0, ifd);
	fd = kfdpool_import(ifd, &rec, 0, NULL);
	ASSERT_LE(0, fd);
	close(fd);
	/* Both records go; the import keeps the entry draining. */
	ASSERT_EQ(0, kfdpool_unpin(self->pool, id, &revoked, &draining));
	EXPECT_EQ(2, revoked);
	EXPECT_EQ(1, draining);
	EXPECT_EQ(0, kfdpool_release(ifd, id));
	close(ifd);
	close(d);
	ASSERT_EQ(0, kfdpool_unpin(self->pool, self->entry[0], &revoked,
				   &draining));
	EXPECT_EQ(0, revoked);
	EXPECT_EQ(0, draining);
}

/* The vector calls check their arguments before any transport. */
TEST_F(core, vector_arguments)
{
	struct kfdpool_export ex = { .entry_id = 0 };
	struct kfdpool_release rl = { .entry_id = 0 };

	EXPECT_EQ(-EINVAL, kfdpool_exportv(self->pool, NULL, 1));
	EXPECT_EQ(-EINVAL, kfdpool_revokev(self->pool, NULL, 2));
	EXPECT_EQ(0, kfdpool_exportv(self->pool, &ex, 0));
	EXPECT_EQ(0, kfdpool_importv(self->pool, NULL, 0));
	/* Refused before any element is touched. */
	EXPECT_EQ(-EINVAL, kfdpool_releasev(self->pool, &rl,
					    (size_t)INT32_MAX + 1));
}

/*
 * KFDPOOL_BATCH sets the transport when the process first uses the batch
 * calls.  Each value in a child of its own, whose library has not looked
 * yet; a refused one makes the batch calls fail with -@refused and export
 * nothing (an unknown value: EINVAL; uring where the module has no
 * io_uring commands: EOPNOTSUPP).
 */
static int core_batch_child(int pool, const char *value,
			    enum kfdpool_batch_mode want, int refused,
			    uint32_t entry)
{
	struct kfdpool_export ex[3] = {};
	int i;

	setenv("KFDPOOL_BATCH", value, 1);
	for (i = 0; i < 3; i++) {
		ex[i].entry_id = entry;
		ex[i].offset = 4096 * i;
		ex[i].size = 4096;
	}
	if (refused)
		return kfdpool_exportv(pool, ex, 3) == -refused ? 0 : 5;
	if (kfdpool_exportv(pool, ex, 3) != 3)
		return 1;
	for (i = 0; i < 3; i++)
		if (ex[i].status || REC(&ex[i].record)->offset != 4096 * i)
			return 2;
	if (kfdpool_last_batch_mode() != want)
		return 3;
	return kfdpool_revokev(pool, (struct kfdpool_revoke[]){
		{ .record = ex[0].record }, { .record = ex[1].record },
		{ .record = ex[2].record } }, 3) == 3 ? 0 : 4;
}

TEST_F(core, environment_chooses_the_transport)
{
	/*
	 * auto with several elements takes io_uring where the module has it,
	 * else the batch ioctls; uring alone is refused without it.
	 */
	static const struct {
		const char *value;
		enum kfdpool_batch_mode mode, mode_no_uring;
		int refused, refused_no_uring;
	} cases[] = {
		{ "uring", KFDPOOL_BATCH_URING, KFDPOOL_BATCH_URING, 0, EOPNOTSUPP },
		{ "ioctl", KFDPOOL_BATCH_IOCTL, KFDPOOL_BATCH_IOCTL },
		{ "single", KFDPOOL_BATCH_SINGLE, KFDPOOL_BATCH_SINGLE },
		{ "auto", KFDPOOL_BATCH_URING, KFDPOOL_BATCH_IOCTL },
		{ "bogus", KFDPOOL_BATCH_AUTO, KFDPOOL_BATCH_AUTO, EINVAL, EINVAL },
	};
	struct kfdpool_query q;
	unsigned int i;
	int status, uring;
	pid_t pid;

	ASSERT_EQ(0, kfdpool_query(self->ctl, &q));
	uring = !!(q.features & KFDPOOL_FEATURE_URING_CMD);
	TH_LOG("io_uring commands: %s", uring ? "yes" : "no");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			_exit(core_batch_child(self->pool, cases[i].value,
					       uring ? cases[i].mode :
						       cases[i].mode_no_uring,
					       uring ? cases[i].refused :
						       cases[i].refused_no_uring,
					       self->entry[0]));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) {
			TH_LOG("KFDPOOL_BATCH=%s: step %d", cases[i].value,
			       WEXITSTATUS(status));
		}
	}
	EXPECT_EQ(0, core_records(self->pool));
}

TEST_HARNESS_MAIN
