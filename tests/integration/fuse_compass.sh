#!/bin/bash
# The fixture family through a real mount (tests/fixture/compass.h,
# docs/adding-a-format.md): a walk of 20000 records as a plain and a
# zstd-compressed compass trace, mounted by a daemon that links the
# fixture module (tests/meson.build: tracemount_compass). Every view the
# directory lists is checked: ascii, raw, binary, streams/, fields/ (dir
# through the family's show) and sections/position (the family's table)
# byte for byte as compass.py reads the file; stats and stats.json hold
# the family's figures as compass.py counts them; schema names the kinds;
# errors is empty. A trace with a bad record at raw offset 629 mounts, its
# errors and stats name the offset, its ascii read fails with EIO. The
# shipped daemon (TM_SHIPPED_TRACEMOUNT, when set) shows no trace there.
# usage: fuse_compass.sh   (TRACEMOUNT: the fixture's daemon; TRACETOOL)
here=$(dirname "$0")
. "$here/lib.sh"
fixture=$(cd "$here/../fixture" && pwd)
fuse_prologue
mkdir -p "$SRC"
python3 "$fixture/compass.py" gen "$SRC/walk.cmps" 20000 7 || { fail "compass.py gen"; finish; }
zstd -q -19 -o "$SRC/walkz.cmps.zst" "$SRC/walk.cmps"
python3 "$fixture/compass.py" views "$SRC/walk.cmps" want || { fail "compass.py views"; finish; }
# the 101st record's tag made 7: 100 records (629 bytes) before it
python3 - "$SRC/walk.cmps" "$SRC/bad.cmps" <<'EOF'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
pos = 8
for _ in range(100):
    pos += 6 if d[pos] == 1 else 9
assert pos == 629, pos
d[pos] = 7
open(sys.argv[2], "wb").write(d)
EOF

mount_tm "$T/log" "$MNT" --cache-dir "$T/cache" "$SRC" || { fail "mount"; finish; }
views="ascii binary errors fields raw schema sections stats stats.json streams"
for f in walk.cmps walkz.cmps.zst; do
        d=$MNT/$f
        check "$f: the views listed are $views" test "$(ls "$d" | tr '\n' ' ')" = "$views "
        check "$f: fields/ lists dir t to" test "$(ls "$d/fields" | tr '\n' ' ')" = "dir t to "
        check "$f: streams/ lists jump step" test "$(ls "$d/streams" | tr '\n' ' ')" = "jump step "
        check "$f: sections/ lists the family's table" test "$(ls "$d/sections")" = position
        for v in ascii raw binary streams/step streams/jump fields/t fields/dir fields/to \
                sections/position; do
                check "$f: $v byte for byte as compass.py reads the file" cmp -s "$d/$v" "want/$v"
        done
        check "$f: errors is empty" test ! -s "$d/errors"
        check "$f: stats name the family" grep -q "^format     compass (compass family) in " "$d/stats"
        check "$f: stats count the records" grep -q "^records    20000\$" "$d/stats"
        check "$f: stats end with the family's lines as compass.py counts" \
                cmp -s <(sed -n '/^compass$/,$p' "$d/stats") want/stats.family
        check "$f: stats.json's compass member as compass.py counts" \
                python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
w = json.load(open(sys.argv[2]))
sys.exit(not (j["compass"] == w and j["family"] == "compass" and j["records"]["value"] == 20000))' \
                "$d/stats.json" want/family.json
        check "$f: schema names both kinds" grep -q "^// kinds: 0=step 1=jump\$" "$d/schema"
done
check "bad.cmps: errors name the raw offset" \
        grep -q "bad.cmps: raw offset 629: compass: unknown record tag (tag 0x07)" "$MNT/bad.cmps/errors"
check "bad.cmps: stats count the 100 records before it" grep -q "^records    100\$" "$MNT/bad.cmps/stats"
if cat "$MNT/bad.cmps/ascii" >/dev/null 2>cat.err; then
        fail "bad.cmps: ascii read to the end"
else
        check "bad.cmps: ascii fails with EIO" grep -q "Input/output error" cat.err
fi
umount_tm "$MNT"

# the shipped daemon links no fixture module: it has no compass row
if [ -x "${TM_SHIPPED_TRACEMOUNT:-}" ]; then
        TRACEMOUNT=$TM_SHIPPED_TRACEMOUNT
        mount_tm "$T/log2" "$T/mnt2" --cache-dir "$T/cache2" "$SRC" || { fail "mount (shipped)"; finish; }
        check "the shipped daemon shows no trace directory for walk.cmps" test ! -d "$T/mnt2/walk.cmps"
        umount_tm "$T/mnt2"
fi
finish
