#!/usr/bin/env bash
# bench/laplace.sh [N]: a Laplace raw trace of a real program, measured in one go.
#
# Runs `sort -n` over N random numbers (default 1000: about 4.6 million
# references) under valgrind's lackey, packs the log as a Laplace raw
# trace (tracetool pack: zstd at pack's level, docs/formats/laplace.md
# "From lackey"), then prints:
#   - references, and bytes per reference of the archive, of the raw
#     records, of the Laplace text form (.lpt) and of the ascii view's text
#     as zstd -19 (the baseline below);
#   - the cold cat of the ascii view through a fresh mount, taking turns
#     with `zstdcat` of the zstd -19 ascii text (the baseline),
#     TM_BENCH_ROUNDS rounds (default 5): every round, the medians and the
#     median of the rounds' ratios (>= 1 means tracemount is faster);
#   - tail -n 1 of ascii on a fresh mount (the index already built).
# Needs ./build.sh build first (or TM_BUILD naming a build directory; a
# release build for figures), valgrind and a working /dev/fuse.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000}
ROUNDS=${TM_BENCH_ROUNDS:-5}
B=${TM_BUILD:-$PWD/build}
TT=$B/tools/tracetool
command -v valgrind > /dev/null || { echo "bench: valgrind not installed" >&2; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/tmlaplace.XXXXXX")
MNT=$W/mnt
. bench/lib.sh
mkdir -p "$W/arch" "$MNT" "$W/cache"

echo "== workload: sort -n of $N numbers under valgrind lackey =="
awk -v n="$N" 'BEGIN { srand(1); for (i = 0; i < n; i++) print int(rand() * 1e9) }' > "$W/numbers"
s=$(now)
valgrind --tool=lackey --trace-mem=yes --log-file="$W/lackey.log" sort -n "$W/numbers" > /dev/null
e=$(now)
echo "traced in $(secs "$s" "$e") s"
"$TT" pack "$W/lackey.log" "$W/arch/sort.lpr.zst"
records=$(stat_records "$W/arch/sort.lpr.zst")
"$TT" cat "$W/arch/sort.lpr.zst" raw > "$W/sort.lpr"
"$TT" pack "$W/arch/sort.lpr.zst" "$W/sort.lpt" 2> /dev/null
"$TT" cat "$W/arch/sort.lpr.zst" ascii > "$W/text"
zstd -q -19 -T0 "$W/sort.lpt" -o "$W/sort.lpt.zst"
zstd -q -19 -T0 "$W/text" -o "$W/text.zst"
echo "references: $records"
for f in arch/sort.lpr.zst sort.lpr sort.lpt sort.lpt.zst text text.zst; do
        echo "  $f: $(stat -c %s "$W/$f") bytes, $(per "$(stat -c %s "$W/$f")" "$records") bytes a reference"
done

cold_cat_rounds sort.lpr.zst
