#!/bin/bash
# Every figure of the generic statistics against an independent count, and
# tracetool stat against the stats view, for an archive of every family:
# - each numeric field's records, minimum and maximum in `stats` and
#   `stats.json` equal Python's count over `fields/NAME` (the renderer's text,
#   which shows a signed field signed), for every example and test archive;
#   a PTF trace whose signed Offset crosses zero (down to INT64_MIN, up to
#   INT64_MAX) as text, zstd text and the binary form (PTF's Offset is the
#   one signed field of any shipped schema: the test says so from `schema`);
# - `tracetool stat X` holds the `stats` view byte for byte, and its view
#   table keeps one column for sizes whatever the names' lengths;
# - an empty file is "empty", by name, in every command that opens it.
# usage: stats_figures.sh   (TRACEMOUNT and TRACETOOL in the environment)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_programs
setup_tmp
cd "$T" || exit 1
TT=$TRACETOOL
top=$(cd "$here/../.." && pwd)

# --- a PTF trace whose Offset crosses zero ---
awk 'BEGIN {
        print "Trace begin"
        print "fo 51 0 2 1 0 5 11 Thing"
        for (i = 0; i < 300; i++) print "co 51 " 100 + i
        srand(7)
        for (i = 0; i < 3000; i++) {
                o = int(rand() * 2000001) - 1000000
                if (i % 3) print "dw 51 " 100 + i % 300 " " o
                else print "adw 51 " 100 + i % 300 " " o " " i % 7 " 8"
        }
        print "dr 51 100 -9223372036854775808"
        print "dr 51 101 9223372036854775807"
        print "adw 51 200 -1 0 8"
        print "Trace end"
}' >signed.ptf
zstd -q -o signedz.ptf.zst signed.ptf
check "pack signed.ptf -> signed.ptfb" "$TT" pack signed.ptf signed.ptfb
check "signed.ptfb's ascii is the text" cmp -s signed.ptf <("$TT" cat signed.ptfb ascii)

# compare.py ARCHIVE: stats' and stats.json's field figures = a count over
# fields/NAME; prints "signed NAME" for each signed field it checked.
cat >compare.py <<'PY'
import json, subprocess, sys
tt, arc = sys.argv[1], sys.argv[2]
def view(v):
    return subprocess.run([tt, "cat", "--no-index-beside", arc, v], check=True,
                          stdout=subprocess.PIPE).stdout.decode()
stats = view("stats").split("\n")
js = json.loads(view("stats.json"))
signed = [l.split(".width")[0] for l in view("schema").split("\n") if l.endswith("// signed")]
rows = {}
if "fields (numbers): records with it, min, max" in stats:
    for l in stats[stats.index("fields (numbers): records with it, min, max") + 1:]:
        if not l.startswith("  "):
            break
        name, n, lo, hi = l.split()
        rows[name] = (int(n), lo, hi)
jrows = {n: {k: r["value"] for k, r in f.items()} for n, f in js.get("fields", {}).items()}
def num(x):  # a number as the text shows it: decimal, 0x hex or a character
    return ord(x) if len(x) == 1 and not x.isdigit() else int(x, 0)
bad = 0
for name, (n, lo, hi) in rows.items():
    vals = [num(x) for x in view("fields/" + name).split()]
    want = (len(vals), min(vals), max(vals))
    got = (n, num(lo), num(hi))
    j = jrows.get(name, {})
    if got != want or (j.get("records"), j.get("min"), j.get("max")) != want:
        print("%s: field %s: stats %s, stats.json %s, fields/%s %s"
              % (arc, name, got, (j.get("records"), j.get("min"), j.get("max")), name, want))
        bad += 1
    if name in signed:
        print("signed %s %d %d" % (name, want[1], want[2]))
if set(rows) != set(jrows):
    print("%s: stats has fields %s, stats.json %s" % (arc, sorted(rows), sorted(jrows)))
    bad += 1
print("checked %d fields" % len(rows))
sys.exit(1 if bad else 0)
PY

for f in signed.ptf signedz.ptf.zst signed.ptfb; do
        python3 compare.py "$TT" "$f" >cmp.txt
        check "$f: every field's figures = a count over fields/NAME" test $? -eq 0
        check "$f: Offset is signed and crosses zero, from INT64_MIN to INT64_MAX" \
                grep -qx "signed Offset -9223372036854775808 9223372036854775807" cmp.txt
        check "$f: stats shows Offset's range signed" \
                grep -Eq "^  Offset +3003 -9223372036854775808 9223372036854775807\$" \
                <("$TT" cat --no-index-beside "$f" stats)
        check "$f: stat --json gives Offset's range signed" \
                grep -q '"Offset":{"records":{"value":3003,"unit":"records","exact":true},"min":{"value":-9223372036854775808,"unit":null,"exact":true},"max":{"value":9223372036854775807,' \
                <("$TT" stat --json --no-index-beside "$f")
done

# every shipped family: examples/ and tests/data
archives="$top/examples/gzip.din.zst $top/examples/heapwork.mtf.zst $top/examples/sort.hatf.zst
$top/examples/ls.pdt.gz $top/examples/true.lackey.gz $top/tests/data/java/hello.trace
$top/tests/data/laplace/loop.lpk $top/tests/data/laplace/loop.lpr $top/tests/data/laplace/loop.lpt
$top/tests/data/ptf/figure3.ptf $top/tests/data/ptf/figure3.ptfb $top/tests/data/heap/heapprog.mtrace"
for f in $archives; do
        b=$(basename "$f")
        python3 compare.py "$TT" "$f" >cmp.txt
        check "$b: every field's figures = a count over fields/NAME" test $? -eq 0
        check "$b: no signed field but PTF's Offset" \
                test -z "$(grep '^signed' cmp.txt | grep -v '^signed Offset ')"
done

# --- tracetool stat = the stats view, and more ---
for f in $archives signed.ptf; do
        b=$(basename "$f")
        "$TT" cat --no-index-beside "$f" stats >view.txt
        "$TT" stat --no-index-beside "$f" >stat.txt
        check "$b: tracetool stat exit 0" test $? -eq 0
        check "$b: tracetool stat starts with the stats view byte for byte" \
                cmp -s view.txt <(head -c "$(stat -c %s view.txt)" stat.txt)
        check "$b: then a blank line and the index" \
                test "$(tail -c +$(($(stat -c %s view.txt) + 1)) stat.txt | head -2 | cut -c1-5)" \
                = "$(printf '\nindex')"
        # the view table: every size ends in the same column
        ends=$(sed -n '/^views$/,$p' stat.txt | sed 1d | awk '{ print index($0, " bytes") }' | sort -u)
        check "$b: the view table's sizes end in one column" test "$(echo "$ends" | wc -l)" -eq 1
        names=$(sed -n '/^views$/,$p' stat.txt | sed 1d | awk '{ print $1 }')
        check "$b: the view table lists every view" test "$names" = "$("$TT" views --no-index-beside "$f")"
done

# --- an empty file ---
: >empty.pdt2.zst
for c in stat cat index verify views; do
        if [ $c = cat ]; then "$TT" cat empty.pdt2.zst ascii >/dev/null 2>err.txt; else
                "$TT" $c empty.pdt2.zst >/dev/null 2>err.txt; fi
        check "$c of an empty file fails with 1" test $? -eq 1
        check "$c of an empty file says so, by name" grep -qx "tracetool $c: empty.pdt2.zst: empty file" err.txt
done
"$TT" pack empty.pdt2.zst x.pdt2 >/dev/null 2>err.txt
check "pack of an empty file fails with 1" test $? -eq 1
check "pack of an empty file says so, by name" grep -q "empty.pdt2.zst: empty file" err.txt

finish
