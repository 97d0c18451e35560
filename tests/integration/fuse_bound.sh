#!/bin/bash
# A bound format (docs/formats/bound.md) mounts with no C of its own: a
# three-field record with no tag (u32 a, u64 b, u16 c; an 8-byte header
# with a magic), described by a file in TM_BOUND_FORMATS and a DTD in
# TM_DTD_PATH. Perl writes the archives (little- and big-endian; plain,
# zstd, gzip) and, from the same values, what the views must hold; through
# the mount ascii, fields/<each field> and binary equal that, stats and
# schema are there; a file with another magic passes through as a file;
# a truncated record is an error naming its raw offset; tracetool without
# the description does not know the format.
# usage: fuse_bound.sh   (TRACEMOUNT and TRACETOOL in the environment)
here=$(dirname "$0")
. "$here/lib.sh"
fuse_prologue
mkdir -p "$SRC" fmt

cat >fmt/tf3.dtd <<'EOF'
// issue 27's test format: three fields, no tag
tag.width = 0;
tf3 : (a, b, c) {
    tag.value = 0;
}
a.width = 4; a.interpretation = none;
b.width = 8; b.interpretation = none; b.display = hex;
c.width = 2; c.interpretation = none;
EOF
cat >fmt/tf3.fmt <<'EOF'
# little-endian
name = tf3;
dtd = tf3.dtd;
magic = "TF3L";
byteorder = little;
header = 8;
EOF
cat >fmt/tf3be.fmt <<'EOF'
name = tf3be;
dtd = tf3.dtd;
magic = 0x54463342;   # "TF3B"
offset = 0;
byteorder = big;
header = 8;
EOF
export TM_BOUND_FORMATS=$T/fmt/tf3.fmt:$T/fmt/tf3be.fmt
export TM_DTD_PATH=$T/fmt

# gen SEED N MAGIC PACK OUT: N records of values from SEED; writes OUT
# (the archive's raw bytes) and OUT.ascii, OUT.a, OUT.b, OUT.c (the views'
# text) and OUT.bin (the binary view: kind, present, a, b, c).
gen() {
        perl -e '
        my ($seed, $n, $magic, $pk, $out) = @ARGV;
        srand($seed);
        open(my $raw, ">", $out) or die; binmode $raw;
        open(my $asc, ">", "$out.ascii") or die;
        open(my $fa, ">", "$out.a") or die;
        open(my $fb, ">", "$out.b") or die;
        open(my $fc, ">", "$out.c") or die;
        open(my $bin, ">", "$out.bin") or die; binmode $bin;
        print $raw $magic, pack("N", 7);
        for (1 .. $n) {
                my $va = int(rand(4294967296));
                my $vb = (int(rand(4294967296)) << int(rand(33))) | int(rand(65536));
                my $vc = int(rand(65536));
                print $raw pack($pk, $va, $vb, $vc);
                printf $asc "tf3 %u 0x%x %u\n", $va, $vb, $vc;
                printf $fa "%u\n", $va; printf $fb "0x%x\n", $vb; printf $fc "%u\n", $vc;
                print $bin pack("VVQ<Q<Q<", 0, 7, $va, $vb, $vc);
        }' "$@"
}
gen 1 20000 TF3L "VQ<v" le.raw
gen 2 3000 TF3B "NQ>n" be.raw
cp le.raw "$SRC/le.tf3"
zstd -q -c le.raw >"$SRC/le.tf3.zst"
gzip -c be.raw >"$SRC/be.tf3.gz"
cp be.raw "$SRC/be.tf3"
{ printf 'TF3X'; tail -c +5 le.raw; } >"$SRC/other.bin" # another magic
head -c $((8 + 14 * 100 + 5)) le.raw >"$SRC/cut.tf3"      # 100 records and 5 bytes

check "tracetool knows the format from TM_BOUND_FORMATS" \
        test "$("$TT" stat "$SRC/le.tf3" | sed -n 's/^format *\([^ ]*\).*/\1/p')" = tf3
check "without the description it is not a trace" \
        sh -c '! env -u TM_BOUND_FORMATS "$0" views "$1" >/dev/null 2>&1' "$TT" "$SRC/le.tf3"
env TM_BOUND_FORMATS="$T/fmt/tf3.fmt:$T/fmt/none.fmt" "$TT" views "$SRC/le.tf3" >/dev/null 2>err.log
check "a missing description is reported, the others still load" \
        grep -q "TM_BOUND_FORMATS: .*none.fmt" err.log

mount_tm "$T/log" "$MNT" --cache-dir "$T/cache" "$SRC" || { fail "mount"; finish; }
for f in le.tf3 le.tf3.zst be.tf3 be.tf3.gz; do
        d=$MNT/$f
        case $f in le*) ref=le.raw ;; *) ref=be.raw ;; esac
        check "$f is a trace directory" test -d "$d"
        for v in ascii binary stats schema fields/a fields/b fields/c; do
                check "$f: $v exists" test -f "$d/$v"
        done
        check "$f: ascii = the written values" cmp -s "$d/ascii" "$ref.ascii"
        for x in a b c; do
                check "$f: fields/$x = the written $x" cmp -s "$d/fields/$x" "$ref.$x"
        done
        check "$f: binary = the written values, 32-byte records" cmp -s "$d/binary" "$ref.bin"
        check "$f: stats count the records" \
                grep -q "^records *$(wc -l <"$ref.ascii")\$" "$d/stats"
        check "$f: stats name the format" grep -Eq "^format +tf3(be)? \(tf3 family\)" "$d/stats"
        check "$f: schema describes the record" grep -q "^tf3 : (tag, a, b, c)" "$d/schema"
        check "$f: tail reads the end" cmp -s <(tail -n 3 "$d/ascii") <(tail -n 3 "$ref.ascii")
done
check "a file with another magic passes through" cmp -s "$MNT/other.bin" "$SRC/other.bin"
check "cut.tf3 is a trace directory" test -d "$MNT/cut.tf3"
if cat "$MNT/cut.tf3/ascii" >cut.out 2>/dev/null; then
        fail "cut.tf3: reading ascii past the cut record succeeded"
else
        ok "cut.tf3: reading ascii fails at the cut record"
fi
# (through the mount the read that meets the cut fails whole: the daemon's
# rule for record traces, not the format's)
"$TT" cat "$SRC/cut.tf3" ascii >cut.out 2>cut.err && fail "cut.tf3: tracetool cat succeeded"
check "cut.tf3: tracetool cat gives the 100 whole records" cmp -s cut.out <(head -n 100 le.raw.ascii)
check "cut.tf3: tracetool cat names the raw offset" grep -q "raw offset $((8 + 14 * 100)): truncated record" cut.err
check "cut.tf3: errors name the raw offset of the cut record" \
        grep -q "raw offset $((8 + 14 * 100)): truncated record" "$MNT/cut.tf3/errors"
umount_tm "$MNT"

# a daemon (no -f: it daemonizes, and leaves its directory) knows the
# formats its start named, by relative names too: its registry is built
# before that
mkdir -p "$T/mnt2"
env TM_BOUND_FORMATS=fmt/tf3.fmt "$TRACEMOUNT" --cache-dir "$T/cache2" "$SRC" "$T/mnt2" \
        2>daemon2.log
check "a daemon started with a relative TM_BOUND_FORMATS name reads the format" \
        wait_for 5 test -d "$T/mnt2/le.tf3"
check "the daemon's le.tf3: ascii = the written values" cmp -s "$T/mnt2/le.tf3/ascii" le.raw.ascii
fusermount3 -u "$T/mnt2" || fail "fusermount3 -u $T/mnt2"
finish
