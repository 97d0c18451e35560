#!/usr/bin/env bash
# bench/java.sh [N]: a Java trace of a real program, measured in one go.
#
# Records tests/integration/JavaWork.java (two workers making N objects
# each, default 50000: about a million events, most of them method entries
# and exits) with the JVMTI agent into a ZIP archive, then prints:
#   - records, and bytes per record of the agent's archive (deflate, as the
#     Java tool's ZIP files are), of the trace text, and of the ascii view's
#     text as zstd -19 (the baseline below);
#   - the cold cat of the ascii view through a fresh mount, taking turns
#     with `zstdcat` of the zstd -19 trace text (the baseline),
#     TM_BENCH_ROUNDS rounds (default 5): every round, the medians and the
#     median of the rounds' ratios (>= 1 means tracemount is faster);
#   - tail -n 1 of ascii on a fresh mount (the index already built).
# Needs ./build.sh build first (or TM_BUILD naming a build directory), a
# JDK (the agent is built with it) and a working /dev/fuse.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-50000}
ROUNDS=${TM_BENCH_ROUNDS:-5}
B=${TM_BUILD:-$PWD/build}
TT=$B/tools/tracetool
AGENT=$B/tools/javaagent/libtmjava.so
[ -e "$AGENT" ] || { echo "bench: $AGENT not built (no JDK found by meson?)" >&2; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/tmjava.XXXXXX")
MNT=$W/mnt
. bench/lib.sh
mkdir -p "$W/arch" "$W/classes" "$MNT" "$W/cache"

echo "== workload: JavaWork $N under the agent =="
javac -d "$W/classes" tests/integration/JavaWork.java
s=$(now)
java -agentpath:"$AGENT=$W/arch/work.zip" -cp "$W/classes" JavaWork "$N" > /dev/null
e=$(now)
echo "recorded in $(secs "$s" "$e") s"
records=$(stat_records "$W/arch/work.zip")
unzip -p "$W/arch/work.zip" trace > "$W/trace"
"$TT" cat "$W/arch/work.zip" ascii > "$W/text"
zstd -q -19 -T0 "$W/text" -o "$W/text.zst"
echo "records: $records"
for f in arch/work.zip trace text.zst; do
        echo "  $f: $(stat -c %s "$W/$f") bytes, $(per "$(stat -c %s "$W/$f")" "$records") bytes a record"
done

cold_cat_rounds work.zip
