// SPDX-License-Identifier: GPL-2.0-only
/*
 * Persistent pools through the libraries: libkfdpool's create flag, owner
 * handle, adoption and destruction (and their argument checks), and
 * libkfdpool-hip's extensions from end to end: a producer process fills a
 * persistent pool and exits without freeing, a consumer started after it
 * imports every pointer through a Fabric handle, an adopter replaces one
 * buffer and revokes its old record, and the pool is ended.  Persistent
 * pools are off by default: a refusal at that or another per-user bound
 * names it on stderr.
 */
#include <sys/wait.h>

#include "lib_hip_util.h"
#include "kselftest_harness.h"

#define NBUF	3
#define BUFSZ	(96u << 10)
#define TAG	0x5045525349535400ULL	/* "PERSIST" */

struct shared {
	kfdpoolFabricHandle_t fabric;
	kfdpoolOwnerHandle_t owner;
	hipMemPoolPtrExportData data[NBUF];
};

static int reap(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}

/* Run @fn(@sh) in a child; the child writes *@sh back.  Its exit code. */
static int child(int (*fn)(struct shared *sh), struct shared *sh)
{
	int p[2], ret;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		ret = fn(sh);
		if (write(p[1], sh, sizeof(*sh)) != sizeof(*sh))
			ret = 99;
		_exit(ret);
	}
	close(p[1]);
	if (read(p[0], sh, sizeof(*sh)) != sizeof(*sh))
		memset(sh, 0, sizeof(*sh));
	close(p[0]);
	return reap(pid);
}

/* Fill a persistent pool, export it, and leave without freeing. */
static int producer(struct shared *sh)
{
	hipMemPoolProps props = lh_props(hipMemHandleTypeFabric, 0);
	hipMemPool_t pool;
	void *p[NBUF];
	int i;

	if (kfdpoolMemPoolCreatePersistent(&pool, &props))
		return 10;
	for (i = 0; i < NBUF; i++) {
		if (hipMallocFromPoolAsync(&p[i], BUFSZ, pool, 0))
			return 11;
		lh_fill(p[i], BUFSZ, i, TAG);
		if (hipMemPoolExportPointer(&sh->data[i], p[i]))
			return 12;
	}
	if (hipMemPoolExportToShareableHandle(&sh->fabric, pool,
					      hipMemHandleTypeFabric, 0) ||
	    kfdpoolMemPoolExportOwnerHandle(&sh->owner, pool))
		return 13;
	return 0;
}

/* Import every pointer; buffer @fresh (or none: -1) has tag TAG + 1. */
static int consumer_fresh(struct shared *sh, int fresh)
{
	hipMemPool_t pool;
	void *p;
	int i;

	if (hipMemPoolImportFromShareableHandle(&pool, &sh->fabric,
						hipMemHandleTypeFabric, 0))
		return 10;
	for (i = 0; i < NBUF; i++) {
		if (hipMemPoolImportPointer(&p, pool, &sh->data[i]))
			return 20 + i;
		if (lh_check(p, BUFSZ, i, i == fresh ? TAG + 1 : TAG) >= 0)
			return 30 + i;
		if (hipFree(p))
			return 40 + i;
	}
	/* An owner handle of an imported pool: there is none to give. */
	if (kfdpoolMemPoolExportOwnerHandle(&sh->owner, pool) !=
	    hipErrorInvalidValue)
		return 50;
	return hipMemPoolDestroy(pool) ? 51 : 0;
}

static int consumer(struct shared *sh)
{
	return consumer_fresh(sh, -1);
}

static int consumer_after(struct shared *sh)
{
	return consumer_fresh(sh, 0);
}

/* The old record of buffer 0 is refused. */
static int consumer_old(struct shared *sh)
{
	hipMemPool_t pool;
	void *p;

	if (hipMemPoolImportFromShareableHandle(&pool, &sh->fabric,
						hipMemHandleTypeFabric, 0))
		return 10;
	if (hipMemPoolImportPointer(&p, pool, &sh->data[0]) !=
	    hipErrorInvalidHandle)
		return 11;
	return hipMemPoolDestroy(pool) ? 12 : 0;
}

/* Adopt, replace buffer 0, revoke its old record, leave. */
static int adopter(struct shared *sh)
{
	hipMemPoolPtrExportData old = sh->data[0], mine;
	hipError_t res[2];
	hipMemPool_t pool, again;
	void *p;

	if (kfdpoolMemPoolAdopt(&pool, &sh->owner))
		return 10;
	if (strcmp(kfdpoolMemPoolBackend(pool), "module"))
		return 11;
	/* One owner at a time. */
	if (kfdpoolMemPoolAdopt(&again, &sh->owner) != hipErrorIllegalState)
		return 12;
	if (hipMallocFromPoolAsync(&p, BUFSZ, pool, 0))
		return 13;
	lh_fill(p, BUFSZ, 0, TAG + 1);
	if (hipMemPoolExportPointer(&mine, p))
		return 14;
	/* The record of this process's own pointer is hipFree's to revoke;
	 * the earlier owner's is revoked here, once. */
	res[0] = res[1] = hipErrorUnknown;
	if (kfdpoolMemPoolRevokeExports(pool, &mine, 1, res) !=
	    hipErrorInvalidValue || res[0] != hipErrorInvalidValue)
		return 15;
	if (kfdpoolMemPoolRevokeExports(pool, &old, 1, res) || res[0])
		return 16;
	if (kfdpoolMemPoolRevokeExports(pool, &old, 1, NULL) !=
	    hipErrorInvalidHandle)
		return 17;
	if (kfdpoolMemPoolRevokeExports(pool, NULL, 0, NULL) ||
	    kfdpoolMemPoolRevokeExports(pool, NULL, 1, NULL) !=
	    hipErrorInvalidValue)
		return 18;
	sh->data[0] = mine;
	return 0;
}

/* A persistent pool of device 0, the module's memory standing in for it. */
static int producer_device(struct shared *sh)
{
	hipMemPoolProps props = lh_props(hipMemHandleTypeFabric, 0);
	hipMemPool_t pool;
	void *p;

	setenv("KFDPOOL_BACKEND", "module", 1);
	props.location.type = hipMemLocationTypeDevice;
	props.location.id = 0;
	if (kfdpoolMemPoolCreatePersistent(&pool, &props))
		return 10;
	if (hipMallocFromPoolAsync(&p, BUFSZ, pool, 0))
		return 11;
	lh_fill(p, BUFSZ, 0, TAG);
	if (hipMemPoolExportPointer(&sh->data[0], p) ||
	    hipMemPoolExportToShareableHandle(&sh->fabric, pool,
					      hipMemHandleTypeFabric, 0) ||
	    kfdpoolMemPoolExportOwnerHandle(&sh->owner, pool))
		return 12;
	return 0;
}

/*
 * An adoption that cannot have the pool's memory fails and leaves the pool
 * to the next adopter, its memory and records as they were: KFDPOOL_BACKEND
 * naming no backend, then (where there is no GPU) no device at all.
 */
static int adopter_without_device(struct shared *sh)
{
	hipMemPool_t pool, imp;
	void *p;

	setenv("KFDPOOL_BACKEND", "nonesuch", 1);
	if (kfdpoolMemPoolAdopt(&pool, &sh->owner) != hipErrorInvalidValue)
		return 10;
	unsetenv("KFDPOOL_BACKEND");
	if (access("/dev/kfd", F_OK) &&
	    kfdpoolMemPoolAdopt(&pool, &sh->owner) != hipErrorNoDevice)
		return 11;
	setenv("KFDPOOL_BACKEND", "module", 1);
	if (hipMemPoolImportFromShareableHandle(&imp, &sh->fabric,
						hipMemHandleTypeFabric, 0) ||
	    hipMemPoolImportPointer(&p, imp, &sh->data[0]))
		return 12;
	if (lh_check(p, BUFSZ, 0, TAG) >= 0)
		return 13;
	if (hipFree(p) || hipMemPoolDestroy(imp))
		return 14;
	if (kfdpoolMemPoolAdopt(&pool, &sh->owner))
		return 15;
	return kfdpoolMemPoolEnd(pool) ? 16 : 0;
}

#define PARAMS	"/sys/module/kfdpool/parameters/"

/* Module parameter @name: its value, or -1. */
static long long param_get(const char *name)
{
	char path[128];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static int param_set(const char *name, long long v)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	f = fopen(path, "we");
	if (!f)
		return -1;
	fprintf(f, "%lld\n", v);
	return fclose(f) ? -1 : 0;
}

static long long persist_before = -1;

static void persist_restore(void)
{
	if (persist_before >= 0)
		param_set("max_user_persistent", persist_before);
}

/*
 * Whether the module here keeps persistent pools, once they are enabled
 * (off by default: the operator's choice) until this program exits.
 */
static int have_persist(void)
{
	struct kfdpool_query q;
	int ctl = kfdpool_open(), ok;

	if (ctl < 0)
		return 0;
	ok = !kfdpool_query(ctl, &q) && (q.features & KFDPOOL_FEATURE_PERSIST);
	close(ctl);
	if (ok && persist_before < 0) {
		persist_before = param_get("max_user_persistent");
		atexit(persist_restore);
	}
	return ok && !param_set("max_user_persistent", 8);
}

/*
 * Run @fn in a child with its stderr in @err: its exit code.  The library
 * says each bound once per process.
 */
static int child_stderr(int (*fn)(void), char *err, size_t len)
{
	int p[2], ret;
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		dup2(p[1], 2);
		_exit(fn());
	}
	close(p[1]);
	ret = reap(pid);
	n = read(p[0], err, len - 1);
	err[n > 0 ? n : 0] = 0;
	close(p[0]);
	return ret;
}

static int create_refused(void)
{
	hipMemPoolProps props = lh_props(hipMemHandleTypeFabric, 0);
	hipMemPool_t pool;

	return kfdpoolMemPoolCreatePersistent(&pool, &props) ==
	       hipErrorOutOfMemory ? 0 : 10;
}

static int bytes_refused(void)
{
	hipMemPoolProps props = lh_props(hipMemHandleTypeFabric, 0);
	hipMemPool_t pool;
	void *p;

	if (kfdpoolMemPoolCreatePersistent(&pool, &props))
		return 10;
	if (hipMallocFromPoolAsync(&p, 64 << 20, pool, 0) !=
	    hipErrorOutOfMemory)
		return 11;
	return kfdpoolMemPoolEnd(pool) ? 12 : 0;
}

static int records_refused(void)
{
	hipMemPoolProps props = lh_props(hipMemHandleTypeFabric, 0);
	hipMemPoolPtrExportData d;
	hipMemPool_t pool;
	void *p[2];
	int i;

	if (hipMemPoolCreate(&pool, &props))
		return 10;
	for (i = 0; i < 2; i++)
		if (hipMallocFromPoolAsync(&p[i], 4096, pool, 0))
			return 11;
	if (hipMemPoolExportPointer(&d, p[0]))
		return 12;
	if (hipMemPoolExportPointer(&d, p[1]) != hipErrorOutOfMemory)
		return 13;
	return hipMemPoolDestroy(pool) ? 14 : 0;
}

/*
 * hipErrorOutOfMemory at a per-user bound of the module names the bound
 * on stderr: persistence off (the default), the user's persistent pools
 * or bytes, its export records.
 */
TEST(refusals_say_which_bound)
{
	long long records = param_get("max_user_records");
	long long pbytes = param_get("max_user_persistent_bytes");
	char err[1024];
	struct kfdpool_query q;
	int ctl;

	if (!have_persist())
		SKIP(return, "no persistent pools here");
	ctl = kfdpool_open();
	ASSERT_LE(0, ctl);
	ASSERT_EQ(0, kfdpool_query(ctl, &q));
	close(ctl);
	/* The module's default, as it came up: off. */
	EXPECT_EQ(0, persist_before);
	ASSERT_EQ(0, param_set("max_user_persistent", persist_before));
	EXPECT_EQ(0, child_stderr(create_refused, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "persistent pools are off on this node"))
		TH_LOG("stderr: %s", err);
	EXPECT_NE(NULL, strstr(err, "max_user_persistent is 0"));

	ASSERT_EQ(0, param_set("max_user_persistent", 8));
	ASSERT_EQ(0, param_set("max_user_persistent_bytes", 4 << 20));
	EXPECT_EQ(0, child_stderr(bytes_refused, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "max_user_persistent_bytes allows 4096 KiB"))
		TH_LOG("stderr: %s", err);
	ASSERT_EQ(0, param_set("max_user_persistent_bytes", pbytes));

	ASSERT_EQ(0, param_set("max_user_records", q.user_records + 1));
	EXPECT_EQ(0, child_stderr(records_refused, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "as many as max_user_records allows"))
		TH_LOG("stderr: %s", err);
	ASSERT_EQ(0, param_set("max_user_records", records));
}

TEST(native_calls)
{
	struct kfdpool_pool_handle h;
	uint8_t id[KFDPOOL_ID_LEN];
	int ctl = kfdpool_open(), fd, a;

	if (ctl < 0)
		SKIP(return, "no /dev/kfdpool: %s", strerror(-ctl));
	if (!have_persist())
		SKIP(return, "no persistent pools here");
	fd = kfdpool_pool_create_flags(ctl, 0, 0, KFDPOOL_POOL_PERSIST,
				       "lib-persist", id);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, kfdpool_pool_create_flags(ctl, 0, 0, 0x2, NULL,
						     NULL));
	EXPECT_EQ(-EINVAL, kfdpool_owner_handle_export(fd, NULL));
	ASSERT_EQ(0, kfdpool_owner_handle_export(fd, &h));
	EXPECT_EQ(-EBUSY, kfdpool_pool_adopt(ctl, &h));
	close(fd);
	EXPECT_EQ(-EINVAL, kfdpool_pool_adopt(ctl, NULL));
	EXPECT_EQ(-EINVAL, kfdpool_pool_adopt_id(ctl, NULL));
	EXPECT_EQ(-EINVAL, kfdpool_pool_destroy_id(ctl, NULL));
	EXPECT_EQ(-EBADF, kfdpool_pool_destroy(-1));
	a = kfdpool_pool_adopt(ctl, &h);
	ASSERT_LE(0, a);
	EXPECT_EQ(-EBUSY, kfdpool_pool_adopt_id(ctl, id));
	close(a);
	a = kfdpool_pool_adopt_id(ctl, id);
	ASSERT_LE(0, a);
	EXPECT_EQ(0, kfdpool_pool_destroy(a));
	EXPECT_EQ(-ENODEV, kfdpool_pool_destroy(a));
	close(a);
	EXPECT_EQ(-ENOENT, kfdpool_pool_adopt(ctl, &h));
	EXPECT_EQ(-ENOENT, kfdpool_pool_destroy_id(ctl, id));
	close(ctl);
}

TEST(hip_producer_consumer_adopter)
{
	struct shared sh, old;
	hipMemPool_t pool, plain;
	kfdpoolOwnerHandle_t oh;

	if (!have_persist())
		SKIP(return, "no persistent pools here");
	memset(&sh, 0, sizeof(sh));
	ASSERT_EQ(0, child(producer, &sh));
	EXPECT_EQ(0, child(consumer, &sh));
	/* The records before the adopter replaces one. */
	old = sh;
	ASSERT_EQ(0, child(adopter, &sh));
	EXPECT_EQ(0, child(consumer_old, &old));
	EXPECT_EQ(0, child(consumer_after, &sh));

	/* A pool that does not persist has no owner handle. */
	ASSERT_EQ(hipSuccess, lh_pool(&plain, hipMemHandleTypeFabric, 0));
	EXPECT_EQ(hipErrorInvalidValue,
		  kfdpoolMemPoolExportOwnerHandle(&oh, plain));
	EXPECT_EQ(hipErrorInvalidValue, kfdpoolMemPoolExportOwnerHandle(NULL,
									plain));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(plain));
	EXPECT_EQ(hipErrorInvalidValue, kfdpoolMemPoolAdopt(NULL, &sh.owner));
	EXPECT_EQ(hipErrorInvalidValue, kfdpoolMemPoolAdopt(&pool, NULL));

	/* The last adopter ends it; its handle adopts nothing after. */
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolAdopt(&pool, &sh.owner));
	EXPECT_EQ(hipSuccess, kfdpoolMemPoolEnd(pool));
	EXPECT_EQ(hipErrorInvalidValue, kfdpoolMemPoolEnd(pool));
	EXPECT_EQ(hipErrorInvalidHandle, kfdpoolMemPoolAdopt(&pool, &sh.owner));
}

/*
 * An administrator ended the pool (kfdpool-stat --destroy, by id): the
 * owner's kfdpoolMemPoolEnd then has only its own object and fd to let
 * go, and succeeds; the handle is gone, and so is the fd.
 */
TEST(end_after_an_administrators_destroy)
{
	hipMemPoolProps props = lh_props(hipMemHandleTypeFabric, 0);
	struct kfdpool_pool_stats st;
	hipMemPool_t pool;
	int ctl, base;

	if (!have_persist())
		SKIP(return, "no persistent pools here");
	base = lh_pool_fds();
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolCreatePersistent(&pool, &props));
	ASSERT_EQ(base + 1, lh_pool_fds());
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(pool, &st));
	ctl = kfdpool_open();
	ASSERT_LE(0, ctl);
	ASSERT_EQ(0, kfdpool_pool_destroy_id(ctl, st.id));
	close(ctl);
	EXPECT_EQ(hipSuccess, kfdpoolMemPoolEnd(pool));
	EXPECT_EQ(base, lh_pool_fds());
	EXPECT_EQ(hipErrorInvalidValue, kfdpoolMemPoolEnd(pool));
	EXPECT_EQ(hipErrorInvalidValue, kfdpoolMemPoolGetStats(pool, &st));
}

TEST(failed_adoption_leaves_the_pool)
{
	struct shared sh;

	if (!have_persist())
		SKIP(return, "no persistent pools here");
	memset(&sh, 0, sizeof(sh));
	ASSERT_EQ(0, child(producer_device, &sh));
	EXPECT_EQ(0, child(adopter_without_device, &sh));
}

TEST_HARNESS_MAIN
