# SPDX-License-Identifier: MIT
# libkfdpool, included from the top-level Makefile.

LIB_SONAME := libkfdpool.so.1
LIB_VERSION := 1.0.0
LIBDIR_OUT := $(BUILD)/lib
LIB_SRCS := $(wildcard $(SRC)/userlib/src/*.c)
LIB_OBJS := $(patsubst $(SRC)/userlib/src/%.c,$(LIBDIR_OUT)/obj/%.o,$(LIB_SRCS))
LIB_CPPFLAGS := -I$(SRC)/userlib/include -I$(SRC)/uapi -D_GNU_SOURCE
LIB_LDLIBS := -lpthread

lib: $(LIBDIR_OUT)/libkfdpool.so $(LIBDIR_OUT)/libkfdpool.a $(LIBDIR_OUT)/kfdpool.pc

$(LIBDIR_OUT)/obj/%.o: $(SRC)/userlib/src/%.c $(wildcard $(SRC)/userlib/src/*.h $(SRC)/userlib/include/*.h) $(SRC)/uapi/linux/kfdpool.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARNFLAGS) -Werror -fPIC -fvisibility=hidden $(LIB_CPPFLAGS) -c -o $@ $<

$(LIBDIR_OUT)/libkfdpool.so.$(LIB_VERSION): $(LIB_OBJS)
	$(CC) -shared -Wl,-soname,$(LIB_SONAME) -Wl,--no-undefined -o $@ $^ $(LIB_LDLIBS)

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

# kfdpool-query, a small tool over the library.
tools: $(BUILD)/bin/kfdpool-query
$(BUILD)/bin/kfdpool-query: $(SRC)/tools/query.c $(LIBDIR_OUT)/libkfdpool.so
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARNFLAGS) $(LIB_CPPFLAGS) -o $@ $< -L$(LIBDIR_OUT) \
		-Wl,-rpath,$(LIBDIR_OUT) -lkfdpool
