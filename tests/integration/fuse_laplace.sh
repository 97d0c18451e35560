#!/bin/bash
# Laplace traces through a real mount (docs/formats/laplace.md):
#  1. a real `valgrind --tool=lackey --trace-mem=yes` run of a small
#     program packed as a Laplace raw trace (prog.lpr.zst: type, size and
#     address carried over, time the reference's number, space the
#     address's high 32 bits); its ascii through the mount equals an awk
#     transform of the lackey log, and its stats (references per type, per
#     address space) equal awk's counts over the log;
#  2. both ways through pack: the raw trace as text and back, byte for byte;
#  3. the kernel event sample (tests/data/laplace/loop.lpk): events per tag
#     in stats and streams/<tag> equal grep over the file;
#  4. a cut raw trace: ascii fails with EIO, errors names the raw offset.
# usage: fuse_laplace.sh   (TRACEMOUNT, TRACETOOL, TM_SOURCE_DIR)
here=$(dirname "$0")
. "$here/lib.sh"
need_programs
command -v valgrind >/dev/null || skip "valgrind not installed: no real lackey trace to pack"
command -v cc >/dev/null || skip "cc not installed: no program to run under lackey"
fuse_prologue
SRC_DIR=${TM_SOURCE_DIR:-$here/../..}

# --- 1. lackey -> Laplace raw ---
lackey_prog
# the references of the log as the ascii view shows them: an M line is a
# load then a store of the same address (lackey's decoder)
awk '/^(==|--)[0-9]+(==|--)/ { next }
     function ref(t, a, s,   hi, lo) {
             hi = length(a) > 8 ? substr(a, 1, length(a) - 8) : "0"
             lo = length(a) > 8 ? substr(a, length(a) - 7) : a
             sub(/^0+/, "", hi); sub(/^0+/, "", lo)
             printf "ref %s 0x%x %d 0x%s 0x%s\n", t, n++, s, hi == "" ? "0" : hi, lo == "" ? "0" : lo
     }
     { split($2, f, ","); a = tolower(f[1])
       if ($1 == "I" || $1 == "L" || $1 == "S") ref($1, a, f[2])
       else if ($1 == "M") { ref("L", a, f[2]); ref("S", a, f[2]) } }' prog.lk >want.ascii
check "the log has references above 4 GiB (the stack)" grep -q ' 0x[1-9a-f][0-9a-f]* 0x[0-9a-f]*$' want.ascii
mkdir -p src
"$TT" pack prog.lk src/prog.lpr.zst || fail "pack prog.lk as prog.lpr.zst"
"$TT" pack prog.lk src/prog.lpr || fail "pack prog.lk as prog.lpr"
mount_tm "$T/log" "$MNT" "$SRC" || { fail "mount"; finish; }
for a in prog.lpr.zst prog.lpr; do
        check "$a: ascii == awk over the lackey log" cmp -s want.ascii "$MNT/$a/ascii"
        awk '{ n[$2]++ } END { for (t in n) print t, n[t] }' want.ascii | sort >want.types
        awk '/references per type/ { f = 1; next } f && /^    / && NF == 3 { print $1, $2; next } { f = 0 }' \
                "$MNT/$a/stats" | sort >got.types
        check "$a: references per type == awk's (I, L, S)" cmp -s want.types got.types
        awk '{ if (!($5 in n)) o[k++] = $5; n[$5]++ } END { for (i = 0; i < k; i++) print o[i], n[o[i]] }' \
                want.ascii >want.spaces
        awk '/per address space/ { f = 1; next } f && /^    / && NF == 2 { print $1, $2; next } { f = 0 }' \
                "$MNT/$a/stats" >got.spaces
        check "$a: references per address space == awk's" cmp -s want.spaces got.spaces
        check "$a: stats.json says laplace" grep -q '"family":"laplace".*"laplace":{' "$MNT/$a/stats.json"
done

# --- 2. raw -> text -> raw, byte for byte ---
"$TT" pack src/prog.lpr prog.lpt || fail "pack prog.lpr as text"
check "the text form is the paper's: TYPE TIME SIZE SPACE ADDRESS in hex" \
        cmp -s prog.lpt <(awk '{ sub(/^0x/, "", $3); sub(/^0x/, "", $5); sub(/^0x/, "", $6)
                                 printf "%s %s %x %s %s\n", $2, $3, $4, $5, $6 }' want.ascii)
"$TT" pack prog.lpt back.lpr || fail "pack prog.lpt as raw"
check "raw -> text -> raw: the same bytes" cmp -s back.lpr src/prog.lpr

# --- 3. kernel events ---
cp "$SRC_DIR/tests/data/laplace/loop.lpk" src/
for tag in fork exec exit switch mmap munmap; do
        want=$(grep -c "^$tag " src/loop.lpk)
        check "loop.lpk: streams/$tag has grep's $want lines" \
                test "$(wc -l <"$MNT/loop.lpk/streams/$tag")" -eq "$want"
        check "loop.lpk: stats says $want $tag events" \
                grep -Eq "^    $tag +$want\$" "$MNT/loop.lpk/stats"
done

# --- 4. a cut raw trace ---
head -c $((18 * 300 + 7)) src/prog.lpr >src/cut.lpr
if cat "$MNT/cut.lpr/ascii" >cut.out 2>cut.err; then
        fail "cut.lpr: ascii read without an error"
else
        check "cut.lpr: the read fails with EIO" grep -q "Input/output error" cut.err
fi
check "cut.lpr: errors names the cut record's raw offset" \
        grep -q "raw offset $((18 * 300)): truncated" "$MNT/cut.lpr/errors"
check "cut.lpr: the first page, before the cut, reads" \
        cmp -s <(head -c 4096 want.ascii) <(dd if="$MNT/cut.lpr/ascii" bs=4096 count=1 2>/dev/null)
umount_tm "$MNT"
finish
