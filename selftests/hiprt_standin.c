// SPDX-License-Identifier: GPL-2.0-only
/*
 * TEST-ONLY STAND-IN for the HIP runtime.  Not a runtime: no GPU, no
 * kernels, never installed.  Built as build/selftests/standin/
 * libamdhip64.so.6 (with a libhsa-runtime64.so.1 beside it, the same
 * source with -DSTANDIN_HSA), it is what the lib_standin_*_test programs
 * link instead of HIP's runtime, so that libkfdpool-hip finds it the way
 * it finds the real one (the next object after it that defines the hip*
 * names).  It behaves as the ROCm sources it names behave, so that what
 * the library does with a real runtime on a GPU node is what it does here;
 * every rule below cites the file and the releases it was read in
 * (ROCm/clr and ROCm/ROCR-Runtime at tags rocm-5.6.0 to rocm-6.2.x; the
 * newest clr and ROCr in ROCm/rocm-systems, projects/clr and
 * projects/rocr-runtime, with the pull requests that changed a rule):
 *
 *   devices     KFDPOOL_STANDIN_DEVICES="0000:03:00.0,0000:c1:00.0" (the
 *               default): their PCI bus ids, in this process's order
 *   version     KFDPOOL_STANDIN_VERSION: the clr release modelled, "X.Y"
 *               of selftests/standin-versions (6.2, 6.4, 7.0, 7.1, 7.2),
 *               or a HIP_VERSION number (5.7's, 6.1's); 6.2 when unset.
 *               What differs by release: the last error (7.0), how
 *               hipMemImportFromShareableHandle takes the fd (7.1), the
 *               view hipExternalMemoryGetMappedBuffer retains twice
 *               (7.2), hipStreamLegacy (6.3), the virtual memory calls
 *               (6.1, 6.2), hipMemPoolCreate in a capture (7.0),
 *               hipMemPoolSetAccess's checks (after 7.2: 70300000)
 *   driver      KFDPOOL_STANDIN_VMM (ROCr's VIRTUAL_MEM_API_SUPPORTED,
 *               default 1), KFDPOOL_STANDIN_DMABUF (KFD >= 1.12, default
 *               1), HSA_DISABLE_FRAGMENT_ALLOCATOR (ROCr's own variable)
 *   last error  every call writes the thread's last error (up to 6.4),
 *               every failure does (7.0 on)
 *   streams     hipStreamCreate/Destroy (slots are reused, as addresses
 *               are), the null stream per device, hipStreamPerThread, each
 *               on a device; capture (begin, end, status, modes)
 *   events      of the device current at their creation; complete when
 *               recorded, unless their stream is held
 *               (kfdpool_standin_hold)
 *   memory      "device" memory is host memory behind real dma-bufs
 *               (libkfdpool-hip's host backends: heap, udmabuf, vgem), so
 *               that the kfdpool module pins it: hipMalloc and
 *               hipExtMallocWithFlags through a model of ROCr's fragment
 *               allocator; the virtual memory calls; host registration
 *   import      hipImportExternalMemory (OpaqueFd) maps the dma-buf;
 *               like clr it leaves the fd to the caller and keeps its
 *               number, mapping it again for another device (device 0
 *               for hipPointerGetAttributes), or takes it (closes it)
 *               with KFDPOOL_STANDIN_TAKE_FD=1, as CUDA does;
 *               hipMemImportFromShareableHandle keeps no fd
 *   ROCr        hsa_amd_portable_export_dmabuf and hsa_amd_pointer_info
 *               as runtime.cpp answers them for each kind of memory
 *               (an interop map: an abort, where ROCr crashes)
 *   copies      hipMemcpy/hipMemset refuse "device" pointers it does not
 *               know, as a runtime would treat them as unknown
 *   failures    kfdpool_standin_fail: the next call of a named function
 *               answers an error (or a wrong answer), for the library's
 *               error paths
 */
#ifdef STANDIN_HSA

#include <stddef.h>
#include <stdint.h>

/* libhsa-runtime64.so.1's part: what ROCr exports beside HIP, made by the
 * runtime stand-in it comes with. */
int kfdpool_standin_hsa_export(const void *ptr, size_t size, int *fd,
			       uint64_t *off);
int kfdpool_standin_hsa_close(int fd);
int kfdpool_standin_hsa_info(int attr, void *value);
int kfdpool_standin_hsa_ptrinfo(const void *ptr, void *info);

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

__attribute__((visibility("default")))
int hsa_system_get_info(int attribute, void *value)
{
	return kfdpool_standin_hsa_info(attribute, value);
}

__attribute__((visibility("default")))
int hsa_amd_pointer_info(const void *ptr, void *info, void *(*alloc)(size_t),
			 uint32_t *naccessible, void **accessible)
{
	return kfdpool_standin_hsa_ptrinfo(ptr, info);
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

#ifndef MREMAP_FIXED
#define MREMAP_FIXED 2
#endif

#include "hiprt_standin.h"
#include "chunk/backend.h"

#define API __attribute__((visibility("default")))
#define MAXDEV 8
#define MAXSTREAMS 64
#define MAXEVENTS 1024
#define MAXMEM 4096
#define MAXBLOCKS 512
#define MAXFRAGS 64
#define BLOCK ((size_t)2 << 20)
#define INTEROP_ALIGN ((size_t)256 << 10)
#define PAGE_SZ ((size_t)4096)

/* HSA status values (hsa.h). */
#define HSA_OK 0
#define HSA_STATUS_ERROR 0x1000
#define HSA_STATUS_ERROR_INVALID_ARGUMENT 0x1001
#define HSA_STATUS_ERROR_INVALID_ALLOCATION 0x1002

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

/*
 * The thread's last error.  Up to HIP 6.4 clr's HIP_RETURN stores every
 * call's result in it (hipamd/src/hip_internal.hpp, rocm-5.6.0 to
 * rocm-6.2.2), and hipGetLastError and hipExtGetLastError answer it and
 * put hipSuccess back (hip_error.cpp).  From HIP 7.0 ("HIP API 7.0
 * changes"; ROCm/rocm-systems projects/clr/hipamd/src/hip_internal.hpp,
 * HIP_UPDATE_ERROR_STATE) every result goes to last_command_error_, and
 * the last error changes only on an error other than hipErrorNotReady:
 * a success no longer resets it.  hipExtGetLastError answers
 * last_command_error_ there (hip_error.cpp).
 */
static __thread hipError_t last_error, last_command;
static int clr_since(int major, int minor);

static hipError_t update_error_state(hipError_t e)
{
	if (!clr_since(7, 0)) {
		last_error = e;
		return e;
	}
	last_command = e;
	if (e != hipSuccess && e != hipErrorNotReady)
		last_error = e;
	return e;
}
#define RET(e) return update_error_state((hipError_t)(e))

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
			RET(fail_); \
	} while (0)

/* ---- what the runtime and the driver can do ---- */

static int env_int(const char *name, int dflt)
{
	const char *e = getenv(name);

	return e && *e ? atoi(e) : dflt;
}

/*
 * The clr release modelled: KFDPOOL_STANDIN_VERSION is "X.Y", one of the
 * releases of selftests/standin-versions (HIP_VERSION as that release
 * reports it), or a HIP_VERSION number; 6.2 when unset.  Parsed once.
 */
static const struct { const char *name; int hip_version; } releases[] = {
	{ "6.2", 60200000 },
	/* Debian's 6.4.3 (its hip_version.h: patch 43484). */
	{ "6.4", 60443484 },
	{ "7.0", 70000000 },
	{ "7.1", 70100000 },
	{ "7.2", 70200000 },
};

static int version(void)
{
	static int v = -1;
	const char *e;
	size_t i;

	if (v >= 0)
		return v;
	e = getenv("KFDPOOL_STANDIN_VERSION");
	v = 60200000;
	if (e && strchr(e, '.')) {
		for (i = 0; i < sizeof(releases) / sizeof(releases[0]); i++)
			if (!strcmp(e, releases[i].name))
				v = releases[i].hip_version;
		if (v == 60200000 && strcmp(e, "6.2")) {
			fprintf(stderr, "standin: KFDPOOL_STANDIN_VERSION=%s is "
				"no release it models\n", e);
			abort();
		}
	} else if (e && *e) {
		v = atoi(e);
	}
	return v;
}

/* Whether the modelled release is @major.@minor or newer. */
static int clr_since(int major, int minor)
{
	return version() >= major * 10000000 + minor * 100000;
}

API int kfdpool_standin_clr(void)
{
	return version();
}

/*
 * hipMemCreate refuses any requestedHandleType but None, and
 * hipMemExportToShareableHandle is a stub answering hipErrorNotSupported,
 * before clr commit 56ebf5157 ("VMM IPC implementation for Linux"), in
 * rocm-6.2.0 (hipamd/src/hip_vm.cpp of rocm-5.7.1, 6.0.0, 6.1.2 and
 * 6.2.2).
 */
static int vmm_ipc(void)
{
	return version() >= 60200000;
}

/* ---- devices ---- */

static char busids[MAXDEV][16];
static int ndev = -1;
static __thread int cur_dev;

static int ndevices(void)
{
	const char *e = getenv("KFDPOOL_STANDIN_DEVICES");
	char *s, *tok, *save = NULL;

	if (ndev >= 0)
		return ndev;
	ndev = 0;
	s = strdup(e ? e : "0000:03:00.0,0000:c1:00.0");
	for (tok = strtok_r(s, ",", &save); tok && ndev < MAXDEV;
	     tok = strtok_r(NULL, ",", &save))
		snprintf(busids[ndev++], sizeof(busids[0]), "%s", tok);
	free(s);
	return ndev;
}

static int count_devices(void)
{
	int n;

	pthread_mutex_lock(&mu);
	n = ndevices();
	pthread_mutex_unlock(&mu);
	return n;
}

API hipError_t hipGetDeviceCount(int *n)
{
	*n = count_devices();
	RET(*n ? hipSuccess : hipErrorNoDevice);
}

API hipError_t hipGetDevice(int *d)
{
	FAIL_POINT("hipGetDevice");
	if (!count_devices())
		RET(hipErrorNoDevice);
	*d = cur_dev;
	RET(hipSuccess);
}

API hipError_t hipSetDevice(int d)
{
	int n;

	FAIL_POINT("hipSetDevice");
	n = count_devices();
	if (!n)
		RET(hipErrorNoDevice);
	if (d < 0 || d >= n)
		RET(hipErrorInvalidDevice);
	cur_dev = d;
	RET(hipSuccess);
}

/* hip_context.cpp (rocm-5.6.0 to 6.2.2): NULL is hipErrorInvalidValue. */
API hipError_t hipRuntimeGetVersion(int *v)
{
	if (!v)
		RET(hipErrorInvalidValue);
	*v = version();
	RET(hipSuccess);
}

/*
 * hipDeviceAttributeVirtualMemoryManagementSupported
 * (hip_device_runtime.cpp): rocdevice.cpp sets it false in rocm-6.0.0,
 * and from ROCr's HSA_AMD_SYSTEM_INFO_VIRTUAL_MEM_API_SUPPORTED from
 * rocm-6.1 on, though hipMemCreate still refuses shareable handles there.
 */
API hipError_t hipDeviceGetAttribute(int *v, hipDeviceAttribute_t attr, int dev)
{
	if (!v)
		RET(hipErrorInvalidValue);
	if (dev < 0 || dev >= count_devices())
		RET(hipErrorInvalidDevice);
	if (attr != hipDeviceAttributeVirtualMemoryManagementSupported)
		RET(hipErrorInvalidValue);
	*v = version() >= 60100000 && env_int("KFDPOOL_STANDIN_VMM", 1);
	RET(hipSuccess);
}

API hipError_t hipDeviceGetPCIBusId(char *buf, int len, int dev)
{
	FAIL_POINT("hipDeviceGetPCIBusId");
	if (dev < 0 || dev >= count_devices() || len < 13)
		RET(hipErrorInvalidDevice);
	/* clr spells the hex digits in upper case at times: so do we. */
	snprintf(buf, len, "%s", busids[dev]);
	for (char *c = buf; *c; c++)
		if (*c >= 'a' && *c <= 'f')
			*c -= 'a' - 'A';
	RET(hipSuccess);
}

API hipError_t hipDeviceGetByPCIBusId(int *dev, const char *id)
{
	int n, i;

	FAIL_POINT("hipDeviceGetByPCIBusId");
	n = count_devices();
	if (!n)
		RET(hipErrorNoDevice);
	for (i = 0; i < n; i++) {
		if (!strcasecmp(busids[i], id)) {
			*dev = i;
			RET(hipSuccess);
		}
	}
	RET(hipErrorInvalidDevice);
}

/* ---- the last error (hip_error.cpp) ---- */

API hipError_t hipGetLastError(void)
{
	hipError_t e = last_error;

	last_error = hipSuccess;
	return e;
}

API hipError_t hipExtGetLastError(void)
{
	hipError_t e = last_command;

	if (!clr_since(7, 0))
		return hipGetLastError();
	last_command = hipSuccess;
	return e;
}

API hipError_t hipPeekAtLastError(void)
{
	RET(last_error);
}

/* ---- streams and events ---- */

struct sstream {
	int used, id, dev, held;
	uint64_t recorded, completed;
	int capture;			/* hipStreamCaptureStatus */
	int capmode;
	pthread_t capthread;
};

struct sevent {
	int used, id, dev;
	struct sstream *s;		/* where its completion is tracked */
	uint64_t ticket;
	struct sstream *cap;		/* the stream last recorded on */
};

static struct sstream streams[MAXSTREAMS];
static struct sstream nulls[MAXDEV];
static __thread struct sstream perthread[MAXDEV];
static struct sevent events[MAXEVENTS];
static int next_id = 1;
static __thread int capture_mode;	/* hipStreamCaptureMode */

static int user_stream(const struct sstream *s)
{
	return s >= streams && s < streams + MAXSTREAMS;
}

/* The stream @h is (mu held), or NULL when it is no valid stream. */
static struct sstream *stream_of(hipStream_t h)
{
	struct sstream *s = (struct sstream *)h;

	if (!h || h == hipStreamLegacy) {
		s = &nulls[cur_dev];
	} else if (h == hipStreamPerThread) {
		s = &perthread[cur_dev];
	} else if (!user_stream(s) || !s->used) {
		return NULL;
	}
	if (!s->id) {
		s->id = next_id++;
		s->dev = cur_dev;
		s->used = 1;
	}
	return s;
}

/* hip_stream.cpp's isValid (rocm-6.2.2): hipStreamLegacy is not a stream
 * there, and kfdpool's stream checks must see the runtime's answer. */
static struct sstream *valid_stream(hipStream_t h)
{
	if (h == hipStreamLegacy && version() < 60300000)
		return NULL;
	return stream_of(h);
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

static int capturing(const struct sstream *s)
{
	return s && s->capture == hipStreamCaptureStatusActive;
}

static int any_capture(void)
{
	int i;

	for (i = 0; i < MAXSTREAMS; i++)
		if (streams[i].used && capturing(&streams[i]))
			return 1;
	return 0;
}

/*
 * CHECK_STREAM_CAPTURE_SUPPORTED (hip_internal.hpp, rocm-6.2.2, and the
 * same in ROCm/rocm-systems' newest, so in every release modelled), in
 * hipMalloc, hipFree, hipHostRegister, hipHostUnregister among others:
 * unless the thread's capture mode is relaxed, a call while this thread
 * (thread-local mode) or any thread (global mode) captures invalidates
 * those captures and fails.  mu held.
 */
static int capture_unsafe(const char *name)
{
	pthread_t me = pthread_self();
	int i, hit = 0;

	if (capture_mode == hipStreamCaptureModeRelaxed)
		return 0;
	for (i = 0; i < MAXSTREAMS; i++) {
		struct sstream *s = &streams[i];

		if (!s->used || !capturing(s))
			continue;
		if (!pthread_equal(s->capthread, me) &&
		    (capture_mode != hipStreamCaptureModeGlobal ||
		     s->capmode != hipStreamCaptureModeGlobal))
			continue;
		s->capture = hipStreamCaptureStatusInvalidated;
		say("%s invalidates the capture of s%d", name, s->id);
		hit = 1;
	}
	return hit;
}

#define CHECK_CAPTURE(name) \
	do { \
		int bad_; \
		pthread_mutex_lock(&mu); \
		bad_ = capture_unsafe(name); \
		pthread_mutex_unlock(&mu); \
		if (bad_) \
			RET(hipErrorStreamCaptureUnsupported); \
	} while (0)

/* Device::SyncAllStreams (hip_device.cpp, rocm-6.2.2; ihipHostUnregister
 * still calls it in ROCm/rocm-systems' newest hip_memory.cpp): what ihipFree
 * and ihipHostUnregister wait for, in every release modelled.  mu held. */
static void sync_all_streams(int dev, const char *why)
{
	int i, waited = 0;

	for (i = 0; i < MAXSTREAMS; i++) {
		struct sstream *s = &streams[i];

		if (s->used && s->dev == dev) {
			waited |= s->completed != s->recorded;
			s->completed = s->recorded;
		}
	}
	waited |= nulls[dev].completed != nulls[dev].recorded ||
		  perthread[dev].completed != perthread[dev].recorded;
	nulls[dev].completed = nulls[dev].recorded;
	perthread[dev].completed = perthread[dev].recorded;
	say("%s syncs all streams of dev%d%s", why, dev,
	    waited ? " (waits)" : "");
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
		RET(hipErrorOutOfMemory);
	}
	memset(&streams[i], 0, sizeof(streams[i]));
	streams[i].used = 1;
	streams[i].id = next_id++;
	streams[i].dev = cur_dev;
	*out = (hipStream_t)&streams[i];
	say("hipStreamCreate s%d dev%d", streams[i].id, cur_dev);
	pthread_mutex_unlock(&mu);
	RET(hipSuccess);
}

/*
 * hipStreamDestroy (hip_stream.cpp, rocm-6.2.2) ends a capture, and the
 * queue's terminate() waits for its work (rocclr commandqueue.cpp).
 */
API hipError_t hipStreamDestroy(hipStream_t h)
{
	struct sstream *s;

	pthread_mutex_lock(&mu);
	s = !h || h == hipStreamLegacy || h == hipStreamPerThread ? NULL :
	    stream_of(h);
	if (s) {
		say("hipStreamDestroy s%d", s->id);
		s->completed = s->recorded;
		s->capture = hipStreamCaptureStatusNone;
		s->used = 0;
	}
	pthread_mutex_unlock(&mu);
	RET(s ? hipSuccess : h && h != hipStreamPerThread ?
	    hipErrorContextIsDestroyed : hipErrorInvalidHandle);
}

/* hip_stream.cpp (rocm-5.6.0 to 6.2.2): the null stream is the current
 * device's. */
API hipError_t hipStreamGetDevice(hipStream_t h, int *dev)
{
	struct sstream *s;

	if (!dev)
		RET(hipErrorInvalidValue);
	pthread_mutex_lock(&mu);
	s = valid_stream(h);
	if (s)
		*dev = s->dev;
	pthread_mutex_unlock(&mu);
	RET(s ? hipSuccess : hipErrorContextIsDestroyed);
}

/* hipStreamSynchronize_common (hip_stream.cpp, rocm-6.2.2). */
static hipError_t stream_sync(hipStream_t h, const char *name)
{
	struct sstream *s;
	hipError_t r = hipSuccess;

	pthread_mutex_lock(&mu);
	s = valid_stream(h);
	if (!s) {
		r = hipErrorContextIsDestroyed;
	} else if (user_stream(s) && capturing(s)) {
		r = hipErrorStreamCaptureUnsupported;
	} else {
		s->completed = s->recorded;
		say("%s s%d", name, s->id);
	}
	pthread_mutex_unlock(&mu);
	RET(r);
}

API hipError_t hipStreamSynchronize(hipStream_t h)
{
	return stream_sync(h, "hipStreamSynchronize");
}

API hipError_t hipStreamSynchronize_spt(hipStream_t h)
{
	return stream_sync(h ? h : hipStreamPerThread,
			   "hipStreamSynchronize_spt");
}

/* hip_graph.cpp (rocm-6.2.2): the legacy null stream cannot be
 * captured. */
API hipError_t hipStreamBeginCapture(hipStream_t h, hipStreamCaptureMode mode)
{
	struct sstream *s;
	hipError_t r = hipSuccess;

	pthread_mutex_lock(&mu);
	s = valid_stream(h);
	if (!s)
		r = hipErrorContextIsDestroyed;
	else if (!user_stream(s) && s != &perthread[cur_dev])
		r = hipErrorStreamCaptureUnsupported;
	else if (s->capture != hipStreamCaptureStatusNone)
		r = hipErrorIllegalState;
	if (!r) {
		s->capture = hipStreamCaptureStatusActive;
		s->capmode = mode;
		s->capthread = pthread_self();
		say("hipStreamBeginCapture s%d mode %d", s->id, (int)mode);
	}
	pthread_mutex_unlock(&mu);
	RET(r);
}

API hipError_t hipStreamEndCapture(hipStream_t h, hipGraph_t *graph)
{
	struct sstream *s;
	hipError_t r = hipSuccess;

	pthread_mutex_lock(&mu);
	s = valid_stream(h);
	if (!s || !graph)
		r = hipErrorInvalidValue;
	else if (s->capture == hipStreamCaptureStatusNone)
		r = hipErrorIllegalState;
	else if (s->capture == hipStreamCaptureStatusInvalidated)
		r = hipErrorStreamCaptureInvalidated;
	if (s && s->capture != hipStreamCaptureStatusNone) {
		s->capture = hipStreamCaptureStatusNone;
		say("hipStreamEndCapture s%d%s", s->id, r ? " invalidated" : "");
	}
	if (!r)
		*graph = (hipGraph_t)s;
	pthread_mutex_unlock(&mu);
	RET(r);
}

/* hipStreamIsCapturing_common (hip_graph.cpp, rocm-6.2.2). */
API hipError_t hipStreamIsCapturing(hipStream_t h, hipStreamCaptureStatus *st)
{
	struct sstream *s;
	hipError_t r = hipSuccess;

	if (!st)
		RET(hipErrorInvalidValue);
	pthread_mutex_lock(&mu);
	s = valid_stream(h);
	if (!s)
		r = hipErrorContextIsDestroyed;
	else if (!h && any_capture())
		r = hipErrorStreamCaptureImplicit;
	else
		*st = (hipStreamCaptureStatus)s->capture;
	pthread_mutex_unlock(&mu);
	RET(r);
}

API hipError_t hipThreadExchangeStreamCaptureMode(hipStreamCaptureMode *mode)
{
	int old;

	if (!mode || *mode < hipStreamCaptureModeGlobal ||
	    *mode > hipStreamCaptureModeRelaxed)
		RET(hipErrorInvalidValue);
	old = capture_mode;
	capture_mode = *mode;
	*mode = (hipStreamCaptureMode)old;
	RET(hipSuccess);
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

API int kfdpool_standin_pending(hipStream_t h)
{
	struct sstream *s;
	int n;

	pthread_mutex_lock(&mu);
	s = stream_of(h);
	n = s ? (int)(s->recorded - s->completed) : -1;
	pthread_mutex_unlock(&mu);
	return n;
}

/* hip::Event takes the current device (hip_event.hpp). */
API hipError_t hipEventCreateWithFlags(hipEvent_t *out, unsigned int flags)
{
	int i;

	FAIL_POINT("hipEventCreateWithFlags");
	pthread_mutex_lock(&mu);
	for (i = 0; i < MAXEVENTS && events[i].used; i++)
		;
	if (i == MAXEVENTS) {
		pthread_mutex_unlock(&mu);
		RET(hipErrorOutOfMemory);
	}
	memset(&events[i], 0, sizeof(events[i]));
	events[i].used = 1;
	events[i].id = next_id++;
	events[i].dev = cur_dev;
	*out = (hipEvent_t)&events[i];
	say("hipEventCreateWithFlags e%d %#x dev%d", events[i].id, flags,
	    cur_dev);
	pthread_mutex_unlock(&mu);
	RET(hipSuccess);
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
	RET(e ? hipSuccess : hipErrorInvalidHandle);
}

/*
 * hipEventRecord_common (hip_event.cpp, rocm-6.2.2): the event remembers
 * the stream (SetCaptureStream); on a capturing stream it joins the
 * capture; otherwise a stream of another device than the event's is
 * refused with hipErrorInvalidHandle.
 */
static hipError_t record(hipEvent_t h, hipStream_t sh, const char *name)
{
	struct sstream *s;
	struct sevent *e;
	hipError_t r = hipSuccess;

	FAIL_POINT(name);
	pthread_mutex_lock(&mu);
	e = event_of(h);
	s = valid_stream(sh);
	if (!e) {
		r = hipErrorInvalidHandle;
	} else if (!s) {
		r = hipErrorContextIsDestroyed;
	} else {
		e->cap = user_stream(s) || s == &perthread[cur_dev] ? s : NULL;
		if (capturing(s)) {
			say("%s e%d s%d (captured)", name, e->id, s->id);
		} else if (e->dev != s->dev) {
			say("%s e%d of dev%d on s%d of dev%d refused", name,
			    e->id, e->dev, s->id, s->dev);
			r = hipErrorInvalidHandle;
		} else {
			e->s = s;
			e->ticket = ++s->recorded;
			if (!s->held)
				s->completed = s->recorded;
			say("%s e%d s%d", name, e->id, s->id);
		}
	}
	pthread_mutex_unlock(&mu);
	RET(r);
}

API hipError_t hipEventRecord(hipEvent_t e, hipStream_t s)
{
	return record(e, s, "hipEventRecord");
}

API hipError_t hipEventRecord_spt(hipEvent_t e, hipStream_t s)
{
	return record(e, s ? s : hipStreamPerThread, "hipEventRecord_spt");
}

/* ihipEventQuery, hipEventSynchronize (hip_event.cpp, rocm-6.2.2): an
 * event whose stream is capturing invalidates that capture. */
static int breaks_capture(struct sevent *e, const char *name)
{
	if (!capturing(e->cap))
		return 0;
	e->cap->capture = hipStreamCaptureStatusInvalidated;
	say("%s e%d invalidates the capture of s%d", name, e->id, e->cap->id);
	return 1;
}

API hipError_t hipEventQuery(hipEvent_t h)
{
	struct sevent *e;
	hipError_t r;

	pthread_mutex_lock(&mu);
	e = event_of(h);
	r = !e ? hipErrorInvalidHandle :
	    breaks_capture(e, "hipEventQuery") ? hipErrorCapturedEvent :
	    done(e) ? hipSuccess : hipErrorNotReady;
	pthread_mutex_unlock(&mu);
	RET(r);
}

API hipError_t hipEventSynchronize(hipEvent_t h)
{
	struct sevent *e;
	hipError_t r = hipSuccess;

	pthread_mutex_lock(&mu);
	e = event_of(h);
	if (!e) {
		r = hipErrorInvalidHandle;
	} else if (breaks_capture(e, "hipEventSynchronize")) {
		r = hipErrorCapturedEvent;
	} else if (!done(e)) {
		/* Waiting: the stream gets there. */
		say("hipEventSynchronize e%d waits", e->id);
		e->s->completed = e->ticket;
	}
	pthread_mutex_unlock(&mu);
	RET(r);
}

static hipError_t wait_event(hipStream_t sh, hipEvent_t h, unsigned int flags,
			     const char *name)
{
	struct sstream *s;
	struct sevent *e;
	hipError_t r;

	FAIL_POINT(name);
	pthread_mutex_lock(&mu);
	s = valid_stream(sh);
	e = event_of(h);
	r = flags ? hipErrorInvalidValue : !e ? hipErrorInvalidHandle :
	    !s ? hipErrorContextIsDestroyed : hipSuccess;
	if (!r)
		say("%s s%d e%d", name, s->id, e->id);
	pthread_mutex_unlock(&mu);
	RET(r);
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
	RET(hipSuccess);
}

/* ---- memory ---- */

/*
 * Driver objects (KFD allocations), each a real dma-buf of host memory:
 * the blocks of ROCr's fragment allocator, the allocations it makes
 * directly, hipMemCreate's handles.  KFD exports one dma-buf per object
 * and keeps it (mem->dmabuf): every export of an object is that one
 * dma-buf again.
 */
struct frag {
	size_t off, size;
	int used;
};

struct sblock {
	int used, dev;
	uint64_t id;		/* never reused */
	struct kp_mem km;	/* the dma-buf, mapped at km.addr */
	/* An imported handle (hipMemImportFromShareableHandle): the driver
	 * holds the buffer, no fd (km.dmabuf_fd -1); its pages stay mapped
	 * at km.addr while not mapped at @mapped_at by hipMemMap. */
	int imported, released;
	void *mapped_at;
	size_t size;
	int discard;		/* no more sub-allocation, freed when empty */
	uint64_t cached;	/* in the block cache: its order there, else 0 */
	int nfrag;
	struct frag frags[MAXFRAGS];
};

static struct sblock blocks[MAXBLOCKS];
static uint64_t block_ids, cache_seq;

/* M_LEAKED: a buffer hipFree no longer knows that a reference keeps. */
enum { M_MALLOC = 1, M_VMM, M_MAP, M_IMPORT, M_IMAP, M_HOSTREG, M_LEAKED };

struct smem {
	int kind, dev;
	void *p;		/* where the process uses it */
	size_t size;
	struct sblock *blk;	/* M_MALLOC, M_VMM: the driver object */
	struct smem *of;	/* M_MAP: the handle; M_IMAP: the import */
	int fd;			/* M_IMPORT: the number it was given */
	int refs;		/* M_IMPORT: mapped buffers + 1; M_IMAP its own */
	size_t off;		/* M_IMAP: where in the import */
	void *devmap[MAXDEV];	/* M_IMPORT: its interop map on each device */
	unsigned int flags;	/* M_HOSTREG */
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

		if ((m->kind == M_MALLOC || m->kind == M_MAP ||
		     m->kind == M_IMAP || m->kind == M_HOSTREG) &&
		    (const char *)p >= (char *)m->p &&
		    (const char *)p < (char *)m->p + m->size)
			return m;
	}
	return NULL;
}

/*
 * A range of @size bytes of address space (PROT_NONE) placed as libhsakmt
 * places GPU virtual addresses (reserved_aperture_allocate_aligned,
 * libhsakmt/src/fmm.c, the same from rocm-5.6 to ROCm/rocm-systems):
 * the alignment asked for, raised to the next power of two the size
 * reaches, up to 2 MiB; its start aligned when an alignment over a page
 * was asked for, else its end.  NULL when there is no room.
 */
static void *place_va(size_t size, size_t align)
{
	int end = align <= PAGE_SZ;
	char *raw, *start;
	size_t span;

	if (align < PAGE_SZ)
		align = PAGE_SZ;
	while (align < BLOCK && size >= 2 * align)
		align *= 2;
	span = size + align;
	raw = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		   MAP_NORESERVE, -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	if (end)
		start = (char *)(((uintptr_t)raw + span) & ~(uintptr_t)(align - 1)) -
			size;
	else
		start = (char *)(((uintptr_t)raw + align - 1) &
				 ~(uintptr_t)(align - 1));
	if (start > raw)
		munmap(raw, start - raw);
	if (raw + span > start + size)
		munmap(start + size, raw + span - (start + size));
	return start;
}

/*
 * An interop map of dma-buf @fd (@size bytes): Memory::interopMapBuffer
 * (rocclr/device/rocm/rocmemory.cpp) through hsa_amd_interop_map_buffer,
 * ROCr's InteropMap (runtime.cpp) registering the buffer with libhsakmt,
 * which places it as place_va does from 256 KiB (IMAGE_ALIGN,
 * hsakmt_fmm_register_graphics_handle).  MAP_FAILED when @fd is no
 * buffer that maps.
 */
static void *interop_map(int fd, size_t size)
{
	void *va = place_va(size, INTEROP_ALIGN), *v;

	if (!va)
		return MAP_FAILED;
	v = mmap(va, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
		 0);
	if (v == MAP_FAILED)
		munmap(va, size);
	return v;
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

/* A new driver object of @size bytes on @dev (mu held), or NULL. */
static struct sblock *object_new(int dev, size_t size)
{
	const struct kp_backend *be;
	struct sblock *b = NULL;
	int i, err;

	for (i = 0; i < MAXBLOCKS && blocks[i].used; i++)
		;
	be = exporter(&err);
	if (i == MAXBLOCKS || !be)
		return NULL;
	b = &blocks[i];
	memset(b, 0, sizeof(*b));
	if (be->alloc(0, size, &b->km))
		return NULL;
	b->used = 1;
	b->dev = dev;
	b->id = ++block_ids;
	b->size = size;
	return b;
}

static void object_free(struct sblock *b)
{
	const struct kp_backend *be;
	int err;

	if (b->imported) {
		munmap(b->km.addr, b->size);
	} else {
		be = exporter(&err);
		if (be)
			be->free(&b->km);
	}
	b->used = 0;
}

/* ---- ROCr's fragment allocator ---- */

static int fragments_off(void)
{
	const char *e = getenv("HSA_DISABLE_FRAGMENT_ALLOCATOR");

	return e && !strcmp(e, "1");
}

static void frag_split(struct sblock *b, int i, size_t bytes)
{
	struct frag *f = &b->frags[i];

	if (f->size > bytes && b->nfrag < MAXFRAGS) {
		memmove(&b->frags[i + 2], &b->frags[i + 1],
			(b->nfrag - i - 1) * sizeof(*f));
		b->frags[i + 1] = (struct frag){ f->off + bytes,
						 f->size - bytes, 0 };
		b->nfrag++;
		f->size = bytes;
	}
	f->used = 1;
}

static size_t in_use_size(int dev)
{
	size_t n = 0;
	int i;

	for (i = 0; i < MAXBLOCKS; i++)
		if (blocks[i].used && blocks[i].dev == dev &&
		    !blocks[i].cached && !blocks[i].discard)
			n += blocks[i].size;
	return n;
}

/* SimpleHeap::balance: old cached blocks go while the cache is more than
 * twice the blocks in use. */
static void balance(int dev)
{
	for (;;) {
		struct sblock *oldest = NULL;
		size_t cached = 0;
		int i, n = 0;

		for (i = 0; i < MAXBLOCKS; i++) {
			struct sblock *b = &blocks[i];

			if (!b->used || b->dev != dev || !b->cached)
				continue;
			n++;
			cached += b->size;
			if (!oldest || b->cached < oldest->cached)
				oldest = b;
		}
		if (n <= 1 || cached <= 2 * in_use_size(dev))
			return;
		say("block cache frees a block of dev%d", dev);
		object_free(oldest);
	}
}

/*
 * MemoryRegion::AllocateImpl and SimpleHeap::alloc (ROCR-Runtime
 * src/core/runtime/amd_memory_region.cpp and src/core/util/simple_heap.h,
 * rocm-5.6.0 to rocm-6.2.4): ordinary VRAM comes from 2 MiB blocks, best
 * fit among the free fragments of blocks in use, else a cached block for
 * a request under 2 MiB, else a new block of the request rounded up to
 * 2 MiB, which a request over 2 MiB has to itself (discardBlock).  With
 * HSA_DISABLE_FRAGMENT_ALLOCATOR=1 every allocation is its own KFD
 * object.  mu held.
 */
static void *frag_alloc(int dev, size_t bytes, struct sblock **out)
{
	struct sblock *best = NULL, *b;
	int i, j, bi = -1;

	bytes = (bytes + PAGE_SZ - 1) & ~(PAGE_SZ - 1);
	if (fragments_off()) {
		b = object_new(dev, bytes);
		if (!b)
			return NULL;
		b->discard = 1;
		b->frags[0] = (struct frag){ 0, bytes, 1 };
		b->nfrag = 1;
		*out = b;
		return b->km.addr;
	}
	for (i = 0; i < MAXBLOCKS; i++) {
		b = &blocks[i];
		if (!b->used || b->dev != dev || b->discard || b->cached)
			continue;
		for (j = 0; j < b->nfrag; j++) {
			struct frag *f = &b->frags[j];

			if (!f->used && f->size >= bytes &&
			    (!best || f->size < best->frags[bi].size)) {
				best = b;
				bi = j;
			}
		}
	}
	if (best) {
		frag_split(best, bi, bytes);
		*out = best;
		return (char *)best->km.addr + best->frags[bi].off;
	}
	if (bytes < BLOCK) {
		for (i = 0; i < MAXBLOCKS; i++) {
			b = &blocks[i];
			if (b->used && b->dev == dev && b->cached &&
			    (!best || b->cached > best->cached))
				best = b;
		}
	}
	if (best) {
		say("block cache gives back a block of dev%d", dev);
		best->cached = 0;
		b = best;
	} else {
		b = object_new(dev, (bytes + BLOCK - 1) & ~(BLOCK - 1));
		if (!b)
			return NULL;
	}
	b->frags[0] = (struct frag){ 0, b->size, 0 };
	b->nfrag = 1;
	frag_split(b, 0, bytes);
	if (bytes > BLOCK)
		b->discard = 1;
	*out = b;
	return b->km.addr;
}

/* SimpleHeap::free: a block with no fragment in use is freed when
 * discarded, else kept in the block cache for the next allocation. */
static void frag_free(struct sblock *b, void *p)
{
	size_t off = (char *)p - (char *)b->km.addr;
	int i, used = 0;

	for (i = 0; i < b->nfrag; i++)
		if (b->frags[i].off == off)
			b->frags[i].used = 0;
	for (i = 0; i + 1 < b->nfrag;) {
		if (!b->frags[i].used && !b->frags[i + 1].used) {
			b->frags[i].size += b->frags[i + 1].size;
			memmove(&b->frags[i + 1], &b->frags[i + 2],
				(b->nfrag - i - 2) * sizeof(b->frags[0]));
			b->nfrag--;
		} else {
			i++;
		}
	}
	for (i = 0; i < b->nfrag; i++)
		used |= b->frags[i].used;
	if (used)
		return;
	if (b->discard) {
		object_free(b);
		return;
	}
	b->cached = ++cache_seq;
	say("block of dev%d back to the block cache", b->dev);
	balance(b->dev);
}

static hipError_t malloc_dev(void **p, size_t size, const char *name)
{
	struct sblock *b = NULL;
	struct smem *m;
	hipError_t r = hipErrorOutOfMemory;

	if (!p || !size)
		RET(hipErrorInvalidValue);
	FAIL_POINT(name);
	if (!count_devices())
		RET(hipErrorNoDevice);
	pthread_mutex_lock(&mu);
	m = mem_new(M_MALLOC);
	if (m)
		m->p = frag_alloc(cur_dev, size, &b);
	if (m && m->p) {
		m->size = (size + PAGE_SZ - 1) & ~(PAGE_SZ - 1);
		m->blk = b;
		m->dev = cur_dev;
		*p = m->p;
		say("%s dev%d %zu", name, cur_dev, size);
		r = hipSuccess;
	} else if (m) {
		m->kind = 0;
	}
	pthread_mutex_unlock(&mu);
	RET(r);
}

API hipError_t hipExtMallocWithFlags(void **p, size_t size, unsigned int flags)
{
	return malloc_dev(p, size, "hipExtMallocWithFlags");
}

API hipError_t hipMalloc(void **p, size_t size)
{
	CHECK_CAPTURE("hipMalloc");
	return malloc_dev(p, size, "hipMalloc");
}

/* The import whose interop map on some device holds @p (mu held). */
static struct smem *interop_at(const void *p, int *dev)
{
	int i, d;

	for (i = 0; i < MAXMEM; i++) {
		struct smem *x = &mems[i];

		if (x->kind != M_IMPORT)
			continue;
		for (d = 0; d < MAXDEV; d++) {
			if (x->devmap[d] && (const char *)p >= (char *)x->devmap[d] &&
			    (const char *)p < (char *)x->devmap[d] + x->size) {
				if (dev)
					*dev = d;
				return x;
			}
		}
	}
	return NULL;
}

/*
 * Runtime::DmaBufExport (ROCR-Runtime src/core/runtime/runtime.cpp,
 * rocm-5.6.0 to 6.2.4, and ROCm/rocm-systems' newest) and
 * hsaKmtExportDMABufHandle: the whole KFD object holding the range, with
 * the range's offset in it; a fragment's block is left in sub-allocation.
 * KFD < 1.12 has no export.  It looks the range up in allocation_map_
 * only: memory mapped with hipMemMap (hsa_amd_vmem_map keeps it in
 * mapped_handle_map_) is no allocation there, and an interop map is one
 * whose region InteropMap records as nullptr, which DmaBufExport
 * dereferences (region->owner()): a crash in ROCr, an abort here.
 */
API int kfdpool_standin_hsa_export(const void *ptr, size_t size, int *fd,
				   uint64_t *off)
{
	struct smem *m;
	int r = HSA_STATUS_ERROR_INVALID_ALLOCATION;
	int fail = failing("hsa_amd_portable_export_dmabuf");

	if (fail > 0)
		return fail;
	if (!env_int("KFDPOOL_STANDIN_DMABUF", 1))
		return HSA_STATUS_ERROR;
	pthread_mutex_lock(&mu);
	m = mem_at(ptr);
	if ((m && m->kind == M_IMAP) || (!m && interop_at(ptr, NULL))) {
		fprintf(stderr, "standin: hsa_amd_portable_export_dmabuf(%p) on an "
			"interop map: ROCr's DmaBufExport dereferences the null "
			"region InteropMap recorded (runtime.cpp)\n", ptr);
		abort();
	}
	if (m && m->kind == M_MALLOC &&
	    (const char *)ptr + size <= (char *)m->p + m->size) {
		*fd = fcntl(m->blk->km.dmabuf_fd, F_DUPFD_CLOEXEC, 3);
		*off = (const char *)ptr - (char *)m->blk->km.addr;
		/* As for memory suballocated from a larger buffer. */
		if (fail == KFDPOOL_STANDIN_WRONG)
			*off += 4096;
		say("hsa_amd_portable_export_dmabuf dev%d %zu off %llu", m->dev,
		    size, (unsigned long long)*off);
		r = HSA_OK;
	}
	pthread_mutex_unlock(&mu);
	return r;
}

/*
 * Runtime::PtrInfo (runtime.cpp, rocm-5.6 to the newest): libhsakmt's
 * pointer info, the allocation_map_ entry's base and size when there is
 * one.  Types (hsa_ext_amd.h): 1 ROCr's allocation, 2 locked host memory,
 * 3 an interop map (registered graphics memory: HSA_POINTER_REGISTERED_
 * GRAPHICS until hsa_amd_interop_unmap_buffer deregisters it), 5 a
 * reserved address range (hipMemAddressReserve, mapped or not); 0 else.
 */
struct ptrinfo {
	uint32_t size;
	int type;
	void *agent_base, *host_base;
	size_t bytes;
	void *user_data;
	uint64_t owner;
	uint32_t global_flags;
};

API int kfdpool_standin_hsa_ptrinfo(const void *ptr, void *out)
{
	struct ptrinfo pi, *info = out;
	struct smem *m, *x;
	int d = 0;

	if (!info || !info->size)
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	memset(&pi, 0, sizeof(pi));
	pthread_mutex_lock(&mu);
	m = mem_at(ptr);
	x = interop_at(ptr, &d);
	if (x) {
		pi.type = 3;
		pi.agent_base = pi.host_base = x->devmap[d];
		pi.bytes = x->size;
	} else if (m && m->kind == M_MALLOC) {
		pi.type = 1;
		pi.agent_base = pi.host_base = m->p;
		pi.bytes = m->size;
	} else if (m && m->kind == M_HOSTREG) {
		pi.type = 2;
		pi.host_base = m->p;
		pi.bytes = m->size;
	} else if (m && m->kind == M_MAP) {
		pi.type = 5;
		pi.agent_base = m->p;
		pi.bytes = m->size;
	}
	pthread_mutex_unlock(&mu);
	pi.size = info->size < sizeof(pi) ? info->size : sizeof(pi);
	memcpy(info, &pi, pi.size);
	return HSA_OK;
}

API int kfdpool_standin_hsa_close(int fd)
{
	pthread_mutex_lock(&mu);
	say("hsa_amd_portable_close_dmabuf");
	pthread_mutex_unlock(&mu);
	return close(fd) ? HSA_STATUS_ERROR : HSA_OK;
}

/* Runtime::GetSystemInfo (runtime.cpp, rocm-6.2.0): DMABUF_SUPPORTED
 * from KFD's version (1.12), VIRTUAL_MEM_API_SUPPORTED (6.1 on). */
API int kfdpool_standin_hsa_info(int attr, void *value)
{
	if (attr == 0x204)
		*(_Bool *)value = env_int("KFDPOOL_STANDIN_DMABUF", 1) != 0;
	else if (attr == 0x205 && version() >= 60100000)
		*(_Bool *)value = env_int("KFDPOOL_STANDIN_VMM", 1) != 0;
	else
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	return HSA_OK;
}

/* ---- virtual memory management (hip_vm.cpp) ---- */

API hipError_t hipMemCreate(hipMemGenericAllocationHandle_t *h, size_t size,
			    const hipMemAllocationProp *prop,
			    unsigned long long flags)
{
	struct smem *m;
	hipError_t r = hipErrorOutOfMemory;
	int n;

	FAIL_POINT("hipMemCreate");
	n = count_devices();
	if (!n)
		RET(hipErrorNoDevice);
	if (!h || !size || flags || !prop ||
	    prop->type != hipMemAllocationTypePinned ||
	    prop->location.type != hipMemLocationTypeDevice ||
	    prop->location.id < 0 || prop->location.id >= n)
		RET(hipErrorInvalidValue);
	if (prop->requestedHandleType != hipMemHandleTypeNone &&
	    (prop->requestedHandleType != hipMemHandleTypePosixFileDescriptor ||
	     !vmm_ipc()))
		RET(hipErrorNotSupported);
	if (size % 65536)
		RET(hipErrorInvalidValue);
	/* ROCr without the virtual memory API cannot make the handle:
	 * SvmBuffer::malloc fails, hipErrorOutOfMemory. */
	if (!env_int("KFDPOOL_STANDIN_VMM", 1))
		RET(hipErrorOutOfMemory);
	pthread_mutex_lock(&mu);
	m = mem_new(M_VMM);
	/* A handle (NoAddress) is its own KFD object, never a fragment. */
	if (m && (m->blk = object_new(prop->location.id, size))) {
		m->size = size;
		m->dev = prop->location.id;
		m->flags = prop->requestedHandleType;
		*h = (hipMemGenericAllocationHandle_t)m;
		say("hipMemCreate dev%d %zu", m->dev, size);
		r = hipSuccess;
	} else if (m) {
		m->kind = 0;
	}
	pthread_mutex_unlock(&mu);
	RET(r);
}

API hipError_t hipMemGetAllocationGranularity(size_t *g,
					const hipMemAllocationProp *prop,
					hipMemAllocationGranularity_flags o)
{
	if (!g || !prop)
		RET(hipErrorInvalidValue);
	*g = 65536;
	RET(hipSuccess);
}

/*
 * Device::virtualAlloc (rocclr/device/rocm/rocdevice.cpp, rocm-6.2.2)
 * reserves through hsa_amd_vmem_address_reserve without the alignment
 * asked for; libhsakmt places the range (place_va).
 */
API hipError_t hipMemAddressReserve(void **p, size_t size, size_t align,
				    void *addr, unsigned long long flags)
{
	void *v;

	FAIL_POINT("hipMemAddressReserve");
	v = place_va(size, 0);
	if (!v)
		RET(hipErrorOutOfMemory);
	*p = v;
	pthread_mutex_lock(&mu);
	say("hipMemAddressReserve %zu", size);
	pthread_mutex_unlock(&mu);
	RET(hipSuccess);
}

/* hipMemMap and hipMemUnmap enqueue on the device's null stream and wait
 * for it (awaitCompletion, hip_vm.cpp rocm-6.2.2).  mu held. */
static void await_null_stream(int dev, const char *why)
{
	struct sstream *s = &nulls[dev];

	say("%s waits for the null stream of dev%d%s", why, dev,
	    s->completed != s->recorded ? " (waits)" : "");
	s->completed = s->recorded;
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
	    v->blk->imported && (v->blk->mapped_at || off || size != v->size)) {
		/* The stand-in's limit, not clr's: no fd to map it twice. */
		say("hipMemMap of an imported handle: once, whole (stand-in)");
	} else if (v >= mems && v < mems + MAXMEM && v->kind == M_VMM &&
	    off + size <= v->size && (m = mem_new(M_MAP))) {
		void *got = v->blk->imported ?
			mremap(v->blk->km.addr, size, size,
			       MREMAP_MAYMOVE | MREMAP_FIXED, p) :
			mmap(p, size, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_FIXED, v->blk->km.dmabuf_fd, off);

		if (got == p && v->blk->imported)
			v->blk->mapped_at = v->blk->km.addr = p;
		if (got == p) {
			m->p = p;
			m->size = size;
			m->dev = v->dev;
			m->of = v;
			m->blk = v->blk;
			say("hipMemMap dev%d %zu", v->dev, size);
			await_null_stream(v->dev, "hipMemMap");
			r = hipSuccess;
		} else {
			m->kind = 0;
		}
	}
	pthread_mutex_unlock(&mu);
	RET(r);
}

API hipError_t hipMemSetAccess(void *p, size_t size, const hipMemAccessDesc *d,
			       size_t count)
{
	struct smem *m;
	hipError_t r = hipErrorInvalidValue;
	size_t i;
	int n;

	FAIL_POINT("hipMemSetAccess");
	n = count_devices();
	if (!n)
		RET(hipErrorNoDevice);
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
	RET(r);
}

/* A stub before rocm-6.2.0; then the handle type must be the one asked
 * for at hipMemCreate (hip_vm.cpp). */
API hipError_t hipMemExportToShareableHandle(void *out,
				hipMemGenericAllocationHandle_t h,
				hipMemAllocationHandleType type,
				unsigned long long flags)
{
	struct smem *v = (struct smem *)h;
	hipError_t r = hipErrorInvalidValue;
	int fail = failing("hipMemExportToShareableHandle");

	if (fail > 0)
		RET(fail);
	if (flags || !h || !out)
		RET(hipErrorInvalidValue);
	if (!vmm_ipc())
		RET(hipErrorNotSupported);
	pthread_mutex_lock(&mu);
	if (v >= mems && v < mems + MAXMEM && v->kind == M_VMM &&
	    type == (hipMemAllocationHandleType)v->flags &&
	    type == hipMemHandleTypePosixFileDescriptor) {
		*(int *)out = fail == KFDPOOL_STANDIN_WRONG ?
			      memfd_create("not-a-dma-buf", MFD_CLOEXEC) :
			      fcntl(v->blk->km.dmabuf_fd, F_DUPFD_CLOEXEC, 3);
		say("hipMemExportToShareableHandle dev%d", v->dev);
		r = hipSuccess;
	}
	pthread_mutex_unlock(&mu);
	RET(r);
}

API hipError_t hipMemUnmap(void *p, size_t size)
{
	struct smem *m;
	hipError_t r = hipErrorInvalidValue;

	pthread_mutex_lock(&mu);
	m = mem_at(p);
	if (m && m->kind == M_MAP && m->p == p && m->size == size) {
		struct sblock *b = m->blk;
		void *home, *moved = MAP_FAILED;

		if (b->imported && b->released) {
			object_free(b);
		} else if (b->imported) {
			/* Its pages go back where the handle keeps them. */
			home = mmap(NULL, size, PROT_NONE, MAP_PRIVATE |
				    MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
			if (home != MAP_FAILED)
				moved = mremap(p, size, size, MREMAP_MAYMOVE |
					       MREMAP_FIXED, home);
			if (moved != MAP_FAILED) {
				b->km.addr = moved;
				b->mapped_at = NULL;
			}
		}
		mmap(p, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		     MAP_FIXED | MAP_NORESERVE, -1, 0);
		m->kind = 0;
		say("hipMemUnmap dev%d", m->dev);
		await_null_stream(m->dev, "hipMemUnmap");
		r = hipSuccess;
	}
	pthread_mutex_unlock(&mu);
	RET(r);
}

API hipError_t hipMemAddressFree(void *p, size_t size)
{
	pthread_mutex_lock(&mu);
	say("hipMemAddressFree %zu", size);
	pthread_mutex_unlock(&mu);
	RET(munmap(p, size) ? hipErrorInvalidValue : hipSuccess);
}

API hipError_t hipMemRelease(hipMemGenericAllocationHandle_t h)
{
	struct smem *v = (struct smem *)h;
	hipError_t r = hipErrorInvalidValue;

	pthread_mutex_lock(&mu);
	if (v >= mems && v < mems + MAXMEM && v->kind == M_VMM) {
		say("hipMemRelease dev%d", v->dev);
		/* An imported buffer mapped still is freed at its unmap
		 * (VMemoryHandleRelease, runtime.cpp); the stand-in's own
		 * handles live on in the mapping's reference. */
		if (v->blk->imported && v->blk->mapped_at)
			v->blk->released = 1;
		else
			object_free(v->blk);
		v->kind = 0;
		r = hipSuccess;
	}
	pthread_mutex_unlock(&mu);
	RET(r);
}

/*
 * hipMemImportFromShareableHandle (hip_vm.cpp) and
 * Device::ImportShareableVMMHandle (rocdevice.cpp): ROCr's
 * hsa_amd_vmem_import_shareable_handle imports the dma-buf into the
 * driver (VMemoryImportShareableHandle, runtime.cpp) and keeps no fd.  The
 * handle is the current device's.  How the fd is passed changed: up to
 * 7.0 clr reads an int through @os (rocm-6.2.2's *(int *)osHandle); from
 * 7.1 it takes @os's value as the fd, as CUDA does (ROCm/rocm-systems
 * PR #759, "Fix handle/fd type passed from app to align with spec",
 * merged 2025-08-27 after 7.0 had branched).  An fd that is no buffer
 * fails as clr fails it: hipErrorInvalidValue.
 */
API hipError_t hipMemImportFromShareableHandle(
				hipMemGenericAllocationHandle_t *h, void *os,
				hipMemAllocationHandleType type)
{
	struct sblock *b = NULL;
	struct smem *m;
	hipError_t r = hipErrorInvalidValue;
	off_t size;
	void *v;
	int fd, i;

	FAIL_POINT("hipMemImportFromShareableHandle");
	if (!count_devices())
		RET(hipErrorNoDevice);
	if (!h || !os)
		RET(hipErrorInvalidValue);
	fd = clr_since(7, 1) ? (int)(uintptr_t)os : *(int *)os;
	size = lseek(fd, 0, SEEK_END);
	if (size <= 0)
		RET(hipErrorInvalidValue);
	v = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (v == MAP_FAILED)
		RET(hipErrorInvalidValue);
	pthread_mutex_lock(&mu);
	for (i = 0; i < MAXBLOCKS && blocks[i].used; i++)
		;
	m = i < MAXBLOCKS ? mem_new(M_VMM) : NULL;
	if (m) {
		b = &blocks[i];
		memset(b, 0, sizeof(*b));
		b->used = b->imported = 1;
		b->dev = cur_dev;
		b->id = ++block_ids;
		b->size = size;
		b->km.addr = v;
		b->km.size = size;
		b->km.dmabuf_fd = -1;
		m->blk = b;
		m->size = size;
		m->dev = cur_dev;
		m->flags = type;
		*h = (hipMemGenericAllocationHandle_t)m;
		say("hipMemImportFromShareableHandle dev%d %zu fd %d", cur_dev,
		    (size_t)size, fd);
		r = hipSuccess;
	} else {
		munmap(v, size);
		r = hipErrorOutOfMemory;
	}
	pthread_mutex_unlock(&mu);
	RET(r);
}

/* ---- external memory (hip_memory.cpp, rocclr rocmemory.cpp) ---- */

/*
 * hipImportExternalMemory makes an ExternalBuffer and maps it for the
 * current device at once (Memory::interopMapBuffer), keeping the fd's
 * number, ExternalMemory::handle_ (never closed, never duplicated): the
 * device memory of any other device is made from that number when first
 * asked for (roc::Memory::create, "Interop buffer"), by
 * hipExternalMemoryGetMappedBuffer there or by hipPointerGetAttributes
 * (below).  Its userData.deviceId is left 0 (rocm-6.2.2 and the newest).
 * KFDPOOL_STANDIN_TAKE_FD=1 takes the fd instead (closes it), as CUDA
 * does.
 */
API hipError_t hipImportExternalMemory(hipExternalMemory_t *out,
				       const hipExternalMemoryHandleDesc *d)
{
	const char *take = getenv("KFDPOOL_STANDIN_TAKE_FD");
	struct smem *m;
	hipError_t r = hipErrorOutOfMemory;
	void *v;

	FAIL_POINT("hipImportExternalMemory");
	if (!count_devices())
		RET(hipErrorNoDevice);
	if (!out || !d || d->type != hipExternalMemoryHandleTypeOpaqueFd ||
	    !d->size || (d->flags && d->flags != 1))
		RET(hipErrorInvalidValue);
	pthread_mutex_lock(&mu);
	m = mem_new(M_IMPORT);
	if (m) {
		v = interop_map(d->handle.fd, d->size);
		if (v == MAP_FAILED) {
			m->kind = 0;
		} else {
			m->p = v;
			m->size = d->size;
			m->dev = cur_dev;
			m->fd = d->handle.fd;
			m->refs = 1;
			m->devmap[cur_dev] = v;
			*out = (hipExternalMemory_t)m;
			if (take && !strcmp(take, "1"))
				close(d->handle.fd);	/* CUDA's rule */
			say("hipImportExternalMemory dev%d %llu fd %d%s", cur_dev,
			    (unsigned long long)d->size, d->handle.fd,
			    take && !strcmp(take, "1") ? " (took the fd)" : "");
			r = hipSuccess;
		}
	}
	pthread_mutex_unlock(&mu);
	RET(r);
}

/* The device memory of import @x on device @dev: its interop map there,
 * made now from the number the import kept if there is none.  mu held. */
static void *import_devmem(struct smem *x, int dev, const char *why)
{
	void *v;

	if (x->devmap[dev])
		return x->devmap[dev];
	v = interop_map(x->fd, x->size);
	say("%s maps dev%d by fd %d%s", why, dev, x->fd,
	    v == MAP_FAILED ? " (fails)" : "");
	if (v == MAP_FAILED)
		return NULL;
	x->devmap[dev] = v;
	return v;
}

static void import_put(struct smem *x)
{
	int d;

	if (--x->refs)
		return;
	for (d = 0; d < MAXDEV; d++)
		if (x->devmap[d])
			munmap(x->devmap[d], x->size);
	x->kind = 0;
}

/*
 * The buffer retains its import until hipFree.  HIP 7.2 retains it once
 * more: ROCm/rocm-systems PR #1749 (merged 2025-11-06) made
 * hipExternalMemoryGetMappedBuffer create a view and retain() it, and PR
 * #3528 ("Fix memory leak in hipExternalMemoryGetMappedBuffer", merged
 * 2026-02-25) took the retain out: hipFree forgets the pointer but the
 * view, holding the import and its interop map, is never freed.
 */
static int retains_view_twice(void)
{
	return clr_since(7, 2);
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
	if (x >= mems && x < mems + MAXMEM && x->kind == M_IMPORT && bd && p &&
	    !bd->flags && bd->offset + bd->size <= x->size &&
	    (m = mem_new(M_IMAP))) {
		v = import_devmem(x, cur_dev, "hipExternalMemoryGetMappedBuffer");
		if (v) {
			m->p = (char *)v + bd->offset;
			m->off = bd->offset;
			m->size = bd->size;
			m->dev = cur_dev;
			m->of = x;
			m->refs = retains_view_twice() ? 2 : 1;
			x->refs++;
			*p = m->p;
			say("hipExternalMemoryGetMappedBuffer dev%d %llu", cur_dev,
			    (unsigned long long)bd->size);
			r = hipSuccess;
		} else {
			m->kind = 0;
		}
	}
	pthread_mutex_unlock(&mu);
	RET(r);
}

API hipError_t hipDestroyExternalMemory(hipExternalMemory_t ext)
{
	struct smem *x = (struct smem *)ext;
	hipError_t r = hipErrorInvalidValue;

	pthread_mutex_lock(&mu);
	if (x >= mems && x < mems + MAXMEM && x->kind == M_IMPORT) {
		say("hipDestroyExternalMemory dev%d%s", x->dev,
		    x->refs > 1 ? " (still referenced)" : "");
		import_put(x);
		r = hipSuccess;
	}
	pthread_mutex_unlock(&mu);
	RET(r);
}

/* ihipFree (hip_memory.cpp, rocm-6.2.2) waits for every stream of the
 * memory's device first; an imported buffer's device is 0. */
API hipError_t hipFree(void *p)
{
	struct smem *m;
	hipError_t r = hipErrorInvalidValue;

	CHECK_CAPTURE("hipFree");
	if (!p)
		RET(hipSuccess);
	pthread_mutex_lock(&mu);
	m = mem_at(p);
	if (m && m->p == p && m->kind == M_MALLOC) {
		sync_all_streams(m->dev, "hipFree");
		say("hipFree dev%d %zu", m->dev, m->size);
		frag_free(m->blk, m->p);
		m->kind = 0;
		r = hipSuccess;
	} else if (m && m->p == p && m->kind == M_IMAP) {
		sync_all_streams(0, "hipFree");
		say("hipFree import dev%d %zu%s", m->dev, m->size,
		    m->refs > 1 ? " (its view stays referenced)" : "");
		/* ihipFree forgets the pointer (MemObjMap) and releases it. */
		if (--m->refs) {
			m->kind = M_LEAKED;
		} else {
			import_put(m->of);
			m->kind = 0;
		}
		r = hipSuccess;
	}
	pthread_mutex_unlock(&mu);
	RET(r);
}

/* ---- host memory (hip_memory.cpp, rocm-6.2.2) ---- */

API hipError_t hipHostRegister(void *p, size_t size, unsigned int flags)
{
	struct smem *m;
	hipError_t r = hipErrorOutOfMemory;

	CHECK_CAPTURE("hipHostRegister");
	FAIL_POINT("hipHostRegister");
	if (!p || !size || flags > 15)
		RET(hipErrorInvalidValue);
	pthread_mutex_lock(&mu);
	if (mem_at(p)) {
		r = hipErrorHostMemoryAlreadyRegistered;
	} else if ((m = mem_new(M_HOSTREG))) {
		m->p = p;
		m->size = size;
		m->dev = cur_dev;
		m->flags = flags;
		say("hipHostRegister %zu dev%d", size, cur_dev);
		r = hipSuccess;
	}
	pthread_mutex_unlock(&mu);
	RET(r);
}

/* ihipHostUnregister waits for every stream of the device it was
 * registered on. */
API hipError_t hipHostUnregister(void *p)
{
	struct smem *m;
	hipError_t r = hipErrorHostMemoryNotRegistered;

	CHECK_CAPTURE("hipHostUnregister");
	if (!p)
		RET(hipErrorInvalidValue);
	pthread_mutex_lock(&mu);
	m = mem_at(p);
	if (m && m->kind == M_HOSTREG && m->p == p) {
		sync_all_streams(m->dev, "hipHostUnregister");
		say("hipHostUnregister %zu", m->size);
		m->kind = 0;
		r = hipSuccess;
	}
	pthread_mutex_unlock(&mu);
	RET(r);
}

API hipError_t hipPointerGetAttributes(hipPointerAttribute_t *a, const void *p)
{
	struct smem *m;

	if (!a || !p)
		RET(hipErrorInvalidValue);
	memset(a, 0, sizeof(*a));
	pthread_mutex_lock(&mu);
	m = mem_at(p);
	if (m && m->kind == M_IMAP) {
		/* userData.deviceId is 0 for external memory: the device
		 * memory of device 0, made from the number the import kept
		 * when the buffer was imported on another device. */
		void *d0 = import_devmem(m->of, 0, "hipPointerGetAttributes");

		if (!d0) {
			pthread_mutex_unlock(&mu);
			RET(hipErrorOutOfMemory);	/* MemoryAllocation */
		}
		a->type = hipMemoryTypeDevice;
		a->device = 0;
		a->devicePointer = (char *)d0 + m->off +
				   ((const char *)p - (char *)m->p);
	} else if (m) {
		/* hipMalloc: the device current then; a hipMemMap'ed range:
		 * its handle's (submitVirtualMap, rocvirtual.cpp). */
		a->type = m->kind == M_HOSTREG ? hipMemoryTypeHost :
			  hipMemoryTypeDevice;
		a->device = m->dev;
		a->devicePointer = (void *)p;
		a->hostPointer = m->kind == M_HOSTREG ? (void *)p : NULL;
		a->allocationFlags = m->kind == M_HOSTREG ? m->flags : 0;
	} else {
		a->type = hipMemoryTypeUnregistered;
		a->device = -2;		/* hipInvalidDeviceId */
	}
	pthread_mutex_unlock(&mu);
	RET(hipSuccess);
}

API int kfdpool_standin_device_of(const void *p)
{
	struct smem *m;
	int d;

	pthread_mutex_lock(&mu);
	m = mem_at(p);
	d = m && m->kind != M_HOSTREG ? m->dev : -1;
	pthread_mutex_unlock(&mu);
	return d;
}

API uint64_t kfdpool_standin_object_of(const void *p, void **base,
				       size_t *size)
{
	struct smem *m;
	uint64_t id = 0;

	pthread_mutex_lock(&mu);
	m = mem_at(p);
	if (m && m->kind == M_IMAP)
		m = NULL;
	if (m && m->blk) {
		id = m->blk->id;
		if (base)
			*base = m->blk->km.addr;
		if (size)
			*size = m->blk->size;
	}
	pthread_mutex_unlock(&mu);
	return id;
}

API int kfdpool_standin_fds(void)
{
	int i, n = 0;

	pthread_mutex_lock(&mu);
	for (i = 0; i < MAXBLOCKS; i++)
		n += blocks[i].used && blocks[i].km.dmabuf_fd >= 0;
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
		RET(hipErrorInvalidValue);
	memcpy(dst, src, n);
	RET(hipSuccess);
}

API hipError_t hipMemset(void *p, int v, size_t n)
{
	int ok;

	pthread_mutex_lock(&mu);
	ok = mem_at(p) && mem_at((char *)p + n - 1);
	pthread_mutex_unlock(&mu);
	if (!ok)
		RET(hipErrorInvalidValue);
	memset(p, v, n);
	RET(hipSuccess);
}

/* ---- the runtime's own pools (hip_mempool.cpp) ---- */

/* Each device's default pool, then the pools hipMemPoolCreate made. */
#define MAXPOOLS (MAXDEV + 16)
static struct {
	int dev, used;
	unsigned int types;
	hipMemAccessFlags access[MAXDEV];	/* what peers were given */
} pools[MAXPOOLS];
static int current_pool[MAXDEV];	/* index + 1 into pools, 0: default */

static int pool_index(hipMemPool_t h)
{
	int i;

	for (i = 0; i < MAXPOOLS; i++)
		if ((void *)h == (void *)&pools[i] && (i < MAXDEV || pools[i].used))
			return i;
	return -1;
}

/* A pool handle clr would read as its own, unchecked: none is a crash. */
static int pool_or_abort(hipMemPool_t h, const char *name)
{
	int i = pool_index(h);

	if (i < 0) {
		fprintf(stderr, "standin: %s: %p is no pool of this runtime, "
			"which clr would read as its own\n", name, (void *)h);
		abort();
	}
	return i;
}

/*
 * hipMemPoolCreate and hipMemPoolDestroy refuse, from HIP 7.0, while the
 * calling thread captures in a mode other than relaxed or any thread
 * captures in global mode (hip::tls.capture_streams_ and g_captureStreams,
 * which keep a capture until it ends, invalidated or not), leaving the
 * captures as they are (hip_mempool.cpp: not in rocm-6.2.2 nor in clr's
 * amd-staging of 2024-10, in ROCm/rocm-systems' newest and in clrs before
 * 7.2's hipMemSetMemPool; the release it came in is not in the sources
 * read, 7.0 is the one whose capture rules it belongs with).  mu held.
 */
static int capture_listed(void)
{
	pthread_t me = pthread_self();
	int i;

	if (!clr_since(7, 0))
		return 0;
	for (i = 0; i < MAXSTREAMS; i++) {
		struct sstream *s = &streams[i];

		if (!s->used || s->capture == hipStreamCaptureStatusNone)
			continue;
		if (s->capmode == hipStreamCaptureModeGlobal ||
		    (s->capmode == hipStreamCaptureModeThreadLocal &&
		     pthread_equal(s->capthread, me)))
			return 1;
	}
	return 0;
}

/*
 * hipMemPoolCreate (hip_mempool.cpp, rocm-6.2.2 to the newest): NULL
 * arguments, an allocation type other than pinned, a location that is not
 * one of its devices (a negative id too, compared unsigned):
 * hipErrorInvalidValue; then the capture (above).
 */
API hipError_t hipMemPoolCreate(hipMemPool_t *pool, const hipMemPoolProps *p)
{
	int i;

	if (!pool || !p || p->allocType != hipMemAllocationTypePinned ||
	    p->location.type != hipMemLocationTypeDevice ||
	    p->location.id < 0 || p->location.id >= count_devices())
		RET(hipErrorInvalidValue);
	pthread_mutex_lock(&mu);
	if (capture_listed()) {
		pthread_mutex_unlock(&mu);
		RET(hipErrorStreamCaptureUnsupported);
	}
	for (i = MAXDEV; i < MAXPOOLS && pools[i].used; i++)
		;
	if (i == MAXPOOLS) {
		pthread_mutex_unlock(&mu);
		RET(hipErrorOutOfMemory);
	}
	memset(&pools[i], 0, sizeof(pools[i]));
	pools[i].used = 1;
	pools[i].dev = p->location.id;
	pools[i].types = (unsigned int)p->handleTypes;
	*pool = (hipMemPool_t)&pools[i];
	pthread_mutex_unlock(&mu);
	RET(hipSuccess);
}

/* hipMemPoolDestroy (hip_mempool.cpp, rocm-6.2.2 to the newest): NULL,
 * the capture (above, from 7.0), then a pool none of its own or a default
 * pool: hipErrorInvalidValue. */
API hipError_t hipMemPoolDestroy(hipMemPool_t pool)
{
	hipError_t r = hipSuccess;
	int i;

	if (!pool)
		RET(hipErrorInvalidValue);
	pthread_mutex_lock(&mu);
	i = pool_index(pool);
	if (capture_listed())
		r = hipErrorStreamCaptureUnsupported;
	else if (i < MAXDEV)
		r = hipErrorInvalidValue;
	else {
		if (current_pool[pools[i].dev] == i + 1)
			current_pool[pools[i].dev] = 0;
		pools[i].used = 0;
	}
	pthread_mutex_unlock(&mu);
	RET(r);
}

/*
 * hipMemPoolSetAccess (hip_mempool.cpp).  rocm-6.2.2, and every release
 * modelled: NULL arguments hipErrorInvalidValue, more descriptors than
 * devices hipErrorInvalidDevice, then each descriptor in turn, applied
 * before the next is looked at: not a device hipErrorInvalidValue, a
 * device it has not or no access hipErrorInvalidDevice, a flag past
 * read-write hipErrorInvalidValue; the pool's own device is left as it is.
 * ROCm/rocm-systems' newest, after 7.2 (HIP_VERSION 7.3 here): every
 * descriptor is checked before any is applied, a peer may be given no
 * access, and the pool's own device refuses no access
 * (hipErrorInvalidDevice) and read-only access (hipErrorNotSupported).
 */
static int setaccess_checked(void)
{
	return version() >= 70300000;
}

static hipError_t access_desc(int i, const hipMemAccessDesc *d, int n)
{
	int own = d->location.id == pools[i].dev;

	if (d->location.type != hipMemLocationTypeDevice)
		return hipErrorInvalidValue;
	if ((unsigned int)d->location.id >= (unsigned int)n)
		return hipErrorInvalidDevice;
	if (!setaccess_checked() && d->flags == hipMemAccessFlagsProtNone)
		return hipErrorInvalidDevice;
	if (d->flags > hipMemAccessFlagsProtReadWrite)
		return hipErrorInvalidValue;
	if (setaccess_checked() && own && d->flags == hipMemAccessFlagsProtNone)
		return hipErrorInvalidDevice;
	if (setaccess_checked() && own && d->flags == hipMemAccessFlagsProtRead)
		return hipErrorNotSupported;
	return hipSuccess;
}

API hipError_t hipMemPoolSetAccess(hipMemPool_t pool,
				   const hipMemAccessDesc *d, size_t count)
{
	hipError_t r = hipSuccess;
	size_t k;
	int i, n = count_devices();

	if (!pool || !d)
		RET(hipErrorInvalidValue);
	if (count > (size_t)n)
		RET(hipErrorInvalidDevice);
	pthread_mutex_lock(&mu);
	i = pool_or_abort(pool, "hipMemPoolSetAccess");
	for (k = 0; setaccess_checked() && k < count && !r; k++)
		r = access_desc(i, &d[k], n);
	for (k = 0; k < count && !r; k++) {
		r = access_desc(i, &d[k], n);
		if (!r && d[k].location.id != pools[i].dev)
			pools[i].access[d[k].location.id] = d[k].flags;
	}
	pthread_mutex_unlock(&mu);
	RET(r);
}

/* hipMemPoolGetAccess (hip_mempool.cpp, rocm-6.2.2 to the newest): NULL
 * arguments, a location not one of its devices: hipErrorInvalidValue;
 * read-write on the pool's own device, else what the device was given. */
API hipError_t hipMemPoolGetAccess(hipMemAccessFlags *flags,
				   hipMemPool_t pool, hipMemLocation *loc)
{
	int i;

	if (!flags || !pool || !loc || loc->type != hipMemLocationTypeDevice ||
	    (unsigned int)loc->id >= (unsigned int)count_devices())
		RET(hipErrorInvalidValue);
	pthread_mutex_lock(&mu);
	i = pool_or_abort(pool, "hipMemPoolGetAccess");
	*flags = loc->id == pools[i].dev ? hipMemAccessFlagsProtReadWrite :
		 pools[i].access[loc->id];
	pthread_mutex_unlock(&mu);
	RET(hipSuccess);
}

/* hipMemPoolExportToShareableHandle (hip_mempool.cpp, rocm-6.2.2 to the
 * newest): the pool's handle types exactly, never none; the stand-in
 * shares no pool of its own. */
API hipError_t hipMemPoolExportToShareableHandle(void *handle,
				hipMemPool_t pool,
				hipMemAllocationHandleType type,
				unsigned int flags)
{
	unsigned int types;

	if (!pool || !handle || flags)
		RET(hipErrorInvalidValue);
	pthread_mutex_lock(&mu);
	types = pools[pool_or_abort(pool, "hipMemPoolExport")].types;
	pthread_mutex_unlock(&mu);
	if ((unsigned int)type != types || type == hipMemHandleTypeNone)
		RET(hipErrorInvalidValue);
	RET(hipErrorNotSupported);
}

API hipError_t hipDeviceGetDefaultMemPool(hipMemPool_t *pool, int dev)
{
	if (!pool)
		RET(hipErrorInvalidValue);
	if (dev < 0 || dev >= count_devices())
		RET(hipErrorInvalidDevice);
	pools[dev].dev = dev;
	*pool = (hipMemPool_t)&pools[dev];
	RET(hipSuccess);
}

API hipError_t hipDeviceGetMemPool(hipMemPool_t *pool, int dev)
{
	if (!pool || dev < 0 || dev >= count_devices())
		RET(hipErrorInvalidValue);
	pools[dev].dev = dev;
	*pool = (hipMemPool_t)&pools[current_pool[dev] ?
				      current_pool[dev] - 1 : dev];
	RET(hipSuccess);
}

/*
 * hipDeviceSetMemPool (hip_mempool.cpp, rocm-5.6.0 to 6.2.2, and the
 * newest clr) reads the handle as its own hip::MemoryPool without checking
 * it: a handle that is not one is undefined behaviour there, a crash
 * here.
 */
API hipError_t hipDeviceSetMemPool(int dev, hipMemPool_t pool)
{
	int i;

	if (!pool || dev >= count_devices())
		RET(hipErrorInvalidValue);
	i = pool_index(pool);
	if (i < 0) {
		fprintf(stderr, "standin: hipDeviceSetMemPool: %p is no pool of "
			"this runtime, which clr would read as its own\n",
			(void *)pool);
		abort();
	}
	if (pools[i].dev != dev)
		RET(hipErrorInvalidDevice);
	current_pool[dev] = i + 1;
	RET(hipSuccess);
}

/*
 * hipMemSetMemPool and hipMemGetMemPool (hip_mempool.cpp, the newest clr;
 * hip_7.2 in hip_hcc.map): the capture is checked first, then the
 * arguments; a pool that is none of the runtime's is refused
 * (IsMemPoolValid compares the handle with its pools, never reads it).
 * The stand-in's pools are pinned device pools.
 */
#define STANDIN_MANAGED ((hipMemAllocationType)2)

static int location_ok(const hipMemLocation *loc, hipMemAllocationType type)
{
	return loc && loc->type == hipMemLocationTypeDevice &&
	       (type == hipMemAllocationTypePinned || type == STANDIN_MANAGED) &&
	       loc->id >= 0 && loc->id < count_devices();
}

API hipError_t hipMemSetMemPool(hipMemLocation *loc,
				hipMemAllocationType type, hipMemPool_t pool)
{
	int i;

	CHECK_CAPTURE("hipMemSetMemPool");
	if (!pool || !location_ok(loc, type))
		RET(hipErrorInvalidValue);
	i = pool_index(pool);
	if (i < 0) {
		pthread_mutex_lock(&mu);
		say("hipMemSetMemPool: %p is no pool of this runtime",
		    (void *)pool);
		pthread_mutex_unlock(&mu);
		RET(hipErrorInvalidValue);
	}
	if (pools[i].dev != loc->id || type != hipMemAllocationTypePinned)
		RET(hipErrorInvalidValue);
	current_pool[loc->id] = i + 1;
	RET(hipSuccess);
}

API hipError_t hipMemGetMemPool(hipMemPool_t *pool, hipMemLocation *loc,
				hipMemAllocationType type)
{
	if (!pool || !location_ok(loc, type) ||
	    type != hipMemAllocationTypePinned)
		RET(hipErrorInvalidValue);
	return hipDeviceGetMemPool(pool, loc->id);
}

/* rocm-6.2.2: no IPC pools of its own (hipErrorNotSupported). */
API hipError_t hipMemPoolImportFromShareableHandle(hipMemPool_t *pool,
				void *handle, hipMemAllocationHandleType type,
				unsigned int flags)
{
	if (!pool || !handle || flags == (unsigned int)-1)
		RET(hipErrorInvalidValue);
	pthread_mutex_lock(&mu);
	say("hipMemPoolImportFromShareableHandle type %d", (int)type);
	pthread_mutex_unlock(&mu);
	RET(hipErrorNotSupported);
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
	case hipErrorContextIsDestroyed: return "hipErrorContextIsDestroyed";
	case hipErrorStreamCaptureUnsupported:
		return "hipErrorStreamCaptureUnsupported";
	case hipErrorStreamCaptureInvalidated:
		return "hipErrorStreamCaptureInvalidated";
	case hipErrorStreamCaptureImplicit:
		return "hipErrorStreamCaptureImplicit";
	case hipErrorCapturedEvent: return "hipErrorCapturedEvent";
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
		RET(hipErrorInvalidValue);
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
	RET(f ? hipSuccess : hipErrorNotFound);
}

#endif
