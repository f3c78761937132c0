// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcost_bench: the kernel's cost per pointer, one kind of operation at a
 * time (kcost.h): export, revoke and validate-only import, by one ioctl
 * per pointer, by the batch ioctls (512 a call) and by io_uring (an SQE
 * per pointer, 64 a submission), next to a bare system call and an ioctl
 * the module refuses, which say what entering the kernel costs by itself.
 */
#include "kcost.h"

int main(void)
{
	unsigned int rounds = env_int("BENCH_ROUNDS", 7);
	static struct kcost k;
	int op;

	kc_setup(&k);
	printf("# kcost_bench: %u pointers of %u bytes in one %u-byte entry a "
	       "round, median of %u rounds\n", KC_N, KC_PTR, KC_CHUNK, rounds);
	for (op = 0; op < KC_NOPS; op++)
		figure("per-pointer kernel cost", kc_names[op], "per pointer",
		       kc_cost(&k, op, rounds), "ns");
	kc_teardown(&k);
	return 0;
}
