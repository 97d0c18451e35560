#!/bin/bash
# tracemount under change and damage: a corrupt archive gives EIO with a
# logged reason naming it while the others keep reading; archives added,
# removed and replaced while mounted show up (including over cached pages);
# thousands of archives list instantly without decoding; a read-only
# source works with --no-index-beside and --cache-dir (and the cached index
# is reused by the next mount); -s works; unmount is clean every time.
# usage: fuse_live.sh   (TRACEMOUNT and TRACETOOL in the environment)
here=$(dirname "$0")
. "$here/lib.sh"
fuse_prologue
mkdir -p "$SRC" many

gen_din 31 120000 >x.din
gen_din 32 90000 >y.din
gen_din 33 500 >s.din
"$TT" pack --frame-size 65536 x.din "$SRC/x.pdt2.zst" || fail "pack x"
"$TT" pack y.din y.pdt.gz || fail "pack y"
"$TT" pack x.din "$SRC/r.pdt2.zst" || fail "pack r"
"$TT" pack s.din s.pdt2.zst || fail "pack s"
# damage: a bad line inside din text; bytes overwritten inside zstd frames
awk 'NR == 60000 { print "7 zzz" } { print }' x.din >"$SRC/bad.din"
cp "$SRC/x.pdt2.zst" "$SRC/badz.pdt2.zst"
printf 'XXXXXXXXXXXXXXXX' | dd of="$SRC/badz.pdt2.zst" bs=1 seek=$(($(stat -c %s "$SRC/x.pdt2.zst") / 2)) conv=notrunc 2>/dev/null

mount_tm "$T/log" "$MNT" "$SRC" || { fail "mount"; finish; }

# --- corruption ---
for b in bad.din badz.pdt2.zst; do
        check "$b is shown as a trace" test -d "$MNT/$b"
        cat "$MNT/$b/ascii" >/dev/null 2>err.txt
        check "cat $b/ascii fails" test $? -ne 0
        check "... with EIO" grep -q "Input/output error" err.txt
        check "the daemon logged the reason naming $b" grep -q "$b" "$T/log"
done
check "the logged reason names an offset" grep -q "offset" "$T/log"
check "other traces still read" cmp -s x.din "$MNT/x.pdt2.zst/ascii"
check "the daemon is alive" kill -0 "$MNT_PID"

# --- added, removed, replaced while mounted ---
cp y.pdt.gz "$SRC/.new.tmp" && mv "$SRC/.new.tmp" "$SRC/new.pdt.gz"
check "added archive appears" wait_for 5 test -d "$MNT/new.pdt.gz"
check "added archive reads" cmp -s y.din "$MNT/new.pdt.gz/ascii"
rm "$SRC/new.pdt.gz"
check "removed archive disappears" wait_for 5 test ! -e "$MNT/new.pdt.gz"

check "r.pdt2.zst before replacement" cmp -s x.din "$MNT/r.pdt2.zst/ascii"
cat "$MNT/r.pdt2.zst/binary" >/dev/null # its pages are now in the kernel cache
cp y.pdt.gz "$SRC/.r.tmp" && mv "$SRC/.r.tmp" "$SRC/r.pdt2.zst"
check "replaced archive shows the new content" wait_for 5 cmp -s y.din "$MNT/r.pdt2.zst/ascii"
# the kernel may keep the binary view's old attributes for up to a second
# (OPS_TIMEOUT) after the ascii view has been looked up again
binsize() { test "$(stat -c %s "$MNT/r.pdt2.zst/binary")" -eq "$1"; }
check "replaced archive: binary view is new too" wait_for 5 binsize $((16 * $(wc -l <y.din)))
check "... and its bytes" cmp -s <("$TT" cat y.pdt.gz binary) "$MNT/r.pdt2.zst/binary"
# rewritten in place (same inode, new size and mtime)
cat s.pdt2.zst >"$SRC/r.pdt2.zst"
check "rewritten archive shows the new content" wait_for 5 cmp -s s.din "$MNT/r.pdt2.zst/ascii"
# a trace replaced by a plain file and back
echo "not a trace any more" >"$SRC/.r.tmp" && mv "$SRC/.r.tmp" "$SRC/r.pdt2.zst"
check "trace replaced by a plain file becomes a file" wait_for 5 test -f "$MNT/r.pdt2.zst"
check "... with its bytes" wait_for 5 cmp -s "$SRC/r.pdt2.zst" "$MNT/r.pdt2.zst"
cp s.pdt2.zst "$SRC/.r.tmp" && mv "$SRC/.r.tmp" "$SRC/r.pdt2.zst"
check "plain file replaced by a trace becomes a directory" wait_for 5 test -d "$MNT/r.pdt2.zst"
check "... with its views" wait_for 5 cmp -s s.din "$MNT/r.pdt2.zst/ascii"
umount_tm "$MNT"

# --- thousands of archives: listing is instant and decodes nothing ---
for i in $(seq 2000); do cp s.pdt2.zst "many/t$i.pdt2.zst"; done
mount_tm "$T/log.many" "$T/mnt.many" "$T/many" || fail "mount many"
start=$(date +%s%N)
n=$(ls -l "$T/mnt.many" | grep -c '^d')
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "ls -l of 2000 archives: $ms ms"
check "ls -l shows 2000 trace directories" test "$n" -eq 2000
check "ls -l of 2000 archives under 10 s ($ms ms)" test "$ms" -lt 10000
check "listing built no index" test -z "$(ls -a "$T/many" | grep '\.tmidx$')"
check "one of them reads" cmp -s s.din "$T/mnt.many/t1234.pdt2.zst/ascii"
umount_tm "$T/mnt.many"

# --- read-only source, index in --cache-dir, single-threaded ---
mkdir -p ro cache
cp "$SRC/x.pdt2.zst" ro/x.pdt2.zst
chmod 555 ro
mount_tm "$T/log.ro" "$T/mnt.ro" -s --no-index-beside --cache-dir "$T/cache" "$T/ro" || fail "mount ro"
check "read-only source reads" cmp -s x.din "$T/mnt.ro/x.pdt2.zst/ascii"
check "no index beside the archive" test -z "$(ls -a ro | grep '\.tmidx$')"
check "index in the cache dir" test -n "$(find cache -type f -size +0)"
idx1=$(find cache -type f -exec stat -c '%i %Y %n' {} + | sort)
umount_tm "$T/mnt.ro"
mount_tm "$T/log.ro2" "$T/mnt.ro" --no-index-beside --cache-dir "$T/cache" "$T/ro" || fail "mount ro again"
check "second mount reads" cmp -s x.din "$T/mnt.ro/x.pdt2.zst/ascii"
check "second mount reused the cached index" test "$(find cache -type f -exec stat -c '%i %Y %n' {} + | sort)" = "$idx1"
# The kernel's readahead for the mount: 512 KiB by default, --read-ahead
# sets it; only root may (others keep the kernel's, quietly).
ra_of() { cat "/sys/class/bdi/$(mountpoint -d "$1")/read_ahead_kb"; }
if [ "$(id -u)" = 0 ]; then
        check "kernel readahead of the mount is 512 KiB" test "$(ra_of "$T/mnt.ro")" = 512
else
        echo "note: not root: the mount keeps the kernel's readahead, not checked"
fi
umount_tm "$T/mnt.ro"
mount_tm "$T/log.ro3" "$T/mnt.ro" --read-ahead 256 --no-index-beside --cache-dir "$T/cache" "$T/ro" || fail "mount --read-ahead"
check "--read-ahead mount reads" cmp -s x.din "$T/mnt.ro/x.pdt2.zst/ascii"
if [ "$(id -u)" = 0 ]; then
        check "--read-ahead 256 sets 256 KiB" test "$(ra_of "$T/mnt.ro")" = 256
fi
umount_tm "$T/mnt.ro"
# The "=" forms of both options, a relative --cache-dir, and a daemon in
# the background (which changes to / as it detaches).
"$TRACEMOUNT" --no-index-beside --cache-dir=rcache --read-ahead=128 "$T/ro" "$T/mnt.ro" \
        > "$T/log.ro4" 2>&1
check "background mount with --cache-dir=DIR --read-ahead=KB" mountpoint -q "$T/mnt.ro"
check "... reads" cmp -s x.din "$T/mnt.ro/x.pdt2.zst/ascii"
check "... keeps its index in ./rcache" test -n "$(find rcache -type f -size +0 2>/dev/null)"
if [ "$(id -u)" = 0 ]; then
        check "... --read-ahead=128 sets 128 KiB" test "$(ra_of "$T/mnt.ro")" = 128
fi
fusermount3 -u "$T/mnt.ro" || fail "fusermount3 -u $T/mnt.ro (background daemon)"
"$TRACEMOUNT" --read-ahead=12x "$T/ro" "$T/mnt.ro" >/dev/null 2>&1
check "--read-ahead=12x: exit 2" test $? -eq 2
chmod 755 ro

# --- drop-behind: a sequential reader's past beyond --drop-behind MiB leaves
# the page cache (by default 1 GiB, so these small views stay whole). The
# kernel may evict any page any time, so the checks count on pages being
# gone, and on most (90%) of those that should stay being there. ---
RES=$here/resident.py
M16=16777216
mkdir -p dsrc
gen_din 34 1500000 >d.din
"$TT" pack d.din dsrc/d.pdt2.zst || fail "pack d"
DV=$T/mnt.d/d.pdt2.zst/binary
DSZ=$((16 * 1500000)) # 24 MB
# cached FILE FROM TO: pages of FILE's bytes FROM..TO in the page cache
cached() { python3 "$RES" "$@" | cut -d' ' -f1; }
none_before() { [ "$(cached "$DV" 0 "$1")" -eq 0 ]; }
mount_tm "$T/log.d" "$T/mnt.d" --drop-behind 16 "$T/dsrc" || fail "mount --drop-behind 16"
cat "$DV" >/dev/null
# 16 MiB kept, plus up to the 1/8 that is dropped at a time
check "--drop-behind 16: nothing cached more than 18 MiB from the end" \
        wait_for 5 none_before $((DSZ - M16 - M16 / 8))
c=$(cached "$DV" $((DSZ - M16)) "$DSZ")
check "... most of the last 16 MiB still is ($c of 4096 pages)" test "$c" -ge 3686
check "... and the view reads the same again" cmp -s <("$TT" cat dsrc/d.pdt2.zst binary) "$DV"
# a new run from the start, shorter than what is kept, stays cached
dd if="$DV" of=/dev/null bs=1M count=4 status=none
c=$(cached "$DV" 0 4194304)
check "... then 4 MiB read from the start stay cached ($c of 1024 pages)" test "$c" -ge 921
umount_tm "$T/mnt.d"
mount_tm "$T/log.d2" "$T/mnt.d" "$T/dsrc" || fail "mount (default drop-behind)"
cat "$DV" >/dev/null
c=$(cached "$DV" 0 "$DSZ")
check "default --drop-behind: the whole view stays cached ($c of 5860 pages)" test "$c" -ge 5567
umount_tm "$T/mnt.d"
"$TRACEMOUNT" --drop-behind=-1 "$T/dsrc" "$T/mnt.d" >/dev/null 2>&1
check "--drop-behind=-1: exit 2" test $? -eq 2

# --- usage ---
"$TRACEMOUNT" >/dev/null 2>&1
check "no arguments: exit 2" test $? -eq 2
check "--version" "$TRACEMOUNT" --version
check "--help" "$TRACEMOUNT" --help >/dev/null
"$TRACEMOUNT" -f "$T/nonexistent" "$MNT" >/dev/null 2>&1
check "missing source: exit 1" test $? -eq 1
mkdir -p "$SRC/inner"
"$TRACEMOUNT" -f "$SRC" "$SRC/inner" >/dev/null 2>&1
check "mount point inside the source: refused" test $? -eq 1

finish
