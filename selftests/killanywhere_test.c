// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kill anywhere: an exporter (owns a pool, pins dma-bufs, exports records,
 * hands an import fd and the records to an importer over a unix socket, then
 * churns: pin, unpin, export, revoke, batch, pool export, close) and an
 * importer (imports, validates, releases, reads the bytes) are SIGKILLed at
 * random points: the exporter, the importer, or both.
 *
 * Where the module has KFDPOOL_IOC_ALLOC, the exporter's first buffer is
 * module host memory, and its churn allocates and drops more (now and
 * then 16 MiB, so that kills land while pages are being allocated).
 *
 * After every round nothing may be left: the dma-buf count, the pool count
 * and the module's reference count are back to their baselines.  The
 * survivor of a round must keep working: an importer whose exporter died
 * reads correct bytes through what it imported, and its pool calls answer
 * ENODEV (the exporter's death ended the pool);
 * an exporter whose importer died sees the import fd and its imports gone
 * from the pool's figures and its own bytes intact.
 *
 * kill.persistent does the same to persistent pools: a producer is killed
 * anywhere in creating, filling and churning one, an adopter anywhere in
 * adopting, churning and destroying it.  Whatever the kill points, a pool
 * handed over before its producer died imports with the right bytes
 * afterwards, an adopter gets it (or finds it destroyed), and once the
 * round's pools are destroyed by id nothing is left: dma-bufs, pools,
 * module references and the persistent figures back to their baselines.
 *
 *   KFDPOOL_KILL_ROUNDS  rounds (default 200; kill.persistent a quarter)
 *   KFDPOOL_KILL_SEED    replay the kill points (the seed is printed)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "reliability.h"
#include "kfdpool_persist_util.h"
#include "kselftest_harness.h"

#define KA_BUFS 2
#define KA_BUF_SIZE (4 * 4096)
#define KA_RECS 4
#define KA_IMPORT_LOOPS 40

/* What the exporter sends with the import fd. */
struct ka_msg {
	struct kfdpool_record recs[KA_RECS];
	uint32_t tags[KA_RECS];
};

/* Exit codes of the children. */
enum {
	KA_OK = 0,
	KA_NO_MSG = 3,		/* importer: exporter died before sending */
	KA_SETUP = 4,		/* set-up failed: not a kill */
	KA_BAD_BYTES = 5,	/* importer read wrong bytes */
	KA_BAD_IMPORT = 6,	/* importer: an import failed */
	KA_BAD_STATS = 7,	/* exporter: the figures did not come back */
};

static int ka_send(int sock, int fd, const struct ka_msg *m)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {};
	struct iovec iov = { .iov_base = (void *)m, .iov_len = sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	/* A dead importer must not kill us with SIGPIPE. */
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == sizeof(*m) ? 0 : -1;
}

static int ka_recv(int sock, struct ka_msg *m)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {};
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int fd = -1;

	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != sizeof(*m))
		return -1;
	c = CMSG_FIRSTHDR(&mh);
	if (c && c->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* Tell the parent how far we got (a byte on the progress pipe). */
static void ka_progress(int fd, char what)
{
	if (write(fd, &what, 1) != 1)
		_exit(KA_SETUP);
}

/*
 * The exporter.  Runs until killed, or until the parent writes to @ctlpipe
 * that the importer is dead; then checks that the importer's fd and imports
 * are gone and its own bytes intact.
 */
static int ka_exporter(int sock, int ctlpipe, int progress, uint32_t round,
		       uint64_t seed)
{
	int ctl, pool, imp, spare, bufs[KA_BUFS], i, ret;
	uint32_t entries[KA_BUFS], spare_entry = 0;
	struct kfdpool_pool_stats st;
	struct kfdpool_record churn[8] = {};
	struct ka_msg m = {};
	struct rel_ring ring;
	bool have_ring;
	char c;

	ctl = open("/dev/kfdpool", O_RDWR | O_CLOEXEC);
	pool = ctl < 0 ? -1 : rel_pool_create(ctl, 0, KFDPOOL_HANDLE_TYPE_FD,
					      "killanywhere");
	if (pool < 0)
		return KA_SETUP;
	close(ctl);
	ka_progress(progress, 'p');
	for (i = 0; i < KA_BUFS; i++) {
		long id;

		/* Buffer 0 from the module itself where it can. */
		bufs[i] = i ? -ENOTTY : rel_alloc(pool, KA_BUF_SIZE,
						  round * 4 + i, &entries[i]);
		if (bufs[i] >= 0) {
			if (rel_dmabuf_pattern(bufs[i], KA_BUF_SIZE,
					       round * 4 + i, true))
				return KA_SETUP;
			continue;
		}
		bufs[i] = rel_dmabuf_new(KA_BUF_SIZE);
		if (bufs[i] < 0 ||
		    rel_dmabuf_pattern(bufs[i], KA_BUF_SIZE, round * 4 + i, true))
			return KA_SETUP;
		id = rel_pin(pool, bufs[i], round * 4 + i);
		if (id <= 0)
			return KA_SETUP;
		entries[i] = id;
	}
	for (i = 0; i < KA_RECS; i++) {
		if (rel_export(pool, entries[i % KA_BUFS], (i / KA_BUFS) * 4096,
			       4096, &m.recs[i]))
			return KA_SETUP;
		m.tags[i] = round * 4 + i % KA_BUFS;
	}
	imp = rel_pool_export(pool);
	if (imp < 0)
		return KA_SETUP;
	/* Fails only when the importer is dead already: churn all the same. */
	if (!ka_send(sock, imp, &m))
		ka_progress(progress, 's');
	close(imp);
	spare = rel_dmabuf_new(KA_BUF_SIZE);
	if (spare < 0)
		return KA_SETUP;
	have_ring = !rel_ring_init(&ring, 4, IORING_SETUP_SQE128);

	/* Churn until killed, or told that the importer is dead. */
	for (i = 0;; i++) {
		struct pollfd pfd = { .fd = ctlpipe, .events = POLLIN };
		unsigned int k = rel_below(&seed, 8);

		switch (rel_below(&seed, 8)) {
		case 7: {
			uint32_t e = 0;
			int fd = rel_alloc(pool, k ? KA_BUF_SIZE : 16 << 20, k,
					   &e);

			if (fd >= 0) {
				close(fd);
				rel_unpin(pool, e);
			}
			break;
		}
		case 0:
			if (spare_entry) {
				rel_unpin(pool, spare_entry);
				spare_entry = 0;
			} else {
				long id = rel_pin(pool, spare, i);

				spare_entry = id > 0 ? id : 0;
			}
			break;
		case 1:
			rel_export(pool, entries[k % KA_BUFS], 0, 128, &churn[k]);
			break;
		case 2:
			rel_revoke(pool, &churn[k]);
			break;
		case 3:
			ret = rel_pool_export(pool);
			if (ret >= 0)
				close(ret);
			break;
		case 4: {
			struct kfdpool_export ex[4] = {};
			struct kfdpool_revoke rv[4] = {};
			struct kfdpool_batch b = { .ops = (uintptr_t)ex,
						   .count = 4,
						   .elem_size = sizeof(ex[0]) };
			int j;

			for (j = 0; j < 4; j++) {
				ex[j].entry_id = entries[j % KA_BUFS];
				ex[j].size = 64;
			}
			ret = ioctl(pool, KFDPOOL_IOC_EXPORT_BATCH, &b);
			for (j = 0; j < ret && j < 4; j++)
				rv[j].record = ex[j].record;
			b.ops = (uintptr_t)rv;
			b.elem_size = sizeof(rv[0]);
			b.count = ret > 0 ? ret : 1;
			ioctl(pool, KFDPOOL_IOC_REVOKE_BATCH, &b);
			break;
		}
		case 5:
			if (have_ring) {
				struct kfdpool_uring_export ue = {
					.entry_id = entries[k % KA_BUFS],
					.size = 32,
					.record_ptr = (uintptr_t)&churn[k],
				};
				int res;

				rel_uring_cmd(&ring, pool, KFDPOOL_URING_EXPORT,
					      &ue, sizeof(ue), &res);
			}
			break;
		default:
			rel_stats(pool, &st);
		}
		if (poll(&pfd, 1, 0) != 1)
			continue;
		if (read(ctlpipe, &c, 1) != 1)
			return KA_SETUP;
		break;
	}

	/* The importer is dead: its fd and imports must be gone. */
	for (i = 0; i < 3000; i++) {
		if (rel_stats(pool, &st))
			return KA_BAD_STATS;
		if (!st.import_fds && !st.imported_bytes)
			break;
		usleep(10000);
	}
	if (st.import_fds || st.imported_bytes || st.fd_imports ||
	    rel_stats_invalid(&st))
		return KA_BAD_STATS;
	for (i = 0; i < KA_BUFS; i++)
		if (rel_dmabuf_pattern(bufs[i], KA_BUF_SIZE, round * 4 + i, false))
			return KA_BAD_BYTES;
	return KA_OK;
}

/*
 * Is @ret right for a call on the pool?  Success, or ENODEV once the
 * exporter died and took the pool with it, and from then on only ENODEV.
 */
static bool ka_pool_ok(int ret, bool *ended)
{
	if (ret == -ENODEV)
		*ended = true;
	else if (ret < 0 || *ended)
		return false;
	return true;
}

/*
 * The importer: import every record, map the first import, then loop
 * importing, validating, releasing and reading.  Runs a bounded number of
 * loops; every import must succeed while the exporter lives, and once it
 * died (its pool ended) answer ENODEV; what was imported stays right.
 */
static int ka_importer(int sock, int progress, uint64_t seed)
{
	int pool, fds[KA_RECS], i, j, ret;
	struct kfdpool_import imp;
	struct rel_ring ring;
	bool have_ring, ended = false;
	struct ka_msg m;

	pool = ka_recv(sock, &m);
	if (pool < 0)
		return KA_NO_MSG;
	ka_progress(progress, 'r');
	have_ring = !rel_ring_init(&ring, 4, IORING_SETUP_SQE128);
	for (i = 0; i < KA_RECS; i++) {
		fds[i] = rel_import(pool, &m.recs[i], 0, &imp);
		if (!ka_pool_ok(fds[i], &ended))
			return KA_BAD_IMPORT;
		if (fds[i] >= 0 && imp.cookie != m.tags[i])
			return KA_BAD_IMPORT;
	}
	for (j = 0; j < KA_IMPORT_LOOPS; j++) {
		i = rel_below(&seed, KA_RECS);
		switch (rel_below(&seed, 5)) {
		case 0:		/* one more import, then let it go */
			ret = rel_import(pool, &m.recs[i], 0, &imp);
			if (!ka_pool_ok(ret, &ended))
				return KA_BAD_IMPORT;
			if (ret < 0)
				break;
			close(ret);
			if (!ka_pool_ok(rel_release(pool, imp.entry_id), &ended))
				return KA_BAD_IMPORT;
			break;
		case 1:
			ret = rel_import(pool, &m.recs[i],
					 KFDPOOL_IMPORT_VALIDATE, &imp);
			if (!ka_pool_ok(ret, &ended))
				return KA_BAD_IMPORT;
			break;
		case 2:
			if (have_ring) {
				struct kfdpool_uring_record ur = {
					.record = m.recs[i],
				};
				int res = -1;

				if (rel_uring_cmd(&ring, pool,
						  KFDPOOL_URING_IMPORT, &ur,
						  sizeof(ur), &res) ||
				    !ka_pool_ok(res, &ended))
					return KA_BAD_IMPORT;
				if (res < 0)
					break;
				close(res);
				ret = rel_release(pool,
						  REC(&m.recs[i])->entry_id);
				if (!ka_pool_ok(ret, &ended))
					return KA_BAD_IMPORT;
			}
			break;
		default:	/* the bytes, through what we imported */
			if (fds[i] >= 0 &&
			    rel_dmabuf_pattern(fds[i], KA_BUF_SIZE, m.tags[i],
					       false))
				return KA_BAD_BYTES;
		}
	}
	ka_progress(progress, 'd');
	for (i = 0; i < KA_RECS; i++)
		if (fds[i] >= 0 &&
		    rel_dmabuf_pattern(fds[i], KA_BUF_SIZE, m.tags[i], false))
			return KA_BAD_BYTES;
	return KA_OK;
}

static const char *ka_why(int status)
{
	if (WIFSIGNALED(status))
		return WTERMSIG(status) == SIGKILL ? "killed" : "crashed";
	switch (WEXITSTATUS(status)) {
	case KA_OK: return "ok";
	case KA_NO_MSG: return "no message";
	case KA_SETUP: return "set-up failed";
	case KA_BAD_BYTES: return "read wrong bytes";
	case KA_BAD_IMPORT: return "an import failed";
	case KA_BAD_STATS: return "figures did not come back";
	}
	return "?";
}

FIXTURE(kill) {
	int unused;
};

FIXTURE_SETUP(kill)
{
}

FIXTURE_TEARDOWN(kill)
{
}

TEST_F_TIMEOUT(kill, anywhere, 3000)
{
	uint64_t rounds = rel_env_u64("KFDPOOL_KILL_ROUNDS", 200);
	uint64_t seed = rel_seed("KFDPOOL_KILL_SEED");
	unsigned long long kills = 0, survived = 0, before_send = 0,
		after_send = 0, importer_done = 0, both = 0, setup_fail = 0;
	unsigned int delay_us = 20000;
	struct rel_counts base, now;
	uint64_t r;
	int fd;

	fd = open("/dev/kfdpool", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		SKIP(return, "/dev/kfdpool: %s", strerror(errno));
	close(fd);
	fd = rel_dmabuf_new(KA_BUF_SIZE);
	if (fd < 0)
		SKIP(return, "no dma-buf source: %s", strerror(-fd));
	close(fd);
	close(rel_src_fd);	/* each child opens its own */
	rel_src_fd = -1;
	rel_src_chosen = REL_SRC_NONE;
	rel_counts_read(&base);
	ksft_print_msg("KFDPOOL_KILL_SEED=0x%llx KFDPOOL_KILL_ROUNDS=%llu\n",
		       (unsigned long long)seed, (unsigned long long)rounds);

	for (r = 0; r < rounds; r++) {
		int sv[2], ctlp[2], prog[2], est, ist;
		unsigned int victim = rel_below(&seed, 10);
		bool kill_exp = victim < 6 || victim >= 8;
		bool kill_imp = victim >= 6;
		char seen[8] = {};
		pid_t exp, imp;
		ssize_t n;

		ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC,
					0, sv));
		ASSERT_EQ(0, pipe2(ctlp, O_CLOEXEC));
		ASSERT_EQ(0, pipe2(prog, O_CLOEXEC | O_NONBLOCK));
		exp = fork();
		ASSERT_LE(0, exp);
		if (!exp) {
			close(sv[1]);
			close(ctlp[1]);
			close(prog[0]);
			_exit(ka_exporter(sv[0], ctlp[0], prog[1], r,
					  seed ^ (r << 20)));
		}
		imp = fork();
		ASSERT_LE(0, imp);
		if (!imp) {
			close(sv[0]);
			close(ctlp[0]);
			close(ctlp[1]);
			close(prog[0]);
			_exit(ka_importer(sv[1], prog[1], seed ^ (r << 40)));
		}
		close(sv[0]);
		close(sv[1]);
		close(ctlp[0]);
		close(prog[1]);

		usleep(rel_below(&seed, delay_us + 1));
		if (kill_exp)
			kill(exp, SIGKILL);
		if (kill_imp)
			kill(imp, SIGKILL);
		kills += kill_exp + kill_imp;
		both += kill_exp && kill_imp;

		/* The survivor finishes on its own (the importer) or is told. */
		if (!kill_exp) {
			ASSERT_EQ(imp, waitpid(imp, &ist, 0));
			ASSERT_EQ(1, write(ctlp[1], "x", 1));
			ASSERT_EQ(exp, waitpid(exp, &est, 0));
		} else {
			ASSERT_EQ(exp, waitpid(exp, &est, 0));
			ASSERT_EQ(imp, waitpid(imp, &ist, 0));
		}
		close(ctlp[1]);
		n = read(prog[0], seen, sizeof(seen) - 1);
		close(prog[0]);
		if (n > 0 && strchr(seen, 's'))
			after_send++;
		else
			before_send++;
		if (n > 0 && strchr(seen, 'd'))
			importer_done++;
		/* Keep the kill points spread over the whole exchange. */
		if (n > 0 && strchr(seen, 'd'))
			delay_us = delay_us * 3 / 4 + 100;
		else if (!(n > 0 && strchr(seen, 's')))
			delay_us = delay_us * 5 / 4 + 1000;

		if ((!WIFSIGNALED(est) && WEXITSTATUS(est) == KA_SETUP) ||
		    (!WIFSIGNALED(ist) && WEXITSTATUS(ist) == KA_SETUP)) {
			setup_fail++;
			EXPECT_GT(3, setup_fail) TH_LOG("round %llu: set-up failed",
						       (unsigned long long)r);
		}
		/* The survivor, if any, must have been happy. */
		if (!kill_exp) {
			EXPECT_TRUE(WIFEXITED(est) && WEXITSTATUS(est) == KA_OK)
				TH_LOG("round %llu: exporter whose importer died: %s",
				       (unsigned long long)r, ka_why(est));
			survived += WIFEXITED(est) && WEXITSTATUS(est) == KA_OK;
		}
		if (!kill_imp) {
			EXPECT_TRUE(WIFEXITED(ist) &&
				    (WEXITSTATUS(ist) == KA_OK ||
				     WEXITSTATUS(ist) == KA_NO_MSG))
				TH_LOG("round %llu: importer whose exporter died: %s",
				       (unsigned long long)r, ka_why(ist));
			survived += WIFEXITED(ist) && WEXITSTATUS(ist) == KA_OK;
		}
		if (WIFSIGNALED(est) && WTERMSIG(est) != SIGKILL)
			EXPECT_TRUE(0) TH_LOG("exporter crashed: signal %d",
					      WTERMSIG(est));
		if (WIFSIGNALED(ist) && WTERMSIG(ist) != SIGKILL)
			EXPECT_TRUE(0) TH_LOG("importer crashed: signal %d",
					      WTERMSIG(ist));

		/* Nothing left behind. */
		ASSERT_TRUE(rel_counts_settle(&base, &now)) {
			TH_LOG("round %llu: dma-bufs %ld -> %ld, pools %ld -> %ld, module refs %ld -> %ld",
			       (unsigned long long)r, base.dmabufs, now.dmabufs,
			       base.pools, now.pools, base.refcnt, now.refcnt);
		}
		if (_metadata->exit_code)
			break;
	}
	ksft_print_msg("killanywhere: %llu rounds, %llu kills (%llu rounds killed both), %llu survivors checked ok; kills before the hand-over %llu, after %llu (importer done %llu)\n",
		       (unsigned long long)r, kills, both, survived,
		       before_send, after_send, importer_done);
	EXPECT_EQ(rounds, r);
}

/* ---- persistent pools ---- */

#define KP_NAME "ka-persist"

/* What a producer hands over: the pool's id, handles and a record. */
struct kp_msg {
	__u8 id[KFDPOOL_ID_LEN];
	struct kfdpool_pool_handle owner, import;
	struct kfdpool_record rec;
	uint32_t tag;
};

/* Create, fill and hand over a persistent pool, then churn until killed. */
static int kp_producer(int out, uint32_t tag, uint64_t seed)
{
	struct kfdpool_record churn[4] = {};
	struct kp_msg m = {};
	int pool, fd, i;
	uint32_t e = 0;

	pool = kfd_persist_new(KP_NAME, m.id);
	if (pool < 0)
		return KA_SETUP;
	fd = rel_alloc(pool, KA_BUF_SIZE, tag, &e);
	if (fd < 0 || rel_dmabuf_pattern(fd, KA_BUF_SIZE, tag, true))
		return KA_SETUP;
	close(fd);
	m.tag = tag;
	if (rel_export(pool, e, 0, KA_BUF_SIZE, &m.rec) ||
	    kfd_owner_handle(pool, &m.owner) ||
	    kfd_import_handle(pool, &m.import))
		return KA_SETUP;
	if (write(out, &m, sizeof(m)) != sizeof(m))
		return KA_SETUP;
	for (i = 0;; i++) {
		unsigned int k = rel_below(&seed, 4);

		switch (rel_below(&seed, 4)) {
		case 0:
			fd = rel_alloc(pool, k ? KA_BUF_SIZE : 16 << 20, k, &e);
			if (fd >= 0) {
				close(fd);
				rel_export(pool, e, 0, 64, &churn[k]);
			}
			break;
		case 1:
			rel_revoke(pool, &churn[k]);
			break;
		case 2:
			rel_unpin(pool, REC(&churn[k])->entry_id);
			break;
		default:
			fd = rel_pool_export(pool);
			if (fd >= 0)
				close(fd);
		}
	}
	return KA_OK;
}

/*
 * Adopt the pool (the producer is dead: nobody else holds it) and check
 * the producer's bytes, then churn, destroying it now and then, until
 * killed.  KA_OK when it found the pool destroyed already.
 */
static int kp_adopter(const struct kp_msg *m, uint64_t seed)
{
	struct kfdpool_record churn[4] = {};
	struct kfdpool_import im;
	int pool = -EBUSY, fd, i;
	uint32_t e = 0;

	for (i = 0; i < 300 && pool == -EBUSY; i++) {
		pool = kfd_adopt_open(&m->owner, NULL);
		if (pool == -EBUSY)
			usleep(10000);
	}
	if (pool < 0)
		return pool == -ENOENT ? KA_OK : KA_BAD_IMPORT;
	fd = rel_import(pool, &m->rec, 0, &im);
	if (fd < 0 || rel_dmabuf_pattern(fd, KA_BUF_SIZE, m->tag, false))
		return KA_BAD_BYTES;
	close(fd);
	rel_release(pool, im.entry_id);
	for (;;) {
		unsigned int k = rel_below(&seed, 4);

		switch (rel_below(&seed, 8)) {
		case 0:
			kfd_destroy(pool);
			break;
		case 1:
		case 2:
			fd = rel_alloc(pool, KA_BUF_SIZE, k, &e);
			if (fd >= 0) {
				close(fd);
				rel_export(pool, e, 0, 64, &churn[k]);
			}
			break;
		case 3:
			rel_revoke(pool, &churn[k]);
			break;
		case 4:
			rel_unpin(pool, REC(&churn[k])->entry_id);
			break;
		default:
			rel_import(pool, &m->rec, KFDPOOL_IMPORT_VALIDATE, NULL);
		}
	}
	return KA_OK;
}

/* A consumer after the producer's death: the handed-over bytes. */
static int kp_consume(const struct kp_msg *m)
{
	int ctl = open("/dev/kfdpool", O_RDWR | O_CLOEXEC), imp, fd, ret;
	struct kfdpool_import im;

	if (ctl < 0)
		return KA_SETUP;
	imp = kfd_handle_import(ctl, &m->import);
	close(ctl);
	if (imp < 0)
		return KA_BAD_IMPORT;
	fd = rel_import(imp, &m->rec, 0, &im);
	ret = fd < 0 ? KA_BAD_IMPORT :
	      rel_dmabuf_pattern(fd, KA_BUF_SIZE, m->tag, false) ?
	      KA_BAD_BYTES : KA_OK;
	if (fd >= 0)
		close(fd);
	close(imp);
	return ret;
}

TEST_F_TIMEOUT(kill, persistent, 3000)
{
	uint64_t rounds = rel_env_u64("KFDPOOL_KILL_ROUNDS", 200) / 4;
	uint64_t seed = rel_seed("KFDPOOL_KILL_SEED") ^ 0x5045525349535400ull;
	unsigned long long handed = 0, consumed = 0, adopted = 0;
	unsigned int delay_us = 20000;
	struct rel_counts base, now;
	struct kfdpool_query q;
	long long old_persist;
	uint64_t r;

	if (kfd_query(&q) || !(q.features & KFDPOOL_FEATURE_PERSIST))
		SKIP(return, "no persistent pools in this module");
	old_persist = kfd_persist_enable(64);
	ASSERT_LE(0, old_persist);
	kfd_persist_sweep(KP_NAME);
	rel_counts_read(&base);
	ksft_print_msg("KFDPOOL_KILL_SEED (persistent, xored) 0x%llx, %llu rounds\n",
		       (unsigned long long)seed, (unsigned long long)rounds);

	for (r = 0; r < rounds; r++) {
		struct kp_msg m;
		int p[2], st;
		pid_t pid;
		bool have;

		ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			close(p[0]);
			_exit(kp_producer(p[1], (uint32_t)r, seed ^ (r << 20)));
		}
		close(p[1]);
		usleep(rel_below(&seed, delay_us + 1));
		kill(pid, SIGKILL);
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
			TH_LOG("round %llu: producer: %s", (unsigned long long)r,
			       ka_why(st));
		have = read(p[0], &m, sizeof(m)) == sizeof(m);
		close(p[0]);
		/* Kill points before the hand-over, then after, in turn. */
		delay_us = have ? delay_us * 3 / 4 + 100 : delay_us * 5 / 4 + 1000;

		if (have) {
			handed++;
			/* Handed over: it outlived its producer, bytes and all. */
			EXPECT_EQ(KA_OK, kp_consume(&m))
				TH_LOG("round %llu: consumer after the producer's death",
				       (unsigned long long)r);
			consumed++;
			pid = fork();
			ASSERT_LE(0, pid);
			if (!pid)
				_exit(kp_adopter(&m, seed ^ (r << 40)));
			usleep(rel_below(&seed, 20000));
			kill(pid, SIGKILL);
			ASSERT_EQ(pid, waitpid(pid, &st, 0));
			/* Killed, or done: a crash is a failure, not a kill. */
			EXPECT_TRUE(WIFSIGNALED(st) ? WTERMSIG(st) == SIGKILL :
				    WEXITSTATUS(st) == KA_OK)
				TH_LOG("round %llu: adopter: %s",
				       (unsigned long long)r, ka_why(st));
			adopted += WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
		}

		/* What the round left goes by id; then nothing is left. */
		kfd_persist_sweep(KP_NAME);
		ASSERT_TRUE(rel_counts_settle(&base, &now)) {
			TH_LOG("round %llu: dma-bufs %ld -> %ld, pools %ld -> %ld, module refs %ld -> %ld",
			       (unsigned long long)r, base.dmabufs, now.dmabufs,
			       base.pools, now.pools, base.refcnt, now.refcnt);
		}
		ASSERT_EQ(0, kfd_query(&q));
		ASSERT_EQ(0, q.user_persistent);
		ASSERT_EQ(0, q.user_persistent_bytes);
		if (_metadata->exit_code)
			break;
	}
	kfd_param_set("max_user_persistent", old_persist);
	ksft_print_msg("killanywhere (persistent): %llu rounds, %llu handed over and imported after the producer's death, %llu adopters killed\n",
		       (unsigned long long)r, handed, adopted);
	EXPECT_EQ(rounds, r);
	EXPECT_EQ(handed, consumed);
}

TEST_HARNESS_MAIN
