// SPDX-License-Identifier: GPL-2.0-only
/*
 * persist_bench: what a persistent pool saves a producer that restarts.
 * A producer process creates a persistent pool and fills 1 GiB of it as a
 * model server's weight loader would (512 ALLOCs of 2 MiB, every byte
 * written, one record per buffer, exported in one batch), hands over the
 * owner handle and the records, and exits.  The next process adopts the
 * pool and imports all 512 records in one batch, and maps them: its
 * memory is back without one byte written.  Figures of both, and the
 * ratio, medians of min(BENCH_ROUNDS, 3) rounds (1 GiB a round in a 2 GiB
 * guest).  Prints figures only; nothing is asserted.
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "bench.h"

#define NBUF	512
#define BUFSZ	(2ul << 20)

struct handover {
	struct kfdpool_pool_handle owner;
	struct kfdpool_record rec[NBUF];
	double create_alloc, fill, export;
};

static double since(uint64_t *t)
{
	uint64_t now = now_ns(), d = now - *t;

	*t = now;
	return (double)d;
}

/* The producer: create, fill, export, hand over, exit. */
static void producer(int out)
{
	static struct kfdpool_export ex[NBUF];
	static struct handover h;
	struct kfdpool_pool_create pc = {
		.flags = KFDPOOL_POOL_PERSIST,
		.handle_types = KFDPOOL_HANDLE_TYPE_FD,
		.name = "persist_bench",
	};
	struct kfdpool_handle_export he = {
		.policy = KFDPOOL_HANDLE_POLICY_UID,
		.flags = KFDPOOL_HANDLE_EXPORT_OWNER,
	};
	struct kfdpool_batch b = { .count = NBUF, .elem_size = sizeof(ex[0]) };
	int ctl, fd, i;
	uint64_t t;
	char *p;

	ctl = open("/dev/kfdpool", O_RDWR | O_CLOEXEC);
	t = now_ns();
	if (ctl < 0 || xioctl(ctl, KFDPOOL_IOC_POOL_CREATE, &pc))
		die("create: %s", strerror(errno));
	for (i = 0; i < NBUF; i++) {
		struct kfdpool_alloc a = { .size = BUFSZ, .cookie = i };

		if (xioctl(pc.fd, KFDPOOL_IOC_ALLOC, &a))
			die("alloc %d: %s", i, strerror(errno));
		ex[i].entry_id = a.entry_id;
		ex[i].size = BUFSZ;
		/* Write every byte, as a loader copies its checkpoint in. */
		fd = a.fd;
		h.create_alloc += since(&t);
		p = mmap(NULL, BUFSZ, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			die("mmap: %s", strerror(errno));
		memset(p, i, BUFSZ);
		munmap(p, BUFSZ);
		close(fd);
		h.fill += since(&t);
	}
	b.ops = (uintptr_t)ex;
	if (xioctl(pc.fd, KFDPOOL_IOC_EXPORT_BATCH, &b) != NBUF)
		die("export batch: %s", strerror(errno));
	h.export = since(&t);
	for (i = 0; i < NBUF; i++) {
		if (ex[i].status)
			die("export %d: %s", i, strerror(-ex[i].status));
		h.rec[i] = ex[i].record;
	}
	if (xioctl(pc.fd, KFDPOOL_IOC_HANDLE_EXPORT, &he))
		die("owner handle: %s", strerror(errno));
	h.owner = he.handle;
	write_all(out, &h, sizeof(h));
	_exit(0);
}

struct warm {
	double adopt, import, map;
};

/* The next process: adopt, import every record, map every buffer. */
static void adopter(const struct handover *h, struct warm *w)
{
	static struct kfdpool_import im[NBUF];
	static char *maps[NBUF];
	struct kfdpool_pool_adopt a = { .handle = h->owner };
	struct kfdpool_batch b = { .count = NBUF, .elem_size = sizeof(im[0]) };
	struct kfdpool_pool_destroy d = { 0 };
	int ctl, i;
	uint64_t t;

	ctl = open("/dev/kfdpool", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		die("/dev/kfdpool: %s", strerror(errno));
	t = now_ns();
	if (xioctl(ctl, KFDPOOL_IOC_POOL_ADOPT, &a))
		die("adopt: %s", strerror(errno));
	w->adopt = since(&t);
	memset(im, 0, sizeof(im));
	for (i = 0; i < NBUF; i++)
		im[i].record = h->rec[i];
	b.ops = (uintptr_t)im;
	if (xioctl(a.fd, KFDPOOL_IOC_IMPORT_BATCH, &b) != NBUF)
		die("import batch: %s", strerror(errno));
	w->import = since(&t);
	for (i = 0; i < NBUF; i++) {
		if (im[i].status)
			die("import %d: %s", i, strerror(-im[i].status));
		maps[i] = mmap(NULL, BUFSZ, PROT_READ, MAP_SHARED, im[i].fd, 0);
		if (maps[i] == MAP_FAILED)
			die("mmap import: %s", strerror(errno));
	}
	w->map = since(&t);
	/* The bytes are the producer's (one page a buffer, unmeasured). */
	for (i = 0; i < NBUF; i++) {
		if (maps[i][BUFSZ - 1] != (char)i)
			die("buffer %d: wrong bytes", i);
		munmap(maps[i], BUFSZ);
		close(im[i].fd);
	}
	if (xioctl(a.fd, KFDPOOL_IOC_POOL_DESTROY, &d))
		die("destroy: %s", strerror(errno));
	close(a.fd);
	close(ctl);
}

static const char *const rows[] = {
	"fill it again (512 x 2 MiB)", "adopt it (512 x 2 MiB)",
	"fill again / adopt",
};
static const char *const cols[] = {
	"create + ALLOC", "write every byte", "export 512 records",
	"adopt", "import 512 records", "mmap 512 buffers", "ratio",
};

int main(void)
{
	int rounds = env_int("BENCH_ROUNDS", 7), r, p[2], st;
	static struct handover h;
	double *v[7];
	struct warm w;
	unsigned int k;
	pid_t pid;

	if (rounds > 3)
		rounds = 3;
	for (k = 0; k < 7; k++)
		v[k] = calloc(rounds, sizeof(double));
	for (r = 0; r < rounds; r++) {
		if (pipe(p))
			die("pipe: %s", strerror(errno));
		pid = fork();
		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (!pid) {
			close(p[0]);
			producer(p[1]);
		}
		close(p[1]);
		read_all(p[0], &h, sizeof(h));
		close(p[0]);
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			die("producer failed");
		adopter(&h, &w);
		v[0][r] = h.create_alloc;
		v[1][r] = h.fill;
		v[2][r] = h.export;
		v[3][r] = w.adopt;
		v[4][r] = w.import;
		v[5][r] = w.map;
		v[6][r] = (h.create_alloc + h.fill + h.export) /
			  (w.adopt + w.import + w.map);
	}
	for (k = 0; k < 7; k++)
		figure("persistent pool of 1 GiB", rows[k / 3], cols[k],
		       median(v[k], rounds), k < 6 ? "ns" : "x");
	return 0;
}
