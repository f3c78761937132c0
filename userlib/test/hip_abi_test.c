// SPDX-License-Identifier: MIT
/*
 * libkfdpool's HIP types against HIP's own headers (Debian's
 * libamdhip64-dev: HIP 5.2 installed, and where tools/hip-headers fetched
 * them, Debian 13's 5.7 and unstable's 6.4), checked at compile time.
 *
 * Our declarations (kfdpool_hip_types.h) are included with every hip*
 * identifier renamed to kfdx_hip* (hip_rename.h, generated from that
 * header), then HIP's <hip/hip_runtime_api.h>, then <kfdpool_hip.h> on top
 * of it: that it compiles proves our function declarations agree with
 * HIP's prototypes.  Every enum value, struct size, alignment and field
 * offset is compared with _Static_assert; the same comparisons run again
 * at run time so that the KTAP output counts them.  hip_abi_order.c
 * includes the headers the other way round.
 */
#include <stddef.h>
#include <stdint.h>

#include "hip_rename.h"
#include "kfdpool_hip_types.h"
#include "hip_unrename.h"

#ifdef HAVE_HIP_HEADERS
#include <hip/hip_runtime_api.h>
#include <kfdpool_hip.h>
#endif

#include "kselftest_harness.h"

/* Layout facts of current HIP, true with or without HIP's headers. */
_Static_assert(sizeof(kfdx_hipMemPoolPtrExportData) == 64, "export data");
_Static_assert(offsetof(kfdx_hipMemPoolProps, maxSize) == 24, "maxSize");
_Static_assert(sizeof(kfdx_hipMemPoolProps) == 88, "props");
_Static_assert(kfdx_hipMemHandleTypeFabric == 8, "fabric");
_Static_assert(kfdx_hipMemLocationTypeHost == 2, "host");
_Static_assert(kfdx_hipMemPoolAttrUsedMemHigh == 8, "attr");
_Static_assert(sizeof(struct kfdpool_record) == 64, "record is export data");

#ifdef HAVE_HIP_HEADERS
#include "hip_consts.h"		/* X(name) for every enum value we declare */

#define SAME_CONST(c) \
	_Static_assert((long long)(c) == (long long)(kfdx_##c), #c);
HIP_CONSTS(SAME_CONST)

#define TYPES(X) X(hipError_t) X(hipStream_t) X(hipMemPool_t) \
	X(hipMemPoolAttr) X(hipMemLocationType) X(hipMemLocation) \
	X(hipMemAccessFlags) X(hipMemAccessDesc) X(hipMemAllocationType) \
	X(hipMemAllocationHandleType) X(hipMemPoolProps) \
	X(hipMemPoolPtrExportData)
#define SAME_TYPE(t) \
	_Static_assert(sizeof(t) == sizeof(kfdx_##t) && \
		       _Alignof(t) == _Alignof(kfdx_##t), #t);
TYPES(SAME_TYPE)

#define FIELDS(X) X(hipMemLocation, type) X(hipMemLocation, id) \
	X(hipMemAccessDesc, location) X(hipMemAccessDesc, flags) \
	X(hipMemPoolProps, allocType) X(hipMemPoolProps, handleTypes) \
	X(hipMemPoolProps, location) \
	X(hipMemPoolProps, win32SecurityAttributes) \
	X(hipMemPoolPtrExportData, reserved)
#define SAME_FIELD(t, f) \
	_Static_assert(offsetof(t, f) == offsetof(kfdx_##t, f) && \
		       sizeof(((t *)0)->f) == sizeof(((kfdx_##t *)0)->f), \
		       #t "." #f);
FIELDS(SAME_FIELD)

/* HIP 5 has reserved[64] where HIP 6 has maxSize + reserved[56]. */
#if HIP_VERSION_MAJOR >= 6
_Static_assert(offsetof(hipMemPoolProps, maxSize) ==
	       offsetof(kfdx_hipMemPoolProps, maxSize) &&
	       offsetof(hipMemPoolProps, reserved) ==
	       offsetof(kfdx_hipMemPoolProps, reserved), "maxSize position");
#else
_Static_assert(offsetof(hipMemPoolProps, reserved) ==
	       offsetof(kfdx_hipMemPoolProps, maxSize), "maxSize position");
#endif

/* Pointer types must be the same struct tags, not just the same size. */
_Static_assert(__builtin_types_compatible_p(hipStream_t, kfdx_hipStream_t),
	       "hipStream_t");
_Static_assert(__builtin_types_compatible_p(hipMemPool_t, kfdx_hipMemPool_t),
	       "hipMemPool_t");
#endif

extern int kfdpool_abi_order_checks(void);

TEST(enum_values_match_hip)
{
#ifdef HAVE_HIP_HEADERS
	int n = 0;

#define RT_CONST(c) EXPECT_EQ((long long)(c), (long long)(kfdx_##c)) \
		TH_LOG(#c); n++;
	HIP_CONSTS(RT_CONST)
	ksft_print_msg("%d enum values equal to HIP's\n", n);
#else
	SKIP(return, "HIP headers (libamdhip64-dev) not installed");
#endif
}

TEST(type_layouts_match_hip)
{
#ifdef HAVE_HIP_HEADERS
	int n = 0;

#define RT_TYPE(t) EXPECT_EQ(sizeof(t), sizeof(kfdx_##t)) TH_LOG(#t); \
		EXPECT_EQ(_Alignof(t), _Alignof(kfdx_##t)) TH_LOG(#t); n++;
#define RT_FIELD(t, f) EXPECT_EQ(offsetof(t, f), offsetof(kfdx_##t, f)) \
		TH_LOG(#t "." #f); n++;
	TYPES(RT_TYPE)
	FIELDS(RT_FIELD)
	ksft_print_msg("%d types and fields laid out as HIP's (HIP %d.%d)\n",
		       n, HIP_VERSION_MAJOR, HIP_VERSION_MINOR);
#else
	SKIP(return, "HIP headers (libamdhip64-dev) not installed");
#endif
}

TEST(prototypes_agree_both_include_orders)
{
#ifdef HAVE_HIP_HEADERS
	/* Compiling this file and hip_abi_order.c is the check; the calls
	 * make sure both resolve to libkfdpool's symbols. */
	EXPECT_EQ(3, kfdpool_abi_order_checks());
	EXPECT_STREQ("hipErrorInvalidValue",
		     hipGetErrorName(hipErrorInvalidValue));
#else
	SKIP(return, "HIP headers (libamdhip64-dev) not installed");
#endif
}

TEST_HARNESS_MAIN
