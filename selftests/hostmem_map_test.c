// SPDX-License-Identifier: GPL-2.0-only
/*
 * Mappings of KFDPOOL_IOC_ALLOC's dma-bufs: ordinary shared pages, not
 * VM_PFNMAP, in the allocating process and in an importer: both register
 * them as io_uring fixed buffers, read into them with READ_FIXED and pass
 * them through vmsplice (a VM_PFNMAP mapping of another exporter fails the
 * same calls, as a control).  COW mappings and ranges past the end are
 * refused.  A mapping outlives the dma-buf, the entry and the module.  vgem
 * imports the dma-buf (attach and DMA map) and holds it until it lets go.
 * With shmem's huge pages on, all of this holds for memory in huge folios.
 */
#include <sys/uio.h>
#include <liburing.h>

#include "kselftest_harness.h"
#include "hostmem_util.h"
#include "importer_util.h"
#include "kfdpool_state.h"
#include "reliability.h"

#define SZ	(1u << 20)
#define SPLICE	(64u << 10)

/*
 * What get_user_pages() users do with @p (@len bytes, holding the pattern
 * of @seed): register it as an io_uring fixed buffer, READ_FIXED the
 * pattern of @seed + 1 into its first @len / 2 bytes from a memfd, and
 * vmsplice its last SPLICE bytes into a pipe.  0, or -errno of the first
 * step that failed (@what names it).
 */
static int gup_users(void *p, size_t len, uint32_t seed, const char **what)
{
	struct iovec iov = { .iov_base = p, .iov_len = len };
	char *back = malloc(SPLICE), *src = malloc(len / 2);
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	int pipefd[2], memfd, ret;
	ssize_t n;

	if (!back || !src)
		return -ENOMEM;
	*what = "io_uring_queue_init";
	ret = io_uring_queue_init(4, &ring, 0);
	if (ret)
		goto out_free;
	*what = "io_uring_register_buffers";
	ret = io_uring_register_buffers(&ring, &iov, 1);
	if (ret)
		goto out_ring;

	*what = "READ_FIXED";
	hm_fill(src, len / 2, seed + 1);
	memfd = memfd_create("hostmem-src", MFD_CLOEXEC);
	if (memfd < 0 || write(memfd, src, len / 2) != (ssize_t)(len / 2)) {
		ret = -EIO;
		goto out_unreg;
	}
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read_fixed(sqe, memfd, p, len / 2, 0, 0);
	io_uring_submit(&ring);
	ret = io_uring_wait_cqe(&ring, &cqe);
	if (!ret) {
		ret = cqe->res == (int)(len / 2) ? 0 :
		      cqe->res < 0 ? cqe->res : -EIO;
		io_uring_cqe_seen(&ring, cqe);
	}
	close(memfd);
	if (!ret && !hm_check(p, len / 2, seed + 1))
		ret = -EILSEQ;
	if (ret)
		goto out_unreg;

	*what = "vmsplice";
	if (pipe2(pipefd, O_CLOEXEC)) {
		ret = -errno;
		goto out_unreg;
	}
	fcntl(pipefd[1], F_SETPIPE_SZ, SPLICE);
	iov.iov_base = (char *)p + len - SPLICE;
	iov.iov_len = SPLICE;
	n = vmsplice(pipefd[1], &iov, 1, 0);
	ret = n == SPLICE ? 0 : n < 0 ? -errno : -EIO;
	if (!ret && read(pipefd[0], back, SPLICE) != SPLICE)
		ret = -EIO;
	/* The last SPLICE bytes of the pattern of @seed. */
	if (!ret && memcmp(back, (char *)p + len - SPLICE, SPLICE))
		ret = -EILSEQ;
	close(pipefd[0]);
	close(pipefd[1]);
out_unreg:
	io_uring_unregister_buffers(&ring);
out_ring:
	io_uring_queue_exit(&ring);
out_free:
	free(back);
	free(src);
	return ret;
}

FIXTURE(map) {
	int pool, imp, buf, baseline;
	__u32 entry;
	void *p;
};

FIXTURE_SETUP(map)
{
	kfd_state_restore();
	self->pool = self->imp = self->buf = -1;
	self->p = MAP_FAILED;
	if (!hm_supported())
		SKIP(return, "no /dev/kfdpool with KFDPOOL_IOC_ALLOC");
	self->baseline = kfd_dmabuf_count_now();
	self->pool = kfd_pool_new("hostmem_map");
	ASSERT_LE(0, self->pool);
	self->imp = kfd_pool_export(self->pool);
	ASSERT_LE(0, self->imp);
	self->buf = hm_alloc(self->pool, SZ, 0, &self->entry);
	ASSERT_LE(0, self->buf);
	self->p = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_SHARED,
		       self->buf, 0);
	ASSERT_NE(MAP_FAILED, self->p);
	hm_fill(self->p, SZ, 11);
}

FIXTURE_TEARDOWN(map)
{
	if (self->p != MAP_FAILED)
		munmap(self->p, SZ);
	if (self->buf >= 0)
		close(self->buf);
	if (self->imp >= 0)
		close(self->imp);
	if (self->pool >= 0)
		close(self->pool);
	if (self->baseline >= 0)
		EXPECT_EQ(self->baseline, kfd_dmabuf_count(self->baseline));
}

TEST_F(map, exporter_pages_are_ordinary)
{
	const char *what = "";

	EXPECT_EQ(0, hm_is_pfnmap(self->p));
	EXPECT_EQ(0, gup_users(self->p, SZ, 11, &what)) TH_LOG("%s", what);
}

/* The importer, in another process, through its own import of the entry. */
TEST_F(map, importer_pages_are_ordinary)
{
	struct kfdpool_record rec;
	int sv[2], status;
	pid_t pid;

	ASSERT_EQ(0, kfd_export(self->pool, self->entry, 0, SZ, &rec));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct kfdpool_import imp;
		const char *what = "";
		int pool, ret;
		void *q;

		if (kfd_recv(sv[1], &pool, &rec, sizeof(rec)) || pool < 0 ||
		    kfd_import(pool, &rec, 0, &imp))
			_exit(10);
		q = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_SHARED, imp.fd,
			 0);
		if (q == MAP_FAILED)
			_exit(11);
		if (hm_is_pfnmap(q) != 0)
			_exit(12);
		if (!hm_check(q, SZ, 11))
			_exit(13);
		ret = gup_users(q, SZ, 11, &what);
		if (ret) {
			fprintf(stderr, "importer: %s: %s\n", what,
				strerror(-ret));
			_exit(14);
		}
		/* READ_FIXED wrote the pattern of 12 into the first half. */
		_exit(0);
	}
	ASSERT_EQ(0, kfd_send(sv[0], self->imp, &rec, sizeof(rec)));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("importer exit %d", WEXITSTATUS(status));
	/* What the importer's io_uring wrote, the exporter sees. */
	EXPECT_EQ(1, hm_check(self->p, SZ / 2, 12));
	close(sv[0]);
	close(sv[1]);
}

/* The same calls on a VM_PFNMAP mapping fail: the test can tell. */
TEST_F(map, control_pfnmap_is_refused)
{
	const char *what = "";
	int fd = kfd_dmabuf_new(SZ);
	void *q;

	if (fd < 0)
		SKIP(return, "no other dma-buf exporter");
	q = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, q);
	if (hm_is_pfnmap(q) != 1) {
		munmap(q, SZ);
		close(fd);
		SKIP(return, "this kernel's other exporter maps ordinary pages");
	}
	EXPECT_EQ(-EFAULT, gup_users(q, SZ, 0, &what)) TH_LOG("%s", what);
	EXPECT_STREQ("io_uring_register_buffers", what);
	munmap(q, SZ);
	close(fd);
}

TEST_F(map, cow_and_out_of_range_refused)
{
	char *q;

	EXPECT_EQ(MAP_FAILED, mmap(NULL, SZ, PROT_READ, MAP_PRIVATE,
				   self->buf, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, SZ, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE, self->buf, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, SZ, PROT_READ, MAP_SHARED,
				   self->buf, 4096));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 2 * SZ, PROT_READ, MAP_SHARED,
				   self->buf, 0));
	EXPECT_EQ(EINVAL, errno);
	/* An offset maps the right page. */
	q = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->buf, 8192);
	ASSERT_NE(MAP_FAILED, q);
	EXPECT_EQ(0, memcmp(q, (char *)self->p + 8192, 4096));
	munmap(q, 4096);
}

/*
 * A mapping holds the shmem file, not the dma-buf: with the fd closed and
 * the entry gone, the dma-buf is gone (and the module may go), and the
 * mapping still holds the bytes until munmap.
 */
TEST_F(map, mapping_outlives_dmabuf_and_module)
{
	long long shmem0, shmem1;

	close(self->buf);
	self->buf = -1;
	close(self->imp);
	self->imp = -1;
	close(self->pool);
	self->pool = -1;
	if (self->baseline >= 0)
		EXPECT_EQ(self->baseline, kfd_dmabuf_count(self->baseline));
	if (getenv("KFDPOOL_KO") && !access(getenv("KFDPOOL_KO"), R_OK)) {
		EXPECT_EQ(0, hm_unload());
		EXPECT_EQ(1, hm_check(self->p, SZ, 11));
		hm_fill(self->p, SZ, 13);
		EXPECT_EQ(1, hm_check(self->p, SZ, 13));
		EXPECT_EQ(0, hm_load());
	}
	EXPECT_EQ(1, hm_check(self->p, SZ, 11) || hm_check(self->p, SZ, 13));
	shmem0 = hm_meminfo("Shmem");
	munmap(self->p, SZ);
	self->p = MAP_FAILED;
	shmem1 = hm_meminfo("Shmem");
	/* Its pages went with the last mapping (KiB). */
	EXPECT_LE(shmem1 + (SZ >> 10) - 64, shmem0);
}

/* bufinfo: devices attached to the dma-buf of inode @ino, or -errno. */
static int attached(unsigned long ino)
{
	char line[512], name[64];
	unsigned long i;
	int n = -ENOENT;
	bool in = false;
	FILE *f = fopen(KFD_BUFINFO, "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %*s %*s %*s %63s %lu", name, &i) == 2 &&
		    line[0] != '\t') {
			in = i == ino && !strcmp(name, "kfdpool");
			continue;
		}
		if (in && sscanf(line, "Total %d devices attached", &n) == 1)
			break;
	}
	fclose(f);
	return n;
}

/*
 * vgem imports the dma-buf: PRIME_FD_TO_HANDLE attaches vgem's device and
 * maps the sg table for DMA.  The import holds the dma-buf (and so the
 * module) until vgem lets go of the handle.
 */
TEST_F(map, vgem_imports)
{
	struct drm_prime_handle ph = {};
	struct drm_gem_close gc = {};
	int vgem = kfd_vgem_fd(), n0, fd;
	struct stat st, st2;

	if (vgem < 0)
		SKIP(return, "no vgem");
	ASSERT_EQ(0, fstat(self->buf, &st));
	EXPECT_EQ(0, attached(st.st_ino));
	ph.fd = self->buf;
	ASSERT_EQ(0, ioctl(vgem, DRM_IOCTL_PRIME_FD_TO_HANDLE, &ph));
	EXPECT_EQ(1, attached(st.st_ino));
	/* vgem's re-export of the import is the same dma-buf. */
	ph.fd = -1;
	ph.flags = DRM_CLOEXEC | DRM_RDWR;
	ASSERT_EQ(0, ioctl(vgem, DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph));
	ASSERT_EQ(0, fstat(ph.fd, &st2));
	EXPECT_EQ(st.st_ino, st2.st_ino);
	EXPECT_EQ(1, kfd_dmabuf_check(ph.fd, SZ, 11, 0, SZ));
	close(ph.fd);

	/* Everything but vgem's handle goes: the dma-buf stays. */
	n0 = kfd_dmabuf_count_now();
	munmap(self->p, SZ);
	self->p = MAP_FAILED;
	close(self->buf);
	self->buf = -1;
	ASSERT_EQ(0, kfd_unpin(self->pool, self->entry, NULL));
	if (n0 >= 0)
		EXPECT_EQ(n0, kfd_dmabuf_count(n0));
	EXPECT_EQ(1, attached(st.st_ino));
	/* The module is held by the dma-buf; the pool files are closed. */
	close(self->imp);
	self->imp = -1;
	close(self->pool);
	self->pool = -1;
	EXPECT_EQ(-EWOULDBLOCK, syscall(SYS_delete_module, "kfdpool",
					O_NONBLOCK) ? -errno : 0);

	gc.handle = ph.handle;
	EXPECT_EQ(0, ioctl(vgem, DRM_IOCTL_GEM_CLOSE, &gc));
	if (n0 >= 0)
		EXPECT_EQ(n0 - 1, kfd_dmabuf_count(n0 - 1));
	fd = attached(st.st_ino);
	EXPECT_EQ(-ENOENT, fd);
}


/*
 * Load the selftests' importer module (an earlier test that failed may have
 * left it: load it afresh) and have it check @buf, which holds
 * pattern(@seed): 0, -ENOENT without the module, or -errno; *@c as it says.
 */
static int importer_run(int buf, __u32 seed, struct importer_check *c)
{
	const char *ko = getenv("KFDPOOL_IMPORTER_KO");
	int dev, ret;

	if (!ko || access(ko, R_OK))
		return -ENOENT;
	ret = rel_module_load(ko);
	if (ret == -EEXIST &&
	    !syscall(SYS_delete_module, "kfdpool_importer", O_NONBLOCK))
		ret = rel_module_load(ko);
	if (ret)
		return ret == -ENOENT ? -ENXIO : ret;
	dev = importer_dev_open();
	memset(c, 0, sizeof(*c));
	c->fd = buf;
	c->seed = seed;
	ret = dev < 0 ? -ENODEV : ioctl(dev, IMPORTER_CHECK, c) ? -errno : 0;
	if (dev >= 0)
		close(dev);
	if (syscall(SYS_delete_module, "kfdpool_importer", O_NONBLOCK) && !ret)
		ret = -errno;
	return ret;
}

/*
 * A device driver's view: kfdpool_importer attaches, maps the sg table and
 * reads and writes the buffer through its DMA addresses, then through vmap
 * between begin_cpu_access and end_cpu_access; the bytes must be right at
 * each step and come back to our mapping.
 */
TEST_F(map, importer_module_checks_bytes)
{
	struct importer_check c;
	struct stat st;
	int ret;

	ret = importer_run(self->buf, 11, &c);
	if (ret == -ENOENT)
		SKIP(return, "no KFDPOOL_IMPORTER_KO (make test-modules)");
	EXPECT_EQ(0, ret) TH_LOG("stage %u, offset %llu, %u segments", c.stage,
				 (unsigned long long)c.bad_offset, c.segments);
	EXPECT_EQ(0, c.stage);
	EXPECT_LE(1, c.segments);
	/* What the importer wrote last, through vmap. */
	EXPECT_EQ(1, hm_check(self->p, SZ, 13));
	/* Its attachment is gone. */
	ASSERT_EQ(0, fstat(self->buf, &st));
	EXPECT_EQ(0, attached(st.st_ino));
}

#define HUGE_SZ	(3u << 20)

/* ShmemHugePages (KiB) once it is @want, or what it is after 2 s. */
static long long huge_settle(long long want)
{
	long long v = hm_meminfo("ShmemHugePages");
	int i;

	for (i = 0; i < 200 && v != want; i++) {
		usleep(10000);
		v = hm_meminfo("ShmemHugePages");
	}
	return v;
}

/*
 * With shmem's huge pages on ("always", as an operator may set it for
 * shared memory), ALLOC's memory comes in huge folios: the buffer fills
 * its page array from each folio and holds each folio once, the last one
 * possibly past the buffer's end.  Mappings, get_user_pages() users and an
 * importer device see the same bytes, and every folio goes back with the
 * buffer.
 */
FIXTURE(huge) {
	int pool, buf, baseline;
	long long huge0;
	void *p;
};

FIXTURE_SETUP(huge)
{
	char policy[64];

	kfd_state_restore();
	self->pool = self->buf = self->baseline = -1;
	self->p = MAP_FAILED;
	if (!hm_supported())
		SKIP(return, "no /dev/kfdpool with KFDPOOL_IOC_ALLOC");
	if (kfd_shmem_thp_get(policy, sizeof(policy)))
		SKIP(return, "no shmem huge pages (CONFIG_TRANSPARENT_HUGEPAGE)");
	self->huge0 = hm_meminfo("ShmemHugePages");
	ASSERT_LE(0, self->huge0);
	ASSERT_EQ(0, kfd_shmem_thp_set("always"));
	self->baseline = kfd_dmabuf_count_now();
	self->pool = kfd_pool_new("hostmem_huge");
	ASSERT_LE(0, self->pool);
}

FIXTURE_TEARDOWN(huge)
{
	if (self->p != MAP_FAILED)
		munmap(self->p, HUGE_SZ);
	if (self->buf >= 0)
		close(self->buf);
	if (self->pool >= 0)
		close(self->pool);
	kfd_state_restore();
	if (self->baseline >= 0)
		EXPECT_EQ(self->baseline, kfd_dmabuf_count(self->baseline));
}

TEST_F(huge, folios_held_once_and_given_back)
{
	const char *what = "";
	struct importer_check c;
	__u32 entry;
	int ret;

	self->buf = hm_alloc(self->pool, HUGE_SZ, 0, &entry);
	ASSERT_LE(0, self->buf);
	/* The first 2 MiB, at least, are one folio. */
	EXPECT_LE(self->huge0 + 2048, hm_meminfo("ShmemHugePages"));
	self->p = mmap(NULL, HUGE_SZ, PROT_READ | PROT_WRITE, MAP_SHARED,
		       self->buf, 0);
	ASSERT_NE(MAP_FAILED, self->p);
	hm_fill(self->p, HUGE_SZ, 21);
	EXPECT_EQ(0, gup_users(self->p, HUGE_SZ, 21, &what)) TH_LOG("%s", what);
	hm_fill(self->p, HUGE_SZ, 21);
	ret = importer_run(self->buf, 21, &c);
	if (ret != -ENOENT) {
		EXPECT_EQ(0, ret) TH_LOG("stage %u, offset %llu, %u segments",
					 c.stage,
					 (unsigned long long)c.bad_offset,
					 c.segments);
		EXPECT_EQ(1, hm_check(self->p, HUGE_SZ, 23));
	}
	ASSERT_EQ(0, munmap(self->p, HUGE_SZ));
	self->p = MAP_FAILED;
	close(self->buf);
	self->buf = -1;
	/* The pool's end drops the entry: the buffer and its folios go. */
	close(self->pool);
	self->pool = -1;
	EXPECT_EQ(self->huge0, huge_settle(self->huge0));
}

TEST_HARNESS_MAIN
