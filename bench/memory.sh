#!/usr/bin/env bash
# bench/memory.sh [HANDLES] [ARCHIVES]: the daemon's memory, bounded
# however many handles are open and archives touched (docs/performance.md,
# "Memory"). Prints the daemon's RSS (VmRSS, MB):
#   1. handles: a mount with --direct-io of the shipped examples (zstd
#      traces whose frames are decoded whole, gzip ones): at the start;
#      idle, once every trace was opened and read (its index built and
#      loaded); with HANDLES (default 2000) handles of ascii, binary and
#      raw open, each read 128 KiB from its start (target under 512 MB,
#      --handle-memory's default budget 256 MiB); after closing them all,
#      against idle and against the level after the first round (target
#      within 10%: a first round leaves the threads it started, their
#      stacks and arenas); the same again, rounds 2 and 3;
#   2. archives: a mount of ARCHIVES (default 10000) small archives (copies
#      of examples/sort.hatf.zst, 500 a directory): at the start, after
#      `cat m/*/*/stats` (each index built and saved), after
#      TM_BENCH_IDLE seconds (default 30) idle, after a second cat (each
#      trace opened again from its index file) (target under 64 MB).
# Memory bounds, not times: each figure is read once the step is over.
# Needs ./build.sh build first (or TM_BUILD naming a build directory),
# python3 and a working /dev/fuse.
set -euo pipefail
cd "$(dirname "$0")/.."
HANDLES=${1:-2000}
ARCHIVES=${2:-10000}
IDLE=${TM_BENCH_IDLE:-30}
B=${TM_BUILD:-$PWD/build}
W=$(mktemp -d "${TMPDIR:-/tmp}/tmmem.XXXXXX")
MNT=$W/mnt
. bench/lib.sh
mkdir -p "$W/arch" "$MNT" "$W/cache"

rss() { awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$PID/status"; }
row() { printf '  %-58s %8s MB\n' "$1" "$2"; }

# HANDLES handles of the views under MNT: opened and read, RSS, closed.
handles_round() {
        python3 - "$PID" "$HANDLES" "$@" <<'EOF'
import os, resource, sys, time
pid, n, files = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
if hard != resource.RLIM_INFINITY and hard < n + 64:
    sys.exit("bench: %d handles need a file limit above %d (ulimit -Hn)" % (n, hard))
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
def rss():
    for l in open("/proc/%d/status" % pid):
        if l.startswith("VmRSS"):
            return int(l.split()[1]) / 1024
fds = []
for i in range(n):
    fd = os.open(files[i % len(files)], os.O_RDONLY)
    if not os.read(fd, 131072):
        sys.exit("bench: %s: empty read" % files[i % len(files)])
    fds.append(fd)
print("open %.1f" % rss())
for fd in fds:
    os.close(fd)
time.sleep(1.2)  # the daemon trims within a second of the last close (views/hmem.h)
print("closed %.1f" % rss())
EOF
}

echo "== 1. $HANDLES handles, --direct-io =="
cp examples/*.zst examples/*.gz "$W/arch/"
MOUNT_OPTS=--direct-io mount_fresh
row "at the start" "$(rss)"
views=()
for d in "$MNT"/*/; do
        for v in ascii binary raw; do
                [ -e "$d$v" ] && views+=("$d$v")
                cat "$d$v" > /dev/null
        done
done
idle=$(rss)
row "idle (${#views[@]} views of $(ls "$W/arch" | wc -l) traces each read once)" "$idle"
pct() { awk -v c="$1" -v i="$2" 'BEGIN { printf "%+.0f%%", (c - i) / i * 100 }'; }
first=
for r in 1 2 3; do
        out=$(handles_round "${views[@]}")
        open=$(awk '/^open/ { print $2 }' <<<"$out")
        closed=$(awk '/^closed/ { print $2 }' <<<"$out")
        first=${first:-$closed}
        row "round $r: $HANDLES handles open and read 128 KiB" "$open"
        row "round $r: all closed ($(pct "$closed" "$idle") of idle, $(pct "$closed" "$first") of round 1's)" "$closed"
done
fusermount3 -u "$MNT"
wait "$PID" || true
PID=

echo "== 2. $ARCHIVES small archives: cat m/*/*/stats =="
rm -rf "$W/arch" "$W/cache"
mkdir -p "$W/arch" "$W/cache"
for ((i = 0; i < ARCHIVES; i++)); do
        d=$W/arch/d$((i / 500))
        [ -d "$d" ] || mkdir "$d"
        cp examples/sort.hatf.zst "$d/t$i.hatf.zst"
done
mount_fresh
row "at the start" "$(rss)"
t0=$(now)
cat "$MNT"/*/*/stats > /dev/null
t1=$(now)
row "after cat of every stats ($(secs "$t0" "$t1") s: each index built)" "$(rss)"
sleep "$IDLE"
row "after $IDLE s idle" "$(rss)"
t0=$(now)
cat "$MNT"/*/*/stats > /dev/null
t1=$(now)
row "after a second cat ($(secs "$t0" "$t1") s: reopened from index files)" "$(rss)"
