#!/bin/bash
# HATF -> Meta-TF -> ascii is HATF's ascii, byte for byte (issue 26): every
# HATF example archive, the heap fixtures of tests/data/heap (glibc mtrace
# and heaptrack, packed as HATF first) and traces recorded here with
# tracetool record (alloc_pattern: threads, every realloc outcome; sort),
# each packed by tracetool pack as Meta-TF (hatf10v2.dtd) in both
# encodings and read back. Also Meta-TF -> HATF: the archive packed back is
# the same records.
# usage: mtf_roundtrip.sh   (TRACETOOL, TM_ALLOC_PATTERN in the environment)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
[ -x "${TRACETOOL:-}" ] || { echo "TRACETOOL not set or not executable" >&2; exit 1; }
src=$(cd "$here/../.." && pwd)
setup_tmp
cd "$T" || exit 1
TT=$TRACETOOL

# roundtrip NAME HATF: pack HATF as Meta-TF both ways, compare the ascii.
roundtrip() {
        local name=$1 in=$2 enc
        "$TT" cat "$in" ascii >"$name.ascii" || { fail "$name: tracetool cat ascii"; return; }
        [ -s "$name.ascii" ] || { fail "$name: no records"; return; }
        for enc in hatf splitaddr; do
                "$TT" pack -e "$enc" "$in" "$name.$enc.mtf.zst" 2>"$name.$enc.err" ||
                        { fail "$name: pack -e $enc: $(cat "$name.$enc.err")"; continue; }
                "$TT" cat "$name.$enc.mtf.zst" ascii >"$name.$enc.ascii" ||
                        { fail "$name: cat $enc ascii"; continue; }
                check "$name: HATF -> Meta-TF ($enc) -> ascii = HATF's ascii ($(wc -l <"$name.ascii") records)" \
                        cmp -s "$name.ascii" "$name.$enc.ascii"
        done
        "$TT" pack "$name.hatf.mtf.zst" "$name.back.hatf" 2>/dev/null &&
                "$TT" cat "$name.back.hatf" ascii >"$name.back.ascii" ||
                { fail "$name: Meta-TF -> HATF"; return; }
        check "$name: Meta-TF -> HATF -> ascii = HATF's ascii" cmp -s "$name.ascii" "$name.back.ascii"
}

n=0
for f in "$src"/examples/*.hatf.zst; do
        [ -f "$f" ] || continue
        roundtrip "example-$(basename "$f" .hatf.zst)" "$f"
        n=$((n + 1))
done
check "at least one HATF example archive" test "$n" -gt 0
for f in heapprog.mtrace heapprog.heaptrack heapprog.heaptrack.raw; do
        "$TT" pack "$src/tests/data/heap/$f" "$f.hatf.zst" 2>/dev/null ||
                { fail "$f: pack as HATF"; continue; }
        roundtrip "$f" "$f.hatf.zst"
done
if [ -x "${TM_ALLOC_PATTERN:-}" ]; then
        "$TT" record -o ap.hatf.zst -- "$TM_ALLOC_PATTERN" >/dev/null 2>ap.err ||
                fail "record alloc_pattern: $(cat ap.err)"
        [ -f ap.hatf.zst ] && roundtrip recorded-alloc_pattern ap.hatf.zst
        seq 3000 -1 1 >nums
        "$TT" record -o sort.hatf.zst -- sort -n nums >/dev/null 2>sort.err ||
                fail "record sort: $(cat sort.err)"
        [ -f sort.hatf.zst ] && roundtrip recorded-sort sort.hatf.zst
else
        echo "note: TM_ALLOC_PATTERN not set: no recorded traces"
fi
finish
