# SPDX-License-Identifier: GPL-2.0-only
#
# kfdpool: module, library, selftests, VM tests.
#
#   make                  module for KDIR (default: the running kernel) + library
#   make modules KVER=R   module for an installed kernel release R (or 6.12, 6.1)
#   make lib              libkfdpool.so, libkfdpool.a, kfdpool.pc
#   make selftests        the kselftests (needs the harness: make ksft)
#   make demo             the main job: boot 6.12, share a pool, show accounting
#   make check            every test, ending with "N passed, N failed"
#   make coverage         line coverage of kmod/ and userlib/src/ by the suite
#   make bench            the benchmarks in the 6.12 VM: table, CSV and JSON
#   make deps             install the Debian packages all of this needs

SRC := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD ?= $(SRC)/build

KVER ?= $(shell uname -r)
ifneq ($(filter 6.1 6.12,$(KVER)),)
override KVER := $(shell $(SRC)/tools/kernels $(KVER))
endif
KDIR ?= /lib/modules/$(KVER)/build
KOUT ?= $(BUILD)/kmod/$(if $(filter /lib/modules/%/build,$(KDIR)),$(KVER),$(subst /,_,$(KDIR)))

CC ?= gcc
CFLAGS ?= -O2 -g
WARNFLAGS := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wformat=2 -Werror=implicit-function-declaration

.PHONY: all modules lib selftests ksft demo check deps checkpatch clean \
	bench bench-progs tools coverage

all: lib
	@if [ -d "$(KDIR)" ]; then $(MAKE) -f $(SRC)/Makefile modules; \
	else echo "note: no kernel build tree at $(KDIR): module not built" \
		"(make modules KVER=6.12 builds it for Debian's 6.12)"; fi

# Kbuild writes its objects next to the sources, so each kernel gets a
# directory of links to the sources: several kernels build side by side.
KSRCS := $(wildcard $(SRC)/kmod/*.c $(SRC)/kmod/*.h)
modules: $(KOUT)/gen/kfdpool_features.h
	@mkdir -p $(KOUT)/kmod
	@ln -sfn $(SRC)/Kbuild $(KOUT)/Kbuild
	@ln -sfn $(SRC)/uapi $(KOUT)/uapi
	@for f in $(KSRCS); do ln -sfn $$f $(KOUT)/kmod/; done
	$(MAKE) -C $(KDIR) M=$(KOUT) W=1 modules
	@test -f $(KOUT)/kfdpool.ko && echo "built $(KOUT)/kfdpool.ko"

$(KOUT)/gen/kfdpool_features.h: $(wildcard $(SRC)/kmod/probes/*.c) $(SRC)/tools/kprobe-features
	$(SRC)/tools/kprobe-features $(KDIR) $(KOUT)

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
		$(wildcard $(SRC)/kmod/*.c $(SRC)/kmod/*.h $(SRC)/kmod/probes/*.c) \
		$(SRC)/uapi/linux/kfdpool.h

demo:
	$(SRC)/tools/demo

check:
	$(SRC)/tools/check

coverage:
	$(SRC)/tools/coverage

clean:
	rm -rf $(BUILD)
