#!/bin/bash
# tracemount over a network filesystem: sshfs over loopback, from a private
# sshd this test starts on a free port with keys made on the fly (this
# machine's kernel has no NFS). Archives on a writable share and on a
# read-only one (sshfs -o ro), mounted under SRC beside a local archive:
# - every view of the archives on the writable share, the main views on the
#   read-only one, whole and at a random offset, equal `tracetool cat` of
#   the server's own file (read without sshfs);
# - the index goes beside the archive on the writable share and to
#   --cache-dir for the read-only one, and is reused (not rebuilt) after
#   both sshfs and tracemount are mounted again, although sshfs numbers
#   inodes afresh on each mount;
# - an archive replaced on the server (another trace renamed over it) shows
#   its new content through the mount, after sshfs's attribute cache;
# - a share that vanishes under a reader gives EIO in bounded time, not a
#   hang or a crash: sshfs killed (-9), and the server frozen (SIGSTOP; the
#   client gives up after ServerAliveInterval x ServerAliveCountMax); the
#   daemon keeps serving the local archive and the other share, serves the
#   share again once it is mounted again, and unmounts cleanly.
# SKIPs loudly when sshd or sshfs cannot start.
# usage: fuse_sshfs.sh   (TRACEMOUNT and TRACETOOL in the environment)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/sshfs_lib.sh"
need_programs
need_fuse
command -v python3 >/dev/null 2>&1 || skip "python3 is needed for the readers"
setup_tmp
trap 'ssh_stop; cleanup' EXIT
cd "$T" || exit 1
TT=$TRACETOOL
SRC=$T/src
MNT=$T/mnt
SRV=$T/server
mkdir -p "$SRC" "$SRV/rw" "$SRV/ro" "$T/cache" ref

ssh_start "$T/ssh" || skip "no sshd on loopback here: $SSH_WHY"
echo "sshd (pid $SSHD_PID) on 127.0.0.1:$SSH_PORT"
# The client gives up on a silent server after 1 s x 3 (the default is to
# wait forever, like an NFS hard mount).
ALIVE="-o ServerAliveInterval=1 -o ServerAliveCountMax=3"
mount_shares() {
        # shellcheck disable=SC2086
        sshfs_mount "$SRV/rw" "$SRC/rw" $ALIVE && RW_PID=$SSHFS_PID &&
                sshfs_mount "$SRV/ro" "$SRC/ro" -o ro $ALIVE && RO_PID=$SSHFS_PID
}
mount_shares || skip "sshfs cannot mount from the private sshd: $(cat "$SSH_DIR/sshfs.log")"

# --- the archives: address and record traces, every container ---
gen_din 31 60000 >a.din
gen_din 32 30000 64 >w.din
gen_din 33 500000 >big.din
gen_din 34 20000 >local.din
gen_din 35 90000 >new.din
# a glibc mtrace log of a real program (HATF and Meta-TF input)
cp "$here/../data/heap/heapprog.mtrace" h.mtrace || fail "tests/data/heap/heapprog.mtrace"
"$TT" pack --frame-size 65536 a.din "$SRV/rw/a.pdt2.zst" || fail "pack a.pdt2.zst"
"$TT" pack w.din "$SRV/rw/w.pdt.gz" 2>/dev/null || fail "pack w.pdt.gz"
"$TT" pack h.mtrace "$SRV/rw/h.hatf.zst" 2>/dev/null || fail "pack h.hatf.zst"
"$TT" pack big.din "$SRV/rw/big.pdt2.zst" || fail "pack big.pdt2.zst"
"$TT" pack a.din "$SRV/ro/ra.din.gz" || fail "pack ra.din.gz"
"$TT" pack h.mtrace "$SRV/ro/rh.mtf.zst" 2>/dev/null || fail "pack rh.mtf.zst"
# rbig: big enough (1.2 MB) that the daemon cannot hold it all in its
# 256 KiB reads, so the frozen-server case below must go to the server
gen_din 36 2500000 >rbig.din
"$TT" pack rbig.din "$SRV/ro/rbig.pdt.gz" || fail "pack rbig.pdt.gz"
"$TT" pack local.din "$SRC/local.pdt2.zst" || fail "pack local.pdt2.zst"
"$TT" pack new.din new.pdt2.zst || fail "pack new.pdt2.zst"
RW="a.pdt2.zst w.pdt.gz h.hatf.zst big.pdt2.zst"
RO="ra.din.gz rh.mtf.zst rbig.pdt.gz"
# references: tracetool on the server's own files, without sshfs or FUSE
for f in $RW; do
        "$TT" cat --no-index-beside --cache-dir "$T/refcache" "$SRV/rw/$f" ascii >"ref/$f.ascii"
done
for f in $RO; do
        "$TT" cat --no-index-beside --cache-dir "$T/refcache" "$SRV/ro/$f" ascii >"ref/$f.ascii"
done
check "ascii of a.pdt2.zst == generated" cmp -s a.din ref/a.pdt2.zst.ascii
check "share rw shows the server's files" cmp -s "$SRV/rw/a.pdt2.zst" "$SRC/rw/a.pdt2.zst"
check "share ro refuses writes" sh -c "! touch '$SRC/ro/x' 2>/dev/null"

echo "[${SECONDS} s] archives made, mounting"
mount_tm "$T/log" "$MNT" --cache-dir "$T/cache" "$SRC" || { fail "mount"; finish; }

# views: size and bytes, and a read at a random offset
RANDOM=15
every_view() { # DIR VIEWS ARCHIVE...: check VIEWS ("all": every view) of the archives in share DIR
        local d=$1 views=$2 list f v r k c size bad=0 n=0
        shift 2
        for f in "$@"; do
                list=$views
                [ "$views" = all ] && list=$("$TT" views "$SRV/$d/$f")
                for v in $list; do
                        r=ref/$(echo "$d/$f/$v" | tr / _)
                        "$TT" cat --no-index-beside --cache-dir "$T/refcache" "$SRV/$d/$f" "$v" >"$r"
                        size=$(stat -c %s "$r")
                        [ "$(stat -c %s "$MNT/$d/$f/$v")" -eq "$size" ] || { bad=$((bad + 1)); echo "$d/$f/$v: size differs" >&2; }
                        cmp -s "$r" "$MNT/$d/$f/$v" || { bad=$((bad + 1)); echo "$d/$f/$v: bytes differ" >&2; }
                        n=$((n + 1))
                        [ "$size" -gt 0 ] || continue
                        k=$(( (RANDOM * 32768 + RANDOM) % size ))
                        c=$(( RANDOM % 5000 + 1 ))
                        cmp -s <(dd if="$MNT/$d/$f/$v" iflag=skip_bytes,count_bytes bs=65536 skip=$k count=$c 2>/dev/null) \
                                <(dd if="$r" iflag=skip_bytes,count_bytes bs=65536 skip=$k count=$c 2>/dev/null) ||
                                { bad=$((bad + 1)); echo "$d/$f/$v: dd skip=$k count=$c differs" >&2; }
                done
        done
        check "share $d: $n views of $# archives byte-exact, whole and at a random offset" test "$bad" -eq 0
}
# every view of the small archives on the writable share, the main ones on
# the read-only share; ascii of the big ones (for the readers below, whose
# reads must outrun every cache)
every_view rw all a.pdt2.zst w.pdt.gz h.hatf.zst
every_view ro "ascii binary raw stats" ra.din.gz rh.mtf.zst
check "rw: big.pdt2.zst/ascii byte-exact" cmp -s big.din "$MNT/rw/big.pdt2.zst/ascii"
check "ro: rbig.pdt.gz/ascii byte-exact" cmp -s rbig.din "$MNT/ro/rbig.pdt.gz/ascii"
check "local archive beside the shares byte-exact" cmp -s local.din "$MNT/local.pdt2.zst/ascii"

# --- where the indexes went ---
echo "[${SECONDS} s] every view checked"

ix_state() { # the identity of every index file: server side and cache
        (cd "$SRV" && stat -c '%n %i %s %y' rw/.*.tmidx ro/.*.tmidx 2>/dev/null)
        (cd "$T/cache" && stat -c '%n %i %s %y' ./*.tmidx 2>/dev/null)
}
for f in $RW; do
        check "rw: index of $f beside it on the share" test -s "$SRV/rw/.$f.tmidx"
done
for f in $RO; do
        check "ro: no index of $f beside it" test ! -e "$SRV/ro/.$f.tmidx"
        check "ro: index of $f in --cache-dir" test "$(ls "$T/cache" | grep -c -- "-$f\.tmidx\$")" -eq 1
done
check "no rw index in --cache-dir" test "$(ls "$T/cache" | wc -l)" -eq 3
check "index files are hidden in the mount" test -z "$(ls -a "$MNT/rw" | grep tmidx)"
ix1=$(ix_state)
ino1=$(for f in $RW; do stat -c '%n %i' "$SRC/rw/$f"; done | sort)

# --- mounted again: the indexes are loaded, not built again ---
echo "[${SECONDS} s] mounting again"
umount_tm "$MNT"
ssh_stop_shares() {
        fusermount3 -u "$SRC/rw" && fusermount3 -u "$SRC/ro" || fail "unmount the shares"
        wait "$RW_PID" "$RO_PID"
}
ssh_stop_shares
mount_shares || { fail "sshfs mount again"; finish; }
# look the archives up in another order, so that sshfs numbers them otherwise
ino2=$(for f in $(echo $RW | tr ' ' '\n' | tac); do stat -c '%n %i' "$SRC/rw/$f"; done | sort)
check "sshfs numbered the archives otherwise (the case the index must survive)" test "$ino1" != "$ino2"
mount_tm "$T/log" "$MNT" --cache-dir "$T/cache" "$SRC" || { fail "mount again"; finish; }
bad=0
for f in $RW; do cmp -s "ref/$f.ascii" "$MNT/rw/$f/ascii" || bad=$((bad + 1)); done
for f in $RO; do cmp -s "ref/$f.ascii" "$MNT/ro/$f/ascii" || bad=$((bad + 1)); done
check "after mounting again: every ascii byte-exact" test "$bad" -eq 0
ix2=$(ix_state)
check "after mounting again: every index loaded, none rebuilt (same inode and mtime)" test "$ix1" = "$ix2"
[ "$ix1" = "$ix2" ] || diff <(echo "$ix1") <(echo "$ix2") >&2

# --- an archive replaced on the server ---
echo "[${SECONDS} s] replacing an archive"

cp new.pdt2.zst "$SRV/rw/.new.tmp" && mv "$SRV/rw/.new.tmp" "$SRV/rw/a.pdt2.zst"
s=$(date +%s%N)
wait_for 40 cmp -s new.din "$MNT/rw/a.pdt2.zst/ascii"
check "replaced archive: the view shows the new trace" cmp -s new.din "$MNT/rw/a.pdt2.zst/ascii"
echo "replaced archive seen through sshfs + tracemount after $(( ($(date +%s%N) - s) / 1000000 )) ms"
"$TT" cat --no-index-beside --cache-dir "$T/refcache" "$SRV/rw/a.pdt2.zst" binary >new.binary
check "replaced archive: binary is the new trace's" cmp -s new.binary "$MNT/rw/a.pdt2.zst/binary"
# bytes 16-23 of an index file: the size of the archive it was made for
check "replaced archive: the index beside it was made again, for it" \
        test "$(od -An -t u8 -j 16 -N 8 "$SRV/rw/.a.pdt2.zst.tmidx" | tr -d ' ')" = "$(stat -c %s new.pdt2.zst)"

# --- a share that vanishes under a reader ---
echo "[${SECONDS} s] the shares vanish"

# reader VIEW REF OUT: reads 64 KiB at 0, says "ready" in OUT.ready, waits
# for OUT.go, then reads 64 KiB every 256 KiB from the middle on; writes
# "errno N after S s (K good reads)" or "no error" to OUT.
cat >reader.py <<'EOF'
import errno, os, sys, time
view, ref, out = sys.argv[1:4]
want = open(ref, "rb").read()
fd = os.open(view, os.O_RDONLY)
# no kernel readahead: the daemon sees one read here, not a sequential
# reader whose view it would decode ahead (and then serve without the share)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
ok = os.pread(fd, 65536, 0) == want[:65536]
open(out + ".ready", "w").write("ok" if ok else "bad first read")
while not os.path.exists(out + ".go"):
    time.sleep(0.02)
t0, good = time.time(), 0
msg = "no error"
for off in range(len(want) // 2, len(want), 262144):
    try:
        b = os.pread(fd, 65536, off)
    except OSError as e:
        msg = "errno %d (%s) after %.2f s (%d good reads)" % (e.errno, errno.errorcode.get(e.errno, "?"), time.time() - t0, good)
        break
    if b != want[off:off + 65536]:
        msg = "wrong bytes at %d" % off
        break
    good += 1
open(out, "w").write(msg)
EOF
# drop_cached FILE: forget the pages of FILE the kernel holds, so that reads
# must go to the server
drop_cached() {
        python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$1"
}
vanish() { # NAME SHARE ARCHIVE ACTION...: a reader of ARCHIVE's ascii while ACTION runs
        local name=$1 share=$2 f=$3 rpid s
        shift 3
        rm -f "$name" "$name.ready" "$name.go"
        python3 reader.py "$MNT/$share/$f/ascii" "ref/$f.ascii" "$name" &
        rpid=$!
        wait_for 20 test -s "$name.ready"
        echo "[${SECONDS} s] $name: reader ready"
        check "$name: reader started, first read right" test "$(cat "$name.ready" 2>/dev/null)" = ok
        drop_cached "$SRC/$share/$f"
        drop_cached "$MNT/$share/$f/ascii"
        "$@"
        s=$(date +%s)
        touch "$name.go"
        # a hang would keep the reader: give it 30 s, then kill it
        wait_for 30 sh -c "! kill -0 $rpid 2>/dev/null"
        if kill -0 "$rpid" 2>/dev/null; then
                fail "$name: reader still blocked after 30 s"
                kill -9 "$rpid"
        fi
        wait "$rpid"
        echo "[${SECONDS} s] $name: $(cat "$name" 2>/dev/null), $(($(date +%s) - s)) s after the share went"
        check "$name: the reader got EIO" grep -q '^errno 5 (EIO)' "$name"
        check "$name: daemon still running" kill -0 "$MNT_PID"
        check "$name: the local archive is still served" cmp -s local.din "$MNT/local.pdt2.zst/ascii"
        check "$name: the mount root still lists" sh -c "ls '$MNT' | grep -qx local.pdt2.zst"
}
# 1. the client dies: sshfs killed
kill_rw() { kill -9 "$RW_PID"; wait "$RW_PID" 2>/dev/null; }
vanish sshfs-killed rw big.pdt2.zst kill_rw
check "sshfs-killed: the read-only share is still served" cmp -s ref/ra.din.gz.ascii "$MNT/ro/ra.din.gz/ascii"
# a lookup on the dead share (past the kernel's 1 s entry and attribute
# cache) fails with EIO, and the log says which path and why: the share's
# directory itself, or the path below it, as the kernel looks them up
sleep 1.2
check "sshfs-killed: stat of a view on the dead share fails" sh -c "! stat '$MNT/rw/w.pdt.gz/raw' >/dev/null 2>&1"
check "sshfs-killed: the log names the path whose stat failed" \
        grep -Eq "/src/rw(/w\.pdt\.gz(/raw)?)?: stat: " "$T/log"
# the share comes back (mounted again): served again, tracemount untouched
fusermount3 -u "$SRC/rw" 2>/dev/null || fusermount3 -uz "$SRC/rw"
# shellcheck disable=SC2086
sshfs_mount "$SRV/rw" "$SRC/rw" $ALIVE && RW_PID=$SSHFS_PID || fail "sshfs mount again after the kill"
check "share back: big.pdt2.zst/ascii byte-exact again, same daemon" \
        wait_for 10 cmp -s ref/big.pdt2.zst.ascii "$MNT/rw/big.pdt2.zst/ascii"
# 2. the server goes silent: every sshd process stopped
freeze() {
        local p
        for p in $(sshd_sessions) $SSHD_PID; do kill -STOP "$p"; done
}
vanish server-frozen ro rbig.pdt.gz freeze
for p in $(sshd_sessions) $SSHD_PID; do kill -CONT "$p"; done
grep -q "big.pdt2.zst" "$T/log" && ok "the daemon's log names the archive that failed" ||
        fail "no log line names big.pdt2.zst"
sed 's/^/daemon log: /' "$T/log" | head -n 6

echo "[${SECONDS} s] unmounting"
umount_tm "$MNT"
finish
