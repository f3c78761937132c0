# SPDX-License-Identifier: GPL-2.0-only
#
# The HIP runtime coexistence tests (lib_hiprt.h), included from Makefile
# after lib.mk when libamdhip64 can be linked.  One test body, four ways
# for a program to reach libkfdpool-hip beside libamdhip64, and the helper
# libraries and program they use, in $(OUTPUT)/hiprt (not run as tests).

HIPRT_DIR := $(OUTPUT)/hiprt
# Installed with the tests (kselftest's install copies TEST_GEN_FILES):
# lib_hiprt_dso_test finds its library through $ORIGIN/hiprt.
TEST_GEN_FILES += $(HIPRT_DIR)
HIPRT_CFLAGS := $(CFLAGS) -D__HIP_PLATFORM_AMD__
HIPRT_DEPS := lib_hiprt.h lib_hip_util.h $(KFDPOOL_UAPI)/linux/kfdpool.h \
	$(wildcard $(LIBKFDPOOL)/libkfdpool-hip.so)
# The libraries where they were built (the VM runner puts them at the same
# path in the guest).
HIPRT_KFD := -L$(LIBKFDPOOL) -Wl,-rpath,$(LIBKFDPOOL)
# What users link: "pkg-config --libs kfdpool-hip" (LIBKFDPOOL/pkgconfig
# holds the build tree's kfdpool-hip-uninstalled.pc, or an installed one).
HIPRT_PC_LIBS = $(shell PKG_CONFIG_PATH=$(LIBKFDPOOL)/pkgconfig \
	pkg-config --libs kfdpool-hip)

$(OUTPUT)/lib_hiprt_linked_test: lib_hiprt_linked_test.c $(HIPRT_DEPS)
	$(CC) $(HIPRT_CFLAGS) -o $@ $< $(HIPRT_KFD) -lkfdpool-hip -lamdhip64

$(OUTPUT)/lib_hiprt_preload_test: lib_hiprt_preload_test.c $(HIPRT_DEPS)
	$(CC) $(HIPRT_CFLAGS) \
		-DKFDPOOL_HIP_SO='"$(LIBKFDPOOL)/libkfdpool-hip.so.1"' \
		-o $@ $< -lamdhip64

$(HIPRT_DIR)/libhiprt_kfd.so: lib_hiprt_dso.c $(HIPRT_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(HIPRT_CFLAGS) -shared -fPIC -o $@ $< $(HIPRT_KFD) \
		-lkfdpool-hip -lamdhip64

$(HIPRT_DIR)/libhiprt_plain.so: lib_hiprt_dso.c $(HIPRT_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(HIPRT_CFLAGS) -shared -fPIC -o $@ $< -lamdhip64

$(OUTPUT)/lib_hiprt_dso_test: lib_hiprt_dso_test.c $(HIPRT_DIR)/libhiprt_kfd.so $(HIPRT_DEPS)
	$(CC) $(HIPRT_CFLAGS) -o $@ $< -L$(HIPRT_DIR) \
		-Wl,-rpath,'$$ORIGIN/hiprt' -lhiprt_kfd

# The runtime first, kfdpool-hip after it: kept by its .pc, and bypassed.
$(HIPRT_DIR)/after: lib_hiprt_after.c $(HIPRT_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(HIPRT_CFLAGS) -o $@ $< -Wl,--as-needed -lamdhip64 \
		$(HIPRT_PC_LIBS) -Wl,-rpath,$(LIBKFDPOOL)

# It links none of them: its HIP code is the plugin libhiprt_plain.so.
$(OUTPUT)/lib_hiprt_asneeded_test: lib_hiprt_asneeded_test.c $(HIPRT_DIR)/libhiprt_plain.so \
		$(HIPRT_DIR)/after $(HIPRT_DEPS)
	$(CC) $(HIPRT_CFLAGS) -o $@ $< -Wl,--as-needed $(HIPRT_PC_LIBS) \
		-Wl,-rpath,$(LIBKFDPOOL)
