#!/usr/bin/env bash
# Re-record the sample traces (valgrind lackey, tracetool record, glibc mtrace) and pack them.
# Usage: examples/record.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")"
TT=${1:-../build}/tools/tracetool
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
lackey() { valgrind --tool=lackey --trace-mem=yes --log-fd=9 "$@" 9> "$W/out" > /dev/null; cat "$W/out"; }
seq 1 300 | shuf --random-source=<(yes) > "$W/nums"
lackey sort -n "$W/nums" -o /dev/null | "$TT" pack - sort.pdt2.zst
lackey ls /usr | "$TT" pack - ls.pdt.gz
head -c 4000 ../README.md > "$W/text"
lackey gzip -c "$W/text" | "$TT" pack - gzip.din.zst
lackey /bin/true | gzip -9 > true.lackey.gz
# heap traces: sort's allocations recorded by tracetool record (HATF), and the
# same run under glibc mtrace of tests/integration/heapwork.c packed as Meta-TF
seq 1 3000 | shuf --random-source=<(yes) > "$W/nums"
"$TT" record -o sort.hatf.zst -- sort -n "$W/nums" -o /dev/null
cc -O1 -o "$W/heapwork" ../tests/integration/heapwork.c
head -n 400 /usr/share/dict/words 2> /dev/null > "$W/words" || seq 1 400 > "$W/words"
# run as ./heapwork so the callers in the log name no directory of this machine
(cd "$W" && MALLOC_TRACE=work.mtrace LD_PRELOAD=libc_malloc_debug.so.0 ./heapwork < words > /dev/null)
"$TT" pack "$W/work.mtrace" heapwork.mtf.zst
ls -l
