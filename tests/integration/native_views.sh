#!/bin/bash
# Every view of an address trace packed as the native encoding (.tmn) is
# the input's, byte for byte: din, PDATS, PDATS II and lackey examples and
# the address fixtures, each packed by `tracetool pack` with the defaults,
# with blocks of 2^4 records at zstd level 1 (thousands of blocks, sizes
# and types that change inside them), and the din text packed again from
# PDATS II. Compared: the view list, every view but raw, and stats,
# stats.json and schema but for what names the archive (its name, codec,
# container, bytes and the figures per byte). Also: the header keeps the
# input's types and sizes (sized 0 for din and PDATS, ntypes as the
# input's schema), `pack IN` alone writes IN's name with .tmn, --level
# reaches the encoder (-p level=N is the same bytes), and an option the
# row has not is refused.
# usage: native_views.sh   (TRACEMOUNT and TRACETOOL in the environment)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_programs
setup_tmp
cd "$T" || exit 1
TT=$TRACETOOL
top=$(cd "$here/../.." && pwd)

# what names the archive, in stats / stats.json / schema
scrub() {
        grep -Ev '^(archive|codec|container|archive bytes|raw bytes|refs/byte|din/size) ' |
                sed -E 's/"(archive|codec|container|archive_bytes|raw_bytes)":[^,]*,?//g;
                        s/"(refs_per_byte|ascii_per_byte)":\{[^}]*\},?//g;
                        s/(records of this|tag [0-9]+)[^ ]* [a-z0-9_]+ /\1 X /g;
                        s/\/\/ [a-z0-9_]+ tag/\/\/ X tag/'
}

# the same for stats.json (docs/stats-json.md, version 2), as its JSON
# without the members that name the archive; a line that is not JSON (the
# "rc=" line, an error) stays as it is
scrub_json() {
        python3 -c '
import json, sys
text = sys.stdin.read()
body, sep, tail = text.rpartition("rc=")
try:
    d = json.loads(body)
except ValueError:
    sys.stdout.write(text)
    sys.exit(0)
for k in ("archive", "codec", "container", "archive_bytes", "raw_bytes"):
    d.pop(k, None)
for k in ("refs_per_byte", "ascii_per_byte"):
    d.get("address", {}).pop(k, None)
print(json.dumps(d, sort_keys=True, indent=1))
sys.stdout.write(sep + tail)
'
}

# same_views IN TMN LABEL: every view of TMN is IN's
same_views() {
        local in=$1 tmn=$2 label=$3 bad=0 v
        "$TT" views "$in" > v.in 2>&1
        "$TT" views "$tmn" > v.tmn 2>&1
        cmp -s v.in v.tmn || { fail "$label: the view lists differ"; return; }
        while IFS= read -r v; do
                [ "$v" = raw ] && continue
                "$TT" cat "$in" "$v" > a 2> a.err
                echo "rc=$?" >> a
                "$TT" cat "$tmn" "$v" > b 2> b.err
                echo "rc=$?" >> b
                case $v in
                stats.json)
                        scrub_json < a > a.s
                        storage_cut < b | scrub_json > b.s
                        mv a.s a
                        mv b.s b
                        ;;
                stats | schema)
                        scrub < a > a.s
                        storage_cut < b | scrub > b.s
                        mv a.s a
                        mv b.s b
                        ;;
                esac
                cmp -s a b || { fail "$label: $v differs"; bad=1; }
        done < v.in
        # and tracetool stat but for the archive's index and the sizes of the
        # views that name the archive
        "$TT" stat "$in" | scrub | grep -Ev '^(index|  (raw|stats|stats.json|schema)) ' > a
        "$TT" stat "$tmn" | storage_cut | scrub | grep -Ev '^(index|  (raw|stats|stats.json|schema)) ' > b
        cmp -s a b || { fail "$label: tracetool stat differs"; bad=1; }
        [ $bad = 1 ] || ok "$label: $(wc -l < v.in) views the same"
        storage_check "$tmn" "$in" "$label"
}

# header HDR: the file header's ntypes and sized ("ntypes sized")
header() { od -An -tu1 -j10 -N2 "$1" | awk '{ print $1, $2 }'; }

inputs=()
for f in "$top"/examples/*.din* "$top"/examples/*.pdt* "$top"/examples/*.lackey* \
        "$top"/tests/data/fuzz/fuzz_din/* "$top"/tests/data/fuzz/fuzz_lackey/*; do
        "$TT" views "$f" > /dev/null 2>&1 || continue # fixtures that do not open
        "$TT" cat "$f" ascii > /dev/null 2>&1 || continue # ... or do not decode
        inputs+=("$f")
done
[ ${#inputs[@]} -ge 5 ] || fail "only ${#inputs[@]} address inputs"

i=0
for f in "${inputs[@]}"; do
        i=$((i + 1))
        b=$i-$(basename "$f")
        cp "$f" "$b"
        if ! "$TT" pack "$b" "$b.tmn" 2> pack.err; then
                fail "$b: pack: $(cat pack.err)"
                continue
        fi
        same_views "$b" "$b.tmn" "$b (default)"
        if ! "$TT" pack -p block-log2=4 --level 1 "$b" "$b.4.tmn" 2> pack.err; then
                fail "$b: pack -p block-log2=4: $(cat pack.err)"
                continue
        fi
        same_views "$b" "$b.4.tmn" "$b (blocks of 16)"
        want="$("$TT" cat "$b" schema | grep -c 'tag.value') $("$TT" views "$b" | grep -q '^fields/size$' && echo 1 || echo 0)"
        got=$(header "$b.tmn")
        [ "$got" = "$want" ] && ok "$b: header ntypes, sized $got" ||
                fail "$b: header ntypes, sized $got, the input's $want"
done

# din text from PDATS II, packed again
"$TT" cat "$top/examples/sort.pdt2.zst" ascii > sort.din
"$TT" pack sort.din sort.din.tmn 2> /dev/null || fail "pack sort.din"
same_views sort.din sort.din.tmn "sort.din (from PDATS II)"
check "din text: sized 0" test "$(header sort.din.tmn | cut -d' ' -f2)" = 0

# pack IN alone: IN's name with .tmn
cp "$top/examples/tex-table3.din" t3.din
"$TT" pack t3.din 2> /dev/null
check "pack IN writes IN's name with .tmn" test -s t3.tmn
same_views t3.din t3.tmn "t3.din (pack IN)"
check "pack X.tmn alone is refused" bash -c "! '$TT' pack t3.tmn 2> /dev/null"

# --level reaches the encoder; -p level=N is the same
"$TT" pack --level 1 sort.din l1.tmn 2> /dev/null
"$TT" pack -p level=1 sort.din p1.tmn 2> /dev/null
"$TT" pack --level 19 sort.din l19.tmn 2> /dev/null
check "--level 1 = -p level=1" cmp -s l1.tmn p1.tmn
check "--level 1 and --level 19 differ" bash -c "! cmp -s l1.tmn l19.tmn"
check "-p with a name the row has not is refused" \
        bash -c "! '$TT' pack -p nosuch=1 sort.din x.tmn 2> /dev/null"
check "-p out of range is refused" bash -c "! '$TT' pack -p block-log2=21 sort.din x.tmn 2> /dev/null"
check "-p on a row without parameters is refused" \
        bash -c "! '$TT' pack -p level=1 sort.din x.pdt2.zst 2> /dev/null"
finish
