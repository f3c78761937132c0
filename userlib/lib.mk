# SPDX-License-Identifier: MIT
# libkfdpool, included from the top-level Makefile.
#
#   make lib     build/lib/libkfdpool.{so,a}, kfdpool.pc
#   make unit    native unit tests (no module needed), KTAP output
#   make examples  build/lib/examples/*
#
# liburing (2.3: liburing.a) and libdrm (libdrm.a) are linked statically
# into libkfdpool.so, their symbols hidden, so that users need neither.
# libkfdpool.a users link -luring -ldrm themselves (kfdpool.pc says so).

LIB_SONAME := libkfdpool.so.1
LIB_VERSION := 1.0.0
LIBDIR_OUT := $(BUILD)/lib
LIB_SRCS := $(wildcard $(SRC)/userlib/src/*.c)
LIB_OBJS := $(patsubst $(SRC)/userlib/src/%.c,$(LIBDIR_OUT)/obj/%.o,$(LIB_SRCS))
LIB_HDRS := $(wildcard $(SRC)/userlib/src/*.h $(SRC)/userlib/include/*.h) \
	$(SRC)/uapi/linux/kfdpool.h
LIB_CPPFLAGS := -I$(SRC)/userlib/include -I$(SRC)/uapi -D_GNU_SOURCE \
	-I/usr/include/libdrm
LIB_CSTD := -std=gnu11
LIB_STATIC_DEPS := -Wl,--exclude-libs,ALL -Wl,-Bstatic -luring -ldrm -Wl,-Bdynamic
LIB_LDLIBS := -lpthread -lm

# The kfd backend is built against the 6.12 headers' kfd_ioctl.h (KFD 1.17):
# the linux-libc-dev copy is 1.11, without AMDKFD_IOC_EXPORT_DMABUF.
KFD_IOCTL_H ?= $(lastword $(sort $(wildcard \
	/usr/src/linux-headers-6.1[2-9]*-common/include/uapi/linux/kfd_ioctl.h)))
$(LIBDIR_OUT)/obj/backend_kfd.o: LIB_CPPFLAGS += \
	$(if $(KFD_IOCTL_H),-DKFD_IOCTL_H='"$(KFD_IOCTL_H)"' \
		-idirafter $(abspath $(dir $(KFD_IOCTL_H))/..))

.PHONY: examples

lib: $(LIBDIR_OUT)/libkfdpool.so $(LIBDIR_OUT)/libkfdpool.a $(LIBDIR_OUT)/kfdpool.pc

$(LIBDIR_OUT)/obj/%.o: $(SRC)/userlib/src/%.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CSTD) $(CFLAGS) $(WARNFLAGS) -Werror -fPIC -fvisibility=hidden $(LIB_CPPFLAGS) -c -o $@ $<

$(LIBDIR_OUT)/libkfdpool.so.$(LIB_VERSION): $(LIB_OBJS)
	$(CC) -shared -Wl,-soname,$(LIB_SONAME) -Wl,--no-undefined -o $@ $^ \
		$(LIB_STATIC_DEPS) $(LIB_LDLIBS)

$(LIBDIR_OUT)/libkfdpool.so: $(LIBDIR_OUT)/libkfdpool.so.$(LIB_VERSION)
	ln -sfn $(notdir $<) $(LIBDIR_OUT)/$(LIB_SONAME)
	ln -sfn $(LIB_SONAME) $@

$(LIBDIR_OUT)/libkfdpool.a: $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $^

PREFIX ?= /usr/local
$(LIBDIR_OUT)/kfdpool.pc: $(SRC)/userlib/kfdpool.pc.in
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(LIB_VERSION)|' $< > $@

# ---- unit tests: userlib/test/*_test.c, each a KTAP-printing program ----
UNIT_OUT := $(BUILD)/unit
UNIT_SRCS := $(wildcard $(SRC)/userlib/test/*_test.c)
UNIT_BINS := $(patsubst $(SRC)/userlib/test/%.c,$(UNIT_OUT)/%,$(UNIT_SRCS))
UNIT_HARNESS := $(BUILD)/ksft/tools/testing/selftests
UNIT_CFLAGS := $(LIB_CSTD) -O2 -g $(WARNFLAGS) -Wno-missing-prototypes -Wno-sign-compare -Wno-misleading-indentation \
	$(LIB_CPPFLAGS) -I$(SRC)/userlib/src -I$(UNIT_HARNESS) -I$(UNIT_OUT)

# The allocator test links alloc.c alone; the others link the library.
$(UNIT_OUT)/alloc_test: $(SRC)/userlib/test/alloc_test.c $(SRC)/userlib/src/alloc.c $(LIB_HDRS) | ksft
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -o $@ $< $(SRC)/userlib/src/alloc.c

# HIP ABI check: our own type declarations, renamed, next to HIP's.
HIP_API_H := $(wildcard /usr/include/hip/hip_runtime_api.h)
$(UNIT_OUT)/hip_rename.h: $(SRC)/userlib/include/kfdpool_hip_types.h
	@mkdir -p $(dir $@)
	grep -o '\bhip[A-Za-z0-9_]*\b' $< | sort -u | \
		sed 's/.*/#define & kfdx_&/' > $@
	grep -o '\bhip[A-Za-z0-9_]*\b' $< | sort -u | \
		sed 's/.*/#undef &/' > $(UNIT_OUT)/hip_unrename.h
	{ echo '#define HIP_CONSTS(X) \'; \
	  grep -oE '^\s*hip[A-Za-z0-9_]+ =' $< | tr -d ' =\t' | \
		sed 's/.*/\tX(&) \\/'; echo; } > $(UNIT_OUT)/hip_consts.h
$(UNIT_OUT)/hip_abi_test: $(SRC)/userlib/test/hip_abi_test.c $(SRC)/userlib/test/hip_abi_order.c $(UNIT_OUT)/hip_rename.h $(LIB_HDRS) $(LIBDIR_OUT)/libkfdpool.so | ksft
	$(CC) $(UNIT_CFLAGS) $(if $(HIP_API_H),-DHAVE_HIP_HEADERS -D__HIP_PLATFORM_AMD__) \
		-o $@ $< $(SRC)/userlib/test/hip_abi_order.c \
		-L$(LIBDIR_OUT) -Wl,-rpath,$(LIBDIR_OUT) -lkfdpool -lpthread

$(UNIT_OUT)/%: $(SRC)/userlib/test/%.c $(LIBDIR_OUT)/libkfdpool.so $(LIB_HDRS) | ksft
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -o $@ $< -L$(LIBDIR_OUT) -Wl,-rpath,$(LIBDIR_OUT) -lkfdpool -lpthread

# Each program prints KTAP, between tools/ktap-run's markers.
unit: lib $(UNIT_BINS)
	@fail=0; for t in $(UNIT_BINS); do \
		$(KTAP_RUN) $$(basename $$t) timeout 300 $$t || fail=1; \
	done; exit $$fail

# ---- examples ----
EXAMPLES_OUT := $(LIBDIR_OUT)/examples
EXAMPLES := $(patsubst $(SRC)/userlib/examples/%.c,$(EXAMPLES_OUT)/%,$(wildcard $(SRC)/userlib/examples/*.c))
# The same programs built against HIP's own headers where they are installed
# (a HIP program's build), still linked against libkfdpool alone.
EXAMPLES_HIP := $(if $(HIP_API_H),$(addsuffix -hiphdr,$(EXAMPLES)))
examples: $(EXAMPLES) $(EXAMPLES_HIP)
$(EXAMPLES_OUT)/%-hiphdr: $(SRC)/userlib/examples/%.c $(LIBDIR_OUT)/libkfdpool.so $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CSTD) -O2 -g $(WARNFLAGS) -Wno-missing-prototypes $(LIB_CPPFLAGS) \
		-D__HIP_PLATFORM_AMD__ -o $@ $< -L$(LIBDIR_OUT) -Wl,-rpath,$(LIBDIR_OUT) -lkfdpool
$(EXAMPLES_OUT)/%: $(SRC)/userlib/examples/%.c $(LIBDIR_OUT)/libkfdpool.so $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CSTD) -O2 -g $(WARNFLAGS) -Wno-missing-prototypes $(LIB_CPPFLAGS) \
		-o $@ $< -L$(LIBDIR_OUT) -Wl,-rpath,$(LIBDIR_OUT) -lkfdpool

# kfdpool-query, a small tool over the library.
tools: $(BUILD)/bin/kfdpool-query
$(BUILD)/bin/kfdpool-query: $(SRC)/tools/query.c $(LIBDIR_OUT)/libkfdpool.so
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARNFLAGS) $(LIB_CPPFLAGS) -o $@ $< -L$(LIBDIR_OUT) \
		-Wl,-rpath,$(LIBDIR_OUT) -lkfdpool
