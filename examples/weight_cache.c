// SPDX-License-Identifier: MIT
/*
 * weight_cache: model weights that outlive the process that loaded them.
 *
 * A model server restarts, or starts more replicas, far more often than
 * its weights change; loading them again costs minutes.  Here a producer
 * (the weight loader) puts each named weight in a persistent kfdpool pool
 * and exits; the pool, its memory and its export records stay in the
 * kernel, and any later process of the same user imports every weight from
 * a small manifest file in milliseconds (the inference servers).  A new
 * producer adopts the pool to replace one weight (a fine-tuned layer, an
 * adapter); the old weight's record is revoked, so no server can import
 * it again, while servers that hold it keep their copy until they let go.
 *
 *   weight_cache produce DIR         fill a new persistent pool, write
 *                                    DIR/manifest, exit
 *   weight_cache consume DIR         import every weight, check its bytes;
 *                                    records the manifest lists as revoked
 *                                    must be refused
 *   weight_cache update DIR NAME SEED
 *                                    adopt the pool, replace weight NAME by
 *                                    bytes from SEED, revoke its old record
 *   weight_cache drop DIR            adopt the pool and end it
 *
 * The weights' bytes come from a seed each, so that a consumer can check
 * every byte without a second copy.  HIP's mempool API throughout, with
 * libkfdpool-hip's persistent-pool extensions (kfdpoolMemPool*).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kfdpool_hip.h>

#define MAX_WEIGHTS	16
#define NAME_MAX_LEN	32

struct weight {
	char name[NAME_MAX_LEN];
	size_t bytes;
	uint32_t seed;
	hipMemPoolPtrExportData rec;
};

struct manifest {
	kfdpoolFabricHandle_t pool;	/* consumers import the pool with it */
	kfdpoolOwnerHandle_t owner;	/* producers adopt the pool with it */
	struct weight w[MAX_WEIGHTS];
	int n;
	struct weight revoked[MAX_WEIGHTS];	/* old records, to show refused */
	int nrevoked;
};

/* The model: a few named tensors of different sizes. */
static const struct { const char *name; size_t bytes; } model[] = {
	{ "embed.weight", 256 << 10 },
	{ "layer0.attn.qkv", 384 << 10 },
	{ "layer0.mlp.up", 512 << 10 },
	{ "layer0.mlp.down", 512 << 10 },
	{ "lm_head.weight", 256 << 10 },
};
#define NMODEL (sizeof(model) / sizeof(model[0]))

static const char *prog = "weight_cache";

#define CHECK(call) do { \
	hipError_t e_ = (call); \
	if (e_ != hipSuccess) { \
		fprintf(stderr, "%s: %s: %s\n", prog, #call, \
			hipGetErrorName(e_)); \
		exit(1); \
	} \
} while (0)

/* The bytes of a weight: a xorshift stream from its seed. */
static uint64_t next_word(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void fill(void *p, size_t bytes, uint32_t seed)
{
	uint64_t s = 0x9e3779b97f4a7c15ULL ^ seed, *q = p;
	size_t i;

	for (i = 0; i < bytes / 8; i++)
		q[i] = next_word(&s);
}

static int same(const void *p, size_t bytes, uint32_t seed)
{
	uint64_t s = 0x9e3779b97f4a7c15ULL ^ seed;
	const uint64_t *q = p;
	size_t i;

	for (i = 0; i < bytes / 8; i++)
		if (q[i] != next_word(&s))
			return 0;
	return 1;
}

/* ---- the manifest: a text file, one line per item, bytes in hex ---- */

static void put_hex(FILE *f, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--)
		fprintf(f, "%02x", *b++);
}

static int get_hex(const char *s, void *p, size_t n)
{
	unsigned char *b = p;
	unsigned int v;

	if (strlen(s) != 2 * n)
		return -1;
	while (n--) {
		if (sscanf(s, "%2x", &v) != 1)
			return -1;
		*b++ = (unsigned char)v;
		s += 2;
	}
	return 0;
}

static void path_of(char *buf, size_t len, const char *dir, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

/* Written to a new file, then renamed over: readers see one or the other. */
static void manifest_write(const char *dir, const struct manifest *m)
{
	char tmp[4096], path[4096];
	FILE *f;
	int i;

	path_of(tmp, sizeof(tmp), dir, "manifest.new");
	path_of(path, sizeof(path), dir, "manifest");
	f = fopen(tmp, "w");
	if (!f) {
		perror(tmp);
		exit(1);
	}
	fprintf(f, "# kfdpool weight cache\npool ");
	put_hex(f, &m->pool, sizeof(m->pool));
	fprintf(f, "\nowner ");
	put_hex(f, &m->owner, sizeof(m->owner));
	fprintf(f, "\n");
	for (i = 0; i < m->n; i++) {
		fprintf(f, "weight %s %zu %u ", m->w[i].name, m->w[i].bytes,
			m->w[i].seed);
		put_hex(f, &m->w[i].rec, sizeof(m->w[i].rec));
		fprintf(f, "\n");
	}
	for (i = 0; i < m->nrevoked; i++) {
		fprintf(f, "revoked %s %zu %u ", m->revoked[i].name,
			m->revoked[i].bytes, m->revoked[i].seed);
		put_hex(f, &m->revoked[i].rec, sizeof(m->revoked[i].rec));
		fprintf(f, "\n");
	}
	if (fclose(f) || rename(tmp, path)) {
		perror(path);
		exit(1);
	}
}

static void manifest_read(const char *dir, struct manifest *m)
{
	char path[4096], line[512], kind[16], hex[256];
	struct weight w;
	FILE *f;
	int bad = 0;

	memset(m, 0, sizeof(*m));
	path_of(path, sizeof(path), dir, "manifest");
	f = fopen(path, "r");
	if (!f) {
		perror(path);
		exit(1);
	}
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		memset(&w, 0, sizeof(w));
		if (sscanf(line, "pool %255s", hex) == 1)
			bad |= get_hex(hex, &m->pool, sizeof(m->pool));
		else if (sscanf(line, "owner %255s", hex) == 1)
			bad |= get_hex(hex, &m->owner, sizeof(m->owner));
		else if (sscanf(line, "%15s %31s %zu %u %255s", kind, w.name,
				&w.bytes, &w.seed, hex) == 5 &&
			 !get_hex(hex, &w.rec, sizeof(w.rec))) {
			if (!strcmp(kind, "weight") && m->n < MAX_WEIGHTS)
				m->w[m->n++] = w;
			else if (!strcmp(kind, "revoked") &&
				 m->nrevoked < MAX_WEIGHTS)
				m->revoked[m->nrevoked++] = w;
			else
				bad = 1;
		} else {
			bad = 1;
		}
	}
	fclose(f);
	if (bad || !m->n) {
		fprintf(stderr, "%s: %s: not a weight cache manifest\n", prog,
			path);
		exit(1);
	}
}

/* ---- the four roles ---- */

static hipMemPoolProps host_props(void)
{
	hipMemPoolProps p;

	memset(&p, 0, sizeof(p));
	p.allocType = hipMemAllocationTypePinned;
	p.handleTypes = hipMemHandleTypeFabric;
	p.location.type = hipMemLocationTypeHost;
	return p;
}

/* Allocate, fill and export one weight in @pool. */
static void load(hipMemPool_t pool, struct weight *w)
{
	void *p;

	CHECK(hipMallocFromPoolAsync(&p, w->bytes, pool, 0));
	fill(p, w->bytes, w->seed);
	CHECK(hipMemPoolExportPointer(&w->rec, p));
	/* Not freed: freeing would revoke the record.  The pool keeps it. */
}

static int produce(const char *dir)
{
	hipMemPoolProps props = host_props();
	struct manifest m;
	hipMemPool_t pool;
	size_t total = 0;
	unsigned int i;

	memset(&m, 0, sizeof(m));
	CHECK(kfdpoolMemPoolCreatePersistent(&pool, &props));
	for (i = 0; i < NMODEL; i++) {
		struct weight *w = &m.w[m.n++];

		snprintf(w->name, sizeof(w->name), "%s", model[i].name);
		w->bytes = model[i].bytes;
		w->seed = i + 1;
		load(pool, w);
		total += w->bytes;
	}
	CHECK(hipMemPoolExportToShareableHandle(&m.pool, pool,
						hipMemHandleTypeFabric, 0));
	CHECK(kfdpoolMemPoolExportOwnerHandle(&m.owner, pool));
	manifest_write(dir, &m);
	printf("producer %d: %d weights, %zu KiB, in a persistent pool; exiting\n",
	       (int)getpid(), m.n, total >> 10);
	return 0;
}

static int consume(const char *dir)
{
	struct manifest m;
	hipMemPool_t pool;
	hipError_t e;
	void *p;
	int i, bad = 0;

	manifest_read(dir, &m);
	CHECK(hipMemPoolImportFromShareableHandle(&pool, &m.pool,
						  hipMemHandleTypeFabric, 0));
	for (i = 0; i < m.n; i++) {
		CHECK(hipMemPoolImportPointer(&p, pool, &m.w[i].rec));
		if (same(p, m.w[i].bytes, m.w[i].seed)) {
			printf("consumer %d: %-16s %4zu KiB  seed %u  ok\n",
			       (int)getpid(), m.w[i].name, m.w[i].bytes >> 10,
			       m.w[i].seed);
		} else {
			printf("consumer %d: %-16s WRONG BYTES\n",
			       (int)getpid(), m.w[i].name);
			bad = 1;
		}
		CHECK(hipFree(p));
	}
	for (i = 0; i < m.nrevoked; i++) {
		e = hipMemPoolImportPointer(&p, pool, &m.revoked[i].rec);
		printf("consumer %d: %-16s old record (seed %u): %s\n",
		       (int)getpid(), m.revoked[i].name, m.revoked[i].seed,
		       e == hipErrorInvalidHandle ? "refused" :
		       hipGetErrorName(e));
		if (e != hipErrorInvalidHandle)
			bad = 1;
		if (!e)
			hipFree(p);
	}
	CHECK(hipMemPoolDestroy(pool));
	return bad;
}

static int update(const char *dir, const char *name, uint32_t seed)
{
	struct manifest m;
	hipMemPool_t pool;
	struct weight old;
	int i;

	manifest_read(dir, &m);
	for (i = 0; i < m.n && strcmp(m.w[i].name, name); i++)
		;
	if (i == m.n || m.nrevoked == MAX_WEIGHTS) {
		fprintf(stderr, "%s: no weight %s\n", prog, name);
		return 1;
	}
	CHECK(kfdpoolMemPoolAdopt(&pool, &m.owner));
	old = m.w[i];
	m.w[i].seed = seed;
	load(pool, &m.w[i]);
	/* The manifest names the new record before the old one goes. */
	m.revoked[m.nrevoked++] = old;
	manifest_write(dir, &m);
	CHECK(kfdpoolMemPoolRevokeExports(pool, &old.rec, 1, NULL));
	printf("producer %d: adopted the pool, %s now from seed %u, its old record revoked; exiting\n",
	       (int)getpid(), name, seed);
	return 0;
}

static int drop(const char *dir)
{
	struct manifest m;
	hipMemPool_t pool;
	char path[4096];

	manifest_read(dir, &m);
	CHECK(kfdpoolMemPoolAdopt(&pool, &m.owner));
	CHECK(kfdpoolMemPoolEnd(pool));
	path_of(path, sizeof(path), dir, "manifest");
	unlink(path);
	printf("producer %d: the weight cache is gone\n", (int)getpid());
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "produce"))
		return produce(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "consume"))
		return consume(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "update"))
		return update(argv[2], argv[3], (uint32_t)strtoul(argv[4], NULL, 0));
	if (argc == 3 && !strcmp(argv[1], "drop"))
		return drop(argv[2]);
	fprintf(stderr,
		"usage: %s produce DIR | consume DIR | update DIR NAME SEED | drop DIR\n",
		prog);
	return 2;
}
