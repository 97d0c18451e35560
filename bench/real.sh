#!/usr/bin/env bash
# bench/real.sh: every encoding on real traces the bench makes itself,
# against the baselines, and the cold cat of ascii against zstdcat.
#
# Makes five traces once and keeps them, with every size measured, in a
# cache outside the repository ($TM_BENCH_CACHE, default
# ${XDG_CACHE_HOME:-$HOME/.cache}/tracemount-bench, subdirectory real-full
# or real-quick; delete it to measure again):
#   sort   valgrind lackey of `sort` over SORT_LINES generated lines (full:
#          about 1.1e8 references), kept as lackey text (zstd -3);
#   chase  lackey of bench/chase_cycle (a random cycle of 64-byte nodes walked:
#          pointer chasing; full: about 3e7 references);
#   py     heap trace of a Python script (dict of lists and strings,
#          PYTHONMALLOC=malloc) by `tracetool record`, and the same run under
#          heaptrack (its own file, and imported by `tracetool pack`);
#   java   tests/integration/JavaWork.java under the JVMTI agent (a ZIP);
#   lap    a Laplace raw trace (.lpr) packed from lackey of `sort -n`.
# Then:
#   1. packs each trace with every encoding `tracetool pack --help` lists,
#      at pack's default level and at --level 19, into OUT.SUFFIX.zst (the
#      native .tmn as it is); an encoding that refuses the trace is "n/a";
#      encodings of a format that give the same bytes at the default level
#      (din and lackey text ignore the address width) are packed at 19 once;
#   2. the baselines: the ascii text + zstd -19, + xz -9, PDATS II + gzip -9
#      (address traces, as the PDATS II paper), heaptrack's own file (py),
#      the agent's ZIP (java);
#   3. the cold cat of ascii through a fresh mount (page cache, and with
#      --direct-io) and `tracetool cat X ascii`, each taking turns with
#      `zstdcat` of the ascii text as zstd -19, TM_BENCH_ROUNDS rounds
#      (default 5): medians of the rounds' ratios zstdcat / ours (>= 1:
#      tracemount faster); tail -n 1 of ascii on a fresh mount, in ms;
#   4. one table: bytes and bytes a record (references a byte for address
#      traces) of every encoding and baseline.
# TM_BENCH_QUICK=1: small traces (1.4-3.4 million references, 0.2-0.3 million
# heap and Java records: minutes on a quiet machine; full: 10^6 to 10^8).
# TM_BENCH_TRACES: which traces, in order (default "py java lap chase sort").
# TM_BENCH_JOBS: packs run at once (default 2). TM_BENCH_TARGETS=1: only what
# issue 35's targets are judged by (the native format, the text + zstd -19,
# the cold cat). TM_BENCH_REPORT=1: print
# the table from the cache only ("..." for what is not measured yet).
# Needs a release build (TM_BUILD, default ./build), valgrind, heaptrack,
# a JDK (the agent is built with it), xz and a working /dev/fuse. Heavy
# steps run under nice.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${TM_BUILD:-$PWD/build}
TT=$B/tools/tracetool
ROUNDS=${TM_BENCH_ROUNDS:-5}
JOBS=${TM_BENCH_JOBS:-2}
if [ -n "${TM_BENCH_QUICK:-}" ]; then
        MODE=quick SORT_LINES=1000 CHASE="4096 100000" PY_N=5000 JAVA_N=5000 LAP_N=300
else
        MODE=full SORT_LINES=25000 CHASE="65536 3000000" PY_N=100000 JAVA_N=50000 LAP_N=3000
fi
C=${TM_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tracemount-bench}/real-$MODE
S=$C/sizes # one file a figure: bytes, or n/a
mkdir -p "$C/arch" "$C/tmp" "$S"
# the smallest first, so that the biggest is the one a short run leaves unfinished
TRACES=${TM_BENCH_TRACES:-py java lap chase sort}
ADDRESS="sort chase"

size() { stat -c %s "$1"; }
have() { [ -s "$S/$1" ]; }
put() { [ -z "$2" ] || { echo "$2" > "$S/$1.tmp" && mv "$S/$1.tmp" "$S/$1"; }; } # nothing: not measured
get() { if have "$1"; then cat "$S/$1"; else echo ...; fi; }
# The archive every trace's figures are taken from.
src() {
        case $1 in
        sort | chase) echo "$C/$1.lackey.zst" ;;
        py) echo "$C/arch/py.hatf.zst" ;;
        java) echo "$C/arch/java.zip" ;;
        lap) echo "$C/arch/lap.lpr.zst" ;;
        esac
}

# lackey of a command ($2...) as lackey text, zstd -3, in $C/$1.lackey.zst
lackey() {
        local t=$1
        shift
        [ -s "$C/$t.lackey.zst" ] && return 0
        echo "bench: lackey of $* (valgrind)" >&2
        nice valgrind --tool=lackey --trace-mem=yes --log-file="$C/tmp/$t.log" "$@" > /dev/null
        grep -v '^==' "$C/tmp/$t.log" | nice zstd -q -f -3 -o "$C/tmp/$t.lackey.zst"
        mv "$C/tmp/$t.lackey.zst" "$C/$t.lackey.zst"
        rm -f "$C/tmp/$t.log"
}

# make_trace TRACE: the trace, once
make_trace() {
        case $1 in
        sort | chase | lap)
                command -v valgrind > /dev/null || { echo "bench: valgrind not installed" >&2; exit 1; } ;;
        esac
        if [ "$1" = sort ]; then
                seq 1 "$SORT_LINES" | awk '{ print ($1 * 7919) % 100003, "line", $1 }' > "$C/sort.in"
                lackey sort sort "$C/sort.in"
        fi
        if [ "$1" = chase ]; then
                [ -x "$B/bench/chase_cycle" ] || { echo "bench: $B/bench/chase_cycle missing (ninja -C $B)" >&2; exit 1; }
                # shellcheck disable=SC2086
                lackey chase "$B/bench/chase_cycle" $CHASE
        fi
        if [ "$1" = lap ] && [ ! -s "$C/arch/lap.lpr.zst" ]; then
                awk -v n="$LAP_N" 'BEGIN { srand(1); for (i = 0; i < n; i++) print int(rand() * 1e9) }' > "$C/lap.in"
                lackey lap sort -n "$C/lap.in"
                nice "$TT" pack "$C/lap.lackey.zst" "$C/tmp/lap.lpr.zst" 2> /dev/null
                mv "$C/tmp/lap.lpr.zst" "$C/arch/lap.lpr.zst"
        fi
        if [ "$1" = py ] && { [ ! -s "$C/arch/py.hatf.zst" ] || [ ! -s "$C/py.heaptrack.zst" ]; }; then
                # the interposer follows no exec: the interpreter itself, not a wrapper script
                local py
                py=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')
                cat > "$C/work.py" << 'EOF'
import random, sys
n = int(sys.argv[1]); random.seed(7); d = {}
for i in range(n):
    k = "k%d" % random.randrange(n)
    d[k] = [k * (i % 5 + 1), str(i), (i, k)]
    if i % 3 == 0:
        d.pop("k%d" % random.randrange(n), None)
print(len(sorted(d)))
EOF
                echo "bench: heap trace of python (tracetool record, heaptrack)" >&2
                PYTHONMALLOC=malloc nice "$TT" record -o "$C/tmp/py.hatf.zst" -- "$py" "$C/work.py" "$PY_N" > /dev/null 2>&1
                rm -f "$C"/tmp/ht.*
                PYTHONMALLOC=malloc nice heaptrack -o "$C/tmp/ht" "$py" "$C/work.py" "$PY_N" > /dev/null 2>&1
                mv "$(ls "$C"/tmp/ht.* | head -n 1)" "$C/py.heaptrack.zst"
                mv "$C/tmp/py.hatf.zst" "$C/arch/py.hatf.zst"
        fi
        if [ "$1" = java ] && [ ! -s "$C/arch/java.zip" ]; then
                local agent=$B/tools/javaagent/libtmjava.so
                [ -e "$agent" ] || { echo "bench: $agent not built (no JDK found by meson?)" >&2; exit 1; }
                echo "bench: Java trace of JavaWork $JAVA_N" >&2
                mkdir -p "$C/tmp/classes"
                javac -d "$C/tmp/classes" tests/integration/JavaWork.java
                nice java -agentpath:"$agent=$C/tmp/java.zip" -cp "$C/tmp/classes" JavaWork "$JAVA_N" > /dev/null
                mv "$C/tmp/java.zip" "$C/arch/java.zip"
        fi
        # every trace is mounted as the native format at pack's defaults,
        # the address traces as PDATS II (zstd 3) too
        local t=$1
        if [ "$t" = sort ] || [ "$t" = chase ]; then
                [ -s "$C/arch/$t.pdt2.zst" ] || { nice "$TT" pack "$(src "$t")" "$C/tmp/$t.pdt2.zst" 2> /dev/null &&
                        mv "$C/tmp/$t.pdt2.zst" "$C/arch/$t.pdt2.zst"; }
        fi
        [ -s "$C/arch/$t.$NATIVE" ] || { nice "$TT" pack "$(src "$t")" "$C/tmp/$t.$NATIVE" 2> /dev/null &&
                mv "$C/tmp/$t.$NATIVE" "$C/arch/$t.$NATIVE"; }
        have "$t.records" || put "$t.records" "$("$TT" stat "$(src "$t")" |
                awk '($1 == "records" || $1 == "references") && !n { print $2; n = 1 }')"
}

# The formats and encodings pack writes: "SUFFIX ENCODING" lines, "-" when
# the format has one encoding.
encodings() {
        "$TT" pack --help 2>&1 |
                sed -n -e 's/^  OUT\.\([a-z0-9_]*\)\[[^]]*\]  *[a-z0-9_]*, encodings: \(.*\)$/\1 \2/p' \
                        -e 's/^  OUT\.\([a-z0-9_]*\)  *the native format .*/\1 (one)/p' |
                while read -r suf list; do
                        [ "$list" = "(one)" ] && list=-
                        for e in ${list//,/ }; do echo "$suf $e"; done
                done
}
# The native format's suffix (its line in pack's help), and the block sizes
# (log2 of the records a block holds) the address traces are packed at beside
# pack's default, to show the ratio lost to block restarts.
NATIVE=$("$TT" pack --help 2>&1 | sed -n 's/^  OUT\.\([a-z0-9_]*\)  *the native format .*/\1/p')
[ -n "$NATIVE" ] || { echo "bench: pack --help names no native format" >&2; exit 1; }
BLOCKS="16 17 18 20"
# The native format's figures in the cache are of the encoder this stamp
# names (change it when the encoder's bytes change): figures and archives of
# another are dropped, with the cold cat rounds (their speed depends on the
# load of the run: they are measured again with the native archives).
NATIVE_STAMP="native: schema 1 and 2, typed parameters (level, block-log2)"
if [ "$(cat "$S/native.stamp" 2> /dev/null)" != "$NATIVE_STAMP" ]; then
        rm -f "$S"/*."$NATIVE".* "$S"/*.cat "$S"/cat.* "$C"/arch/*."$NATIVE" "$C"/arch/.*."$NATIVE".tmidx
        echo "$NATIVE_STAMP" > "$S/native.stamp"
fi
key() { echo "$1.$2.${3//\//_}.$4"; } # trace suffix encoding level
out_name() { if [ "$2" = "$NATIVE" ]; then echo "$C/tmp/$(key "$@").$2"; else echo "$C/tmp/$(key "$@").$2.zst"; fi; }

# One packing: its bytes, or n/a when pack refuses the trace with that encoding.
pack_one() {
        local t=$1 suf=$2 enc=$3 lvl=$4 k out
        k=$(key "$@")
        have "$k" && return 0
        # what refuses the trace refuses it at every level
        [ "$lvl" != def ] && [ "$(get "$(key "$t" "$suf" "$enc" def)")" = n/a ] && { put "$k" n/a; return 0; }
        out=$(out_name "$@")
        local args=()
        case $enc in
        -) ;;
        blk*) args+=(-p "block-log2=${enc#blk}") ;; # the native format's block size
        *) args+=(-e "$enc") ;;
        esac
        [ "$lvl" != def ] && args+=(--level "$lvl")
        if nice "$TT" pack "${args[@]}" "$(src "$t")" "$out" > /dev/null 2> "$S/$k.log"; then
                put "$k" "$(size "$out")"
        else
                put "$k" n/a
        fi
        rm -f "$out"
}
# Every trace in the native format at pack's defaults and at --level 19, the
# address traces also at every block size of BLOCKS (at both levels).
native_all() {
        local b
        pool pack_one "$1" "$NATIVE" - def
        pool pack_one "$1" "$NATIVE" - 19
        case " $ADDRESS " in *" $1 "*) ;; *) return 0 ;; esac
        for b in $BLOCKS; do
                pool pack_one "$1" "$NATIVE" "blk$b" def
                pool pack_one "$1" "$NATIVE" "blk$b" 19
        done
}
# The ascii text's bytes, and as zstd -19 (kept: the baseline of the cat
# rounds; on two threads, as the other packs run, which cuts a text of more
# than 32 MiB into jobs compressed apart) and xz -9.
text_bytes() { have "$1.text" || put "$1.text" "$("$TT" cat "$(src "$1")" ascii | wc -c)"; }
text_zstd() {
        [ -s "$C/$1.text.zst" ] || { "$TT" cat "$(src "$1")" ascii | nice zstd -q -f -19 -T2 -o "$C/tmp/$1.text.zst" &&
                mv "$C/tmp/$1.text.zst" "$C/$1.text.zst"; }
        have "$1.text.zstd19" || put "$1.text.zstd19" "$(size "$C/$1.text.zst")"
}
text_xz() { have "$1.text.xz9" || put "$1.text.xz9" "$("$TT" cat "$(src "$1")" ascii | nice xz -9 -c | wc -c)"; }
pdats_gzip() {
        have "$1.pdt2.gzip9" && return 0
        if nice "$TT" pack -e 64 "$(src "$1")" "$C/tmp/$1.pdt2" 2> /dev/null; then
                put "$1.pdt2.gzip9" "$(nice gzip -9 -c "$C/tmp/$1.pdt2" | wc -c)"
        else
                put "$1.pdt2.gzip9" n/a
        fi
        rm -f "$C/tmp/$1.pdt2"
}
own_files() {
        [ "$1" = java ] && { have java.zip || put java.zip "$(size "$C/arch/java.zip")"; } && return 0
        have py.heaptrack || put py.heaptrack "$(size "$C/py.heaptrack.zst")"
        if ! have py.heapin; then # heaptrack's file imported: the same run through another recorder
                if nice "$TT" pack "$C/py.heaptrack.zst" "$C/tmp/py-ht.hatf.zst" 2> "$S/py.heapin.log"; then
                        put py.heapin "$(size "$C/tmp/py-ht.hatf.zst")"
                        put py.heapin.records "$("$TT" stat "$C/tmp/py-ht.hatf.zst" | awk '$1 == "records" && !n { print $2; n = 1 }')"
                else
                        put py.heapin n/a
                fi
                rm -f "$C/tmp/py-ht.hatf.zst" "$C/tmp/.py-ht.hatf.zst.tmidx"
        fi
}

# Run "$@" in the background, at most JOBS at once.
pool() {
        while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
        "$@" &
}

# A format's encodings that gave the same bytes at the default level (the
# text formats, din and lackey, take no address width) are packed at other
# levels once: same_as TRACE SUFFIX ENCODING prints the first such encoding.
same_as() {
        local t=$1 suf=$2 enc=$3 s e d
        d=$(get "$(key "$t" "$suf" "$enc" def)")
        case $d in n/a | ...) echo "$enc"; return ;; esac
        while read -r s e; do
                [ "$s" = "$suf" ] || continue
                [ "$(get "$(key "$t" "$s" "$e" def)")" = "$d" ] && { echo "$e"; return; }
        done < <(encodings)
}
# at other levels than the default, the smallest at the default first (the
# quickest to pack again, so a short run gets the most figures)
pack_all() { # TRACE LEVEL
        local suf enc
        while read -r suf enc; do
                [ "$2" != def ] && [ "$(same_as "$1" "$suf" "$enc")" != "$enc" ] && continue
                pool pack_one "$1" "$suf" "$enc" "$2"
        done < <(if [ "$2" = def ]; then encodings; else
                encodings | while read -r suf enc; do
                        echo "$(get "$(key "$1" "$suf" "$enc" def)" | tr -c '0-9\n' 0) $suf $enc"
                done | sort -n | cut -d' ' -f2-
        fi)
}
# after pack_all TRACE LEVEL: the figures of the encodings it packed once
pack_same() {
        local suf enc first
        while read -r suf enc; do
                first=$(same_as "$1" "$suf" "$enc")
                [ "$first" = "$enc" ] || have "$(key "$1" "$suf" "$enc" "$2")" ||
                        put "$(key "$1" "$suf" "$enc" "$2")" "$(get "$(key "$1" "$suf" "$first" "$2")")"
        done < <(encodings)
}

# ---- the cold cat -----------------------------------------------------------
W=$(mktemp -d "${TMPDIR:-/tmp}/tmreal.XXXXXX")
MNT=$W/mnt
. bench/lib.sh
# a run that stops ends its packs with it (the next run packs them again)
stop_pool() {
        local j k
        for j in $(jobs -p); do # the job first: it would take its pack's end for a refusal
                k=$(pgrep -P "$j" || true)
                kill "$j" 2> /dev/null || true
                # shellcheck disable=SC2086
                [ -z "$k" ] || kill $k 2> /dev/null || true
        done
        cleanup
}
trap stop_pool EXIT
mkdir -p "$MNT" "$W/cache"
now_ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1e6 }'; }
# mount_fresh of lib.sh over $C/arch
mount_arch() {
        rm -rf "$W/arch"
        ln -s "$C/arch" "$W/arch"
        mount_fresh
}
# cpu_of PID: the user + system seconds a live process has taken
cpu_of() { awk -v t="$(getconf CLK_TCK)" '{ printf "%.3f", ($14 + $15) / t }' "/proc/$1/stat"; }
# timed CMD...: runs CMD, its output dropped; sets WALL and CPU (user +
# system seconds, of CMD and its children)
timed() {
        local f=$W/time s e
        s=$(now)
        /usr/bin/time -f "%U %S" -o "$f" "$@" > /dev/null
        e=$(now)
        WALL=$(secs "$s" "$e") CPU=$(awk '{ printf "%.3f", $1 + $2 }' "$f")
}
load() { cut -d' ' -f1 /proc/loadavg; }
# per of CPU times, which are counted in ticks: 0 when below one
cpu_per() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "inf" }'; }
# cat_rounds TRACE ARCHIVE: one line: the medians of the rounds' ratios
# zstdcat / ours, wall time (cat through a fresh mount, page cache and
# --direct-io; tracetool cat) and CPU time (the daemon's for the page cache
# cat; tracetool cat's), the median tail -n 1 on a fresh mount, zstdcat's
# MB/s and the load average at the start and the end of the rounds
cat_rounds() {
        local t=$1 a=$2 r s e z zc c cc d k kc rc rcc rd rk rkc tl l0
        rc="" rcc="" rd="" rk="" rkc="" tl="" l0=$(load)
        "$TT" index "$C/arch/$a" > /dev/null
        MOUNT_OPTS=""
        mount_arch
        if ! cmp -s "$MNT/$a/ascii" <(zstdcat "$C/$t.text.zst"); then
                echo "bench: $a: ascii through the mount differs from tracetool cat's" >&2
                printf '%-16s ascii through the mount differs\n' "$a"
                return 0
        fi
        for r in $(seq "$ROUNDS"); do
                timed zstdcat "$C/$t.text.zst"; z=$WALL zc=$CPU
                MOUNT_OPTS=""; mount_arch
                s=$(now); cat "$MNT/$a/ascii" > /dev/null; e=$(now); c=$(secs "$s" "$e") cc=$(cpu_of "$PID")
                MOUNT_OPTS="--direct-io"; mount_arch
                s=$(now); cat "$MNT/$a/ascii" > /dev/null; e=$(now); d=$(secs "$s" "$e")
                timed "$TT" cat "$C/arch/$a" ascii; k=$WALL kc=$CPU
                MOUNT_OPTS=""; mount_arch
                s=$(now); tail -n 1 "$MNT/$a/ascii" > /dev/null; e=$(now)
                rc="$rc$(per "$z" "$c")"$'\n' rd="$rd$(per "$z" "$d")"$'\n' rk="$rk$(per "$z" "$k")"$'\n'
                rcc="$rcc$(cpu_per "$zc" "$cc")"$'\n' rkc="$rkc$(cpu_per "$zc" "$kc")"$'\n' tl="$tl$(now_ms "$s" "$e")"$'\n'
                echo "  $a round $r: zstdcat $z s (cpu $zc), cat $c s (daemon cpu $cc), --direct-io $d s," \
                        "tracetool cat $k s (cpu $kc), tail -n 1 $(echo -n "$tl" | tail -n 1) ms; load $(load)" >&2
        done
        printf '%-16s %6s %6s %9s %6s %6s %8s %6s %9s\n' "$a" "$(echo -n "$rc" | median)" "$(echo -n "$rcc" | median)" \
                "$(echo -n "$rd" | median)" "$(echo -n "$rk" | median)" "$(echo -n "$rkc" | median)" \
                "$(echo -n "$tl" | median)" "$(awk -v b="$(get "$t.text")" -v z="$z" 'BEGIN { printf "%.0f", b / z / 1e6 }')" \
                "$l0-$(load)"
        fusermount3 -u "$MNT"; wait "$PID" 2> /dev/null || true; PID=
}
cat_head() {
        printf '%-16s %6s %6s %9s %6s %6s %8s %6s %9s\n' archive cat "cpu" direct-io tt-cat "cpu" "tail ms" "MB/s" load
}
# the cat rounds of one trace, kept one file an archive
cat_trace() {
        [ -s "$C/$1.text.zst" ] || { echo "bench: $1: no text + zstd -19 to time against" >&2; return 0; }
        local a
        for a in $(cat_archives "$1"); do
                have "cat.$a" && continue
                cat_rounds "$1" "$a" > "$C/tmp/cat.$a"
                mv "$C/tmp/cat.$a" "$S/cat.$a"
        done
}
cat_archives() {
        case $1 in
        sort | chase) echo "$1.pdt2.zst" ;;
        py) echo py.hatf.zst ;;
        java) echo java.zip ;;
        lap) echo lap.lpr.zst ;;
        esac
        echo "$1.$NATIVE"
}

# ---- the table --------------------------------------------------------------
# bytes a record, or references a byte for address traces
unit() { case " $ADDRESS " in *" $1 "*) echo "refs/B" ;; *) echo "B/rec" ;; esac; }
ratio() {
        local t=$1 b=$2 n
        n=$(get "$t.records")
        case $b in n/a | ... | "") echo "$b"; return ;; esac
        case $n in ... | "") echo ...; return ;; esac
        if [ "$(unit "$t")" = refs/B ]; then awk -v b="$b" -v n="$n" 'BEGIN { printf "%.2f", n / b }'; else
                awk -v b="$b" -v n="$n" 'BEGIN { printf "%.3f", b / n }'; fi
}
# how many times smaller than the trace's text + zstd -19
vs_text() {
        local t=$1 b=$2 z
        z=$(get "$t.text.zstd19")
        case "$b $z" in *n/a* | *...* | " "* | *" ") echo; return ;; esac
        awk -v b="$b" -v z="$z" 'BEGIN { printf "%.2fx", z / b }'
}
row() { # trace label bytes-default bytes-19
        printf '| %-6s | %-34s | %12s | %7s | %6s | %12s | %7s | %6s |\n' "$1" "$2" "$3" "$(ratio "$1" "$3")" \
                "$(vs_text "$1" "$3")" "$4" "$(ratio "$1" "$4")" "$(vs_text "$1" "$4")"
}
# what a block size of the native format costs against its largest blocks:
# bytes(2^b) / bytes(2^20) - 1, in percent
lost() {
        local a=$1 m=$2
        case "$a $m" in *n/a* | *...*) echo ...; return ;; esac
        awk -v a="$a" -v m="$m" 'BEGIN { printf "%+.1f%%", (a / m - 1) * 100 }'
}
# every encoding of every format: a format's encodings that gave the same
# bytes share a row; those that refused the trace at both levels are listed
table() {
        local t suf enc d n refused label last ld ln
        echo "| trace  | format encoding(s)                 | bytes        | per     | x text | bytes -19    | per -19 | x text |"
        echo "|--------|------------------------------------|--------------|---------|--------|--------------|---------|--------|"
        for t in $TRACES; do
                refused="" label="" last=""
                while read -r suf enc; do
                        d=$(get "$(key "$t" "$suf" "$enc" def)")
                        n=$(get "$(key "$t" "$suf" "$enc" 19)")
                        if [ "$d" = n/a ]; then refused="$refused $suf/$enc"; continue; fi
                        if [ "$suf $d $n" = "$last" ]; then label="$label,$enc"; continue; fi
                        [ -n "$label" ] && row "$t" "$label" "$ld" "$ln"
                        label="$suf $enc" last="$suf $d $n" ld=$d ln=$n
                done < <(encodings)
                [ -n "$label" ] && row "$t" "$label" "$ld" "$ln"
                case " $ADDRESS " in *" $t "*)
                        for b in $BLOCKS; do
                                row "$t" "$NATIVE, blocks of 2^$b" "$(get "$(key "$t" "$NATIVE" "blk$b" def)")" \
                                        "$(get "$(key "$t" "$NATIVE" "blk$b" 19)")"
                        done ;;
                esac
                row "$t" "ascii text + zstd -19" "" "$(get "$t.text.zstd19")"
                row "$t" "ascii text + xz -9" "" "$(get "$t.text.xz9")"
                case $t in
                sort | chase) row "$t" "PDATS II (64) + gzip -9" "" "$(get "$t.pdt2.gzip9")" ;;
                py)
                        row py "heaptrack's own file" "$(get py.heaptrack)" ""
                        row py "heaptrack's, packed (.hatf)" "$(get py.heapin)" ""
                        ;;
                java) row java "the agent's ZIP (deflate)" "$(get java.zip)" "" ;;
                esac
                echo "| $t | $(unit "$t"): of $(get "$t.records") records, ascii text $(get "$t.text") bytes; refused:${refused:- none} | | | | | | |"
        done
}
# the ratio lost to block restarts of the address traces' native archives
restarts() {
        local t b l m19 md
        for t in $TRACES; do
                case " $ADDRESS " in *" $t "*) ;; *) continue ;; esac
                md=$(get "$(key "$t" "$NATIVE" blk20 def)") m19=$(get "$(key "$t" "$NATIVE" blk20 19)")
                l=""
                for b in $BLOCKS; do
                        l="$l 2^$b $(lost "$(get "$(key "$t" "$NATIVE" "blk$b" def)")" "$md")"
                        l="$l / $(lost "$(get "$(key "$t" "$NATIVE" "blk$b" 19)")" "$m19");"
                done
                echo "$t: bytes against blocks of 2^20, pack's default level / 19:$l"
        done
}

if [ -z "${TM_BENCH_REPORT:-}" ]; then
        # first what issue 35's targets are judged by (the native format, the
        # text + zstd -19, the cold cat), trace by trace; then the rest
        for t in $TRACES; do
                echo "bench: $t, the native format ($(date -u +%H:%M:%S))" >&2
                make_trace "$t"
                # the longest first, so that the slots end together
                pool text_zstd "$t"
                pool text_bytes "$t"
                native_all "$t"
                wait
                cat_trace "$t"
        done
        [ -n "${TM_BENCH_TARGETS:-}" ] && TRACES_ALL="" || TRACES_ALL=$TRACES
        for t in $TRACES_ALL; do
                echo "bench: $t, every encoding ($(date -u +%H:%M:%S))" >&2
                case $t in
                sort | chase)
                        # PDATS II + zstd -19: the native format is to be no larger
                        pool pack_one "$t" pdt2 64 def
                        pool pack_one "$t" pdt2 64 19
                        pool pdats_gzip "$t"
                        ;;
                py | java) pool own_files "$t" ;;
                esac
                pack_all "$t" def
                wait
                pool text_xz "$t"
                pack_all "$t" 19
                wait
                pack_same "$t" 19
        done
fi
echo "== real traces ($MODE; cache $C) =="
echo "per: refs/B (references a byte) or B/rec (bytes a record); x text: times smaller than the text + zstd -19"
table
echo
restarts
echo
echo "cold cat of ascii, median of $ROUNDS alternating rounds of zstdcat / ours, wall and CPU time"
echo "(>= 1: tracemount faster); tail -n 1 on a fresh mount (median, ms); zstdcat's MB/s; load average"
cat_head
for t in $TRACES; do
        for a in $(cat_archives "$t"); do cat "$S/cat.$a" 2> /dev/null || echo "$a: not measured yet"; done
done
