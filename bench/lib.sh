# bench/lib.sh: what the benches that mount a directory of archives share
# (sourced by heap.sh, java.sh, ptf.sh). Before sourcing, set B (the build
# directory), W (a fresh work directory, removed on exit) and MNT (the
# mount point, under W); MOUNT_OPTS, when set, goes to tracemount.
# PID is the running daemon's, or empty.
PID=
cleanup() {
        if mountpoint -q "$MNT" 2>/dev/null; then fusermount3 -u "$MNT" || true; fi
        [ -n "$PID" ] && wait "$PID" 2>/dev/null || true
        rm -rf "$W"
}
trap cleanup EXIT

now() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }
per() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# A tracemount of W/arch on MNT, started afresh (the page cache of its
# files dropped with the old one), its index cache W/cache.
mount_fresh() {
        if mountpoint -q "$MNT"; then fusermount3 -u "$MNT"; wait "$PID" 2>/dev/null || true; fi
        # shellcheck disable=SC2086
        "$B/fs/tracemount" -f --cache-dir "$W/cache" ${MOUNT_OPTS:-} "$W/arch" "$MNT" \
                < /dev/null >> "$W/daemon.log" 2>&1 &
        PID=$!
        for _ in $(seq 100); do mountpoint -q "$MNT" && return 0; sleep 0.05; done
        echo "bench: mount failed" >&2
        cat "$W/daemon.log" >&2
        exit 1
}
# The median of the numbers on stdin, one a line.
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
