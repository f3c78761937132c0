// importer.c: read a pool's handle and an allocation's export data from
// stdin, map the allocation, check it and answer in the same memory.
#include <stdio.h>
#include <string.h>
#include <hip/hip_runtime_api.h>
#include <kfdpool_hip.h>
#define CHECK(x) do { hipError_t e = (x); if (e != hipSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, hipGetErrorName(e)); return 1; } } while (0)
int main(void)
{
	struct { kfdpoolFabricHandle_t pool; hipMemPoolPtrExportData ptr; } msg;
	hipMemPool_t pool;
	char *buf;

	if (fread(&msg, sizeof(msg), 1, stdin) != 1) return 1;
	CHECK(hipMemPoolImportFromShareableHandle(&pool, &msg.pool, hipMemHandleTypeFabric, 0));
	CHECK(hipMemPoolImportPointer((void **)&buf, pool, &msg.ptr));
	printf("importer reads: %s\n", buf);
	if (strcmp(buf, "hello from the exporter")) return 1;
	strcpy(buf, "hello from the importer");
	CHECK(hipFree(buf));
	CHECK(hipMemPoolDestroy(pool));
	return 0;
}
