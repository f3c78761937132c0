// SPDX-License-Identifier: MIT
/* hipError_t names and strings, and how an errno becomes a hipError_t. */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "hip_internal.h"

static const struct {
	hipError_t err;
	const char *name;
	const char *str;
} errors[] = {
	{ hipSuccess, "hipSuccess", "no error" },
	{ hipErrorInvalidValue, "hipErrorInvalidValue", "invalid argument" },
	{ hipErrorOutOfMemory, "hipErrorOutOfMemory", "out of memory" },
	{ hipErrorNotInitialized, "hipErrorNotInitialized",
	  "initialization error (is the kfdpool module loaded?)" },
	{ hipErrorDeinitialized, "hipErrorDeinitialized", "driver shutting down" },
	{ hipErrorInvalidConfiguration, "hipErrorInvalidConfiguration",
	  "invalid configuration argument" },
	{ hipErrorInvalidDevicePointer, "hipErrorInvalidDevicePointer",
	  "invalid device pointer" },
	{ hipErrorInsufficientDriver, "hipErrorInsufficientDriver",
	  "driver version is insufficient" },
	{ hipErrorNoDevice, "hipErrorNoDevice", "no device available" },
	{ hipErrorInvalidDevice, "hipErrorInvalidDevice", "invalid device ordinal" },
	{ hipErrorInvalidContext, "hipErrorInvalidContext", "invalid device context" },
	{ hipErrorMapFailed, "hipErrorMapFailed", "mapping of buffer object failed" },
	{ hipErrorUnmapFailed, "hipErrorUnmapFailed", "unmapping of buffer object failed" },
	{ hipErrorAlreadyMapped, "hipErrorAlreadyMapped", "resource already mapped" },
	{ hipErrorNotMapped, "hipErrorNotMapped", "resource not mapped" },
	{ hipErrorPeerAccessUnsupported, "hipErrorPeerAccessUnsupported",
	  "peer access is not supported between these two devices" },
	{ hipErrorFileNotFound, "hipErrorFileNotFound", "file not found" },
	{ hipErrorOperatingSystem, "hipErrorOperatingSystem", "OS call failed or operation not supported on this OS" },
	{ hipErrorInvalidHandle, "hipErrorInvalidHandle", "invalid resource handle" },
	{ hipErrorIllegalState, "hipErrorIllegalState", "the operation cannot be performed in the present state" },
	{ hipErrorNotFound, "hipErrorNotFound", "named symbol not found" },
	{ hipErrorNotReady, "hipErrorNotReady", "device not ready" },
	{ hipErrorIllegalAddress, "hipErrorIllegalAddress", "an illegal memory access was encountered" },
	{ hipErrorNotSupported, "hipErrorNotSupported", "operation not supported" },
	{ hipErrorUnknown, "hipErrorUnknown", "unknown error" },
	{ hipErrorRuntimeMemory, "hipErrorRuntimeMemory", "runtime memory call returned error" },
	{ hipErrorRuntimeOther, "hipErrorRuntimeOther", "runtime call other than memory returned error" },
};

static int find(hipError_t e)
{
	unsigned int i;

	for (i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].err == e)
			return (int)i;
	return -1;
}

/* With a HIP runtime in the process, every code is the runtime's to name:
 * it knows them all.  The table above serves processes without one. */
KFDPOOL_EXPORT const char *hipGetErrorName(hipError_t hip_error)
{
	const struct kp_runtime *rt = kp_rt();
	int i;

	if (rt && rt->hipGetErrorName)
		return rt->hipGetErrorName(hip_error);
	i = find(hip_error);
	return i < 0 ? "hipErrorUnknown" : errors[i].name;
}

KFDPOOL_EXPORT const char *hipGetErrorString(hipError_t hip_error)
{
	const struct kp_runtime *rt = kp_rt();
	int i;

	if (rt && rt->hipGetErrorString)
		return rt->hipGetErrorString(hip_error);
	i = find(hip_error);
	return i < 0 ? "unknown error" : errors[i].str;
}

/*
 * The thread's last error: the runtime's, except that it answers kfdpool's
 * own calls as clr would answer the same calls (rt/runtime.h); without a
 * runtime, kfdpool's calls' alone.
 */
KFDPOOL_EXPORT hipError_t hipGetLastError(void)
{
	return kp_rt_last_error(1, 0);
}

KFDPOOL_EXPORT hipError_t hipExtGetLastError(void)
{
	return kp_rt_last_error(1, 1);
}

KFDPOOL_EXPORT hipError_t hipPeekAtLastError(void)
{
	return kp_rt_last_error(0, 0);
}

/*
 * The mapping docs/library.md documents.  Argument errors never get here:
 * they are hipErrorInvalidValue before any system call.
 */
KFDPOOL_EXPORT hipError_t kfdpoolErrnoToHip(int err)
{
	if (err > 0)
		err = -err;
	switch (err) {
	case 0:
		return hipSuccess;
	case -EINVAL:		/* bad field, corrupted record (magic) */
	case -EXDEV:		/* record of another pool */
	case -EBADF:		/* not an fd */
	case -ENOTTY:		/* fd is not a pool */
	case -EFAULT:
	case -ENAMETOOLONG:
		return hipErrorInvalidValue;
	case -ENOMEM:
	case -ENOSPC:		/* pool limit, entry or record cap */
	case -EDQUOT:		/* a per-user bound (hip_quota.c) */
	case -EMFILE:		/* out of fds */
	case -ENFILE:
	case -E2BIG:		/* larger than the backend allows (udmabuf) */
		return hipErrorOutOfMemory;
	case -ENOENT:		/* record revoked, never existed, altered */
	case -ESTALE:		/* record's slot reused */
	case -ENXIO:		/* validate without holding an import */
		return hipErrorInvalidHandle;
	case -EPERM:		/* owner-only operation on an import fd */
	case -EACCES:		/* pool handle refused by its policy */
		return hipErrorInvalidValue;
	case -EOPNOTSUPP:	/* pool lacks the handle type / feature */
		return hipErrorNotSupported;
	case -ENODEV:		/* no GPU (device pool), no backend */
		return hipErrorNoDevice;
	case -EEXIST:
		return hipErrorAlreadyMapped;
	case -EBUSY:		/* adopting a pool that has an owner */
		return hipErrorIllegalState;
	default:
		return hipErrorUnknown;
	}
}

/*
 * Why /dev/kfdpool could not be opened, in one line on stderr, once per
 * process: a user who meets hipErrorNotInitialized first needs to know
 * whether the module is missing or the node is closed to them, and to
 * which group.
 */
static int g_ctl_said;

void kp_say_ctl_error(int err)
{
	char buf[1024], hint[256] = "";
	struct group gr, *g = NULL;
	struct stat st;

	switch (-err) {
	case ENOENT:
	case ENODEV:
	case ENXIO:
		snprintf(hint, sizeof(hint),
			 " (is the module loaded? modprobe kfdpool)");
		break;
	case EACCES:
	case EPERM:
		if (stat(KFDPOOL_DEVICE_PATH, &st))
			break;
		if ((st.st_mode & (S_IRGRP | S_IWGRP)) == (S_IRGRP | S_IWGRP) &&
		    st.st_gid && !getgrgid_r(st.st_gid, &gr, buf, sizeof(buf), &g) && g)
			snprintf(hint, sizeof(hint),
				 " (it is open to group %s: usermod -aG %s USER, then log in again)",
				 g->gr_name, g->gr_name);
		else
			snprintf(hint, sizeof(hint),
				 " (root only: the udev rule 60-kfdpool.rules opens it to group render)");
		break;
	}
	kp_say_once(&g_ctl_said, "kfdpool: %s: %s%s", KFDPOOL_DEVICE_PATH,
		    strerror(-err), hint);
}
