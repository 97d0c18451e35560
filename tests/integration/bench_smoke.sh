#!/bin/bash
# bench/run.sh still works: on a small trace it runs every step, the mount's
# ascii is byte-identical to zstdcat of the din text, and every row the
# issue asks for (cat and grep through the mount, FUSE alone, tail, RSS,
# index size) is printed with a measured value; bench/ptf.sh runs through
# and its ascii is the PTF text. Timings themselves are not
# judged here (bench/ does that on 10^8 references).
# usage: bench_smoke.sh   (TRACEMOUNT, TRACETOOL and TM_BUILD in the environment)
here=$(dirname "$0")
. "$here/lib.sh"
need_programs
need_fuse
command -v zstd >/dev/null 2>&1 || skip "zstd not found: the bench's baseline needs it"
setup_tmp
out=$T/report
TMPDIR=$T bash "$here/../../bench/run.sh" 30000 >"$out" 2>&1 || fail "bench/run.sh exited $?"
cat "$out"
check "mount output identical to zstdcat" grep -q "mount output vs zstdcat: identical" "$out"
num='[0-9]+\.[0-9]+'
row() { # row "label" regex-after-label
        check "row: $1" grep -Eq "^  $1 +$2" "$out"
}
row "zstdcat > /dev/null" "$num +[0-9]+"
row "FUSE alone: cat, page cache" "$num +[0-9]+ +$num vs zstdcat"
row "FUSE alone: cat, --direct-io" "$num +[0-9]+ +$num vs zstdcat"
row "cat ascii, cold mount" "$num +[0-9]+ +$num vs zstdcat, $num vs zstdcat\|cat, $num vs FUSE alone"
row "cold cat, medians of [0-9]+ rounds" "zstdcat $num, cat ascii $num, --direct-io $num; the rounds' own ratios: median $num, --direct-io $num"
row "their ratios, in order" "cat $num( $num)*; --direct-io $num( $num)*"
row "cat ascii, warm page cache" "$num +[0-9]+ +$num"
row "grep -c '\^1 ' ascii, cold" "$num +$num"
row "cat ascii, --direct-io" "$num +[0-9]+ +$num vs zstdcat"
row "tail -n 1 ascii, fresh mount" "median $num s, worst $num s"
row "daemon peak RSS" "[0-9]+ KiB"
row "index build" "$num s, index [0-9]+ bytes = $num% of archive"
# bench/ptf.sh on a small trace: every step runs, both ascii paths are the text
TMPDIR=$T TM_BENCH_ROUNDS=1 bash "$here/../../bench/ptf.sh" 20000 >"$T/ptf" 2>&1 ||
        fail "bench/ptf.sh exited $?"
cat "$T/ptf"
check "ptf.sh: ascii == the text" grep -q "== the text: identical" "$T/ptf"
check "ptf.sh: bytes a record of the archive" grep -Eq "gen.ptfb.zst: [0-9]+ bytes, $num bytes a record" "$T/ptf"
check "ptf.sh: the ratios" grep -Eq "tracetool cat [0-9.]+x, mount cat [0-9.]+x" "$T/ptf"
finish
