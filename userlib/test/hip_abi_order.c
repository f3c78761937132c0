// SPDX-License-Identifier: MIT
/*
 * Part of hip_abi_test: <kfdpool_hip.h> first, HIP's header second.  For a
 * HIP build (__HIP_PLATFORM_AMD__) our header includes HIP's itself, so
 * the second include is a no-op and nothing is declared twice.
 */
#include <kfdpool_hip.h>
#ifdef HAVE_HIP_HEADERS
#include <hip/hip_runtime_api.h>
#endif

int kfdpool_abi_order_checks(void);

int kfdpool_abi_order_checks(void)
{
	hipMemPoolPtrExportData d;
	int n = 0;

	/* These resolve to libkfdpool and fail cleanly on bad arguments. */
	n += hipMemPoolExportPointer(NULL, NULL) == hipErrorInvalidValue;
	n += hipMemPoolImportPointer(NULL, NULL, &d) == hipErrorInvalidValue;
	n += hipMemPoolDestroy(NULL) == hipErrorInvalidValue;
	return n;
}
