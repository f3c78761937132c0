# SPDX-License-Identifier: GPL-2.0-only
#
# The TEST-ONLY STAND-IN for HIP's runtime (hiprt_standin.c) and the
# lib_standin_*_test programs that run against it, included from Makefile
# after lib.mk when the libraries are built here.  The stand-in is two
# libraries in $(OUTPUT)/standin: libamdhip64.so.6 (with libkfdpool-hip's
# host chunk backends inside, for real dma-bufs; the module's backend,
# compiled with them, needs libkfdpool) and the
# libhsa-runtime64.so.1 it needs, found through its RUNPATH as ROCr's is
# found beside HIP's.  The tests link libkfdpool-hip first and the
# stand-in after it, as a HIP program links the runtime.

STANDIN := $(OUTPUT)/standin
# USERLIB_SRC: the library's sources (Makefile).
STANDIN_CFLAGS := $(CFLAGS) -fPIC -fvisibility=hidden \
	-DKFDPOOL_HIP_OWN_TYPES -I$(USERLIB_SRC) -I/usr/include/libdrm
STANDIN_BACKENDS := $(addprefix $(USERLIB_SRC)/chunk/,backend.c \
	backend_module.c dmaheap.c udmabuf.c vgem.c kfd.c)

$(STANDIN)/libhsa-runtime64.so.1: hiprt_standin.c hiprt_standin.h
	@mkdir -p $(dir $@)
	$(CC) $(STANDIN_CFLAGS) -DSTANDIN_HSA -shared -Wl,-soname,libhsa-runtime64.so.1 \
		-o $@ hiprt_standin.c

$(STANDIN)/libamdhip64.so.6: hiprt_standin.c hiprt_standin.h $(STANDIN_BACKENDS) \
		$(STANDIN)/libhsa-runtime64.so.1
	$(CC) $(STANDIN_CFLAGS) -shared -Wl,-soname,libamdhip64.so.6 -o $@ \
		hiprt_standin.c $(STANDIN_BACKENDS) -L$(STANDIN) \
		-Wl,-rpath,'$$ORIGIN' -Wl,--no-as-needed -l:libhsa-runtime64.so.1 \
		-Wl,--as-needed -L$(LIBKFDPOOL) -Wl,-rpath,$(LIBKFDPOOL) -lkfdpool \
		-ldrm -ldl -lpthread
	ln -sfn libamdhip64.so.6 $(STANDIN)/libamdhip64.so

STANDIN_TESTS := $(patsubst %.c,$(OUTPUT)/%,$(wildcard lib_standin_*_test.c))
$(STANDIN_TESTS): CFLAGS += -I$(USERLIB_SRC) -DKFDPOOL_HIP_OWN_TYPES
$(STANDIN_TESTS): LDLIBS += -L$(STANDIN) -Wl,-rpath,$(STANDIN) -lamdhip64 \
	-l:libhsa-runtime64.so.1 -ldl
$(STANDIN_TESTS): $(STANDIN)/libamdhip64.so.6 hiprt_standin.h

# The TEST-ONLY STAND-IN for amdkfd and libdrm_amdgpu (kfd_standin.c), an
# LD_PRELOAD object for lib_kfd_standin_test, built against the kfd_ioctl.h
# the library's kfd backend is built against (KFD_IOCTL_H, from lib.mk):
# without it the test skips.
$(OUTPUT)/lib_kfd_standin_test: LDLIBS += -ldl
ifneq ($(KFD_IOCTL_H),)
$(STANDIN)/libkfd-standin.so: kfd_standin.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -shared \
		-DKFD_IOCTL_H='"$(KFD_IOCTL_H)"' -I/usr/include/libdrm \
		-idirafter $(abspath $(dir $(KFD_IOCTL_H))/..) -o $@ $< -ldl
$(OUTPUT)/lib_kfd_standin_test: $(STANDIN)/libkfd-standin.so
endif
