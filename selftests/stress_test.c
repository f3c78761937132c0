// SPDX-License-Identifier: GPL-2.0-only
/*
 * Concurrency stress on shared pools: in the owner process, threads pin and
 * unpin dma-bufs, export records into a shared table, revoke them, make and
 * close import fds and read the figures; in importer processes, threads
 * import the table's records (ioctl and io_uring), validate, read the bytes
 * and release, and present records to the wrong pool.  Bounded by
 * iterations, not time.
 *
 * Every call must return success or an errno its race allows (a record
 * revoked meanwhile: ENOENT, ESTALE; an entry gone: ENOENT; pinned twice:
 * EEXIST; another pool's record: EXDEV); the figures must add up whenever
 * they are read; imported bytes must be the exporter's; and at the end,
 * with every import fd closed and every entry unpinned, the pool must be
 * empty and closing it must leave no dma-buf, pool or module reference.
 * Lockdep (debug kernel) watches the lock order all along.
 *
 *   KFDPOOL_STRESS_ITERS  iterations per thread (default 2000)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sys/wait.h>

#include "reliability.h"
#include "kselftest_harness.h"

#define ST_BUFS 8
#define ST_BUF_SIZE (4 * 4096)
#define ST_SLOTS 64
#define ST_IMPORTERS 2		/* processes */
#define ST_IMPORT_THREADS 2
#define ST_OWNER_THREADS 3	/* pin/unpin+export+revoke, x3 */

/* A record slot: seq odd while being written (also the writers' lock). */
struct st_slot {
	uint32_t seq;
	uint32_t tag;
	struct kfdpool_record rec;
};

struct st_shared {
	struct st_slot slots[ST_SLOTS];
	uint32_t entries[ST_BUFS];	/* entry id of each buffer, 0: none */
	uint64_t ops, oks, bad, bad_bytes, bad_stats, last_bad_errno;
	uint64_t pins, exports, revokes, imports, uring_imports, validates,
		releases, pool_exports, exdev, byte_checks;
	char last_bad_op[32];
};

struct st_ctx {
	struct st_shared *sh;
	int pool, imp, other_imp, bufs[ST_BUFS];
	uint64_t iters;
	uint64_t seed;
};

static void st_add(uint64_t *p)
{
	__atomic_add_fetch(p, 1, __ATOMIC_RELAXED);
}

/* Count a call; @ok lists the errnos (0-terminated) its races allow. */
static void st_check(struct st_ctx *c, const char *op, long ret,
		     const int *ok)
{
	st_add(&c->sh->ops);
	if (ret >= 0) {
		st_add(&c->sh->oks);
		return;
	}
	for (; *ok; ok++)
		if (-ret == *ok)
			return;
	st_add(&c->sh->bad);
	c->sh->last_bad_errno = -ret;
	snprintf(c->sh->last_bad_op, sizeof(c->sh->last_bad_op), "%s", op);
}

static const int st_gone[] = { ENOENT, ESTALE, 0 };
static const int st_pin_ok[] = { EEXIST, 0 };
static const int st_none[] = { 0 };

static void st_slot_write(struct st_shared *sh, unsigned int i,
			  const struct kfdpool_record *rec, uint32_t tag,
			  struct kfdpool_record *old)
{
	struct st_slot *s = &sh->slots[i];
	uint32_t seq;

	for (;;) {
		seq = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
		if (!(seq & 1) &&
		    __atomic_compare_exchange_n(&s->seq, &seq, seq + 1, false,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			break;
		sched_yield();
	}
	*old = s->rec;
	s->rec = *rec;
	s->tag = tag;
	__atomic_store_n(&s->seq, seq + 2, __ATOMIC_RELEASE);
}

/* A consistent copy of slot @i, or false (being written, or empty). */
static bool st_slot_read(struct st_shared *sh, unsigned int i,
			 struct kfdpool_record *rec, uint32_t *tag)
{
	struct st_slot *s = &sh->slots[i];
	uint32_t a, b;

	a = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
	if ((a & 1) || !a)
		return false;
	memcpy(rec, (void *)&s->rec, sizeof(*rec));
	*tag = s->tag;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	b = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
	return a == b;
}

static void *st_owner(void *arg)
{
	struct st_ctx *c = arg;
	struct st_shared *sh = c->sh;
	struct kfdpool_pool_stats st;
	struct kfdpool_record rec, old;
	struct kfdpool_import imp;
	uint64_t k;

	for (k = 0; k < c->iters; k++) {
		unsigned int b = rel_below(&c->seed, ST_BUFS);
		unsigned int s = rel_below(&c->seed, ST_SLOTS);
		uint32_t id = __atomic_load_n(&sh->entries[b], __ATOMIC_RELAXED);
		uint32_t tag;
		long ret;
		int fd;

		switch (rel_below(&c->seed, 12)) {
		case 0:		/* pin, or unpin (revokes its records) */
			if (!id) {
				ret = rel_pin(c->pool, c->bufs[b], b);
				st_check(c, "pin", ret, st_pin_ok);
				if (ret > 0) {
					__atomic_store_n(&sh->entries[b], ret,
							 __ATOMIC_RELAXED);
					st_add(&sh->pins);
				}
			} else if (__atomic_compare_exchange_n(&sh->entries[b],
							       &id, 0, false,
							       __ATOMIC_RELAXED,
							       __ATOMIC_RELAXED)) {
				st_check(c, "unpin", rel_unpin(c->pool, id),
					 st_none);
			}
			break;
		case 1: case 2: case 3: case 4:	/* export into a slot */
			if (!id)
				break;
			ret = rel_export(c->pool, id,
					 rel_below(&c->seed, 4) * 4096, 4096,
					 &rec);
			/* Unpinned meanwhile. */
			st_check(c, "export", ret, st_gone);
			if (ret)
				break;
			st_add(&sh->exports);
			st_slot_write(sh, s, &rec, b, &old);
			if (REC(&old)->magic && rel_below(&c->seed, 2))
				st_check(c, "revoke old", rel_revoke(c->pool, &old),
					 st_gone);
			break;
		case 5: case 6:	/* revoke what a slot holds */
			if (!st_slot_read(sh, s, &rec, &tag))
				break;
			ret = rel_revoke(c->pool, &rec);
			st_check(c, "revoke", ret, st_gone);
			if (!ret)
				st_add(&sh->revokes);
			break;
		case 7:		/* a short-lived import fd */
			fd = rel_pool_export(c->pool);
			st_check(c, "pool export", fd, st_none);
			if (fd < 0)
				break;
			st_add(&sh->pool_exports);
			if (st_slot_read(sh, s, &rec, &tag)) {
				ret = rel_import(fd, &rec, 0, &imp);
				st_check(c, "import (owner)", ret, st_gone);
				if (ret >= 0)
					close(ret);
			}
			close(fd);	/* drops its imports */
			break;
		default:	/* the figures, coherent at any moment */
			if (rel_stats(c->pool, &st) || rel_stats_invalid(&st))
				st_add(&sh->bad_stats);
		}
	}
	return NULL;
}

static void *st_importer(void *arg)
{
	struct st_ctx *c = arg;
	struct st_shared *sh = c->sh;
	struct kfdpool_import imp;
	struct kfdpool_record rec;
	struct rel_ring ring;
	bool have_ring;
	uint64_t k;

	have_ring = !rel_ring_init(&ring, 4, IORING_SETUP_SQE128);
	for (k = 0; k < c->iters; k++) {
		unsigned int s = rel_below(&c->seed, ST_SLOTS);
		uint32_t tag;
		long ret;
		int fd;

		if (!st_slot_read(sh, s, &rec, &tag))
			continue;
		switch (rel_below(&c->seed, 8)) {
		case 0:		/* the wrong pool */
			ret = rel_import(c->other_imp, &rec, 0, &imp);
			if (ret >= 0)
				close(ret);
			st_check(c, "import (other pool)", ret >= 0 ? -EBADE : ret,
				 (const int[]){ EXDEV, 0 });
			st_add(&sh->exdev);
			continue;
		case 1:		/* through io_uring */
			if (!have_ring)
				continue;
			{
				struct kfdpool_uring_record ur = { .record = rec };
				int res = -1;

				ret = rel_uring_cmd(&ring, c->imp,
						    KFDPOOL_URING_IMPORT, &ur,
						    sizeof(ur), &res);
				ret = ret ? ret : res;
			}
			st_check(c, "uring import", ret, st_gone);
			if (ret < 0)
				continue;
			st_add(&sh->uring_imports);
			fd = ret;
			imp.entry_id = REC(&rec)->entry_id;
			imp.cookie = tag;
			imp.offset = REC(&rec)->offset;
			break;
		default:
			fd = rel_import(c->imp, &rec, 0, &imp);
			st_check(c, "import", fd, st_gone);
			if (fd < 0)
				continue;
			st_add(&sh->imports);
			if (imp.cookie != tag || imp.offset != REC(&rec)->offset ||
			    imp.entry_size != ST_BUF_SIZE)
				st_add(&sh->bad_bytes);
		}
		/* Holding an import: validation passes unless revoked. */
		ret = rel_import(c->imp, &rec, KFDPOOL_IMPORT_VALIDATE, &imp);
		st_check(c, "validate", ret, st_gone);
		st_add(&sh->validates);
		if (!rel_below(&c->seed, 8)) {
			st_add(&sh->byte_checks);
			if (rel_dmabuf_pattern(fd, ST_BUF_SIZE, tag, false))
				st_add(&sh->bad_bytes);
		}
		close(fd);
		ret = rel_release(c->imp, REC(&rec)->entry_id);
		st_check(c, "release", ret, st_none);
		st_add(&sh->releases);
	}
	if (have_ring)
		rel_ring_exit(&ring);
	return NULL;
}

/* Run @n threads of @fn on copies of @c with their own seeds. */
static void st_threads(struct st_ctx *c, int n, void *(*fn)(void *))
{
	struct st_ctx ctx[8];
	pthread_t tid[8];
	int i;

	for (i = 0; i < n; i++) {
		ctx[i] = *c;
		ctx[i].seed = c->seed * 31 + i + 1;
		pthread_create(&tid[i], NULL, fn, &ctx[i]);
	}
	for (i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
}

static void *st_owner_side(void *arg)
{
	struct st_ctx *c = arg;

	st_threads(c, ST_OWNER_THREADS, st_owner);
	return NULL;
}

FIXTURE(stress) {
	int ctl;
	struct rel_counts base;
};

FIXTURE_SETUP(stress)
{
	int fd;

	rel_counts_read(&self->base);
	self->ctl = open("/dev/kfdpool", O_RDWR | O_CLOEXEC);
	if (self->ctl < 0)
		SKIP(return, "/dev/kfdpool: %s", strerror(errno));
	fd = rel_dmabuf_new(ST_BUF_SIZE);
	if (fd < 0)
		SKIP(return, "no dma-buf source: %s", strerror(-fd));
	close(fd);
}

FIXTURE_TEARDOWN(stress)
{
}

TEST_F_TIMEOUT(stress, shared_pools, 3000)
{
	uint64_t iters = rel_env_u64("KFDPOOL_STRESS_ITERS", 2000);
	struct kfdpool_pool_stats st;
	struct st_shared *sh;
	struct rel_counts now;
	pid_t pids[ST_IMPORTERS];
	pthread_t owner;
	struct st_ctx c;
	int other, i, status;
	const char *why;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	memset(&c, 0, sizeof(c));
	c.sh = sh;
	c.iters = iters;
	c.seed = rel_seed("KFDPOOL_STRESS_SEED");
	c.pool = rel_pool_create(self->ctl, 0, KFDPOOL_HANDLE_TYPE_FD, "stress");
	ASSERT_LE(0, c.pool);
	c.imp = rel_pool_export(c.pool);
	ASSERT_LE(0, c.imp);
	other = rel_pool_create(self->ctl, 0, KFDPOOL_HANDLE_TYPE_FD, "other");
	ASSERT_LE(0, other);
	c.other_imp = rel_pool_export(other);
	ASSERT_LE(0, c.other_imp);
	for (i = 0; i < ST_BUFS; i++) {
		c.bufs[i] = rel_dmabuf_new(ST_BUF_SIZE);
		ASSERT_LE(0, c.bufs[i]);
		ASSERT_EQ(0, rel_dmabuf_pattern(c.bufs[i], ST_BUF_SIZE, i, true));
	}
	/* Records in every slot before the importers start. */
	for (i = 0; i < ST_BUFS; i++) {
		long id = rel_pin(c.pool, c.bufs[i], i);

		ASSERT_LT(0, id);
		sh->entries[i] = id;
	}
	for (i = 0; i < ST_SLOTS; i++) {
		struct kfdpool_record rec, old;

		ASSERT_EQ(0, rel_export(c.pool, sh->entries[i % ST_BUFS],
					(i / ST_BUFS % 4) * 4096, 4096, &rec));
		st_slot_write(sh, i, &rec, i % ST_BUFS, &old);
	}
	ksft_print_msg("KFDPOOL_STRESS_SEED=0x%llx KFDPOOL_STRESS_ITERS=%llu: %d owner threads, %d importer processes x %d threads\n",
		       (unsigned long long)c.seed, (unsigned long long)iters,
		       ST_OWNER_THREADS, ST_IMPORTERS, ST_IMPORT_THREADS);

	for (i = 0; i < ST_IMPORTERS; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i]) {
			c.seed ^= (uint64_t)(i + 1) << 32;
			st_threads(&c, ST_IMPORT_THREADS, st_importer);
			_exit(0);
		}
	}
	pthread_create(&owner, NULL, st_owner_side, &c);
	pthread_join(owner, NULL);
	for (i = 0; i < ST_IMPORTERS; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	}

	ksft_print_msg("stress: %llu calls (%llu succeeded): %llu pins, %llu exports, %llu revokes, %llu imports (+%llu io_uring), %llu validates, %llu releases, %llu import fds, %llu wrong-pool tries, %llu byte checks\n",
		       (unsigned long long)sh->ops, (unsigned long long)sh->oks,
		       (unsigned long long)sh->pins,
		       (unsigned long long)sh->exports,
		       (unsigned long long)sh->revokes,
		       (unsigned long long)sh->imports,
		       (unsigned long long)sh->uring_imports,
		       (unsigned long long)sh->validates,
		       (unsigned long long)sh->releases,
		       (unsigned long long)sh->pool_exports,
		       (unsigned long long)sh->exdev,
		       (unsigned long long)sh->byte_checks);
	EXPECT_EQ(0, sh->bad) TH_LOG("%llu calls failed unexpectedly, last: %s: %s",
				     (unsigned long long)sh->bad, sh->last_bad_op,
				     strerror(sh->last_bad_errno));
	EXPECT_EQ(0, sh->bad_bytes);
	EXPECT_EQ(0, sh->bad_stats);
	EXPECT_LT(0, sh->imports + sh->uring_imports);

	/* The importers are gone: the pool's references are all that is left. */
	for (i = 0; i < ST_BUFS; i++) {
		close(c.bufs[i]);
		c.bufs[i] = -1;
	}
	ASSERT_EQ(0, rel_stats(c.pool, &st));
	why = rel_stats_invalid(&st);
	EXPECT_TRUE(why == NULL) TH_LOG("%s", why);
	EXPECT_EQ(1, st.import_fds);
	EXPECT_EQ(0, st.imported_bytes);
	EXPECT_EQ(0, st.draining_entries);
	/* Unpin everything: nothing left in the pool. */
	for (i = 0; i < ST_BUFS; i++)
		if (sh->entries[i])
			EXPECT_EQ(0, rel_unpin(c.pool, sh->entries[i]));
	close(c.imp);
	ASSERT_EQ(0, rel_stats(c.pool, &st));
	EXPECT_EQ(0, st.entries);
	EXPECT_EQ(0, st.reserved_bytes);
	EXPECT_EQ(0, st.records);
	EXPECT_EQ(0, st.used_bytes);
	EXPECT_EQ(0, st.import_fds);
	EXPECT_EQ(0, st.draining_bytes);

	close(c.pool);
	close(c.other_imp);
	close(other);
	close(self->ctl);
	if (rel_src_fd >= 0)
		close(rel_src_fd);
	EXPECT_TRUE(rel_counts_settle(&self->base, &now))
		TH_LOG("dma-bufs %ld -> %ld, pools %ld -> %ld, module refs %ld -> %ld",
		       self->base.dmabufs, now.dmabufs, self->base.pools,
		       now.pools, self->base.refcnt, now.refcnt);
	munmap(sh, sizeof(*sh));
}

TEST_HARNESS_MAIN
