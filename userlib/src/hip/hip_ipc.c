// SPDX-License-Identifier: MIT
/*
 * Sharing: pools as shareable handles (a POSIX fd, or a 64-byte fabric
 * handle), pointers as export data, and the importer's chunk mappings.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hip_internal.h"

/* ---- sharing the pool ---- */

KFDPOOL_EXPORT hipError_t hipMemPoolExportToShareableHandle(
	void *shared_handle, hipMemPool_t mem_pool,
	hipMemAllocationHandleType handle_type, unsigned int flags)
{
	struct ihipMemPoolHandle_t *pool;
	struct kfdpool_pool_handle h;
	hipError_t err = hipSuccess;
	int ret;

	if (!kp_pool_ours(mem_pool))
		KP_FORWARD(hipMemPoolExportToShareableHandle,
			   (shared_handle, mem_pool, handle_type, flags));
	if (!shared_handle || flags)
		return hipErrorInvalidValue;
	if (handle_type == hipMemHandleTypeWin32 ||
	    handle_type == hipMemHandleTypeWin32Kmt)
		return hipErrorNotSupported;
	if (handle_type != hipMemHandleTypePosixFileDescriptor &&
	    handle_type != hipMemHandleTypeFabric)
		return hipErrorInvalidValue;
	pthread_mutex_lock(&kp_mu);
	pool = kp_pool_get(mem_pool);
	if (!pool || pool->imported ||
	    !(pool->handle_types & (uint32_t)handle_type)) {
		err = hipErrorInvalidValue;
		goto out;
	}
	if (handle_type == hipMemHandleTypePosixFileDescriptor) {
		ret = kfdpool_pool_export(pool->fd);
		if (ret < 0)
			err = kfdpoolErrnoToHip(ret);
		else
			*(int *)shared_handle = ret;
	} else {
		uint32_t policy, gid;

		/* hip_fabric.c: the exporter's uid unless told otherwise. */
		ret = kp_fabric_policy(&policy, &gid);
		if (!ret)
			ret = kfdpool_handle_export(pool->fd, policy, gid, &h);
		if (ret < 0)
			err = kfdpoolErrnoToHip(ret);
		else
			memcpy(shared_handle, &h, sizeof(h));
	}
out:
	pthread_mutex_unlock(&kp_mu);
	return err;
}

/* The exporter's pool name tells where the memory lives: "hip-d<N>-..."
 * for device N, "hip-h0-..." for host. */
static void props_from_name(const char *name, hipMemPoolProps *props)
{
	char kind;
	int id;

	props->allocType = hipMemAllocationTypePinned;
	props->location.type = hipMemLocationTypeHost;
	props->location.id = 0;
	if (sscanf(name, "hip-%c%d-", &kind, &id) == 2 && kind == 'd') {
		props->location.type = hipMemLocationTypeDevice;
		props->location.id = id;
	}
}

/* Whether @fd is a kfdpool pool fd, without a kfdpool ioctl on a file of
 * another driver where /proc tells what the fd is. */
static int fd_is_pool(int fd)
{
	struct kfdpool_pool_stats st;
	char path[64], target[64];
	ssize_t n;

	if (fcntl(fd, F_GETFD) < 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n >= 0) {
		target[n] = 0;
		return !strcmp(target, "anon_inode:kfdpool");
	}
	return !kfdpool_pool_stats(fd, 0, &st);
}

/* Whether a shareable handle is a kfdpool pool's (a pool fd, or a fabric
 * handle with kfdpool's magic); any other handle is the runtime's. */
static int handle_is_ours(void *shared_handle,
			  hipMemAllocationHandleType handle_type)
{
	struct kfdpool_pool_handle h;
	intptr_t fd = (intptr_t)shared_handle;

	if (handle_type == hipMemHandleTypePosixFileDescriptor)
		return fd >= 0 && fd <= INT32_MAX && fd_is_pool((int)fd);
	if (handle_type == hipMemHandleTypeFabric && shared_handle) {
		memcpy(&h, shared_handle, sizeof(h));
		return h.magic == KFDPOOL_HANDLE_MAGIC;
	}
	return 0;
}

/*
 * How this process maps the chunks of an imported pool: device chunks go
 * into the GPU where there is one (/dev/kfd); on a node without it, or
 * with a host stand-in named in KFDPOOL_BACKEND, the exporter used a host
 * stand-in too and the chunks are mapped like host chunks (NULL).
 */
static hipError_t import_backend(const hipMemPoolProps *props,
				 const struct kp_runtime *rt,
				 const struct kp_backend **be)
{
	const char *env = getenv("KFDPOOL_BACKEND");
	hipError_t err;

	*be = NULL;
	if (props->location.type != hipMemLocationTypeDevice ||
	    (env && *env && strcmp(env, "kfd")) ||
	    access("/dev/kfd", R_OK | W_OK))
		return hipSuccess;
	err = kp_device_pool_refused(rt);
	if (err)
		return err;
	if (!kp_backend_kfd.probe())
		*be = &kp_backend_kfd;
	return hipSuccess;
}

KFDPOOL_EXPORT hipError_t hipMemPoolImportFromShareableHandle(
	hipMemPool_t *mem_pool, void *shared_handle,
	hipMemAllocationHandleType handle_type, unsigned int flags)
{
	const struct kp_runtime *rt = kp_rt();
	struct ihipMemPoolHandle_t *pool, *p;
	struct kfdpool_pool_stats st;
	const struct kp_backend *be = NULL;
	hipMemPoolProps props;
	hipError_t err = hipSuccess;
	int fd, ret, ctl;
	uint32_t features = 0;

	if (rt && !handle_is_ours(shared_handle, handle_type))
		KP_FORWARD(hipMemPoolImportFromShareableHandle,
			   (mem_pool, shared_handle, handle_type, flags));
	if (!mem_pool || flags)
		return hipErrorInvalidValue;
	if (handle_type == hipMemHandleTypeWin32 ||
	    handle_type == hipMemHandleTypeWin32Kmt)
		return hipErrorNotSupported;
	if (handle_type == hipMemHandleTypePosixFileDescriptor) {
		if ((intptr_t)shared_handle < 0 ||
		    (intptr_t)shared_handle > INT32_MAX)
			return hipErrorInvalidValue;
	} else if (handle_type == hipMemHandleTypeFabric) {
		if (!shared_handle)
			return hipErrorInvalidValue;
	} else {
		return hipErrorInvalidValue;
	}
	/* Read below to tell a host substitute's device pool. */
	if (kp_backend_env_check(-1))
		return hipErrorInvalidValue;

	if (handle_type == hipMemHandleTypeFabric) {
		err = kp_ctl_or_err(&ctl, &features);
		if (err)
			return err;
		if (!(features & KFDPOOL_FEATURE_POOL_HANDLE))
			return hipErrorNotSupported;
		fd = kfdpool_pool_import_handle(ctl, shared_handle);
		if (fd < 0)
			return kfdpoolErrnoToHip(fd);
	} else {
		/* The caller keeps its fd; the pool holds its own. */
		fd = fcntl((int)(intptr_t)shared_handle, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return hipErrorInvalidValue;
	}
	ret = kfdpool_pool_stats(fd, 0, &st);
	if (ret || st.mode != KFDPOOL_MODE_IMPORT) {
		/* Not a pool fd, or an owner fd passed as a handle. */
		close(fd);
		return ret ? kfdpoolErrnoToHip(ret) : hipErrorInvalidValue;
	}
	memset(&props, 0, sizeof(props));
	props_from_name(st.name, &props);
	props.handleTypes = (hipMemAllocationHandleType)st.handle_types;
	err = import_backend(&props, rt, &be);
	if (err) {
		close(fd);
		return err;
	}

	pthread_mutex_lock(&kp_mu);
	for (p = kp_pools; p; p = p->next) {
		if (p->imported && !p->destroyed &&
		    !memcmp(p->id, st.id, sizeof(p->id))) {
			/* The same pool twice: the same hipMemPool_t. */
			p->refs++;
			*mem_pool = p;
			close(fd);
			goto out;
		}
	}
	pool = kp_pool_new();
	if (!pool) {
		close(fd);
		err = hipErrorOutOfMemory;
		goto out;
	}
	pool->props = props;
	pool->magic = POOL_MAGIC;
	pool->fd = fd;
	pool->imported = 1;
	pool->refs = 1;
	memcpy(pool->id, st.id, sizeof(pool->id));
	pool->handle_types = st.handle_types;
	pool->be = be;
	pool->dev = pool->props.location.id;
	pool->max_size = st.limit;
	pool->reuse[0] = pool->reuse[1] = pool->reuse[2] = 1;
	pool->next = kp_pools;
	kp_pools = pool;
	*mem_pool = pool;
out:
	pthread_mutex_unlock(&kp_mu);
	return err;
}

/* ---- sharing pointers ---- */

/* Resolve @ptr to its allocation in an exporting pool. */
static hipError_t find_alloc(const void *ptr, struct kp_alloc **ap,
			     uint64_t *offp)
{
	struct range *r = kp_range_find(ptr);
	struct kp_chunk *c;
	uint64_t off, st, sz;

	if (!r || r->kind != R_CHUNK)
		return hipErrorInvalidValue;
	c = r->obj;
	if (!c->pool->handle_types)
		return hipErrorInvalidValue;	/* pool not IPC-capable */
	off = (uintptr_t)ptr - r->start;
	if (kp_arena_find(&c->arena, off, &st, &sz, (void **)ap) ||
	    (*ap)->dying)
		return hipErrorInvalidValue;
	*offp = off;
	return hipSuccess;
}

static int find_record(const struct kp_alloc *a, uint64_t off)
{
	uint32_t i;

	for (i = 0; i < a->nrec; i++)
		if (a->rec_off[i] == off)
			return (int)i;
	return -1;
}

KFDPOOL_EXPORT hipError_t hipMemPoolExportPointer(
	hipMemPoolPtrExportData *export_data, void *dev_ptr)
{
	void *ptrs[1] = { dev_ptr };
	int ours;

	pthread_mutex_lock(&kp_mu);
	ours = dev_ptr && kp_range_find(dev_ptr);
	pthread_mutex_unlock(&kp_mu);
	if (!ours)
		KP_FORWARD(hipMemPoolExportPointer, (export_data, dev_ptr));
	if (!export_data)
		return hipErrorInvalidValue;
	return kfdpoolExportPointers(export_data, ptrs, 1, NULL);
}

KFDPOOL_EXPORT hipError_t kfdpoolExportPointers(
	hipMemPoolPtrExportData *export_data, void *const *dev_ptrs,
	size_t count, hipError_t *results)
{
	struct kfdpool_export *ops = NULL;
	struct kp_alloc **allocs = NULL;
	size_t *idx = NULL, nops = 0, i, start;
	hipError_t first = hipSuccess;

	if (count && (!export_data || !dev_ptrs))
		return hipErrorInvalidValue;
	if (!count)
		return hipSuccess;
	ops = calloc(count, sizeof(*ops));
	allocs = calloc(count, sizeof(*allocs));
	idx = calloc(count, sizeof(*idx));
	if (!ops || !allocs || !idx) {
		first = hipErrorOutOfMemory;
		goto out_free;
	}
	pthread_mutex_lock(&kp_mu);
	/* Pass 1: records already made are copied; the rest are queued. */
	for (i = 0; i < count; i++) {
		struct kp_alloc *a;
		uint64_t off;
		hipError_t e = dev_ptrs[i] ?
			find_alloc(dev_ptrs[i], &a, &off) :
			hipErrorInvalidValue;
		int k;

		if (results)
			results[i] = e;
		if (e) {
			if (!first)
				first = e;
			memset(&export_data[i], 0, sizeof(export_data[i]));
			continue;
		}
		k = find_record(a, off);
		if (k >= 0) {
			memcpy(&export_data[i], &a->rec[k], sizeof(a->rec[k]));
			continue;
		}
		ops[nops].entry_id = a->chunk->entry_id;
		ops[nops].offset = off;
		ops[nops].size = a->off + a->size - off;
		allocs[nops] = a;
		idx[nops] = i;
		nops++;
	}
	/* Pass 2: one batch per run of the same pool. */
	for (start = 0; start < nops;) {
		int fd = allocs[start]->chunk->pool->fd, ret;
		size_t end = start, k;

		while (end < nops && allocs[end]->chunk->pool->fd == fd)
			end++;
		ret = kfdpool_exportv(fd, ops + start, end - start);
		for (k = start; k < end; k++) {
			struct kp_alloc *a = allocs[k];
			int st = ret < 0 ? ret :
				 k - start < (size_t)ret ? ops[k].status : -EIO;
			int have = st ? -1 : find_record(a, ops[k].offset);
			hipError_t e;

			/* The same interior pointer twice in one call: keep
			 * the first record, revoke the copy. */
			if (have >= 0) {
				kfdpool_revoke(fd, &ops[k].record);
				ops[k].record = a->rec[have];
			} else if (!st &&
				   kp_alloc_add_record(a, ops[k].offset,
						    &ops[k].record)) {
				kfdpool_revoke(fd, &ops[k].record);
				st = -ENOMEM;
			}
			e = kfdpoolErrnoToHip(st);
			if (results)
				results[idx[k]] = e;
			if (e) {
				if (!first)
					first = e;
				memset(&export_data[idx[k]], 0,
				       sizeof(export_data[idx[k]]));
			} else {
				memcpy(&export_data[idx[k]], &ops[k].record,
				       sizeof(export_data[idx[k]]));
			}
		}
		start = end;
	}
	pthread_mutex_unlock(&kp_mu);
out_free:
	free(ops);
	free(allocs);
	free(idx);
	return first;
}


KFDPOOL_EXPORT hipError_t hipMemPoolImportPointer(
	void **dev_ptr, hipMemPool_t mem_pool,
	hipMemPoolPtrExportData *export_data)
{
	if (!kp_pool_ours(mem_pool))
		KP_FORWARD(hipMemPoolImportPointer,
			   (dev_ptr, mem_pool, export_data));
	if (!dev_ptr || !export_data)
		return hipErrorInvalidValue;
	return kfdpoolImportPointers(dev_ptr, mem_pool, export_data, 1, NULL);
}

KFDPOOL_EXPORT hipError_t kfdpoolImportPointers(
	void **dev_ptrs, hipMemPool_t mem_pool,
	const hipMemPoolPtrExportData *export_data, size_t count,
	hipError_t *results)
{
	struct ihipMemPoolHandle_t *pool;
	struct kfdpool_import *ops = NULL;
	hipError_t first = hipSuccess;
	size_t *idx = NULL, nops = 0, i, j;
	int ret = 0;

	if (count && (!dev_ptrs || !export_data))
		return hipErrorInvalidValue;
	if (!count)
		return hipSuccess;
	for (i = 0; i < count; i++) {
		dev_ptrs[i] = NULL;
		if (results)
			results[i] = hipErrorInvalidValue;
	}
	ops = calloc(count, sizeof(*ops));
	idx = calloc(count, sizeof(*idx));
	if (!ops || !idx) {
		free(ops);
		free(idx);
		return hipErrorOutOfMemory;
	}
	pthread_mutex_lock(&kp_mu);
	pool = kp_pool_get(mem_pool);
	if (!pool || !pool->imported) {
		first = hipErrorInvalidValue;
		goto out;
	}
	/*
	 * Pass 1: a record that is not of this pool fails here, without a
	 * system call.  The first record of a chunk not yet mapped imports
	 * the chunk; every other one is a validation only.
	 */
	for (i = 0; i < count; i++) {
		struct kfdpool_import *op = &ops[nops];

		memcpy(&op->record, &export_data[i], sizeof(op->record));
		if (op->record.magic != KFDPOOL_RECORD_MAGIC ||
		    memcmp(op->record.pool_id, pool->id, sizeof(pool->id))) {
			if (!first)
				first = hipErrorInvalidValue;
			continue;
		}
		op->flags = KFDPOOL_IMPORT_VALIDATE;
		if (!kp_ientry_find(pool, op->record.entry_id)) {
			for (j = 0; j < nops; j++)
				if (!ops[j].flags && ops[j].record.entry_id ==
				    op->record.entry_id)
					break;
			if (j == nops)
				op->flags = 0;
		}
		idx[nops++] = i;
	}
	if (nops)
		ret = kfdpool_importv(pool->fd, ops, nops);
	/* Pass 2: map new chunks, count the pointers. */
	for (j = 0; j < nops; j++) {
		struct kfdpool_import *op = &ops[j];
		int st = ret < 0 ? ret : j < (size_t)ret ? op->status : -EIO;
		struct kp_ientry *ie = NULL;
		hipError_t e;

		/*
		 * A validation failed because the element that was to import
		 * its chunk failed (a bad record of the same chunk earlier in
		 * the batch): one bad element must not fail another, so this
		 * one imports the chunk itself, or validates again now that
		 * a later element did.
		 */
		if (st == -ENXIO && op->flags) {
			int fl = kp_ientry_find(pool, op->record.entry_id) ?
				 KFDPOOL_IMPORT_VALIDATE : 0;

			st = kfdpool_import(pool->fd, &op->record, fl, op);
			if (st >= 0) {
				op->flags = fl;
				st = 0;
			}
		}
		if (!st && !op->flags) {
			st = kp_ientry_new(pool, op, &ie);	/* consumes op->fd */
		} else if (!st) {
			ie = kp_ientry_find(pool, op->record.entry_id);
			if (!ie)
				st = -ENXIO;
		}
		if (!st && op->offset + op->size > ie->mem.size)
			st = -EINVAL;
		if (!st)
			st = kp_ientry_add_ptr(ie, (char *)ie->mem.addr +
					    op->offset);
		e = kfdpoolErrnoToHip(st);
		if (!e)
			dev_ptrs[idx[j]] = (char *)ie->mem.addr + op->offset;
		if (results)
			results[idx[j]] = e;
		if (e && !first)
			first = e;
	}
out:
	pthread_mutex_unlock(&kp_mu);
	free(ops);
	free(idx);
	return first;
}

