# SPDX-License-Identifier: GPL-2.0-only
# Included from the top-level Makefile: build the kselftests with the
# harness and lib.mk from Debian's linux-source (make ksft).

SELFTESTS_OUT := $(BUILD)/selftests
KHDR_DIR := $(BUILD)/ksft/tools/testing/selftests

selftests: ksft lib
	@mkdir -p $(SELFTESTS_OUT)
	$(MAKE) -C $(SRC)/selftests KSFT_DIR=$(KHDR_DIR) \
		OUTPUT=$(SELFTESTS_OUT) KHDR_INCLUDES="-I$(SRC)/userlib/include" \
		LIBKFDPOOL=$(LIBDIR_OUT)
