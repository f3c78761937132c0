// SPDX-License-Identifier: GPL-2.0-only
/*
 * libkfdpool-hip beside HIP's runtime, LD_PRELOADed into a program linked
 * against libamdhip64 alone (see lib_hiprt.h).  The program sets
 * LD_PRELOAD and runs itself again when it was started without it, so
 * that it runs as a kselftest; nothing else in it knows kfdpool.
 */
#define HIPRT_TESTS
#include "lib_hiprt.h"

const struct hiprt_api *hiprt_api(void)
{
	static const struct hiprt_api api = { HIPRT_FUNCS(HIPRT_API_INIT) };

	return &api;
}

/* glibc passes the program's arguments to constructors. */
__attribute__((constructor)) static void preload_kfdpool(int argc, char **argv)
{
	const char *pre = getenv("LD_PRELOAD");

	if (pre && strstr(pre, "libkfdpool-hip"))
		return;
	setenv("LD_PRELOAD", KFDPOOL_HIP_SO, 1);
	execv("/proc/self/exe", argv);
	perror("exec with LD_PRELOAD");
	_exit(1);
}
