/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The module's encoding of records and handles, as docs/uapi.md describes
 * it: opaque to user space, but the tests alter fields one at a time to
 * check that every change is refused.  The views are packed and may alias
 * the byte arrays they overlay (else -O2 may reorder the accesses).
 */
#ifndef KFDPOOL_FORMAT_H
#define KFDPOOL_FORMAT_H

#include <linux/kfdpool.h>

/* The module's limits; QUERY reports max_batch and max_records. */
#define KFD_BATCH_MAX		4096
#define KFD_MAX_RECORDS		(1 << 20)
/* The most pools one POOL_LIST call fills. */
#define KFD_POOL_LIST_PAGE	256

#define KFDPOOL_RECORD_MAGIC	0x6b667052	/* "Rpfk" */
#define KFDPOOL_HANDLE_MAGIC	0x6b667048	/* "Hpfk" */
#define KFDPOOL_OWNER_HANDLE_MAGIC	0x6b66704f	/* "Opfk": adopts, never imports */

struct kfd_rec {
	__u8 pool_id[KFDPOOL_ID_LEN];
	__u32 magic;
	__u32 record_id;
	__u32 entry_id;
	__u32 generation;
	__u64 offset;
	__u64 size;
	__u8 nonce[16];
} __attribute__((packed, may_alias));

struct kfd_hnd {
	__u8 pool_id[KFDPOOL_ID_LEN];
	__u32 magic;
	__u32 policy;
	__u32 gid;
	__u32 uid;
	__u8 secret[16];
	__u8 pad[16];
} __attribute__((packed, may_alias));

_Static_assert(sizeof(struct kfd_rec) == KFDPOOL_RECORD_SIZE, "record");
_Static_assert(sizeof(struct kfd_hnd) == KFDPOOL_HANDLE_SIZE, "handle");

#define REC(r)	((struct kfd_rec *)(r)->data)
#define HND(h)	((struct kfd_hnd *)(h)->data)

#endif
