# SPDX-License-Identifier: GPL-2.0-only
#
# kfdpool: module, library, selftests, VM tests.
#
#   make                  module for KDIR (default: the running kernel) + library
#   make modules KVER=R   module for kernel release R, installed or a test
#                         kernel of the cache (6.12, 6.1, 5.10, newest:
#                         tools/kernels)
#   make lib              libkfdpool (native API) and libkfdpool-hip (HIP API):
#                         .so, .a, .pc
#   make selftests        the kselftests (needs the harness: make ksft)
#   make demo             the main job: boot 6.12, share a pool, show accounting
#   make demo-weights     a weight cache in a persistent pool: producer exits,
#                         servers import later, a new producer adopts it
#   make examples         examples/: README's exporter and importer (C, and
#                         Fortran where gfortran is), pool_info (native
#                         API), share_pool (make demo's)
#   make check            every test, ending with "N passed, N failed"
#   make coverage         line coverage of kmod/ and userlib/src/ by the suite
#   make bench            the benchmarks in the 6.12 VM: table, CSV and JSON
#   make gpu-check        on an AMD GPU node with ROCm, as root, on the host: the
#                         runtime's version and the device path, the module, the
#                         kselftests and the named checks of the device paths
#                         through the real HIP runtime (where there is no GPU it
#                         builds everything and names each check it did not run)
#   make deps             install the Debian packages all of this needs and
#                         fetch the test kernels into the cache (never
#                         installing a kernel on this machine); make demo
#                         sets up only its own part (tools/deps --demo)

SRC := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD ?= $(SRC)/build

# KVER may name a test kernel (tools/kernels --list): its release and its
# build tree come from the cache that tools/deps fills.  Otherwise the build
# tree is the installed kernel's, /lib/modules/KVER/build.
KVER ?= $(shell uname -r)
TEST_KERNELS := $(shell $(SRC)/tools/kernels --list)
ifneq ($(filter $(TEST_KERNELS),$(KVER)),)
override KVER := $(shell $(SRC)/tools/kernels $(KVER))
endif
KDIR ?= $(or $(wildcard /lib/modules/$(KVER)/build),\
	$(shell $(SRC)/tools/kernels --kdir $(KVER) 2>/dev/null),/lib/modules/$(KVER)/build)
KOUT ?= $(BUILD)/kmod/$(if $(filter command line,$(origin KDIR)),$(subst /,_,$(KDIR)),$(KVER))
# Kernels whose headers want another Debian release's compiler and C
# library (5.10, newest) are built in a root of that release (tools/roots,
# made once into the cache), with the same paths inside.
KBUILD_SUITE = $(shell $(SRC)/tools/kernels --build-suite $(KVER))
KBUILD_IN = $(if $(KBUILD_SUITE),$(SRC)/tools/roots --run $(KBUILD_SUITE) \
	--bind $(KOUT) --bind $(BUILD) --bind $(KDIR) --)

# Every host test program runs through this (NAME COMMAND...), so that
# tools/check counts its tests against its KTAP plan (tools/ktap-count).
KTAP_RUN := $(SRC)/tools/ktap-run

CC ?= gcc
CFLAGS ?= -O2 -g
WARNFLAGS := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wformat=2 -Werror=implicit-function-declaration

.PHONY: all modules test-modules lib selftests ksft demo check gpu-check deps checkpatch clean \
	bench bench-progs tools harness-selftest mutations-check coverage

all: lib
	@if [ -d "$(KDIR)" ]; then $(MAKE) -f $(SRC)/Makefile modules; \
	else echo "note: no kernel build tree at $(KDIR): module not built" \
		"(make modules KVER=6.12 builds it for Debian's 6.12)"; fi

# Kbuild writes its objects next to the sources, so each kernel gets a
# directory of links to the sources: several kernels build side by side.
# Kbuild runs the feature probes itself (kmod/probes/, read through the
# directory link), as it does for M=$$PWD and dkms builds; kmod/compat/
# holds the shims they select.
KSRCS := $(wildcard $(SRC)/kmod/*.c $(SRC)/kmod/*.h)
# The uapi header the module is built against (tools/abi-grow: another).
KMOD_UAPI ?= $(SRC)/uapi
modules:
	@mkdir -p $(KOUT)/kmod
	@ln -sfn $(SRC)/Kbuild $(KOUT)/Kbuild
	@ln -sfn $(SRC)/dkms.conf $(KOUT)/dkms.conf
	@ln -sfn $(KMOD_UAPI) $(KOUT)/uapi
	@ln -sfn $(SRC)/kmod/probes $(KOUT)/kmod/probes
	@ln -sfn $(SRC)/kmod/compat $(KOUT)/kmod/compat
	@for f in $(KSRCS); do ln -sfn $$f $(KOUT)/kmod/; done
	$(KBUILD_IN) $(MAKE) -C $(KDIR) M=$(KOUT) W=1 modules
	@test -f $(KOUT)/kfdpool.ko && echo "built $(KOUT)/kfdpool.ko"

# A test-only dma-buf importer that the selftests load (tools/vm/run puts
# it in the guest): built beside the module, for the same kernel; never
# installed.
test-modules: modules
	@mkdir -p $(KOUT)/importer
	@ln -sfn $(SRC)/selftests/importer/Kbuild $(KOUT)/importer/Kbuild
	@ln -sfn $(SRC)/selftests/importer/kfdpool_importer.c $(KOUT)/importer/
	$(KBUILD_IN) $(MAKE) -C $(KDIR) M=$(KOUT)/importer W=1 modules

include $(SRC)/userlib/lib.mk
include $(SRC)/selftests/build.mk
-include $(SRC)/packaging/install.mk
include $(SRC)/bench/build.mk

deps:
	$(SRC)/tools/deps

# The kselftest harness, lib.mk and runner come from Debian's linux-source.
ksft: $(BUILD)/ksft/.done
$(BUILD)/ksft/.done: $(SRC)/tools/ksft-extract
	$(SRC)/tools/ksft-extract $(BUILD)/ksft
	@touch $@

CHECKPATCH := $(BUILD)/ksft/scripts/checkpatch.pl
checkpatch: ksft
	$(CHECKPATCH) --no-tree --strict --quiet --show-types \
		-f \
		$(wildcard $(SRC)/kmod/*.c $(SRC)/kmod/*.h $(SRC)/kmod/compat/*.h \
			$(SRC)/kmod/probes/*.c) \
		$(wildcard $(SRC)/selftests/importer/*.c) \
		$(SRC)/uapi/linux/kfdpool.h

demo:
	$(SRC)/tools/demo

.PHONY: demo-weights
demo-weights:
	$(SRC)/tools/demo-weights

# Your own program in the VM, as HACKING.md shows it (TAP lines).
.PHONY: vm-add-check examples-check
vm-add-check: lib
	$(SRC)/tools/vm/add-check $(SRC) $(BUILD)

# README's exporter | importer, pool_info and the first-hour errors, in the
# 6.12 VM with and without the module (TAP lines).
examples-check: lib
	$(SRC)/tools/vm/examples-check $(SRC) $(BUILD)

check:
	$(SRC)/tools/check

coverage:
	$(SRC)/tools/coverage

gpu-check:
	$(SRC)/tools/gpu-check

# Nothing tools/deps installs can bring a kernel, an initramfs or a boot
# loader entry onto this machine (its package closure, from apt).
.PHONY: deps-check
deps-check:
	@$(KTAP_RUN) deps-check $(SRC)/tools/deps --check
unit: deps-check

# The harness's counting rules, proven on deliberately broken programs.
harness-selftest:
	@$(KTAP_RUN) harness-selftest $(SRC)/tools/harness-selftest
unit: harness-selftest

# What keeps make demo's first run short (tools/kernels' package lists,
# tools/vm/run --built, tools/deps --no-wait), on the host, offline; linked
# as build/unit/demo-setup-test, the unit: name tools/mutations gives it.
$(BUILD)/unit/demo-setup-test: $(SRC)/tools/test/demo-setup-test
	@mkdir -p $(dir $@)
	@ln -sf $< $@
.PHONY: demo-setup-check
demo-setup-check: $(BUILD)/unit/demo-setup-test
	@$(KTAP_RUN) demo-setup-test $(BUILD)/unit/demo-setup-test
unit: demo-setup-check

# Every mutation of tools/mutations still applies (tools/mutate --check).
mutations-check:
	@$(KTAP_RUN) mutations-check $(SRC)/tools/mutate --check
unit: mutations-check

clean:
	rm -rf $(BUILD)
