#!/usr/bin/env bash
# bench/heap_stats.sh [LINES...]: the heap statistics pass's time and memory
# on recorded traces.
#
# Records tests/integration/heapwork.c on LINES random words each (default
# 500000, the trace bench/heap.sh makes, and 2000000, whose 2 million live
# strings take the count past its table of 2^20 addresses into the
# external sort: views/stats.h) with `tracetool record`, then prints for
# each trace:
#   - bench/stats_bench: the statistics alone (CPU time, the
#     accumulator's peak of memory, events sorted through temporary files)
#     and, with --decode, the decoding it rides on;
#   - the whole index pass (`tracetool index`: decode, view sizes, stats,
#     save) in wall time and peak RSS (GNU time).
# Needs ./build.sh build first (or TM_BUILD naming a build directory).
set -euo pipefail
cd "$(dirname "$0")/.."
B=${TM_BUILD:-$PWD/build}
TT=$B/tools/tracetool
[ $# -gt 0 ] || set -- 500000 2000000
W=$(mktemp -d "${TMPDIR:-/tmp}/tmstats.XXXXXX")
trap 'rm -rf "$W"' EXIT

for lines in "$@"; do
        perl -e 'srand(7); for (1..$ARGV[0]) { print join("", map { chr(97 + int(rand(20))) } 1..(1 + int(rand(14)))), "\n" }' \
                "$lines" > "$W/words"
        "$TT" record -o "$W/work$lines.hatf.zst" -- "$B/tests/heapwork" < "$W/words" > /dev/null 2>&1
        echo "== heapwork on $lines lines: $(stat -c %s "$W/work$lines.hatf.zst") bytes archived =="
        "$B/bench/stats_bench" --decode "$W/work$lines.hatf.zst"
        "$B/bench/stats_bench" "$W/work$lines.hatf.zst"
        /usr/bin/time -f "index pass (tracetool index): %e s wall, peak RSS %M KiB" \
                "$TT" index --cache-dir "$W/cache" "$W/work$lines.hatf.zst" > /dev/null
        "$TT" cat "$W/work$lines.hatf.zst" stats | sed -n '/^  max objects/,/^  live at end/p'
done
