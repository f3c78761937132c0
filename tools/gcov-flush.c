// SPDX-License-Identifier: GPL-2.0-only
/*
 * gcov-flush.so, LD_PRELOADed by make coverage (tools/coverage) into the
 * programs that run the instrumented library.  gcov writes a shared
 * object's counters from its destructors (.fini_array), which _exit()
 * skips; the kselftest harness ends every test's child with _exit(), so
 * without this the library's counters of every test would be lost.
 *
 * _exit() and _Exit() here first run the .fini_array of every loaded
 * object, the program included, whose path starts with $KFDPOOL_GCOV_FLUSH
 * (the coverage build directory), as exit() would, then end the process.
 * Nothing else of exit() runs: no atexit handlers, no stdio flush (a forked
 * child must not write its parent's buffered output twice).
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_DSOS 16

struct fini {
	void (**fn)(void);
	size_t n;
};

struct fini_set {
	const char *prefix;
	char exe[4096];
	struct fini dso[MAX_DSOS];
	int n;
};

static int find_fini(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *name = info->dlpi_name;
	struct fini_set *set = data;
	ElfW(Addr) arr = 0;
	size_t bytes = 0;
	const ElfW(Dyn) *d;
	int i;

	if (name && !*name)
		name = set->exe;	/* the program itself */
	if (!name || strncmp(name, set->prefix, strlen(set->prefix)))
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
			continue;
		d = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
		for (; d->d_tag != DT_NULL; d++) {
			if (d->d_tag == DT_FINI_ARRAY)
				arr = d->d_un.d_ptr;
			else if (d->d_tag == DT_FINI_ARRAYSZ)
				bytes = d->d_un.d_val;
		}
	}
	if (arr && bytes && set->n < MAX_DSOS) {
		set->dso[set->n].fn = (void *)(info->dlpi_addr + arr);
		set->dso[set->n].n = bytes / sizeof(void (*)(void));
		set->n++;
	}
	return 0;
}

static void flush(void)
{
	static int done;
	static struct fini_set set;
	ssize_t len;
	size_t j;
	int i;

	set.prefix = getenv("KFDPOOL_GCOV_FLUSH");
	if (!set.prefix || !*set.prefix ||
	    __atomic_exchange_n(&done, 1, __ATOMIC_SEQ_CST))
		return;
	len = readlink("/proc/self/exe", set.exe, sizeof(set.exe) - 1);
	set.exe[len > 0 ? len : 0] = 0;
	/* Called outside dl_iterate_phdr(), which holds the loader's lock. */
	dl_iterate_phdr(find_fini, &set);
	for (i = 0; i < set.n; i++)
		for (j = set.dso[i].n; j-- > 0;)
			set.dso[i].fn[j]();
}

void _exit(int status)
{
	flush();
	for (;;)
		syscall(SYS_exit_group, status);
}

void _Exit(int status)
{
	_exit(status);
}
