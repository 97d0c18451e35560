#!/usr/bin/env bash
# Regenerates the heap fixtures of tests/unit_heapin.c from heapprog.c:
#   heapprog.mtrace               glibc mtrace log (glibc >= 2.34: mtrace()
#                                 plus LD_PRELOAD=libc_malloc_debug.so.0)
#   heapprog.heaptrack            heaptrack's interpreted file, decompressed
#   heapprog.heaptrack.raw        heaptrack -r's raw file, decompressed
# Needs gcc, heaptrack (Debian: apt-get install heaptrack) and zstd or gzip.
# Addresses, code offsets and the heaptrack clock differ from run to run;
# the tests check what does not (sizes, kinds, which address goes where).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# -O0: keep every call; run as ./heapprog so the caller strings read so
gcc -O0 -o heapprog "$here/heapprog.c"

MALLOC_TRACE="$tmp/m.log" LD_PRELOAD=libc_malloc_debug.so.0 ./heapprog || true
cp m.log "$here/heapprog.mtrace"

# heaptrack appends .zst (or .gz when zstd is missing) to the -o name
unpack() {
        if [ -f "$1.zst" ]; then zstd -dc "$1.zst"; else gzip -dc "$1.gz"; fi
}
heaptrack -o "$tmp/ht" ./heapprog > /dev/null 2>&1 || true
unpack "$tmp/ht" > "$here/heapprog.heaptrack"
heaptrack -r -o "$tmp/htr" ./heapprog > /dev/null 2>&1 || true
unpack "$tmp/htr.raw" > "$here/heapprog.heaptrack.raw"
ls -l "$here"/heapprog.*
