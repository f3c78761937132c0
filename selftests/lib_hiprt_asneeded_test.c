// SPDX-License-Identifier: GPL-2.0-only
/*
 * libkfdpool-hip beside HIP's runtime in a program built with
 * -Wl,--as-needed and "pkg-config --libs kfdpool-hip" that calls none of
 * kfdpool-hip's names itself: its HIP code is a plugin it loads with
 * dlopen (hiprt/libhiprt_plain.so, lib_hiprt_dso.c linked -lamdhip64
 * alone, a library that knows nothing of kfdpool), which brings the
 * runtime.  --as-needed would drop libkfdpool-hip from such a program;
 * the .pc file's flags keep it, first in the process (see lib_hiprt.h).
 *
 * Also: the same flags put after -lamdhip64 (hiprt/after) keep the library
 * too, which then says on stderr, once, that it is bypassed and how to fix
 * the link.
 */
#include <libgen.h>

#define HIPRT_TESTS
#include "lib_hiprt.h"

/* The directory of this program: the helpers are in its hiprt/. */
static const char *self_dir(void)
{
	static char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n < 0)
		return ".";
	self[n] = 0;
	return dirname(self);
}

const struct hiprt_api *hiprt_api(void)
{
	const struct hiprt_api *(*get)(void);
	char path[4200];
	void *h;

	snprintf(path, sizeof(path), "%s/hiprt/libhiprt_plain.so", self_dir());
	h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		return NULL;
	}
	get = (const struct hiprt_api *(*)(void))dlsym(h, "hiprt_dso_api");
	return get ? get() : NULL;
}

TEST(linked_after_the_runtime_it_says_so_once)
{
	char prog[4200], out[8192];
	int pipefd[2], st, lines = 0;
	ssize_t n, len = 0;
	pid_t pid;
	char *c;

	snprintf(prog, sizeof(prog), "%s/hiprt/after", self_dir());
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		dup2(pipefd[1], 2);
		dup2(pipefd[1], 1);
		execl(prog, prog, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	while ((n = read(pipefd[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += n;
	close(pipefd[0]);
	out[len] = 0;
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	TH_LOG("hiprt/after said:\n%s", out);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	for (c = out; (c = strstr(c, "kfdpool:")); c++)
		lines++;
	EXPECT_EQ(1, lines);
	EXPECT_TRUE(strstr(out, "bypassed") != NULL);
	EXPECT_TRUE(strstr(out, "-lkfdpool-hip before -lamdhip64") != NULL);
	EXPECT_TRUE(strstr(out, "LD_PRELOAD=libkfdpool-hip.so.1") != NULL);
	/* It was loaded (kept by the .pc's flags), and lost. */
	EXPECT_TRUE(strstr(out, "libkfdpool-hip loaded: yes") != NULL);
	EXPECT_TRUE(strstr(out, "hipFree from: libamdhip64") != NULL);
}
