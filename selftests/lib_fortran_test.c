// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fortran through hipfort_kfdpool: a Fortran exporter and a Fortran
 * importer (userlib/fortran/test, built into <build>/bin) share a host pool
 * and four allocations, by file descriptor and by fabric handle; the
 * importer checks every word the exporter wrote.  Also: the Fortran derived
 * types have the C structs' sizes and offsets.
 *
 * The pool fd travels the way a real application's would not need to here:
 * the exporter prints its number, and this program takes it from the
 * exporter with pidfd_getfd() and hands it to the importer on exec.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "kfdpool_util.h"

#if __has_include(<kfdpool_hip.h>)
#include <kfdpool_hip.h>
#define HAVE_HIP_API 1
#endif

#define NPTR 4

static void fprog(const char *name, char *out, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	self[n > 0 ? n : 0] = '\0';
	snprintf(out, len, "%s/../bin/%s", dirname(self), name);
}

#ifdef HAVE_HIP_API
TEST(layout)
{
	char prog[PATH_MAX], cmd[PATH_MAX + 8], name[64];
	long v[7];
	FILE *f;
	int found = 0;

	fprog("kfdpool_f_layout", prog, sizeof(prog));
	if (access(prog, X_OK))
		SKIP(return, "Fortran programs not built (need gfortran and the HIP API of libkfdpool)");
	snprintf(cmd, sizeof(cmd), "%s", prog);
	f = popen(cmd, "r");
	ASSERT_NE(NULL, f);
	while (fscanf(f, "%63s", name) == 1) {
		if (!strcmp(name, "hipMemPoolProps")) {
			ASSERT_EQ(7, fscanf(f, "%ld %ld %ld %ld %ld %ld %ld", &v[0], &v[1],
					    &v[2], &v[3], &v[4], &v[5], &v[6]));
			EXPECT_EQ(sizeof(hipMemPoolProps), v[0]);
			EXPECT_EQ(offsetof(hipMemPoolProps, allocType), v[1]);
			EXPECT_EQ(offsetof(hipMemPoolProps, handleTypes), v[2]);
			EXPECT_EQ(offsetof(hipMemPoolProps, location), v[3]);
			EXPECT_EQ(offsetof(hipMemPoolProps, win32SecurityAttributes), v[4]);
			EXPECT_EQ(offsetof(hipMemPoolProps, maxSize), v[5]);
			EXPECT_EQ(offsetof(hipMemPoolProps, reserved), v[6]);
			found++;
		} else if (!strcmp(name, "hipMemPoolPtrExportData")) {
			ASSERT_EQ(1, fscanf(f, "%ld", &v[0]));
			EXPECT_EQ(sizeof(hipMemPoolPtrExportData), v[0]);
			found++;
		} else if (!strcmp(name, "hipMemAccessDesc")) {
			ASSERT_EQ(3, fscanf(f, "%ld %ld %ld", &v[0], &v[1], &v[2]));
			EXPECT_EQ(sizeof(hipMemAccessDesc), v[0]);
			EXPECT_EQ(offsetof(hipMemAccessDesc, flags), v[1]);
			EXPECT_EQ(sizeof(hipMemAccessDesc), v[2]);	/* array stride */
			found++;
		} else if (!strcmp(name, "hipMemLocation")) {
			ASSERT_EQ(2, fscanf(f, "%ld %ld", &v[0], &v[1]));
			EXPECT_EQ(sizeof(hipMemLocation), v[0]);
			EXPECT_EQ(offsetof(hipMemLocation, id), v[1]);
			found++;
		} else if (!strcmp(name, "reserved_zero")) {
			ASSERT_EQ(1, fscanf(f, "%ld", &v[0]));
			EXPECT_EQ(0, v[0]);	/* default-initialised to zero */
			found++;
		}
	}
	EXPECT_EQ(0, pclose(f));
	EXPECT_EQ(5, found);
}
#endif

/*
 * Run the pair once.  @mode: "fd" or "fabric".  Returns 0 when both
 * programs reported success; prints what they said.
 */
static void share(struct __test_metadata *_metadata, const char *mode)
{
	char exporter[PATH_MAX], importer[PATH_MAX], *line = NULL;
	char *args[3 + NPTR + 1], handle[160], ptrs[NPTR][140];
	int to_exp[2], from_exp[2], from_imp[2], st, nptr = 0, ok_imp = 0;
	int pools0 = kfd_pool_count(), bufs0 = kfd_dmabuf_count_now(), got_fd = -1;
	size_t cap = 0;
	pid_t exp, imp;
	FILE *in;
	char buf[256];

	fprog("kfdpool_f_exporter", exporter, sizeof(exporter));
	fprog("kfdpool_f_importer", importer, sizeof(importer));
	if (access(exporter, X_OK) || access(importer, X_OK))
		SKIP(return, "Fortran programs not built (need gfortran and the HIP API of libkfdpool)");
	ASSERT_EQ(0, pipe(to_exp));
	ASSERT_EQ(0, pipe(from_exp));
	exp = fork();
	ASSERT_LE(0, exp);
	if (exp == 0) {
		dup2(to_exp[0], 0);
		dup2(from_exp[1], 1);
		execl(exporter, exporter, mode, (char *)NULL);
		_exit(127);
	}
	close(to_exp[0]);
	close(from_exp[1]);
	in = fdopen(from_exp[0], "r");
	ASSERT_NE(NULL, in);
	handle[0] = '\0';
	while (getline(&line, &cap, in) > 0) {
		int k, fd;

		printf("# exporter: %s", line);
		if (sscanf(line, "fd %d", &fd) == 1) {
			int pidfd = (int)syscall(SYS_pidfd_open, exp, 0);

			ASSERT_LE(0, pidfd);
			got_fd = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
			close(pidfd);
			ASSERT_LE(0, got_fd);
			snprintf(handle, sizeof(handle), "%d", got_fd);
		} else if (sscanf(line, "fabric %140s", handle) == 1) {
			;
		} else if (sscanf(line, "ptr %d %139s", &k, buf) == 2 &&
			   k >= 1 && k <= NPTR) {
			snprintf(ptrs[k - 1], sizeof(ptrs[0]), "%.130s", buf);
			nptr++;
		} else if (!strncmp(line, "ready", 5)) {
			break;
		} else if (!strncmp(line, "unsupported", 11)) {
			fclose(in);
			close(to_exp[1]);
			waitpid(exp, &st, 0);
			free(line);
			SKIP(return, "the module offers no %s handles", mode);
		}
	}
	ASSERT_NE(0, handle[0]);
	ASSERT_EQ(NPTR, nptr);

	ASSERT_EQ(0, pipe(from_imp));
	imp = fork();
	ASSERT_LE(0, imp);
	if (imp == 0) {
		int i;

		if (got_fd >= 0)	/* pidfd_getfd gave it close-on-exec */
			fcntl(got_fd, F_SETFD, 0);
		dup2(from_imp[1], 1);
		args[0] = importer;
		args[1] = (char *)mode;
		args[2] = handle;
		for (i = 0; i < NPTR; i++)
			args[3 + i] = ptrs[i];
		args[3 + NPTR] = NULL;
		execv(importer, args);
		_exit(127);
	}
	close(from_imp[1]);
	if (got_fd >= 0)
		close(got_fd);
	{
		FILE *ii = fdopen(from_imp[0], "r");

		ASSERT_NE(NULL, ii);
		while (fgets(buf, sizeof(buf), ii)) {
			printf("# importer: %s", buf);
			if (!strncmp(buf, "importer ok", 11))
				ok_imp = 1;
		}
		fclose(ii);
	}
	ASSERT_EQ(imp, waitpid(imp, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	EXPECT_EQ(1, ok_imp);

	/* the exporter frees and destroys once the importer is done */
	EXPECT_EQ(5, write(to_exp[1], "done\n", 5));
	close(to_exp[1]);
	while (getline(&line, &cap, in) > 0) {
		printf("# exporter: %s", line);
		if (!strncmp(line, "exporter ok", 11))
			nptr = -1;
	}
	fclose(in);
	free(line);
	ASSERT_EQ(exp, waitpid(exp, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	EXPECT_EQ(-1, nptr);

	/* nothing left behind: no pool, no dma-buf */
	if (pools0 >= 0)
		EXPECT_EQ(pools0, kfd_pool_count());
	if (bufs0 >= 0)
		EXPECT_EQ(bufs0, kfd_dmabuf_count_now());
}

/* Emulated guests are slow: give the pair minutes, not the default 30 s. */
FIXTURE(fortran) {
	int unused;
};

FIXTURE_SETUP(fortran)
{
}

FIXTURE_TEARDOWN(fortran)
{
}

TEST_F_TIMEOUT(fortran, share_by_fd, 300)
{
	share(_metadata, "fd");
}

TEST_F_TIMEOUT(fortran, share_by_fabric_handle, 300)
{
	share(_metadata, "fabric");
}

TEST_HARNESS_MAIN
