#!/bin/bash
# The daemon's memory bounds (issue 33 item 5, issue 34 item 6), through
# live mounts:
# 1. --max-traces 3 over 12 archives of four formats: reading stats,
#    stats.json, schema and ascii of each in turn leaves at most 3 of the
#    archives open in the daemon (its /proc/PID/fd), every view byte for
#    byte what tracetool cat gives, and the same again on a second pass,
#    when each trace was closed and is opened again from its index file;
# 2. --trace-memory 0 bounds them by bytes: one stays open (the one in
#    use);
# 3. --direct-io --handle-memory 4: 40 handles of ascii and binary of a
#    zstd trace (whose frames are decoded whole, MiBs a handle) held open
#    and read in turns from 40 places: every read byte for byte against
#    tracetool cat (the handles parked to keep the budget resume from a
#    checkpoint);
# 4. --handle-memory 0 and --max-traces 0 are refused (exit 2).
# usage: fuse_membudget.sh   (TRACEMOUNT, TRACETOOL, TM_SOURCE_DIR in the environment)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
fuse_prologue
ex=${TM_SOURCE_DIR:-$here/../..}/examples
mkdir -p "$SRC" ref cache
names=
for f in sort.hatf.zst true.lackey.gz heapwork.mtf.zst sort.pdt2.zst; do
        for i in 1 2 3; do
                cp "$ex/$f" "$SRC/$i-$f"
                names="$names $i-$f"
        done
done
# the references: tracetool on copies of the same names (stats name the archive)
for n in $names; do
        cp "$SRC/$n" "ref/$n"
        for v in stats stats.json schema ascii; do
                "$TT" cat "ref/$n" "$v" >"ref/$n.$v" || fail "tracetool cat $n $v"
        done
done

# How many of the archives in SRC the daemon pid has open (not index files).
open_archives() {
        local n=0 l
        for l in /proc/"$1"/fd/*; do
                l=$(readlink "$l" 2>/dev/null) || continue
                case $l in "$SRC"/*.tmidx) ;; "$SRC"/*) n=$((n + 1)) ;; esac
        done
        echo "$n"
}

# Every view of every archive through MNT equals the reference; the most
# archives open at once, after each, into $most.
views_pass() {
        local pass=$1 bound=$2 n v
        most=0
        for n in $names; do
                for v in stats stats.json schema ascii; do
                        cmp -s "$MNT/$n/$v" "ref/$n.$v" || fail "pass $pass: $n/$v differs from tracetool cat"
                done
                o=$(open_archives "$MNT_PID")
                [ "$o" -gt "$most" ] && most=$o
        done
        [ "$most" -le "$bound" ]
}

echo "== 1. --max-traces 3"
mount_tm d1.log "$MNT" --cache-dir "$T/cache" --max-traces 3 "$SRC" || exit 1
check "pass 1: at most 3 of 12 archives open" views_pass 1 3
echo "   most open: $most"
check "pass 2 (each trace reopened from its index): at most 3 open" views_pass 2 3
check "the daemon logged no error" bash -c "! grep -qi error d1.log"
umount_tm "$MNT"

echo "== 2. --trace-memory 0"
mount_tm d2.log "$MNT" --cache-dir "$T/cache" --trace-memory 0 "$SRC" || exit 1
check "--trace-memory 0: one archive open at once" views_pass 3 1
echo "   most open: $most"
umount_tm "$MNT"

echo "== 3. --direct-io --handle-memory 4: 40 handles read in turns"
z=2-sort.pdt2.zst
"$TT" cat ref/$z binary >ref/binary || fail "tracetool cat binary"
mount_tm d3.log "$MNT" --cache-dir "$T/cache" --direct-io --handle-memory 4 "$SRC" || exit 1
check "40 handles, 5 rounds of reads from 40 places, byte for byte" python3 - "$MNT/$z" ref <<'EOF'
import os, sys
mnt, ref = sys.argv[1], sys.argv[2]
want = {v: open(os.path.join(ref, "2-sort.pdt2.zst." + v if v == "ascii" else v), "rb").read()
        for v in ("ascii", "binary")}
fds, pos = [], []
for i in range(40):
    v = ("ascii", "binary")[i % 2]
    fds.append((v, os.open(os.path.join(mnt, v), os.O_RDONLY)))
    pos.append(len(want[v]) // 40 * i)
bad = 0
for r in range(5):
    for i, (v, fd) in enumerate(fds):
        got = os.pread(fd, 65536, pos[i])
        if got != want[v][pos[i]:pos[i] + 65536]:
            bad += 1
            print("handle %d (%s) at %d: other bytes" % (i, v, pos[i]), file=sys.stderr)
        pos[i] = (pos[i] + len(got)) % len(want[v])
for _, fd in fds:
    os.close(fd)
sys.exit(1 if bad else 0)
EOF
umount_tm "$MNT"

echo "== 4. zero bounds refused"
for o in "--handle-memory 0" "--max-traces 0"; do
        mkdir -p "$T/mnt0"
        # shellcheck disable=SC2086
        "$TRACEMOUNT" -f $o "$SRC" "$T/mnt0" >d4.log 2>&1
        rc=$?
        check "$o: exit 2 ($rc)" [ "$rc" -eq 2 ]
        check "$o: says why" grep -q "at least 1" d4.log
done
finish
