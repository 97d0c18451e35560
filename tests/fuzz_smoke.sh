#!/usr/bin/env bash
# fuzz_smoke: every libFuzzer harness of fuzz/ run for a few seconds
# (FUZZ_SMOKE_SECS, default 5) by fuzz/run.sh from its regression corpus
# (fuzz/corpus/<harness>/ and the findings in tests/data/fuzz/<harness>/),
# built with clang, ASan and UBSan from the source tree as it is. A harness
# that stops on a finding (a crash, a sanitizer report, or one of its own
# checks failing, a false finding included) fails the test, and so does
# one that ran no input. The library's objects are kept in
# $TM_BUILD/fuzz-smoke/obj, so a second run compiles only what changed;
# the corpus starts from the committed inputs each time.
# Without clang or its libFuzzer runtime: SKIP (exit 77), loudly.
set -euo pipefail
src=${TM_SOURCE_DIR:?}
out=${TM_BUILD:?}/fuzz-smoke
secs=${FUZZ_SMOKE_SECS:-5}
cc=${FUZZ_CC:-clang}
mkdir -p "$out"

skip() {
        echo "SKIP: fuzz_smoke: $* (install clang and libclang-rt-dev: build.sh deps);" \
                "the fuzz harnesses were NOT run" >&2
        exit 77
}
command -v "$cc" >/dev/null 2>&1 || skip "no $cc"
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{ return (int)(d && n) * 0; }\n' >"$out/probe.c"
"$cc" -fsanitize=fuzzer,address,undefined "$out/probe.c" -o "$out/probe" >"$out/probe.log" 2>&1 ||
        skip "$cc cannot link -fsanitize=fuzzer: $(head -n 3 "$out/probe.log")"

rm -rf "$out/corpus"
rc=0
FUZZ_REV=worktree FUZZ_OUT="$out" CC="$cc" "$src/fuzz/run.sh" "$secs" >"$out/run.log" 2>&1 || rc=$?
cat "$out/run.log"
[ "$rc" -eq 0 ] || {
        echo "FAIL: fuzz/run.sh exited $rc: a harness had a finding (logs: $out/<harness>.log)" >&2
        exit 1
}
# each harness ran inputs: "<harness>: N executions, ..."
harnesses=$(awk '/^== fuzz_/ { print $2 }' "$out/run.log")
[ -n "$harnesses" ] || {
        echo "FAIL: no harness ran" >&2
        exit 1
}
for h in $harnesses; do
        n=$(awk -v h="$h:" '$1 == h && $3 == "executions," { print $2 }' "$out/run.log")
        [ "${n:-0}" -gt 0 ] || {
                echo "FAIL: $h ran no input" >&2
                exit 1
        }
done
echo "fuzz_smoke: $(echo "$harnesses" | wc -w) harnesses, $secs s each, no finding"
