#!/usr/bin/env bash
# bench/pack_speed.sh [MB]: tracetool pack's speed, in MB of input a second, for every row that
# writes (tracetool pack --help) from the inputs each takes, as plain, gzip and zstd output.
#
# Inputs of about MB megabytes each (default 8), made here: din text and a valgrind lackey log
# (tests/integration/lib.sh's generators), a glibc mtrace log, PTF text, and the Laplace raw and
# text forms of the lackey log. Rows and inputs as tests/integration/tools_cli.sh pairs them:
# address rows from din and lackey, heap rows from mtrace, object rows from PTF, Laplace rows
# from lackey and from each other. Each pack is timed (the best of
# TM_BENCH_ROUNDS runs by CPU time, default 1); gzip and zstd at pack's default levels (tracetool
# pack --help; tools/pack.h, PACK_LEVEL and PACK_GZIP_LEVEL; the address rows' zstd: the library's
# 3) and zstd at --level 3. Prints one line a pack: output, input, options, CPU seconds (user +
# system) and wall seconds, MB of input a second by each (on a loaded machine the wall clock is
# mostly the wait for a core), and the output's bytes. Needs a build (TM_BUILD, default ./build)
# and GNU time (/usr/bin/time).
set -euo pipefail
cd "$(dirname "$0")/.."
MB=${1:-8}
ROUNDS=${TM_BENCH_ROUNDS:-1}
B=${TM_BUILD:-$PWD/build}
TT=$B/tools/tracetool
W=$(mktemp -d "${TMPDIR:-/tmp}/tmpackspeed.XXXXXX")
trap 'rm -rf "$W"' EXIT
# shellcheck source=../tests/integration/lib.sh
. tests/integration/lib.sh

now() { date +%s%N; }

# Inputs: about MB megabytes each.
gen_din 11 $((MB * 1000000 / 10)) >"$W/in.din"
gen_lackey 13 $((MB * 1000000 / 14)) >"$W/in.lackey"
awk -v n=$((MB * 1000000 / 40)) 'BEGIN {
        srand(5); print "= Start"; live = 0
        for (i = 0; i < n; i++) {
                if (live > 0 && rand() < 0.45) {
                        k = int(rand() * live); a = addr[k]; addr[k] = addr[--live]
                        printf "@ ./prog:[0x%x] - 0x%x\n", 4096 + i % 977, a
                } else {
                        a = 94000000000000 + 16 * i
                        addr[live++] = a
                        printf "@ ./prog:[0x%x] + 0x%x 0x%x\n", 4096 + i % 977, a, 1 + int(rand() * 4000)
                }
        }
        print "= End"
}' >"$W/in.mtrace"
awk -v n=$((MB * 1000000 / 14)) 'BEGIN {
        srand(7); print "Trace begin"; print "fo 51 0 2 1 0 5 11 Thing"
        for (i = 0; i < 1000; i++) print "co 51 " 100 + i
        for (i = 0; i < n; i++) {
                r = rand(); o = 100 + int(rand() * 1000)
                if (r < 0.4) print "dw 51 " o " " int(rand() * 64)
                else if (r < 0.7) print "dr 51 " o " " int(rand() * 64)
                else if (r < 0.85) print "er 51 " o " " int(rand() * 2)
                else print "ew 51 " o " " int(rand() * 2) " " 100 + int(rand() * 1000)
        }
        print "Trace end"
}' >"$W/in.ptf"
"$TT" pack "$W/in.lackey" "$W/in.lpr" 2>/dev/null
"$TT" pack "$W/in.lackey" "$W/in.lpt" 2>/dev/null

# one IN OUT [OPTIONS...]: pack IN into W/OUT, print the line: the best of the rounds by CPU
# time (user + system: the machine's other load does not count), and that round's wall time
one() {
        local in=$1 out=$2 best= wall= size
        shift 2
        size=$(stat -c %s "$W/$in")
        for _ in $(seq "$ROUNDS"); do
                rm -f "$W/$out"
                if ! /usr/bin/time -f "%e %U %S" -o "$W/time" "$TT" pack "$@" "$W/$in" "$W/$out" \
                        2>"$W/err"; then
                        echo "$out from $in: $(tail -n 1 "$W/err")"
                        return
                fi
                read -r e u s <"$W/time"
                local cpu
                cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')
                if [ -z "$best" ] || awk -v a="$cpu" -v b="$best" 'BEGIN { exit !(a < b) }'; then
                        best=$cpu wall=$e
                fi
        done
        awk -v row="${out#*.}" -v input="${in#in.}" -v lvl="${*:-default}" -v s="$size" \
                -v cpu="$best" -v wall="$wall" -v bytes="$(stat -c %s "$W/$out")" 'BEGIN {
                        c = cpu > 0.005 ? cpu : 0.005; w = wall > 0.005 ? wall : 0.005
                        printf "%-12s %-7s %-10s %8.2f %8.2f %9.1f %9.1f %10d\n", row, input, lvl, cpu,
                                wall, s / 1e6 / c, s / 1e6 / w, bytes }'
}

printf '%-12s %-7s %-10s %8s %8s %9s %9s %10s\n' output input options "cpu s" "wall s" "MB/s cpu" \
        "MB/s wall" bytes
for pair in din:pdt2 din:pdt din:din lackey:pdt2 lackey:lackey lackey:lpr lackey:lpt \
        lackey:din lpr:lpt lpt:lpr mtrace:hatf mtrace:mtf ptf:ptf ptf:ptfb; do
        in=in.${pair%%:*} row=${pair#*:}
        for c in "" .gz .zst; do
                one "$in" "out.$row$c"
        done
        one "$in" "out.$row.zst" --level 3
done
