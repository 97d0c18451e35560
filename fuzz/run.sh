#!/usr/bin/env bash
# fuzz/run.sh [SECONDS]: build the harnesses with clang (libFuzzer, ASan,
# UBSan) and run each for SECONDS: fuzz_archive on a corpus seeded from
# examples/ and small packed traces, fuzz_render (the batch din renderer,
# both paths, against the per-line one) and fuzz_pdats2 (PDATS II's block
# decoder against its scalar one) from nothing, fuzz_dtd (the Meta-TF DTD
# parser and compiler, seeded with the shipped DTDs) and fuzz_metatf (the
# Meta-TF decoder over three DTDs, each call checked against a replay from
# a copy of the state) from nothing. Not part of the test suite;
# crashes land in fuzz/out/.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-120}
O=fuzz/out
mkdir -p "$O/corpus"
srcs=$(ls codecs/*/*.c views/*.c)
clang -g -O1 -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -I. \
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
        fuzz/fuzz_archive.c $srcs -lz -lzstd -lpthread -o "$O/fuzz_archive"
clang -g -O1 -std=c11 -D_GNU_SOURCE -I. -fsanitize=fuzzer,address,undefined \
        -fno-sanitize-recover=undefined fuzz/fuzz_render.c views/render.c codecs/common/tm_cpu.c -o "$O/fuzz_render"
clang -g -O1 -std=c11 -D_GNU_SOURCE -I. -fsanitize=fuzzer,address,undefined \
        -fno-sanitize-recover=undefined fuzz/fuzz_pdats2.c $(ls codecs/*/*.c) -lz -lzstd \
        -o "$O/fuzz_pdats2"
clang -g -O1 -std=c11 -D_GNU_SOURCE -I. -fsanitize=fuzzer,address,undefined \
        -fno-sanitize-recover=undefined fuzz/fuzz_dtd.c codecs/metatf/dtd.c \
        codecs/metatf/dtd_compile.c codecs/common/tm_err.c -o "$O/fuzz_dtd"
clang -g -O1 -std=c11 -D_GNU_SOURCE -I. -fsanitize=fuzzer,address,undefined \
        -fno-sanitize-recover=undefined fuzz/fuzz_metatf.c $(ls codecs/*/*.c) -lz -lzstd \
        -lpthread -o "$O/fuzz_metatf"
clang -g -O1 -std=c11 -D_GNU_SOURCE -I. -fsanitize=fuzzer,address,undefined \
        -fno-sanitize-recover=undefined fuzz/fuzz_hatf.c $(ls codecs/*/*.c) -lz -lzstd \
        -lpthread -o "$O/fuzz_hatf"
# seeds: small real archives of every codec and container
TT=build/tools/tracetool
if [ -x "$TT" ]; then
        head -n 300 examples/tex-table3.din > "$O/corpus/table3.din"
        for s in pdt pdt2 din; do
                for c in "" .gz .zst; do
                        "$TT" pack --addr-bits 64 --unit 1 examples/tex-table3.din \
                                "$O/corpus/t3.$s$c" 2>/dev/null || true
                done
        done
        (zcat examples/true.lackey.gz || true) | head -n 60 > "$O/corpus/true.lackey"
fi
"$O/fuzz_archive" -max_len=4096 -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$O/" "$O/corpus"
mkdir -p "$O/corpus-render"
"$O/fuzz_render" -max_len=2048 -max_total_time="$SECS" -timeout=10 \
        -artifact_prefix="$O/render-" "$O/corpus-render"
mkdir -p "$O/corpus-pdats2"
"$O/fuzz_pdats2" -max_len=8192 -max_total_time="$SECS" -timeout=10 \
        -artifact_prefix="$O/pdats2-" "$O/corpus-pdats2"
mkdir -p "$O/corpus-dtd" "$O/corpus-metatf"
cp codecs/metatf/dtd/*.dtd "$O/corpus-dtd/"
"$O/fuzz_dtd" -max_len=4096 -max_total_time="$SECS" -timeout=10 \
        -artifact_prefix="$O/dtd-" "$O/corpus-dtd"
"$O/fuzz_metatf" -max_len=4096 -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$O/metatf-" "$O/corpus-metatf"
mkdir -p "$O/corpus-hatf"
# seeds: the example's records (raw), after the harness's three control bytes
{ printf '\020\040\007'; zstdcat examples/sort.hatf.zst | head -c 4000; } > "$O/corpus-hatf/sort"
"$O/fuzz_hatf" -max_len=4096 -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$O/hatf-" "$O/corpus-hatf"
