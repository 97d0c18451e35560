#!/usr/bin/env bash
# bench/ptf.sh [N]: a PTF trace of N events (default 2000000), measured in one go.
#
# Generates with awk an object-store trace in PTF's ASCII form (a dozen
# formats with 0 to 5 data members and arrays, then objects created, their
# data and edges written, read back in walks, arrays written and read,
# objects deleted, ts/te brackets: the kinds of events of the report's
# Figure 3, in a program's proportions), packs it as the binary form in
# zstd (`tracetool pack x.ptfb.zst`, level 19) and stores the text as
# `zstd -19` (the baseline), then prints:
#   - events, and bytes per record of the text, of the archive and of the
#     zstd -19 text;
#   - the cold cat of the ascii view, taking turns with `zstdcat` of the
#     zstd -19 text, TM_BENCH_ROUNDS rounds (default 5): through `tracetool
#     cat` (a new process each round, the index already built) and through
#     a fresh mount each round; every round, the medians and the median of
#     the rounds' ratios (>= 1 means tracemount is faster);
#   - that both give the text byte for byte.
# Needs ./build.sh build first (or TM_BUILD naming a build directory; a
# release build for figures), zstd and a working /dev/fuse.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-2000000}
ROUNDS=${TM_BENCH_ROUNDS:-5}
B=${TM_BUILD:-$PWD/build}
TT=$B/tools/tracetool
W=$(mktemp -d "${TMPDIR:-/tmp}/tmptf.XXXXXX")
MNT=$W/mnt
. bench/lib.sh
mkdir -p "$W/arch" "$MNT" "$W/cache"

echo "== workload: $N PTF events (awk) =="
awk -v n="$N" 'BEGIN {
        srand(28); print "Trace begin"
        nf = 12
        for (f = 0; f < nf; f++) { # formats 100..111: 0..5 data members, 0..2 arrays
                nd = f % 6; na = f % 3; name = "Class" f; line = "fo " 100 + f " 0 " f % 4 " " nd " " na " " length(name)
                for (i = 0; i < nd; i++) line = line " " 10 + (f + i) % 31
                for (i = 0; i < na; i++) line = line " " 10 + (f * 7 + i) % 31 " " 1 + f * 3 + i
                print line " " name
        }
        oid = 1000; live = 0; ev = nf
        while (ev < n) {
                r = rand()
                if (r < 0.18 || live < 4) { # create, initialise, link to a live object
                        f = 100 + int(rand() * nf); oid++; obj[live] = oid; fmt[live] = f; live++
                        print "co " f " " oid; print "dw " f " " oid " " int(rand() * 4)
                        p = int(rand() * live); print "ew " fmt[p] " " obj[p] " " int(rand() * 4) " " oid
                        ev += 3
                } else if (r < 0.70) { # a walk: data and edges of live objects
                        k = 2 + int(rand() * 6)
                        for (i = 0; i < k; i++) {
                                p = int(rand() * live)
                                print "dr " fmt[p] " " obj[p] " " int(rand() * 4)
                                print "er " fmt[p] " " obj[p] " " int(rand() * 4)
                        }
                        ev += 2 * k
                } else if (r < 0.80) { # an array made and filled
                        oid++; len = 1 + int(rand() * 200); c = obj[int(rand() * live)]
                        print "cao 20 " oid " " c " " len
                        print "adw 20 " oid " -1 0 " len; print "adr 20 " oid " -1 " int(rand() * len) " 1"
                        ev += 3
                } else if (r < 0.90) { # updates in a bracket
                        print "ts"; p = int(rand() * live)
                        print "dw " fmt[p] " " obj[p] " " int(rand() * 4)
                        print "ew " fmt[p] " " obj[p] " 0 " obj[int(rand() * live)]; print "te"
                        ev += 4
                } else if (r < 0.97) { # a delete: the last live object
                        live--; print "do " fmt[live] " " obj[live]; ev++
                } else {
                        print "gr"; p = int(rand() * live); print "sr " fmt[p] " " obj[p]; ev += 2
                }
        }
        print "Trace end" }' > "$W/text"
events=$(($(wc -l < "$W/text") - 2))
s=$(now)
"$TT" pack "$W/text" "$W/arch/gen.ptfb.zst" > /dev/null
e=$(now)
echo "packed in $(secs "$s" "$e") s"
zstd -q -19 -T0 "$W/text" -o "$W/text.zst"
echo "events: $events"
for f in text arch/gen.ptfb.zst text.zst; do
        echo "  $f: $(stat -c %s "$W/$f") bytes, $(per "$(stat -c %s "$W/$f")" "$events") bytes a record"
done
echo "archive / zstd -19 text: $(per "$(stat -c %s "$W/arch/gen.ptfb.zst")" "$(stat -c %s "$W/text.zst")")"

"$TT" index --cache-dir "$W/cache" --no-index-beside "$W/arch/gen.ptfb.zst" > /dev/null
zs="" ts="" cs="" rt="" rc=""
for r in $(seq "$ROUNDS"); do
        s=$(now); zstdcat "$W/text.zst" > /dev/null; e=$(now); z=$(secs "$s" "$e")
        s=$(now); "$TT" cat --cache-dir "$W/cache" --no-index-beside "$W/arch/gen.ptfb.zst" ascii > /dev/null
        e=$(now); t=$(secs "$s" "$e")
        mount_fresh
        s=$(now); cat "$MNT/gen.ptfb.zst/ascii" > /dev/null; e=$(now); c=$(secs "$s" "$e")
        zs="$zs$z"$'\n' ts="$ts$t"$'\n' cs="$cs$c"$'\n'
        rt="$rt$(per "$z" "$t")"$'\n' rc="$rc$(per "$z" "$c")"$'\n'
        echo "round $r: zstdcat $z s, tracetool cat $t s ($(echo "$rt" | sed -n "${r}p")x)," \
                "mount cat $c s ($(echo "$rc" | sed -n "${r}p")x)"
done
"$TT" cat --cache-dir "$W/cache" --no-index-beside "$W/arch/gen.ptfb.zst" ascii | cmp -s - "$W/text" ||
        { echo "bench: tracetool cat ascii differs from the text" >&2; exit 1; }
cmp -s "$MNT/gen.ptfb.zst/ascii" "$W/text" || { echo "bench: ascii through the mount differs" >&2; exit 1; }
echo "ascii (tracetool cat and the mount) == the text: identical"
echo "medians: zstdcat $(echo -n "$zs" | median) s, tracetool cat $(echo -n "$ts" | median) s," \
        "mount cat $(echo -n "$cs" | median) s"
echo "median of the rounds' ratios (zstdcat / tracemount): tracetool cat $(echo -n "$rt" | median)x," \
        "mount cat $(echo -n "$rc" | median)x"
