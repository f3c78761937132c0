// SPDX-License-Identifier: GPL-2.0-only
/*
 * TEST-ONLY STAND-IN for the HIP runtime.  Not a runtime: no GPU, no
 * kernels, never installed.  Built as build/selftests/standin/
 * libamdhip64.so.6 (with a libhsa-runtime64.so.1 beside it, the same
 * source with -DSTANDIN_HSA), it is what the lib_standin_*_test programs
 * link instead of HIP's runtime, so that libkfdpool-hip finds it the way
 * it finds the real one (the next object after it that defines the hip*
 * names).  It gives the library what its stream order and its runtime
 * device path (userlib/src/chunk/rocr.c) need, in the shape clr gives it,
 * and records every call the tests look at:
 *
 *   devices     KFDPOOL_STANDIN_DEVICES="0000:03:00.0,0000:c1:00.0" (the
 *               default): their PCI bus ids, in this process's order
 *   version     KFDPOOL_STANDIN_VERSION (HIP_VERSION, default 60200000)
 *   streams     hipStreamCreate/Destroy (slots are reused, as addresses
 *               are), the null stream per device, hipStreamPerThread
 *   events      complete when recorded, unless their stream is held
 *               (kfdpool_standin_hold); hipEventSynchronize and
 *               hipDeviceSynchronize complete what they wait for
 *   memory      "device" memory is host memory behind a real dma-buf
 *               (libkfdpool-hip's host backends: heap, udmabuf, vgem), so
 *               that the kfdpool module pins it: hipExtMallocWithFlags,
 *               hipMalloc; the virtual memory calls (hipMemCreate,
 *               hipMemAddressReserve, hipMemMap, hipMemSetAccess,
 *               hipMemExportToShareableHandle, ...); hsa's
 *               hsa_amd_portable_export_dmabuf
 *   import      hipImportExternalMemory (OpaqueFd) maps the dma-buf;
 *               like clr it leaves the fd to the caller, or takes it
 *               (closes it) with KFDPOOL_STANDIN_TAKE_FD=1, as CUDA does
 *   copies      hipMemcpy/hipMemset refuse "device" pointers it does not
 *               know, as a runtime would treat them as unknown
 *   failures    kfdpool_standin_fail: the next call of a named function
 *               answers an error (or a wrong answer), for the library's
 *               error paths
 */
#ifdef STANDIN_HSA

#include <stddef.h>
#include <stdint.h>

/* libhsa-runtime64.so.1's part: the dma-buf export of ROCr >= 5.6, made
 * by the runtime stand-in it comes with. */
int kfdpool_standin_hsa_export(const void *ptr, size_t size, int *fd,
			       uint64_t *off);
int kfdpool_standin_hsa_close(int fd);

__attribute__((visibility("default")))
int hsa_amd_portable_export_dmabuf(const void *ptr, size_t size, int *dmabuf,
				   uint64_t *offset)
{
	return kfdpool_standin_hsa_export(ptr, size, dmabuf, offset);
}

__attribute__((visibility("default")))
int hsa_amd_portable_close_dmabuf(int dmabuf)
{
	return kfdpool_standin_hsa_close(dmabuf);
}

#else

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hiprt_standin.h"
#include "chunk/backend.h"

#define API __attribute__((visibility("default")))
#define MAXDEV 8
#define MAXSTREAMS 64
#define MAXEVENTS 1024
#define MAXMEM 1024

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* ---- the log ---- */

static char *logbuf;
static size_t loglen, logcap;

static void say(const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (loglen + n + 1 > logcap) {
		size_t cap = logcap ? 2 * logcap : 4096;
		char *b;

		while (cap < loglen + n + 1)
			cap *= 2;
		b = realloc(logbuf, cap);
		if (!b)
			return;
		logbuf = b;
		logcap = cap;
	}
	memcpy(logbuf + loglen, line, n);
	loglen += n;
	logbuf[loglen] = 0;
	if (getenv("KFDPOOL_STANDIN_TRACE"))
		fprintf(stderr, "standin: %.*s", n, line);
}

API size_t kfdpool_standin_log(char *buf, size_t len)
{
	size_t n;

	pthread_mutex_lock(&mu);
	n = loglen < len - 1 ? loglen : len - 1;
	memcpy(buf, logbuf ? logbuf : "", n);
	buf[n] = 0;
	loglen = 0;
	pthread_mutex_unlock(&mu);
	return n;
}

/* ---- failures on command ---- */

static pthread_mutex_t fail_mu = PTHREAD_MUTEX_INITIALIZER;
static char fail_name[64];
static int fail_skip, fail_err, fail_made = 1;

API int kfdpool_standin_fail(const char *name, int skip, int err)
{
	int made;

	pthread_mutex_lock(&fail_mu);
	made = fail_made;
	snprintf(fail_name, sizeof(fail_name), "%s", name ? name : "");
	fail_skip = skip;
	fail_err = err;
	fail_made = !name;
	pthread_mutex_unlock(&fail_mu);
	return made;
}

/* Whether this call of @name is to fail: 0, or the error to answer. */
static int failing(const char *name)
{
	int err = 0;

	pthread_mutex_lock(&fail_mu);
	if (fail_name[0] && !strcmp(fail_name, name) && !fail_skip--) {
		err = fail_err;
		fail_name[0] = 0;
		fail_made = 1;
	}
	pthread_mutex_unlock(&fail_mu);
	if (err) {
		pthread_mutex_lock(&mu);
		say("%s fails (%d)", name, err);
		pthread_mutex_unlock(&mu);
	}
	return err;
}

#define FAIL_POINT(name) \
	do { \
		int fail_ = failing(name); \
		if (fail_ > 0) \
			return (hipError_t)fail_; \
	} while (0)

/* ---- devices ---- */

static char busids[MAXDEV][16];
static int ndev = -1;
static __thread int cur_dev;

static void devices(void)
{
	const char *e = getenv("KFDPOOL_STANDIN_DEVICES");
	char *s, *tok, *save = NULL;

	if (ndev >= 0)
		return;
	ndev = 0;
	s = strdup(e ? e : "0000:03:00.0,0000:c1:00.0");
	for (tok = strtok_r(s, ",", &save); tok && ndev < MAXDEV;
	     tok = strtok_r(NULL, ",", &save))
		snprintf(busids[ndev++], sizeof(busids[0]), "%s", tok);
	free(s);
}

API hipError_t hipGetDeviceCount(int *n)
{
	pthread_mutex_lock(&mu);
	devices();
	*n = ndev;
	pthread_mutex_unlock(&mu);
	return ndev ? hipSuccess : hipErrorNoDevice;
}

API hipError_t hipGetDevice(int *d)
{
	int n;

	FAIL_POINT("hipGetDevice");
	if (hipGetDeviceCount(&n))
		return hipErrorNoDevice;
	*d = cur_dev;
	return hipSuccess;
}

API hipError_t hipSetDevice(int d)
{
	int n;

	FAIL_POINT("hipSetDevice");
	if (hipGetDeviceCount(&n))
		return hipErrorNoDevice;
	if (d < 0 || d >= n)
		return hipErrorInvalidDevice;
	cur_dev = d;
	return hipSuccess;
}

API hipError_t hipRuntimeGetVersion(int *v)
{
	const char *e = getenv("KFDPOOL_STANDIN_VERSION");

	*v = e ? atoi(e) : 60200000;
	return hipSuccess;
}

API hipError_t hipDeviceGetPCIBusId(char *buf, int len, int dev)
{
	int n;

	FAIL_POINT("hipDeviceGetPCIBusId");
	if (hipGetDeviceCount(&n) || dev < 0 || dev >= n || len < 13)
		return hipErrorInvalidDevice;
	/* clr spells the hex digits in upper case at times: so do we. */
	snprintf(buf, len, "%s", busids[dev]);
	for (char *c = buf; *c; c++)
		if (*c >= 'a' && *c <= 'f')
			*c -= 'a' - 'A';
	return hipSuccess;
}

API hipError_t hipDeviceGetByPCIBusId(int *dev, const char *id)
{
	int n, i;

	FAIL_POINT("hipDeviceGetByPCIBusId");
	if (hipGetDeviceCount(&n))
		return hipErrorNoDevice;
	for (i = 0; i < n; i++) {
		if (!strcasecmp(busids[i], id)) {
			*dev = i;
			return hipSuccess;
		}
	}
	return hipErrorInvalidDevice;
}

/* ---- streams and events ---- */

struct sstream {
	int used, id, dev, held;
	uint64_t recorded, completed;
};

struct sevent {
	int used, id;
	struct sstream *s;
	uint64_t ticket;
};

static struct sstream streams[MAXSTREAMS];
static struct sstream nulls[MAXDEV];
static __thread struct sstream perthread[MAXDEV];
static struct sevent events[MAXEVENTS];
static int next_id = 1;

static struct sstream *stream_of(hipStream_t h)
{
	struct sstream *s = (struct sstream *)h;

	if (!h || h == hipStreamLegacy) {
		s = &nulls[cur_dev];
	} else if (h == hipStreamPerThread) {
		s = &perthread[cur_dev];
	} else if (s < streams || s >= streams + MAXSTREAMS || !s->used) {
		return NULL;
	}
	if (!s->id) {
		s->id = next_id++;
		s->dev = cur_dev;
		s->used = 1;
	}
	return s;
}

static struct sevent *event_of(hipEvent_t h)
{
	struct sevent *e = (struct sevent *)h;

	if (e < events || e >= events + MAXEVENTS || !e->used)
		return NULL;
	return e;
}

static int done(const struct sevent *e)
{
	return !e->s || e->ticket <= e->s->completed;
}

API hipError_t hipStreamCreate(hipStream_t *out)
{
	int i;

	pthread_mutex_lock(&mu);
	/* The lowest free slot: a new stream may get a destroyed one's
	 * address, as with a real allocator. */
	for (i = 0; i < MAXSTREAMS && streams[i].used; i++)
		;
	if (i == MAXSTREAMS) {
		pthread_mutex_unlock(&mu);
		return hipErrorOutOfMemory;
	}
	memset(&streams[i], 0, sizeof(streams[i]));
	streams[i].used = 1;
	streams[i].id = next_id++;
	streams[i].dev = cur_dev;
	*out = (hipStream_t)&streams[i];
	say("hipStreamCreate s%d", streams[i].id);
	pthread_mutex_unlock(&mu);
	return hipSuccess;
}

API hipError_t hipStreamDestroy(hipStream_t h)
{
	struct sstream *s;

	pthread_mutex_lock(&mu);
	s = !h || h == hipStreamLegacy || h == hipStreamPerThread ? NULL :
	    stream_of(h);
	if (s) {
		say("hipStreamDestroy s%d", s->id);
		/* Its work runs to its end, as a runtime's would. */
		s->completed = s->recorded;
		s->used = 0;
	}
	pthread_mutex_unlock(&mu);
	return s ? hipSuccess : hipErrorInvalidHandle;
}

API hipError_t hipStreamSynchronize(hipStream_t h)
{
	struct sstream *s;

	pthread_mutex_lock(&mu);
	s = stream_of(h);
	if (s) {
		s->completed = s->recorded;
		say("hipStreamSynchronize s%d", s->id);
	}
	pthread_mutex_unlock(&mu);
	return s ? hipSuccess : hipErrorInvalidHandle;
}

API void kfdpool_standin_hold(hipStream_t h, int hold)
{
	struct sstream *s;

	pthread_mutex_lock(&mu);
	s = stream_of(h);
	if (s)
		s->held = hold;
	pthread_mutex_unlock(&mu);
}

API int kfdpool_standin_stream_id(hipStream_t h)
{
	struct sstream *s;
	int id;

	pthread_mutex_lock(&mu);
	s = stream_of(h);
	id = s ? s->id : -1;
	pthread_mutex_unlock(&mu);
	return id;
}

API void kfdpool_standin_run(hipStream_t h)
{
	struct sstream *s;

	pthread_mutex_lock(&mu);
	s = stream_of(h);
	if (s)
		s->completed = s->recorded;
	pthread_mutex_unlock(&mu);
}

API hipError_t hipEventCreateWithFlags(hipEvent_t *out, unsigned int flags)
{
	int i;

	FAIL_POINT("hipEventCreateWithFlags");
	pthread_mutex_lock(&mu);
	for (i = 0; i < MAXEVENTS && events[i].used; i++)
		;
	if (i == MAXEVENTS) {
		pthread_mutex_unlock(&mu);
		return hipErrorOutOfMemory;
	}
	memset(&events[i], 0, sizeof(events[i]));
	events[i].used = 1;
	events[i].id = next_id++;
	*out = (hipEvent_t)&events[i];
	say("hipEventCreateWithFlags e%d %#x", events[i].id, flags);
	pthread_mutex_unlock(&mu);
	return hipSuccess;
}

API hipError_t hipEventCreate(hipEvent_t *out)
{
	return hipEventCreateWithFlags(out, 0);
}

API hipError_t hipEventDestroy(hipEvent_t h)
{
	struct sevent *e;

	pthread_mutex_lock(&mu);
	e = event_of(h);
	if (e) {
		say("hipEventDestroy e%d", e->id);
		e->used = 0;
	}
	pthread_mutex_unlock(&mu);
	return e ? hipSuccess : hipErrorInvalidHandle;
}

static hipError_t record(hipEvent_t h, hipStream_t sh, const char *name)
{
	struct sstream *s;
	struct sevent *e;

	FAIL_POINT(name);
	pthread_mutex_lock(&mu);
	e = event_of(h);
	s = stream_of(sh);
	if (e && s) {
		e->s = s;
		e->ticket = ++s->recorded;
		if (!s->held)
			s->completed = s->recorded;
		say("%s e%d s%d", name, e->id, s->id);
	}
	pthread_mutex_unlock(&mu);
	return e && s ? hipSuccess : hipErrorInvalidHandle;
}

API hipError_t hipEventRecord(hipEvent_t e, hipStream_t s)
{
	return record(e, s, "hipEventRecord");
}

API hipError_t hipEventRecord_spt(hipEvent_t e, hipStream_t s)
{
	return record(e, s ? s : hipStreamPerThread, "hipEventRecord_spt");
}

API hipError_t hipEventQuery(hipEvent_t h)
{
	struct sevent *e;
	hipError_t r;

	pthread_mutex_lock(&mu);
	e = event_of(h);
	r = !e ? hipErrorInvalidHandle : done(e) ? hipSuccess : hipErrorNotReady;
	pthread_mutex_unlock(&mu);
	return r;
}

API hipError_t hipEventSynchronize(hipEvent_t h)
{
	struct sevent *e;

	pthread_mutex_lock(&mu);
	e = event_of(h);
	if (e && !done(e)) {
		/* Waiting: the stream gets there. */
		say("hipEventSynchronize e%d waits", e->id);
		e->s->completed = e->ticket;
	}
	pthread_mutex_unlock(&mu);
	return e ? hipSuccess : hipErrorInvalidHandle;
}

static hipError_t wait_event(hipStream_t sh, hipEvent_t h, unsigned int flags,
			     const char *name)
{
	struct sstream *s;
	struct sevent *e;

	FAIL_POINT(name);
	pthread_mutex_lock(&mu);
	s = stream_of(sh);
	e = event_of(h);
	if (s && e && !flags)
		say("%s s%d e%d", name, s->id, e->id);
	pthread_mutex_unlock(&mu);
	if (flags)
		return hipErrorInvalidValue;
	return s && e ? hipSuccess : hipErrorInvalidHandle;
}

API hipError_t hipStreamWaitEvent(hipStream_t s, hipEvent_t e,
				  unsigned int flags)
{
	return wait_event(s, e, flags, "hipStreamWaitEvent");
}

API hipError_t hipStreamWaitEvent_spt(hipStream_t s, hipEvent_t e,
				      unsigned int flags)
{
	return wait_event(s ? s : hipStreamPerThread, e, flags,
			  "hipStreamWaitEvent_spt");
}

API hipError_t hipDeviceSynchronize(void)
{
	int i;

	pthread_mutex_lock(&mu);
	for (i = 0; i < MAXSTREAMS; i++)
		if (streams[i].used && streams[i].dev == cur_dev)
			streams[i].completed = streams[i].recorded;
	nulls[cur_dev].completed = nulls[cur_dev].recorded;
	perthread[cur_dev].completed = perthread[cur_dev].recorded;
	say("hipDeviceSynchronize dev%d", cur_dev);
	pthread_mutex_unlock(&mu);
	return hipSuccess;
}

/* ---- memory ---- */

enum { M_MALLOC = 1, M_VMM, M_MAP, M_IMPORT, M_IMAP };

struct smem {
	int kind, dev;
	void *p;		/* where the process uses it */
	size_t size;
	int fd;			/* the dma-buf (ours) */
	struct kp_mem mem;	/* the backend's chunk (M_MALLOC, M_VMM) */
	struct smem *of;	/* M_MAP: the handle; M_IMAP: the import */
};

static struct smem mems[MAXMEM];

static struct smem *mem_new(int kind)
{
	int i;

	for (i = 0; i < MAXMEM && mems[i].kind; i++)
		;
	if (i == MAXMEM)
		return NULL;
	memset(&mems[i], 0, sizeof(mems[i]));
	mems[i].kind = kind;
	mems[i].fd = -1;
	return &mems[i];
}

/* The mapping holding @p (any kind the process uses), or NULL. */
static struct smem *mem_at(const void *p)
{
	int i;

	for (i = 0; i < MAXMEM; i++) {
		struct smem *m = &mems[i];

		if ((m->kind == M_MALLOC || m->kind == M_MAP || m->kind == M_IMAP) &&
		    (const char *)p >= (char *)m->p &&
		    (const char *)p < (char *)m->p + m->size)
			return m;
	}
	return NULL;
}

/*
 * The host exporters that hand out a dma-buf of their own (not the
 * module's backend: its chunks are a kfdpool pool's entries, which a
 * runtime's memory is not until libkfdpool-hip pins it).
 */
static const struct kp_backend *exporter(int *err)
{
	static const struct kp_backend *const all[] = {
		&kp_backend_dmaheap, &kp_backend_udmabuf, &kp_backend_vgem,
	};
	size_t i;

	*err = -ENODEV;
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		*err = all[i]->probe();
		if (!*err)
			return all[i];
	}
	return NULL;
}

/* A real dma-buf of host memory, mapped. */
static int dmabuf_alloc(size_t size, struct kp_mem *km)
{
	const struct kp_backend *be;
	int err;

	be = exporter(&err);
	if (!be)
		return err;
	return be->alloc(0, (size + 4095) & ~(size_t)4095, km);
}

static void dmabuf_free(struct kp_mem *km)
{
	const struct kp_backend *be;
	int err;

	be = exporter(&err);
	if (be)
		be->free(km);
}

static hipError_t malloc_dev(void **p, size_t size, const char *name)
{
	struct smem *m;
	hipError_t r = hipErrorOutOfMemory;
	int n;

	if (!p || !size)
		return hipErrorInvalidValue;
	FAIL_POINT(name);
	if (hipGetDeviceCount(&n))
		return hipErrorNoDevice;
	pthread_mutex_lock(&mu);
	m = mem_new(M_MALLOC);
	if (m && !dmabuf_alloc(size, &m->mem)) {
		m->p = m->mem.addr;
		m->size = m->mem.size;
		m->fd = m->mem.dmabuf_fd;
		m->dev = cur_dev;
		*p = m->p;
		say("%s dev%d %zu", name, cur_dev, size);
		r = hipSuccess;
	} else if (m) {
		m->kind = 0;
	}
	pthread_mutex_unlock(&mu);
	return r;
}

API hipError_t hipExtMallocWithFlags(void **p, size_t size, unsigned int flags)
{
	return malloc_dev(p, size, "hipExtMallocWithFlags");
}

API hipError_t hipMalloc(void **p, size_t size)
{
	return malloc_dev(p, size, "hipMalloc");
}

API int kfdpool_standin_hsa_export(const void *ptr, size_t size, int *fd,
				   uint64_t *off)
{
	struct smem *m;
	int r = 0x1001;		/* HSA_STATUS_ERROR_INVALID_ARGUMENT */
	int fail = failing("hsa_amd_portable_export_dmabuf");

	if (fail > 0)
		return fail;
	pthread_mutex_lock(&mu);
	m = mem_at(ptr);
	if (m && m->kind == M_MALLOC &&
	    (const char *)ptr + size <= (char *)m->p + m->size) {
		*fd = fcntl(m->fd, F_DUPFD_CLOEXEC, 3);
		*off = (const char *)ptr - (char *)m->p;
		/* As for memory suballocated from a larger buffer. */
		if (fail == KFDPOOL_STANDIN_WRONG)
			*off += 4096;
		say("hsa_amd_portable_export_dmabuf dev%d %zu off %llu", m->dev,
		    size, (unsigned long long)*off);
		r = 0;
	}
	pthread_mutex_unlock(&mu);
	return r;
}

API int kfdpool_standin_hsa_close(int fd)
{
	pthread_mutex_lock(&mu);
	say("hsa_amd_portable_close_dmabuf");
	pthread_mutex_unlock(&mu);
	return close(fd) ? 0x1000 : 0;
}

API hipError_t hipMemCreate(hipMemGenericAllocationHandle_t *h, size_t size,
			    const hipMemAllocationProp *prop,
			    unsigned long long flags)
{
	struct smem *m;
	hipError_t r = hipErrorOutOfMemory;
	int n;

	FAIL_POINT("hipMemCreate");
	if (hipGetDeviceCount(&n))
		return hipErrorNoDevice;
	if (!h || !size || flags || !prop ||
	    prop->type != hipMemAllocationTypePinned ||
	    prop->location.type != hipMemLocationTypeDevice ||
	    prop->location.id < 0 || prop->location.id >= n ||
	    size % 65536)
		return hipErrorInvalidValue;
	if (prop->requestedHandleType != hipMemHandleTypeNone &&
	    prop->requestedHandleType != hipMemHandleTypePosixFileDescriptor)
		return hipErrorNotSupported;
	pthread_mutex_lock(&mu);
	m = mem_new(M_VMM);
	if (m && !dmabuf_alloc(size, &m->mem)) {
		m->size = size;
		m->fd = m->mem.dmabuf_fd;
		m->dev = prop->location.id;
		*h = (hipMemGenericAllocationHandle_t)m;
		say("hipMemCreate dev%d %zu", m->dev, size);
		r = hipSuccess;
	} else if (m) {
		m->kind = 0;
	}
	pthread_mutex_unlock(&mu);
	return r;
}

API hipError_t hipMemGetAllocationGranularity(size_t *g,
					const hipMemAllocationProp *prop,
					hipMemAllocationGranularity_flags o)
{
	*g = 65536;
	return hipSuccess;
}

API hipError_t hipMemAddressReserve(void **p, size_t size, size_t align,
				    void *addr, unsigned long long flags)
{
	void *v;

	FAIL_POINT("hipMemAddressReserve");
	v = mmap(addr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		 MAP_NORESERVE, -1, 0);
	if (v == MAP_FAILED)
		return hipErrorOutOfMemory;
	*p = v;
	pthread_mutex_lock(&mu);
	say("hipMemAddressReserve %zu", size);
	pthread_mutex_unlock(&mu);
	return hipSuccess;
}

API hipError_t hipMemMap(void *p, size_t size, size_t off,
			 hipMemGenericAllocationHandle_t h,
			 unsigned long long flags)
{
	struct smem *v = (struct smem *)h, *m;
	hipError_t r = hipErrorInvalidValue;

	FAIL_POINT("hipMemMap");
	pthread_mutex_lock(&mu);
	if (v >= mems && v < mems + MAXMEM && v->kind == M_VMM &&
	    off + size <= v->size && (m = mem_new(M_MAP))) {
		if (mmap(p, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
			 v->fd, off) == p) {
			m->p = p;
			m->size = size;
			m->dev = v->dev;
			m->of = v;
			say("hipMemMap dev%d %zu", v->dev, size);
			r = hipSuccess;
		} else {
			m->kind = 0;
		}
	}
	pthread_mutex_unlock(&mu);
	return r;
}

API hipError_t hipMemSetAccess(void *p, size_t size, const hipMemAccessDesc *d,
			       size_t count)
{
	struct smem *m;
	hipError_t r = hipErrorInvalidValue;
	size_t i;
	int n;

	FAIL_POINT("hipMemSetAccess");
	if (hipGetDeviceCount(&n))
		return hipErrorNoDevice;
	pthread_mutex_lock(&mu);
	m = mem_at(p);
	if (m && m->kind == M_MAP && m->p == p && m->size == size) {
		r = hipSuccess;
		for (i = 0; i < count; i++) {
			if (d[i].location.type != hipMemLocationTypeDevice ||
			    d[i].location.id < 0 || d[i].location.id >= n) {
				r = hipErrorInvalidValue;
				break;
			}
			say("hipMemSetAccess dev%d of dev%d flags %d",
			    d[i].location.id, m->dev, (int)d[i].flags);
		}
	}
	pthread_mutex_unlock(&mu);
	return r;
}

API hipError_t hipMemExportToShareableHandle(void *out,
				hipMemGenericAllocationHandle_t h,
				hipMemAllocationHandleType type,
				unsigned long long flags)
{
	struct smem *v = (struct smem *)h;
	hipError_t r = hipErrorInvalidValue;
	int fail = failing("hipMemExportToShareableHandle");

	if (fail > 0)
		return (hipError_t)fail;
	pthread_mutex_lock(&mu);
	if (v >= mems && v < mems + MAXMEM && v->kind == M_VMM && !flags &&
	    type == hipMemHandleTypePosixFileDescriptor) {
		*(int *)out = fail == KFDPOOL_STANDIN_WRONG ?
			      memfd_create("not-a-dma-buf", MFD_CLOEXEC) :
			      fcntl(v->fd, F_DUPFD_CLOEXEC, 3);
		say("hipMemExportToShareableHandle dev%d", v->dev);
		r = hipSuccess;
	}
	pthread_mutex_unlock(&mu);
	return r;
}

API hipError_t hipMemUnmap(void *p, size_t size)
{
	struct smem *m;
	hipError_t r = hipErrorInvalidValue;

	pthread_mutex_lock(&mu);
	m = mem_at(p);
	if (m && m->kind == M_MAP && m->p == p && m->size == size) {
		mmap(p, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		     MAP_FIXED | MAP_NORESERVE, -1, 0);
		m->kind = 0;
		say("hipMemUnmap dev%d", m->dev);
		r = hipSuccess;
	}
	pthread_mutex_unlock(&mu);
	return r;
}

API hipError_t hipMemAddressFree(void *p, size_t size)
{
	pthread_mutex_lock(&mu);
	say("hipMemAddressFree %zu", size);
	pthread_mutex_unlock(&mu);
	return munmap(p, size) ? hipErrorInvalidValue : hipSuccess;
}

API hipError_t hipMemRelease(hipMemGenericAllocationHandle_t h)
{
	struct smem *v = (struct smem *)h;
	hipError_t r = hipErrorInvalidValue;

	pthread_mutex_lock(&mu);
	if (v >= mems && v < mems + MAXMEM && v->kind == M_VMM) {
		say("hipMemRelease dev%d", v->dev);
		dmabuf_free(&v->mem);
		v->kind = 0;
		r = hipSuccess;
	}
	pthread_mutex_unlock(&mu);
	return r;
}

API hipError_t hipImportExternalMemory(hipExternalMemory_t *out,
				       const hipExternalMemoryHandleDesc *d)
{
	const char *take = getenv("KFDPOOL_STANDIN_TAKE_FD");
	struct smem *m;
	hipError_t r = hipErrorOutOfMemory;
	int n;

	FAIL_POINT("hipImportExternalMemory");
	if (hipGetDeviceCount(&n))
		return hipErrorNoDevice;
	if (!out || !d || d->type != hipExternalMemoryHandleTypeOpaqueFd ||
	    !d->size || (d->flags && d->flags != 1))
		return hipErrorInvalidValue;
	pthread_mutex_lock(&mu);
	m = mem_new(M_IMPORT);
	if (m) {
		m->fd = fcntl(d->handle.fd, F_DUPFD_CLOEXEC, 3);
		if (m->fd < 0) {
			m->kind = 0;
			r = hipErrorInvalidValue;
		} else {
			m->size = d->size;
			m->dev = cur_dev;
			*out = (hipExternalMemory_t)m;
			if (take && !strcmp(take, "1"))
				close(d->handle.fd);	/* CUDA's rule */
			say("hipImportExternalMemory dev%d %llu%s", cur_dev,
			    (unsigned long long)d->size,
			    take && !strcmp(take, "1") ? " (took the fd)" : "");
			r = hipSuccess;
		}
	}
	pthread_mutex_unlock(&mu);
	return r;
}

API hipError_t hipExternalMemoryGetMappedBuffer(void **p,
				hipExternalMemory_t ext,
				const hipExternalMemoryBufferDesc *bd)
{
	struct smem *x = (struct smem *)ext, *m;
	hipError_t r = hipErrorInvalidValue;
	void *v;

	FAIL_POINT("hipExternalMemoryGetMappedBuffer");
	pthread_mutex_lock(&mu);
	if (x >= mems && x < mems + MAXMEM && x->kind == M_IMPORT && bd &&
	    !bd->flags && bd->offset + bd->size <= x->size &&
	    (m = mem_new(M_IMAP))) {
		v = mmap(NULL, bd->size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 x->fd, bd->offset);
		if (v != MAP_FAILED) {
			m->p = v;
			m->size = bd->size;
			m->dev = cur_dev;
			m->of = x;
			*p = v;
			say("hipExternalMemoryGetMappedBuffer dev%d %llu", cur_dev,
			    (unsigned long long)bd->size);
			r = hipSuccess;
		} else {
			m->kind = 0;
		}
	}
	pthread_mutex_unlock(&mu);
	return r;
}

API hipError_t hipDestroyExternalMemory(hipExternalMemory_t ext)
{
	struct smem *x = (struct smem *)ext;
	hipError_t r = hipErrorInvalidValue;

	pthread_mutex_lock(&mu);
	if (x >= mems && x < mems + MAXMEM && x->kind == M_IMPORT) {
		close(x->fd);
		x->kind = 0;
		say("hipDestroyExternalMemory dev%d", x->dev);
		r = hipSuccess;
	}
	pthread_mutex_unlock(&mu);
	return r;
}

API hipError_t hipFree(void *p)
{
	struct smem *m;
	hipError_t r = hipErrorInvalidValue;

	if (!p)
		return hipSuccess;
	pthread_mutex_lock(&mu);
	m = mem_at(p);
	if (m && m->p == p && m->kind == M_MALLOC) {
		say("hipFree dev%d %zu", m->dev, m->size);
		dmabuf_free(&m->mem);
		m->kind = 0;
		r = hipSuccess;
	} else if (m && m->p == p && m->kind == M_IMAP) {
		say("hipFree import dev%d %zu", m->dev, m->size);
		munmap(m->p, m->size);
		m->kind = 0;
		r = hipSuccess;
	}
	pthread_mutex_unlock(&mu);
	return r;
}

API int kfdpool_standin_device_of(const void *p)
{
	struct smem *m;
	int d;

	pthread_mutex_lock(&mu);
	m = mem_at(p);
	d = m ? m->dev : -1;
	pthread_mutex_unlock(&mu);
	return d;
}

API int kfdpool_standin_fds(void)
{
	int i, n = 0;

	pthread_mutex_lock(&mu);
	for (i = 0; i < MAXMEM; i++)
		n += (mems[i].kind == M_IMPORT || mems[i].kind == M_MALLOC ||
		      mems[i].kind == M_VMM) && mems[i].fd >= 0;
	pthread_mutex_unlock(&mu);
	return n;
}

/* A pointer said to be device memory must be one the runtime knows. */
API hipError_t hipMemcpy(void *dst, const void *src, size_t n, int kind)
{
	int ok;

	pthread_mutex_lock(&mu);
	ok = (kind != hipMemcpyHostToDevice && kind != hipMemcpyDeviceToDevice) ||
	     (mem_at(dst) && mem_at((char *)dst + n - 1));
	ok = ok && ((kind != hipMemcpyDeviceToHost &&
		     kind != hipMemcpyDeviceToDevice) ||
		    (mem_at(src) && mem_at((const char *)src + n - 1)));
	pthread_mutex_unlock(&mu);
	if (!ok)
		return hipErrorInvalidValue;
	memcpy(dst, src, n);
	return hipSuccess;
}

API hipError_t hipMemset(void *p, int v, size_t n)
{
	int ok;

	pthread_mutex_lock(&mu);
	ok = mem_at(p) && mem_at((char *)p + n - 1);
	pthread_mutex_unlock(&mu);
	if (!ok)
		return hipErrorInvalidValue;
	memset(p, v, n);
	return hipSuccess;
}

/* ---- the rest ---- */

API const char *hipGetErrorName(hipError_t e)
{
	switch (e) {
	case hipSuccess: return "hipSuccess";
	case hipErrorInvalidValue: return "hipErrorInvalidValue";
	case hipErrorOutOfMemory: return "hipErrorOutOfMemory";
	case hipErrorNoDevice: return "hipErrorNoDevice";
	case hipErrorInvalidDevice: return "hipErrorInvalidDevice";
	case hipErrorInvalidHandle: return "hipErrorInvalidHandle";
	case hipErrorNotReady: return "hipErrorNotReady";
	case hipErrorNotSupported: return "hipErrorNotSupported";
	default: return "hipErrorUnknown";
	}
}

API const char *hipGetErrorString(hipError_t e)
{
	return hipGetErrorName(e);
}

/* Its own functions, as a runtime hands them out. */
API hipError_t hipGetProcAddress(const char *symbol, void **pfn, int version,
				 uint64_t flags,
				 hipDriverProcAddressQueryResult *st)
{
	Dl_info info;
	void *h, *f = NULL;

	if (!symbol || !pfn)
		return hipErrorInvalidValue;
	/* (Not hipGetProcAddress's address: that name may resolve to a
	 * library that interposes it.) */
	if (dladdr((void *)say, &info) &&
	    (h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD))) {
		f = dlsym(h, symbol);
		dlclose(h);
	}
	*pfn = f;
	if (st)
		*st = f ? HIP_GET_PROC_ADDRESS_SUCCESS :
		      HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return f ? hipSuccess : hipErrorNotFound;
}

#endif
