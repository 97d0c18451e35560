#!/bin/bash
# stats.json and errors through the mount (docs/stats-json.md,
# docs/damage.md).
# - stats.json of an address trace (PDATS II in zstd, din text in gzip) and
#   of a heap trace (examples/sort.hatf.zst): python3's json module parses
#   the view and `tracetool stat --json`, the two are the same object, and
#   its numbers equal the text stats view's and an awk count over ascii.
# - damage without syslog: archives cut short (zstd, gzip, plain HATF)
#   list with sizes (`ls -l` shows no ??????????), their errors file names
#   the archive and the offset, cat prints the intact prefix and then fails
#   with EIO, stats.json says "complete": false; intact traces have an
#   empty errors file.
# usage: fuse_json.sh   (TRACEMOUNT and TRACETOOL in the environment)
here=$(dirname "$0")
. "$here/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 not found: the JSON checks need its json module"
fuse_prologue
mkdir -p "$SRC"
EX=${TM_SOURCE_DIR:-$here/../..}/examples

gen_din 41 150000 >a.din
"$TT" pack --frame-size 16384 a.din "$SRC/a.pdt2.zst" || fail "pack a.pdt2.zst"
gzip -c a.din >"$SRC/a.din.gz"
cp "$EX/sort.hatf.zst" "$SRC/h.hatf.zst"
"$TT" cat "$EX/sort.hatf.zst" ascii >h.txt || fail "tracetool cat sort.hatf.zst"
"$TT" cat "$EX/sort.hatf.zst" raw >h.raw || fail "tracetool cat sort.hatf.zst raw"
# damaged copies: cut short inside the compressed stream / a record
head -c $(($(stat -c %s "$SRC/a.pdt2.zst") * 2 / 3)) "$SRC/a.pdt2.zst" >"$SRC/cut.pdt2.zst"
# two gzip members, cut inside the second: the first is the intact prefix
# (a member cut short shows none of its bytes: docs/damage.md)
half=$(($(wc -l <a.din) / 2))
head -n "$half" a.din | gzip -c >m1.gz
tail -n +$((half + 1)) a.din | gzip -c >m2.gz
head -c $(($(stat -c %s m2.gz) / 2)) m2.gz | cat m1.gz - >"$SRC/cut.din.gz"
head -c $(($(stat -c %s h.raw) - 3)) h.raw >"$SRC/cut.hatf"

mount_tm "$T/log" "$MNT" "$SRC" || { fail "mount"; finish; }

# --- stats.json: valid, the same as tracetool's, the same numbers ---
# check_json NAME FAMILY: the view parses and equals `tracetool stat --json`
check_json() {
        local name=$1 family=$2
        "$TT" stat --json "$SRC/$name" >"$name.tool.json" 2>tool.err
        check "$name: tracetool stat --json exits 0" test $? -eq 0
        python3 - "$MNT/$name/stats.json" "$name.tool.json" "$family" <<'EOF'
import json, sys
view = json.load(open(sys.argv[1]))
tool = json.load(open(sys.argv[2]))
assert view == tool, "the view and tracetool stat --json differ"
assert view["format"] == "tracemount-stats" and view["version"] == 2, view["format"]
assert view["family"] == sys.argv[3], view["family"]
assert view["complete"] is True and view["damage"] is None
EOF
        check "$name: stats.json parses and equals tracetool stat --json" test $? -eq 0
        check "$name: byte for byte too" cmp -s "$MNT/$name/stats.json" "$name.tool.json"
}

for f in a.pdt2.zst a.din.gz; do
        check_json $f address
        # counted by awk over the ascii view: references by type
        awk '{ n[$1]++ } END { printf "%d %d %d %d\n", NR, n[0], n[1], n[2] }' \
                "$MNT/$f/ascii" >awk.txt
        # the text stats view's numbers
        awk '/^references / { r = $2 } /^  [0-2] [a-z]/ { c[$1] = $3 }
             END { printf "%d %d %d %d\n", r, c[0], c[1], c[2] }' "$MNT/$f/stats" >text.txt
        python3 - "$MNT/$f/stats.json" <<'EOF' >json.txt
import json, sys
d = json.load(open(sys.argv[1]))
a = d["address"]
t = {x["type"]["value"]: x["references"]["value"] for x in a["types"].values()}
print(a["references"]["value"], t[0], t[1], t[2])
EOF
        check "$f: stats.json numbers equal an awk count over ascii" cmp -s json.txt awk.txt
        check "$f: ... and the text stats view's" cmp -s json.txt text.txt
        check "$f: ascii_bytes is the ascii view's size" test "$(python3 -c \
                'import json,sys; print(json.load(open(sys.argv[1]))["ascii_bytes"])' \
                "$MNT/$f/stats.json")" -eq "$(stat -c %s "$MNT/$f/ascii")"
        check "$f: errors is empty" test ! -s "$MNT/$f/errors"
done
check "the din text's ascii is the packed one's" cmp -s "$MNT/a.din.gz/ascii" "$MNT/a.pdt2.zst/ascii"

check_json h.hatf.zst heap
# records by kind, counted by awk over ascii; Table 3 from the text view
awk '{ n[$1]++ } END { printf "%d %d %d\n", NR, n["alloc"], n["free"] }' "$MNT/h.hatf.zst/ascii" \
        >awk.txt
awk '/^records +[0-9]/ { r = $2 } /total allocs/ { a = $3 } /total frees/ { f = $3 }
     /total bytes/ { b = $3 } /max objects/ { o = $3 } /max bytes/ { m = $3 }
     END { printf "%d %d %d %d %d %d\n", r, a, f, b, o, m }' "$MNT/h.hatf.zst/stats" >text.txt
python3 - "$MNT/h.hatf.zst/stats.json" <<'EOF' >json.txt
import json, sys
d = json.load(open(sys.argv[1]))
k = {n: r["value"] for n, r in d["kinds"].items()}
h = {n: r["value"] for n, r in d["heap"].items() if "value" in r}
print(d["records"]["value"], k["alloc"], k["free"], file=open("json-awk.txt", "w"))
print(d["records"]["value"], h["allocs"], h["frees"], h["total_bytes"], h["max_objects"], h["max_bytes"])
EOF
check "h.hatf.zst: stats.json kinds equal an awk count over ascii" cmp -s json-awk.txt awk.txt
check "h.hatf.zst: Table 3 in stats.json equals the text stats view's" cmp -s json.txt text.txt
check "h.hatf.zst: errors is empty" test ! -s "$MNT/h.hatf.zst/errors"

# --- damage: sizes, errors, the prefix, then EIO ---
# check_cut NAME INTACT: INTACT is the whole trace's ascii
check_cut() {
        local name=$1 intact=$2 n
        ls -l "$MNT/$name/" >ls.txt 2>&1
        check "$name: ls -l lists the views" grep -q " ascii$" ls.txt
        check "$name: ... with sizes, no ??????????" eval '! grep -q "?" ls.txt'
        check "$name: errors names the archive and the offset" \
                grep -q "$name: .*offset [0-9]" "$MNT/$name/errors"
        check "$name: errors ends with a newline" test "$(tail -c 1 "$MNT/$name/errors" | od -An -c | tr -d ' ')" = '\n'
        cat "$MNT/$name/ascii" >cut.out 2>cut.err
        check "$name: cat fails" test $? -ne 0
        check "$name: ... with EIO" grep -q "Input/output error" cut.err
        n=$(stat -c %s cut.out)
        check "$name: cat printed a prefix ($n bytes) first" test "$n" -gt 0
        check "$name: ... the intact trace's first bytes" cmp -s cut.out <(head -c "$n" "$intact")
        # the size is the prefix and one byte; the page cache shows up to
        # the last whole page before the damage (docs/damage.md)
        local size
        size=$(stat -c %s "$MNT/$name/ascii")
        check "$name: ... up to the damage's page ($n of $((size - 1)))" \
                test "$n" -le $((size - 1)) -a "$n" -ge $(((size - 1) / 4096 * 4096 - 131072))
        "$TT" cat "$SRC/$name" ascii >tool.out 2>tool.err
        check "$name: tracetool cat exits 1" test $? -eq 1
        check "$name: ... after the whole prefix" test "$(stat -c %s tool.out)" -eq $((size - 1))
        check "$name: ... naming the offset" grep -q "offset" tool.err
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["complete"] or not d["damage"] or d["records"]["exact"])' \
                "$MNT/$name/stats.json"
        check "$name: stats.json: complete false, the damage named, records not exact" test $? -eq 0
}
check_cut cut.pdt2.zst a.din
check_cut cut.din.gz a.din
check_cut cut.hatf h.txt
check "the damage was not only in syslog: no daemon log needed" grep -q "offset" "$MNT/cut.hatf/errors"
check "the daemon is alive" kill -0 "$MNT_PID"
umount_tm "$MNT"
finish
