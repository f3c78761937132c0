# SPDX-License-Identifier: MIT
# The libraries, included from the top-level Makefile.
#
#   make lib     build/lib/libkfdpool.{so,a}, libkfdpool-hip.{so,a}, their .pc
#   make unit    native unit tests (no module needed), KTAP output
#   make examples  build/examples/* (examples/)
#
# Two libraries, one per layer users link:
# - libkfdpool (src/native/): the native C API over the ioctls and io_uring.
#   It exports kfdpool_* only (version KFDPOOL_1.0), no hip* name, so it is
#   safe in any process.  liburing.a is linked in, its symbols hidden.
# - libkfdpool-hip (src/hip/ over src/pool/, src/chunk/ and src/rt/): HIP's mempool
#   API with the runtime's symbol versions, and the kfdpool* extensions
#   (KFDPOOL_HIP_1.0).  Linked against libkfdpool (found next to it:
#   RUNPATH $ORIGIN), libdrm.a inside; never against a HIP runtime, which
#   it finds at run time (src/rt/runtime.c).
# The static archives leave liburing and libdrm to the program (the .pc
# files' Libs.private say so; a shared link needs neither -dev package).

LIB_VERSION := 1.0.0
LIBDIR_OUT := $(BUILD)/lib
NATIVE_SRCS := $(wildcard $(SRC)/userlib/src/native/*.c)
HIPLIB_SRCS := $(wildcard $(SRC)/userlib/src/rt/*.c $(SRC)/userlib/src/pool/*.c \
	$(SRC)/userlib/src/chunk/*.c $(SRC)/userlib/src/hip/*.c)
NATIVE_OBJS := $(patsubst $(SRC)/userlib/src/%.c,$(LIBDIR_OUT)/obj/%.o,$(NATIVE_SRCS))
HIPLIB_OBJS := $(patsubst $(SRC)/userlib/src/%.c,$(LIBDIR_OUT)/obj/%.o,$(HIPLIB_SRCS))
LIB_HDRS := $(wildcard $(SRC)/userlib/src/*/*.h $(SRC)/userlib/include/*.h) \
	$(SRC)/uapi/linux/kfdpool.h
LIB_CPPFLAGS := -I$(SRC)/userlib/include -I$(SRC)/userlib/src -I$(SRC)/uapi -D_GNU_SOURCE \
	-I/usr/include/libdrm
LIB_CSTD := -std=gnu11
LIB_LDLIBS := -lpthread -lm
# What a program linking the static archives adds (the .pc files' --static).
NATIVE_STATIC_LIBS := -luring -lpthread
HIPLIB_STATIC_LIBS := -ldrm -ldl -lpthread -lm
# What a program of this tree links for the HIP API (and the native calls
# the tests make), found where it was built.
HIPLIB_LINK := -L$(LIBDIR_OUT) -Wl,-rpath,$(LIBDIR_OUT) -lkfdpool-hip -lkfdpool
NATIVE_LINK := -L$(LIBDIR_OUT) -Wl,-rpath,$(LIBDIR_OUT) -lkfdpool

# The kfd backend is built against the 6.12 headers' kfd_ioctl.h (KFD 1.17):
# the linux-libc-dev copy is 1.11, without AMDKFD_IOC_EXPORT_DMABUF.  The
# headers are the installed ones, else those of tools/kernels' cache.
KFDPOOL_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/kfdpool
KFD_IOCTL_H ?= $(lastword $(sort $(wildcard \
	/usr/src/linux-headers-6.1[2-9]*-common/include/uapi/linux/kfd_ioctl.h \
	$(KFDPOOL_CACHE)/kernels/*/root/usr/src/linux-headers-6.1[2-9]*-common/include/uapi/linux/kfd_ioctl.h)))
$(LIBDIR_OUT)/obj/chunk/kfd.o: LIB_CPPFLAGS += \
	$(if $(KFD_IOCTL_H),-DKFD_IOCTL_H='"$(KFD_IOCTL_H)"' \
		-idirafter $(abspath $(dir $(KFD_IOCTL_H))/..))

.PHONY: examples

LIB_SO := $(LIBDIR_OUT)/libkfdpool.so $(LIBDIR_OUT)/libkfdpool-hip.so
lib: $(LIB_SO) $(LIBDIR_OUT)/libkfdpool.a $(LIBDIR_OUT)/libkfdpool-hip.a \
	$(LIBDIR_OUT)/kfdpool.pc $(LIBDIR_OUT)/kfdpool-hip.pc \
	$(LIBDIR_OUT)/pkgconfig/kfdpool-uninstalled.pc \
	$(LIBDIR_OUT)/pkgconfig/kfdpool-hip-uninstalled.pc

$(LIBDIR_OUT)/obj/%.o: $(SRC)/userlib/src/%.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CSTD) $(CFLAGS) $(WARNFLAGS) -Werror -fPIC -fvisibility=hidden $(LIB_CPPFLAGS) -c -o $@ $<

$(LIBDIR_OUT)/libkfdpool.so.$(LIB_VERSION): $(NATIVE_OBJS) $(SRC)/userlib/libkfdpool.map
	$(CC) -shared -Wl,-soname,libkfdpool.so.1 -Wl,--no-undefined \
		-Wl,--version-script=$(SRC)/userlib/libkfdpool.map -o $@ $(NATIVE_OBJS) \
		-Wl,--exclude-libs,ALL -Wl,-Bstatic -luring -Wl,-Bdynamic $(LIB_LDLIBS)

# -Bsymbolic-functions: the library's calls to its own entry points stay
# inside it, whatever else defines those names.
$(LIBDIR_OUT)/libkfdpool-hip.so.$(LIB_VERSION): $(HIPLIB_OBJS) $(SRC)/userlib/libkfdpool-hip.map $(LIBDIR_OUT)/libkfdpool.so
	$(CC) -shared -Wl,-soname,libkfdpool-hip.so.1 -Wl,--no-undefined \
		-Wl,--version-script=$(SRC)/userlib/libkfdpool-hip.map \
		-Wl,-Bsymbolic-functions -Wl,-rpath,'$$ORIGIN' -o $@ $(HIPLIB_OBJS) \
		-L$(LIBDIR_OUT) -lkfdpool \
		-Wl,--exclude-libs,ALL -Wl,-Bstatic -ldrm -Wl,-Bdynamic -ldl $(LIB_LDLIBS)

$(LIBDIR_OUT)/%.so: $(LIBDIR_OUT)/%.so.$(LIB_VERSION)
	ln -sfn $(notdir $<) $(LIBDIR_OUT)/$*.so.1
	ln -sfn $*.so.1 $@

$(LIBDIR_OUT)/libkfdpool.a: $(NATIVE_OBJS)
	rm -f $@
	ar rcs $@ $^

$(LIBDIR_OUT)/libkfdpool-hip.a: $(HIPLIB_OBJS)
	rm -f $@
	ar rcs $@ $^

PREFIX ?= /usr/local
$(LIBDIR_OUT)/%.pc: $(SRC)/userlib/%.pc.in
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(LIB_VERSION)|' $< > $@

# The same files for the build tree (pkg-config prefers NAME-uninstalled.pc
# where PKG_CONFIG_PATH has one): the tests link as users do.
$(LIBDIR_OUT)/pkgconfig/%-uninstalled.pc: $(SRC)/userlib/%.pc.in
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(BUILD)|' -e 's|@VERSION@|$(LIB_VERSION)|' \
		-e 's|^libdir=.*|libdir=$(LIBDIR_OUT)|' \
		-e 's|^includedir=.*|includedir=$(SRC)/userlib/include|' \
		-e 's|^fmoddir=.*|fmoddir=$(BUILD)/fortran|' \
		-e 's|^Cflags:.*|& -I$(SRC)/uapi|' $< > $@

# ---- unit tests: userlib/test/*_test.c, each a KTAP-printing program ----
UNIT_OUT := $(BUILD)/unit
UNIT_SRCS := $(wildcard $(SRC)/userlib/test/*_test.c)
UNIT_BINS := $(patsubst $(SRC)/userlib/test/%.c,$(UNIT_OUT)/%,$(UNIT_SRCS))
UNIT_HARNESS := $(BUILD)/ksft/tools/testing/selftests
UNIT_CFLAGS := $(LIB_CSTD) -O2 -g $(WARNFLAGS) -Wno-missing-prototypes -Wno-sign-compare -Wno-misleading-indentation \
	$(LIB_CPPFLAGS) -I$(SRC)/userlib/src -I$(UNIT_HARNESS) -I$(UNIT_OUT)

# The allocator test links the sub-allocator (pool/arena.c) alone; the others link the library.
$(UNIT_OUT)/alloc_test: $(SRC)/userlib/test/alloc_test.c $(SRC)/userlib/src/pool/arena.c $(LIB_HDRS) | ksft
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -o $@ $< $(SRC)/userlib/src/pool/arena.c

# The address table's test links it alone.
$(UNIT_OUT)/addr_test: $(SRC)/userlib/test/addr_test.c $(SRC)/userlib/src/pool/addr.c $(SRC)/userlib/src/pool/lock.c $(LIB_HDRS) | ksft
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -o $@ $< $(SRC)/userlib/src/pool/addr.c $(SRC)/userlib/src/pool/lock.c -lpthread

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
$(UNIT_OUT)/hip_abi_test: $(SRC)/userlib/test/hip_abi_test.c $(SRC)/userlib/test/hip_abi_order.c $(UNIT_OUT)/hip_rename.h $(LIB_HDRS) $(LIB_SO) | ksft
	$(CC) $(UNIT_CFLAGS) $(if $(HIP_API_H),-DHAVE_HIP_HEADERS -D__HIP_PLATFORM_AMD__) \
		-o $@ $< $(SRC)/userlib/test/hip_abi_order.c $(HIPLIB_LINK) -lpthread

# The same against the HIP headers of other releases, where their roots
# are in the cache (Debian 13's HIP 5.7, unstable's 6.4: HIP_ROOTS/NAME/
# [root/]usr/include/hip), each seen alone (a directory holding only its
# hip/ and hsa/): the type check, and the HIP mempool IPC programs of
# examples/ (share_pool, exporter, importer) compiled and linked with
# libkfdpool-hip.  A root's libamdhip64 runs only in that release:
# linking it is the release roots' job.
HIP_ROOTS ?= $(KFDPOOL_CACHE)/roots
HIP_IPC_EXAMPLES := share_pool.c exporter.c importer.c
# A root NAME's headers are in NAME/usr/include or, in the release roots
# of tools' cache, NAME/root/usr/include: hipinc-NAME.
HIP_OTHER_H := $(wildcard $(HIP_ROOTS)/*/usr/include/hip/hip_runtime_api.h \
	$(HIP_ROOTS)/*/root/usr/include/hip/hip_runtime_api.h)
hip_root_name = $(firstword $(subst /, ,$(patsubst $(HIP_ROOTS)/%,%,$(1))))
$(foreach h,$(HIP_OTHER_H),$(eval hipinc-$(call hip_root_name,$(h)) := \
	$(patsubst %/hip/hip_runtime_api.h,%,$(h))))
HIP_OTHER := $(foreach h,$(HIP_OTHER_H),$(call hip_root_name,$(h)))
UNIT_BINS += $(patsubst %,$(UNIT_OUT)/hip_abi_test-%,$(HIP_OTHER))
# (A stamp of our own: a target reached through the links would be the
# root's file, which make may delete as an intermediate.)
$(UNIT_OUT)/hiphdr-%.stamp:
	@mkdir -p $(UNIT_OUT)/hiphdr-$*
	ln -sfn $(hipinc-$*)/hip $(UNIT_OUT)/hiphdr-$*/hip
	$(if $(wildcard $(hipinc-$*)/hsa),ln -sfn $(hipinc-$*)/hsa $(UNIT_OUT)/hiphdr-$*/hsa)
	touch $@
.PRECIOUS: $(UNIT_OUT)/hiphdr-%.stamp
$(UNIT_OUT)/hip_abi_test-%: $(SRC)/userlib/test/hip_abi_test.c $(SRC)/userlib/test/hip_abi_order.c \
		$(UNIT_OUT)/hiphdr-%.stamp $(UNIT_OUT)/hip_rename.h \
		$(addprefix $(SRC)/examples/,$(HIP_IPC_EXAMPLES)) $(LIB_HDRS) $(LIB_SO) | ksft
	for x in $(basename $(HIP_IPC_EXAMPLES)); do \
		$(CC) $(LIB_CSTD) -O2 $(WARNFLAGS) -Wno-missing-prototypes -Werror \
		-D__HIP_PLATFORM_AMD__ -isystem $(UNIT_OUT)/hiphdr-$* $(LIB_CPPFLAGS) \
		-o $(UNIT_OUT)/$$x-$* $(SRC)/examples/$$x.c \
		-L$(LIBDIR_OUT) -Wl,-rpath,$(LIBDIR_OUT) -lkfdpool-hip -lkfdpool || exit 1; \
	done
	$(CC) $(UNIT_CFLAGS) -DHAVE_HIP_HEADERS -D__HIP_PLATFORM_AMD__ \
		-isystem $(UNIT_OUT)/hiphdr-$* -o $@ $< \
		$(SRC)/userlib/test/hip_abi_order.c $(HIPLIB_LINK) -lpthread

$(UNIT_OUT)/%: $(SRC)/userlib/test/%.c $(LIB_SO) $(LIB_HDRS) | ksft
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -o $@ $< $(HIPLIB_LINK) -lpthread

# What each library exports (no hip* name in libkfdpool, the runtime's
# versions in libkfdpool-hip), as KTAP.
.PHONY: symbols-check
# (Also against the runtimes of the HIP roots tools/roots made.)
symbols-check: lib
	@KFDPOOL_HIP_RUNTIMES="$(foreach s,trixie sid,$(wildcard $(shell \
		$(SRC)/tools/roots --path $(s) 2>/dev/null)/usr/lib/x86_64-linux-gnu/libamdhip64.so.[0-9]))" \
		$(KTAP_RUN) symbols-check $(SRC)/userlib/test/symbols-check $(SRC) $(LIBDIR_OUT)
unit: symbols-check

# Each program prints KTAP, between tools/ktap-run's markers.
unit: lib $(UNIT_BINS)
	@fail=0; for t in $(UNIT_BINS); do \
		$(KTAP_RUN) $$(basename $$t) timeout 300 $$t || fail=1; \
	done; exit $$fail

# ---- examples (examples/) ----
# exporter and importer: README's first program, built with README's
# compile line (cc prog.c $(pkg-config --cflags --libs kfdpool-hip)
# -lamdhip64) against this tree's kfdpool-hip-uninstalled.pc, plus an
# rpath to build/lib.  Where HIP's runtime cannot be linked they are built
# without -lamdhip64 (the library then stands alone).  pool_info: the
# native API alone (-lkfdpool).  share_pool: make demo's program, built
# four ways.  weight_cache: make demo-weights' program, persistent pools
# through libkfdpool-hip alone.
EXAMPLES_SRC := $(SRC)/examples
EXAMPLES_OUT := $(BUILD)/examples
HIP_RT_SO := $(shell $(CC) -print-file-name=libamdhip64.so)
HIP_RT_LIB := $(if $(filter /%,$(HIP_RT_SO)),-lamdhip64)
README_PC = $(shell PKG_CONFIG_PATH=$(LIBDIR_OUT)/pkgconfig pkg-config --cflags --libs kfdpool-hip)
EXAMPLES := $(EXAMPLES_OUT)/pool_info $(EXAMPLES_OUT)/share_pool \
	$(EXAMPLES_OUT)/weight_cache $(EXAMPLES_OUT)/weight_cache.sh \
	$(if $(HIP_API_H),$(EXAMPLES_OUT)/exporter $(EXAMPLES_OUT)/importer)
# share_pool built against HIP's own headers where they are installed (a
# HIP program's build): linked against libkfdpool-hip alone (-hiphdr);
# where HIP's runtime is installed too, linked -lkfdpool-hip -lamdhip64
# (-hiprt) and against the runtime alone, for LD_PRELOAD (-preload).
EXAMPLES += $(if $(HIP_API_H),$(EXAMPLES_OUT)/share_pool-hiphdr)
EXAMPLES += $(if $(and $(HIP_API_H),$(HIP_RT_LIB)), \
	$(EXAMPLES_OUT)/share_pool-hiprt $(EXAMPLES_OUT)/share_pool-preload)
examples: $(EXAMPLES)
# What make demo runs (tools/demo), no more: the library, kfdpool-query,
# README's pair and share_pool.
.PHONY: demo-progs
demo-progs: lib tools $(filter $(EXAMPLES_OUT)/exporter $(EXAMPLES_OUT)/importer \
	$(EXAMPLES_OUT)/share_pool $(EXAMPLES_OUT)/share_pool-hiphdr $(EXAMPLES_OUT)/share_pool-hiprt,$(EXAMPLES))
EXAMPLE_CC = $(CC) $(LIB_CSTD) -O2 -g $(WARNFLAGS) -Wno-missing-prototypes $(LIB_CPPFLAGS)
$(EXAMPLES_OUT)/exporter $(EXAMPLES_OUT)/importer: $(EXAMPLES_OUT)/%: $(EXAMPLES_SRC)/%.c $(LIB_SO) $(LIB_HDRS) \
		$(LIBDIR_OUT)/pkgconfig/kfdpool-uninstalled.pc $(LIBDIR_OUT)/pkgconfig/kfdpool-hip-uninstalled.pc
	@mkdir -p $(dir $@)
	$(CC) -Wall -Wextra -Werror -o $@ $< $(README_PC) -Wl,-rpath,$(LIBDIR_OUT) $(HIP_RT_LIB)
$(EXAMPLES_OUT)/pool_info: $(EXAMPLES_SRC)/pool_info.c $(LIB_SO) $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(EXAMPLE_CC) -o $@ $< $(NATIVE_LINK)
$(EXAMPLES_OUT)/weight_cache.sh: $(EXAMPLES_SRC)/weight_cache.sh
	@mkdir -p $(dir $@)
	cp $< $@
$(EXAMPLES_OUT)/share_pool-hiprt: $(EXAMPLES_SRC)/share_pool.c $(LIB_SO) $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(EXAMPLE_CC) -D__HIP_PLATFORM_AMD__ -DSHARE_POOL_WITH_RUNTIME -o $@ $< \
		-L$(LIBDIR_OUT) -Wl,-rpath,$(LIBDIR_OUT) -lkfdpool-hip -lamdhip64
$(EXAMPLES_OUT)/share_pool-preload: $(EXAMPLES_SRC)/share_pool.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(EXAMPLE_CC) -D__HIP_PLATFORM_AMD__ -DSHARE_POOL_WITH_RUNTIME -o $@ $< -lamdhip64
$(EXAMPLES_OUT)/share_pool-hiphdr: $(EXAMPLES_SRC)/share_pool.c $(LIB_SO) $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(EXAMPLE_CC) -D__HIP_PLATFORM_AMD__ -o $@ $< -L$(LIBDIR_OUT) -Wl,-rpath,$(LIBDIR_OUT) -lkfdpool-hip
$(EXAMPLES_OUT)/share_pool $(EXAMPLES_OUT)/weight_cache: $(EXAMPLES_OUT)/%: \
		$(EXAMPLES_SRC)/%.c $(LIB_SO) $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(EXAMPLE_CC) -o $@ $< -L$(LIBDIR_OUT) -Wl,-rpath,$(LIBDIR_OUT) -lkfdpool-hip

# tools/gpu/gpu_pool as tools/gpu-check builds it (README's link line);
# make hiprt-progs-SUITE builds it against each release's HIP headers.
GPU_POOL_OUT ?= $(BUILD)/gpu
$(GPU_POOL_OUT)/gpu_pool: $(SRC)/tools/gpu/gpu_pool.c $(LIB_SO) $(LIB_HDRS) \
		$(LIBDIR_OUT)/pkgconfig/kfdpool-uninstalled.pc \
		$(LIBDIR_OUT)/pkgconfig/kfdpool-hip-uninstalled.pc
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -Wall -Wextra -Werror -D__HIP_PLATFORM_AMD__ -o $@ $< \
		$(README_PC) -Wl,-rpath,$(LIBDIR_OUT) -lamdhip64

# kfdpool-query, a small tool over the library.
tools: $(BUILD)/bin/kfdpool-query
$(BUILD)/bin/kfdpool-query: $(SRC)/tools/query.c $(LIBDIR_OUT)/libkfdpool.so
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARNFLAGS) $(LIB_CPPFLAGS) -o $@ $< $(NATIVE_LINK)

# Its output on the host, every feature bit of the uapi included: the
# module's QUERY answered by a stand-in (tools/test/query_fake.c, preloaded).
.PHONY: query-unit
$(BUILD)/tools-test/query_fake.so: $(SRC)/tools/test/query_fake.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARNFLAGS) $(LIB_CPPFLAGS) -shared -fPIC -o $@ $<
query-unit: $(BUILD)/bin/kfdpool-query $(BUILD)/tools-test/query_fake.so
	@$(KTAP_RUN) query-unit $(SRC)/tools/test/query-test $(BUILD)/bin/kfdpool-query \
		$(BUILD)/tools-test/query_fake.so $(SRC)/uapi/linux/kfdpool.h
unit: query-unit
