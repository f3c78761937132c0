/* SPDX-License-Identifier: MIT */
/*
 * The few bytes of records and handles that docs/uapi.md lets user space
 * read within an ABI version: the pool id, the magic and a record's entry
 * id.  The rest (record ids, generations, nonces, MACs) is the module's.
 */
#ifndef KFDPOOL_FORMAT_H
#define KFDPOOL_FORMAT_H

#include <stdint.h>
#include <string.h>
#include <linux/kfdpool.h>

#define KP_RECORD_MAGIC		0x6b667052u	/* "Rpfk" */
#define KP_HANDLE_MAGIC		0x6b667048u	/* "Hpfk" */
#define KP_MAGIC_OFF		16
#define KP_RECORD_ENTRY_OFF	24

static inline uint32_t kp_get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Is @r a record made by the pool of id @id? */
static inline int kp_record_of_pool(const struct kfdpool_record *r,
				    const uint8_t id[KFDPOOL_ID_LEN])
{
	return kp_get32(r->data + KP_MAGIC_OFF) == KP_RECORD_MAGIC &&
	       !memcmp(r->data, id, KFDPOOL_ID_LEN);
}

/* The entry a record was made in. */
static inline uint32_t kp_record_entry(const struct kfdpool_record *r)
{
	return kp_get32(r->data + KP_RECORD_ENTRY_OFF);
}

/* Is @h (KFDPOOL_HANDLE_SIZE bytes) a kfdpool pool handle? */
static inline int kp_handle_is_kfdpool(const void *h)
{
	return kp_get32((const uint8_t *)h + KP_MAGIC_OFF) == KP_HANDLE_MAGIC;
}

#endif
