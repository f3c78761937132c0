// SPDX-License-Identifier: GPL-2.0-only
/*
 * io_uring passthrough (IORING_OP_URING_CMD) on pool fds: inline and
 * vectored commands, errors, ring sizes, fds closed in flight, and a
 * randomised run showing that single ioctls, batch ioctls and io_uring give
 * the same results and the same stats.
 */
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>

#include "kselftest_harness.h"
#include "kfdpool_util.h"
#include "kfdpool_uring_util.h"

#define SZ		(64 * 1024)
#define NENTRIES	8

/* Submit one command and wait for it: the CQE's res. */
static int run1(struct io_uring *ring, int fd, __u32 op, const void *payload,
		size_t len)
{
	struct io_uring_cqe *cqe;
	int ret;

	if (!kfd_uring_prep(ring, fd, op, payload, len, 1))
		return -EBUSY;
	ret = io_uring_submit(ring);
	if (ret != 1)
		return ret < 0 ? ret : -EIO;
	ret = io_uring_wait_cqe(ring, &cqe);
	if (ret)
		return ret;
	ret = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return ret;
}

static int u_export(struct io_uring *ring, int pool, __u32 entry, __u64 off,
		    __u64 size, struct kfdpool_record *rec)
{
	struct kfdpool_uring_export ue = {};

	ue.entry_id = entry;
	ue.offset = off;
	ue.size = size;
	ue.record_ptr = (uintptr_t)rec;
	return run1(ring, pool, KFDPOOL_URING_EXPORT, &ue, sizeof(ue));
}

static int u_record(struct io_uring *ring, int fd, __u32 op,
		    const struct kfdpool_record *rec, __u32 flags)
{
	struct kfdpool_uring_record ur = {};

	ur.record = *rec;
	ur.flags = flags;
	return run1(ring, fd, op, &ur, sizeof(ur));
}

static int u_release(struct io_uring *ring, int fd, __u32 entry)
{
	struct kfdpool_release rel = {};

	rel.entry_id = entry;
	return run1(ring, fd, KFDPOOL_URING_RELEASE, &rel, sizeof(rel));
}

static int u_batch(struct io_uring *ring, int fd, __u32 op, void *ops,
		   __u32 count, __u32 elem_size)
{
	struct kfdpool_batch b = {};

	b.ops = (uintptr_t)ops;
	b.count = count;
	b.elem_size = elem_size;
	return run1(ring, fd, op, &b, sizeof(b));
}

FIXTURE(ur) {
	struct io_uring ring;
	bool ring_ok;
	struct kfd_set s;
};

FIXTURE_SETUP(ur)
{
	int ret;

	self->ring_ok = false;
	KFD_SET_SETUP("uring_test", NENTRIES, SZ, -1, 0x10);
	ret = kfd_uring_init(&self->ring, 64);
	if (ret)
		SKIP(return, "%s", kfd_uring_skip_reason(ret));
	self->ring_ok = true;
}

FIXTURE_TEARDOWN(ur)
{
	if (self->ring_ok)
		io_uring_queue_exit(&self->ring);
	KFD_SET_TEARDOWN();
}

/* The module reports io_uring commands exactly where the kernel has them. */
TEST(feature_bit)
{
	const char *missing = kfd_uring_missing();
	struct kfdpool_query q;

	ASSERT_EQ(0, kfd_query(&q));
	TH_LOG("kernel: %s", missing ?: "io_uring commands");
	EXPECT_EQ(!missing, !!(q.features & KFDPOOL_FEATURE_URING_CMD));
	EXPECT_TRUE(q.features & KFDPOOL_FEATURE_BATCH);
}

TEST_F(ur, inline_commands)
{
	struct kfdpool_record rec = {};
	struct kfdpool_pool_stats st;
	int fd;

	ASSERT_EQ(0, u_export(&self->ring, self->s.pool, self->s.entry[2], 4096,
			      100, &rec));
	EXPECT_EQ(KFDPOOL_RECORD_MAGIC, REC(&rec)->magic);
	EXPECT_EQ(self->s.entry[2], REC(&rec)->entry_id);
	EXPECT_EQ(4096, REC(&rec)->offset);
	EXPECT_EQ(100, REC(&rec)->size);
	/* The record is good for the ioctl path too. */
	EXPECT_EQ(-ENXIO, kfd_import(self->s.imp, &rec, KFDPOOL_IMPORT_VALIDATE,
				     NULL));
	EXPECT_EQ(-ENXIO, u_record(&self->ring, self->s.imp,
				   KFDPOOL_URING_IMPORT, &rec,
				   KFDPOOL_IMPORT_VALIDATE));

	fd = u_record(&self->ring, self->s.imp, KFDPOOL_URING_IMPORT, &rec, 0);
	ASSERT_LE(0, fd);
	EXPECT_TRUE(kfd_cloexec(fd));
	EXPECT_EQ(SZ, kfd_dmabuf_size(fd));
	close(fd);
	EXPECT_EQ(0, u_record(&self->ring, self->s.imp, KFDPOOL_URING_IMPORT,
			      &rec, KFDPOOL_IMPORT_VALIDATE));
	ASSERT_EQ(0, kfd_stats(self->s.imp, &st));
	EXPECT_EQ(1, st.fd_imports);
	EXPECT_EQ(SZ, st.fd_imported_bytes);
	EXPECT_EQ(1, st.records);
	EXPECT_EQ(SZ, st.used_bytes);

	EXPECT_EQ(0, u_release(&self->ring, self->s.imp, self->s.entry[2]));
	EXPECT_EQ(-ENOENT, u_release(&self->ring, self->s.imp, self->s.entry[2]));
	EXPECT_EQ(0, u_record(&self->ring, self->s.pool, KFDPOOL_URING_REVOKE,
			      &rec, 0));
	EXPECT_EQ(-ENOENT, u_record(&self->ring, self->s.pool,
				    KFDPOOL_URING_REVOKE, &rec, 0));
	EXPECT_EQ(-ENOENT, u_record(&self->ring, self->s.imp,
				    KFDPOOL_URING_IMPORT, &rec, 0));
	ASSERT_EQ(0, kfd_stats(self->s.imp, &st));
	EXPECT_EQ(0, st.fd_imports);
	EXPECT_EQ(0, st.records);
}

TEST_F(ur, inline_bad_args)
{
	struct kfdpool_uring_export ue = {};
	struct kfdpool_uring_record ur = {};
	struct kfdpool_release rel = {};
	struct kfdpool_record rec;
	struct kfdpool_pool_stats st;

	ASSERT_EQ(0, kfd_export(self->s.pool, self->s.entry[0], 0, 1, &rec));
	ue.entry_id = self->s.entry[0];
	ue.size = 1;
	ue.record_ptr = (uintptr_t)&rec;
	ue.flags = 1;
	EXPECT_EQ(-EINVAL, run1(&self->ring, self->s.pool, KFDPOOL_URING_EXPORT,
				&ue, sizeof(ue)));
	ue.flags = 0;
	ue.size = 0;
	EXPECT_EQ(-EINVAL, run1(&self->ring, self->s.pool, KFDPOOL_URING_EXPORT,
				&ue, sizeof(ue)));
	ue.size = SZ + 1;
	EXPECT_EQ(-EINVAL, run1(&self->ring, self->s.pool, KFDPOOL_URING_EXPORT,
				&ue, sizeof(ue)));
	ue.size = 1;
	ue.entry_id = 0;
	EXPECT_EQ(-ENOENT, run1(&self->ring, self->s.pool, KFDPOOL_URING_EXPORT,
				&ue, sizeof(ue)));
	/* A record pointer that faults: -EFAULT and no record left. */
	ue.entry_id = self->s.entry[0];
	ue.record_ptr = 16;
	EXPECT_EQ(-EFAULT, run1(&self->ring, self->s.pool, KFDPOOL_URING_EXPORT,
				&ue, sizeof(ue)));
	ASSERT_EQ(0, kfd_stats(self->s.pool, &st));
	EXPECT_EQ(1, st.records);

	ur.record = rec;
	ur.pad = 1;
	EXPECT_EQ(-EINVAL, run1(&self->ring, self->s.imp, KFDPOOL_URING_IMPORT,
				&ur, sizeof(ur)));
	EXPECT_EQ(-EINVAL, run1(&self->ring, self->s.pool, KFDPOOL_URING_REVOKE,
				&ur, sizeof(ur)));
	ur.pad = 0;
	ur.flags = 2;
	EXPECT_EQ(-EINVAL, run1(&self->ring, self->s.imp, KFDPOOL_URING_IMPORT,
				&ur, sizeof(ur)));
	ur.flags = KFDPOOL_IMPORT_VALIDATE;
	EXPECT_EQ(-EINVAL, run1(&self->ring, self->s.pool, KFDPOOL_URING_REVOKE,
				&ur, sizeof(ur)));
	ur.flags = 0;
	REC(&ur.record)->magic = 1;
	EXPECT_EQ(-EINVAL, run1(&self->ring, self->s.imp, KFDPOOL_URING_IMPORT,
				&ur, sizeof(ur)));
	ur.record = rec;
	REC(&ur.record)->pool_id[15] ^= 1;
	EXPECT_EQ(-EXDEV, run1(&self->ring, self->s.imp, KFDPOOL_URING_IMPORT,
			       &ur, sizeof(ur)));
	ur.record = rec;
	REC(&ur.record)->generation += 5;
	EXPECT_EQ(-ESTALE, run1(&self->ring, self->s.imp, KFDPOOL_URING_IMPORT,
				&ur, sizeof(ur)));

	rel.entry_id = self->s.entry[0];
	rel.flags = 1;
	EXPECT_EQ(-EINVAL, run1(&self->ring, self->s.imp, KFDPOOL_URING_RELEASE,
				&rel, sizeof(rel)));
	rel.flags = 0;
	rel.pad = 1;
	EXPECT_EQ(-EINVAL, run1(&self->ring, self->s.imp, KFDPOOL_URING_RELEASE,
				&rel, sizeof(rel)));
}

struct submitter {
	struct io_uring *ring;
	pid_t tid;
	int ret;
};

static void *submit_thread(void *arg)
{
	struct submitter *sub = arg;

	sub->tid = gettid();
	sub->ret = io_uring_submit(sub->ring);
	return NULL;
}

/*
 * The nonblocking issue of a command never waits on a fault: an EXPORT
 * whose record goes to a page userfaultfd has not filled, and a vectored
 * batch whose array is such a page, are answered -EAGAIN inline and issued
 * again from io-wq, whose worker, not the submitter, takes the fault; then
 * each completes as it was sent.
 */
TEST_F(ur, nonblocking_issue_takes_no_fault)
{
	struct uffdio_api api = { .api = UFFD_API,
				  .features = UFFD_FEATURE_THREAD_ID };
	long page = sysconf(_SC_PAGESIZE);
	struct kfdpool_uring_export ue = {};
	struct uffdio_register reg = {};
	struct uffdio_zeropage zp = {};
	struct submitter sub = { .ring = &self->ring };
	struct pollfd pfd = { .events = POLLIN };
	struct uffdio_copy cp = {};
	struct kfdpool_batch b;
	struct io_uring_cqe *cqe;
	struct kfdpool_record rec;
	struct uffd_msg msg;
	pthread_t t;
	char *area;
	int uffd;
	/* A page of elements, the first a revoke, the rest never read. */
	static char src[65536] __attribute__((aligned(65536)));
	struct kfdpool_revoke rv;

	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		SKIP(return, "userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	area = mmap(NULL, page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, area);
	reg.range.start = (uintptr_t)area;
	reg.range.len = page;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg));

	ue.entry_id = self->s.entry[1];
	ue.size = 64;
	ue.record_ptr = (uintptr_t)area;
	ASSERT_NE(NULL, kfd_uring_prep(&self->ring, self->s.pool,
				       KFDPOOL_URING_EXPORT, &ue, sizeof(ue),
				       3));
	ASSERT_EQ(0, pthread_create(&t, NULL, submit_thread, &sub));
	pfd.fd = uffd;
	for (;;) {
		ASSERT_EQ(1, poll(&pfd, 1, 20000))
			TH_LOG("no fault on the record's page");
		/* poll() may wake for a fault woken before it is read. */
		if (read(uffd, &msg, sizeof(msg)) == sizeof(msg))
			break;
		ASSERT_EQ(EAGAIN, errno);
	}
	EXPECT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);
	/* Joinable only if the submitter is not the one waiting. */
	EXPECT_NE(0, msg.arg.pagefault.feat.ptid);
	EXPECT_NE(sub.tid, msg.arg.pagefault.feat.ptid)
		TH_LOG("the submitter took the fault in its nonblocking issue");
	zp.range.start = (uintptr_t)area;
	zp.range.len = page;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_ZEROPAGE, &zp));
	pthread_join(t, NULL);
	EXPECT_EQ(1, sub.ret);
	ASSERT_EQ(0, io_uring_wait_cqe(&self->ring, &cqe));
	EXPECT_EQ(0, cqe->res);
	io_uring_cqe_seen(&self->ring, cqe);
	memcpy(&rec, area, sizeof(rec));
	EXPECT_EQ(KFDPOOL_RECORD_MAGIC, REC(&rec)->magic);
	munmap(area, page);

	/* A vectored batch whose array userfaultfd has not filled: the same. */
	area = mmap(NULL, page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, area);
	reg.range.start = (uintptr_t)area;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg));
	memset(&b, 0, sizeof(b));
	b.ops = (uintptr_t)area;
	b.count = 1;
	b.elem_size = sizeof(struct kfdpool_revoke);
	ASSERT_NE(NULL, kfd_uring_prep(&self->ring, self->s.pool,
				       KFDPOOL_IOC_REVOKE_BATCH, &b, sizeof(b),
				       4));
	ASSERT_EQ(0, pthread_create(&t, NULL, submit_thread, &sub));
	for (;;) {
		ASSERT_EQ(1, poll(&pfd, 1, 20000))
			TH_LOG("no fault on the batch's page");
		if (read(uffd, &msg, sizeof(msg)) == sizeof(msg))
			break;
		ASSERT_EQ(EAGAIN, errno);
	}
	EXPECT_NE(sub.tid, msg.arg.pagefault.feat.ptid)
		TH_LOG("the submitter took the fault in its nonblocking issue");
	/* The element: a revoke of the record made above. */
	memset(&rv, 0, sizeof(rv));
	rv.record = rec;
	memcpy(src, &rv, sizeof(rv));
	cp.src = (uintptr_t)src;
	cp.dst = (uintptr_t)area;
	cp.len = page;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_COPY, &cp));
	pthread_join(t, NULL);
	EXPECT_EQ(1, sub.ret);
	ASSERT_EQ(0, io_uring_wait_cqe(&self->ring, &cqe));
	EXPECT_EQ(1, cqe->res);
	io_uring_cqe_seen(&self->ring, cqe);
	EXPECT_EQ(0, ((struct kfdpool_revoke *)area)->status);
	EXPECT_EQ(-ENOENT, kfd_revoke(self->s.pool, &rec));
	munmap(area, page);
	close(uffd);
}

TEST_F(ur, unknown_cmd_op)
{
	char payload[KFD_URING_CMD_BYTES] = {};

	EXPECT_EQ(-ENOTTY, run1(&self->ring, self->s.pool, 0, payload, 0));
	EXPECT_EQ(-ENOTTY, run1(&self->ring, self->s.pool, KFDPOOL_IOC_PIN,
				payload, 0));
	EXPECT_EQ(-ENOTTY, run1(&self->ring, self->s.pool, KFDPOOL_IOC_POOL_STATS,
				payload, 0));
	EXPECT_EQ(-ENOTTY, run1(&self->ring, self->s.imp,
				_IOW(KFDPOOL_IOC_MAGIC, 0x44, __u64), payload,
				0));
	EXPECT_EQ(-ENOTTY, run1(&self->ring, self->s.imp, 0xffffffff, payload,
				0));
}

/* Files that are not pools have no uring_cmd: io_uring refuses. */
TEST_F(ur, not_a_pool)
{
	struct kfdpool_release rel = {};
	int p[2], ctl, memfd;

	rel.entry_id = self->s.entry[0];
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	EXPECT_EQ(-EOPNOTSUPP, run1(&self->ring, p[0], KFDPOOL_URING_RELEASE,
				    &rel, sizeof(rel)));
	close(p[0]);
	close(p[1]);
	ctl = kfd_open();
	ASSERT_LE(0, ctl);
	EXPECT_EQ(-EOPNOTSUPP, run1(&self->ring, ctl, KFDPOOL_URING_RELEASE,
				    &rel, sizeof(rel)));
	close(ctl);
	memfd = syscall(SYS_memfd_create, "x", 1);
	EXPECT_EQ(-EOPNOTSUPP, run1(&self->ring, memfd, KFDPOOL_URING_RELEASE,
				    &rel, sizeof(rel)));
	close(memfd);
	EXPECT_EQ(-EOPNOTSUPP, run1(&self->ring, self->s.buf[0],
				    KFDPOOL_URING_RELEASE, &rel, sizeof(rel)));
	EXPECT_EQ(-EBADF, run1(&self->ring, 1 << 20, KFDPOOL_URING_RELEASE,
			       &rel, sizeof(rel)));
}

TEST_F(ur, needs_sqe128)
{
	struct kfdpool_release rel = {};
	struct io_uring small;

	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;

	ASSERT_EQ(0, io_uring_queue_init(4, &small, 0));
	rel.entry_id = self->s.entry[0];
	/* A 64-byte SQE has 16 bytes of payload: the release struct fits. */
	sqe = io_uring_get_sqe(&small);
	ASSERT_NE(NULL, sqe);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, self->s.imp, NULL, 0, 0);
	sqe->cmd_op = KFDPOOL_URING_RELEASE;
	memcpy(sqe->cmd, &rel, sizeof(rel));
	ASSERT_EQ(1, io_uring_submit(&small));
	ASSERT_EQ(0, io_uring_wait_cqe(&small, &cqe));
	EXPECT_EQ(-EINVAL, cqe->res);
	io_uring_cqe_seen(&small, cqe);
	io_uring_queue_exit(&small);
}

TEST_F(ur, import_fd_owner_only)
{
	struct kfdpool_export ex[2] = {};
	struct kfdpool_revoke rv[2] = {};
	struct kfdpool_record rec, out;
	struct kfdpool_pool_stats st;
	int fd;

	ASSERT_EQ(0, kfd_export(self->s.pool, self->s.entry[0], 0, 1, &rec));
	EXPECT_EQ(-EPERM, u_export(&self->ring, self->s.imp, self->s.entry[0], 0,
				   1, &out));
	EXPECT_EQ(-EPERM, u_record(&self->ring, self->s.imp, KFDPOOL_URING_REVOKE,
				   &rec, 0));
	ex[0].entry_id = self->s.entry[0];
	ex[0].size = 1;
	ex[1] = ex[0];
	EXPECT_EQ(-EPERM, u_batch(&self->ring, self->s.imp,
				  KFDPOOL_IOC_EXPORT_BATCH, ex, 2,
				  sizeof(ex[0])));
	rv[0].record = rec;
	rv[1].record = rec;
	EXPECT_EQ(-EPERM, u_batch(&self->ring, self->s.imp,
				  KFDPOOL_IOC_REVOKE_BATCH, rv, 2,
				  sizeof(rv[0])));
	ASSERT_EQ(0, kfd_stats(self->s.pool, &st));
	EXPECT_EQ(1, st.records);
	/* The import fd may import and release through the ring. */
	fd = u_record(&self->ring, self->s.imp, KFDPOOL_URING_IMPORT, &rec, 0);
	EXPECT_LE(0, fd);
	if (fd >= 0)
		close(fd);
	EXPECT_EQ(0, u_release(&self->ring, self->s.imp, self->s.entry[0]));
}

TEST_F(ur, vectored)
{
	struct kfdpool_export ex[32];
	struct kfdpool_import im[32];
	struct kfdpool_release rel[32];
	struct kfdpool_revoke rv[33];
	struct kfdpool_batch b = {};
	int i;

	memset(ex, 0, sizeof(ex));
	for (i = 0; i < 32; i++) {
		ex[i].entry_id = self->s.entry[i % NENTRIES];
		ex[i].offset = i * 8;
		ex[i].size = 8;
	}
	ex[31].size = 0;	/* one bad element */
	ASSERT_EQ(32, u_batch(&self->ring, self->s.pool,
			      KFDPOOL_IOC_EXPORT_BATCH, ex, 32,
			      sizeof(ex[0])));
	for (i = 0; i < 31; i++)
		EXPECT_EQ(0, ex[i].status);
	EXPECT_EQ(-EINVAL, ex[31].status);

	memset(im, 0, sizeof(im));
	for (i = 0; i < 31; i++)
		im[i].record = ex[i].record;
	ASSERT_EQ(31, u_batch(&self->ring, self->s.imp,
			      KFDPOOL_IOC_IMPORT_BATCH, im, 31,
			      sizeof(im[0])));
	for (i = 0; i < 31; i++) {
		EXPECT_EQ(0, im[i].status);
		EXPECT_TRUE(kfd_cloexec(im[i].fd));
		EXPECT_EQ(i * 8, im[i].offset);
		close(im[i].fd);
	}
	EXPECT_EQ(NENTRIES, kfd_fdinfo_num(self->s.imp, "kfdpool-fd-imports"));

	memset(rel, 0, sizeof(rel));
	for (i = 0; i < 31; i++)
		rel[i].entry_id = self->s.entry[i % NENTRIES];
	ASSERT_EQ(31, u_batch(&self->ring, self->s.imp,
			      KFDPOOL_IOC_RELEASE_BATCH, rel, 31,
			      sizeof(rel[0])));
	for (i = 0; i < 31; i++)
		EXPECT_EQ(0, rel[i].status);
	EXPECT_EQ(0, kfd_fdinfo_num(self->s.imp, "kfdpool-fd-imports"));

	memset(rv, 0, sizeof(rv));
	for (i = 0; i < 31; i++)
		rv[i].record = ex[i].record;
	rv[31].record = ex[0].record;	/* twice: -ENOENT */
	ASSERT_EQ(32, u_batch(&self->ring, self->s.pool,
			      KFDPOOL_IOC_REVOKE_BATCH, rv, 32,
			      sizeof(rv[0])));
	EXPECT_EQ(0, rv[0].status);
	EXPECT_EQ(-ENOENT, rv[31].status);
	EXPECT_EQ(0, kfd_fdinfo_num(self->s.pool, "kfdpool-records"));

	/* Descriptor errors as for the ioctl. */
	EXPECT_EQ(-EINVAL, u_batch(&self->ring, self->s.pool,
				   KFDPOOL_IOC_REVOKE_BATCH, rv,
				   KFD_BATCH_MAX + 1, sizeof(rv[0])));
	EXPECT_EQ(-EINVAL, u_batch(&self->ring, self->s.pool,
				   KFDPOOL_IOC_REVOKE_BATCH, rv, 0,
				   sizeof(rv[0])));
	EXPECT_EQ(-EINVAL, u_batch(&self->ring, self->s.pool,
				   KFDPOOL_IOC_REVOKE_BATCH, rv, 1, 8));
	/* Elements of at most 4096 bytes: rv is large enough to read. */
	EXPECT_EQ(-EINVAL, u_batch(&self->ring, self->s.pool,
				   KFDPOOL_IOC_REVOKE_BATCH, rv, 1, 8192));
	EXPECT_EQ(-EINVAL, u_batch(&self->ring, self->s.pool,
				   KFDPOOL_IOC_REVOKE_BATCH, rv, 1, 4097));
	EXPECT_EQ(-EFAULT, u_batch(&self->ring, self->s.pool,
				   KFDPOOL_IOC_REVOKE_BATCH, (void *)16, 1,
				   sizeof(rv[0])));
	b.ops = (uintptr_t)rv;
	b.count = 1;
	b.elem_size = sizeof(rv[0]);
	b.flags = 1;
	EXPECT_EQ(-EINVAL, run1(&self->ring, self->s.pool,
				KFDPOOL_IOC_REVOKE_BATCH, &b, sizeof(b)));
	b.flags = 0;
	b.pad = 1;
	EXPECT_EQ(-EINVAL, run1(&self->ring, self->s.pool,
				KFDPOOL_IOC_REVOKE_BATCH, &b, sizeof(b)));
}

/* An export whose record lands in a page not yet faulted in. */
TEST_F(ur, export_to_fresh_page)
{
	struct kfdpool_record *rec;
	struct kfdpool_pool_stats st;

	rec = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, rec);
	ASSERT_EQ(0, u_export(&self->ring, self->s.pool, self->s.entry[0], 0, 64,
			      rec));
	EXPECT_EQ(KFDPOOL_RECORD_MAGIC, REC(rec)->magic);
	ASSERT_EQ(0, kfd_stats(self->s.pool, &st));
	EXPECT_EQ(1, st.records);
	EXPECT_EQ(SZ, st.used_bytes);
	EXPECT_EQ(0, kfd_import(self->s.imp, rec, 0, NULL));
	munmap(rec, 4096);
}

/* Rings of 1 to 4096 entries, each filled completely. */
TEST_F_TIMEOUT(ur, ring_sizes, 300)
{
	struct kfdpool_uring_record ur = {};
	struct kfdpool_record rec;
	unsigned int size;

	ASSERT_EQ(0, kfd_export(self->s.pool, self->s.entry[1], 0, 4096, &rec));
	ASSERT_EQ(0, kfd_import(self->s.imp, &rec, 0, NULL));
	ur.record = rec;
	ur.flags = KFDPOOL_IMPORT_VALIDATE;
	for (size = 1; size <= 4096; size *= 2) {
		struct io_uring ring;
		struct io_uring_cqe *cqe;
		unsigned int i, ok = 0, seen = 0;

		ASSERT_EQ(0, kfd_uring_init(&ring, size));
		for (i = 0; i < size; i++) {
			struct io_uring_sqe *sqe;

			sqe = kfd_uring_prep(&ring, self->s.imp,
					     KFDPOOL_URING_IMPORT, &ur,
					     sizeof(ur), i);
			ASSERT_NE(NULL, sqe);
			if (i % 7 == 3)
				sqe->flags |= IOSQE_ASYNC;
		}
		ASSERT_EQ(size, io_uring_submit(&ring));
		while (seen < size) {
			ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
			ok += cqe->res == 0;
			seen++;
			io_uring_cqe_seen(&ring, cqe);
		}
		EXPECT_EQ(size, ok);
		io_uring_queue_exit(&ring);
	}
	EXPECT_EQ(0, kfd_release(self->s.imp, self->s.entry[1]));
}

/*
 * The pool's fds are closed while their SQEs are in flight (forced to
 * io_uring's workers): every command completes, with an fd or, once the
 * owner's close ended the pool, with ENODEV, and once the fds it returned
 * are closed nothing is left.  Older io_uring takes each file at
 * submission; newer io_uring takes it when a worker issues the command,
 * which then finds the fd closed (-EBADF) and never reaches the module.
 */
TEST_F_TIMEOUT(ur, close_in_flight, 300)
{
	struct kfdpool_uring_record ur = {};
	struct kfdpool_record rec[4];
	struct kfdpool_import *im;
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	int i, n = 256, seen = 0, fds = 0, ended = 0, badf = 0, batch = -1;

	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, kfd_export(self->s.pool, self->s.entry[i], 0, 4096,
					&rec[i]));
	im = calloc(64, sizeof(*im));
	for (i = 0; i < 64; i++)
		im[i].record = rec[i % 4];
	ASSERT_EQ(0, kfd_uring_init(&ring, n + 1));
	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe;

		ur.record = rec[i % 4];
		sqe = kfd_uring_prep(&ring, self->s.imp, KFDPOOL_URING_IMPORT,
				     &ur, sizeof(ur), i);
		ASSERT_NE(NULL, sqe);
		sqe->flags |= IOSQE_ASYNC;
	}
	{
		struct kfdpool_batch b = {};
		struct io_uring_sqe *sqe;

		b.ops = (uintptr_t)im;
		b.count = 64;
		b.elem_size = sizeof(*im);
		sqe = kfd_uring_prep(&ring, self->s.imp,
				     KFDPOOL_IOC_IMPORT_BATCH, &b, sizeof(b),
				     1000);
		ASSERT_NE(NULL, sqe);
		sqe->flags |= IOSQE_ASYNC;
	}
	ASSERT_EQ(n + 1, io_uring_submit(&ring));
	/* Close every fd of the pool and the dma-bufs right away. */
	close(self->s.imp);
	self->s.imp = -1;
	close(self->s.pool);
	self->s.pool = -1;
	for (i = 0; i < NENTRIES; i++) {
		close(self->s.buf[i]);
		self->s.buf[i] = -1;
	}
	while (seen < n + 1) {
		ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
		if (cqe->user_data == 1000) {
			batch = cqe->res;
			EXPECT_TRUE(batch == -ENODEV || batch == -EBADF ||
				    (batch >= 0 && batch <= 64))
				TH_LOG("batch: %d", batch);
		} else if (cqe->res >= 0) {
			fds++;
			close(cqe->res);
		} else if (cqe->res == -EBADF) {
			badf++;
		} else {
			EXPECT_EQ(-ENODEV, cqe->res);
			ended++;
		}
		seen++;
		io_uring_cqe_seen(&ring, cqe);
	}
	TH_LOG("%d imports, %d ended, %d closed before issue; batch %d", fds,
	       ended, badf, batch);
	EXPECT_EQ(n, fds + ended + badf);
	for (i = 0; i < batch; i++) {
		EXPECT_EQ(0, im[i].status);
		if (im[i].fd >= 0)
			close(im[i].fd);
	}
	io_uring_queue_exit(&ring);
	free(im);
}

/* ------------------------------------------------------------------ */
/* Singly, by batch ioctl, by io_uring: same results, same stats.       */
/* ------------------------------------------------------------------ */

enum { M_SINGLE, M_BATCH, M_URING, NMODES };
enum { OP_EXPORT, OP_IMPORT, OP_VALIDATE, OP_RELEASE, OP_REVOKE };

#define MAXREC	20000
#define MAXK	64

struct side {
	int pool;
	int imp;
	int entry[NENTRIES];
	struct kfdpool_record *rec;	/* MAXREC, by logical index */
};

/* One element of a round, the same for every mode. */
struct op {
	__u32 entry;		/* index into entry[], NENTRIES: a bad id */
	__u64 offset, size;	/* export */
	int rec;		/* logical record, import and revoke */
	int mangle;		/* 0 none, 1 nonce, 2 magic, 3 generation */
};

/* The outcome of an element, compared across modes. */
struct res {
	int status;
	__u64 offset, size, cookie, entry_size;
};

static struct kfdpool_record op_record(struct side *s, const struct op *o)
{
	struct kfdpool_record r = s->rec[o->rec];

	if (o->mangle == 1)
		REC(&r)->nonce[3] ^= 0x40;
	else if (o->mangle == 2)
		REC(&r)->magic ^= 0x100;
	else if (o->mangle == 3)
		REC(&r)->generation ^= 0x8000;
	return r;
}

static __u32 op_entry(struct side *s, const struct op *o)
{
	return o->entry < NENTRIES ? (__u32)s->entry[o->entry] : 0x7fffffff;
}

/* Fill the batch element @i of @kind for mode side @s. */
static void fill_elem(struct side *s, int kind, const struct op *o,
		      void *arr, int i)
{
	switch (kind) {
	case OP_EXPORT: {
		struct kfdpool_export *e = (struct kfdpool_export *)arr + i;

		memset(e, 0, sizeof(*e));
		e->entry_id = op_entry(s, o);
		e->offset = o->offset;
		e->size = o->size;
		break;
	}
	case OP_IMPORT:
	case OP_VALIDATE: {
		struct kfdpool_import *e = (struct kfdpool_import *)arr + i;

		memset(e, 0, sizeof(*e));
		e->record = op_record(s, o);
		e->flags = kind == OP_VALIDATE ? KFDPOOL_IMPORT_VALIDATE : 0;
		e->fd = -1;	/* a failed single ioctl copies nothing back */
		break;
	}
	case OP_RELEASE: {
		struct kfdpool_release *e = (struct kfdpool_release *)arr + i;

		memset(e, 0, sizeof(*e));
		e->entry_id = op_entry(s, o);
		break;
	}
	default: {
		struct kfdpool_revoke *e = (struct kfdpool_revoke *)arr + i;

		memset(e, 0, sizeof(*e));
		e->record = op_record(s, o);
		break;
	}
	}
}

static const unsigned long batch_cmd[] = {
	KFDPOOL_IOC_EXPORT_BATCH, KFDPOOL_IOC_IMPORT_BATCH,
	KFDPOOL_IOC_IMPORT_BATCH, KFDPOOL_IOC_RELEASE_BATCH,
	KFDPOOL_IOC_REVOKE_BATCH,
};
static const unsigned long single_cmd[] = {
	KFDPOOL_IOC_EXPORT, KFDPOOL_IOC_IMPORT, KFDPOOL_IOC_IMPORT,
	KFDPOOL_IOC_RELEASE, KFDPOOL_IOC_REVOKE,
};
static const size_t elem_size[] = {
	sizeof(struct kfdpool_export), sizeof(struct kfdpool_import),
	sizeof(struct kfdpool_import), sizeof(struct kfdpool_release),
	sizeof(struct kfdpool_revoke),
};

/* Read element @i's outcome; close any fd it returned. */
static void read_elem(struct side *s, int kind, void *arr, int i,
		      struct res *r, int *newrec)
{
	memset(r, 0, sizeof(*r));
	switch (kind) {
	case OP_EXPORT: {
		struct kfdpool_export *e = (struct kfdpool_export *)arr + i;

		r->status = e->status;
		if (!e->status)
			s->rec[(*newrec)++] = e->record;
		break;
	}
	case OP_IMPORT:
	case OP_VALIDATE: {
		struct kfdpool_import *e = (struct kfdpool_import *)arr + i;

		r->status = e->status;
		if (!e->status) {
			r->offset = e->offset;
			r->size = e->size;
			r->cookie = e->cookie;
			r->entry_size = e->entry_size;
		}
		if (e->fd >= 0)
			close(e->fd);
		break;
	}
	case OP_RELEASE:
		r->status = ((struct kfdpool_release *)arr + i)->status;
		break;
	default:
		r->status = ((struct kfdpool_revoke *)arr + i)->status;
		break;
	}
}

static int op_fd(struct side *s, int kind)
{
	return kind == OP_EXPORT || kind == OP_REVOKE ? s->pool : s->imp;
}

/* Run a round of @k elements of @kind in mode @m; outcomes to @r. */
static int run_round(struct side *s, int m, int kind, const struct op *ops,
		     int k, struct res *r, int newrec, struct io_uring *ring,
		     int round)
{
	char arr[MAXK * sizeof(struct kfdpool_import)];
	struct kfdpool_record urec[MAXK];
	int i, fd = op_fd(s, kind), nr = newrec;

	for (i = 0; i < k; i++)
		fill_elem(s, kind, &ops[i], arr, i);

	if (m == M_SINGLE) {
		for (i = 0; i < k; i++) {
			char *el = arr + i * elem_size[kind];
			int ret = kfd_ioctl(fd, single_cmd[kind], el);

			/* The single ioctl reports errors as its result. */
			if (kind == OP_EXPORT)
				((struct kfdpool_export *)el)->status = ret;
			else if (kind == OP_RELEASE)
				((struct kfdpool_release *)el)->status = ret;
			else if (kind == OP_REVOKE)
				((struct kfdpool_revoke *)el)->status = ret;
			else
				((struct kfdpool_import *)el)->status = ret;
		}
	} else if (m == M_BATCH || (round & 1)) {
		struct kfdpool_batch b = {};
		int ret;

		b.ops = (uintptr_t)arr;
		b.count = k;
		b.elem_size = elem_size[kind];
		if (m == M_BATCH)
			ret = ioctl(fd, batch_cmd[kind], &b);
		else
			ret = run1(ring, fd, batch_cmd[kind], &b, sizeof(b));
		if (ret != k)
			return -1000 + ret;
	} else {
		/* Inline: one SQE per element, all submitted together. */
		struct io_uring_cqe *cqe;
		int seen = 0;

		memset(urec, 0, sizeof(urec));
		for (i = 0; i < k; i++) {
			union {
				struct kfdpool_uring_export ue;
				struct kfdpool_uring_record ur;
				struct kfdpool_release rel;
			} p;
			__u32 op;
			size_t len;

			memset(&p, 0, sizeof(p));
			if (kind == OP_EXPORT) {
				struct kfdpool_export *e =
					(struct kfdpool_export *)arr + i;

				p.ue.entry_id = e->entry_id;
				p.ue.offset = e->offset;
				p.ue.size = e->size;
				p.ue.record_ptr = (uintptr_t)&urec[i];
				op = KFDPOOL_URING_EXPORT;
				len = sizeof(p.ue);
			} else if (kind == OP_RELEASE) {
				p.rel = ((struct kfdpool_release *)arr)[i];
				op = KFDPOOL_URING_RELEASE;
				len = sizeof(p.rel);
			} else if (kind == OP_REVOKE) {
				p.ur.record =
					((struct kfdpool_revoke *)arr)[i].record;
				op = KFDPOOL_URING_REVOKE;
				len = sizeof(p.ur);
			} else {
				struct kfdpool_import *e =
					(struct kfdpool_import *)arr + i;

				p.ur.record = e->record;
				p.ur.flags = e->flags;
				op = KFDPOOL_URING_IMPORT;
				len = sizeof(p.ur);
			}
			if (!kfd_uring_prep(ring, fd, op, &p, len, i))
				return -2000;
		}
		if (io_uring_submit(ring) != k)
			return -3000;
		while (seen < k) {
			int idx, res;

			if (io_uring_wait_cqe(ring, &cqe))
				return -4000;
			idx = cqe->user_data;
			res = cqe->res;
			io_uring_cqe_seen(ring, cqe);
			seen++;
			if (kind == OP_EXPORT) {
				struct kfdpool_export *e =
					(struct kfdpool_export *)arr + idx;

				e->status = res;
				if (!res)
					e->record = urec[idx];
			} else if (kind == OP_RELEASE) {
				((struct kfdpool_release *)arr)[idx].status =
					res;
			} else if (kind == OP_REVOKE) {
				((struct kfdpool_revoke *)arr)[idx].status =
					res;
			} else {
				struct kfdpool_import *e =
					(struct kfdpool_import *)arr + idx;

				/* Inline imports return only the fd. */
				e->status = res < 0 ? res : 0;
				e->fd = kind == OP_IMPORT && res >= 0 ?
					res : -1;
				if (res >= 0) {
					struct kfdpool_import v = {};

					/* Fetch the outputs to compare. */
					v.record = e->record;
					v.flags = KFDPOOL_IMPORT_VALIDATE;
					if (!kfd_ioctl(s->imp,
						       KFDPOOL_IOC_IMPORT, &v)) {
						e->offset = v.offset;
						e->size = v.size;
						e->cookie = v.cookie;
						e->entry_size = v.entry_size;
					}
				}
			}
		}
	}
	for (i = 0; i < k; i++)
		read_elem(s, kind, arr, i, &r[i], &nr);
	return nr;
}

static bool stats_equal(struct __test_metadata *_metadata,
			struct side *s, int round)
{
	struct kfdpool_pool_stats a[NMODES], ai[NMODES];
	int m;
	bool ok = true;

	for (m = 0; m < NMODES; m++) {
		if (kfd_stats(s[m].pool, &a[m]) || kfd_stats(s[m].imp, &ai[m]))
			return false;
	}
	for (m = 1; m < NMODES; m++) {
#define SAME(f) do {							\
	if (a[0].f != a[m].f || ai[0].f != ai[m].f) {			\
		TH_LOG("round %d mode %d: " #f " %llu != %llu", round,	\
		       m, (unsigned long long)a[0].f,			\
		       (unsigned long long)a[m].f);			\
		ok = false;						\
	}								\
} while (0)
		SAME(reserved_bytes);
		SAME(reserved_high);
		SAME(used_bytes);
		SAME(used_high);
		SAME(draining_bytes);
		SAME(imported_bytes);
		SAME(fd_imported_bytes);
		SAME(entries);
		SAME(draining_entries);
		SAME(records);
		SAME(import_fds);
		SAME(fd_imports);
#undef SAME
	}
	return ok;
}

TEST_F_TIMEOUT(ur, three_ways_same_results, 600)
{
	struct side s[NMODES];
	struct op ops[MAXK];
	struct res r[NMODES][MAXK];
	uint64_t seed = 0x1badcafe2024ULL;
	int m, i, nrec = 0, total = 0, round, mismatches = 0;
	int counts[5] = {};

	for (m = 0; m < NMODES; m++) {
		s[m].pool = kfd_pool_new("three-ways");
		ASSERT_LE(0, s[m].pool);
		s[m].imp = kfd_pool_export(s[m].pool);
		ASSERT_LE(0, s[m].imp);
		for (i = 0; i < NENTRIES; i++) {
			s[m].entry[i] = kfd_pin(s[m].pool, self->s.buf[i],
						0x10 + i);
			ASSERT_LT(0, s[m].entry[i]);
		}
		s[m].rec = calloc(MAXREC, sizeof(*s[m].rec));
		ASSERT_NE(NULL, s[m].rec);
	}

	for (round = 0; total < 10000; round++) {
		int kind, k, newrec[NMODES];
		uint64_t x = kfd_rand(&seed) % 100;

		if (nrec == 0 || x < 30)
			kind = OP_EXPORT;
		else if (x < 55)
			kind = OP_IMPORT;
		else if (x < 65)
			kind = OP_VALIDATE;
		else if (x < 82)
			kind = OP_RELEASE;
		else
			kind = OP_REVOKE;
		if (kind == OP_EXPORT && nrec + MAXK > MAXREC)
			kind = OP_REVOKE;
		k = 1 + kfd_rand(&seed) % MAXK;
		if (kind == OP_RELEASE && k > NENTRIES + 1)
			k = NENTRIES + 1;	/* distinct targets */

		for (i = 0; i < k; i++) {
			struct op *o = &ops[i];

			memset(o, 0, sizeof(*o));
			o->entry = kfd_rand(&seed) % (NENTRIES + 1);
			if (kind == OP_RELEASE)
				o->entry = i;	/* NENTRIES: a bad id */
			o->offset = (kfd_rand(&seed) % (SZ / 4096 + 1)) * 4096;
			o->size = kfd_rand(&seed) % 17 ? 1 + kfd_rand(&seed) % 8192 : 0;
			o->rec = nrec ? kfd_rand(&seed) % nrec : 0;
			if (kind == OP_REVOKE)
				/* distinct: consecutive logical records */
				o->rec = nrec ? (ops[0].rec + i) % nrec : 0;
			o->mangle = kfd_rand(&seed) % 10 == 0 ?
				1 + kfd_rand(&seed) % 3 : 0;
		}
		if (kind == OP_REVOKE && k > nrec)
			k = nrec;

		for (m = 0; m < NMODES; m++) {
			newrec[m] = run_round(&s[m], m, kind, ops, k, r[m],
					      nrec, &self->ring, round);
			ASSERT_LE(0, newrec[m]) {
				TH_LOG("round %d mode %d kind %d: %d", round,
				       m, kind, newrec[m]);
			}
		}
		for (m = 1; m < NMODES; m++) {
			ASSERT_EQ(newrec[0], newrec[m]);
			for (i = 0; i < k; i++) {
				if (!memcmp(&r[0][i], &r[m][i], sizeof(r[0][i])))
					continue;
				if (mismatches++ < 10)
					TH_LOG("round %d kind %d elem %d: mode %d status %d, single %d",
					       round, kind, i, m,
					       r[m][i].status, r[0][i].status);
			}
		}
		nrec = newrec[0];
		total += k;
		counts[kind] += k;
		if (!stats_equal(_metadata, s, round))
			mismatches++;
	}
	EXPECT_EQ(0, mismatches);
	TH_LOG("%d rounds, %d operations per mode (export %d, import %d, validate %d, release %d, revoke %d), %d records made",
	       round, total, counts[0], counts[1], counts[2], counts[3],
	       counts[4], nrec);
	{
		struct kfdpool_pool_stats st;

		ASSERT_EQ(0, kfd_stats(s[0].imp, &st));
		TH_LOG("end: %u records, %llu used, %u entries held by the import fd",
		       st.records, (unsigned long long)st.used_bytes,
		       st.fd_imports);
	}
	for (m = 0; m < NMODES; m++) {
		close(s[m].imp);
		close(s[m].pool);
		free(s[m].rec);
	}
}

TEST_HARNESS_MAIN
