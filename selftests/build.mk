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
