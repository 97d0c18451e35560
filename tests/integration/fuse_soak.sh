#!/bin/bash
# Concurrent readers soak: archives of both families (din in zstd, PDATS in
# gzip, PDATS II in zstd frames, HATF in zstd, Meta-TF in zstd) are mounted
# twice, through the page cache and with --direct-io; N reader processes
# (TM_SOAK_READERS, default 4) read for TM_SOAK_SECONDS (default 45) at
# random offsets and lengths (1 byte to 1 MiB, some past the end, some
# sequential runs of 64-128 KiB reads that start the daemon's readahead)
# over every view of every archive, on handles kept open, reopened and
# dropped from the page cache at random, and compare each read with the
# same range of `tracetool cat` of that view. Prints readers x seconds,
# reads, bytes, mismatches and errors; fails on any mismatch or error.
# usage: fuse_soak.sh   (TRACEMOUNT and TRACETOOL in the environment)
here=$(dirname "$0")
. "$here/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 is needed for the readers"
fuse_prologue
READERS=${TM_SOAK_READERS:-4}
SECONDS_=${TM_SOAK_SECONDS:-45}
mkdir -p "$SRC" ref

gen_din 51 300000 >a.din
gen_din 52 200000 64 misc >w.din
gen_lackey 53 100000 >l.lackey
# a glibc mtrace log of a program's allocations (HATF and Meta-TF input)
awk 'BEGIN { srand(54); print "= Start"
        for (i = 0; i < 120000; i++) {
                a = 94000000000000 + 32 * int(rand() * 20000); r = rand()
                if (r < 0.5) printf "@ ./soak:[0x%x] + 0x%x 0x%x\n", 4096 + i % 113, a, 1 + int(rand() * 4000)
                else if (r < 0.9) printf "@ ./soak:[0x%x] - 0x%x\n", 4096 + i % 71, a
                else printf "@ ./soak:[0x%x] < 0x%x\n@ ./soak:[0x%x] > 0x%x 0x%x\n", 8192 + i % 7, a, 8192 + i % 7, a + 32 * int(rand() * 9), 1 + int(rand() * 9000)
        }
        print "= End" }' >h.mtrace
"$TT" pack a.din "$SRC/a.din.zst" || fail "pack a.din.zst"
"$TT" pack w.din "$SRC/w.pdt.gz" 2>/dev/null || fail "pack w.pdt.gz"
"$TT" pack --frame-size 65536 l.lackey "$SRC/l.pdt2.zst" || fail "pack l.pdt2.zst"
"$TT" pack h.mtrace "$SRC/h.hatf.zst" 2>/dev/null || fail "pack h.hatf.zst"
"$TT" pack h.mtrace "$SRC/h.mtf.zst" 2>/dev/null || fail "pack h.mtf.zst"
ARCHIVES="a.din.zst w.pdt.gz l.pdt2.zst h.hatf.zst h.mtf.zst"
# the index first, so that every view (a heap trace's thread streams too)
# is listed; references with tracetool, not through the mount
: >views.txt
for f in $ARCHIVES; do
        "$TT" index "$SRC/$f" >/dev/null 2>&1 || fail "index $f"
        for v in $("$TT" views "$SRC/$f"); do
                [ "$v" = errors ] && continue # the daemon's own log, not the trace
                r=ref/$(echo "$f/$v" | tr / _)
                "$TT" cat "$SRC/$f" "$v" >"$r" || fail "tracetool cat $f $v"
                echo "$f/$v $r" >>views.txt
        done
done
check "ascii of a.din.zst == generated" cmp -s a.din ref/a.din.zst_ascii

mount_tm "$T/log" "$T/mnt" "$SRC" || { fail "mount"; finish; }
CACHED_PID=$MNT_PID
mount_tm "$T/log.direct" "$T/mnt-direct" --direct-io "$SRC" || { fail "mount --direct-io"; finish; }
bad=0
while read -r v r; do
        cmp -s "$r" "$T/mnt/$v" || { bad=$((bad + 1)); echo "$v differs" >&2; }
done <views.txt
check "$(wc -l <views.txt) views of $(echo $ARCHIVES | wc -w) archives read whole == tracetool cat" test "$bad" -eq 0

cat >reader.py <<'EOF'
import errno, mmap, os, random, sys, time
seed, seconds, out = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
mounts, views = sys.argv[4].split(","), []
for line in open(sys.argv[5]):
    v, r = line.split()
    with open(r, "rb") as f:
        ref = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ) if os.fstat(f.fileno()).st_size else b""
    views.append((v, ref))
rng = random.Random(seed)
handles = {}
reads = nbytes = mismatches = errors = 0
notes = []

def handle(mnt, v):
    key = (mnt, v)
    if key not in handles or rng.random() < 0.02:
        if key in handles:
            os.close(handles.pop(key))
        handles[key] = os.open(mnt + "/" + v, os.O_RDONLY)
    return handles[key]

def one(fd, ref, off, n, what):
    global reads, nbytes, mismatches, errors
    try:
        got = os.pread(fd, n, off)
    except OSError as e:
        errors += 1
        notes.append("%s: pread(%d, %d): %s" % (what, off, n, errno.errorcode.get(e.errno, e.errno)))
        return False
    reads += 1
    nbytes += len(got)
    if got != ref[off:off + n]:
        mismatches += 1
        notes.append("%s: pread(%d, %d): %d bytes, differ from tracetool cat" % (what, off, n, len(got)))
        return False
    return True

end = time.time() + seconds
while time.time() < end:
    mnt = rng.choice(mounts)
    v, ref = rng.choice(views)
    size = len(ref)
    try:
        fd = handle(mnt, v)
    except OSError as e:
        errors += 1
        notes.append("open %s/%s: %s" % (mnt, v, errno.errorcode.get(e.errno, e.errno)))
        continue
    what = mnt.rsplit("/", 1)[1] + "/" + v
    r = rng.random()
    if r < 0.15 and size:
        # a sequential run from a random point, as cat or grep reads
        off = rng.randrange(size)
        for _ in range(rng.randrange(4, 48)):
            n = rng.choice((65536, 131072))
            if not one(fd, ref, off, n, what) or off >= size:
                break
            off += n
        continue
    if r < 0.20:
        off = size + rng.randrange(3) * rng.randrange(1, 100000)  # at or past the end
    elif r < 0.30:
        off = max(0, size - rng.randrange(1, 5000))  # near the end
    else:
        off = rng.randrange(size + 1)
    n = min(1 << 20, int(2 ** rng.uniform(0, 20)))
    one(fd, ref, off, n, what)
    if rng.random() < 0.01 and "direct" not in mnt:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)  # the next reads go to the daemon
with open(out, "w") as f:
    f.write("%d %d %d %d\n" % (reads, nbytes, mismatches, errors))
    for n in notes[:20]:
        f.write(n + "\n")
EOF
echo "soak: $READERS readers x $SECONDS_ s over $(wc -l <views.txt) views, two mounts"
pids=
for i in $(seq "$READERS"); do
        python3 reader.py "$((1000 + i))" "$SECONDS_" "result.$i" "$T/mnt,$T/mnt-direct" views.txt &
        pids="$pids $!"
done
# a reader that hangs is a failure too: give them 60 s more than asked
all_done() {
        local p
        for p in $pids; do kill -0 "$p" 2>/dev/null && return 1; done
        return 0
}
wait_for $((SECONDS_ + 60)) all_done
for p in $pids; do
        kill -0 "$p" 2>/dev/null && { fail "reader $p still running $((SECONDS_ + 60)) s after its end"; kill -9 "$p"; }
done
wait $pids
reads=0 bytes=0 mism=0 errs=0
for i in $(seq "$READERS"); do
        if [ ! -s "result.$i" ]; then
                fail "reader $i wrote no result"
                continue
        fi
        read -r a b c d <"result.$i"
        reads=$((reads + a)) bytes=$((bytes + b)) mism=$((mism + c)) errs=$((errs + d))
        sed -n '2,$p' "result.$i" | sed "s/^/reader $i: /" >&2
done
echo "soak: $READERS readers x $SECONDS_ s: $reads reads, $((bytes / 1048576)) MiB, $mism mismatches, $errs errors"
check "soak: reads happened" test "$reads" -gt 0
check "soak: 0 mismatches" test "$mism" -eq 0
check "soak: 0 errors" test "$errs" -eq 0
check "daemons still running" kill -0 "$CACHED_PID"
check "nothing logged by the daemons" test ! -s "$T/log" -a ! -s "$T/log.direct"
umount_tm "$T/mnt-direct"
MNT_PID=$CACHED_PID
umount_tm "$T/mnt"
finish
