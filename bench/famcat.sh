#!/usr/bin/env bash
# bench/famcat.sh: the cold cat of ascii of traces of any family against
# zstdcat of their text, for two builds side by side (A/B).
#
#   bench/famcat.sh BASE NEW ARCHIVE TEXT.zst [ARCHIVE TEXT.zst ...]
#
# BASE and NEW are build directories (release builds); each ARCHIVE's
# ascii view must be TEXT.zst's text (checked once, through NEW's
# tracetool). For every archive, TM_BENCH_ROUNDS rounds (default 5), each
# taking turns: zstdcat TEXT.zst, `tracetool cat ARCHIVE ascii` of BASE
# then NEW, a cat of ascii on a fresh mount of BASE then NEW (page cache),
# and the same with --direct-io. Per route it prints the medians of wall
# and CPU seconds (user + sys of tracetool, or of the daemon: read from
# /proc before it is unmounted) and the median of the rounds' ratios
# zstdcat / ours (>= 1: ours is faster). Indexes are built first, into a
# cache directory per build. Heavy steps are not niced: the figures are
# what a user sees; run it on a quiet machine, or read only the ratios.
set -euo pipefail
shopt -s inherit_errexit
[ $# -ge 4 ] && [ $(($# % 2)) -eq 0 ] || {
        echo "usage: bench/famcat.sh BASE NEW ARCHIVE TEXT.zst [ARCHIVE TEXT.zst ...]" >&2
        exit 2
}
BASE=$(realpath "$1") NEW=$(realpath "$2")
shift 2
ROUNDS=${TM_BENCH_ROUNDS:-5}
W=$(mktemp -d "${TMPDIR:-/tmp}/tmfam.XXXXXX")
MNT=$W/mnt PID=
cleanup() {
        if mountpoint -q "$MNT" 2>/dev/null; then fusermount3 -u "$MNT" || true; fi
        [ -n "$PID" ] && wait "$PID" 2>/dev/null || true
        rm -rf "$W"
}
trap cleanup EXIT
trap "exit 1" INT TERM
mkdir -p "$MNT" "$W/arch"
TCK=$(getconf CLK_TCK)

now() { date +%s%N; }
lab() { if [ "$1" = "$BASE" ]; then echo base; else echo new; fi; } # a build's index cache
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# CPU seconds (user + sys) of process $1 so far
cpu_of() { awk -v t="$TCK" '{ sub(/^.*\) /, ""); printf "%.3f", ($12 + $13) / t }' "/proc/$1/stat"; }

# mount_fresh BUILD [OPTS]: a new daemon of BUILD on MNT
mount_fresh() {
        local b=$1
        shift
        unmount
        "$b/fs/tracemount" -f --cache-dir "$W/cache.$(lab "$b")" "$@" \
                "$W/arch" "$MNT" < /dev/null >> "$W/daemon.log" 2>&1 &
        PID=$!
        for _ in $(seq 200); do mountpoint -q "$MNT" && return 0; sleep 0.05; done
        echo "bench: mount failed" >&2
        cat "$W/daemon.log" >&2
        exit 1
}
unmount() {
        if mountpoint -q "$MNT"; then fusermount3 -u "$MNT"; wait "$PID" 2>/dev/null || true; fi
        PID=
}

# One run of a route; prints "wall cpu".
run_zstd() {
        local s e
        s=$(now)
        /usr/bin/time -f "%U %S" -o "$W/t" zstdcat "$1" > /dev/null
        e=$(now)
        awk -v s="$s" -v e="$e" '{ printf "%.3f %.3f\n", (e - s) / 1e9, $1 + $2 }' "$W/t"
}
run_tool() { # BUILD ARCHIVE
        local s e
        s=$(now)
        /usr/bin/time -f "%U %S" -o "$W/t" "$1/tools/tracetool" cat \
                --cache-dir "$W/cache.$(lab "$1")" --no-index-beside \
                "$W/arch/$2" ascii > /dev/null
        e=$(now)
        awk -v s="$s" -v e="$e" '{ printf "%.3f %.3f\n", (e - s) / 1e9, $1 + $2 }' "$W/t"
}
run_mount() { # BUILD ARCHIVE [OPTS]
        local b=$1 a=$2 s e c0 c1
        shift 2
        mount_fresh "$b" "$@"
        c0=$(cpu_of "$PID")
        s=$(now)
        cat "$MNT/$a/ascii" > /dev/null
        e=$(now)
        c1=$(cpu_of "$PID")
        unmount
        awk -v s="$s" -v e="$e" -v a="$c0" -v b="$c1" 'BEGIN { printf "%.3f %.3f\n", (e - s) / 1e9, b - a }'
}

ROUTES="tool.base tool.new mount.base mount.new direct.base direct.new"
echo "load: $(uptime)"
while [ $# -gt 0 ]; do
        a=$(basename "$1") text=$(realpath "$2")
        ln -f "$1" "$W/arch/$a" 2> /dev/null || cp "$1" "$W/arch/$a" # the daemon follows no symlink
        shift 2
        for b in "$BASE" "$NEW"; do
                "$b/tools/tracetool" index --cache-dir "$W/cache.$(lab "$b")" \
                        --no-index-beside "$W/arch/$a" > /dev/null
        done
        "$NEW/tools/tracetool" cat --cache-dir "$W/cache.new" \
                --no-index-beside "$W/arch/$a" ascii | cmp -s - <(zstdcat "$text") ||
                { echo "bench: $a's ascii is not $text's text" >&2; exit 1; }
        rm -f "$W"/r.*
        for r in $(seq "$ROUNDS"); do
                z=$(run_zstd "$text")
                echo "$z" >> "$W/r.zstd"
                for rt in $ROUTES; do
                        case $rt in *.base) b=$BASE ;; *) b=$NEW ;; esac
                        case $rt in
                        tool.*) x=$(run_tool "$b" "$a") ;;
                        mount.*) x=$(run_mount "$b" "$a") ;;
                        direct.*) x=$(run_mount "$b" "$a" --direct-io) ;;
                        esac
                        echo "$x" >> "$W/r.$rt"
                        echo "${z%% *} ${x%% *}" | awk '{ printf "%.3f\n", $1 / $2 }' >> "$W/q.$rt"
                done
        done
        echo "== $a ($ROUNDS rounds): route, median wall s, median CPU s, median zstdcat / route (wall)"
        printf "  %-12s %7s %7s\n" zstdcat "$(cut -d' ' -f1 "$W/r.zstd" | median)" \
                "$(cut -d' ' -f2 "$W/r.zstd" | median)"
        for rt in $ROUTES; do
                printf "  %-12s %7s %7s %6sx\n" "$rt" "$(cut -d' ' -f1 "$W/r.$rt" | median)" \
                        "$(cut -d' ' -f2 "$W/r.$rt" | median)" "$(median < "$W/q.$rt")"
        done
        rm -f "$W"/q.*
done
echo "load: $(uptime)"
