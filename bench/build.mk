# SPDX-License-Identifier: GPL-2.0-only
# Included from the top-level Makefile: the benchmark programs.

BENCH_PROGS := $(patsubst $(SRC)/bench/%.c,$(BUILD)/bin/%,$(wildcard $(SRC)/bench/*_bench.c))

bench-progs: $(BENCH_PROGS)
$(BUILD)/bin/%_bench: $(SRC)/bench/%_bench.c $(SRC)/bench/bench.h $(SRC)/uapi/linux/kfdpool.h
	@mkdir -p $(dir $@)
	$(CC) -O2 -g $(WARNFLAGS) -D_GNU_SOURCE -I$(SRC)/uapi -o $@ $< -luring

# hip_bench goes through libkfdpool-hip's HIP API.
$(BUILD)/bin/hip_bench: $(SRC)/bench/hip_bench.c $(SRC)/bench/bench.h $(LIB_SO)
	@mkdir -p $(dir $@)
	$(CC) -O2 -g $(WARNFLAGS) -D_GNU_SOURCE $(LIB_CPPFLAGS) -o $@ $< $(HIPLIB_LINK)

bench: bench-progs
	$(SRC)/tools/bench
