// SPDX-License-Identifier: GPL-2.0-only
/*
 * KFDPOOL_IOC_POOL_LIST: the pools a caller may see, in pages, with the
 * figures of POOL_STATS; every field with a bad value; who sees what; pools
 * coming and going between pages.  And fdinfo's kfdpool-file-id, which
 * tells fds that share one open file from fds that do not.  Zombie pools
 * are listed, and callers of the first version get its elements.
 */
#include <pthread.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "kselftest_harness.h"
#include "kfdpool_util.h"

#define INFO_SIZE	sizeof(struct kfdpool_pool_info)

static int list_call(int ctl, struct kfdpool_pool_list *l)
{
	return kfd_ioctl(ctl, KFDPOOL_IOC_POOL_LIST, l);
}

/*
 * Every pool the caller sees, @page at a time, into @out (up to @max);
 * returns how many, or -errno.  *@scope gets the last call's scope.
 */
static int list_all(int ctl, struct kfdpool_pool_info *out, int max,
		    unsigned int page, unsigned int *scope)
{
	struct kfdpool_pool_list l = {};
	int n = 0, ret;

	do {
		if ((int)page > max - n)
			return -ENOSPC;
		l.pools = (uintptr_t)(out + n);
		l.count = page;
		l.info_size = INFO_SIZE;
		l.cursor = l.next_cursor;
		ret = list_call(ctl, &l);
		if (ret)
			return ret;
		n += l.count;
		if (scope)
			*scope = l.scope;
	} while (l.next_cursor);
	return n;
}

/* How many of @n listed pools have @id. */
static int count_id(const struct kfdpool_pool_info *p, int n, const __u8 *id)
{
	int i, c = 0;

	for (i = 0; i < n; i++)
		c += !memcmp(p[i].id, id, KFDPOOL_ID_LEN);
	return c;
}

static const struct kfdpool_pool_info *find_id(const struct kfdpool_pool_info *p,
					       int n, const __u8 *id)
{
	int i;

	for (i = 0; i < n; i++)
		if (!memcmp(p[i].id, id, KFDPOOL_ID_LEN))
			return &p[i];
	return NULL;
}

#define NPOOLS	5
#define LISTMAX	1024

FIXTURE(list) {
	int ctl;
	int pool[NPOOLS];
	__u8 id[NPOOLS][KFDPOOL_ID_LEN];
	int imp, buf, baseline;
	struct kfdpool_pool_info *info;
};

FIXTURE_SETUP(list)
{
	struct kfdpool_record rec, gone;
	char name[16];
	int i, e;

	self->imp = self->buf = -1;
	for (i = 0; i < NPOOLS; i++)
		self->pool[i] = -1;
	self->info = calloc(LISTMAX, INFO_SIZE);
	ASSERT_NE(NULL, self->info);
	self->baseline = kfd_dmabuf_count_now();
	self->ctl = kfd_open();
	if (self->ctl < 0)
		SKIP(return, "/dev/kfdpool: %s", strerror(-self->ctl));
	for (i = 0; i < NPOOLS; i++) {
		snprintf(name, sizeof(name), "list-%d", i);
		self->pool[i] = kfd_pool_create(self->ctl, (i + 1) << 20, name,
						KFDPOOL_HANDLE_TYPE_FD, self->id[i]);
		ASSERT_LE(0, self->pool[i]);
	}
	/* Pool 1 gets figures: an entry, a record, an importer. */
	self->buf = kfd_dmabuf_new(65536);
	if (self->buf < 0)
		return;
	e = kfd_pin(self->pool[1], self->buf, 7);
	ASSERT_LT(0, e);
	ASSERT_EQ(0, kfd_export(self->pool[1], e, 4096, 8192, &rec));
	/* Pool 2: its entry's only record revoked: used 0, used_high not. */
	e = kfd_pin(self->pool[2], self->buf, 0);
	ASSERT_LT(0, e);
	ASSERT_EQ(0, kfd_export(self->pool[2], e, 0, 4096, &gone));
	ASSERT_EQ(0, kfd_revoke(self->pool[2], &gone));
	self->imp = kfd_pool_export(self->pool[1]);
	ASSERT_LE(0, self->imp);
	ASSERT_EQ(0, kfd_import(self->imp, &rec, 0, NULL));
}

FIXTURE_TEARDOWN(list)
{
	int i;

	if (self->imp >= 0)
		close(self->imp);
	if (self->buf >= 0)
		close(self->buf);
	for (i = 0; i < NPOOLS; i++)
		if (self->pool[i] >= 0)
			close(self->pool[i]);
	if (self->ctl >= 0)
		close(self->ctl);
	free(self->info);
	if (self->baseline >= 0)
		EXPECT_EQ(self->baseline, kfd_dmabuf_count(self->baseline));
}

/* Each pool once, with exactly POOL_STATS's figures; root sees all. */
TEST_F(list, figures_equal_pool_stats)
{
	struct kfdpool_pool_stats st;
	unsigned int scope = 0;
	int n, i;

	n = list_all(self->ctl, self->info, LISTMAX, KFD_POOL_LIST_PAGE, &scope);
	ASSERT_LE(NPOOLS, n);
	if (getuid() == 0)
		EXPECT_EQ(KFDPOOL_POOL_LIST_ALL, scope);
	for (i = 0; i < NPOOLS; i++) {
		const struct kfdpool_pool_info *p;

		ASSERT_EQ(1, count_id(self->info, n, self->id[i]));
		p = find_id(self->info, n, self->id[i]);
		ASSERT_EQ(0, kfd_stats(self->pool[i], &st));
		EXPECT_EQ(0, memcmp(st.name, p->name, sizeof(st.name)));
		EXPECT_EQ(st.limit, p->limit);
		EXPECT_EQ((__u64)(i + 1) << 20, p->limit);
		EXPECT_EQ(st.handle_types, p->handle_types);
		EXPECT_EQ(st.owner_pid, p->owner_pid);
		EXPECT_EQ(getpid(), p->owner_pid);
		EXPECT_EQ(geteuid(), p->uid);
		EXPECT_EQ(st.entries, p->entries);
		EXPECT_EQ(st.reserved_bytes, p->reserved_bytes);
		EXPECT_EQ(st.reserved_high, p->reserved_high);
		EXPECT_EQ(st.used_bytes, p->used_bytes);
		EXPECT_EQ(st.used_high, p->used_high);
		EXPECT_EQ(st.draining_bytes, p->draining_bytes);
		EXPECT_EQ(st.imported_bytes, p->imported_bytes);
		EXPECT_EQ(st.draining_entries, p->draining_entries);
		EXPECT_EQ(st.records, p->records);
		EXPECT_EQ(st.import_fds, p->import_fds);
		EXPECT_NE(0, p->serial);
		/* Created in this order; a listing from it starts with it. */
		if (i)
			EXPECT_LT(find_id(self->info, n, self->id[i - 1])->serial,
				  p->serial);
		{
			struct kfdpool_pool_info one;
			__u64 cur = p->serial;

			ASSERT_EQ(1, kfd_list_page(self->ctl, &one, 1, &cur));
			EXPECT_EQ(0, memcmp(one.id, self->id[i], KFDPOOL_ID_LEN));
		}
	}
	if (self->buf >= 0) {
		const struct kfdpool_pool_info *p = find_id(self->info, n, self->id[1]);

		EXPECT_EQ(65536, p->reserved_bytes);
		EXPECT_EQ(65536, p->used_bytes);
		EXPECT_EQ(65536, p->used_high);
		EXPECT_EQ(1, p->records);
		EXPECT_EQ(1, p->import_fds);
		EXPECT_EQ(65536, p->imported_bytes);
		p = find_id(self->info, n, self->id[2]);
		EXPECT_EQ(0, p->used_bytes);
		EXPECT_EQ(65536, p->used_high);
	}
}

/* Pages of 1, 2 and 3 give the same pools, in creation order. */
TEST_F(list, pages_in_creation_order)
{
	static const unsigned int pages[] = { 1, 2, 3 };
	struct kfdpool_pool_info *ref;
	int n, m, i, k, last;

	ref = calloc(LISTMAX, INFO_SIZE);
	ASSERT_NE(NULL, ref);
	n = list_all(self->ctl, ref, LISTMAX, KFD_POOL_LIST_PAGE, NULL);
	ASSERT_LE(NPOOLS, n);
	for (k = 0; k < 3; k++) {
		m = list_all(self->ctl, self->info, LISTMAX, pages[k], NULL);
		ASSERT_EQ(n, m);
		for (i = 0; i < n; i++)
			EXPECT_EQ(0, memcmp(ref[i].id, self->info[i].id, KFDPOOL_ID_LEN));
	}
	/* Ours were created in index order: they appear in that order. */
	last = -1;
	for (i = 0; i < n; i++)
		for (k = 0; k < NPOOLS; k++)
			if (!memcmp(ref[i].id, self->id[k], KFDPOOL_ID_LEN)) {
				EXPECT_GT(k, last);
				last = k;
			}
	EXPECT_EQ(NPOOLS - 1, last);
	free(ref);
}

/* count 0 asks whether anything is left; the cursor moves only forward. */
TEST_F(list, count_zero_and_cursor)
{
	struct kfdpool_pool_list l = { .info_size = INFO_SIZE };
	struct kfdpool_pool_info one;

	l.next_cursor = 0x5555;	/* out fields: what comes in is ignored */
	l.scope = 0x7777;
	ASSERT_EQ(0, list_call(self->ctl, &l));
	EXPECT_EQ(0, l.count);
	EXPECT_NE(0, l.next_cursor);	/* there are pools */
	EXPECT_NE(0x7777, l.scope);

	/* From that cursor, one pool; the cursor after it is larger. */
	l.cursor = l.next_cursor;
	l.pools = (uintptr_t)&one;
	l.count = 1;
	ASSERT_EQ(0, list_call(self->ctl, &l));
	EXPECT_EQ(1, l.count);
	if (l.next_cursor)
		EXPECT_LT(l.cursor, l.next_cursor);

	/* A cursor past every pool: an empty last page, not an error. */
	l.cursor = ~0ull;
	l.count = 1;
	ASSERT_EQ(0, list_call(self->ctl, &l));
	EXPECT_EQ(0, l.count);
	EXPECT_EQ(0, l.next_cursor);
}

/* A pool destroyed or created between pages does not disturb the rest. */
TEST_F(list, pools_come_and_go_between_pages)
{
	struct kfdpool_pool_list l = {};
	int n = 0, i, extra = -1;
	__u8 extra_id[KFDPOOL_ID_LEN];

	do {
		l.pools = (uintptr_t)(self->info + n);
		l.count = 2;
		l.info_size = INFO_SIZE;
		l.cursor = l.next_cursor;
		ASSERT_EQ(0, list_call(self->ctl, &l));
		n += l.count;
		ASSERT_GT(LISTMAX - 2, n);
		if (extra < 0) {
			/* after the first page: one gone, one new */
			close(self->pool[0]);
			self->pool[0] = -1;
			extra = kfd_pool_create(self->ctl, 0, "list-new",
						KFDPOOL_HANDLE_TYPE_FD, extra_id);
			ASSERT_LE(0, extra);
		}
	} while (l.next_cursor);
	for (i = 1; i < NPOOLS; i++)
		EXPECT_EQ(1, count_id(self->info, n, self->id[i]));
	/* created after the listing began, at the end: listed once */
	EXPECT_EQ(1, count_id(self->info, n, extra_id));
	close(extra);
}

/* Every field with a bad value. */
TEST_F(list, bad_values)
{
	struct kfdpool_pool_list l;
	char *big;

#define RESET() do { memset(&l, 0, sizeof(l)); l.pools = (uintptr_t)self->info; \
		l.count = 4; l.info_size = INFO_SIZE; } while (0)
	RESET();
	ASSERT_EQ(0, list_call(self->ctl, &l));

	RESET();
	l.flags = 1;
	EXPECT_EQ(-EINVAL, list_call(self->ctl, &l));
	RESET();
	l.flags = 0x80000000;
	EXPECT_EQ(-EINVAL, list_call(self->ctl, &l));
	RESET();
	l.pad = 1;
	EXPECT_EQ(-EINVAL, list_call(self->ctl, &l));
	RESET();
	l.info_size = sizeof(struct kfdpool_pool_info) - 1;
	EXPECT_EQ(-EINVAL, list_call(self->ctl, &l));
	RESET();
	l.info_size = 0;
	EXPECT_EQ(-EINVAL, list_call(self->ctl, &l));
	RESET();
	l.info_size = 4097;
	EXPECT_EQ(-EINVAL, list_call(self->ctl, &l));
	/* pools: unmapped, NULL with a count (there are pools to write) */
	RESET();
	l.pools = 8;
	EXPECT_EQ(-EFAULT, list_call(self->ctl, &l));
	RESET();
	l.pools = 0;
	EXPECT_EQ(-EFAULT, list_call(self->ctl, &l));
	/* an array that ends in an unmapped page */
	big = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, big);
	ASSERT_EQ(0, munmap(big + 4096, 4096));
	RESET();
	l.pools = (uintptr_t)(big + 4096 - INFO_SIZE);
	l.count = 2;
	EXPECT_EQ(-EFAULT, list_call(self->ctl, &l));
	/* read-only memory */
	ASSERT_EQ(0, mprotect(big, 4096, PROT_READ));
	RESET();
	l.pools = (uintptr_t)big;
	EXPECT_EQ(-EFAULT, list_call(self->ctl, &l));
	munmap(big, 4096);
	/* the command itself: an older, smaller struct is served */
	RESET();
	EXPECT_EQ(0, kfd_ioctl(self->ctl,
		_IOC(_IOC_READ | _IOC_WRITE, KFDPOOL_IOC_MAGIC, 0x03,
		     sizeof(struct kfdpool_pool_list) - 8), &l));
	EXPECT_LT(0, l.count);
	/* wrong direction */
	EXPECT_EQ(-ENOTTY, kfd_ioctl(self->ctl,
		_IOC(_IOC_WRITE, KFDPOOL_IOC_MAGIC, 0x03,
		     sizeof(struct kfdpool_pool_list)), &l));
	/* on a pool fd it is not a command */
	RESET();
	EXPECT_EQ(-ENOTTY, kfd_ioctl(self->pool[0], KFDPOOL_IOC_POOL_LIST, &l));
#undef RESET
}

/* A caller's element larger than the kernel's: the rest of it is zeroed. */
TEST_F(list, larger_elements_zero_filled)
{
	const size_t esz = INFO_SIZE + 40;
	struct kfdpool_pool_list l = {};
	unsigned char *arr;
	unsigned int i, j;

	arr = malloc(4 * esz);
	ASSERT_NE(NULL, arr);
	memset(arr, 0xa5, 4 * esz);
	l.pools = (uintptr_t)arr;
	l.count = 4;
	l.info_size = esz;
	ASSERT_EQ(0, list_call(self->ctl, &l));
	ASSERT_LT(0, l.count);
	for (i = 0; i < l.count; i++) {
		const struct kfdpool_pool_info *p = (const void *)(arr + i * esz);

		EXPECT_NE(0, p->owner_pid);
		for (j = INFO_SIZE; j < esz; j++)
			if (arr[i * esz + j])
				break;
		EXPECT_EQ(esz, j);	/* the first byte past ours not zeroed */
	}
	/* elements past the count are untouched */
	for (j = l.count * esz; j < 4 * esz; j++)
		if (arr[j] != 0xa5)
			break;
	EXPECT_EQ(4 * esz, j);
	free(arr);
}

/* Without CAP_SYS_ADMIN: one's own pools only, and root sees them too. */
TEST_F(list, unprivileged_sees_own_pools)
{
	struct stat sb;
	int sv[2], st, i;
	__u8 nid[KFDPOOL_ID_LEN];
	const struct kfdpool_pool_info *p;
	char ok;
	pid_t pid;
	int n;

	if (getuid() != 0)
		SKIP(return, "needs root to become nobody");
	/* the node open to nobody, as the udev rule opens it to group render */
	ASSERT_EQ(0, stat(KFD_DEV, &sb));
	ASSERT_EQ(0, chmod(KFD_DEV, 0666));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		unsigned int scope = 0;
		int ctl, pool, m;

		close(sv[0]);
		if (setgid(65534) || setuid(65534))
			_exit(10);
		ctl = open(KFD_DEV, O_RDWR | O_CLOEXEC);
		if (ctl < 0)
			_exit(11);
		pool = kfd_pool_create(ctl, 0, "nobody", 0, nid);
		if (pool < 0)
			_exit(12);
		m = list_all(ctl, self->info, LISTMAX, 2, &scope);
		if (m != 1 || scope != KFDPOOL_POOL_LIST_OWN ||
		    memcmp(self->info[0].id, nid, sizeof(nid)) ||
		    self->info[0].uid != 65534)
			_exit(13);
		for (i = 0; i < NPOOLS; i++)
			if (count_id(self->info, m, self->id[i]))
				_exit(14);
		if (kfd_send(sv[1], -1, nid, sizeof(nid)))
			_exit(15);
		/* keep the pool until root has looked */
		if (read(sv[1], &ok, 1) != 1)
			_exit(16);
		_exit(0);
	}
	close(sv[1]);
	if (kfd_recv(sv[0], NULL, nid, sizeof(nid))) {
		/* the child gave up: its exit status says where */
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		ASSERT_TRUE(WIFEXITED(st));
		ASSERT_EQ(0, WEXITSTATUS(st));
	}
	n = list_all(self->ctl, self->info, LISTMAX, KFD_POOL_LIST_PAGE, NULL);
	ASSERT_LE(NPOOLS + 1, n);
	p = find_id(self->info, n, nid);
	ASSERT_NE(NULL, p);
	EXPECT_EQ(65534, p->uid);
	EXPECT_EQ(pid, p->owner_pid);
	ok = 1;
	ASSERT_EQ(1, write(sv[0], &ok, 1));
	close(sv[0]);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	/* and once it exited, its pool is gone from the list */
	n = list_all(self->ctl, self->info, LISTMAX, KFD_POOL_LIST_PAGE, NULL);
	EXPECT_EQ(0, count_id(self->info, n, nid));
	chmod(KFD_DEV, sb.st_mode & 07777);
}

/* Listing while other threads create and destroy pools. */
struct churn {
	int ctl;
	volatile int stop;
	int rounds;
};

static void *churn_thread(void *arg)
{
	struct churn *c = arg;

	while (!c->stop) {
		int fd = kfd_pool_create(c->ctl, 0, "churn", 0, NULL);

		if (fd >= 0)
			close(fd);
		c->rounds++;
	}
	return NULL;
}

TEST_F(list, concurrent_churn)
{
	struct churn c = { .ctl = self->ctl };
	pthread_t t[2];
	int r, i, n;

	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, churn_thread, &c));
	for (r = 0; r < 200; r++) {
		n = list_all(self->ctl, self->info, LISTMAX, 3, NULL);
		ASSERT_LE(NPOOLS, n);
		for (i = 0; i < NPOOLS; i++)
			ASSERT_EQ(1, count_id(self->info, n, self->id[i]));
	}
	c.stop = 1;
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	TH_LOG("%d pools created and destroyed meanwhile", c.rounds);
}

/* fdinfo's kfdpool-file-id: one per open file, shared by dup and fork. */
TEST_F(list, file_id_names_the_open_file)
{
	long long owner, imp2, dupd;
	int d, other, sv[2], st;
	pid_t pid;

	owner = kfd_fdinfo_num(self->pool[2], "kfdpool-file-id");
	ASSERT_LT(0, owner);
	d = dup(self->pool[2]);
	ASSERT_LE(0, d);
	dupd = kfd_fdinfo_num(d, "kfdpool-file-id");
	EXPECT_EQ(owner, dupd);
	other = kfd_pool_export(self->pool[2]);
	ASSERT_LE(0, other);
	imp2 = kfd_fdinfo_num(other, "kfdpool-file-id");
	EXPECT_LT(0, imp2);
	EXPECT_NE(owner, imp2);
	/* another pool's owner file: another id */
	EXPECT_NE(owner, kfd_fdinfo_num(self->pool[3], "kfdpool-file-id"));

	/* a child holds the same open file through fork */
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		long long v = kfd_fdinfo_num(other, "kfdpool-file-id");

		_exit(write(sv[1], &v, sizeof(v)) == sizeof(v) ? 0 : 1);
	}
	{
		long long v = 0;

		ASSERT_EQ(sizeof(v), read(sv[0], &v, sizeof(v)));
		EXPECT_EQ(imp2, v);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	close(sv[0]);
	close(sv[1]);
	close(other);
	close(d);
}

/*
 * A pool ends with its last owner fd, while an import fd and an imported
 * dma-buf are still open: it is listed no more.  A large count is served a
 * page at a time.
 */
TEST_F(list, ended_pool_not_listed)
{
	struct kfdpool_pool_list l = {};
	struct kfdpool_record rec;
	struct kfdpool_import imp;
	__u8 id[KFDPOOL_ID_LEN];
	int pool, ip, buf, e, n;

	buf = kfd_dmabuf_new(65536);
	if (buf < 0)
		SKIP(return, "no dma-buf exporter");
	pool = kfd_pool_create(self->ctl, 0, "list-ended",
			       KFDPOOL_HANDLE_TYPE_FD, id);
	ASSERT_LE(0, pool);
	ip = kfd_pool_export(pool);
	ASSERT_LE(0, ip);
	e = kfd_pin(pool, buf, 0);
	ASSERT_LT(0, e);
	ASSERT_EQ(0, kfd_export(pool, e, 0, 65536, &rec));
	ASSERT_EQ(0, kfd_import(ip, &rec, 0, &imp));
	close(buf);

	n = list_all(self->ctl, self->info, LISTMAX, KFD_POOL_LIST_PAGE,
		     NULL);
	EXPECT_EQ(1, count_id(self->info, n, id));
	close(pool);
	n = list_all(self->ctl, self->info, LISTMAX, KFD_POOL_LIST_PAGE,
		     NULL);
	EXPECT_EQ(0, count_id(self->info, n, id));
	close(ip);
	close(imp.fd);

	/* More than a page asked: at most a page written. */
	l.pools = (uintptr_t)self->info;
	l.count = LISTMAX;
	l.info_size = sizeof(self->info[0]);
	ASSERT_EQ(0, list_call(self->ctl, &l));
	EXPECT_GE(KFD_POOL_LIST_PAGE, l.count);
}

/* Index of @id among @n ids, or -1. */
static int index_of(const __u8 (*ids)[KFDPOOL_ID_LEN], int n, const __u8 *id)
{
	int i;

	for (i = 0; i < n; i++)
		if (!memcmp(ids[i], id, KFDPOOL_ID_LEN))
			return i;
	return -1;
}

#define RESUME_POOLS	150
#define RESUME_EXTRA	64

/*
 * Each call resumes where the cursor says: at the pool it names or, when
 * that pool is gone, at the next one.  Many pools, pages of 1 and of 7,
 * and between pages the pool the next page starts with is destroyed now
 * and then, a later one too, and new pools are created.  Every pool that
 * lives through the listing is listed exactly once, in creation order;
 * those destroyed before the listing reached them are not listed.
 */
TEST_F(list, resume_exactly_once)
{
	static const unsigned int pages[] = { 1, 7 };
	__u8 (*ids)[KFDPOOL_ID_LEN];
	int *fds, *gone, p, i, k, n, step, nextra, last, ours;
	struct rlimit rl;

	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_cur < RESUME_POOLS + RESUME_EXTRA + 64)
		SKIP(return, "RLIMIT_NOFILE %lu too low", (unsigned long)rl.rlim_cur);
	ids = calloc(RESUME_POOLS + RESUME_EXTRA, sizeof(*ids));
	fds = calloc(RESUME_POOLS + RESUME_EXTRA, sizeof(*fds));
	gone = calloc(RESUME_POOLS + RESUME_EXTRA, sizeof(*gone));
	ASSERT_NE(NULL, ids);
	ASSERT_NE(NULL, fds);
	ASSERT_NE(NULL, gone);
	for (p = 0; p < 2; p++) {
		struct kfdpool_pool_list l = {};

		for (i = 0; i < RESUME_POOLS; i++) {
			fds[i] = kfd_pool_create(self->ctl, 0, "list-resume",
						 KFDPOOL_HANDLE_TYPE_FD, ids[i]);
			ASSERT_LE(0, fds[i]);
			gone[i] = 0;
		}
		n = step = nextra = 0;
		do {
			l.pools = (uintptr_t)(self->info + n);
			l.count = pages[p];
			l.info_size = INFO_SIZE;
			l.cursor = l.next_cursor;
			ASSERT_EQ(0, list_call(self->ctl, &l));
			n += l.count;
			ASSERT_GE(LISTMAX - 7, n);
			if (!l.count || !l.next_cursor)
				continue;
			step++;
			k = index_of(ids, RESUME_POOLS, self->info[n - 1].id);
			/* the pool the next call starts with: its cursor dangles */
			if (k >= 0 && k + 1 < RESUME_POOLS && step % 3 == 0) {
				close(fds[k + 1]);
				fds[k + 1] = -1;
				gone[k + 1] = 1;
			}
			if (k >= 0 && k + 10 < RESUME_POOLS && step % 5 == 0 &&
			    !gone[k + 10]) {
				close(fds[k + 10]);
				fds[k + 10] = -1;
				gone[k + 10] = 1;
			}
			if (step % 4 == 0 && nextra < RESUME_EXTRA) {
				i = RESUME_POOLS + nextra++;
				fds[i] = kfd_pool_create(self->ctl, 0, "list-extra",
							 KFDPOOL_HANDLE_TYPE_FD,
							 ids[i]);
				ASSERT_LE(0, fds[i]);
				gone[i] = 0;
			}
		} while (l.next_cursor);

		ours = 0;
		for (i = 0; i < RESUME_POOLS + nextra; i++) {
			EXPECT_EQ(gone[i] ? 0 : 1, count_id(self->info, n, ids[i]))
				TH_LOG("page %u: pool %d of %d (%s)", pages[p], i,
				       RESUME_POOLS + nextra,
				       gone[i] ? "destroyed" : "alive");
			ours += !gone[i];
		}
		for (i = 0; i < NPOOLS; i++)
			EXPECT_EQ(1, count_id(self->info, n, self->id[i]));
		/* creation order: ours, then the extras, as they were made */
		last = -1;
		for (i = 0; i < n; i++) {
			k = index_of(ids, RESUME_POOLS + nextra, self->info[i].id);
			if (k < 0)
				continue;
			EXPECT_LT(last, k);
			last = k;
		}
		TH_LOG("pages of %u: %d listed, %d of this test's pools alive, %d of them created meanwhile",
		       pages[p], n, ours, nextra);
		for (i = 0; i < RESUME_POOLS + nextra; i++)
			if (fds[i] >= 0)
				close(fds[i]);
	}
	free(ids);
	free(fds);
	free(gone);
}

#define SCAN_POOLS	1100	/* more than one call looks at (1024) */

/*
 * A caller that sees none of the first 1024 pools gets an empty page and a
 * cursor on a pool it cannot see; from there it finds its own pool, once.
 */
TEST_F(list, resume_past_pools_not_visible)
{
	struct rlimit rl = { SCAN_POOLS + 256, SCAN_POOLS + 256 };
	int *fds, i, st;
	pid_t pid;

	if (getuid() != 0)
		SKIP(return, "needs root to become nobody");
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	fds = calloc(SCAN_POOLS, sizeof(*fds));
	ASSERT_NE(NULL, fds);
	for (i = 0; i < SCAN_POOLS; i++) {
		fds[i] = kfd_pool_create(self->ctl, 0, "list-root", 0, NULL);
		ASSERT_LE(0, fds[i]);
	}
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct kfdpool_pool_list l = {};
		__u8 nid[KFDPOOL_ID_LEN];
		int pool, calls = 0, empty = 0, n = 0;

		/* the control fd is root's, opened before: nobody uses it */
		if (setgid(65534) || setuid(65534))
			_exit(10);
		pool = kfd_pool_create(self->ctl, 0, "nobody", 0, nid);
		if (pool < 0)
			_exit(11);
		do {
			l.pools = (uintptr_t)(self->info + n);
			l.count = KFD_POOL_LIST_PAGE;
			l.info_size = INFO_SIZE;
			l.cursor = l.next_cursor;
			if (list_call(self->ctl, &l))
				_exit(12);
			calls++;
			empty += !l.count && l.next_cursor;
			n += l.count;
		} while (l.next_cursor && calls < 100);
		if (l.next_cursor)
			_exit(13);
		if (l.scope != KFDPOOL_POOL_LIST_OWN)
			_exit(14);
		if (n != 1 || memcmp(self->info[0].id, nid, sizeof(nid)))
			_exit(15);
		/* 1100 pools of root first: the first call saw none of ours */
		if (!empty || calls < 2)
			_exit(16);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	for (i = 0; i < SCAN_POOLS; i++)
		close(fds[i]);
	free(fds);
}

TEST_HARNESS_MAIN
