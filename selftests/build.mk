# SPDX-License-Identifier: GPL-2.0-only
# Included from the top-level Makefile: build the kselftests with the
# harness and lib.mk from Debian's linux-source (make ksft).

SELFTESTS_OUT := $(BUILD)/selftests
KHDR_DIR := $(BUILD)/ksft/tools/testing/selftests

selftests: ksft lib
	@mkdir -p $(SELFTESTS_OUT)
	$(MAKE) -C $(SRC)/selftests KSFT_DIR=$(KHDR_DIR) \
		OUTPUT=$(SELFTESTS_OUT) LIBKFDPOOL=$(LIBDIR_OUT) \
		KFD_IOCTL_H=$(KFD_IOCTL_H)

# The kselftests built and run from a kernel tree (linux-source-6.12's
# kselftest framework), as kernel developers run them: TAP lines.
.PHONY: ksft-tree-check
ksft-tree-check: lib
	$(SRC)/tools/ksft-tree-check $(SRC) $(BUILD)

# The HIP programs of the suite built with another Debian release's HIP
# headers and linked with its runtime, in a root of that release
# (tools/roots): make hiprt-progs-trixie (HIP 5.7), hiprt-progs-sid (HIP
# 6.4) put them in $(BUILD)/hiprt/SUITE: the coexistence kselftests and
# the examples (share_pool, README's first program) and make gpu-check's
# tools/gpu/gpu_pool (built, not run), with the runtime's name and version
# in its file "runtime".  They run in that root only
# (tools/vm/suite --hip SUITE); the libraries are this machine's.  (make
# unit checks kfdpool's types against each root's HIP headers.)
HIPRT_TESTS := $(patsubst $(SRC)/selftests/%.c,%,$(wildcard $(SRC)/selftests/lib_hiprt_*_test.c))
# share_pool's HIP builds, and README's first program (README's compile
# line, the root's runtime linked).
HIPRT_EXAMPLES := share_pool-hiprt share_pool-preload share_pool-hiphdr exporter importer
.PHONY: hiprt-progs
hiprt-progs-%: lib ksft
	@mkdir -p $(BUILD)/hiprt/$*
	$(SRC)/tools/roots --run $* --bind $(BUILD) -- \
		$(MAKE) -C $(SRC) hiprt-progs HIPRT_OUT=$(BUILD)/hiprt/$*
	$(SRC)/tools/roots --hip $* >$(BUILD)/hiprt/$*/runtime

# (In the root: its compiler, its /usr/include/hip, its libamdhip64.)
hiprt-progs:
	@test -n "$(HIPRT_OUT)" || { echo "hiprt-progs: HIPRT_OUT not set" >&2; exit 1; }
	@test -f /usr/include/hip/hip_runtime_api.h || \
		{ echo "hiprt-progs: no HIP headers here: run it in a root (make hiprt-progs-SUITE)" >&2; exit 1; }
	$(MAKE) -C $(SRC)/selftests KSFT_DIR=$(KHDR_DIR) OUTPUT=$(HIPRT_OUT)/selftests \
		LIBKFDPOOL=$(LIBDIR_OUT) $(addprefix $(HIPRT_OUT)/selftests/,$(HIPRT_TESTS))
	$(MAKE) -f $(SRC)/Makefile EXAMPLES_OUT=$(HIPRT_OUT)/examples \
		$(addprefix $(HIPRT_OUT)/examples/,$(HIPRT_EXAMPLES))
	$(MAKE) -f $(SRC)/Makefile GPU_POOL_OUT=$(HIPRT_OUT) $(HIPRT_OUT)/gpu_pool
