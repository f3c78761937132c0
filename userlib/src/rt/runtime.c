// SPDX-License-Identifier: MIT
/*
 * Finding the HIP runtime at run time (hip_runtime.h), and telling the
 * user when the process's hip* names resolve to the runtime instead of to
 * this library.
 *
 * libkfdpool-hip never links libamdhip64: it is used with whatever runtime
 * the program has, or none.  Where this library comes before the runtime
 * (linked before it, or LD_PRELOADed), dlsym(RTLD_NEXT) finds the
 * runtime's definitions behind ours.  Where it does not (loaded with
 * dlopen, or after the runtime), a runtime already loaded is found by its
 * soname with RTLD_NOLOAD.  Versioned lookups (dlvsym) ask for the same
 * version the runtime defines, so that a newer runtime with several
 * versions of a name gives the one HIP programs bind to.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rt/runtime.h"

static struct kp_runtime g_rt;
const struct kp_runtime *kp_rt_found;	/* set once, release order */
static pthread_mutex_t g_rt_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long g_rt_adds_seen = ~0ULL;

/* Sonames of the runtime, newest first. */
static const char *const rt_sonames[] = {
	"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5",
	"libamdhip64.so",
};

void kp_rt_fork(int prepare)
{
	if (prepare)
		pthread_mutex_lock(&g_rt_mu);
	else
		pthread_mutex_unlock(&g_rt_mu);
}

void kp_say_once(int *once, const char *fmt, ...)
{
	va_list ap;

	if (__atomic_exchange_n(once, 1, __ATOMIC_RELAXED))
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* The load address of the object holding @p (0 if none): this library's
 * own definitions must never be taken for the runtime's. */
static uintptr_t rt_object_of(const void *p)
{
	Dl_info info;

	if (!p || !dladdr(p, &info))
		return 0;
	return (uintptr_t)info.dli_fbase;
}

static uintptr_t rt_self(void)
{
	return rt_object_of((const void *)rt_self);
}

static void *lookup(void *handle, const char *name, const char *version)
{
	void *p = dlvsym(handle, name, version);

	if (!p)
		p = dlsym(handle, name);
	if (p && rt_object_of(p) == rt_self())
		p = NULL;
	return p;
}

/* Fill @rt from @handle; 0, or -1 when @handle has no HIP runtime. */
static int resolve(void *handle, struct kp_runtime *rt)
{
	Dl_info info;

	memset(rt, 0, sizeof(*rt));
#define KP_RT_LOOKUP(name, version) \
	rt->name = (__typeof__(rt->name))lookup(handle, #name, version);
	KP_RT_FUNCS(KP_RT_LOOKUP)
#undef KP_RT_LOOKUP
	/* Every HIP runtime has it; a stray definition of one mempool name
	 * elsewhere is not a runtime. */
	if (!rt->hipGetErrorName)
		return -1;
	rt->path = dladdr((void *)rt->hipGetErrorName, &info) &&
		   info.dli_fname ? info.dli_fname : "the HIP runtime";
	return 0;
}

static int count_adds(struct dl_phdr_info *info, size_t size, void *data)
{
	*(unsigned long long *)data = info->dlpi_adds;
	return 1;	/* the counter is the same in every entry */
}

static int find_runtime(struct kp_runtime *rt)
{
	size_t i;
	void *h;

	if (!resolve(RTLD_NEXT, rt))
		return 0;
	for (i = 0; i < sizeof(rt_sonames) / sizeof(rt_sonames[0]); i++) {
		h = dlopen(rt_sonames[i], RTLD_LAZY | RTLD_NOLOAD);
		if (!h)
			continue;
		/* Kept open: the runtime stays for the life of the process. */
		if (!resolve(h, rt))
			return 0;
		dlclose(h);
	}
	return -1;
}

const struct kp_runtime *kp_rt(void)
{
	const struct kp_runtime *rt;
	unsigned long long adds = 0;

	rt = __atomic_load_n(&kp_rt_found, __ATOMIC_ACQUIRE);
	if (rt)
		return rt;
	pthread_mutex_lock(&g_rt_mu);
	rt = kp_rt_found;
	if (!rt) {
		/* Nothing new loaded since the last search: still none. */
		dl_iterate_phdr(count_adds, &adds);
		if (adds != g_rt_adds_seen) {
			if (!find_runtime(&g_rt)) {
				rt = &g_rt;
				__atomic_store_n(&kp_rt_found, rt,
						 __ATOMIC_RELEASE);
			} else {
				g_rt_adds_seen = adds;
			}
		}
	}
	pthread_mutex_unlock(&g_rt_mu);
	return rt;
}

static int g_rt_devices;	/* 0 not asked, 1 some, 2 none */

const struct kp_runtime *kp_rt_order_slow(void)
{
	const struct kp_runtime *rt = kp_rt_cached();
	int st = __atomic_load_n(&g_rt_devices, __ATOMIC_ACQUIRE), n = 0;

	if (!rt)
		return NULL;
	if (!st) {
		st = rt->hipGetDeviceCount && !rt->hipGetDeviceCount(&n) &&
		     n > 0 ? 1 : 2;
		__atomic_store_n(&g_rt_devices, st, __ATOMIC_RELEASE);
	}
	return st == 1 ? rt : NULL;
}

int kp_rt_version(const struct kp_runtime *rt)
{
	static int version = -1;
	int v = __atomic_load_n(&version, __ATOMIC_RELAXED);

	if (v < 0) {
		v = 0;
		if (!rt || !rt->hipRuntimeGetVersion ||
		    rt->hipRuntimeGetVersion(&v))
			v = 0;
		__atomic_store_n(&version, v, __ATOMIC_RELAXED);
	}
	return v;
}

hipError_t kp_rt_dev_enter(const struct kp_runtime *rt, int dev, int *prev)
{
	hipError_t e;

	*prev = -1;
	if (!rt->hipGetDevice || !rt->hipSetDevice)
		return hipErrorNotSupported;
	e = rt->hipGetDevice(prev);
	if (e) {
		*prev = -1;
		return e;
	}
	if (*prev != dev) {
		e = rt->hipSetDevice(dev);
		if (e)
			*prev = -1;
	}
	return e;
}

void kp_rt_dev_leave(const struct kp_runtime *rt, int dev, int prev)
{
	if (prev >= 0 && prev != dev)
		rt->hipSetDevice(prev);
}

int kp_rt_relax(const struct kp_runtime *rt)
{
	hipStreamCaptureMode m = hipStreamCaptureModeRelaxed;

	if (!rt->hipThreadExchangeStreamCaptureMode ||
	    rt->hipThreadExchangeStreamCaptureMode(&m))
		return -1;
	return (int)m;
}

void kp_rt_unrelax(const struct kp_runtime *rt, int mode)
{
	hipStreamCaptureMode m = (hipStreamCaptureMode)mode;

	if (mode >= 0)
		rt->hipThreadExchangeStreamCaptureMode(&m);
}

/* ---- ROCr ---- */

#define HSA_SO "libhsa-runtime64.so.1"

static struct kp_hsa g_hsa;
static const struct kp_hsa g_hsa_none;
static const struct kp_hsa *g_hsa_found;	/* set once, release order */

const struct kp_hsa *kp_hsa(void)
{
	const struct kp_hsa *h = __atomic_load_n(&g_hsa_found,
						 __ATOMIC_ACQUIRE);
	void *so;

	if (h)
		return h;
	pthread_mutex_lock(&g_rt_mu);
	if (!g_hsa_found) {
		so = dlopen(HSA_SO, RTLD_LAZY | RTLD_NOLOAD);
		if (so) {
			/* Kept open: ROCr stays for the life of the process. */
			g_hsa.export_dmabuf = (kp_hsa_export_dmabuf_fn)
				dlsym(so, "hsa_amd_portable_export_dmabuf");
			g_hsa.close_dmabuf = (kp_hsa_close_dmabuf_fn)
				dlsym(so, "hsa_amd_portable_close_dmabuf");
			g_hsa.system_get_info = (kp_hsa_system_get_info_fn)
				dlsym(so, "hsa_system_get_info");
			g_hsa.pointer_info = (kp_hsa_pointer_info_fn)
				dlsym(so, "hsa_amd_pointer_info");
			__atomic_store_n(&g_hsa_found, &g_hsa, __ATOMIC_RELEASE);
		}
	}
	h = g_hsa_found;
	pthread_mutex_unlock(&g_rt_mu);
	/* Not loaded (yet): nothing, asked again next time. */
	return h ? h : &g_hsa_none;
}

/* ---- the last error ---- */

__thread struct kp_last kp_last __attribute__((tls_model("initial-exec")));
int kp_rt_errstate7 = -1;

/* HIP_VERSION 7.0.0: the last error HIP_UPDATE_ERROR_STATE keeps. */
#define HIP_ERRSTATE_VERSION 70000000

static int errstate7(const struct kp_runtime *rt)
{
	int v = __atomic_load_n(&kp_rt_errstate7, __ATOMIC_RELAXED);

	if (v < 0) {
		v = kp_rt_version(rt) >= HIP_ERRSTATE_VERSION;
		__atomic_store_n(&kp_rt_errstate7, v, __ATOMIC_RELAXED);
	}
	return v;
}

hipError_t kp_rt_ret_slow(hipError_t e)
{
	const struct kp_runtime *rt;
	int v;

	rt = kp_rt_order();
	if (!rt || !rt->hipGetLastError || !rt->hipRuntimeGetVersion) {
		kp_last.err = e;
		kp_last.pending = 0;
		return e;
	}
	if (!errstate7(rt)) {
		kp_last.err = e;
		kp_last.pending = 0;
		if (e == hipSuccess) {
			rt->hipGetLastError();
		} else {
			/* hipErrorInvalidValue, as hip_context.cpp answers
			 * NULL. */
			rt->hipRuntimeGetVersion(NULL);
			kp_last.pending = e != hipErrorInvalidValue;
		}
		return e;
	}
	/* HIP 7.0: the last command's error is the call's; the last error
	 * only if it is one (kfdpool's calls never answer
	 * hipErrorNotReady).  A success of kfdpool's leaves the last error
	 * as it was, kept here or the runtime's. */
	kp_last.cmd = e;
	kp_last.cmd_pending = 0;
	if (e == hipSuccess) {
		rt->hipRuntimeGetVersion(&v);
		return e;
	}
	rt->hipRuntimeGetVersion(NULL);
	kp_last.err = e;
	kp_last.pending = kp_last.cmd_pending = e != hipErrorInvalidValue;
	return e;
}

hipError_t kp_rt_last_error(int reset, int ext)
{
	const struct kp_runtime *rt = kp_rt();
	__typeof__(hipGetLastError) *fn = NULL;
	int v7 = rt && kp_rt_order() && rt->hipRuntimeGetVersion &&
		 errstate7(rt);
	hipError_t r;

	if (rt)
		fn = !reset ? rt->hipPeekAtLastError :
		     ext && rt->hipExtGetLastError ? rt->hipExtGetLastError :
		     rt->hipGetLastError;
	if (!fn) {
		r = kp_last.err;
		if (reset)
			kp_last.err = hipSuccess;
		return r;
	}
	r = fn();
	if (v7 && reset && ext) {
		/* The last command's error, which the call resets. */
		if (kp_last.cmd_pending && r == hipErrorInvalidValue)
			r = kp_last.cmd;
		kp_last.cmd_pending = 0;
		return r;
	}
	if (kp_last.pending && r == hipErrorInvalidValue)
		r = kp_last.err;
	else
		kp_last.pending = 0;	/* another call came since */
	if (reset)
		kp_last.pending = 0;
	if (v7 && !reset) {
		/* hipPeekAtLastError's HIP_RETURN made its answer the last
		 * command's error too (hipGetLastError returns without it). */
		kp_last.cmd = r;
		kp_last.cmd_pending = kp_last.pending;
	}
	return r;
}

/*
 * Linked after libamdhip64, or reached through a library loaded after it,
 * this library's hip* names lose to the runtime's and kfdpool is never
 * asked: say so once at load, with the fix, instead of being bypassed in
 * silence.  Not for a copy linked into the program itself (libkfdpool-hip.a):
 * the program's own calls bind to it whatever comes later.
 */
static int g_order_said;

__attribute__((constructor)) static void check_order(void)
{
	struct link_map *lm = NULL;
	Dl_info me, info;
	void *p = NULL;

	if (!dladdr1((void *)check_order, &me, (void **)&lm,
		     RTLD_DL_LINKMAP) || !lm || !lm->l_prev)
		return;		/* the main program */
#define KP_RT_CHECK(name, version) \
	if (!p) { \
		p = dlvsym(RTLD_DEFAULT, #name, version); \
		if (!p) \
			p = dlsym(RTLD_DEFAULT, #name); \
		if (p && rt_object_of(p) == (uintptr_t)me.dli_fbase) \
			p = NULL; \
		if (p) \
			kp_say_once(&g_order_said, \
				"kfdpool: %s resolves to %s, loaded before %s: " \
				"kfdpool's pools and pointers are bypassed; link " \
				"-lkfdpool-hip before -lamdhip64 (pkg-config " \
				"--libs kfdpool-hip first) or run with " \
				"LD_PRELOAD=libkfdpool-hip.so.1", #name, \
				dladdr(p, &info) && info.dli_fname ? \
				info.dli_fname : "another object", \
				me.dli_fname); \
	}
	KP_HIP_EXPORTS(KP_RT_CHECK)
#undef KP_RT_CHECK
}
