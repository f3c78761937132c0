// SPDX-License-Identifier: GPL-2.0-only
/*
 * libkfdpool-hip beside HIP's runtime, reached only through another shared
 * library (hiprt/libhiprt_kfd.so, lib_hiprt_dso.c linked -lkfdpool-hip
 * -lamdhip64); this program links that library alone (see lib_hiprt.h).
 */
#define HIPRT_TESTS
#include "lib_hiprt.h"

const struct hiprt_api *hiprt_dso_api(void);

const struct hiprt_api *hiprt_api(void)
{
	return hiprt_dso_api();
}
