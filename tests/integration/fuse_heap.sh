#!/bin/bash
# Heap traces end to end: real programs recorded by glibc mtrace, heaptrack
# and (when built) tracetool record, packed as HATF in several encodings
# and containers, mounted; every view read through the mount equals
# `tracetool cat`, the Table 3 figures in stats equal an awk count over
# ascii, fields/ and streams/ equal the columns and lines of ascii, binary
# records agree with ascii, random reads agree with whole reads.
# usage: fuse_heap.sh   (TRACEMOUNT, TRACETOOL, HEAPWORK in the environment)
here=$(dirname "$0")
. "$here/lib.sh"
fuse_prologue
mkdir -p "$SRC"

# input for the workloads: words with repeats
perl -e 'srand(5); for (1..6000) { print join("", map { chr(97 + int(rand(6))) } 1..(1 + int(rand(12)))), "\n" }' >words.txt

# 1. glibc mtrace of a real program (heapwork calls mtrace())
MALLOC_TRACE=$T/work.mtrace LD_PRELOAD=libc_malloc_debug.so.0 "$HEAPWORK" <words.txt >/dev/null ||
        fail "heapwork under mtrace"
check "mtrace log written" test -s work.mtrace
"$TT" pack work.mtrace "$SRC/work.mtrace.hatf.zst" 2>pack.log || fail "pack mtrace (best of all)"
cat pack.log
check "pack says which encoding it chose" grep -q "encoding " pack.log
"$TT" pack -e naive work.mtrace "$SRC/work-naive.hatf.gz" 2>/dev/null || fail "pack -e naive .gz"
"$TT" pack -e smallsize work.mtrace "$SRC/work-small.hatf" 2>/dev/null || fail "pack -e smallsize plain"
"$TT" pack work.mtrace "$SRC/work.mtf.zst" 2>/dev/null || fail "pack as Meta-TF"
# every writer encoding round-trips the recorded trace (the same ascii)
"$TT" pack -e naive work.mtrace ref.hatf 2>/dev/null && "$TT" cat ref.hatf ascii >ref.txt ||
        fail "pack/cat naive"
for e in smallsize samesize baseoffset1 baseoffset2 baseoffset stride best; do
        "$TT" pack -e "$e" work.mtrace "enc-$e.hatf.zst" 2>/dev/null || fail "pack -e $e"
        check "encoding $e gives back the same records" \
                cmp -s ref.txt <("$TT" cat "enc-$e.hatf.zst" ascii)
done
"$TT" pack -e bogus work.mtrace "$SRC/x.hatf" 2>err.log && fail "pack -e bogus accepted"
check "unknown encoding named" grep -q "bogus" err.log
# the log itself, compressed as it would be kept, mounts as a heap trace
gzip -c work.mtrace >"$SRC/work.mtrace.gz"

# 2. heaptrack of a real program (sort)
if command -v heaptrack >/dev/null 2>&1; then
        heaptrack -o "$T/ht" sort words.txt >/dev/null 2>&1
        ht=$(ls "$T"/ht.* 2>/dev/null | head -n 1)
        if [ -n "$ht" ]; then
                "$TT" pack "$ht" "$SRC/sort.heaptrack.hatf.zst" 2>/dev/null || fail "pack heaptrack"
        else
                fail "heaptrack wrote no file"
        fi
else
        echo "SKIP: heaptrack is not installed: its part of this test is not run" >&2
        echo "SKIP: heaptrack part"
fi

# 3. tracetool record, when this build has it
if "$TT" record --help >/dev/null 2>&1; then
        "$TT" record -o "$SRC/rec.hatf.zst" -- "$HEAPWORK" <words.txt >/dev/null 2>rec.log ||
                { cat rec.log; fail "tracetool record"; }
        # --clock seq: the time field numbers the events 1..N in one order
        "$TT" record --clock seq -o seq.hatf.zst -- "$HEAPWORK" <words.txt >/dev/null 2>&1 ||
                fail "tracetool record --clock seq"
        "$TT" cat seq.hatf.zst fields/time | sort -n >seq.times
        check "--clock seq: times are 1..N" awk 'NR != $1 { bad = 1 } END { exit bad || NR < 100 }' seq.times
        "$TT" record --clock bogus -o x.hatf.zst -- true 2>err.log && fail "--clock bogus accepted"
        check "--clock bogus named" grep -q "bogus" err.log
else
        echo "SKIP: tracetool record is not in this build" >&2
fi

mount_tm "$T/log" "$MNT" --cache-dir "$T/cache" "$SRC" || { fail "mount"; finish; }

# a fresh listing of streams/ shows thread/, and tracetool views lists every
# streams/thread/<id> (both build the index when they need it)
check "work.mtrace.hatf.zst: streams/ lists thread/ on a fresh mount" \
        eval 'ls "$MNT/work.mtrace.hatf.zst/streams" | grep -qx thread'
check "tracetool views lists streams/thread/<id>" \
        eval '"$TT" views "$SRC/work.mtrace.hatf.zst" | grep -qx "streams/thread/0"'

# the mtrace log mounted as it is: a heap trace directory whose views are
# the packed HATF's (one decoder serves both)
check "work.mtrace.gz is a trace directory" test -d "$MNT/work.mtrace.gz"
check "work.mtrace.gz: ascii equals the packed HATF's" \
        cmp -s "$MNT/work.mtrace.gz/ascii" "$MNT/work.mtrace.hatf.zst/ascii"
check "work.mtrace.gz: ascii equals tracetool cat of the log" \
        cmp -s "$MNT/work.mtrace.gz/ascii" <("$TT" cat work.mtrace ascii)
check "work.mtrace.gz: stats names the mtrace codec" grep -q "mtrace" "$MNT/work.mtrace.gz/stats"
grep -A7 '^heap' "$MNT/work.mtrace.gz/stats" >m.heap
grep -A7 '^heap' "$MNT/work.mtrace.hatf.zst/stats" >h.heap
check "work.mtrace.gz: Table 3 equals the packed HATF's" cmp -s m.heap h.heap

# Table 3 by awk over ascii, with the rules of views/stats.h
table3() {
        awk '
        function add(a, s) { if (a == "0x0") return; if (a in live) { n--; b -= live[a] }
                             live[a] = s; n++; b += s; if (n > mn) mn = n; if (b > mb) mb = b }
        function rm(a) { if (a in live) { n--; b -= live[a]; delete live[a] } }
        $1 == "alloc" { al++; add($3, $2); if ($3 != "0x0") tot += $2 }
        $1 == "free" { fr++; rm($2) }
        $1 ~ /^realloc/ { re++; rm($3); if ($1 != "realloc_free" && $4 != "0x0") { add($4, $2); tot += $2 } }
        END { printf "%d %d %d %d %d %d\n", al, re, fr, tot, mn, mb }' "$1"
}
stats3() {
        awk '/^  total allocs/ {a=$3} /^  total reallocs/ {r=$3} /^  total frees/ {f=$3}
             /^  total bytes/ {t=$3} /^  max objects/ {o=$3} /^  max bytes/ {b=$3}
             END { printf "%d %d %d %d %d %d\n", a, r, f, t, o, b }' "$1"
}

for d in "$MNT"/*.hatf*; do
        name=$(basename "$d")
        "$TT" cat "$SRC/$name" ascii >"ref.$name" || fail "$name: tracetool cat"
        check "$name: ascii through the mount = tracetool cat" cmp -s "$d/ascii" "ref.$name"
        check "$name: has records" test "$(wc -l <"ref.$name")" -gt 100
        want=$(table3 "$d/ascii")
        got=$(stats3 "$d/stats")
        if [ "$want" = "$got" ]; then ok "$name: Table 3 ($got) = awk over ascii"
        else fail "$name: Table 3 stats '$got' != awk '$want'"; fi
        awk '$1 == "alloc" || $1 ~ /^realloc/ { print $2 }' "$d/ascii" >sizes
        check "$name: fields/size = the size column" cmp -s "$d/fields/size" sizes
        awk '$1 == "free" { print $2 } $1 == "alloc" { print $3 } $1 ~ /^realloc/ { print $3 }' \
                "$d/ascii" >addrs
        check "$name: fields/address = the address column" cmp -s "$d/fields/address" addrs
        grep '^free ' "$d/ascii" >frees
        check "$name: streams/free = the free lines" cmp -s "$d/streams/free" frees
        check "$name: tail -n 3 = the last lines" \
                test "$(tail -n 3 "$d/ascii")" = "$(tail -n 3 "ref.$name")"
        size=$(stat -c %s "$d/ascii")
        bad=0
        for i in $(seq 40); do
                off=$(( (RANDOM * 32768 + RANDOM) % size ))
                a=$(dd if="$d/ascii" bs=1 skip="$off" count=300 2>/dev/null | md5sum)
                b=$(tail -c +"$((off + 1))" "ref.$name" | head -c 300 | md5sum)
                [ "$a" = "$b" ] || bad=$((bad + 1))
        done
        check "$name: 40 random 300-byte reads" test "$bad" -eq 0
        check "$name: schema is a DTD of the heap kinds" grep -q '^alloc : (tag, size, address' "$d/schema"
        python3 - "$d/binary" "ref.$name" <<'PY' || fail "$name: binary records agree with ascii"
import struct, sys
data = open(sys.argv[1], "rb").read()
lines = open(sys.argv[2]).read().splitlines()
w = 8 + 8 * 8
assert len(data) == w * len(lines), (len(data), len(lines))
kinds = ["alloc", "free", "realloc", "realloc_alloc_free", "realloc_alloc", "realloc_free",
         "createHeap", "destroyHeap", "createThread", "destroyThread", "comment"]
for i, ln in enumerate(lines):
    f = ln.split(" ")
    kind, present, size, addr, new, thr, heap, tm, attr, text = struct.unpack_from("<II8Q", data, i * w)
    assert kinds[kind] == f[0], (i, kind, f[0])
    if f[0] == "alloc":
        assert (size, addr, thr, heap, tm) == (int(f[1]), int(f[2], 16), int(f[3]), int(f[4]), int(f[5])), i
    elif f[0] == "free":
        assert (addr, thr, tm) == (int(f[1], 16), int(f[2]), int(f[4])), i
    elif f[0].startswith("realloc"):
        assert (size, addr, new) == (int(f[1]), int(f[2], 16), int(f[3], 16)), i
PY
        ok "$name: binary checked against ascii"
done
# Meta-TF (Appendix C's HATF DTD): the same events, its one section a file
d=$MNT/work.mtf.zst
"$TT" cat "$SRC/work.mtf.zst" ascii >ref.mtf || fail "work.mtf.zst: tracetool cat"
check "work.mtf.zst: ascii through the mount = tracetool cat" cmp -s "$d/ascii" ref.mtf
check "work.mtf.zst: sections/heap holds every record" cmp -s "$d/sections/heap" ref.mtf
for k in alloc free; do
        a=$(grep -c "^$k " ref.mtf)
        b=$(grep -c "^$k " "ref.work.mtrace.hatf.zst")
        check "work.mtf.zst: as many $k records as the HATF pack ($a)" test "$a" = "$b"
done
check "work.mtf.zst: sections/ lists the DTD's section" test "$(ls "$d/sections")" = heap
# streams/thread/<id>: one file per thread (the index lists them), each the
# lines of that thread's records (the thread column depends on the kind)
d=$MNT/rec.hatf.zst
if [ -d "$d" ]; then
        cat "$d/stats" >/dev/null # the index, which names the threads
        for tid in $(ls "$d/streams/thread"); do
                awk -v t="$tid" '
                $1 == "alloc" { c = 4 } $1 == "free" { c = 3 } $1 ~ /^realloc/ { c = 5 }
                $1 ~ /Heap$/ { c = 3 } $1 ~ /Thread$/ { c = 2 } $1 == "comment" { next }
                $c == t' "$d/ascii" >thr
                check "rec.hatf.zst: streams/thread/$tid = its records" cmp -s "$d/streams/thread/$tid" thr
        done
        check "rec.hatf.zst: a stream for each thread" \
                test "$(ls "$d/streams/thread" | wc -l)" = "$(sort -u "$d/fields/thread" | wc -l)"
fi
umount_tm "$MNT"
finish
