// SPDX-License-Identifier: GPL-2.0-only
/*
 * libkfdpool-hip beside HIP's runtime, linked -lkfdpool-hip -lamdhip64
 * (see lib_hiprt.h).
 */
#define HIPRT_TESTS
#include "lib_hiprt.h"

const struct hiprt_api *hiprt_api(void)
{
	static const struct hiprt_api api = { HIPRT_FUNCS(HIPRT_API_INIT) };

	return &api;
}
