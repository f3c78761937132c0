# SPDX-License-Identifier: GPL-2.0-only
# Included from the top-level Makefile: the benchmark programs, and
# bench_budget, make check's instruction budgets (bench/budgets).

BENCH_PROGS := $(patsubst $(SRC)/bench/%.c,$(BUILD)/bin/%,$(wildcard $(SRC)/bench/*_bench.c))
BENCH_HDRS := $(wildcard $(SRC)/bench/*.h) $(SRC)/uapi/linux/kfdpool.h

# The programs that go through libkfdpool-hip's HIP API.
BENCH_HIP_PROGS := $(BUILD)/bin/hip_bench $(BUILD)/bin/alloc_bench $(BUILD)/bin/bench_budget
BENCH_HIP_LIBS := $(HIPLIB_LINK) -luring -lpthread

bench-progs: $(BENCH_PROGS) $(BUILD)/bin/bench_budget
$(BUILD)/bin/%_bench: $(SRC)/bench/%_bench.c $(BENCH_HDRS)
	@mkdir -p $(dir $@)
	$(CC) -O2 -g $(WARNFLAGS) -D_GNU_SOURCE -I$(SRC)/uapi -o $@ $< -luring

$(BENCH_HIP_PROGS): $(BUILD)/bin/%: $(SRC)/bench/%.c $(BENCH_HDRS) $(LIB_SO)
	@mkdir -p $(dir $@)
	$(CC) -O2 -g $(WARNFLAGS) -D_GNU_SOURCE $(LIB_CPPFLAGS) -o $@ $< $(BENCH_HIP_LIBS)

bench: bench-progs
	$(SRC)/tools/bench
