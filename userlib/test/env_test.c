// SPDX-License-Identifier: MIT
/*
 * Every KFDPOOL_* variable the library reads, with values it must refuse:
 * the call fails (hipErrorInvalidValue, -EINVAL) and stderr gets exactly
 * one line naming the variable, the value and what is accepted.  Values it
 * accepts say nothing.  Each case runs in a child with stderr on a pipe
 * (some variables are read once per process).  No module needed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kfdpool.h"
#include "kfdpool_hip.h"
#include "kselftest_harness.h"

/* What one call in a child returned, and what it wrote to stderr. */
struct outcome {
	int ret;
	char err[1024];
};

static hipMemPoolProps host_props(void)
{
	hipMemPoolProps p;

	memset(&p, 0, sizeof(p));
	p.allocType = hipMemAllocationTypePinned;
	p.handleTypes = hipMemHandleTypePosixFileDescriptor;
	p.location.type = hipMemLocationTypeHost;
	return p;
}

static int call_create(void)
{
	hipMemPoolProps p = host_props();
	hipMemPool_t pool;

	return hipMemPoolCreate(&pool, &p);
}

static int call_import(void)
{
	hipMemPool_t pool;

	/* fd 1 is no pool: refused later, if the variable passes (NULL,
	 * fd 0, is refused before, as clr refuses it). */
	return hipMemPoolImportFromShareableHandle(&pool, (void *)(intptr_t)1,
		hipMemHandleTypePosixFileDescriptor, 0);
}

static int call_batch(void)
{
	struct kfdpool_release r;

	memset(&r, 0, sizeof(r));
	return kfdpool_releasev(-1, &r, 1);
}

/* The transport the call used: what KFDPOOL_BATCH names, or AUTO when
 * none could run (no module here, or it lacks the feature). */
static int call_batch_mode(void)
{
	call_batch();
	return kfdpool_last_batch_mode();
}

/* After kfdpool_set_batch_mode(), a refused KFDPOOL_BATCH no longer
 * matters. */
static int call_batch_after_set(void)
{
	struct kfdpool_release r;

	memset(&r, 0, sizeof(r));
	if (kfdpool_releasev(-1, &r, 1) != -EINVAL)
		return 1000;
	kfdpool_set_batch_mode(KFDPOOL_BATCH_AUTO);
	return kfdpool_releasev(-1, &r, 1);
}

static void run(const char *name, const char *value, int (*call)(void),
		struct outcome *o)
{
	int pfd[2], status;
	ssize_t n, len = 0;
	pid_t pid;

	memset(o, 0, sizeof(*o));
	if (pipe(pfd))
		abort();
	pid = fork();
	if (pid < 0)
		abort();
	if (!pid) {
		int ret;

		dup2(pfd[1], 2);
		close(pfd[0]);
		if (value)
			setenv(name, value, 1);
		else
			unsetenv(name);
		ret = call();
		/* Map the result to an exit code: hipError_t or -errno. */
		_exit(ret < 0 ? 200 + (-ret & 0x3f) : ret & 0xff);
	}
	close(pfd[1]);
	while ((n = read(pfd[0], o->err + len, sizeof(o->err) - 1 - len)) > 0)
		len += n;
	close(pfd[0]);
	waitpid(pid, &status, 0);
	o->ret = WEXITSTATUS(status);
}

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/*
 * An accepted value says nothing.  Where the call goes on to open
 * /dev/kfdpool and there is no module (the build host), the one line that
 * says so is the only thing allowed.
 */
static int accepted(const char *err)
{
	return !*err || (lines(err) == 1 &&
			 !strncmp(err, "kfdpool: /dev/kfdpool: ", 23));
}

/* One line, naming @name, @value and (part of) what is accepted. */
#define EXPECT_REFUSED(o, name, value, accepted, code)			\
	do {								\
		EXPECT_EQ((code), (o)->ret) TH_LOG("%s=%s", name, value); \
		EXPECT_EQ(1, lines((o)->err)) TH_LOG("stderr: %s", (o)->err); \
		EXPECT_TRUE(strstr((o)->err, name) != NULL);		\
		EXPECT_TRUE(strstr((o)->err, value) != NULL);		\
		EXPECT_TRUE(strstr((o)->err, accepted) != NULL)		\
			TH_LOG("stderr: %s", (o)->err);			\
	} while (0)

TEST(backend)
{
	static const char *const bad[] = { "bogus", "Module", "module ",
					   "dma-heap", "kfd0", "x" };
	struct outcome o;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		run("KFDPOOL_BACKEND", bad[i], call_create, &o);
		EXPECT_REFUSED(&o, "KFDPOOL_BACKEND", bad[i],
			       "module, dmaheap, udmabuf, vgem, kfd",
			       hipErrorInvalidValue);
		run("KFDPOOL_BACKEND", bad[i], call_import, &o);
		EXPECT_REFUSED(&o, "KFDPOOL_BACKEND", bad[i],
			       "module, dmaheap, udmabuf, vgem, kfd",
			       hipErrorInvalidValue);
	}
	/* kfd never serves a host pool. */
	run("KFDPOOL_BACKEND", "kfd", call_create, &o);
	EXPECT_REFUSED(&o, "KFDPOOL_BACKEND", "kfd", "host pool",
		       hipErrorInvalidValue);
	/* A backend's name is accepted (whether it works here or not). */
	run("KFDPOOL_BACKEND", "module", call_create, &o);
	EXPECT_TRUE(accepted(o.err)) TH_LOG("stderr: %s", o.err);
	run("KFDPOOL_BACKEND", "", call_create, &o);
	EXPECT_TRUE(accepted(o.err)) TH_LOG("stderr: %s", o.err);
}

TEST(chunk_size)
{
	static const char *const bad[] = {
		"bogus", "0", "4096", "65535", "65537", "-1", "-65536",
		" 65536", "+65536", "2Mx", "2MB", "2 M", "64k1",
		"99999999999999999999", "18446744073709551615g", "0x10001",
		"1t",
	};
	static const char *const good[] = { "65536", "64k", "64K", "2M",
					    "2m", "1g", "0x100000" };
	struct outcome o;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		run("KFDPOOL_CHUNK_SIZE", bad[i], call_create, &o);
		EXPECT_REFUSED(&o, "KFDPOOL_CHUNK_SIZE", bad[i],
			       "a multiple of 4096 and at least 65536",
			       hipErrorInvalidValue);
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		run("KFDPOOL_CHUNK_SIZE", good[i], call_create, &o);
		EXPECT_TRUE(accepted(o.err)) TH_LOG("%s: stderr: %s", good[i], o.err);
	}
}

TEST(batch)
{
	static const char *const bad[] = { "bogus", "URING", "io_uring",
					   "ioctl ", "1" };
	static const char *const good[] = { "auto", "uring", "ioctl",
					    "single", "" };
	static const struct {
		const char *value;
		enum kfdpool_batch_mode mode;
	} sel[] = {
		{ "uring", KFDPOOL_BATCH_URING },
		{ "ioctl", KFDPOOL_BATCH_IOCTL },
		{ "single", KFDPOOL_BATCH_SINGLE },
	};
	struct outcome o;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		run("KFDPOOL_BATCH", bad[i], call_batch, &o);
		EXPECT_REFUSED(&o, "KFDPOOL_BATCH", bad[i],
			       "auto, uring, ioctl, single", 200 + EINVAL);
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		run("KFDPOOL_BATCH", good[i], call_batch, &o);
		EXPECT_STREQ("", o.err) TH_LOG("%s", good[i]);
		/* Refused for other reasons here (no module, fd -1). */
		EXPECT_NE(200 + EINVAL, o.ret) TH_LOG("%s", good[i]);
	}
	/* Each value selects its own transport, never another one. */
	for (i = 0; i < sizeof(sel) / sizeof(sel[0]); i++) {
		run("KFDPOOL_BATCH", sel[i].value, call_batch_mode, &o);
		EXPECT_TRUE(o.ret == (int)sel[i].mode ||
			    o.ret == KFDPOOL_BATCH_AUTO)
			TH_LOG("KFDPOOL_BATCH=%s used mode %d", sel[i].value,
			       o.ret);
	}
	/* Setting the mode in the program overrides the variable: the call
	 * runs, and -1 is no descriptor (-EBADF, as the exit code above). */
	run("KFDPOOL_BATCH", "bogus", call_batch_after_set, &o);
	EXPECT_EQ(200 + EBADF, o.ret);
}

TEST_HARNESS_MAIN
