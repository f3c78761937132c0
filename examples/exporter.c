// exporter.c: put a string in a shareable HIP memory pool, write the pool's
// handle and the string's export data to stdout, wait for the answer.
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <hip/hip_runtime_api.h>
#include <kfdpool_hip.h>
#define CHECK(x) do { hipError_t e = (x); if (e != hipSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, hipGetErrorName(e)); return 1; } } while (0)
int main(void)
{
	hipMemPoolProps props = { .allocType = hipMemAllocationTypePinned,
		.handleTypes = hipMemHandleTypeFabric, .location = { .type = hipMemLocationTypeHost } };
	struct { kfdpoolFabricHandle_t pool; hipMemPoolPtrExportData ptr; } msg; /* 2 x 64 bytes */
	hipMemPool_t pool;
	char *buf;

	CHECK(hipMemPoolCreate(&pool, &props));
	CHECK(hipMallocFromPoolAsync((void **)&buf, 4096, pool, 0));
	strcpy(buf, "hello from the exporter");
	CHECK(hipMemPoolExportToShareableHandle(&msg.pool, pool, hipMemHandleTypeFabric, 0));
	CHECK(hipMemPoolExportPointer(&msg.ptr, buf));
	if (write(1, &msg, sizeof(msg)) != sizeof(msg)) return 1;
	for (int i = 0; i < 30 && strcmp(buf, "hello from the importer"); i++)
		sleep(1);	/* the importer answers in the same memory */
	fprintf(stderr, "exporter reads: %s\n", buf);
	return strcmp(buf, "hello from the importer") != 0;	/* exit frees the pool */
}
