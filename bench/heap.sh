#!/usr/bin/env bash
# bench/heap.sh [LINES]: heap traces of a real program, measured in one go.
#
# Records tests/integration/heapwork.c (reads LINES random words, default
# about 1.8 million records: grows an array with realloc, strdup's every line, sorts, builds
# a hash table, frees) with `tracetool record`, and the same run under
# heaptrack when it is installed, then prints:
#   - what `tracetool pack` chose and its bytes per record;
#   - bytes per data record of every HATF encoding, uncompressed, zstd -19
#     and gzip -9, beside the paper's Table 4 (bench/hatf_sizes);
#   - heaptrack's own file of the same run, bytes per record;
#   - the cold cat of the trace's ascii view through a fresh mount, taking
#     turns with `zstdcat` of the same text stored as zstd -19 (the
#     baseline), TM_BENCH_ROUNDS rounds (default 5): every round, the
#     medians and the median of the rounds' own ratios (>= 1 means
#     tracemount is faster), through the page cache and with --direct-io;
#   - tail -n 1 of ascii on a fresh mount (the index already built).
# Needs ./build.sh build first (or TM_BUILD naming a build directory) and a
# working /dev/fuse.
set -euo pipefail
cd "$(dirname "$0")/.."
LINES=${1:-500000}
ROUNDS=${TM_BENCH_ROUNDS:-5}
B=${TM_BUILD:-$PWD/build}
TT=$B/tools/tracetool
W=$(mktemp -d "${TMPDIR:-/tmp}/tmheap.XXXXXX")
MNT=$W/mnt
. bench/lib.sh
mkdir -p "$W/arch" "$MNT" "$W/cache"

echo "== workload: heapwork on $LINES lines =="
perl -e 'srand(7); for (1..$ARGV[0]) { print join("", map { chr(97 + int(rand(20))) } 1..(1 + int(rand(14)))), "\n" }' \
        "$LINES" > "$W/words"
"$TT" record -o "$W/arch/work.hatf.zst" -- "$B/tests/heapwork" < "$W/words" > /dev/null
records=$(stat_records "$W/arch/work.hatf.zst")
archive=$(stat -c %s "$W/arch/work.hatf.zst")
echo "records: $records; tracetool record's archive: $archive bytes," \
        "$(awk -v a="$archive" -v r="$records" 'BEGIN { printf "%.3f", a / r }') bytes a record"

echo
echo "== bytes per data record, every encoding (bench/hatf_sizes) =="
"$B/bench/hatf_sizes" "$W/arch/work.hatf.zst"

if command -v heaptrack > /dev/null 2>&1; then
        heaptrack -o "$W/ht" "$B/tests/heapwork" < "$W/words" > /dev/null 2>&1 || true
        ht=$(ls "$W"/ht.* 2> /dev/null | head -n 1)
        if [ -n "$ht" ]; then
                hs=$(stat -c %s "$ht")
                echo "heaptrack's own file of the same run: $hs bytes," \
                        "$(awk -v a="$hs" -v r="$records" 'BEGIN { printf "%.3f", a / r }') bytes a record of ours" \
                        "($(basename "$ht"))"
        fi
else
        echo "(heaptrack not installed: its file is not compared)"
fi

echo
echo "== cold cat of ascii vs zstdcat of the same text as zstd -19 =="
"$TT" cat "$W/arch/work.hatf.zst" ascii > "$W/text"
zstd -q -19 -T0 "$W/text" -o "$W/text.zst"
text_size=$(stat -c %s "$W/text")
echo "ascii: $text_size bytes; as zstd -19: $(stat -c %s "$W/text.zst") bytes"
"$TT" index "$W/arch/work.hatf.zst" > /dev/null
MOUNT_OPTS=""
mount_fresh
cmp -s "$MNT/work.hatf.zst/ascii" "$W/text" || { echo "bench: ascii through the mount differs" >&2; exit 1; }
zs="" cs="" ds="" rr="" dr=""
for r in $(seq "$ROUNDS"); do
        s=$(now); zstdcat "$W/text.zst" > /dev/null; e=$(now); z=$(secs "$s" "$e")
        MOUNT_OPTS=""; mount_fresh
        s=$(now); cat "$MNT/work.hatf.zst/ascii" > /dev/null; e=$(now); c=$(secs "$s" "$e")
        MOUNT_OPTS="--direct-io"; mount_fresh
        s=$(now); cat "$MNT/work.hatf.zst/ascii" > /dev/null; e=$(now); d=$(secs "$s" "$e")
        zs="$zs$z"$'\n' cs="$cs$c"$'\n' ds="$ds$d"$'\n'
        rr="$rr$(awk -v a="$z" -v b="$c" 'BEGIN { printf "%.2f", a / b }')"$'\n'
        dr="$dr$(awk -v a="$z" -v b="$d" 'BEGIN { printf "%.2f", a / b }')"$'\n'
        echo "round $r: zstdcat $z s, cat ascii $c s ($(echo "$rr" | sed -n "${r}p")x), --direct-io $d s ($(echo "$dr" | sed -n "${r}p")x)"
done
echo "medians: zstdcat $(echo -n "$zs" | median) s, cat $(echo -n "$cs" | median) s," \
        "--direct-io $(echo -n "$ds" | median) s"
echo "median of the rounds' ratios (zstdcat / tracemount): page cache $(echo -n "$rr" | median)x," \
        "--direct-io $(echo -n "$dr" | median)x"
MOUNT_OPTS=""; mount_fresh
s=$(now); tail -n 1 "$MNT/work.hatf.zst/ascii" > /dev/null; e=$(now)
echo "tail -n 1 ascii on a fresh mount: $(secs "$s" "$e") s"
