// SPDX-License-Identifier: MIT
/*
 * The released uapi, frozen: every struct, field, ioctl number and constant
 * of uapi/linux/kfdpool.h as ABI 2 was released, checked against the header
 * of today.  A struct may only grow at its end (an older caller's smaller
 * struct is zero-filled by the module); a field keeps its offset and size;
 * an ioctl keeps its direction, type and number, its size being its
 * struct's; a constant keeps its value.  New structs, fields after the
 * frozen end, ioctls and constants may come.  A frozen field that is gone
 * fails the build, the one failure a table cannot print.
 *
 * To release a new ABI, append its structs and fields here as they are
 * then; never edit a line of a released one.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <linux/kfdpool.h>

#include "kselftest_harness.h"

struct frozen_struct {
	const char *name;
	size_t size, now;
};

struct frozen_field {
	const char *strct, *name;
	size_t off, size, off_now, size_now;
};

struct frozen_ioctl {
	const char *name;
	unsigned int dir, type, nr, size, now;
	size_t struct_now;
};

struct frozen_const {
	const char *name;
	unsigned long long value, now;
};

#define S(s, sz)	{ #s, sz, sizeof(struct s) }
#define F(s, m, o, sz)	{ #s, #m, o, sz, offsetof(struct s, m), \
			  sizeof(((struct s *)0)->m) }
#define I(c, d, t, n, sz, s) { #c, d, t, n, sz, c, sizeof(struct s) }
#define C(c, v)		{ #c, v, c }

/* ABI 2 */
static const struct frozen_struct structs[] = {
	S(kfdpool_record, 64),
	S(kfdpool_pool_handle, 64),
	S(kfdpool_query, 96),
	S(kfdpool_pool_create, 72),
	S(kfdpool_pool_import_handle, 72),
	S(kfdpool_pool_info, 152),
	S(kfdpool_pool_list, 48),
	S(kfdpool_pool_stats, 152),
	S(kfdpool_pool_export, 8),
	S(kfdpool_pin, 32),
	S(kfdpool_unpin, 16),
	S(kfdpool_export, 96),
	S(kfdpool_revoke, 72),
	S(kfdpool_import, 112),
	S(kfdpool_release, 16),
	S(kfdpool_batch, 24),
	S(kfdpool_handle_export, 80),
	S(kfdpool_handle_rotate, 8),
	S(kfdpool_alloc, 32),
	S(kfdpool_pool_adopt, 88),
	S(kfdpool_pool_destroy_id, 24),
	S(kfdpool_pool_destroy, 8),
	S(kfdpool_uring_export, 32),
	S(kfdpool_uring_record, 72),
};

static const struct frozen_field fields[] = {
	F(kfdpool_record, data, 0, 64),
	F(kfdpool_pool_handle, data, 0, 64),
	F(kfdpool_query, abi_version, 0, 4),
	F(kfdpool_query, features, 4, 4),
	F(kfdpool_query, global_limit, 8, 8),
	F(kfdpool_query, user_limit, 16, 8),
	F(kfdpool_query, default_pool_limit, 24, 8),
	F(kfdpool_query, max_entries, 32, 4),
	F(kfdpool_query, max_batch, 36, 4),
	F(kfdpool_query, max_records, 40, 4),
	F(kfdpool_query, max_user_records, 44, 4),
	F(kfdpool_query, global_pinned, 48, 8),
	F(kfdpool_query, user_pinned, 56, 8),
	F(kfdpool_query, user_records, 64, 4),
	F(kfdpool_query, pad, 68, 4),
	F(kfdpool_query, max_user_persistent, 72, 4),
	F(kfdpool_query, user_persistent, 76, 4),
	F(kfdpool_query, max_user_persistent_bytes, 80, 8),
	F(kfdpool_query, user_persistent_bytes, 88, 8),
	F(kfdpool_pool_create, limit, 0, 8),
	F(kfdpool_pool_create, flags, 8, 4),
	F(kfdpool_pool_create, handle_types, 12, 4),
	F(kfdpool_pool_create, name, 16, 32),
	F(kfdpool_pool_create, fd, 48, 4),
	F(kfdpool_pool_create, pad, 52, 4),
	F(kfdpool_pool_create, id, 56, 16),
	F(kfdpool_pool_import_handle, handle, 0, 64),
	F(kfdpool_pool_import_handle, flags, 64, 4),
	F(kfdpool_pool_import_handle, fd, 68, 4),
	F(kfdpool_pool_info, id, 0, 16),
	F(kfdpool_pool_info, name, 16, 32),
	F(kfdpool_pool_info, limit, 48, 8),
	F(kfdpool_pool_info, handle_types, 56, 4),
	F(kfdpool_pool_info, owner_pid, 60, 4),
	F(kfdpool_pool_info, uid, 64, 4),
	F(kfdpool_pool_info, entries, 68, 4),
	F(kfdpool_pool_info, reserved_bytes, 72, 8),
	F(kfdpool_pool_info, reserved_high, 80, 8),
	F(kfdpool_pool_info, used_bytes, 88, 8),
	F(kfdpool_pool_info, used_high, 96, 8),
	F(kfdpool_pool_info, draining_bytes, 104, 8),
	F(kfdpool_pool_info, imported_bytes, 112, 8),
	F(kfdpool_pool_info, draining_entries, 120, 4),
	F(kfdpool_pool_info, records, 124, 4),
	F(kfdpool_pool_info, import_fds, 128, 4),
	F(kfdpool_pool_info, serial, 132, 4),
	F(kfdpool_pool_info, flags, 136, 4),
	F(kfdpool_pool_info, owner_fds, 140, 4),
	F(kfdpool_pool_info, age_ns, 144, 8),
	F(kfdpool_pool_list, pools, 0, 8),
	F(kfdpool_pool_list, count, 8, 4),
	F(kfdpool_pool_list, info_size, 12, 4),
	F(kfdpool_pool_list, flags, 16, 4),
	F(kfdpool_pool_list, scope, 20, 4),
	F(kfdpool_pool_list, cursor, 24, 8),
	F(kfdpool_pool_list, next_cursor, 32, 8),
	F(kfdpool_pool_list, pad, 40, 8),
	F(kfdpool_pool_stats, flags, 0, 4),
	F(kfdpool_pool_stats, mode, 4, 4),
	F(kfdpool_pool_stats, id, 8, 16),
	F(kfdpool_pool_stats, name, 24, 32),
	F(kfdpool_pool_stats, limit, 56, 8),
	F(kfdpool_pool_stats, handle_types, 64, 4),
	F(kfdpool_pool_stats, owner_pid, 68, 4),
	F(kfdpool_pool_stats, reserved_bytes, 72, 8),
	F(kfdpool_pool_stats, reserved_high, 80, 8),
	F(kfdpool_pool_stats, used_bytes, 88, 8),
	F(kfdpool_pool_stats, used_high, 96, 8),
	F(kfdpool_pool_stats, draining_bytes, 104, 8),
	F(kfdpool_pool_stats, imported_bytes, 112, 8),
	F(kfdpool_pool_stats, fd_imported_bytes, 120, 8),
	F(kfdpool_pool_stats, entries, 128, 4),
	F(kfdpool_pool_stats, draining_entries, 132, 4),
	F(kfdpool_pool_stats, records, 136, 4),
	F(kfdpool_pool_stats, import_fds, 140, 4),
	F(kfdpool_pool_stats, fd_imports, 144, 4),
	F(kfdpool_pool_stats, pad, 148, 4),
	F(kfdpool_pool_export, flags, 0, 4),
	F(kfdpool_pool_export, fd, 4, 4),
	F(kfdpool_pin, dmabuf_fd, 0, 4),
	F(kfdpool_pin, flags, 4, 4),
	F(kfdpool_pin, cookie, 8, 8),
	F(kfdpool_pin, size, 16, 8),
	F(kfdpool_pin, entry_id, 24, 4),
	F(kfdpool_pin, pad, 28, 4),
	F(kfdpool_unpin, entry_id, 0, 4),
	F(kfdpool_unpin, flags, 4, 4),
	F(kfdpool_unpin, revoked, 8, 4),
	F(kfdpool_unpin, draining, 12, 4),
	F(kfdpool_export, entry_id, 0, 4),
	F(kfdpool_export, flags, 4, 4),
	F(kfdpool_export, offset, 8, 8),
	F(kfdpool_export, size, 16, 8),
	F(kfdpool_export, record, 24, 64),
	F(kfdpool_export, status, 88, 4),
	F(kfdpool_export, pad, 92, 4),
	F(kfdpool_revoke, record, 0, 64),
	F(kfdpool_revoke, flags, 64, 4),
	F(kfdpool_revoke, status, 68, 4),
	F(kfdpool_import, record, 0, 64),
	F(kfdpool_import, flags, 64, 4),
	F(kfdpool_import, fd, 68, 4),
	F(kfdpool_import, offset, 72, 8),
	F(kfdpool_import, size, 80, 8),
	F(kfdpool_import, entry_size, 88, 8),
	F(kfdpool_import, cookie, 96, 8),
	F(kfdpool_import, entry_id, 104, 4),
	F(kfdpool_import, status, 108, 4),
	F(kfdpool_release, entry_id, 0, 4),
	F(kfdpool_release, flags, 4, 4),
	F(kfdpool_release, status, 8, 4),
	F(kfdpool_release, pad, 12, 4),
	F(kfdpool_batch, ops, 0, 8),
	F(kfdpool_batch, count, 8, 4),
	F(kfdpool_batch, elem_size, 12, 4),
	F(kfdpool_batch, flags, 16, 4),
	F(kfdpool_batch, pad, 20, 4),
	F(kfdpool_handle_export, policy, 0, 4),
	F(kfdpool_handle_export, gid, 4, 4),
	F(kfdpool_handle_export, flags, 8, 4),
	F(kfdpool_handle_export, pad, 12, 4),
	F(kfdpool_handle_export, handle, 16, 64),
	F(kfdpool_handle_rotate, flags, 0, 4),
	F(kfdpool_handle_rotate, pad, 4, 4),
	F(kfdpool_alloc, size, 0, 8),
	F(kfdpool_alloc, cookie, 8, 8),
	F(kfdpool_alloc, flags, 16, 4),
	F(kfdpool_alloc, fd, 20, 4),
	F(kfdpool_alloc, entry_id, 24, 4),
	F(kfdpool_alloc, pad, 28, 4),
	F(kfdpool_pool_adopt, handle, 0, 64),
	F(kfdpool_pool_adopt, id, 64, 16),
	F(kfdpool_pool_adopt, flags, 80, 4),
	F(kfdpool_pool_adopt, fd, 84, 4),
	F(kfdpool_pool_destroy_id, id, 0, 16),
	F(kfdpool_pool_destroy_id, flags, 16, 4),
	F(kfdpool_pool_destroy_id, pad, 20, 4),
	F(kfdpool_pool_destroy, flags, 0, 4),
	F(kfdpool_pool_destroy, pad, 4, 4),
	F(kfdpool_uring_export, entry_id, 0, 4),
	F(kfdpool_uring_export, flags, 4, 4),
	F(kfdpool_uring_export, offset, 8, 8),
	F(kfdpool_uring_export, size, 16, 8),
	F(kfdpool_uring_export, record_ptr, 24, 8),
	F(kfdpool_uring_record, record, 0, 64),
	F(kfdpool_uring_record, flags, 64, 4),
	F(kfdpool_uring_record, pad, 68, 4),
};

static const struct frozen_ioctl ioctls[] = {
	I(KFDPOOL_IOC_QUERY, _IOC_READ | _IOC_WRITE, 0xB9, 0x00, 96,
	  kfdpool_query),
	I(KFDPOOL_IOC_POOL_CREATE, _IOC_READ | _IOC_WRITE, 0xB9, 0x01, 72,
	  kfdpool_pool_create),
	I(KFDPOOL_IOC_POOL_IMPORT_HANDLE, _IOC_READ | _IOC_WRITE, 0xB9, 0x02, 72,
	  kfdpool_pool_import_handle),
	I(KFDPOOL_IOC_POOL_LIST, _IOC_READ | _IOC_WRITE, 0xB9, 0x03, 48,
	  kfdpool_pool_list),
	I(KFDPOOL_IOC_POOL_ADOPT, _IOC_READ | _IOC_WRITE, 0xB9, 0x04, 88,
	  kfdpool_pool_adopt),
	I(KFDPOOL_IOC_POOL_DESTROY_ID, _IOC_WRITE, 0xB9, 0x05, 24,
	  kfdpool_pool_destroy_id),
	I(KFDPOOL_IOC_POOL_STATS, _IOC_READ | _IOC_WRITE, 0xB9, 0x10, 152,
	  kfdpool_pool_stats),
	I(KFDPOOL_IOC_POOL_EXPORT, _IOC_READ | _IOC_WRITE, 0xB9, 0x11, 8,
	  kfdpool_pool_export),
	I(KFDPOOL_IOC_PIN, _IOC_READ | _IOC_WRITE, 0xB9, 0x12, 32,
	  kfdpool_pin),
	I(KFDPOOL_IOC_UNPIN, _IOC_READ | _IOC_WRITE, 0xB9, 0x13, 16,
	  kfdpool_unpin),
	I(KFDPOOL_IOC_EXPORT, _IOC_READ | _IOC_WRITE, 0xB9, 0x14, 96,
	  kfdpool_export),
	I(KFDPOOL_IOC_REVOKE, _IOC_WRITE, 0xB9, 0x15, 72,
	  kfdpool_revoke),
	I(KFDPOOL_IOC_IMPORT, _IOC_READ | _IOC_WRITE, 0xB9, 0x16, 112,
	  kfdpool_import),
	I(KFDPOOL_IOC_RELEASE, _IOC_WRITE, 0xB9, 0x17, 16,
	  kfdpool_release),
	I(KFDPOOL_IOC_EXPORT_BATCH, _IOC_WRITE, 0xB9, 0x18, 24,
	  kfdpool_batch),
	I(KFDPOOL_IOC_REVOKE_BATCH, _IOC_WRITE, 0xB9, 0x19, 24,
	  kfdpool_batch),
	I(KFDPOOL_IOC_IMPORT_BATCH, _IOC_WRITE, 0xB9, 0x1a, 24,
	  kfdpool_batch),
	I(KFDPOOL_IOC_RELEASE_BATCH, _IOC_WRITE, 0xB9, 0x1b, 24,
	  kfdpool_batch),
	I(KFDPOOL_IOC_HANDLE_EXPORT, _IOC_READ | _IOC_WRITE, 0xB9, 0x1c, 80,
	  kfdpool_handle_export),
	I(KFDPOOL_IOC_HANDLE_ROTATE, _IOC_WRITE, 0xB9, 0x1d, 8,
	  kfdpool_handle_rotate),
	I(KFDPOOL_IOC_ALLOC, _IOC_READ | _IOC_WRITE, 0xB9, 0x1e, 32,
	  kfdpool_alloc),
	I(KFDPOOL_IOC_POOL_DESTROY, _IOC_WRITE, 0xB9, 0x1f, 8,
	  kfdpool_pool_destroy),
	I(KFDPOOL_URING_EXPORT, _IOC_WRITE, 0xB9, 0x40, 32,
	  kfdpool_uring_export),
	I(KFDPOOL_URING_REVOKE, _IOC_WRITE, 0xB9, 0x41, 72,
	  kfdpool_uring_record),
	I(KFDPOOL_URING_IMPORT, _IOC_WRITE, 0xB9, 0x42, 72,
	  kfdpool_uring_record),
	I(KFDPOOL_URING_RELEASE, _IOC_WRITE, 0xB9, 0x43, 16,
	  kfdpool_release),
};

static const struct frozen_const consts[] = {
	C(KFDPOOL_ABI_VERSION, 2),
	C(KFDPOOL_NAME_LEN, 32),
	C(KFDPOOL_ID_LEN, 16),
	C(KFDPOOL_RECORD_SIZE, 64),
	C(KFDPOOL_HANDLE_SIZE, 64),
	C(KFDPOOL_HANDLE_TYPE_FD, 0x1),
	C(KFDPOOL_HANDLE_TYPE_FABRIC, 0x8),
	C(KFDPOOL_MODE_OWNER, 1),
	C(KFDPOOL_MODE_IMPORT, 2),
	C(KFDPOOL_FEATURE_BATCH, 0x1),
	C(KFDPOOL_FEATURE_URING_CMD, 0x2),
	C(KFDPOOL_FEATURE_POOL_HANDLE, 0x4),
	C(KFDPOOL_FEATURE_HOST_ALLOC, 0x8),
	C(KFDPOOL_FEATURE_PERSIST, 0x10),
	C(KFDPOOL_POOL_PERSIST, 0x1),
	C(KFDPOOL_HANDLE_POLICY_UID, 0),
	C(KFDPOOL_HANDLE_POLICY_GID, 1),
	C(KFDPOOL_HANDLE_POLICY_ANY, 2),
	C(KFDPOOL_POOL_LIST_ALL, 1),
	C(KFDPOOL_POOL_LIST_OWN, 2),
	C(KFDPOOL_STATS_RESET_RESERVED_HIGH, 0x1),
	C(KFDPOOL_STATS_RESET_USED_HIGH, 0x2),
	C(KFDPOOL_IMPORT_VALIDATE, 0x1),
	C(KFDPOOL_HANDLE_EXPORT_OWNER, 0x1),
	C(KFDPOOL_ADOPT_BY_ID, 0x1),
	C(KFDPOOL_IOC_MAGIC, 0xB9),
};

#define N(a)	(sizeof(a) / sizeof((a)[0]))

/* Each struct no smaller than it was released. */
TEST(structs_grow_only)
{
	size_t i;

	for (i = 0; i < N(structs); i++) {
		const struct frozen_struct *f = &structs[i];

		EXPECT_LE(f->size, f->now)
			TH_LOG("struct %s: %zu bytes, released with %zu",
			       f->name ?: "?", f->now, f->size);
	}
}

/* Each released field where it was, as large as it was. */
TEST(fields_stay)
{
	size_t i;

	for (i = 0; i < N(fields); i++) {
		EXPECT_EQ(fields[i].off, fields[i].off_now)
			TH_LOG("%s.%s at %zu, released at %zu", fields[i].strct,
			       fields[i].name, fields[i].off_now, fields[i].off);
		EXPECT_EQ(fields[i].size, fields[i].size_now)
			TH_LOG("%s.%s of %zu bytes, released with %zu",
			       fields[i].strct, fields[i].name,
			       fields[i].size_now, fields[i].size);
	}
}

/* Each ioctl: its direction, type and number; its size, its struct's. */
TEST(ioctls_stay)
{
	size_t i;

	for (i = 0; i < N(ioctls); i++) {
		unsigned int now = ioctls[i].now;

		EXPECT_EQ(ioctls[i].dir, _IOC_DIR(now)) TH_LOG("%s", ioctls[i].name);
		EXPECT_EQ(ioctls[i].type, _IOC_TYPE(now)) TH_LOG("%s", ioctls[i].name);
		EXPECT_EQ(ioctls[i].nr, _IOC_NR(now)) TH_LOG("%s", ioctls[i].name);
		EXPECT_EQ(ioctls[i].struct_now, _IOC_SIZE(now))
			TH_LOG("%s", ioctls[i].name);
		EXPECT_LE(ioctls[i].size, _IOC_SIZE(now))
			TH_LOG("%s", ioctls[i].name);
	}
}

/* Each constant its value. */
TEST(constants_stay)
{
	size_t i;

	for (i = 0; i < N(consts); i++) {
		const struct frozen_const *c = &consts[i];

		EXPECT_EQ(c->value, c->now) TH_LOG("%s", c->name ?: "?");
	}
}

TEST_HARNESS_MAIN
