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
#include "native/format.h"

static hipError_t export_pointers(hipMemPoolPtrExportData *export_data,
				  void *const *dev_ptrs, size_t count,
				  hipError_t *results);
static hipError_t import_pointers(void **dev_ptrs, hipMemPool_t mem_pool,
				  const hipMemPoolPtrExportData *export_data,
				  size_t count, hipError_t *results);

/* ---- sharing the pool ---- */

static hipError_t export_handle(
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
	pool = kp_pool_lock(mem_pool);
	if (!pool)
		return hipErrorInvalidValue;
	/* clr exports a pool only with its handle types exactly
	 * (hip_mempool.cpp, rocm-6.2.2 to the newest): not one of several. */
	if (pool->imported || pool->handle_types != (uint32_t)handle_type) {
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
	kp_pool_unlock(pool);
	return err;
}

/* The exporter's pool name tells where the memory lives (hip_pool.c):
 * "hip-d<bus id>-..." a device by PCI bus id, "hip-d<N>-..." a host
 * substitute for device N, "hip-h0-..." host. */
void kp_props_from_name(const char *name, hipMemPoolProps *props,
			char *busid)
{
	char kind, id[BUSID_LEN];
	int n;

	props->allocType = hipMemAllocationTypePinned;
	props->location.type = hipMemLocationTypeHost;
	props->location.id = 0;
	busid[0] = 0;
	if (sscanf(name, "hip-%c%15[0-9a-f:.]-", &kind, id) != 2 || kind != 'd')
		return;
	props->location.type = hipMemLocationTypeDevice;
	if (strchr(id, ':'))
		snprintf(busid, BUSID_LEN, "%s", id);
	else if (sscanf(id, "%d", &n) == 1)
		props->location.id = n;
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

/*
 * The fd a POSIX-fd shareable handle names.  It is an int: clr writes 4
 * bytes at export and reads the import's argument through a union of an
 * int and a void * (hipMemPoolImportFromShareableHandle, hip_mempool.cpp,
 * rocm-5.6.0 to the newest), so only the low 32 bits count, and programs
 * pass an int64_t whose upper half is whatever it was (ROCm's hip-tests
 * keep the handle in one, uninitialized).  -1 for NULL, which clr refuses.
 */
static int handle_fd(void *shared_handle)
{
	if (!shared_handle)
		return -1;
	return (int)(uint32_t)(uintptr_t)shared_handle;
}

/*
 * Whether a shareable handle is a kfdpool pool's: a fabric handle with
 * kfdpool's magic, or a pool fd whatever type it is said to be (kfdpool
 * refuses a wrong type itself; clr would take the fd for a handle of its
 * own).  Any other handle is the runtime's.
 */
static int handle_is_ours(void *shared_handle,
			  hipMemAllocationHandleType handle_type)
{
	int fd = handle_fd(shared_handle);

	if (handle_type == hipMemHandleTypeFabric)
		return shared_handle && kp_handle_is_kfdpool(shared_handle);
	return fd >= 0 && fd_is_pool(fd);
}

/*
 * How this process maps the chunks of an imported pool, and on which of
 * its devices: device chunks of a GPU (named by its PCI bus id) go to this
 * process's ordinal of that GPU, through the runtime where there is one
 * (hipImportExternalMemory, so that the runtime knows the pointers), else
 * through the kfd backend.  A host substitute's chunks ("hip-d<N>-") and
 * host chunks are mapped into the CPU (NULL).
 */
hipError_t kp_import_backend(hipMemPoolProps *props, const char *busid,
			    const struct kp_runtime *rt,
			    const struct kp_backend **be)
{
	const char *env = getenv("KFDPOOL_BACKEND");
	hipError_t err;
	int dev = -1;

	*be = NULL;
	if (props->location.type != hipMemLocationTypeDevice || !busid[0] ||
	    (env && *env && strcmp(env, "kfd")))
		return hipSuccess;
	if (rt) {
		err = kp_device_backend(rt, be);
		if (err)
			return err;
		if (!*be)
			return hipSuccess;
		if (kp_rocr_device_of(busid, &dev))
			return hipErrorInvalidDevice;
	} else {
		if (kp_backend_kfd.probe())
			return hipErrorNoDevice;
		if (kp_kfd_device_of(busid, &dev))
			return hipErrorInvalidDevice;
		*be = &kp_backend_kfd;
	}
	props->location.id = dev;
	return hipSuccess;
}

static hipError_t import_handle(
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
	char busid[BUSID_LEN];

	if (rt && !handle_is_ours(shared_handle, handle_type))
		KP_FORWARD(hipMemPoolImportFromShareableHandle,
			   (mem_pool, shared_handle, handle_type, flags));
	if (!mem_pool || flags)
		return hipErrorInvalidValue;
	if (handle_type == hipMemHandleTypeWin32 ||
	    handle_type == hipMemHandleTypeWin32Kmt)
		return hipErrorNotSupported;
	if (handle_type == hipMemHandleTypePosixFileDescriptor) {
		if (handle_fd(shared_handle) < 0)
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
		kp_fd_lock();
		fd = kp_fd_made(kfdpool_pool_import_handle(ctl, shared_handle));
		if (fd < 0)
			return kfdpoolErrnoToHip(fd);
	} else {
		/* The caller keeps its fd; the pool holds its own.  Not an
		 * fd (EBADF) is hipErrorInvalidValue, no fd left for the
		 * copy (EMFILE) hipErrorOutOfMemory. */
		kp_fd_lock();
		fd = fcntl(handle_fd(shared_handle), F_DUPFD_CLOEXEC, 3);
		fd = kp_fd_made(fd < 0 ? -errno : fd);
		if (fd < 0)
			return kfdpoolErrnoToHip(fd);
	}
	ret = kfdpool_pool_stats(fd, 0, &st);
	if (ret || st.mode != KFDPOOL_MODE_IMPORT) {
		/* Not a pool fd, or an owner fd passed as a handle. */
		kp_fd_close(fd);
		return ret ? kfdpoolErrnoToHip(ret) : hipErrorInvalidValue;
	}
	memset(&props, 0, sizeof(props));
	kp_props_from_name(st.name, &props, busid);
	props.handleTypes = (hipMemAllocationHandleType)st.handle_types;
	err = kp_import_backend(&props, busid, rt, &be);
	if (err) {
		kp_fd_close(fd);
		return err;
	}

	pthread_mutex_lock(&kp_mu);
	for (p = kp_pools; p; p = p->next) {
		int same;

		kp_lock(&p->mu);
		same = p->imported && !p->destroyed && !p->forked &&
		       p->magic == POOL_MAGIC &&
		       !memcmp(p->id, st.id, sizeof(p->id));
		if (same)
			p->refs++;	/* the same pool twice: the same handle */
		kp_unlock(&p->mu);
		if (same) {
			*mem_pool = p;
			kp_fd_close(fd);
			goto out;
		}
	}
	pool = kp_pool_new();
	if (!pool) {
		kp_fd_close(fd);
		err = hipErrorOutOfMemory;
		goto out;
	}
	kp_lock(&pool->mu);
	pool->props = props;
	pool->fd = fd;
	pool->imported = 1;
	pool->refs = 1;
	memcpy(pool->id, st.id, sizeof(pool->id));
	memcpy(pool->busid, busid, sizeof(busid));
	pool->handle_types = st.handle_types;
	pool->be = be;
	pool->dev = pool->props.location.id;
	pool->max_size = st.limit;
	pool->reuse[0] = pool->reuse[1] = pool->reuse[2] = 1;
	pool->magic = POOL_MAGIC;
	kp_unlock(&pool->mu);
	pool->next = kp_pools;
	kp_pools = pool;
	*mem_pool = pool;
out:
	pthread_mutex_unlock(&kp_mu);
	return err;
}

/* ---- sharing pointers ---- */

/*
 * @ptr's allocation in @pool (locked), which @r (a range of @pool) holds:
 * the block, and @ptr's offset in its chunk.
 */
static hipError_t find_alloc(struct ihipMemPoolHandle_t *pool,
			     struct kp_range *r, void *ptr,
			     struct kp_blk **bp, uint64_t *offp)
{
	if (r->kind != R_CHUNK || !pool->handle_types)
		return hipErrorInvalidValue;	/* pool not IPC-capable */
	*bp = kp_block_of(pool, (struct kp_chunk *)r, ptr);
	if (!*bp)
		return hipErrorInvalidValue;
	*offp = (uintptr_t)ptr - r->start;
	return hipSuccess;
}

/* Whether @ptr is in a live range of @pool (whose lock is held). */
static struct kp_range *same_pool(struct ihipMemPoolHandle_t *pool, void *ptr)
{
	struct kp_range *r = ptr ? kp_addr_find(ptr) : NULL;

	if (!r || __atomic_load_n(&r->pool, __ATOMIC_RELAXED) != pool ||
	    !r->live || (uintptr_t)ptr < r->start || (uintptr_t)ptr >= r->end)
		return NULL;
	return r;
}

static hipError_t export_pointer(
	hipMemPoolPtrExportData *export_data, void *dev_ptr)
{
	void *ptrs[1] = { dev_ptr };

	if (!dev_ptr || !kp_addr_find(dev_ptr))
		KP_FORWARD(hipMemPoolExportPointer, (export_data, dev_ptr));
	if (!export_data)
		return hipErrorInvalidValue;
	return export_pointers(export_data, ptrs, 1, NULL);
}

/*
 * Records are made here, when a pointer is first exported, and kept with
 * its allocation: the same address again costs no system call, and the
 * free revokes exactly what was exported.  New records of one pool go in
 * one batch, made with the pool's lock held, so that the allocation
 * cannot be freed (and its memory reused) in between.
 */
static hipError_t export_pointers(
	hipMemPoolPtrExportData *export_data, void *const *dev_ptrs,
	size_t count, hipError_t *results)
{
	struct kfdpool_export *ops = NULL;
	struct kp_blk **blks = NULL;
	size_t *idx = NULL, nops, i, j, k;
	hipError_t first = hipSuccess;

	if (count && (!export_data || !dev_ptrs))
		return hipErrorInvalidValue;
	if (!count)
		return hipSuccess;
	ops = calloc(count, sizeof(*ops));
	blks = calloc(count, sizeof(*blks));
	idx = calloc(count, sizeof(*idx));
	if (!ops || !blks || !idx) {
		first = hipErrorOutOfMemory;
		goto out_free;
	}
	for (i = 0; i < count; i = j) {
		struct ihipMemPoolHandle_t *pool;
		struct kp_range *r;
		int ours, ret;

		r = dev_ptrs[i] ? kp_range_lock(dev_ptrs[i], &ours) : NULL;
		if (!r) {
			if (results)
				results[i] = hipErrorInvalidValue;
			first = first ? first : hipErrorInvalidValue;
			memset(&export_data[i], 0, sizeof(export_data[i]));
			j = i + 1;
			continue;
		}
		pool = r->pool;
		/* Pass 1, this pointer and the following ones of the same
		 * pool: records already made are copied, the rest queued. */
		nops = 0;
		for (j = i; j < count; j++) {
			struct kp_blk *b;
			uint64_t off;
			hipError_t e;
			int rk;

			if (j > i && !(r = same_pool(pool, dev_ptrs[j])))
				break;
			e = find_alloc(pool, r, dev_ptrs[j], &b, &off);
			if (results)
				results[j] = e;
			if (e) {
				first = first ? first : e;
				memset(&export_data[j], 0, sizeof(export_data[j]));
				continue;
			}
			rk = kp_recs_find(b, off);
			if (rk >= 0) {
				memcpy(&export_data[j],
				       &((struct kp_recs *)b->priv)->r[rk].rec,
				       sizeof(export_data[j]));
				continue;
			}
			memset(&ops[nops], 0, sizeof(ops[nops]));
			ops[nops].entry_id = ((struct kp_chunk *)r)->entry_id;
			ops[nops].offset = off;
			ops[nops].size = b->off + b->size - off;
			blks[nops] = b;
			idx[nops] = j;
			nops++;
		}
		/* Pass 2: one batch, still under the pool's lock. */
		ret = nops ? kfdpool_exportv(pool->fd, ops, nops) : 0;
		for (k = 0; k < nops; k++) {
			int st = ret < 0 ? ret :
				 k < (size_t)ret ? ops[k].status : -EIO;
			int rk = st ? -1 : kp_recs_find(blks[k], ops[k].offset);
			hipError_t e;

			if (rk >= 0) {
				/* The same address twice in one call: keep
				 * the first record, revoke the copy. */
				kfdpool_revoke(pool->fd, &ops[k].record);
				ops[k].record = ((struct kp_recs *)
					blks[k]->priv)->r[rk].rec;
			} else if (!st && kp_recs_add(blks[k], ops[k].offset,
						      &ops[k].record)) {
				kfdpool_revoke(pool->fd, &ops[k].record);
				st = -ENOMEM;
			}
			if (st == -EDQUOT)
				kp_say_quota(KP_QUOTA_RECORDS, 0);
			e = kfdpoolErrnoToHip(st);
			if (results)
				results[idx[k]] = e;
			if (e) {
				first = first ? first : e;
				memset(&export_data[idx[k]], 0,
				       sizeof(export_data[idx[k]]));
			} else {
				memcpy(&export_data[idx[k]], &ops[k].record,
				       sizeof(export_data[idx[k]]));
			}
		}
		kp_pool_unlock(pool);
	}
out_free:
	free(ops);
	free(blks);
	free(idx);
	return first;
}

static hipError_t import_pointer(
	void **dev_ptr, hipMemPool_t mem_pool,
	hipMemPoolPtrExportData *export_data)
{
	if (!kp_pool_ours(mem_pool))
		KP_FORWARD(hipMemPoolImportPointer,
			   (dev_ptr, mem_pool, export_data));
	if (!dev_ptr || !export_data)
		return hipErrorInvalidValue;
	return import_pointers(dev_ptr, mem_pool, export_data, 1, NULL);
}

static hipError_t import_pointers(
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
	pool = kp_pool_lock(mem_pool);
	if (!pool) {
		first = hipErrorInvalidValue;
		goto out_free;
	}
	if (!pool->imported) {
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
		if (!kp_record_of_pool(&op->record, pool->id)) {
			if (!first)
				first = hipErrorInvalidValue;
			continue;
		}
		op->flags = KFDPOOL_IMPORT_VALIDATE;
		if (!kp_ientry_find(pool, kp_record_entry(&op->record))) {
			for (j = 0; j < nops; j++)
				if (!ops[j].flags && kp_record_entry(&ops[j].record) ==
				    kp_record_entry(&op->record))
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
			int fl = kp_ientry_find(pool, kp_record_entry(&op->record)) ?
				 KFDPOOL_IMPORT_VALIDATE : 0;

			st = kfdpool_import(pool->fd, &op->record, fl, op);
			if (st >= 0) {
				op->flags = fl;
				st = 0;
			}
		}
		/*
		 * Validated, but the mapping went away since (its last pointer
		 * freed while a mapping of this batch dropped the lock): this
		 * one imports the chunk again.
		 */
		if (!st && op->flags &&
		    !kp_ientry_find(pool, kp_record_entry(&op->record))) {
			st = kfdpool_import(pool->fd, &op->record, 0, op);
			if (st >= 0) {
				op->flags = 0;
				st = 0;
			}
		}
		if (!st && !op->flags) {
			st = kp_ientry_new(pool, op, &ie);	/* consumes op->fd */
		} else if (!st) {
			ie = kp_ientry_find(pool, kp_record_entry(&op->record));
		}
		if (!st && op->offset + op->size > ie->mem.size)
			st = -EINVAL;
		if (!st)
			st = kp_ientry_add_ptr(ie, (char *)ie->mem.addr +
					    op->offset);
		/* A mapping no pointer holds (this one failed) goes. */
		if (st && ie && !ie->refs)
			kp_ientry_release(pool, ie);
		e = kp_hip_of(st);
		if (!e)
			dev_ptrs[idx[j]] = (char *)ie->mem.addr + op->offset;
		if (results)
			results[idx[j]] = e;
		if (e && !first)
			first = e;
	}
out:
	kp_pool_put(pool);
out_free:
	free(ops);
	free(idx);
	return first;
}


/* ---- the entry points: each answers the thread's last error as clr
 * would (rt/runtime.h) ---- */

KFDPOOL_EXPORT hipError_t hipMemPoolExportToShareableHandle(
	void *shared_handle, hipMemPool_t mem_pool,
	hipMemAllocationHandleType handle_type, unsigned int flags)
{
	return kp_rt_ret(export_handle(shared_handle, mem_pool, handle_type,
				       flags));
}

KFDPOOL_EXPORT hipError_t hipMemPoolImportFromShareableHandle(
	hipMemPool_t *mem_pool, void *shared_handle,
	hipMemAllocationHandleType handle_type, unsigned int flags)
{
	return kp_rt_ret(import_handle(mem_pool, shared_handle, handle_type,
				       flags));
}

KFDPOOL_EXPORT hipError_t hipMemPoolExportPointer(
	hipMemPoolPtrExportData *export_data, void *dev_ptr)
{
	return kp_rt_ret(export_pointer(export_data, dev_ptr));
}

KFDPOOL_EXPORT hipError_t kfdpoolExportPointers(
	hipMemPoolPtrExportData *export_data, void *const *dev_ptrs,
	size_t count, hipError_t *results)
{
	return kp_rt_ret(export_pointers(export_data, dev_ptrs, count,
					 results));
}

KFDPOOL_EXPORT hipError_t hipMemPoolImportPointer(
	void **dev_ptr, hipMemPool_t mem_pool,
	hipMemPoolPtrExportData *export_data)
{
	return kp_rt_ret(import_pointer(dev_ptr, mem_pool, export_data));
}

KFDPOOL_EXPORT hipError_t kfdpoolImportPointers(
	void **dev_ptrs, hipMemPool_t mem_pool,
	const hipMemPoolPtrExportData *export_data, size_t count,
	hipError_t *results)
{
	return kp_rt_ret(import_pointers(dev_ptrs, mem_pool, export_data,
					 count, results));
}
