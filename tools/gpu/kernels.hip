// SPDX-License-Identifier: GPL-2.0-only
/*
 * The GPU kernels tools/gpu/gpu_pool.c launches (hipModuleLaunchKernel):
 * built by tools/gpu-check with the node's hipcc into a code object
 * (hipcc --genco), so that gpu_pool itself stays a C program built as
 * users build theirs.
 */
#include <hip/hip_runtime.h>

/* Spin for @cycles of the shader clock, then write @v to *@flag (may be
 * NULL): work that keeps a stream busy for a known while. */
extern "C" __global__ void kp_spin(unsigned long long cycles,
				   unsigned int *flag, unsigned int v)
{
	long long t0 = clock64();

	while ((unsigned long long)(clock64() - t0) < cycles)
		;
	if (flag && !threadIdx.x && !blockIdx.x)
		*flag = v;
}

/* p[i] = v for i < n. */
extern "C" __global__ void kp_fill(unsigned int *p, unsigned int v,
				   unsigned long long n)
{
	unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x +
			       threadIdx.x;

	for (; i < n; i += (unsigned long long)gridDim.x * blockDim.x)
		p[i] = v;
}

/* *bad += the number of i < n with p[i] != v. */
extern "C" __global__ void kp_count(const unsigned int *p, unsigned int v,
				    unsigned long long n, unsigned int *bad)
{
	unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x +
			       threadIdx.x;

	for (; i < n; i += (unsigned long long)gridDim.x * blockDim.x)
		if (p[i] != v)
			atomicAdd(bad, 1u);
}
