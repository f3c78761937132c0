// SPDX-License-Identifier: GPL-2.0-only
/*
 * A HIP library for lib_hiprt_dso_test and lib_hiprt_asneeded_test: the
 * hip* functions as its own calls reach them.  Built twice: linked
 * -lkfdpool-hip -lamdhip64 (hiprt/libhiprt_kfd.so, linked by
 * lib_hiprt_dso_test) and -lamdhip64 alone (hiprt/libhiprt_plain.so, a
 * plugin that knows nothing of kfdpool, loaded by lib_hiprt_asneeded_test).
 */
#include "lib_hiprt.h"

const struct hiprt_api *hiprt_dso_api(void);

const struct hiprt_api *hiprt_dso_api(void)
{
	static const struct hiprt_api api = { HIPRT_FUNCS(HIPRT_API_INIT) };

	return &api;
}
