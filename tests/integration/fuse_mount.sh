#!/bin/bash
# The mount conventions: `mount -t fuse.tracemount SRC MNT` and an fstab
# line (util-linux `mount -T FILE`, /etc/fstab untouched), both through
# mount.fuse3 as on a real system, with tracemount's options spelled
# -o name=value (cache_dir=, no_index_beside, direct_io, read_ahead=,
# drop_behind=, log_file=). Each mount serves every view byte-exact
# (against `tracetool cat`), shows `ro` in /proc/mounts although mount(8)
# passes `rw` (and -o rw is given), the options take effect (indexes in
# cache_dir, none beside; mmap refused under direct_io; the log file gets
# the EIO reason), and every write-type operation fails with "Read-only
# file system", also after root remounts it rw. `umount` ends the daemon.
#
# mount(8) clears PATH before running mount.fuse3, whose shell then finds
# `tracemount` in the default PATH (/usr/local/sbin first). The test runs
# in a private mount namespace where /usr/local/sbin is a tmpfs holding a
# link to the built daemon, so the system's directories stay untouched.
# usage: fuse_mount.sh   (TRACEMOUNT and TRACETOOL in the environment; root)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_programs
need_fuse
[ "$(id -u)" -eq 0 ] || skip "mount -t and fstab mounts need root (this is $(id -un))"
[ -x /sbin/mount.fuse3 ] || [ -x /usr/sbin/mount.fuse3 ] || skip "mount.fuse3 (fuse3) not installed"
command -v unshare >/dev/null || skip "unshare (util-linux) not found"

if [ -z "${TM_MOUNT_NS:-}" ]; then
        TM_MOUNT_NS=1 exec unshare -m --propagation private "$0" "$@"
        skip "cannot enter a private mount namespace (unshare -m)"
fi

setup_tmp
cd "$T" || exit 1
TT=$TRACETOOL
SRC=$T/src
mkdir -p "$SRC/sub" ref

mount -t tmpfs -o mode=0755 tm-test-sbin /usr/local/sbin || skip "cannot mount a tmpfs on /usr/local/sbin in the namespace"
ln -s "$(realpath "$TRACEMOUNT")" /usr/local/sbin/tracemount

gen_din 41 150000 >a.din
gen_lackey 42 20000 >l.lackey
"$TT" pack --frame-size 65536 a.din "$SRC/a.pdt2.zst" || fail "pack a.pdt2.zst"
"$TT" pack a.din "$SRC/sub/a.pdt.gz" || fail "pack a.pdt.gz"
"$TT" pack l.lackey "$SRC/l.pdt2.zst" || fail "pack l.pdt2.zst"
"$TT" pack a.din a.pdt.gz || fail "pack cut"
head -c $(($(stat -c %s a.pdt.gz) / 2)) a.pdt.gz >"$SRC/cut.pdt.gz"
echo "a note" >"$SRC/notes.txt"
mkdir "$SRC/emptydir"
traces="a.pdt2.zst sub/a.pdt.gz l.pdt2.zst"
for tr in $traces; do
        for v in $("$TT" views "$SRC/$tr"); do
                "$TT" cat --no-index-beside --cache-dir "$T/ttcache" "$SRC/$tr" "$v" >"ref/$(echo "$tr/$v" | tr / _)" || fail "tracetool cat $tr $v"
        done
done

# the options of the mount at $1 in /proc/mounts
mount_opts() { awk -v m="$1" '$2 == m { o = $4 } END { print o }' /proc/mounts; }
# the pid of the daemon serving $1 (its fsname is the source)
daemon_pid() { pgrep -f "^[^ ]*tracemount $SRC $1( |\$)" | head -n 1; }

# serves NAME MNT: every view of every trace equals tracetool cat.
serves() {
        local name=$1 mnt=$2 tr v bad=0
        for tr in $traces; do
                for v in $("$TT" views "$SRC/$tr"); do
                        cmp -s "ref/$(echo "$tr/$v" | tr / _)" "$mnt/$tr/$v" || {
                                fail "$name: $tr/$v differs from tracetool cat"
                                bad=1
                        }
                done
        done
        [ $bad -eq 0 ] && ok "$name: every view of $traces byte-exact"
        check "$name: notes.txt passes through" cmp -s "$SRC/notes.txt" "$mnt/notes.txt"
}

# erofs WHAT command...: fails, saying "Read-only file system".
erofs() {
        local what=$1
        shift
        if "$@" >/dev/null 2>err; then
                fail "$what succeeded"
        elif grep -q "Read-only file system" err; then
                ok "$what: Read-only file system"
        else
                fail "$what: not EROFS: $(cat err)"
        fi
}

# writes NAME MNT: every write-type operation fails with EROFS.
writes() {
        local n=$1 m=$2 setx
        erofs "$n: touch a new file" touch "$m/new"
        erofs "$n: touch a file" touch "$m/notes.txt"
        erofs "$n: touch a view" touch "$m/a.pdt2.zst/ascii"
        erofs "$n: > a file" sh -c "echo x >'$m/notes.txt'"
        erofs "$n: >> a view" sh -c "echo x >>'$m/a.pdt2.zst/ascii'"
        erofs "$n: > a new file" sh -c "echo x >'$m/new'"
        erofs "$n: rm a file" rm -f "$m/notes.txt"
        erofs "$n: rm a view" rm -f "$m/a.pdt2.zst/stats"
        erofs "$n: rm -r a trace" rm -rf "$m/l.pdt2.zst"
        erofs "$n: mkdir" mkdir "$m/newdir"
        erofs "$n: rmdir" rmdir "$m/emptydir"
        erofs "$n: mv a file" mv "$m/notes.txt" "$m/moved.txt"
        erofs "$n: mv a trace" mv "$m/a.pdt2.zst" "$m/sub/"
        erofs "$n: ln" ln "$m/notes.txt" "$m/hardlink"
        erofs "$n: ln -s" ln -s notes.txt "$m/symlink"
        erofs "$n: mkfifo" mkfifo "$m/fifo"
        erofs "$n: chmod" chmod 600 "$m/notes.txt"
        erofs "$n: chmod a view" chmod 600 "$m/a.pdt2.zst/ascii"
        erofs "$n: chown" chown 1:1 "$m/notes.txt"
        erofs "$n: truncate" truncate -s 0 "$m/notes.txt"
        erofs "$n: truncate a view" truncate -s 0 "$m/a.pdt2.zst/ascii"
        erofs "$n: touch -d (utimes)" touch -c -d 2001-01-01 "$m/notes.txt"
        if command -v setfattr >/dev/null; then
                erofs "$n: setfattr" setfattr -n user.tm -v 1 "$m/notes.txt"
                erofs "$n: setfattr -x" setfattr -x user.tm "$m/notes.txt"
        else # the same system calls
                erofs "$n: setxattr" python3 -c "import os, sys; os.setxattr(sys.argv[1], 'user.tm', b'1')" "$m/notes.txt"
                erofs "$n: removexattr" python3 -c "import os, sys; os.removexattr(sys.argv[1], 'user.tm')" "$m/notes.txt"
        fi
        check "$n: the source is unchanged" test "$(ls "$SRC" | tr '\n' ' ')" = "a.pdt2.zst cut.pdt.gz emptydir l.pdt2.zst notes.txt sub "
        check "$n: notes.txt unchanged" test "$(cat "$SRC/notes.txt")" = "a note"
}

# unmounts NAME MNT: umount(8) ends the mount and its daemon.
unmounts() {
        local pid
        pid=$(daemon_pid "$2")
        umount "$2" || fail "$1: umount"
        check "$1: no longer mounted" sh -c "! grep -qs ' $2 fuse' /proc/mounts"
        [ -n "$pid" ] && check "$1: the daemon has exited" wait_for 10 sh -c "! kill -0 $pid 2>/dev/null"
}

# --- mount -t fuse.tracemount, -o spellings, -o rw ---
M1=$T/mnt1
mkdir -p "$M1" "$T/cache1"
mount -t fuse.tracemount -o rw,cache_dir="$T/cache1",no_index_beside,read_ahead=256,drop_behind=64 \
        "$SRC" "$M1" 2>err || { fail "mount -t fuse.tracemount: $(cat err)"; finish; }
o=$(mount_opts "$M1")
echo "  /proc/mounts: $o"
check "mount -t: ro in /proc/mounts although -o rw" test "${o%%,*}" = ro
check "mount -t: nosuid,nodev" sh -c "echo '$o' | grep -q nosuid && echo '$o' | grep -q nodev"
check "mount -t: type fuse.tracemount" grep -q " $M1 fuse.tracemount " /proc/mounts
pid=$(daemon_pid "$M1")
check "mount -t: the daemon is the built tracemount" test "$(readlink "/proc/$pid/exe")" = "$(realpath "$TRACEMOUNT")"
serves "mount -t" "$M1"
check "mount -t: cache_dir= holds the indexes" test -n "$(find "$T/cache1" -type f | head -n 1)"
check "mount -t: no index beside the archives" test -z "$(find "$SRC" -name '.*tmidx*')"
check "mount -t: mmap of a view works (page cache)" python3 -c "import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY); m = mmap.mmap(fd, 4096, prot=mmap.PROT_READ)
sys.exit(m[:4096] != open(sys.argv[2], 'rb').read(4096))" "$M1/a.pdt2.zst/ascii" ref/a.pdt2.zst_ascii
writes "mount -t" "$M1"

# Root may remount it rw: the daemon itself still answers EROFS.
if mount -i -o remount,rw "$M1" 2>/dev/null && [ "$(mount_opts "$M1" | cut -d, -f1)" = rw ]; then
        writes "remounted rw" "$M1"
        serves "remounted rw" "$M1"
else
        echo "SKIP: this kernel does not remount a FUSE mount rw: the daemon's own EROFS untested"
fi
unmounts "mount -t" "$M1"

# --- an fstab line (mount -T FILE MNT, as mount -a and systemd do) ---
M2=$T/mnt2
mkdir -p "$M2" "$T/cache2"
cat >"$T/fstab" <<EOF
# a test fstab
$SRC $M2 fuse.tracemount noauto,nofail,_netdev,x-test=1,cache_dir=$T/cache2,no_index_beside,direct_io,log_file=$T/fstab.log,allow_other 0 0
EOF
mount -T "$T/fstab" "$M2" 2>err || { fail "fstab mount: $(cat err)"; finish; }
o=$(mount_opts "$M2")
echo "  /proc/mounts: $o"
check "fstab: ro in /proc/mounts" test "${o%%,*}" = ro
check "fstab: allow_other taken" sh -c "echo '$o' | grep -q allow_other"
serves "fstab" "$M2"
check "fstab: cache_dir= holds the indexes" test -n "$(find "$T/cache2" -type f | head -n 1)"
check "fstab: direct_io: mmap of a view is refused" python3 -c "import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
try:
    mmap.mmap(fd, 4096, prot=mmap.PROT_READ)
except OSError:
    sys.exit(0)
sys.exit(1)" "$M2/a.pdt2.zst/ascii"
check "fstab: a truncated archive's ascii fails" sh -c "! cat '$M2/cut.pdt.gz/ascii' >/dev/null 2>cat.err"
check "fstab: ... with EIO" grep -q "Input/output error" cat.err
check "fstab: log_file= gets the reason" wait_for 5 grep -q "cut.pdt.gz.*offset" "$T/fstab.log"
writes "fstab" "$M2"
unmounts "fstab" "$M2"

finish
