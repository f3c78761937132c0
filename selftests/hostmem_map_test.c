// SPDX-License-Identifier: GPL-2.0-only
/*
 * Mappings of KFDPOOL_IOC_ALLOC's dma-bufs: the module's own pages, not
 * VM_PFNMAP, in the allocating process and in an importer: get_user_pages()
 * takes them (io_uring fixed buffers with READ_FIXED where the kernel's
 * io_uring accepts such a mapping, process_vm_readv/writev and vmsplice
 * everywhere; a VM_PFNMAP mapping of another exporter fails the same calls,
 * as a control).  COW mappings, ranges past the end and growing a mapping
 * are refused; MADV_REMOVE, MADV_DONTNEED, munmap and mremap leave every
 * CPU mapping and the device's view on the same bytes.  A mapping holds the
 * dma-buf (and so its charges and the module) until munmap.  vgem imports
 * the dma-buf (attach and DMA map) and holds it until it lets go.  The
 * buffer comes in PMD-sized folios, each mapped with one PMD where the
 * mapping's address allows.
 */
#include <grp.h>
#include <sys/resource.h>
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
 * of @seed): register it as an io_uring fixed buffer and READ_FIXED the
 * pattern of @seed + 1 into its first @len / 2 bytes from a memfd (where
 * io_uring refuses file mappings of its own accord, process_vm_writev
 * writes it instead), read it all back with process_vm_readv, and vmsplice
 * its last SPLICE bytes into a pipe.  0, or -errno of the first step that
 * failed (@what names it).
 */
static int gup_users(void *p, size_t len, uint32_t seed, const char **what)
{
	struct iovec iov = { .iov_base = p, .iov_len = len };
	char *back = malloc(len), *src = malloc(len / 2);
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	int pipefd[2], memfd, ret;
	bool registered = false;
	ssize_t n;

	if (!back || !src)
		return -ENOMEM;
	hm_fill(src, len / 2, seed + 1);
	*what = "io_uring_queue_init";
	ret = io_uring_queue_init(4, &ring, 0);
	if (ret)
		goto out_free;
	*what = "io_uring_register_buffers";
	ret = io_uring_register_buffers(&ring, &iov, 1);
	if (ret == -EOPNOTSUPP && hm_uring_refuses_file_maps()) {
		*what = "process_vm_writev";
		ret = hm_vm_rw(p, src, len / 2, true);
		goto check;
	}
	if (ret)
		goto out_ring;
	registered = true;

	*what = "READ_FIXED";
	memfd = memfd_create("hostmem-src", MFD_CLOEXEC);
	if (memfd < 0 || write(memfd, src, len / 2) != (ssize_t)(len / 2)) {
		ret = -EIO;
		goto out_ring;
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
check:
	if (!ret && !hm_check(p, len / 2, seed + 1))
		ret = -EILSEQ;
	if (ret)
		goto out_ring;

	/* (Kernels without CROSS_MEMORY_ATTACH, the debug one: READ_FIXED.) */
	*what = "process_vm_readv";
	ret = hm_vm_rw(p, back, len, false);
	if (!ret && memcmp(back, p, len))
		ret = -EILSEQ;
	if (ret == -ENOSYS && registered)
		ret = 0;
	if (ret)
		goto out_ring;

	*what = "vmsplice";
	if (pipe2(pipefd, O_CLOEXEC)) {
		ret = -errno;
		goto out_ring;
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
out_ring:
	if (registered)
		io_uring_unregister_buffers(&ring);
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
		/* The pattern of 12 is in the first half. */
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
 * In a child as an unprivileged uid under a memlock limit of SZ: ALLOC SZ,
 * map it, close the buffer and its pool.  The mapping keeps the charge (a
 * second ALLOC of SZ is refused) until munmap (then it fits).  0 if so.
 */
static int mapping_keeps_memlock(int ctl)
{
	struct rlimit rl = { SZ, SZ };
	int pool, buf, ret;
	void *p;

	if (setrlimit(RLIMIT_MEMLOCK, &rl) || setgroups(0, NULL) ||
	    setresgid(4250, 4250, 4250) || setresuid(4250, 4250, 4250))
		return 10;
	pool = kfd_pool_create(ctl, 0, "hostmem_map-lock", 0, NULL);
	if (pool < 0)
		return 11;
	buf = hm_alloc(pool, SZ, 0, NULL);
	if (buf < 0)
		return 12;
	p = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_SHARED, buf, 0);
	if (p == MAP_FAILED)
		return 13;
	close(buf);
	close(pool);
	pool = kfd_pool_create(ctl, 0, "hostmem_map-lock2", 0, NULL);
	if (pool < 0)
		return 14;
	ret = hm_alloc(pool, SZ, 0, NULL);
	if (ret != -ENOMEM)
		return 15;
	munmap(p, SZ);
	buf = hm_alloc(pool, SZ, 0, NULL);
	return buf < 0 ? 16 : 0;
}

/*
 * A mapping holds the dma-buf, and so the buffer, its memlock charge and
 * the module: with the fd closed and the pool gone, the dma-buf and the
 * charge stay until munmap, and the bytes with them.
 */
TEST_F(map, mapping_holds_the_buffer)
{
	int ret, status, ctl;
	pid_t pid;

	ctl = kfd_open();
	ASSERT_LE(0, ctl);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(mapping_keeps_memlock(ctl));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(ctl);

	close(self->buf);
	self->buf = -1;
	close(self->imp);
	self->imp = -1;
	close(self->pool);
	self->pool = -1;
	if (self->baseline >= 0)
		EXPECT_EQ(self->baseline + 1,
			  kfd_dmabuf_count(self->baseline + 1));
	ret = syscall(SYS_delete_module, "kfdpool", O_NONBLOCK) ? -errno : 0;
	EXPECT_EQ(-EWOULDBLOCK, ret);
	if (!ret)
		hm_load();	/* for the tests after this one */
	EXPECT_EQ(1, hm_check(self->p, SZ, 11));
	munmap(self->p, SZ);
	self->p = MAP_FAILED;
	if (self->baseline >= 0)
		EXPECT_EQ(self->baseline, kfd_dmabuf_count(self->baseline));
}

/*
 * What a process does to its mapping leaves it on the same pages:
 * MADV_DONTNEED drops its page table entries (the next touch maps the
 * same pages), a part unmapped and mapped again, a mapping shrunk and
 * moved; growing one past what it maps is refused.
 */
TEST_F(map, remapping_keeps_the_pages)
{
	char *p = self->p, *q, *r;

	/* (Kernels without ADVISE_SYSCALLS, the debug one, have none.) */
	if (madvise(p, SZ, MADV_DONTNEED))
		ASSERT_EQ(ENOSYS, errno);
	EXPECT_EQ(1, hm_check(p, SZ, 11));
	ASSERT_EQ(0, munmap(p + SZ / 4, SZ / 4));
	q = mmap(p + SZ / 4, SZ / 4, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, self->buf, SZ / 4);
	ASSERT_EQ(p + SZ / 4, q);
	EXPECT_EQ(1, hm_check(p, SZ, 11));

	q = mmap(NULL, SZ / 2, PROT_READ | PROT_WRITE, MAP_SHARED, self->buf,
		 0);
	ASSERT_NE(MAP_FAILED, q);
	EXPECT_EQ(MAP_FAILED, mremap(q, SZ / 2, SZ, 0));
	EXPECT_EQ(MAP_FAILED, mremap(q, SZ / 2, SZ, MREMAP_MAYMOVE));
	EXPECT_EQ(EFAULT, errno);
	r = mremap(q, SZ / 2, SZ / 4, 0);
	ASSERT_EQ(q, r);
	/* Moved past its old place, which is unmapped first. */
	r = mremap(q, SZ / 4, SZ / 4, MREMAP_MAYMOVE | MREMAP_FIXED,
		   q + SZ / 4);
	ASSERT_EQ(q + SZ / 4, r);
	EXPECT_EQ(1, hm_check(r, SZ / 4, 11));
	/* The same pages as the first mapping's. */
	hm_fill(r, SZ / 4, 12);
	EXPECT_EQ(1, hm_check(p, SZ / 4, 12));
	hm_fill(r, SZ / 4, 11);
	EXPECT_EQ(1, hm_check(p, SZ, 11));
	munmap(r, SZ / 4);
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

/*
 * MADV_REMOVE would punch a file's pages out; these are the buffer's, so
 * it is refused, in an importer's mapping and the owner's: the bytes stay
 * in every CPU mapping and in what a device sees.
 */
TEST_F(map, madv_remove_cannot_split_the_views)
{
	struct importer_check c;
	struct kfdpool_record rec;
	int sv[2], status, ret;
	pid_t pid;
	void *q;

	ASSERT_EQ(0, kfd_export(self->pool, self->entry, 0, SZ, &rec));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct kfdpool_import imp;
		int pool;

		if (kfd_recv(sv[1], &pool, &rec, sizeof(rec)) || pool < 0 ||
		    kfd_import(pool, &rec, 0, &imp))
			_exit(10);
		q = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_SHARED, imp.fd,
			 0);
		if (q == MAP_FAILED)
			_exit(11);
		if (!hm_check(q, SZ, 11))
			_exit(12);
		ret = madvise(q, SZ, MADV_REMOVE);
		if (!hm_check(q, SZ, 11))
			_exit(13);
		_exit(ret ? 0 : 14);
	}
	ASSERT_EQ(0, kfd_send(sv[0], self->imp, &rec, sizeof(rec)));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("importer exit %d (13: its bytes went, 14: MADV_REMOVE not refused)",
		       WEXITSTATUS(status));
	close(sv[0]);
	close(sv[1]);

	/* (ENODEV: the dma-buf's file is no regular file to punch.) */
	EXPECT_EQ(-1, madvise(self->p, SZ, MADV_REMOVE));
	EXPECT_EQ(1, hm_check(self->p, SZ, 11));
	q = mmap(NULL, SZ, PROT_READ, MAP_SHARED, self->buf, 0);
	ASSERT_NE(MAP_FAILED, q);
	EXPECT_EQ(1, hm_check(q, SZ, 11));
	munmap(q, SZ);
	/* The device reads the same bytes, and its writes reach us. */
	ret = importer_run(self->buf, 11, &c);
	if (ret != -ENOENT) {
		EXPECT_EQ(0, ret) TH_LOG("stage %u, offset %llu", c.stage,
					 (unsigned long long)c.bad_offset);
		EXPECT_EQ(1, hm_check(self->p, SZ, 13));
	}
}

#define HUGE_SZ	(3u << 20)
#define PMD_SZ	(2ul << 20)

/*
 * The buffer comes in PMD-sized folios where the page allocator has them,
 * and a mapping whose address matches their offsets maps each with one
 * PMD (FilePmdMapped in smaps): 3 MiB are a 2 MiB folio and smaller ones.
 * get_user_pages() users and an importer device see the same bytes; a
 * page dropped from the PMD comes back with the same bytes.  Kernels
 * without transparent huge pages map pages one by one.
 */
FIXTURE(huge) {
	int pool, buf, baseline;
	void *area, *p;
};

FIXTURE_SETUP(huge)
{
	kfd_state_restore();
	self->pool = self->buf = self->baseline = -1;
	self->area = MAP_FAILED;
	if (!hm_supported())
		SKIP(return, "no /dev/kfdpool with KFDPOOL_IOC_ALLOC");
	if (access("/sys/kernel/mm/transparent_hugepage", F_OK))
		SKIP(return, "no transparent huge pages (CONFIG_TRANSPARENT_HUGEPAGE)");
	self->baseline = kfd_dmabuf_count_now();
	self->pool = kfd_pool_new("hostmem_huge");
	ASSERT_LE(0, self->pool);
	/* An address range of which a 2 MiB aligned part is mapped. */
	self->area = mmap(NULL, HUGE_SZ + PMD_SZ, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, self->area);
	self->p = (void *)(((unsigned long)self->area + PMD_SZ - 1) &
			   ~(PMD_SZ - 1));
}

FIXTURE_TEARDOWN(huge)
{
	if (self->area != MAP_FAILED)
		munmap(self->area, HUGE_SZ + PMD_SZ);
	if (self->buf >= 0)
		close(self->buf);
	if (self->pool >= 0)
		close(self->pool);
	if (self->baseline >= 0)
		EXPECT_EQ(self->baseline, kfd_dmabuf_count(self->baseline));
}

TEST_F(huge, pmd_mapped)
{
	const char *what = "";
	struct importer_check c;
	char *p;
	int ret;

	self->buf = hm_alloc(self->pool, HUGE_SZ, 0, NULL);
	ASSERT_LE(0, self->buf);
	p = mmap(self->p, HUGE_SZ, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, self->buf, 0);
	ASSERT_EQ(self->p, p);
	hm_fill(p, HUGE_SZ, 21);
	EXPECT_EQ(PMD_SZ >> 10, hm_smaps_kb(p, "FilePmdMapped"));
	EXPECT_EQ(0, gup_users(p, HUGE_SZ, 21, &what)) TH_LOG("%s", what);
	hm_fill(p, HUGE_SZ, 21);
	ret = importer_run(self->buf, 21, &c);
	if (ret != -ENOENT) {
		EXPECT_EQ(0, ret) TH_LOG("stage %u, offset %llu, %u segments",
					 c.stage,
					 (unsigned long long)c.bad_offset,
					 c.segments);
		EXPECT_EQ(1, hm_check(p, HUGE_SZ, 23));
	}
	/* One page dropped: the PMD goes, every page maps again. */
	ASSERT_EQ(0, madvise(p + 4096, 4096, MADV_DONTNEED));
	EXPECT_EQ(1, hm_check(p, HUGE_SZ, 23));
	/* A mapping elsewhere, not aligned alike, maps the same pages. */
	p = mmap(NULL, HUGE_SZ - 4096, PROT_READ, MAP_SHARED, self->buf, 4096);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0, memcmp(p, (char *)self->p + 4096, HUGE_SZ - 4096));
	munmap(p, HUGE_SZ - 4096);
}

TEST_HARNESS_MAIN
