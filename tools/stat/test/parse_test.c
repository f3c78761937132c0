// SPDX-License-Identifier: MIT
/*
 * Native unit test of kfdpool-stat's parsers on sample text in exactly the
 * formats the module writes, plus the malformed and future cases.  TAP out.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "stat_parse.h"

static int n, failed;

static void check(int cond, const char *what)
{
	n++;
	if (!cond)
		failed++;
	printf("%sok %d %s\n", cond ? "" : "not ", n, what);
}

static const char owner_fdinfo[] =
	"pos:\t0\n"
	"flags:\t02000002\n"
	"mnt_id:\t15\n"
	"ino:\t1057\n"
	"kfdpool-id:\t00112233445566778899aabbccddeeff\n"
	"kfdpool-name:\tdemo-pool\n"
	"kfdpool-mode:\towner\n"
	"kfdpool-owner-pid:\t4242\n"
	"kfdpool-limit:\t1073741824\n"
	"kfdpool-handle-types:\t9\n"
	"kfdpool-reserved:\t8388608\n"
	"kfdpool-reserved-high:\t12582912\n"
	"kfdpool-used:\t4194304\n"
	"kfdpool-used-high:\t6291456\n"
	"kfdpool-draining:\t2097152\n"
	"kfdpool-entries:\t3\n"
	"kfdpool-draining-entries:\t1\n"
	"kfdpool-records:\t17\n"
	"kfdpool-import-fds:\t2\n"
	"kfdpool-imported:\t10485760\n"
	"kfdpool-fd-imported:\t0\n"
	"kfdpool-fd-imports:\t0\n";

static const char import_fdinfo_future[] =
	"pos:\t0\n"
	"kfdpool-id:\tffeeddccbbaa99887766554433221100\n"
	"kfdpool-name:\t\n"
	"kfdpool-mode:\timport\n"
	"kfdpool-some-new-key:\twhatever 12\n"
	"kfdpool-fd-imports:\t2\n"
	"kfdpool-fd-imported:\t0x600000\n"
	"unrelated-driver-key:\t7\n";

static const char pools_text[] =
	"# id name owner_pid uid limit reserved reserved_high used used_high draining entries records import_fds imported\n"
	"00112233445566778899aabbccddeeff demo-pool 4242 1000 1073741824 8388608 12582912 4194304 6291456 2097152 3 17 2 10485760\n"
	"ffeeddccbbaa99887766554433221100 - 77 0 0 0 0 0 0 0 0 0 0 0 extra future fields\n"
	"\n"
	"not-a-pool-line 1 2 3\n"
	"00112233445566778899aabbccddeefX x 1 1 1 1 1 1 1 1 1 1 1 1\n"
	"00112233445566778899aabbccddeeff short 1 2\n";

int main(void)
{
	struct kps_fdinfo fi;
	struct kps_pool pools[4];
	char buf[KPS_SIZE_LEN];
	size_t np, bad;
	int r;

	printf("TAP version 13\n");

	r = kps_parse_fdinfo(owner_fdinfo, &fi);
	check(r == 1, "owner fdinfo is a pool fd");
	check(!strcmp(fi.id, "00112233445566778899aabbccddeeff"), "id");
	check(!strcmp(fi.name, "demo-pool"), "name");
	check(fi.mode == KFDPOOL_MODE_OWNER, "mode owner");
	check(fi.owner_pid == 4242 && fi.limit == 1073741824 && fi.handle_types == 9,
	      "owner pid, limit, handle types");
	check(fi.reserved == 8388608 && fi.reserved_high == 12582912 &&
	      fi.used == 4194304 && fi.used_high == 6291456 && fi.draining == 2097152,
	      "reserved/used current and high, draining");
	check(fi.entries == 3 && fi.draining_entries == 1 && fi.records == 17 &&
	      fi.import_fds == 2 && fi.imported == 10485760, "counts and imported");
	check(fi.seen == (1u << 18) - 1, "all 18 keys seen");

	r = kps_parse_fdinfo(import_fdinfo_future, &fi);
	check(r == 1 && fi.mode == KFDPOOL_MODE_IMPORT, "import fdinfo with unknown keys");
	check(fi.name[0] == '\0' && fi.fd_imports == 2 && fi.fd_imported == 0x600000,
	      "empty name, per-fd figures, hex value");
	check(!(fi.seen & KPS_F_RESERVED), "missing keys stay unseen");

	check(kps_parse_fdinfo("pos:\t0\nflags:\t02\nmnt_id:\t9\n", &fi) == 0,
	      "a non-pool fdinfo is not a pool fd");
	check(kps_parse_fdinfo("kfdpool-id:\t0011\n", &fi) == -1, "short id is malformed");
	check(kps_parse_fdinfo("kfdpool-id:\t00112233445566778899AABBCCDDEEFF\n", &fi) == -1,
	      "uppercase id is malformed");
	check(kps_parse_fdinfo("kfdpool-id:\t00112233445566778899aabbccddeeff\n"
			       "kfdpool-used:\t12abc\n", &fi) == -1 && (fi.seen & KPS_F_ID),
	      "bad number reported, id kept");
	check(kps_parse_fdinfo("kfdpool-id:\t00112233445566778899aabbccddeeff\n"
			       "kfdpool-mode:\tsideways\n", &fi) == -1, "bad mode reported");
	check(kps_parse_fdinfo("kfdpool-id:\t00112233445566778899aabbccddeeff\n"
			       "kfdpool-entries:\t4294967296\n", &fi) == -1,
	      "u32 overflow reported");
	check(kps_parse_fdinfo("kfdpool-id:\t00112233445566778899aabbccddeeff\n"
			       "kfdpool-used:\t-1\n", &fi) == -1, "negative size reported");

	np = kps_parse_pools(pools_text, pools, 4, &bad);
	check(np == 2 && bad == 3, "two pools, three bad lines");
	check(!strcmp(pools[0].name, "demo-pool") && pools[0].owner_pid == 4242 &&
	      pools[0].uid == 1000 && pools[0].limit == 1073741824, "pool 0 identity");
	check(pools[0].reserved == 8388608 && pools[0].reserved_high == 12582912 &&
	      pools[0].used == 4194304 && pools[0].used_high == 6291456 &&
	      pools[0].draining == 2097152 && pools[0].entries == 3 &&
	      pools[0].records == 17 && pools[0].import_fds == 2 &&
	      pools[0].imported == 10485760, "pool 0 figures");
	check(pools[1].name[0] == '\0' && pools[1].owner_pid == 77, "'-' is the empty name");
	np = kps_parse_pools(pools_text, pools, 1, &bad);
	check(np == 2, "count beyond max reported");
	np = kps_parse_pools("# header only\n", pools, 4, &bad);
	check(np == 0 && bad == 0, "no pools");

	check(!strcmp(kps_size(0, buf), "0 B"), "size 0");
	check(!strcmp(kps_size(1023, buf), "1023 B"), "size 1023");
	check(!strcmp(kps_size(1536, buf), "1.50 KiB"), "size 1.5 KiB");
	check(!strcmp(kps_size(150ull << 20, buf), "150 MiB"), "size 150 MiB");
	check(!strcmp(kps_size(UINT64_MAX, buf), "16.0 EiB"), "size max");

	printf("1..%d\n# %d passed, %d failed\n", n, n - failed, failed);
	return failed ? 1 : 0;
}
