/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel's per-pointer costs, one operation at a time, in one process:
 * an owner fd exports and revokes, an import fd of the same pool (which
 * already holds the entry) validates.  Shared by kcost_bench (the figures)
 * and bench_budget (make check's instruction budgets), so that a budget
 * measures exactly what the benchmark reports.
 *
 * Each kc_*() returns the median over @rounds of the cost per pointer of
 * KC_N operations; whatever a measured operation leaves behind (records)
 * is undone outside the clock.
 */
#ifndef KFDPOOL_KCOST_H
#define KFDPOOL_KCOST_H

#include <liburing.h>
#include <sys/syscall.h>

#include "bench.h"

#define KC_CHUNK	(2u << 20)
#define KC_PTR		4096u
#define KC_N		(KC_CHUNK / KC_PTR)	/* 512 pointers, one entry */
#define KC_URING_BATCH	64

struct kcost {
	int ctl, pool, imp, held_fd;
	uint32_t entry;
	struct io_uring ring;
	struct kfdpool_export ex[KC_N];
	struct kfdpool_record rec[KC_N];	/* live, for validation */
	struct kfdpool_import im[KC_N];
	struct kfdpool_revoke rv[KC_N];
	int res[KC_N];
};

static inline void kc_prep_exports(struct kcost *k)
{
	unsigned int i;

	for (i = 0; i < KC_N; i++)
		k->ex[i] = (struct kfdpool_export){
			.entry_id = k->entry,
			.offset = (uint64_t)i * KC_PTR,
			.size = KC_PTR,
		};
}

static inline void kc_check_exports(struct kcost *k)
{
	unsigned int i;

	for (i = 0; i < KC_N; i++)
		if (k->ex[i].status)
			die("export %u: %s", i, strerror(-k->ex[i].status));
}

static inline void kc_batch(int fd, unsigned long cmd, void *ops, size_t elem)
{
	struct kfdpool_batch b = { .ops = (uintptr_t)ops, .count = KC_N,
				   .elem_size = elem };

	if (xioctl(fd, cmd, &b) != KC_N)
		die("batch ioctl %#lx: %s", cmd, strerror(errno));
}

/* Revoke what ex[] holds (outside the clock). */
static inline void kc_revoke_exports(struct kcost *k)
{
	unsigned int i;

	for (i = 0; i < KC_N; i++)
		k->rv[i] = (struct kfdpool_revoke){ .record = k->ex[i].record };
	kc_batch(k->pool, KFDPOOL_IOC_REVOKE_BATCH, k->rv, sizeof(k->rv[0]));
}

static inline void kc_sqe(struct kcost *k, uint32_t op, const void *payload,
			  size_t len, uint64_t data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&k->ring);

	if (!sqe)
		die("io_uring: no SQE");
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, op == KFDPOOL_URING_IMPORT ?
			 k->imp : k->pool, NULL, 0, 0);
	sqe->cmd_op = op;
	memset(sqe->cmd, 0, 80);
	memcpy(sqe->cmd, payload, len);
	sqe->user_data = data;
}

static inline void kc_reap(struct kcost *k, unsigned int n)
{
	struct io_uring_cqe *cqe;
	int ret = io_uring_submit_and_wait(&k->ring, n);

	if (ret < 0)
		die("io_uring_submit_and_wait: %s", strerror(-ret));
	while (n--) {
		ret = io_uring_wait_cqe(&k->ring, &cqe);
		if (ret)
			die("io_uring_wait_cqe: %s", strerror(-ret));
		k->res[cqe->user_data] = cqe->res;
		io_uring_cqe_seen(&k->ring, cqe);
	}
}

static inline void kc_check_res(struct kcost *k, const char *what)
{
	unsigned int i;

	for (i = 0; i < KC_N; i++)
		if (k->res[i] < 0)
			die("%s %u: %s", what, i, strerror(-k->res[i]));
}

/* A pool with one pinned 2 MiB entry, KC_N live records, an import fd
 * that holds the entry, a ring. */
static inline void kc_setup(struct kcost *k)
{
	struct kfdpool_pool_create pc = { .handle_types = KFDPOOL_HANDLE_TYPE_FD };
	struct kfdpool_pool_export pe = { 0 };
	struct kfdpool_pin pin = { 0 };
	struct kfdpool_import first = { 0 };
	unsigned int i;
	int ret;

	memset(k, 0, sizeof(*k));
	k->ctl = open("/dev/kfdpool", O_RDWR | O_CLOEXEC);
	if (k->ctl < 0)
		die("/dev/kfdpool: %s", strerror(errno));
	strcpy(pc.name, "kcost");
	if (xioctl(k->ctl, KFDPOOL_IOC_POOL_CREATE, &pc))
		die("pool create: %s", strerror(errno));
	k->pool = pc.fd;
	pin.dmabuf_fd = heap_dmabuf(KC_CHUNK);
	if (xioctl(k->pool, KFDPOOL_IOC_PIN, &pin))
		die("pin: %s", strerror(errno));
	close(pin.dmabuf_fd);
	k->entry = pin.entry_id;
	if (xioctl(k->pool, KFDPOOL_IOC_POOL_EXPORT, &pe))
		die("pool export: %s", strerror(errno));
	k->imp = pe.fd;
	kc_prep_exports(k);
	kc_batch(k->pool, KFDPOOL_IOC_EXPORT_BATCH, k->ex, sizeof(k->ex[0]));
	kc_check_exports(k);
	for (i = 0; i < KC_N; i++)
		k->rec[i] = k->ex[i].record;
	first.record = k->rec[0];
	if (xioctl(k->imp, KFDPOOL_IOC_IMPORT, &first))
		die("import: %s", strerror(errno));
	k->held_fd = first.fd;
	ret = io_uring_queue_init(2 * KC_URING_BATCH, &k->ring, IORING_SETUP_SQE128);
	if (ret)
		die("io_uring_queue_init: %s", strerror(-ret));
}

static inline void kc_teardown(struct kcost *k)
{
	io_uring_queue_exit(&k->ring);
	close(k->held_fd);
	close(k->imp);
	close(k->pool);
	close(k->ctl);
}

enum kc_op {
	KC_GETPPID,		/* a system call round trip */
	KC_IOCTL_ENOTTY,	/* the module's ioctl entry, nothing done */
	KC_EXPORT,		/* one ioctl per pointer */
	KC_EXPORT_BATCH,	/* KC_N pointers in one EXPORT_BATCH */
	KC_EXPORT_URING,	/* an SQE per pointer, KC_URING_BATCH a submit */
	KC_REVOKE,
	KC_REVOKE_BATCH,
	KC_VALIDATE,		/* validate-only import, one ioctl each */
	KC_VALIDATE_BATCH,
	KC_VALIDATE_URING,
	KC_NOPS
};

static const char *const kc_names[KC_NOPS] = {
	[KC_GETPPID] = "system call (getppid)",
	[KC_IOCTL_ENOTTY] = "ioctl the module refuses (ENOTTY)",
	[KC_EXPORT] = "export (ioctl)",
	[KC_EXPORT_BATCH] = "export (batch of 512)",
	[KC_EXPORT_URING] = "export (io_uring batch 64)",
	[KC_REVOKE] = "revoke (ioctl)",
	[KC_REVOKE_BATCH] = "revoke (batch of 512)",
	[KC_VALIDATE] = "validate-only import (ioctl)",
	[KC_VALIDATE_BATCH] = "validate-only import (batch of 512)",
	[KC_VALIDATE_URING] = "validate-only import (io_uring batch 64)",
};

/* One round: the ns (or, under icount, instructions) of KC_N operations. */
static inline uint64_t kc_round(struct kcost *k, enum kc_op op)
{
	unsigned int i, j;
	uint64_t t0, t;

	if (op == KC_REVOKE || op == KC_REVOKE_BATCH) {
		kc_prep_exports(k);
		kc_batch(k->pool, KFDPOOL_IOC_EXPORT_BATCH, k->ex, sizeof(k->ex[0]));
		kc_check_exports(k);
		for (i = 0; i < KC_N; i++)
			k->rv[i] = (struct kfdpool_revoke){ .record = k->ex[i].record };
	} else if (op == KC_EXPORT || op == KC_EXPORT_BATCH) {
		kc_prep_exports(k);
	} else if (op == KC_VALIDATE || op == KC_VALIDATE_BATCH) {
		for (i = 0; i < KC_N; i++)
			k->im[i] = (struct kfdpool_import){
				.record = k->rec[i],
				.flags = KFDPOOL_IMPORT_VALIDATE,
			};
	}

	t0 = now_ns();
	switch (op) {
	case KC_GETPPID:
		for (i = 0; i < KC_N; i++)
			syscall(SYS_getppid);
		break;
	case KC_IOCTL_ENOTTY:
		for (i = 0; i < KC_N; i++)
			if (ioctl(k->pool, _IO(KFDPOOL_IOC_MAGIC, 0x7f)) != -1 ||
			    errno != ENOTTY)
				die("unknown ioctl: not ENOTTY");
		break;
	case KC_EXPORT:
		for (i = 0; i < KC_N; i++)
			if (xioctl(k->pool, KFDPOOL_IOC_EXPORT, &k->ex[i]))
				die("export %u: %s", i, strerror(errno));
		break;
	case KC_EXPORT_BATCH:
		kc_batch(k->pool, KFDPOOL_IOC_EXPORT_BATCH, k->ex, sizeof(k->ex[0]));
		break;
	case KC_EXPORT_URING:
		for (i = 0; i < KC_N; i += KC_URING_BATCH) {
			for (j = i; j < i + KC_URING_BATCH; j++) {
				struct kfdpool_uring_export u = {
					.entry_id = k->entry,
					.offset = (uint64_t)j * KC_PTR,
					.size = KC_PTR,
					.record_ptr = (uintptr_t)&k->ex[j].record,
				};

				kc_sqe(k, KFDPOOL_URING_EXPORT, &u, sizeof(u), j);
			}
			kc_reap(k, KC_URING_BATCH);
		}
		break;
	case KC_REVOKE:
		for (i = 0; i < KC_N; i++)
			if (xioctl(k->pool, KFDPOOL_IOC_REVOKE, &k->rv[i]))
				die("revoke %u: %s", i, strerror(errno));
		break;
	case KC_REVOKE_BATCH:
		kc_batch(k->pool, KFDPOOL_IOC_REVOKE_BATCH, k->rv, sizeof(k->rv[0]));
		break;
	case KC_VALIDATE:
		for (i = 0; i < KC_N; i++)
			if (xioctl(k->imp, KFDPOOL_IOC_IMPORT, &k->im[i]))
				die("validate %u: %s", i, strerror(errno));
		break;
	case KC_VALIDATE_BATCH:
		kc_batch(k->imp, KFDPOOL_IOC_IMPORT_BATCH, k->im, sizeof(k->im[0]));
		break;
	case KC_VALIDATE_URING:
		for (i = 0; i < KC_N; i += KC_URING_BATCH) {
			for (j = i; j < i + KC_URING_BATCH; j++) {
				struct kfdpool_uring_record u = {
					.record = k->rec[j],
					.flags = KFDPOOL_IMPORT_VALIDATE,
				};

				kc_sqe(k, KFDPOOL_URING_IMPORT, &u, sizeof(u), j);
			}
			kc_reap(k, KC_URING_BATCH);
		}
		break;
	case KC_NOPS:
		break;
	}
	t = now_ns() - t0;

	switch (op) {
	case KC_EXPORT:
	case KC_EXPORT_BATCH:
		kc_check_exports(k);
		kc_revoke_exports(k);
		break;
	case KC_EXPORT_URING:
		kc_check_res(k, "uring export");
		kc_revoke_exports(k);
		break;
	case KC_REVOKE_BATCH:
		for (i = 0; i < KC_N; i++)
			if (k->rv[i].status)
				die("revoke %u: %s", i, strerror(-k->rv[i].status));
		break;
	case KC_VALIDATE_BATCH:
		for (i = 0; i < KC_N; i++)
			if (k->im[i].status)
				die("validate %u: %s", i, strerror(-k->im[i].status));
		break;
	case KC_VALIDATE_URING:
		kc_check_res(k, "uring validate");
		break;
	default:
		break;
	}
	return t;
}

/* Median cost per pointer over @rounds rounds (after one to warm up). */
static inline double kc_cost(struct kcost *k, enum kc_op op, unsigned int rounds)
{
	double v[64];
	unsigned int r;

	if (rounds > 64)
		rounds = 64;
	kc_round(k, op);
	for (r = 0; r < rounds; r++)
		v[r] = (double)kc_round(k, op) / KC_N;
	return median(v, rounds);
}

#endif /* KFDPOOL_KCOST_H */
