// SPDX-License-Identifier: MIT
/* Backend selection and the host mapping every host backend shares. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backend.h"
#include "native/internal.h"

#define KP_BACKENDS "module, dmaheap, udmabuf, vgem, kfd"

/* A dma-buf's file answers SEEK_END with its size (dma_buf_llseek). */
int64_t kp_dmabuf_size(int fd)
{
	off_t end = lseek(fd, 0, SEEK_END);

	if (end < 0)
		return -errno;
	lseek(fd, 0, SEEK_SET);
	return end;
}

/*
 * MAP_POPULATE: the pages exist already (every host backend allocates up
 * front); mapping them all at once costs about what the dma heap's
 * remap_pfn_range() does, where a write fault per page costs 2.6 (2 MiB)
 * to 5.8 (64 MiB) times mmap and touch with it (bench/hostmem_bench, TCG).
 * VM_PFNMAP mappings ignore it.
 */
int kp_host_map(int fd, uint64_t size, void **addr)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, fd, 0);

	if (p == MAP_FAILED)
		return -errno;
	*addr = p;
	return 0;
}

int kp_host_map_import(int dev, int fd, uint64_t size, struct kp_mem *m)
{
	int ret;

	(void)dev;
	memset(m, 0, sizeof(*m));
	m->dmabuf_fd = -1;
	ret = kp_host_map(fd, size, &m->addr);
	if (ret)
		return ret;
	m->size = size;
	return 0;
}

void kp_host_unmap_import(struct kp_mem *m)
{
	if (m->addr)
		munmap(m->addr, m->size);
	m->addr = NULL;
}

const struct kp_backend *kp_backend_by_name(const char *name)
{
	static const struct kp_backend *const all[] = {
		&kp_backend_module, &kp_backend_dmaheap, &kp_backend_udmabuf,
		&kp_backend_vgem, &kp_backend_kfd,
	};
	size_t i;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}

int kp_backend_env_check(int device)
{
	const char *env = getenv("KFDPOOL_BACKEND");
	const struct kp_backend *b;

	if (!env || !*env)
		return 0;
	b = kp_backend_by_name(env);
	if (!b) {
		kp_env_invalid("KFDPOOL_BACKEND", env, KP_BACKENDS);
		return -EINVAL;
	}
	/* A host backend may stand in for a GPU; kfd never serves a host
	 * pool. */
	if (b->device && !device) {
		kp_env_invalid("KFDPOOL_BACKEND", env,
			       "module, dmaheap, udmabuf, vgem for a host pool");
		return -EINVAL;
	}
	return 0;
}

const struct kp_backend *kp_backend_pick(int device, int *err)
{
	/* The module first: it needs no device but /dev/kfdpool. */
	static const struct kp_backend *const host[] = {
		&kp_backend_module, &kp_backend_dmaheap, &kp_backend_udmabuf,
		&kp_backend_vgem,
	};
	const char *env = getenv("KFDPOOL_BACKEND");
	const struct kp_backend *b;
	size_t i;
	int ret;

	ret = kp_backend_env_check(device);
	if (ret) {
		*err = ret;
		return NULL;
	}
	if (env && *env) {
		b = kp_backend_by_name(env);
		ret = b->probe();
		*err = ret;
		return ret ? NULL : b;
	}
	if (device) {
		ret = kp_backend_kfd.probe();
		*err = ret;
		return ret ? NULL : &kp_backend_kfd;
	}
	for (i = 0; i < sizeof(host) / sizeof(host[0]); i++) {
		ret = host[i]->probe();
		if (!ret) {
			*err = 0;
			return host[i];
		}
		/* Out of memory or fds is the answer, not a backend that
		 * cannot be used: the next one would give the pool other
		 * memory for a passing shortage. */
		if (ret == -ENOMEM || ret == -EMFILE || ret == -ENFILE)
			break;
	}
	*err = ret;
	return NULL;
}
