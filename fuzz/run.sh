#!/usr/bin/env bash
# fuzz/run.sh [SECONDS] [HARNESS...]: build the libFuzzer harnesses with
# clang (-O2, ASan, UBSan) and run each named one (default: all) for
# SECONDS (default 120), one after the other, under nice -n 19.
#
# Harnesses (each file's head says what it checks):
#   fuzz_archive    a whole archive: containers, codec probe, index pass,
#                   one view read a run, picked by the input
#   fuzz_container  plain, gzip, zstd (single, multi-frame, seekable): scan,
#                   cursors and seeks, seek index saved and reloaded, agree
#   fuzz_din fuzz_pdats fuzz_lackey   one codec each (fuzz/fuzz_codec.c):
#                   whole vs windowed decoding, resumed from a checkpoint
#   fuzz_pdats2     PDATS II's block decoder against its scalar one
#   fuzz_render     the batch din renderer against the per-line one
#   fuzz_hatf       the HATF decoder, windowed against whole
#   fuzz_metatf     the Meta-TF decoder over three DTDs
#   fuzz_dtd        the Meta-TF DTD parser and compiler
#   fuzz_index      index files (address and record) through tm_trace_index
#   fuzz_java       the Java trace decoder, windowed against whole, and the
#                   java family's statistics pass
#   fuzz_ptf        the PTF decoders (ASCII, binary), windowed against whole, the
#                   ASCII writer over what they decode, and
#                   the object family's pass
#   fuzz_laplace    the three Laplace decoders (raw, text, kernel events),
#                   windowed against whole, and the laplace family's pass
#   fuzz_native     the native encoding: files with their checksums made
#                   right, windowed against whole; records round-tripped
#   fuzz_ncol       the native encoding's schema 2 (any schema): files with
#                   their checksums made right, windowed against whole, the
#                   claiming family's pass; records round-tripped
#   fuzz_ncol_file  fuzz_ncol's files alone (no round trips): the schema-2
#                   decoder at some 10 times fuzz_ncol's executions a second
#
# Corpus: fuzz/out/corpus/<harness>/ (kept between runs, not in git) grows
# from the committed seeds in fuzz/corpus/<harness>/ and the findings in
# tests/data/fuzz/<harness>/. Crashes land in fuzz/out/<harness>-crash-...;
# each run's log in fuzz/out/<harness>.log. A finding goes to
# tests/data/fuzz/<harness>/, which unit_fuzzregress replays through the
# same entry points in the test suite. Exit status 1 when a harness had a
# finding (tests/fuzz_smoke.sh runs every harness a few seconds so).
# Environment: FUZZ_JOBS (default 1) parallel workers per harness;
# FUZZ_KEEP_GOING=1 starts a harness again after a finding (its input is
# saved) until its time is used, so a long run keeps its whole time;
# FUZZ_ARGS extra libFuzzer options; FUZZ_OUT the output directory instead
# of fuzz/out (e.g. a second person's, or a measurement's own corpus).
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-120}
shift || true
ALL="fuzz_archive fuzz_container fuzz_din fuzz_pdats fuzz_lackey fuzz_pdats2 fuzz_render
fuzz_hatf fuzz_metatf fuzz_dtd fuzz_index fuzz_ptf
fuzz_java fuzz_laplace fuzz_native fuzz_ncol fuzz_ncol_file"
HARNESSES=${*:-$ALL}
O=${FUZZ_OUT:-fuzz/out}
# The library as committed at FUZZ_REV (default HEAD; "worktree": the
# working tree as it is): other people's half-made edits are not fuzzed.
REV=${FUZZ_REV:-HEAD}
S=.
if [ "$REV" != worktree ]; then
        S=$O/src
        want=$(git rev-parse "$REV^{commit}")
        if [ "$(cat "$S/.rev" 2>/dev/null)" != "$want" ]; then
                rm -rf "$S" "$O/obj"
                mkdir -p "$S"
                git archive "$want" include arch codecs views tests/p2_lockstep.h | tar -x -C "$S"
                echo "$want" >"$S/.rev"
        fi
fi
mkdir -p "$O/obj"
CC=${CC:-clang}
CFLAGS="-g -O2 -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -I$S -DTM_SOURCE_DIR=\"$PWD\"
        -fsanitize=address,undefined -fno-sanitize-recover=undefined"
echo "library: $REV ($(cd "$S" && git rev-parse --short HEAD 2>/dev/null || cat .rev 2>/dev/null))"

# the library, once, instrumented for coverage but without libFuzzer's main
objs=()
for s in "$S"/codecs/*.c "$S"/codecs/*/*.c "$S"/views/*.c; do
        o=$O/obj/$(echo "${s#"$S"/}" | tr / _).o
        if [ ! -e "$o" ] || [ "$s" -nt "$o" ] || [ fuzz/run.sh -nt "$o" ] ||
                [ -n "$(find "$S/include" "$S/arch" "$S/codecs" "$S/views" -name '*.h' -newer "$o" | head -1)" ]; then
                # shellcheck disable=SC2086
                nice -n 19 "$CC" $CFLAGS -fsanitize=fuzzer-no-link -c "$s" -o "$o"
        fi
        objs+=("$o")
done

build() { # build NAME SOURCE [extra flags]
        local name=$1 src=$2
        shift 2
        # shellcheck disable=SC2086
        nice -n 19 "$CC" $CFLAGS -fsanitize=fuzzer "$@" "$src" "${objs[@]}" \
                -lz -lzstd -lpthread -lm -o "$O/$name"
}

# Options of each harness: the largest input it is given. fuzz_archive's
# 4 KiB holds a small compressed archive whole; the codec harnesses' 4-8 KiB
# hold hundreds of records, more than any decoder's look-ahead; fuzz_index
# takes a whole index file of the small archives it makes (patch mode's
# edits reach any byte of the real one, the Meta-TF one's over 64 KiB too).
opts() {
        case $1 in
        fuzz_index) echo "-max_len=65536" ;;
        fuzz_pdats2 | fuzz_container) echo "-max_len=8192" ;;
        fuzz_render) echo "-max_len=2048" ;;
        *) echo "-max_len=4096" ;;
        esac
}

for h in $HARNESSES; do
        case $h in
        fuzz_din | fuzz_pdats | fuzz_lackey)
                build "$h" fuzz/fuzz_codec.c -DFZ_CODEC="\"${h#fuzz_}\""
                ;;
        fuzz_*) build "$h" "fuzz/$h.c" ;;
        *) echo "unknown harness $h" >&2 && exit 2 ;;
        esac
done

# ASan keeps freed memory in a quarantine (so that a use after free is
# caught), 256 MB by default: every block a run allocates is then memory
# not touched for thousands of runs (page faults; over 128 KiB an mmap and
# a munmap, whose TLB shootdowns are slow in a VM). With 16 MB a use after
# free is still caught when less than 16 MB was freed in between: a whole
# run of every harness but fuzz_index (under 1 MB a run; fuzz_index's runs
# allocate ~12 MB, mostly the record views' line buffers), and the last
# part of a fuzz_index run. The allocation-bound harnesses run 1.5-5 times
# faster with it. A caller's ASAN_OPTIONS come after, and win.
export ASAN_OPTIONS="quarantine_size_mb=16${ASAN_OPTIONS:+:$ASAN_OPTIONS}"

found=
for h in $HARNESSES; do
        mkdir -p "$O/corpus/$h"
        seeds=()
        [ -d "fuzz/corpus/$h" ] && seeds=("fuzz/corpus/$h")
        [ -d "tests/data/fuzz/$h" ] && seeds+=("tests/data/fuzz/$h")
        export FZI_SEEDS=
        [ "$h" = fuzz_index ] && export FZI_SEEDS=$O/corpus/$h
        jobs=
        [ "${FUZZ_JOBS:-1}" -gt 1 ] && jobs="-jobs=$FUZZ_JOBS -workers=$FUZZ_JOBS"
        echo "== $h ($SECS s)"
        : >"$O/$h.log"
        end=$(($(date +%s) + SECS))
        while left=$((end - $(date +%s))) && [ "$left" -gt 2 ]; do
                # shellcheck disable=SC2046,SC2086
                if nice -n 19 "$O/$h" $(opts "$h") -max_total_time="$left" -timeout=10 \
                        -rss_limit_mb=2048 -print_final_stats=1 $jobs -artifact_prefix="$O/$h-" \
                        ${FUZZ_ARGS:-} "$O/corpus/$h" "${seeds[@]}" >>"$O/$h.log" 2>&1; then
                        break
                fi
                found=1
                echo "$h: FINDING: $(grep -o "Test unit written to .*" "$O/$h.log" | tail -1)" >&2
                grep -E "^(SUMMARY|fuzz_|==[0-9]+==ERROR)" "$O/$h.log" | tail -n 3 >&2
                # FUZZ_KEEP_GOING=1: start again for the time left (the
                # crash's input is saved); else stop at the first finding
                [ -n "${FUZZ_KEEP_GOING:-}" ] || break
        done
        awk -v h="$h" '/^stat::number_of_executed_units/ { n += $2 }
                /^stat::peak_rss_mb/ { if ($2 > rss) rss = $2 }
                /(DONE|pulse|NEW|REDUCE) +cov:/ { cov = $4; ft = $6 }
                END { printf "%s: %d executions, cov %s ft %s, peak rss %s MB\n", h, n, cov, ft, rss }' \
                "$O/$h.log"
        grep -E 'fuzz_index: [0-9]+ runs' "$O/$h.log" | tail -n 1 || true
        echo "corpus: $(find "$O/corpus/$h" -type f | wc -l) files"
done
[ -z "$found" ] # a finding: exit 1
