#!/usr/bin/env bash
# bench/native.sh [N]: the native encoding (docs/formats/native.md) on a
# real lackey trace, against din text + zstd -19 and PDATS II + zstd.
#
# Makes the trace itself, once: valgrind's lackey over `sort` of 40,000
# lines (about 1.8e8 references), of which the first N lackey lines
# (default 30,000,000: a little more references, lackey's M lines are two)
# are kept, zstd-compressed, in the cache ($TM_BENCH_CACHE, default
# bench/.cache/, never committed), with what is made from it: the din text
# as zstd -19, PDATS II as pack writes it by default, the native archive
# as pack writes it (.tmn). Then prints:
#   - bytes and references a byte of each, and the ratio to din + zstd -19;
#   - bench/native_bench over the .tmn: blocks of 2^16, 2^18, 2^20 at zstd
#     levels 19 and 3: bytes, encode time, the block decoder's speed (one
#     thread, in memory) and where the bytes go (per stream); skipped when
#     TM_BENCH_ENCODE=0 (minutes of zstd -19);
#   - native_bench -d: the block decoder, fast and reference, on the
#     .tmn's blocks as they are (medians of alternating rounds);
#   - `tracetool cat X ascii > /dev/null` of the .tmn and the .pdt2.zst
#     against `zstdcat` of the din -19 file, TM_BENCH_ROUNDS alternating
#     rounds (default 5), medians of wall and of CPU (user + sys) seconds,
#     MB/s of din text and references/s (CPU time is the figure on a busy
#     machine: the cores are shared);
#   - `cat MNT/X.tmn/ascii > /dev/null` through a fresh mount (a new
#     daemon, its index made already), through the page cache and with
#     --direct-io, against zstdcat, in the same alternating rounds;
#   - `tail -n 1 MNT/X.tmn/ascii` on a fresh mount: wall and the daemon's
#     CPU time, medians of the rounds;
#   - the ceiling of those: `cat` of a file of the ascii view's size
#     through a fresh mount of bench/fuse_floor (FUSE set up as tracemount
#     is, serving memory, decoding nothing), page cache and --direct-io.
# TM_BASE_BUILD, when set, is another build (e.g. main's) whose tracetool
# and tracemount join the rounds as a baseline. Needs a release build
# (TM_BUILD, default ./build), valgrind and fusermount3. Heavy steps run
# under nice.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-30000000}
ROUNDS=${TM_BENCH_ROUNDS:-5}
B=${TM_BUILD:-$PWD/build}
TT=$B/tools/tracetool
NB=$B/bench/native_bench
C=${TM_BENCH_CACHE:-$PWD/bench/.cache}
command -v valgrind > /dev/null || { echo "bench: valgrind not installed (apt-get install -y valgrind)" >&2; exit 1; }
[ -x "$NB" ] || { echo "bench: $NB missing (ninja -C $B)" >&2; exit 1; }
mkdir -p "$C"
T=$C/sort$N

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
size() { stat -c %s "$1"; }

if [ ! -s "$T.lackey.zst" ]; then
        echo "bench: making the lackey trace (valgrind, some minutes)" >&2
        seq 1 40000 | awk '{ print ($1 * 7919) % 100003, "line", $1 }' > "$C/sort.in"
        nice valgrind --tool=lackey --trace-mem=yes --log-file="$C/sort.log" sort "$C/sort.in" > /dev/null
        grep -v '^==' "$C/sort.log" | head -n "$N" | nice zstd -q -3 -o "$T.lackey.zst.tmp"
        mv "$T.lackey.zst.tmp" "$T.lackey.zst"
        rm -f "$C/sort.log"
fi
[ -s "$T.tmn" ] || nice "$TT" pack "$T.lackey.zst" "$T.tmn" 2> /dev/null
[ -s "$T.pdt2.zst" ] || nice "$TT" pack "$T.lackey.zst" "$T.pdt2.zst" 2> /dev/null
if [ ! -s "$T.din.zst" ]; then
        echo "bench: din text + zstd -19 (some minutes)" >&2
        "$TT" cat "$T.tmn" ascii | nice zstd -q -19 -o "$T.din.zst.tmp"
        mv "$T.din.zst.tmp" "$T.din.zst"
fi

REFS=$("$TT" stat "$T.tmn" | awk '$1 == "references" { print $2 }')
DIN=$("$TT" stat "$T.tmn" | awk '$1 == "din" && $2 == "bytes" { print $3 }')
BASE=$(size "$T.din.zst")
echo "trace: lackey of sort (40,000 lines), first $N lines: $REFS references, din text $DIN bytes"
echo
printf '%-34s %12s %10s %10s\n' encoding bytes refs/byte "x din+zstd"
row() { printf '%-34s %12s %10.2f %10.2f\n' "$1" "$2" "$(echo "$REFS / $2" | bc -l)" "$(echo "$BASE / $2" | bc -l)"; }
row "din text + zstd -19" "$BASE"
row "PDATS II + zstd (pack's default)" "$(size "$T.pdt2.zst")"
row "native b20 (pack OUT.tmn)" "$(size "$T.tmn")"
echo
[ "${TM_BENCH_ENCODE:-1}" = 0 ] || nice "$NB" "$T.tmn" 16/19 18/19 20/19 16/3 18/3 20/3
echo
nice "$NB" -d "$T.tmn" "$ROUNDS"
echo
# wall and CPU seconds (user + sys) of a command, its output to /dev/null
run() { /usr/bin/time -f '%e %U %S' "$@" 2>&1 > /dev/null | tail -1; }
# the trace through a fresh mount of build $1 (options $2): cat of its ascii
W=$(mktemp -d /tmp/tm-native-bench.XXXXXX)
mkdir -p "$W/arch" "$W/mnt" "$W/cache" "$W/fmnt"
ln "$T.tmn" "$W/arch/x.tmn" 2> /dev/null || cp "$T.tmn" "$W/arch/x.tmn"
DPID=
umnt() {
        if mountpoint -q "$W/mnt"; then fusermount3 -u "$W/mnt" || true; fi
        if mountpoint -q "$W/fmnt"; then fusermount3 -u "$W/fmnt" || true; fi
        [ -z "$DPID" ] || wait "$DPID" 2> /dev/null || true
        DPID=
}
trap 'umnt; rm -rf "$W"' EXIT
mnt_cat() {
        umnt
        # shellcheck disable=SC2086
        "$1/fs/tracemount" -f --cache-dir "$W/cache" $2 "$W/arch" "$W/mnt" < /dev/null \
                >> "$W/daemon.log" 2>&1 &
        DPID=$!
        for _ in $(seq 200); do mountpoint -q "$W/mnt" && break; sleep 0.05; done
        stat "$W/mnt/x.tmn/ascii" > /dev/null # the index, made before the clock starts
        run cat "$W/mnt/x.tmn/ascii"
        umnt
}
# FUSE alone (options $1): cat of a fresh fuse_floor file as big as the
# ascii view, with the kernel read-ahead tracemount sets (fs/bdi.h)
floor_cat() {
        umnt
        # shellcheck disable=SC2086
        "$B/bench/fuse_floor" $1 "$W/sample" "$DIN" "$W/fmnt" -f < /dev/null >> "$W/floor.log" 2>&1 &
        DPID=$!
        for _ in $(seq 200); do mountpoint -q "$W/fmnt" && break; sleep 0.05; done
        echo 512 2> /dev/null > "/sys/class/bdi/$(mountpoint -d "$W/fmnt")/read_ahead_kb" || true
        run cat "$W/fmnt/f"
        umnt
}
"$TT" cat "$T.tmn" ascii | head -c 1048576 > "$W/sample" || true
# mount the built daemon once, so that the index exists for every round
mnt_cat "$B" "" > /dev/null
cases=(zstdcat tt ttp mnt mntd floor floord)
[ -n "${TM_BASE_BUILD:-}" ] && cases+=(btt bmnt bmntd)
declare -A W_ C_
for r in $(seq "$ROUNDS"); do
        for c in "${cases[@]}"; do
                case $c in
                zstdcat) out=$(run zstdcat "$T.din.zst") ;;
                tt) out=$(run "$TT" cat "$T.tmn" ascii) ;;
                ttp) out=$(run "$TT" cat "$T.pdt2.zst" ascii) ;;
                mnt) out=$(mnt_cat "$B" "") ;;
                mntd) out=$(mnt_cat "$B" --direct-io) ;;
                floor) out=$(floor_cat "") ;;
                floord) out=$(floor_cat --direct-io) ;;
                btt) out=$(run "$TM_BASE_BUILD/tools/tracetool" cat "$T.tmn" ascii) ;;
                bmnt) out=$(mnt_cat "$TM_BASE_BUILD" "") ;;
                bmntd) out=$(mnt_cat "$TM_BASE_BUILD" --direct-io) ;;
                esac
                read -r w u s <<< "$out"
                W_[$c]+="$w "
                C_[$c]+="$(echo "$u + $s" | bc -l) "
        done
done
med() { printf '%s\n' $1 | median; }
mz=$(med "${W_[zstdcat]}"); kz=$(med "${C_[zstdcat]}")
sp() { awk -v s="$1" -v c="$2" -v d="$DIN" -v n="$REFS" -v z="$mz" -v zc="$kz" \
        'BEGIN { printf "%7.2f s wall %6.0f MB/s %5.2fx | %7.2f s cpu %6.0f MB/s %7.1f Mrefs/s %5.2fx\n",
                 s, d / s / 1e6, z / s, c, d / c / 1e6, n / c / 1e6, zc / c }'; }
echo "ascii to /dev/null, medians of $ROUNDS alternating rounds (x: zstdcat's time / its;"
echo "through a mount, the CPU is cat's only, the daemon's is not counted):"
name() {
        case $1 in
        zstdcat) echo "zstdcat din.zst" ;;
        tt) echo "tracetool cat X.tmn ascii" ;;
        ttp) echo "tracetool cat X.pdt2.zst ascii" ;;
        mnt) echo "cat MNT/X.tmn/ascii (fresh)" ;;
        mntd) echo "  the same, --direct-io" ;;
        floor) echo "FUSE alone (fuse_floor), fresh" ;;
        floord) echo "  the same, --direct-io" ;;
        btt) echo "base: tracetool cat X.tmn" ;;
        bmnt) echo "base: cat MNT/X.tmn/ascii" ;;
        bmntd) echo "base:   the same, --direct-io" ;;
        esac
}
for c in "${cases[@]}"; do
        printf '  %-30s %s\n' "$(name "$c")" "$(sp "$(med "${W_[$c]}")" "$(med "${C_[$c]}")")"
done

# ---- tail -n 1 on a fresh mount ----
# A new daemon a round, its index made already: the wall time of `tail -n 1
# MNT/x.tmn/ascii` and the daemon's CPU time around it (its threads'
# /proc/PID/task/*/schedstat), medians of the rounds, in ms.
dcpu() { awk '{ s += $1 } END { printf "%.3f", s / 1e6 }' /proc/"$1"/task/*/schedstat; }
TW=
TC=
for r in $(seq "$ROUNDS"); do
        umnt
        "$B/fs/tracemount" -f --cache-dir "$W/cache" "$W/arch" "$W/mnt" < /dev/null >> "$W/daemon.log" 2>&1 &
        DPID=$!
        for _ in $(seq 200); do mountpoint -q "$W/mnt" && break; sleep 0.05; done
        sleep 0.2 # the daemon's start is not the tail's
        c0=$(dcpu "$DPID")
        s0=$(date +%s%N)
        tail -n 1 "$W/mnt/x.tmn/ascii" > /dev/null
        s1=$(date +%s%N)
        c1=$(dcpu "$DPID")
        TW+="$(((s1 - s0) / 1000)) "
        TC+="$(echo "$c1 - $c0" | bc -l) "
        umnt
done
echo
printf 'tail -n 1 MNT/x.tmn/ascii, fresh mount: %.1f ms wall, %.1f ms of the daemon CPU (medians of %s)\n' \
        "$(echo "$(med "$TW") / 1000" | bc -l)" "$(med "$TC")" "$ROUNDS"

# ---- pack's levels and speed; a pointer-chasing trace ----
# `tracetool pack` of the lackey text into .tmn at its default (parameters
# as --help says) and at --level 3, 9, 19: bytes, x din + zstd -19, CPU
# seconds of the process (its 2 encoding threads and the parsing one)
# and MB of lackey text a CPU second and a wall second. Then bench/chase.c
# (a random list and an unbalanced tree, walked) recorded by lackey, the
# first N lines: PDATS II + zstd -19 against .tmn at the default and at
# --level 19 (the native encoding is never to be the larger).
echo
LK=$(zstd -dc "$T.lackey.zst" | wc -c)
printf '%-24s %12s %10s %10s %10s %10s\n' "pack OUT.tmn" bytes "x din+zstd" "cpu s" "MB/cpu s" "MB/wall s"
for L in default 3 9 19; do
        opt=(); [ "$L" = default ] || opt=(--level "$L")
        read -r w u s < <(/usr/bin/time -f '%e %U %S' nice "$TT" pack "${opt[@]}" "$T.lackey.zst" "$C/lv.tmn" 2>&1 > /dev/null | tail -1)
        b=$(size "$C/lv.tmn")
        awk -v l="$L" -v b="$b" -v z="$BASE" -v w="$w" -v c="$(echo "$u + $s" | bc -l)" -v t="$LK" \
                'BEGIN { printf "%-24s %12d %10.2f %10.2f %10.0f %10.0f\n", "level " l, b, z / b, c, t / c / 1e6, t / w / 1e6 }'
done
rm -f "$C/lv.tmn"
CH=$C/chase$N
if [ ! -s "$CH.lackey.zst" ]; then
        echo "bench: recording bench/chase.c with lackey (some minutes)" >&2
        cc -O2 -o "$C/chase" bench/chase.c
        nice valgrind --tool=lackey --trace-mem=yes --log-file="$C/chase.log" "$C/chase" 50000 3 > /dev/null
        grep -v '^==' "$C/chase.log" | head -n "$N" | nice zstd -q -3 -o "$CH.lackey.zst.tmp"
        mv "$CH.lackey.zst.tmp" "$CH.lackey.zst"
        rm -f "$C/chase.log"
fi
[ -s "$CH.pdt2.zst" ] || nice "$TT" pack --level 19 "$CH.lackey.zst" "$CH.pdt2.zst" 2> /dev/null
[ -s "$CH.tmn" ] || nice "$TT" pack "$CH.lackey.zst" "$CH.tmn" 2> /dev/null
[ -s "$CH.19.tmn" ] || nice "$TT" pack --level 19 "$CH.lackey.zst" "$CH.19.tmn" 2> /dev/null
echo
echo "chase (bench/chase.c 50000 3, lackey): $("$TT" stat "$CH.tmn" | awk '$1 == "references" { print $2 }') references"
printf '  %-28s %12s\n' "PDATS II + zstd -19" "$(size "$CH.pdt2.zst")" "native, pack's default" "$(size "$CH.tmn")" \
        "native, --level 19" "$(size "$CH.19.tmn")"
