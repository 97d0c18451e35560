#!/usr/bin/env bash
# bench/run.sh [N_REFS] [--x86]: tracemount against zstdcat, measured in one go.
#
# Makes a program-shaped trace of N_REFS references (default 100 million)
# with bench/gen_trace, stores it two ways -- din text compressed with zstd
# (the baseline) and PDATS II in seekable zstd (tracetool pack) -- mounts
# the second and prints, each as a ratio to the baseline where one exists:
#   sequential cat and grep of ascii through the mount (cold: fresh mount;
#   with the page cache and with --direct-io; the cold cat takes turns with
#   zstdcat, TM_BENCH_ROUNDS times (default 5): best and median),
#   the same cat again (warm: kernel page cache), tail -n 1 latency once
#   the index exists, daemon peak RSS, index size, index build time.
# For scale it also times cat through bench/fuse_floor, a FUSE file system
# set up like tracemount that serves memory and decodes nothing: what FUSE
# alone costs on this machine, a floor no daemon set up this way goes below.
# (grep writes to a file: GNU grep stops at the first match when its output is
# /dev/null.) It also checks that the mount's ascii is byte-identical to the baseline.
# Needs ./build.sh build first (or TM_BUILD naming a build directory) and a
# working /dev/fuse. tests/integration/bench_smoke.sh runs it on a small trace.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-100000000}
X86=${2:-}
B=${TM_BUILD:-$PWD/build} # TM_BUILD: another build directory (the test suite's)
W=$(mktemp -d "${TMPDIR:-/tmp}/tmbench.XXXXXX")
MNT=$W/mnt
FMNT=$W/fmnt
PID=
FPID=
cleanup() {
        for m in "$MNT" "$FMNT"; do
                if mountpoint -q "$m" 2>/dev/null; then fusermount3 -u "$m" || true; fi
        done
        [ -n "$PID" ] && wait "$PID" 2>/dev/null || true
        [ -n "$FPID" ] && wait "$FPID" 2>/dev/null || true
        rm -rf "$W"
}
trap cleanup EXIT
mkdir -p "$W/base" "$W/arch" "$MNT" "$FMNT" "$W/cache"

now() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }
# time_cmd VAR cmd...: run cmd, store elapsed seconds in VAR
time_cmd() {
        local var=$1 s e
        shift
        s=$(now)
        "$@"
        e=$(now)
        printf -v "$var" '%s' "$(secs "$s" "$e")"
}
# unmount_if DIR PID: unmount DIR if it is mounted and wait for its daemon.
unmount_if() {
        if mountpoint -q "$1"; then fusermount3 -u "$1"; wait "$2" 2>/dev/null || true; fi
}
# await_mount DIR WHAT: wait up to 5 s for DIR to become a mount point.
await_mount() {
        for _ in $(seq 100); do mountpoint -q "$1" && return 0; sleep 0.05; done
        echo "bench: $2 mount failed" >&2
        exit 1
}
MOUNT_OPTS=""
mount_fresh() {
        unmount_if "$MNT" "$PID"
        # shellcheck disable=SC2086
        "$B/fs/tracemount" -f --cache-dir "$W/cache" $MOUNT_OPTS "$W/arch" "$MNT" \
                < /dev/null >> "$W/daemon.log" 2>&1 &
        PID=$!
        await_mount "$MNT" tracemount
}
# floor_fresh [--direct-io]: a fresh fuse_floor mount of a file the size of
# the ascii view, with the kernel readahead tracemount sets by default
# (BDI_READ_AHEAD_KB in fs/bdi.h; root only, as in tracemount).
floor_fresh() {
        unmount_if "$FMNT" "$FPID"
        "$B/bench/fuse_floor" "$@" "$W/sample" "$TEXT" "$FMNT" -f < /dev/null >> "$W/floor.log" 2>&1 &
        FPID=$!
        await_mount "$FMNT" fuse_floor
        echo 512 2> /dev/null > "/sys/class/bdi/$(mountpoint -d "$FMNT")/read_ahead_kb" || true
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

echo "bench: generating $N references ${X86:+(x86-64 shape)}"
"$B/bench/gen_trace" "$N" 1 $X86 > "$W/t.din"
TEXT=$(stat -c %s "$W/t.din")
time_cmd t_zc zstd -q -T1 -3 "$W/t.din" -o "$W/base/t.din.zst"
time_cmd t_pack "$B/tools/tracetool" pack "$W/t.din" "$W/arch/t.pdt2.zst"
head -c 1048576 "$W/t.din" > "$W/sample"
rm -f "$W/t.din"
ARCH=$(stat -c %s "$W/arch/t.pdt2.zst")
BASE=$(stat -c %s "$W/base/t.din.zst")
time_cmd t_index "$B/tools/tracetool" index "$W/arch/t.pdt2.zst"
IDX=$(find "$W/arch" "$W/cache" -name '*.tmidx' -printf '%s\n' | head -n 1)
V=$MNT/t.pdt2.zst/ascii

# best_of K VAR [mount|floor|floor-dio] cmd...: best time of K runs (optionally on a fresh
# mount each time); no subshells, so the daemon's PID stays in this shell.
best_of() {
        local k=$1 var=$2 fresh=0 b="" t
        shift 2
        case $1 in
        mount) fresh=mount_fresh; shift ;;
        floor) fresh=floor_fresh; shift ;;
        floor-dio) fresh="floor_fresh --direct-io"; shift ;;
        esac
        for _ in $(seq "$k"); do
                [ "$fresh" != 0 ] && $fresh
                time_cmd t "$@"
                if [ -z "$b" ] || awk -v t="$t" -v b="$b" 'BEGIN { exit !(t < b) }'; then b=$t; fi
        done
        printf -v "$var" '%s' "$b"
}
# The cold cat and its baseline take turns, ROUNDS times, so that both meet
# the same phases of this VM's noise (the same command's time can double
# from one minute to the next); the report gives the best and the median.
ROUNDS=${TM_BENCH_ROUNDS:-5}
zcs="" colds="" dcolds=""
for _ in $(seq "$ROUNDS"); do
        time_cmd t sh -c "zstdcat '$W/base/t.din.zst' > /dev/null"
        zcs="$zcs$t"$'\n'
        MOUNT_OPTS=""
        mount_fresh
        time_cmd t sh -c "cat '$V' > /dev/null"
        colds="$colds$t"$'\n'
        MOUNT_OPTS=--direct-io
        mount_fresh
        time_cmd t sh -c "cat '$V' > /dev/null"
        dcolds="$dcolds$t"$'\n'
done
MOUNT_OPTS=""
best() { printf '%s' "$1" | sort -n | head -n 1; }
median() {
        printf '%s' "$1" | sort -n |
                awk '{ a[NR] = $1 } END { printf "%.3f", NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
zc=$(best "$zcs") cold=$(best "$colds") dcold=$(best "$dcolds")
zc_med=$(median "$zcs") cold_med=$(median "$colds") dcold_med=$(median "$dcolds")
# each round's own ratio: zstdcat and tracemount measured a second apart
round_ratios() { paste <(printf '%s' "$1") <(printf '%s' "$2") | awk '{ printf "%.3f\n", $1 / $2 }'; }
cold_rr=$(round_ratios "$zcs" "$colds") dcold_rr=$(round_ratios "$zcs" "$dcolds")
rounds() { printf '%s' "$1" | tr '\n' ' ' | sed 's/ $//'; }
best_of 3 zcp sh -c "zstdcat '$W/base/t.din.zst' | cat > /dev/null"
best_of 3 zg sh -c "zstdcat '$W/base/t.din.zst' | grep -c '^1 ' > '$W/out'"
mount_fresh
cat "$V" > /dev/null
best_of 3 warm sh -c "cat '$V' > /dev/null"
best_of 3 grepm mount sh -c "grep -c '^1 ' '$V' > '$W/out'"
MOUNT_OPTS=--direct-io
best_of 3 dgrep mount sh -c "grep -c '^1 ' '$V' > '$W/out'"
MOUNT_OPTS=""
best_of 3 fl floor sh -c "cat '$FMNT/f' > /dev/null"
best_of 3 fld floor-dio sh -c "cat '$FMNT/f' > /dev/null"
unmount_if "$FMNT" "$FPID"
FPID=
tails=""
for _ in 1 2 3 4 5; do
        mount_fresh
        time_cmd t sh -c "tail -n 1 '$V' > /dev/null"
        tails="$tails$t"$'\n'
done
tails=$(printf '%s' "$tails" | sort -n)
# the same command on a local file: what starting sh and tail costs here
zstdcat "$W/base/t.din.zst" | tail -c 100000 > "$W/local"
best_of 5 tail_local sh -c "tail -n 1 '$W/local' > /dev/null"
tail_med=$(echo "$tails" | sed -n 3p)
tail_max=$(echo "$tails" | tail -n 1)
mount_fresh
if cmp -s <(zstdcat "$W/base/t.din.zst") "$V"; then same=identical; else same=DIFFERENT; fi
rss=$(awk '/VmHWM/ { print $2 }' "/proc/$PID/status")

mbps() { awk -v b="$TEXT" -v t="$1" 'BEGIN { if (t > 0) printf "%.0f", b / t / 1e6; else print "-" }'; }
# past the daemon's --drop-behind (1024 MiB by default) a view is not kept whole
warm_note=""
[ "$TEXT" -gt $((1024 * 1048576)) ] && warm_note="  (most of it was dropped: --drop-behind, default 1024 MiB)"
cat <<REPORT

tracemount bench: $N references, ascii $TEXT bytes; mount output vs zstdcat: $same
  archive t.pdt2.zst            $ARCH bytes ($(awk -v n="$N" -v a="$ARCH" 'BEGIN{printf "%.1f", n/a}') refs/byte); baseline t.din.zst $BASE bytes
  pack (din text -> pdt2.zst)   ${t_pack} s   (zstd -3 of the text: ${t_zc} s)
  index build                   ${t_index} s, index ${IDX:-?} bytes = $(awk -v i="${IDX:-0}" -v a="$ARCH" 'BEGIN{printf "%.3f", 100*i/a}')% of archive
                                     seconds   MB/s   ratio (baseline/tracemount; >1 = faster)
  zstdcat > /dev/null               $zc   $(mbps "$zc")
  zstdcat | cat > /dev/null         $zcp   $(mbps "$zcp")
  FUSE alone: cat, page cache       $fl   $(mbps "$fl")   $(ratio "$zc" "$fl") vs zstdcat (fuse_floor: no decoding)
  FUSE alone: cat, --direct-io      $fld   $(mbps "$fld")   $(ratio "$zc" "$fld") vs zstdcat
  cat ascii, cold mount             $cold   $(mbps "$cold")   $(ratio "$zc" "$cold") vs zstdcat, $(ratio "$zcp" "$cold") vs zstdcat|cat, $(ratio "$fl" "$cold") vs FUSE alone
  cold cat, medians of $ROUNDS rounds   zstdcat $zc_med, cat ascii $cold_med, --direct-io $dcold_med; the rounds' own ratios: median $(median "$cold_rr"), --direct-io $(median "$dcold_rr")
  the rounds, in order (s)          zstdcat $(rounds "$zcs"); cat $(rounds "$colds"); --direct-io $(rounds "$dcolds")
  their ratios, in order            cat $(rounds "$cold_rr"); --direct-io $(rounds "$dcold_rr")
  cat ascii, warm page cache        $warm   $(mbps "$warm")   $(ratio "$zc" "$warm")$warm_note
  zstdcat | grep -c '^1 '           $zg
  grep -c '^1 ' ascii, cold         $grepm           $(ratio "$zg" "$grepm")
  cat ascii, --direct-io            $dcold   $(mbps "$dcold")   $(ratio "$zc" "$dcold") vs zstdcat, $(ratio "$zcp" "$dcold") vs zstdcat|cat, $(ratio "$fld" "$dcold") vs FUSE alone
  grep -c '^1 ', --direct-io        $dgrep           $(ratio "$zg" "$dgrep")
  tail -n 1 ascii, fresh mount      median ${tail_med} s, worst ${tail_max} s (target < 0.050)
  tail -n 1 of a local file         ${tail_local} s (best of 5: starting sh and tail)
  daemon peak RSS                   ${rss} KiB (target < 100 MB)
REPORT
