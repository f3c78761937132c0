/* SPDX-License-Identifier: MIT */
/*
 * kfdpool-stat: one snapshot of the pools and of who holds them.
 *
 * Pools come from KFDPOOL_IOC_POOL_LIST; the pool fds of each process from
 * /proc/PID/fdinfo/FD.  Fds that show the same kfdpool-file-id are one
 * open file (one file description: dup, fork, fd passing), which is what
 * the kernel counts and accounts: an import file is one importer however
 * many processes hold it.
 */
#ifndef KFDPOOL_STAT_H
#define KFDPOOL_STAT_H

#include <stddef.h>

#include "stat_parse.h"

#define KPS_MAX_NOTES	8
#define KPS_COMM_LEN	64	/* /proc/PID/comm, as read */

/* One fd of one process that is a pool fd. */
struct kps_holder {
	int pid;
	int fd;
	char comm[KPS_COMM_LEN];
	struct kps_fdinfo fi;
	size_t file;		/* index in kps_snapshot.files */
};

/* One open pool file and the fds (of any process) that refer to it. */
struct kps_file {
	const struct kps_fdinfo *fi;	/* of its first holder */
	size_t *holders;		/* indexes in kps_snapshot.holders */
	size_t nholders;
};

/* Where the pool list came from. */
enum kps_source {
	KPS_SOURCE_IOCTL,	/* POOL_LIST */
	KPS_SOURCE_FDINFO,	/* rebuilt from the fds that could be read */
};

struct kps_snapshot {
	struct kps_pool *pools;
	size_t npools;
	enum kps_source source;
	unsigned int scope;	/* KFDPOOL_POOL_LIST_ALL / _OWN, 0 for fdinfo */
	struct kps_holder *holders;
	size_t nholders, cap;
	struct kps_file *files;
	size_t nfiles;
	size_t unreadable_procs;
	size_t bad_fdinfo;
	char notes[KPS_MAX_NOTES][256];
	int nnotes;
};

/* Options that shape the output. */
struct kps_opts {
	const char *pool;	/* only this pool id, or NULL */
	const char *device;
	const char *proc;
	int bytes;		/* text: sizes in bytes */
};

/* Group the holders into files (by pool id and file id). */
int kps_group_files(struct kps_snapshot *s);

/* The module's limits, from KFDPOOL_IOC_QUERY (known: 0 when it failed). */
struct kps_limits {
	int known;
	uint64_t default_pool_limit;
	uint32_t max_entries;
	uint32_t max_records;
	uint32_t max_user_records;
	uint32_t max_user_persistent;
	uint64_t max_user_persistent_bytes;
};

/*
 * The snapshot in Prometheus's text format (every pool, per-user and
 * global sums, the limits when known); malloc'd.  NULL when the pools did
 * not come from POOL_LIST (no uid to sum by) or out of memory.
 */
char *kps_prometheus(const struct kps_snapshot *s, const struct kps_limits *l);

/* The snapshot as one line of JSON (NDJSON), newline included; malloc'd. */
char *kps_json(const struct kps_snapshot *s, const struct kps_opts *o,
	       long long now);

#endif /* KFDPOOL_STAT_H */
