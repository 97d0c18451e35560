#!/bin/bash
# The other members of a zip trace as plain files through a real mount
# (docs/formats/containers.md, "Members in the mount"): members/ lists them
# (subdirectories, hostile names escaped, the trace's own member left out),
# each reads as `unzip -p` gives it (hostile ones as Python's zipfile
# does), dd skip= into a deflate member of a few MiB gives the same bytes as
# the same dd over unzip's, tracetool cat ARCHIVE members/NAME too; a
# damaged member is EIO, named in the trace's errors view with an archive
# offset, while the other members and the trace still read.
# usage: fuse_zipmem.sh   (TRACEMOUNT and TRACETOOL in the environment)
here=$(dirname "$0")
. "$here/lib.sh"
command -v unzip >/dev/null 2>&1 || skip "unzip is not installed (build.sh installs it)"
command -v zip >/dev/null 2>&1 || skip "zip is not installed (build.sh installs it)"
fuse_prologue
mkdir -p "$SRC" work/sub/deep
cd work || exit 1
gen_din 28 20000 >trace
echo "made by zip" >notes.txt
printf 'x' >sub/s.bin
# 12 MiB that deflate squeezes to about half: several restart points
python3 - <<'EOF'
import random
r = random.Random(28)
words = [bytes(r.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(2, 9))) for _ in range(5000)]
with open("sub/deep/big.txt", "wb") as f:
    n = 0
    while n < 12 << 20:
        line = b" ".join(r.choice(words) for _ in range(12)) + b"\n"
        f.write(line)
        n += len(line)
EOF
zip -q -r t.zip trace sub && zip -q -0 t.zip notes.txt || { fail "zip"; finish; }
# names zip(1) will not write: Python's zipfile writes them as given
python3 - <<'EOF'
import warnings, zipfile
warnings.simplefilter("ignore")
with zipfile.ZipFile("t.zip", "a") as z:
    z.writestr("../../escape.txt", b"dot dot\n")
    z.writestr("/abs//path.txt", b"absolute\n", compress_type=zipfile.ZIP_DEFLATED)
    z.writestr("dup.txt", b"first\n")
    z.writestr(zipfile.ZipInfo("dup.txt"), b"second\n")
EOF
cp t.zip "$SRC/"
# bad.zip: a byte in the middle of big.txt's deflate data flipped
python3 - <<'EOF'
import struct, zipfile
data = bytearray(open("t.zip", "rb").read())
i = zipfile.ZipFile("t.zip").getinfo("sub/deep/big.txt")
n, x = struct.unpack("<HH", data[i.header_offset + 26:i.header_offset + 30])
at = i.header_offset + 30 + n + x + i.compress_size // 2
data[at] ^= 0x10
open("bad.zip", "wb").write(data)
EOF
cp bad.zip "$SRC/"
unzip -p t.zip sub/deep/big.txt >big.ref
cd "$T" || exit 1

mount_tm "$T/log" "$MNT" --cache-dir "$T/cache" "$SRC" || { fail "mount"; finish; }
d=$MNT/t.zip
check "t.zip lists members beside its views" test -d "$d/members" -a -f "$d/ascii"
dup2=$(python3 -c 'import zipfile
print([n for n, i in enumerate(zipfile.ZipFile("work/t.zip").infolist()) if i.filename == "dup.txt"][1])')
(cd "$d/members" && find . | LC_ALL=C sort) >ls.out
cat >ls.want <<EOF
.
./%2E%2E
./%2E%2E/%2E%2E
./%2E%2E/%2E%2E/escape.txt
./abs
./abs/path.txt
./dup.txt
./notes.txt
./sub
./sub/deep
./sub/deep/big.txt
./sub/s.bin
./~$dup2
EOF
check "ls -R members/: the tree of the members, hostile names escaped" cmp -s ls.out ls.want \
        || diff ls.want ls.out
ls -lR "$d/members" >/dev/null || fail "ls -lR members/"
for m in notes.txt sub/s.bin sub/deep/big.txt; do
        check "members/$m = unzip -p" cmp -s "$d/members/$m" <(unzip -p work/t.zip "$m")
        check "members/$m: its size is unzip's" \
                test "$(stat -c %s "$d/members/$m")" = "$(unzip -p work/t.zip "$m" | wc -c)"
done
py_member() { # py_member NAME [NTH]: the bytes of the NTH (from 0) member named NAME
        python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
i = [i for i in z.infolist() if i.filename == sys.argv[2]][int(sys.argv[3])]
sys.stdout.buffer.write(z.open(i).read())' work/t.zip "$1" "${2:-0}"
}
check "members/%2E%2E/%2E%2E/escape.txt = zipfile's ../../escape.txt" \
        cmp -s "$d/members/%2E%2E/%2E%2E/escape.txt" <(py_member ../../escape.txt)
check "members/abs/path.txt = zipfile's /abs//path.txt" \
        cmp -s "$d/members/abs/path.txt" <(py_member /abs//path.txt)
check "members/dup.txt is the first dup.txt" cmp -s "$d/members/dup.txt" <(py_member dup.txt)
check "members/~$dup2 is the second dup.txt" cmp -s "$d/members/~$dup2" <(py_member dup.txt 1)
check "no member named trace (the raw view is it)" test ! -e "$d/members/trace"
check "raw = unzip -p trace" cmp -s "$d/raw" work/trace
# random access into the deflate member
for s in 0 1 333 2777 3024 1279 3071 5; do
        check "dd skip=$s count=3 of big.txt = the same of unzip's" cmp -s \
                <(dd if="$d/members/sub/deep/big.txt" bs=4096 skip=$s count=3 2>/dev/null) \
                <(dd if=work/big.ref bs=4096 skip=$s count=3 2>/dev/null)
done
check "tracetool cat t.zip members/sub/deep/big.txt = unzip -p" \
        cmp -s <("$TT" cat work/t.zip members/sub/deep/big.txt) work/big.ref

b=$MNT/bad.zip
if cat "$b/members/sub/deep/big.txt" >bad.out 2>bad.err; then
        fail "a damaged member read without error"
else
        check "the damaged member: EIO" grep -q "Input/output error" bad.err
        check "the damaged member: no byte served" test ! -s bad.out
fi
check "errors names the archive, the member and an archive offset" \
        grep -q "bad.zip: archive offset [0-9]*: zip: member sub/deep/big.txt" "$b/errors"
check "the other members of bad.zip still read" cmp -s "$b/members/notes.txt" work/notes.txt
check "bad.zip's trace still reads" cmp -s "$b/raw" work/trace
if "$TT" cat work/bad.zip members/sub/deep/big.txt >tt.out 2>tt.err; then
        fail "tracetool cat of a damaged member succeeded"
else
        check "tracetool cat: the error names the member" grep -q "member sub/deep/big.txt" tt.err
fi
umount_tm "$MNT"
finish
