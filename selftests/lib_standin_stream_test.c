// SPDX-License-Identifier: GPL-2.0-only
/*
 * Stream order (issue 12 item 4), against the TEST-ONLY STAND-IN for the
 * HIP runtime (hiprt_standin.c: events complete when the test says so).
 * Each rule of pool/order.h has a test that fails when the rule is
 * broken:
 *
 *   a freed block is reused by its stream at once,
 *   by another stream only after the free's marker completed
 *     (hipMemPoolReuseAllowOpportunistic), and not at all without
 *     opportunistic reuse,
 *   by a stream that waited for an event recorded after the free
 *     (hipMemPoolReuseFollowEventDependencies), not for one recorded
 *     before it,
 *   by making the allocating stream wait for the marker
 *     (hipMemPoolReuseAllowInternalDependencies),
 *   a destroyed stream's address is a new stream,
 *   chunks and imported mappings go only once their frees completed,
 *   hipMemPoolTrimTo waits for them, hipFree waits for the device,
 *   an exported pointer's record is revoked at the free, before reuse,
 *   and without a device there is no event.
 *
 * The pool holds one 64 KiB chunk at most (maxSize), and the tests
 * allocate all of it: a block freed on a stream is then the only memory
 * another stream could get, so "may it reuse the block" shows as the
 * block or hipErrorOutOfMemory.
 */
#include <pthread.h>
#include <stdint.h>

#include "lib_hip_util.h"
#include "hiprt_standin.h"
#include "kselftest_harness.h"

#define SZ (64 << 10)

static char logs[1 << 16];

/* Whether the stand-in's log since the last call has @needle. */
static int logged(const char *needle)
{
	kfdpool_standin_log(logs, sizeof(logs));
	return strstr(logs, needle) != NULL;
}

static void set_reuse(hipMemPool_t pool, int follow, int opport, int internal)
{
	hipMemPoolSetAttribute(pool, hipMemPoolReuseFollowEventDependencies,
			       &follow);
	hipMemPoolSetAttribute(pool, hipMemPoolReuseAllowOpportunistic, &opport);
	hipMemPoolSetAttribute(pool, hipMemPoolReuseAllowInternalDependencies,
			       &internal);
}

FIXTURE(order) {
	hipMemPool_t pool;
	hipStream_t a, b;
};

FIXTURE_SETUP(order)
{
	uint64_t keep = UINT64_MAX;
	hipError_t e;

	self->pool = NULL;
	if (access("/dev/kfdpool", F_OK))
		SKIP(return, "/dev/kfdpool missing (module not loaded)");
	e = lh_pool(&self->pool, hipMemHandleTypePosixFileDescriptor, SZ);
	if (e == hipErrorNoDevice)
		SKIP(return, "no host dma-buf exporter");
	ASSERT_EQ(hipSuccess, e);
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolSetGranularity(self->pool, SZ));
	ASSERT_EQ(hipSuccess, hipMemPoolSetAttribute(self->pool,
		  hipMemPoolAttrReleaseThreshold, &keep));
	ASSERT_EQ(hipSuccess, hipStreamCreate(&self->a));
	ASSERT_EQ(hipSuccess, hipStreamCreate(&self->b));
	kfdpool_standin_log(logs, sizeof(logs));
}

FIXTURE_TEARDOWN(order)
{
	if (!self->pool)
		return;
	kfdpool_standin_run(self->a);
	kfdpool_standin_run(self->b);
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(self->pool));
	hipStreamDestroy(self->a);
	hipStreamDestroy(self->b);
}

TEST(the_runtime_is_the_test_only_stand_in)
{
	int n = 0;

	/* Say so in the output: these results are the stand-in's. */
	ksft_print_msg("runtime: TEST-ONLY STAND-IN (selftests/hiprt_standin.c), "
		       "not HIP's runtime: events complete on command\n");
	EXPECT_EQ(hipSuccess, hipGetDeviceCount(&n));
	EXPECT_EQ(2, n);
}

TEST_F(order, same_stream_reuses_at_once)
{
	void *p, *q;

	kfdpool_standin_hold(self->a, 1);
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, self->pool, self->a));
	ASSERT_EQ(hipSuccess, hipFreeAsync(p, self->a));
	/* The free recorded a marker on its stream... */
	EXPECT_TRUE(logged("hipEventRecord")) TH_LOG("%s", logs);
	/* ...which has not completed, and the same stream takes it back. */
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&q, SZ, self->pool, self->a));
	EXPECT_EQ(p, q);
	EXPECT_EQ(hipSuccess, hipFreeAsync(q, self->a));
}

TEST_F(order, another_stream_waits_for_the_marker)
{
	void *p, *q, *r;

	set_reuse(self->pool, 1, 1, 0);
	kfdpool_standin_hold(self->a, 1);
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, self->pool, self->a));
	ASSERT_EQ(hipSuccess, hipFreeAsync(p, self->a));
	/* Not completed: not for another stream. */
	EXPECT_EQ(hipErrorOutOfMemory, hipMallocFromPoolAsync(&q, SZ,
		  self->pool, self->b));
	/* Completed: opportunistic reuse. */
	kfdpool_standin_run(self->a);
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&r, SZ, self->pool, self->b));
	EXPECT_EQ(p, r);
	EXPECT_EQ(hipSuccess, hipFreeAsync(r, self->b));
}

TEST_F(order, without_opportunistic_reuse_never_by_another_stream)
{
	void *p, *q;

	set_reuse(self->pool, 1, 0, 0);
	/* Not held: the marker completes at once. */
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, self->pool, self->a));
	ASSERT_EQ(hipSuccess, hipFreeAsync(p, self->a));
	EXPECT_EQ(hipErrorOutOfMemory, hipMallocFromPoolAsync(&q, SZ,
		  self->pool, self->b));
	/* Its own stream still may. */
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&q, SZ, self->pool, self->a));
	EXPECT_EQ(p, q);
	EXPECT_EQ(hipSuccess, hipFreeAsync(q, self->a));
}

TEST_F(order, internal_dependencies_make_the_stream_wait)
{
	char want[64];
	void *p, *q;
	char *e;

	set_reuse(self->pool, 0, 1, 1);
	kfdpool_standin_hold(self->a, 1);
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, self->pool, self->a));
	ASSERT_EQ(hipSuccess, hipFreeAsync(p, self->a));
	/* The marker: "hipEventRecord e<N> s<A>". */
	kfdpool_standin_log(logs, sizeof(logs));
	e = strstr(logs, "hipEventRecord e");
	ASSERT_NE(NULL, e) TH_LOG("%s", logs);
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&q, SZ, self->pool, self->b));
	EXPECT_EQ(p, q);
	/* ...handed over after B was made to wait for that marker. */
	snprintf(want, sizeof(want), "hipStreamWaitEvent s%d %.*s",
		 kfdpool_standin_stream_id(self->b),
		 (int)strcspn(e + 15, " "), e + 15);
	EXPECT_TRUE(logged(want)) TH_LOG("want \"%s\" in:\n%s", want, logs);
	EXPECT_EQ(hipSuccess, hipFreeAsync(q, self->b));
}

TEST_F(order, no_internal_dependencies_no_wait)
{
	void *p, *q;

	set_reuse(self->pool, 0, 1, 0);
	kfdpool_standin_hold(self->a, 1);
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, self->pool, self->a));
	ASSERT_EQ(hipSuccess, hipFreeAsync(p, self->a));
	EXPECT_EQ(hipErrorOutOfMemory, hipMallocFromPoolAsync(&q, SZ,
		  self->pool, self->b));
	EXPECT_FALSE(logged("hipStreamWaitEvent")) TH_LOG("%s", logs);
}

TEST_F(order, follow_event_dependencies)
{
	hipEvent_t ev;
	void *p, *q;
	int i;

	ASSERT_EQ(hipSuccess, hipEventCreateWithFlags(&ev, 0));
	for (i = 0; i < 3; i++) {
		/* 0: event after the free, followed; 1: not followed;
		 * 2: event before the free. */
		set_reuse(self->pool, i != 1, 0, 0);
		kfdpool_standin_hold(self->a, 1);
		if (i == 2)
			ASSERT_EQ(hipSuccess, hipEventRecord(ev, self->a));
		ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ,
			  self->pool, self->a));
		ASSERT_EQ(hipSuccess, hipFreeAsync(p, self->a));
		if (i != 2)
			ASSERT_EQ(hipSuccess, hipEventRecord(ev, self->a));
		ASSERT_EQ(hipSuccess, hipStreamWaitEvent(self->b, ev, 0));
		q = NULL;
		if (i == 0) {
			ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&q, SZ,
				  self->pool, self->b));
			EXPECT_EQ(p, q) TH_LOG("B waited for an event after the free");
			EXPECT_EQ(hipSuccess, hipFreeAsync(q, self->b));
		} else {
			EXPECT_EQ(hipErrorOutOfMemory, hipMallocFromPoolAsync(&q,
				  SZ, self->pool, self->b)) TH_LOG("case %d", i);
		}
		kfdpool_standin_run(self->a);
		kfdpool_standin_run(self->b);
		/* Everything back for the next round. */
		EXPECT_EQ(hipSuccess, hipMemPoolTrimTo(self->pool, 0));
	}
	EXPECT_EQ(hipSuccess, hipEventDestroy(ev));
}

/*
 * A destroyed event is forgotten: an event created at its address (the
 * stand-in reuses the slot, as an allocator reuses an address) has no
 * place in stream order until it is recorded, and a stream that waits for
 * it depends on nothing.
 */
TEST_F(order, a_destroyed_events_address_is_a_new_event)
{
	hipEvent_t ev, again;
	void *p, *q;

	set_reuse(self->pool, 1, 0, 0);
	kfdpool_standin_hold(self->a, 1);
	ASSERT_EQ(hipSuccess, hipEventCreateWithFlags(&ev, 0));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, self->pool, self->a));
	ASSERT_EQ(hipSuccess, hipFreeAsync(p, self->a));
	/* Recorded after the free: a wait for it would allow B to reuse. */
	ASSERT_EQ(hipSuccess, hipEventRecord(ev, self->a));
	ASSERT_EQ(hipSuccess, hipEventDestroy(ev));
	ASSERT_EQ(hipSuccess, hipEventCreateWithFlags(&again, 0));
	ASSERT_EQ(ev, again);	/* the stand-in reuses the slot */
	/* Never recorded: B waits for nothing, and may not reuse. */
	ASSERT_EQ(hipSuccess, hipStreamWaitEvent(self->b, again, 0));
	EXPECT_EQ(hipErrorOutOfMemory, hipMallocFromPoolAsync(&q, SZ,
		  self->pool, self->b));
	EXPECT_EQ(hipSuccess, hipEventDestroy(again));
}

struct other {
	hipMemPool_t pool;
	hipEvent_t ev;		/* to wait for first (_spt), or NULL */
	hipError_t e;
	void *q;
};

/* Another thread allocates on its own per-thread default stream. */
static void *other_thread(void *arg)
{
	struct other *o = arg;

	o->e = o->ev ? hipStreamWaitEvent_spt(NULL, o->ev, 0) : hipSuccess;
	if (!o->e)
		o->e = hipMallocFromPoolAsync(&o->q, SZ, o->pool,
					      hipStreamPerThread);
	return NULL;
}

static hipError_t in_other_thread(struct other *o)
{
	pthread_t t;

	o->e = hipErrorUnknown;
	o->q = NULL;
	if (pthread_create(&t, NULL, other_thread, o) || pthread_join(t, NULL))
		return hipErrorUnknown;
	return o->e;
}

/* hipStreamPerThread is each thread's own stream: a block freed on one
 * thread's is at once that thread's again, another thread's only by the
 * rules between streams (here: after waiting for an event recorded,
 * with the _spt calls, after the free). */
TEST_F(order, per_thread_default_streams_are_each_threads_own)
{
	struct other o = { .pool = self->pool };
	void *p, *q;

	set_reuse(self->pool, 1, 0, 0);
	kfdpool_standin_hold(hipStreamPerThread, 1);
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, self->pool,
						     hipStreamPerThread));
	ASSERT_EQ(hipSuccess, hipFreeAsync(p, hipStreamPerThread));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&q, SZ, self->pool,
						     hipStreamPerThread));
	EXPECT_EQ(p, q);
	ASSERT_EQ(hipSuccess, hipFreeAsync(q, hipStreamPerThread));
	EXPECT_EQ(hipErrorOutOfMemory, in_other_thread(&o));
	ASSERT_EQ(hipSuccess, hipEventCreateWithFlags(&o.ev, 0));
	/* NULL with _spt: this thread's per-thread stream. */
	ASSERT_EQ(hipSuccess, hipEventRecord_spt(o.ev, NULL));
	ASSERT_EQ(hipSuccess, in_other_thread(&o));
	EXPECT_EQ(p, o.q);
	EXPECT_EQ(hipSuccess, hipFreeAsync(o.q, self->a));
	kfdpool_standin_hold(hipStreamPerThread, 0);
	kfdpool_standin_run(hipStreamPerThread);
	EXPECT_EQ(hipSuccess, hipEventDestroy(o.ev));
}

/*
 * A destroyed stream's pending frees are waited for before the runtime
 * destroys it (its events keep the stream's address in clr, and are never
 * asked about again); a new stream at the same address is another stream:
 * it inherits no dependency of the old one.
 */
TEST_F(order, a_destroyed_streams_address_is_a_new_stream)
{
	hipStream_t c, again;
	hipEvent_t ev;
	void *p, *q;

	set_reuse(self->pool, 1, 0, 0);
	ASSERT_EQ(hipSuccess, hipEventCreateWithFlags(&ev, 0));
	ASSERT_EQ(hipSuccess, hipStreamCreate(&c));
	kfdpool_standin_hold(self->a, 1);
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, self->pool,
						     self->a));
	ASSERT_EQ(hipSuccess, hipFreeAsync(p, self->a));
	ASSERT_EQ(hipSuccess, hipEventRecord(ev, self->a));
	/* c depends on A's free... */
	ASSERT_EQ(hipSuccess, hipStreamWaitEvent(c, ev, 0));
	kfdpool_standin_log(logs, sizeof(logs));
	ASSERT_EQ(hipSuccess, hipStreamDestroy(c));
	EXPECT_FALSE(logged("hipEventSynchronize")) TH_LOG("%s", logs);
	ASSERT_EQ(hipSuccess, hipStreamCreate(&again));
	ASSERT_EQ(c, again);	/* the stand-in reuses the slot */
	/* ...the new stream at its address does not. */
	EXPECT_EQ(hipErrorOutOfMemory, hipMallocFromPoolAsync(&q, SZ,
		  self->pool, again));
	/* A stream with a pending free of its own, destroyed: waited for. */
	kfdpool_standin_hold(again, 1);
	kfdpool_standin_run(self->a);
	kfdpool_standin_hold(self->a, 0);
	ASSERT_EQ(hipSuccess, hipMemPoolTrimTo(self->pool, 0));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&q, SZ, self->pool, again));
	ASSERT_EQ(hipSuccess, hipFreeAsync(q, again));
	kfdpool_standin_log(logs, sizeof(logs));
	EXPECT_EQ(hipSuccess, hipStreamDestroy(again));
	kfdpool_standin_log(logs, sizeof(logs));
	EXPECT_TRUE(strstr(logs, "hipEventSynchronize") &&
		    strstr(logs, "hipEventSynchronize") <
		    strstr(logs, "hipStreamDestroy")) TH_LOG("%s", logs);
	EXPECT_EQ(hipSuccess, hipEventDestroy(ev));
}

/* A stream of device 1: a device synchronisation of device 0 does not
 * complete its work. */
static hipStream_t stream_of_dev1(void)
{
	hipStream_t s = NULL;

	hipSetDevice(1);
	hipStreamCreate(&s);
	hipSetDevice(0);
	return s;
}

/* Give back what waited, after a synchronisation of device 0 (the
 * stand-in completes the work of device 0's streams). */
static hipError_t sync_dev0(void)
{
	return hipDeviceSynchronize();
}

TEST_F(order, a_chunk_goes_only_when_its_frees_completed)
{
	hipStream_t c = stream_of_dev1();
	uint64_t zero = 0;
	void *p;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(hipSuccess, hipMemPoolSetAttribute(self->pool,
		  hipMemPoolAttrReleaseThreshold, &zero));
	kfdpool_standin_hold(c, 1);
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, self->pool, c));
	ASSERT_NE(0, lh_attr(self->pool, hipMemPoolAttrReservedMemCurrent));
	ASSERT_EQ(hipSuccess, hipFreeAsync(p, c));
	/* Empty, threshold 0, but a kernel on C may still use it: not at
	 * the free, not at a synchronisation that C's work outlives. */
	EXPECT_NE(0, lh_attr(self->pool, hipMemPoolAttrReservedMemCurrent));
	ASSERT_EQ(hipSuccess, sync_dev0());
	EXPECT_NE(0, lh_attr(self->pool, hipMemPoolAttrReservedMemCurrent));
	ASSERT_EQ(hipSuccess, hipMemPoolSetAttribute(self->pool,
		  hipMemPoolAttrReleaseThreshold, &zero));
	EXPECT_NE(0, lh_attr(self->pool, hipMemPoolAttrReservedMemCurrent));
	/* C got there: the next synchronisation gives it back. */
	kfdpool_standin_run(c);
	ASSERT_EQ(hipSuccess, sync_dev0());
	EXPECT_EQ(0, lh_attr(self->pool, hipMemPoolAttrReservedMemCurrent));
	EXPECT_EQ(hipSuccess, hipStreamDestroy(c));
}

TEST_F(order, trim_waits_for_the_frees)
{
	void *p;

	kfdpool_standin_hold(self->a, 1);
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, self->pool, self->a));
	ASSERT_EQ(hipSuccess, hipFreeAsync(p, self->a));
	kfdpool_standin_log(logs, sizeof(logs));
	ASSERT_EQ(hipSuccess, hipMemPoolTrimTo(self->pool, 0));
	EXPECT_TRUE(logged("hipEventSynchronize")) TH_LOG("%s", logs);
	EXPECT_TRUE(strstr(logs, "waits") != NULL) TH_LOG("%s", logs);
	EXPECT_EQ(0, lh_attr(self->pool, hipMemPoolAttrReservedMemCurrent));
}

TEST_F(order, hipFree_waits_for_the_device)
{
	void *p, *q;

	set_reuse(self->pool, 0, 0, 0);
	kfdpool_standin_hold(self->a, 1);
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, self->pool, self->a));
	kfdpool_standin_log(logs, sizeof(logs));
	ASSERT_EQ(hipSuccess, hipFree(p));
	EXPECT_TRUE(logged("hipDeviceSynchronize")) TH_LOG("%s", logs);
	EXPECT_EQ(NULL, strstr(logs, "hipEventRecord")) TH_LOG("%s", logs);
	/* Nothing to wait for: any stream takes it. */
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&q, SZ, self->pool, self->b));
	EXPECT_EQ(p, q);
	EXPECT_EQ(hipSuccess, hipFreeAsync(q, self->b));
}

TEST_F(order, exported_record_is_revoked_at_the_free)
{
	hipMemPoolPtrExportData d;
	hipMemPool_t imp;
	void *p, *q;
	int fd;

	ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&fd, self->pool,
		  hipMemHandleTypePosixFileDescriptor, 0));
	ASSERT_EQ(hipSuccess, hipMemPoolImportFromShareableHandle(&imp,
		  (void *)(intptr_t)fd, hipMemHandleTypePosixFileDescriptor, 0));
	close(fd);
	kfdpool_standin_hold(self->a, 1);
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, self->pool, self->a));
	ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&d, p));
	ASSERT_EQ(hipSuccess, hipFreeAsync(p, self->a));
	/* The block waits for A, but its record is gone already. */
	EXPECT_EQ(hipErrorInvalidHandle, hipMemPoolImportPointer(&q, imp, &d));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(imp));
}

TEST_F(order, an_import_is_unmapped_when_its_free_completed)
{
	hipStream_t c = stream_of_dev1();
	struct kfdpool_pool_stats st;
	hipMemPoolPtrExportData d;
	hipMemPool_t imp;
	void *p, *q;
	int fd;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&fd, self->pool,
		  hipMemHandleTypePosixFileDescriptor, 0));
	ASSERT_EQ(hipSuccess, hipMemPoolImportFromShareableHandle(&imp,
		  (void *)(intptr_t)fd, hipMemHandleTypePosixFileDescriptor, 0));
	close(fd);
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, self->pool, self->a));
	ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&d, p));
	ASSERT_EQ(hipSuccess, hipMemPoolImportPointer(&q, imp, &d));
	kfdpool_standin_hold(c, 1);
	ASSERT_EQ(hipSuccess, hipFreeAsync(q, c));
	/* Its last pointer freed, but C may still read it: mapped. */
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(imp, &st));
	EXPECT_EQ(1, st.fd_imports);
	ASSERT_EQ(hipSuccess, sync_dev0());
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(imp, &st));
	EXPECT_EQ(1, st.fd_imports);
	kfdpool_standin_run(c);
	ASSERT_EQ(hipSuccess, sync_dev0());
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(imp, &st));
	EXPECT_EQ(0, st.fd_imports);
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(imp));
	EXPECT_EQ(hipSuccess, hipFreeAsync(p, self->a));
	EXPECT_EQ(hipSuccess, hipStreamDestroy(c));
}

/*
 * What a pool holds above its release threshold (the default, 0) goes back
 * at a synchronising call, never inside hipFreeAsync, and the block a
 * stream freed is that stream's next allocation (as ROCm's hip-tests
 * expect of a pool: MallocMemPoolAsync_Reuse, mempool_common.hh).
 */
TEST(default_threshold_reuse_then_give_back_at_a_synchronise)
{
	uint64_t thr = 1;
	hipMemPool_t pool;
	hipStream_t s;
	void *p, *q;
	int i;

	if (access("/dev/kfdpool", F_OK))
		SKIP(return, "/dev/kfdpool missing (module not loaded)");
	ASSERT_EQ(hipSuccess, lh_pool(&pool, hipMemHandleTypePosixFileDescriptor,
				      0));
	ASSERT_EQ(hipSuccess, hipMemPoolGetAttribute(pool,
		  hipMemPoolAttrReleaseThreshold, &thr));
	ASSERT_EQ(0, thr);
	ASSERT_EQ(hipSuccess, hipStreamCreate(&s));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, pool, s));
		ASSERT_EQ(hipSuccess, hipFreeAsync(p, s));
		EXPECT_NE(0, lh_attr(pool, hipMemPoolAttrReservedMemCurrent));
		ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&q, SZ, pool, s));
		EXPECT_EQ(p, q);
		ASSERT_EQ(hipSuccess, hipFreeAsync(q, s));
	}
	/* A host pool's chunks are registered with the runtime, and
	 * hipHostUnregister waits for the device: they go back at the
	 * device's synchronisation. */
	ASSERT_EQ(hipSuccess, hipDeviceSynchronize());
	EXPECT_EQ(0, lh_attr(pool, hipMemPoolAttrReservedMemCurrent));
	EXPECT_EQ(hipSuccess, hipStreamDestroy(s));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(pool));
}

/* ---- hipMallocFromPoolAsync and hipFreeAsync wait for no stream ---- */

static hipError_t device_pool(hipMemPool_t *pool, size_t max_size)
{
	hipMemPoolProps p = lh_props(hipMemHandleTypePosixFileDescriptor,
				     max_size);

	p.location.type = hipMemLocationTypeDevice;
	p.location.id = 0;
	return hipMemPoolCreate(pool, &p);
}

/* Work recorded on @s that a hold keeps from completing. */
static void busy(hipStream_t s, hipEvent_t ev)
{
	kfdpool_standin_hold(s, 1);
	hipEventRecord(ev, s);
}

/*
 * A device pool's new chunk is made while the null stream and another
 * stream have work in flight: it is mapped with hipMemMap, which waits
 * for the device's null stream in clr up to 7.2 (awaitCompletion,
 * hip_vm.cpp), never for another stream.
 */
TEST_F(order, a_new_chunk_waits_for_the_null_stream_only)
{
	hipEvent_t e0, ea;
	hipMemPool_t dp;
	void *p;

	ASSERT_EQ(hipSuccess, device_pool(&dp, 0));
	ASSERT_EQ(hipSuccess, hipEventCreateWithFlags(&e0, 0));
	ASSERT_EQ(hipSuccess, hipEventCreateWithFlags(&ea, 0));
	busy(NULL, e0);
	busy(self->a, ea);
	kfdpool_standin_log(logs, sizeof(logs));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, dp, self->b));
	kfdpool_standin_log(logs, sizeof(logs));
	EXPECT_TRUE(strstr(logs, "hipMemCreate") != NULL) TH_LOG("%s", logs);
	EXPECT_TRUE(strstr(logs, "hipMemMap waits for the null stream of dev0 "
			   "(waits)") != NULL) TH_LOG("%s", logs);
	EXPECT_EQ(NULL, strstr(logs, "syncs")) TH_LOG("%s", logs);
	EXPECT_EQ(0, kfdpool_standin_pending(NULL));
	EXPECT_EQ(1, kfdpool_standin_pending(self->a));
	kfdpool_standin_run(NULL);
	kfdpool_standin_hold(NULL, 0);
	EXPECT_EQ(hipSuccess, hipFree(p));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(dp));
	EXPECT_EQ(hipSuccess, hipEventDestroy(e0));
	EXPECT_EQ(hipSuccess, hipEventDestroy(ea));
}

/*
 * The free that empties a chunk, release threshold 0, while A has work in
 * flight: the chunk is not given back inside hipFreeAsync, nor at a
 * synchronisation of B or of an event of B (clr's hipFree would wait for
 * A: SyncAllStreams), but at the device's synchronisation.
 */
TEST_F(order, an_emptied_chunk_waits_for_a_synchronising_call)
{
	uint64_t zero = 0;
	hipEvent_t ea, eb;
	hipMemPool_t dp;
	void *p;

	ASSERT_EQ(hipSuccess, device_pool(&dp, 0));
	ASSERT_EQ(hipSuccess, hipMemPoolSetAttribute(dp,
		  hipMemPoolAttrReleaseThreshold, &zero));
	ASSERT_EQ(hipSuccess, hipEventCreateWithFlags(&ea, 0));
	ASSERT_EQ(hipSuccess, hipEventCreateWithFlags(&eb, 0));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, dp, self->b));
	busy(self->a, ea);
	kfdpool_standin_log(logs, sizeof(logs));
	ASSERT_EQ(hipSuccess, hipFreeAsync(p, self->b));
	kfdpool_standin_log(logs, sizeof(logs));
	EXPECT_EQ(NULL, strstr(logs, "hipFree ")) TH_LOG("%s", logs);
	EXPECT_EQ(NULL, strstr(logs, "syncs")) TH_LOG("%s", logs);
	EXPECT_EQ(1, kfdpool_standin_pending(self->a));
	EXPECT_NE(0, lh_attr(dp, hipMemPoolAttrReservedMemCurrent));
	/* B's frees are done once B is synchronised, but giving the chunk
	 * back would wait for A: a stream's synchronisation never does. */
	ASSERT_EQ(hipSuccess, hipStreamSynchronize(self->b));
	ASSERT_EQ(hipSuccess, hipEventRecord(eb, self->b));
	ASSERT_EQ(hipSuccess, hipEventSynchronize(eb));
	kfdpool_standin_log(logs, sizeof(logs));
	EXPECT_EQ(NULL, strstr(logs, "syncs")) TH_LOG("%s", logs);
	EXPECT_EQ(NULL, strstr(logs, "hipFree")) TH_LOG("%s", logs);
	EXPECT_EQ(1, kfdpool_standin_pending(self->a));
	EXPECT_NE(0, lh_attr(dp, hipMemPoolAttrReservedMemCurrent));
	/* (The runtime's last error is the synchronisation's.) */
	EXPECT_EQ(hipSuccess, hipGetLastError());
	/* The device's synchronisation waited for A too: now it goes. */
	ASSERT_EQ(hipSuccess, hipDeviceSynchronize());
	kfdpool_standin_log(logs, sizeof(logs));
	EXPECT_TRUE(strstr(logs, "hipMemUnmap dev0") != NULL) TH_LOG("%s", logs);
	EXPECT_EQ(0, lh_attr(dp, hipMemPoolAttrReservedMemCurrent));
	EXPECT_EQ(hipSuccess, hipGetLastError());
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(dp));
	EXPECT_EQ(hipSuccess, hipEventDestroy(ea));
	EXPECT_EQ(hipSuccess, hipEventDestroy(eb));
}

/*
 * A chunk of device 1 is the runtime's own mapping (the vmm path), whose
 * hipMemUnmap waits for device 1 alone: it goes back at device 1's
 * synchronisation while device 0 is still busy, and nothing waits for
 * device 0.
 */
TEST_F(order, a_chunk_of_device_1_waits_for_nothing_of_device_0)
{
	hipMemPoolProps props = lh_props(hipMemHandleTypePosixFileDescriptor, 0);
	hipStream_t c = stream_of_dev1();
	hipMemPool_t dp;
	hipEvent_t ea;
	void *p, *q;

	ASSERT_NE(NULL, c);
	props.location.type = hipMemLocationTypeDevice;
	props.location.id = 1;
	ASSERT_EQ(hipSuccess, hipMemPoolCreate(&dp, &props));
	ASSERT_EQ(hipSuccess, hipEventCreateWithFlags(&ea, 0));
	busy(self->a, ea);		/* device 0's */
	ASSERT_EQ(hipSuccess, hipSetDevice(1));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, dp, c));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&q, 3 << 20, dp, c));
	ASSERT_EQ(hipSuccess, hipFreeAsync(p, c));
	kfdpool_standin_log(logs, sizeof(logs));
	ASSERT_EQ(hipSuccess, hipDeviceSynchronize());
	ASSERT_EQ(hipSuccess, hipFree(q));
	kfdpool_standin_log(logs, sizeof(logs));
	EXPECT_EQ(NULL, strstr(logs, "dev0")) TH_LOG("%s", logs);
	EXPECT_EQ(1, kfdpool_standin_pending(self->a));
	EXPECT_EQ(0, lh_attr(dp, hipMemPoolAttrReservedMemCurrent));
	ASSERT_EQ(hipSuccess, hipSetDevice(0));
	ASSERT_EQ(hipSuccess, hipDeviceSynchronize());
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(dp));
	EXPECT_EQ(hipSuccess, hipEventDestroy(ea));
	EXPECT_EQ(hipSuccess, hipStreamDestroy(c));
}

/* The same for an importer's mapping of a device chunk. */
TEST_F(order, an_imported_mapping_waits_for_a_synchronising_call)
{
	struct kfdpool_pool_stats st;
	hipMemPoolPtrExportData d;
	hipMemPool_t dp, imp;
	hipEvent_t ea;
	void *p, *q;
	int fd;

	ASSERT_EQ(hipSuccess, device_pool(&dp, 0));
	ASSERT_EQ(hipSuccess, hipMemPoolExportToShareableHandle(&fd, dp,
		  hipMemHandleTypePosixFileDescriptor, 0));
	ASSERT_EQ(hipSuccess, hipMemPoolImportFromShareableHandle(&imp,
		  (void *)(intptr_t)fd, hipMemHandleTypePosixFileDescriptor, 0));
	close(fd);
	ASSERT_EQ(hipSuccess, hipEventCreateWithFlags(&ea, 0));
	ASSERT_EQ(hipSuccess, hipMallocFromPoolAsync(&p, SZ, dp, self->b));
	ASSERT_EQ(hipSuccess, hipMemPoolExportPointer(&d, p));
	ASSERT_EQ(hipSuccess, hipMemPoolImportPointer(&q, imp, &d));
	busy(self->a, ea);
	kfdpool_standin_log(logs, sizeof(logs));
	ASSERT_EQ(hipSuccess, hipFreeAsync(q, self->b));
	kfdpool_standin_log(logs, sizeof(logs));
	EXPECT_EQ(NULL, strstr(logs, "syncs")) TH_LOG("%s", logs);
	EXPECT_EQ(1, kfdpool_standin_pending(self->a));
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(imp, &st));
	EXPECT_EQ(1, st.fd_imports);
	ASSERT_EQ(hipSuccess, hipDeviceSynchronize());
	ASSERT_EQ(hipSuccess, kfdpoolMemPoolGetStats(imp, &st));
	EXPECT_EQ(0, st.fd_imports);
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(imp));
	EXPECT_EQ(hipSuccess, hipFree(p));
	EXPECT_EQ(hipSuccess, hipMemPoolDestroy(dp));
	EXPECT_EQ(hipSuccess, hipEventDestroy(ea));
}

/* Without a device the runtime runs no GPU work: no event at all (a child
 * with no device, exec'd: the device count is read once per process). */
static int no_device_child(void)
{
	hipMemPool_t pool;
	void *p, *q;
	int i;

	if (lh_pool(&pool, hipMemHandleTypePosixFileDescriptor, 0))
		return 2;
	for (i = 0; i < 3; i++) {
		if (hipMallocFromPoolAsync(&p, 4096, pool, NULL) ||
		    hipFreeAsync(p, NULL) ||
		    hipMallocFromPoolAsync(&q, 4096, pool, NULL) ||
		    hipFreeAsync(q, NULL) || p != q)
			return 3;
	}
	hipMemPoolDestroy(pool);
	kfdpool_standin_log(logs, sizeof(logs));
	if (strstr(logs, "hipEvent")) {
		fprintf(stderr, "%s", logs);
		return 4;
	}
	return 0;
}

TEST(no_device_no_event)
{
	if (access("/dev/kfdpool", F_OK))
		SKIP(return, "/dev/kfdpool missing (module not loaded)");
	EXPECT_EQ(0, lh_exec_self("no-device", "KFDPOOL_STANDIN_DEVICES", ""));
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--no-device"))
		return no_device_child();
	return test_harness_run(argc, argv);
}
