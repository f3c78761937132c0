// SPDX-License-Identifier: GPL-2.0-only
/*
 * hiprt/after, run by lib_hiprt_asneeded_test: a HIP program linked with
 * -Wl,--as-needed -lamdhip64 $(pkg-config --libs kfdpool-hip), the
 * runtime first.  It prints whether libkfdpool-hip was loaded and where
 * hipFree resolves; libkfdpool-hip itself prints its warning.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__
#endif
#include <hip/hip_runtime_api.h>

int main(void)
{
	void *kfd = dlopen("libkfdpool-hip.so.1", RTLD_NOW | RTLD_NOLOAD);
	const char *from;
	Dl_info info;
	int n;

	from = dladdr((void *)hipFree, &info) ? info.dli_fname : "?";
	printf("libkfdpool-hip loaded: %s\n", kfd ? "yes" : "no");
	printf("hipFree from: %s\n", strrchr(from, '/') ? strrchr(from, '/') + 1 : from);
	printf("hipGetDeviceCount: %d\n", hipGetDeviceCount(&n));
	return 0;
}
