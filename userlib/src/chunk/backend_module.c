// SPDX-License-Identifier: MIT
/*
 * Host chunks from kfdpool.ko itself (KFDPOOL_IOC_ALLOC): the module
 * allocates the memory, charges it and pins it as the entry in one call,
 * so this backend needs nothing but /dev/kfdpool.  The chunk's dma-buf is
 * mapped like any other; its mapping holds ordinary pages, which
 * hipHostRegister and io_uring fixed buffers accept.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#include "kfdpool.h"
#include "backend.h"

static int module_probe(void)
{
	struct kfdpool_query q;
	int ret = kfdpool_ctl(&q);

	if (ret < 0)
		return ret;
	return (q.features & KFDPOOL_FEATURE_HOST_ALLOC) ? 0 : -EOPNOTSUPP;
}

/*
 * The module charges its memory to the pool creator's RLIMIT_MEMLOCK, which
 * is 64 KiB by default before Linux 5.16 and systemd 250: less than one
 * chunk.  Its ENOMEM then reads like the machine's, so name the limit once
 * (not for a caller with CAP_IPC_LOCK, whom the module does not charge).
 */
static void say_memlock(uint64_t size)
{
	static int said;
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct c[2];
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return;
	if (!syscall(SYS_capget, &h, c) && (c[0].effective & (1u << CAP_IPC_LOCK)))
		return;
	/* Not kp_say_once(): the runtime stand-in links this file alone. */
	if (__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		return;
	fprintf(stderr, "kfdpool: a host chunk of %llu KiB: %s (host memory from "
		"the module counts against RLIMIT_MEMLOCK: ulimit -l is %llu KiB)\n",
		(unsigned long long)size >> 10, strerror(ENOMEM),
		(unsigned long long)rl.rlim_cur >> 10);
}

static int module_alloc_pinned(int pool_fd, uint64_t size, uint64_t cookie,
			       struct kp_mem *m, uint32_t *entry_id)
{
	int fd, ret;

	memset(m, 0, sizeof(*m));
	m->dmabuf_fd = -1;
	fd = kfdpool_alloc(pool_fd, size, cookie, entry_id);
	if (fd == -ENOMEM)
		say_memlock(size);
	if (fd < 0)
		return fd;
	ret = kp_host_map(fd, size, &m->addr);
	if (ret) {
		close(fd);
		kfdpool_unpin(pool_fd, *entry_id, NULL, NULL);
		return ret;
	}
	m->dmabuf_fd = fd;
	m->size = size;
	return 0;
}

static void module_free(struct kp_mem *m)
{
	kp_host_unmap_import(m);
	if (m->dmabuf_fd >= 0)
		close(m->dmabuf_fd);
	m->dmabuf_fd = -1;
}

const struct kp_backend kp_backend_module = {
	.name = "module",
	.probe = module_probe,
	.alloc_pinned = module_alloc_pinned,
	.free = module_free,
	.map_import = kp_host_map_import,
	.unmap_import = kp_host_unmap_import,
};
