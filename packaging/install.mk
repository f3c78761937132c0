# SPDX-License-Identifier: GPL-2.0-only
#
# Packaging, included from the top-level Makefile:
#
#   make stat             build/tools/kfdpool-stat
#   make fortran          the hipfort-style Fortran module (when gfortran exists)
#   make install          module, libkfdpool and libkfdpool-hip, headers,
#                         kfdpool.pc and kfdpool-hip.pc, the CMake package,
#                         udev rule, modules-load.d file, modprobe.d
#                         example, kfdpool-stat, man pages, Fortran
#   make install-userspace  the same without the module (DKMS installs
#                         that one)
#   make uninstall        removes exactly what install put there
#   make install-check    install into a temporary DESTDIR, check, uninstall
#   make dkms-src         the DKMS source tree in $(DESTDIR)/usr/src/kfdpool-V
#   make dkms-check       dkms add + build for Debian's 6.1 and 6.12 headers,
#                         in a private DKMS tree under build/dkms
#
# PREFIX (default /usr/local) and DESTDIR are honoured everywhere; the udev
# rule, the modules-load.d and modprobe.d files go where udev, systemd and
# modprobe look for them (UDEVRULESDIR, MODULESLOADDIR, MODPROBEDIR), below
# DESTDIR.  Without DESTDIR the system is told: depmod after the module,
# ldconfig after the libraries, udev reloads its rules and applies them to
# /dev/kfdpool (LDCONFIG, UDEVADM, DEPMOD name the programs).

PKG_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' $(SRC)/dkms.conf)

BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
# gfortran .mod files are compiler-specific; keep them in their own directory.
FMODDIR ?= $(LIBDIR)/kfdpool/fortran
# udev only reads /etc/udev/rules.d and /lib/udev/rules.d (and /usr/lib/...):
# a /usr/local rule would be ignored, so local installs use /etc.
UDEVRULESDIR ?= $(if $(filter /usr,$(PREFIX)),/lib/udev/rules.d,/etc/udev/rules.d)
# The same for systemd-modules-load: /usr/lib for a package, else /etc.
MODULESLOADDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/modules-load.d,/etc/modules-load.d)
MODPROBEDIR ?= /etc/modprobe.d

INSTALL ?= install
LDCONFIG ?= ldconfig
UDEVADM ?= udevadm
DEPMOD ?= depmod
CMAKEDIR ?= $(LIBDIR)/cmake/kfdpool

# ---------------------------------------------------------------- kfdpool-stat
# build/bin: the VM runner puts it in the guest (selftests/stat_test.c runs it).
STAT_OUT := $(BUILD)/bin
STAT_SRCS := $(wildcard $(SRC)/tools/stat/*.c)
STAT_HDRS := $(wildcard $(SRC)/tools/stat/*.h)
STAT_LIB_SRCS := $(filter-out %/kfdpool-stat.c,$(STAT_SRCS))

.PHONY: install uninstall uninstall-module uninstall-userspace unit stat stat-unit fortran fortran-tests fortran-unit \
	install-check dkms-src dkms-check \
	man-check

all: stat fortran

stat: $(STAT_OUT)/kfdpool-stat

# JSON is written with json-c (libjson-c-dev).
JSONC_CFLAGS := $(shell pkg-config --cflags json-c 2>/dev/null)
JSONC_LIBS := $(or $(shell pkg-config --libs json-c 2>/dev/null),-ljson-c)
STAT_CFLAGS = $(CFLAGS) $(WARNFLAGS) -Werror -D_GNU_SOURCE -I$(SRC)/uapi \
	$(JSONC_CFLAGS) -DKFDPOOL_STAT_VERSION='"$(PKG_VERSION)"'

$(STAT_OUT)/kfdpool-stat: $(STAT_SRCS) $(STAT_HDRS) $(SRC)/uapi/linux/kfdpool.h
	@mkdir -p $(dir $@)
	$(CC) $(STAT_CFLAGS) -o $@ $(STAT_SRCS) $(JSONC_LIBS)

# Native unit test of the fdinfo parser, the pool model, file grouping, the
# JSON document and the Prometheus text (no kernel needed); promtool lints
# that text (tools/stat/test/prom-lint).
$(BUILD)/stat/stat-unit: $(SRC)/tools/stat/test/parse_test.c $(STAT_LIB_SRCS) $(STAT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(STAT_CFLAGS) -I$(SRC)/tools/stat -o $@ $< $(STAT_LIB_SRCS) $(JSONC_LIBS)

stat-unit: $(BUILD)/stat/stat-unit $(STAT_OUT)/kfdpool-stat
	$(KTAP_RUN) stat-unit $(BUILD)/stat/stat-unit $(BUILD)/stat/sample.prom
	$(KTAP_RUN) stat-prom-lint $(SRC)/tools/stat/test/prom-lint $(SRC) $(BUILD)/stat/sample.prom
	$(KTAP_RUN) stat-fakeproc $(SRC)/tools/stat/test/fakeproc-test \
		$(STAT_OUT)/kfdpool-stat $(BUILD)/stat-fakeproc

unit: stat-unit

# selftests/stat_test.c runs build/tools/kfdpool-stat in the VM.
selftests: stat

# kfdpool-stat --prometheus on live pools of two users (a persistent one,
# an importer: selftests/stat_prom_test in the 6.12 VM), its output
# through promtool check metrics on the host (TAP; make check runs it).
.PHONY: stat-prom-check
stat-prom-check: selftests
	$(SRC)/tools/stat/test/prom-check $(SRC) $(BUILD)

# ---------------------------------------------------------------- Fortran
ifeq ($(origin FC),default)
FC := gfortran
endif
HAVE_FC := $(shell command -v $(FC) >/dev/null 2>&1 && echo y)
FORTRAN_OUT := $(BUILD)/fortran
FORTRAN_MOD_SRC := $(SRC)/userlib/fortran/hipfort_kfdpool.f90
FFLAGS ?= -O2 -g
FWARN := -Wall -Wextra -std=f2008 -fimplicit-none

ifeq ($(HAVE_FC),y)
fortran: $(FORTRAN_OUT)/hipfort_kfdpool.mod

$(FORTRAN_OUT)/hipfort_kfdpool.mod: $(FORTRAN_MOD_SRC)
	@mkdir -p $(FORTRAN_OUT)
	$(FC) $(FFLAGS) $(FWARN) -Werror -J$(FORTRAN_OUT) -c -o $(FORTRAN_OUT)/hipfort_kfdpool.o $<

# The exporter/importer pair (and the layout printer) that
# selftests/lib_fortran_test.c runs, linked with libkfdpool-hip.a and
# libkfdpool.a (the module's interfaces are HIP's API).  (Not fully
# static: a static libgfortran's weak pthread references resolve to NULL.
# The VM runner copies the shared libraries they need.)  In build/bin, which
# the runner puts in the guest; not in build/selftests: the runner would run
# them as tests of their own.
FORTRAN_TESTS := $(addprefix $(BUILD)/bin/,kfdpool_f_layout \
	kfdpool_f_exporter kfdpool_f_importer)
FORTRAN_COMMON := $(FORTRAN_OUT)/test/kfdpool_f_common.o
fortran-tests: $(FORTRAN_TESTS)
$(FORTRAN_COMMON): $(SRC)/userlib/fortran/test/kfdpool_f_common.f90 $(FORTRAN_OUT)/hipfort_kfdpool.mod
	@mkdir -p $(dir $@)
	$(FC) $(FFLAGS) $(FWARN) -Werror -I$(FORTRAN_OUT) -J$(FORTRAN_OUT)/test -c -o $@ $<
$(BUILD)/bin/kfdpool_f_%: $(SRC)/userlib/fortran/test/kfdpool_f_%.f90 $(FORTRAN_COMMON) $(LIBDIR_OUT)/libkfdpool-hip.a $(LIBDIR_OUT)/libkfdpool.a
	$(FC) $(FFLAGS) $(FWARN) -Werror -I$(FORTRAN_OUT) -I$(FORTRAN_OUT)/test -o $@ $< \
		$(FORTRAN_COMMON) $(LIBDIR_OUT)/libkfdpool-hip.a $(LIBDIR_OUT)/libkfdpool.a \
		$(NATIVE_STATIC_LIBS) $(HIPLIB_STATIC_LIBS)

# examples/exporter.f90 and importer.f90: README's first program in
# Fortran, built with README's line for them (gfortran PROG.f90
# $(pkg-config --cflags --libs kfdpool-hip)) against this tree's
# kfdpool-hip-uninstalled.pc, plus an rpath to build/lib.
EXAMPLES_F90 := $(EXAMPLES_OUT)/exporter_f90 $(EXAMPLES_OUT)/importer_f90
examples: $(EXAMPLES_F90)
$(EXAMPLES_F90): $(EXAMPLES_OUT)/%_f90: $(SRC)/examples/%.f90 $(FORTRAN_OUT)/hipfort_kfdpool.mod \
		$(LIB_SO) $(LIBDIR_OUT)/pkgconfig/kfdpool-uninstalled.pc \
		$(LIBDIR_OUT)/pkgconfig/kfdpool-hip-uninstalled.pc
	@mkdir -p $(dir $@)
	$(FC) -Wall -Wextra -Werror -o $@ $< $(README_PC) -Wl,-rpath,$(LIBDIR_OUT)

# Native check of the interfaces' conventions against HIP's C prototypes
# (stand-in functions from HIP's own header; the real library not involved).
$(FORTRAN_OUT)/test/abi_driver: $(SRC)/userlib/fortran/test/abi_driver.f90 \
		$(SRC)/userlib/fortran/test/abi_stub.c $(FORTRAN_OUT)/hipfort_kfdpool.mod
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wall -Wextra -Werror -c -o $@_stub.o $(SRC)/userlib/fortran/test/abi_stub.c
	$(FC) $(FFLAGS) $(FWARN) -Werror -I$(FORTRAN_OUT) -o $@ $< $@_stub.o

# And its names and values against hipfort's (userlib/fortran/test/hipfort-names).
fortran-unit: $(FORTRAN_OUT)/test/abi_driver $(FORTRAN_OUT)/hipfort_kfdpool.mod
	$(KTAP_RUN) fortran-abi $(FORTRAN_OUT)/test/abi_driver
	$(KTAP_RUN) fortran-names $(SRC)/userlib/fortran/test/names-check $(SRC) $(FORTRAN_OUT) $(FC)
unit: fortran-unit

# selftests/lib_fortran_test runs them.
selftests: fortran-tests
else
fortran fortran-tests fortran-unit:
	@echo "note: no Fortran compiler ($(FC)): Fortran module not built"
endif

# ---------------------------------------------------------------- man pages
# Section 3: a page per library function (most are .so links to the page
# that documents it with its siblings, as liburing does); 4: the device;
# 8: kfdpool-stat.
MAN_SECTIONS := 3 4 8
MANPAGES := $(foreach n,$(MAN_SECTIONS),$(wildcard $(SRC)/man/man$(n)/*.$(n)))

# Every page renders without a warning (groff -ww), and every function the
# library headers declare has a page of its own name (tools/man-check).
man-check: lib
	$(KTAP_RUN) man-check env CC="$(CC)" $(SRC)/tools/man-check $(SRC) $(LIBDIR_OUT)

unit: man-check

# ---------------------------------------------------------------- install
HEADERS := $(wildcard $(SRC)/userlib/include/*.h)
UAPI_HEADERS := $(SRC)/uapi/linux/kfdpool.h

# The module is installed when it was built for KVER (make modules KVER=...).
KO := $(KOUT)/kfdpool.ko
# Without DESTDIR this is the real system: run depmod.  With DESTDIR the
# packaging (or dkms) runs it on the target.  Debian's headers carry no
# System.map, so kbuild's own depmod step is skipped either way.
# Distribution kernels sign modules_install's output with their build key
# (CONFIG_MODULE_SIG_ALL), which their headers do not ship: signing would
# only fail noisily.  Secure Boot users install through DKMS, which signs
# with the machine owner key.
MODINST = $(MAKE) -C $(KDIR) M=$(KOUT) INSTALL_MOD_PATH=$(DESTDIR) \
	INSTALL_MOD_DIR=extra CONFIG_MODULE_SIG_ALL= modules_install

.PHONY: install-module install-userspace install-lib install-headers install-stat \
	install-man install-udev install-modules-load install-modprobe install-fortran \
	install-cmake

# Everything but the module: on a node where DKMS builds and installs the
# module, this installs the libraries, headers, pkg-config and CMake files,
# kfdpool-stat, man pages, Fortran module and the configuration files.
install-userspace: install-lib install-headers install-cmake install-stat install-man \
	install-udev install-modules-load install-modprobe install-fortran

install: install-module install-userspace

# A kfdpool.ko DKMS installed for KVER (dkms status, or a kfdpool.ko* below
# lib/modules/KVER outside extra/, e.g. updates/dkms) is the one modprobe
# loads: a second copy in extra/ would only shadow or confuse it.
DKMS_KO = $(strip $(if $(DESTDIR),,$(shell dkms status -m kfdpool -k $(KVER) 2>/dev/null | \
	grep -q ': installed' && echo dkms)) \
	$(filter-out %/extra/kfdpool.ko%,$(wildcard $(DESTDIR)/lib/modules/$(KVER)/*/kfdpool.ko* \
	$(DESTDIR)/lib/modules/$(KVER)/*/*/kfdpool.ko*)))
install-module:
	@if [ -n "$(DKMS_KO)" ]; then \
		echo "note: DKMS installed kfdpool.ko for $(KVER) ($(DKMS_KO)):" \
			"not installing a second one (make install-userspace installs the rest)"; \
	elif [ -f $(KO) ]; then \
		echo "$(MODINST)"; $(MODINST) || exit 1; \
		if [ -z "$(DESTDIR)" ]; then $(DEPMOD) -a $(KVER); fi; \
	else echo "note: $(KO) not built: module not installed" \
		"(make modules KVER=$(KVER) first)"; fi

# Both libraries: the real file, the SONAME link, the development link, the
# static archive and the .pc file (for this PREFIX and LIBDIR, whatever
# PREFIX the build had).
INSTALL_LIBS := libkfdpool libkfdpool-hip
install-lib: lib
	$(INSTALL) -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR)
	for l in $(INSTALL_LIBS); do \
		$(INSTALL) -m 0755 $(LIBDIR_OUT)/$$l.so.$(LIB_VERSION) $(DESTDIR)$(LIBDIR)/ && \
		ln -sfn $$l.so.$(LIB_VERSION) $(DESTDIR)$(LIBDIR)/$$l.so.1 && \
		ln -sfn $$l.so.1 $(DESTDIR)$(LIBDIR)/$$l.so && \
		$(INSTALL) -m 0644 $(LIBDIR_OUT)/$$l.a $(DESTDIR)$(LIBDIR)/ && \
		sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(LIB_VERSION)|' \
			-e 's|^libdir=.*|libdir=$(LIBDIR)|' -e 's|^includedir=.*|includedir=$(INCLUDEDIR)|' \
			$(SRC)/userlib/$${l#lib}.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/$${l#lib}.pc && \
		chmod 0644 $(DESTDIR)$(PKGCONFIGDIR)/$${l#lib}.pc || exit 1; \
	done
	@if [ -z "$(DESTDIR)" ]; then echo "$(LDCONFIG)"; $(LDCONFIG); fi

# find_package(kfdpool): paths relative to the package's directory, so that
# the tree works where it is installed and below a DESTDIR alike.
CMAKE_REL = $(shell realpath -m --relative-to=$(CMAKEDIR) $(1))
install-cmake:
	$(INSTALL) -d $(DESTDIR)$(CMAKEDIR)
	sed -e 's|@LIBDIR_REL@|$(call CMAKE_REL,$(LIBDIR))|' \
		-e 's|@INCLUDEDIR_REL@|$(call CMAKE_REL,$(INCLUDEDIR))|' \
		$(SRC)/userlib/cmake/kfdpool-config.cmake.in > $(DESTDIR)$(CMAKEDIR)/kfdpool-config.cmake
	sed -e 's|@VERSION@|$(LIB_VERSION)|' $(SRC)/userlib/cmake/kfdpool-config-version.cmake.in \
		> $(DESTDIR)$(CMAKEDIR)/kfdpool-config-version.cmake
	chmod 0644 $(DESTDIR)$(CMAKEDIR)/kfdpool-config.cmake \
		$(DESTDIR)$(CMAKEDIR)/kfdpool-config-version.cmake

install-headers:
	$(INSTALL) -d $(DESTDIR)$(INCLUDEDIR)/linux
	$(INSTALL) -m 0644 $(HEADERS) $(DESTDIR)$(INCLUDEDIR)/
	$(INSTALL) -m 0644 $(UAPI_HEADERS) $(DESTDIR)$(INCLUDEDIR)/linux/

install-stat: stat
	$(INSTALL) -d $(DESTDIR)$(BINDIR)
	$(INSTALL) -m 0755 $(STAT_OUT)/kfdpool-stat $(DESTDIR)$(BINDIR)/

install-man:
	@set -e; for n in $(MAN_SECTIONS); do \
		$(INSTALL) -d $(DESTDIR)$(MANDIR)/man$$n; \
		echo "install man pages in $(DESTDIR)$(MANDIR)/man$$n"; \
		$(INSTALL) -m 0644 $(SRC)/man/man$$n/*.$$n $(DESTDIR)$(MANDIR)/man$$n/; \
	done

# udev reads its rules at start: a new rule applies to a /dev/kfdpool that
# exists already only once udev reloaded them and replayed the device's
# event.  (Without udev running, udevadm fails: nothing to tell.)
UDEV_RELOAD = if [ -z "$(DESTDIR)" ] && command -v $(UDEVADM) >/dev/null 2>&1; then \
		echo "$(UDEVADM) control --reload-rules; $(UDEVADM) trigger --subsystem-match=misc --sysname-match=kfdpool"; \
		$(UDEVADM) control --reload-rules 2>/dev/null && \
		$(UDEVADM) trigger --subsystem-match=misc --sysname-match=kfdpool 2>/dev/null || \
		echo "note: udev is not running: the rule applies from its next start"; fi
install-udev:
	$(INSTALL) -d $(DESTDIR)$(UDEVRULESDIR)
	$(INSTALL) -m 0644 $(SRC)/packaging/60-kfdpool.rules $(DESTDIR)$(UDEVRULESDIR)/
	@$(UDEV_RELOAD)

# Configuration the administrator may have edited is never overwritten
# (install-conf FROM TO), and uninstall removes it only when unchanged.
install-conf = if [ -e $(2) ] && ! cmp -s $(1) $(2); then \
		echo "note: $(2) exists and differs: left as it is"; \
	else echo "install $(2)"; $(INSTALL) -D -m 0644 $(1) $(2); fi
uninstall-conf = if cmp -s $(1) $(2); then rm -f $(2); \
	elif [ -e $(2) ]; then echo "note: $(2) was changed: left as it is"; fi

# Loads the module at boot; without it the first open of /dev/kfdpool does.
install-modules-load:
	@$(call install-conf,$(SRC)/packaging/kfdpool.modules-load.conf,$(DESTDIR)$(MODULESLOADDIR)/kfdpool.conf)

# An example: every option is commented out.
install-modprobe:
	@$(call install-conf,$(SRC)/packaging/kfdpool.modprobe.conf,$(DESTDIR)$(MODPROBEDIR)/kfdpool.conf)

ifeq ($(HAVE_FC),y)
install-fortran: fortran
	$(INSTALL) -d $(DESTDIR)$(FMODDIR)
	$(INSTALL) -m 0644 $(FORTRAN_OUT)/hipfort_kfdpool.mod $(DESTDIR)$(FMODDIR)/
	$(INSTALL) -m 0644 $(FORTRAN_MOD_SRC) $(DESTDIR)$(FMODDIR)/
else
install-fortran:
	@echo "note: no Fortran compiler: Fortran module not installed"
endif

uninstall: uninstall-module uninstall-userspace

uninstall-module:
	rm -f $(DESTDIR)/lib/modules/$(KVER)/extra/kfdpool.ko \
		$(DESTDIR)/lib/modules/$(KVER)/extra/kfdpool.ko.xz \
		$(DESTDIR)/lib/modules/$(KVER)/extra/kfdpool.ko.gz \
		$(DESTDIR)/lib/modules/$(KVER)/extra/kfdpool.ko.zst
	-rmdir $(DESTDIR)/lib/modules/$(KVER)/extra 2>/dev/null
	if [ -z "$(DESTDIR)" ] && [ -d /lib/modules/$(KVER) ]; then $(DEPMOD) -a $(KVER); fi

uninstall-userspace:
	for l in $(INSTALL_LIBS); do \
		rm -f $(DESTDIR)$(LIBDIR)/$$l.so.$(LIB_VERSION) $(DESTDIR)$(LIBDIR)/$$l.so.1 \
			$(DESTDIR)$(LIBDIR)/$$l.so $(DESTDIR)$(LIBDIR)/$$l.a \
			$(DESTDIR)$(PKGCONFIGDIR)/$${l#lib}.pc; done
	@if [ -z "$(DESTDIR)" ]; then echo "$(LDCONFIG)"; $(LDCONFIG); fi
	rm -f $(DESTDIR)$(CMAKEDIR)/kfdpool-config.cmake $(DESTDIR)$(CMAKEDIR)/kfdpool-config-version.cmake
	-rmdir $(DESTDIR)$(CMAKEDIR) 2>/dev/null
	rm -f $(addprefix $(DESTDIR)$(INCLUDEDIR)/,$(notdir $(HEADERS))) \
		$(DESTDIR)$(INCLUDEDIR)/linux/kfdpool.h
	rm -f $(DESTDIR)$(BINDIR)/kfdpool-stat
	rm -f $(foreach p,$(MANPAGES),$(DESTDIR)$(MANDIR)/$(notdir $(patsubst %/,%,$(dir $(p))))/$(notdir $(p)))
	rm -f $(DESTDIR)$(UDEVRULESDIR)/60-kfdpool.rules
	@$(UDEV_RELOAD)
	@$(call uninstall-conf,$(SRC)/packaging/kfdpool.modules-load.conf,$(DESTDIR)$(MODULESLOADDIR)/kfdpool.conf)
	@$(call uninstall-conf,$(SRC)/packaging/kfdpool.modprobe.conf,$(DESTDIR)$(MODPROBEDIR)/kfdpool.conf)
	rm -f $(DESTDIR)$(FMODDIR)/hipfort_kfdpool.mod $(DESTDIR)$(FMODDIR)/hipfort_kfdpool.f90
	-rmdir $(DESTDIR)$(FMODDIR) $(DESTDIR)$(LIBDIR)/kfdpool 2>/dev/null

# For the running kernel if it has a build tree, else Debian's 6.12.
IC_KVER = $(if $(wildcard $(KDIR)/Makefile),$(KVER),$(shell $(SRC)/tools/kernels 6.12))
install-check: lib stat fortran
	$(SRC)/packaging/install-check $(SRC) $(BUILD)/install-check $(IC_KVER)

# ---------------------------------------------------------------- DKMS
# The files the module build needs, laid out as dkms.conf expects them.
DKMS_FILES := dkms.conf Kbuild uapi/linux/kfdpool.h packaging/dkms-hook \
	packaging/60-kfdpool.rules packaging/kfdpool.modules-load.conf \
	$(patsubst $(SRC)/%,%,$(wildcard $(SRC)/kmod/*.c $(SRC)/kmod/*.h $(SRC)/kmod/compat/*.h \
		$(SRC)/kmod/probes/*.c $(SRC)/kmod/probes/*.sym))
DKMS_SRCDIR ?= /usr/src/kfdpool-$(PKG_VERSION)

dkms-src:
	@set -e; for f in $(DKMS_FILES); do \
		$(INSTALL) -D -m $$(if [ -x $(SRC)/$$f ]; then echo 0755; else echo 0644; fi) \
			$(SRC)/$$f $(DESTDIR)$(DKMS_SRCDIR)/$$f; done
	@echo "DKMS source in $(DESTDIR)$(DKMS_SRCDIR): dkms add -m kfdpool -v $(PKG_VERSION)"

dkms-check:
	$(SRC)/packaging/dkms-check $(SRC) $(BUILD)/dkms
