# bench/lib.sh: what the benches that mount a directory of archives share
# (sourced by heap.sh, java.sh, laplace.sh, ptf.sh). Before sourcing, set B (the build
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
# stat_records ARCHIVE: the record count that `tracetool stat` gives. awk reads
# all of stat's output: stopping at the line would fail stat with SIGPIPE, and the
# bench with it under pipefail. Needs TT.
stat_records() { "$TT" stat "$1" | awk '/^records/ && !n { print $2; n = 1 }'; }
# cold_cat_rounds ARCHIVE: the index of W/arch/ARCHIVE built, then ROUNDS rounds
# each of zstdcat of W/text.zst (the baseline) and a cold cat of ARCHIVE's ascii
# view on a fresh mount; prints each round, the medians and the median of the
# rounds' ratios (>= 1: tracemount is faster), checks that the ascii view is
# W/text (exit 1 if not), and times tail -n 1 of it on a fresh mount. Needs TT.
cold_cat_rounds() {
        local a=$1 r s e z c zs="" cs="" rr=""
        "$TT" index "$W/arch/$a" > /dev/null
        for r in $(seq "$ROUNDS"); do
                s=$(now); zstdcat "$W/text.zst" > /dev/null; e=$(now); z=$(secs "$s" "$e")
                mount_fresh
                s=$(now); cat "$MNT/$a/ascii" > /dev/null; e=$(now); c=$(secs "$s" "$e")
                zs="$zs$z"$'\n' cs="$cs$c"$'\n'
                rr="$rr$(per "$z" "$c")"$'\n'
                echo "round $r: zstdcat $z s, cat ascii $c s ($(echo "$rr" | sed -n "${r}p")x)"
        done
        cmp -s "$MNT/$a/ascii" "$W/text" || { echo "bench: ascii through the mount differs" >&2; exit 1; }
        echo "medians: zstdcat $(echo -n "$zs" | median) s, cat $(echo -n "$cs" | median) s"
        echo "median of the rounds' ratios (zstdcat / tracemount): $(echo -n "$rr" | median)x"
        mount_fresh
        s=$(now); tail -n 1 "$MNT/$a/ascii" > /dev/null; e=$(now)
        echo "tail -n 1 ascii on a fresh mount: $(secs "$s" "$e") s"
}
