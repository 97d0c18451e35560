#!/bin/bash
# Corrupt archives through a live mount: small traces of every codec (din,
# PDATS, PDATS II, lackey, HATF, Meta-TF) in every container (plain, gzip,
# zstd: seekable with small frames for the address codecs, zstd's own
# frames for lackey and the record traces), $TM_CORRUPT_VARIANTS damaged
# copies of each (default 50: cut, bit flips, zeroed blocks, garbage
# appended, in turn; seeded by $TM_CORRUPT_SEED, so reproducible); and
# $TM_CORRUPT_BIG (default 8) copies of each of the larger ones: a din
# trace packed with pack's default 1 MiB frames (blocks of a frame decode
# before its checksum is met) and the shipped examples (one 2.9 MB zstd
# frame, gzip from elsewhere); all in one source directory under one mount. Every view of every copy is read
# whole and at random offsets, each read with a time limit; each read must
# give the intact archive's bytes for that range (`tracetool cat` of the
# original) or fail with EIO, and the daemon must live through it all.
# Wrong bytes are tolerated only where the container cannot detect the
# damage (plain archives; gzip before its trailer; zstd cut between
# frames), and counted apart (docs/reliability.md). The counts by codec and
# container are printed. fuse_corrupt.py does the damage and the reads.
# usage: fuse_corrupt.sh   (TRACEMOUNT and TRACETOOL in the environment)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 not found"
command -v zstd >/dev/null 2>&1 || skip "zstd (the program) not found"
fuse_prologue
EX=${TM_SOURCE_DIR:-$here/../..}/examples
N=${TM_CORRUPT_VARIANTS:-50}
SEED=${TM_CORRUPT_SEED:-15}
mkdir -p base src refs
t0=$(date +%s)

# --- the intact archives, named codec.container ---
gen_din 41 1500 >t.din
gen_lackey 42 1500 >t.lackey
for c in din pdt pdt2; do
        "$TT" pack t.din "t.$c" 2>/dev/null || fail "pack t.$c"
        "$TT" pack t.din "t.$c.gz" 2>/dev/null || fail "pack t.$c.gz"
        "$TT" pack --frame-size 4096 t.din "t.$c.zst" 2>/dev/null || fail "pack t.$c.zst"
done
for k in "din din" "pdats pdt" "pdats2 pdt2"; do
        set -- $k
        cp "t.$2" "base/$1.plain"
        cp "t.$2.gz" "base/$1.gz"
        cp "t.$2.zst" "base/$1.zst"
done
cp t.lackey base/lackey.plain
gzip -n -c t.lackey >base/lackey.gz
zstd -q -c t.lackey >base/lackey.zst
for k in "hatf sort.hatf.zst" "metatf heapwork.mtf.zst"; do
        set -- $k
        zstd -q -d -c "$EX/$2" >"base/$1.plain" || fail "unpack $2"
        gzip -n -c "base/$1.plain" >"base/$1.gz"
        cp "$EX/$2" "base/$1.zst"
done

# the larger ones, damaged fewer times
mkdir -p big
gen_din 43 300000 >big.din
"$TT" pack --format din big.din big/din1m.zst 2>/dev/null || fail "pack big/din1m.zst"
cp "$EX/sort.pdt2.zst" big/exsortpdt2.zst
cp "$EX/ls.pdt.gz" big/exlspdt.gz
cp "$EX/gzip.din.zst" big/exgzipdin.zst
cp "$EX/true.lackey.gz" big/extruelackey.gz
cp big/* base/

# --- references: every view of each intact archive, from tracetool ---
# (four at a time: under ASan most of the set-up is these programs starting)
for b in base/*; do
        n=${b#base/}
        mkdir -p "refs/$n"
        "$TT" index "$b" >/dev/null 2>&1 # once, before the parallel readers
        "$TT" views "$b" >"refs/$n/VIEWS" || fail "views of $n"
        check "$n has views" test -s "refs/$n/VIEWS"
        for v in $(cat "refs/$n/VIEWS"); do
                echo "$n $v" >>jobs
        done
done
export TT
xargs -P 4 -n 2 sh -c '"$TT" cat "base/$0" "$1" >"refs/$0/$(echo "$1" | tr / _)" ||
        echo "$0 $1" >>cat-failed' <jobs
check "tracetool cat of every view of the intact archives" test ! -e cat-failed

small=$(ls base/* | grep -v -F -f <(ls big))
python3 "$here/fuse_corrupt.py" make src "$N" "$SEED" $small || fail "making the copies"
mv manifest.json manifest-small.json
python3 "$here/fuse_corrupt.py" make src "${TM_CORRUPT_BIG:-8}" "$SEED" big/* ||
        fail "making the copies of the larger archives"
python3 - manifest-small.json manifest.json <<'PY'
import json, sys
a = json.load(open(sys.argv[1])) + json.load(open(sys.argv[2]))
json.dump(a, open(sys.argv[2], "w"))
PY
echo "$(ls src | wc -l) damaged copies of $(ls base | wc -l) archives"
cp base/pdats2.zst src/intact.pdt2.zst

echo "set-up (archives, references, copies) took $(($(date +%s) - t0)) s"
mount_tm "$T/log" "$T/mnt" "$T/src" || { fail "mount"; finish; }
start=$(date +%s)
if python3 "$here/fuse_corrupt.py" check "$T/mnt" refs manifest.json; then
        ok "every read of every copy: the intact bytes, EIO, or damage the container cannot see"
else
        fail "reads of damaged copies (above)"
fi
echo "reads took $(($(date +%s) - start)) s"
check "the daemon is alive after all copies" kill -0 "$MNT_PID"
check "an intact archive among them reads right" cmp -s "$T/mnt/intact.pdt2.zst/ascii" \
        refs/pdats2.zst/ascii
n=$(grep -c 'offset' "$T/log" || true)
echo "daemon log: $n lines naming an offset; first ones:"
grep -m5 'offset' "$T/log"
umount_tm "$T/mnt"
finish
