#!/bin/bash
# PTF through real mounts (docs/formats/ptf.md): the report's Figure 3,
# repaired (tests/data/ptf/figure3.ptf), as text, zstd- and gzip-
# compressed text and the binary form: each mounts as a trace directory
# whose ascii is the figure byte for byte; stats and stats.json give the
# object family's figures, which awk over ascii counts again; sections/notes
# holds the binary header's notes; a trace that breaks an object rule
# mounts (it decodes) and tracetool verify fails on it, naming the rule.
# A text whose fo lines have 0 and several member formats (and a class name
# with blanks) packed as the binary form: the ascii of both is the text.
# usage: fuse_ptf.sh   (TRACEMOUNT and TRACETOOL in the environment)
here=$(dirname "$0")
. "$here/lib.sh"
data=$(cd "$here/../data/ptf" && pwd)
fuse_prologue
mkdir -p "$SRC"
cp "$data/figure3.ptf" "$data/figure3.ptfb" "$data/rule_reused.ptf" "$SRC/"
zstd -q -19 -o "$SRC/figure3z.ptf.zst" "$data/figure3.ptf"
gzip -9 -c "$data/figure3.ptf" >"$SRC/figure3g.ptf.gz"
cat >fo.ptf <<'EOF'
Trace begin
fo 50 0 0 2 1 12 11 11 30 10 DesignObject
fo 51 50 5 0 0 13 CompositePart
fo 52 0 0 0 0 0
fo 53 0 0 3 0 7 11 12 13 a b%c d
co 51 60
Trace end
EOF
cp fo.ptf "$SRC/fo.ptf"
check "pack fo.ptf -> fo.ptfb.zst" "$TT" pack fo.ptf "$SRC/fo.ptfb.zst"

mount_tm "$T/log" "$MNT" --cache-dir "$T/cache" "$SRC" || { fail "mount"; finish; }
for f in figure3.ptf figure3z.ptf.zst figure3g.ptf.gz figure3.ptfb; do
        d=$MNT/$f
        check "$f is a trace directory" test -d "$d"
        check "$f: ascii is Figure 3 byte for byte" cmp -s "$d/ascii" "$data/figure3.ptf"
        check "$f: stats name the object family" grep -Eq "^format +ptf(_bin)? \(object family\)" "$d/stats"
        # awk over ascii: objects created (fo co cao), edges read and written
        made=$(awk '$1 == "fo" || $1 == "co" || $1 == "cao"' "$d/ascii" | wc -l)
        er=$(awk '$1 == "er"' "$d/ascii" | wc -l)
        ew=$(awk '$1 == "ew"' "$d/ascii" | wc -l)
        check "$f: stats created = awk's $made" grep -q "^  created  *$made\$" "$d/stats"
        check "$f: stats edges read = awk's $er" grep -q "^  edges read  *$er\$" "$d/stats"
        check "$f: stats edges written = awk's $ew" grep -q "^  edges written  *$ew\$" "$d/stats"
        check "$f: stats.json has the object member" \
                grep -q "\"object\":{\"created\":{\"value\":$made,\"unit\":\"objects\",\"exact\":true},\"deleted\":{\"value\":0,\"unit\":\"objects\",\"exact\":true},\"max_live\":{\"value\":$made," "$d/stats.json"
        check "$f: streams/ew holds the ew lines" cmp -s "$d/streams/ew" <(grep '^ew ' "$data/figure3.ptf")
        check "$f: fields/ToOId holds the edges' targets" \
                cmp -s "$d/fields/ToOId" <(awk '$1 == "ew" {print $5}' "$data/figure3.ptf")
done
check "figure3.ptfb: sections/notes holds the header's note" \
        grep -q "^Figure 3 of CU-CS-897-00" "$MNT/figure3.ptfb/sections/notes"
check "rule_reused.ptf: stats count the reuse at record 4" \
        grep -q "^  reused  *1 4\$" "$MNT/rule_reused.ptf/stats"
for f in fo.ptf fo.ptfb.zst; do
        check "$f: ascii is the text byte for byte (fo lines of 0 and several ids)" \
                cmp -s "$MNT/$f/ascii" fo.ptf
done
check "fo.ptf: fields/MemberFormatIds is one token a line" \
        cmp -s "$MNT/fo.ptf/fields/MemberFormatIds" <(printf '11,11,30,10\n-\n-\n11,12,13\n')
umount_tm "$MNT"

check "tracetool verify passes Figure 3" "$TT" verify "$SRC/figure3.ptf"
if "$TT" verify "$SRC/rule_reused.ptf" >verify.out 2>&1; then
        fail "tracetool verify passed a trace that reuses an OId"
else
        check "tracetool verify names the rule and the record" \
                grep -q "record 4: object rule reused broken" verify.out
fi
finish
