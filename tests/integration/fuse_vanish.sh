#!/bin/bash
# A share that vanishes gives EIO, never an empty directory or "Not a
# directory" (issue 34, item 4; docs/network-fs.md, "When the share goes
# away"). sshfs over loopback with keep-alives (1 s x 3) from a private
# sshd, mounted twice: as tracemount's whole source (mnt1), and as a
# directory inside a local source (mnt2). Traces are looked at, a trace
# directory of each mount is held open, then every sshd process is
# stopped: each sshfs gives up after its keep-alives (a reconnection it
# may try gives up after ConnectTimeout=2), exits and unmounts itself. Then, within the stated time (keep-alives 3 s + tracemount's 1 s
# entry and attribute timeout + 6 s of slack for a loaded machine = 10 s):
#   - a lookup inside the trace directory held open (stat stats) is EIO;
#   - open and read of ascii through the path is EIO;
#   - reading the trace's directory is EIO; listing mnt1's root (the
#     share itself) is an error (EIO), not an empty listing;
#   - the daemon logged a line naming the path and why;
# and the daemon keeps running and unmounts cleanly.
# SKIPs loudly when sshd or sshfs cannot start or /dev/fuse is missing.
# usage: fuse_vanish.sh   (TRACEMOUNT and TRACETOOL in the environment)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/sshfs_lib.sh"
need_programs
need_fuse
command -v python3 >/dev/null 2>&1 || skip "python3 is needed for the probes"
setup_tmp
trap 'ssh_stop; cleanup' EXIT
cd "$T" || exit 1
TT=$TRACETOOL
SRV=$T/server
LIMIT=10
mkdir -p "$SRV" "$T/s1" "$T/s2/share"

ssh_start "$T/ssh" || skip "no sshd on loopback here: $SSH_WHY"
# keep-alives 1 s x 3; a new connection that sshfs may start while it gives
# up must not wait for the stopped server's banner forever either
ALIVE="-o ServerAliveInterval=1 -o ServerAliveCountMax=3 -o ConnectTimeout=2"
gen_din 51 200000 >a.din
"$TT" pack a.din "$SRV/a.pdt2.zst" || fail "pack"
# shellcheck disable=SC2086
sshfs_mount "$SRV" "$T/s1" $ALIVE && P1=$SSHFS_PID || skip "sshfs cannot mount: $(cat "$SSH_DIR/sshfs.log")"
# shellcheck disable=SC2086
sshfs_mount "$SRV" "$T/s2/share" $ALIVE && P2=$SSHFS_PID || skip "sshfs cannot mount twice"

mount_tm "$T/out1" "$T/mnt1" --log-file "$T/log1" "$T/s1" || { fail "mount 1"; finish; }
M1=$MNT_PID
mount_tm "$T/out2" "$T/mnt2" --log-file "$T/log2" "$T/s2" || { fail "mount 2"; finish; }
M2=$MNT_PID
D1=$T/mnt1/a.pdt2.zst
D2=$T/mnt2/share/a.pdt2.zst
check "share as the source: ascii byte-exact" cmp -s a.din "$D1/ascii"
check "share inside the source: ascii byte-exact" cmp -s a.din "$D2/ascii"

# probe.py LIMIT DIR...: holds each DIR (a trace directory) open, says
# "ready", waits for "go", then polls until every probe of every DIR fails
# or LIMIT s pass; prints one line per probe: "<name> errno N (NAME) after
# S s" or "<name> no error".
cat >probe.py <<'EOF'
import errno, os, sys, time
limit, dirs = float(sys.argv[1]), sys.argv[2:]
held = [os.open(d, os.O_RDONLY | os.O_DIRECTORY) for d in dirs]
open("ready", "w").write("ok")
while not os.path.exists("go"):
    time.sleep(0.02)
t0 = time.time()
def lookup(i):  # a lookup inside the directory held open
    os.stat("stats", dir_fd=held[i])
def read(i):    # open and read a view by its path
    fd = os.open(os.path.join(dirs[i], "ascii"), os.O_RDONLY)
    try:
        os.read(fd, 4096)
    finally:
        os.close(fd)
def listdir(i): # the trace's directory
    os.listdir(dirs[i])
def listroot(i): # the directory the trace is in
    os.listdir(os.path.dirname(dirs[i]))
probes = [(f.__name__ + str(i + 1), f, i) for i in range(len(dirs))
          for f in (lookup, read, listdir, listroot)]
result = {}
while len(result) < len(probes) and time.time() - t0 < limit:
    for name, f, i in probes:
        if name in result:
            continue
        try:
            f(i)
        except OSError as e:
            result[name] = "errno %d (%s) after %.2f s" % (
                e.errno, errno.errorcode.get(e.errno, "?"), time.time() - t0)
    time.sleep(0.1)
for name, f, i in probes:
    print(name, result.get(name, "no error"))
EOF
python3 probe.py "$LIMIT" "$D1" "$D2" >probe.out 2>&1 &
ppid=$!
wait_for 20 test -s ready || fail "probe did not start"
for p in $(sshd_sessions) $SSHD_PID; do kill -STOP "$p"; done
touch go
# a probe blocked in a request the share never answers (sshfs stuck in
# its own reconnect) is a failure, and the server is woken to free it
wait_for $((LIMIT + 30)) sh -c "! kill -0 $ppid 2>/dev/null" || fail "the probe was still blocked after $((LIMIT + 30)) s"
for p in $(sshd_sessions) $SSHD_PID; do kill -CONT "$p"; done
wait "$ppid"
sed 's/^/probe: /' probe.out
kill -0 "$P1" 2>/dev/null && echo "note: sshfs 1 still running" || echo "sshfs 1 gave up and exited"
kill -0 "$P2" 2>/dev/null && echo "note: sshfs 2 still running" || echo "sshfs 2 gave up and exited"
for n in 1 2; do
        check "mount $n: a lookup in the trace directory held open is EIO within $LIMIT s" \
                grep -q "^lookup$n errno 5 (EIO)" probe.out
        check "mount $n: open and read of ascii is EIO within $LIMIT s" \
                grep -q "^read$n errno 5 (EIO)" probe.out
        check "mount $n: listing the trace's directory is EIO within $LIMIT s" \
                grep -q "^listdir$n errno 5 (EIO)" probe.out
done
check "mount 1: listing the root (the vanished share itself) is EIO, not an empty listing" \
        grep -q "^listroot1 errno 5 (EIO)" probe.out
check "mount 1: the log says why" grep -q "s1.*: stat: " "$T/log1"
check "mount 2: the log says why" grep -q "share/a.pdt2.zst: stat: " "$T/log2"
sed 's/^/daemon log 1: /' "$T/log1" | tail -n 3
sed 's/^/daemon log 2: /' "$T/log2" | tail -n 3
check "daemon 1 still running" kill -0 "$M1"
check "daemon 2 still running" kill -0 "$M2"
MNT_PID=$M1 umount_tm "$T/mnt1"
MNT_PID=$M2 umount_tm "$T/mnt2"
finish
