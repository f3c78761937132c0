#!/bin/sh
# SPDX-License-Identifier: MIT
#
# weight_cache.sh [DIR]: the weight cache's story, each step a process of
# its own (make demo-weights runs it in the VM; make examples-check checks
# it).  Runs $WEIGHT_CACHE, else weight_cache beside it (make examples
# puts both in build/examples); kfdpool-stat on PATH is optional.
set -e
here=$(cd "$(dirname "$0")" && pwd)
wc=${WEIGHT_CACHE:-$here/weight_cache}
dir=${1:-/tmp/weight_cache}
mkdir -p "$dir"
stat() { command -v kfdpool-stat >/dev/null && kfdpool-stat | sed -n '/^pool /,/^$/p'; :; }

echo "== 1. the producer loads the weights into a persistent pool and exits"
"$wc" produce "$dir"
stat
echo "== 2. two servers start later: each imports every weight and checks it"
"$wc" consume "$dir" &
"$wc" consume "$dir"
wait $!
echo "== 3. a new producer adopts the pool and replaces one weight"
"$wc" update "$dir" layer0.mlp.up 42
echo "== 4. a server started now gets the new weight; the old record is refused"
"$wc" consume "$dir"
stat
echo "== 5. the cache is dropped"
"$wc" drop "$dir"
