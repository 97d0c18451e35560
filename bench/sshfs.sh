#!/usr/bin/env bash
# bench/sshfs.sh [N_REFS]: tracemount reading archives over a network file
# system, against zstdcat over the same one.
#
# Starts a private sshd on loopback (keys made on the fly) and mounts a
# server directory with sshfs (tests/integration/sshfs_lib.sh), then stores
# a program-shaped trace of N_REFS references (default 3 million,
# bench/gen_trace) there two ways: din text as zstd -19 (the baseline) and
# PDATS II in seekable zstd (tracetool pack), whose index is built first
# (beside it, on the share). tracemount's source is the sshfs mount. Each
# of TM_BENCH_ROUNDS rounds (default 5) takes turns: zstdcat of the text
# from the share, then cat of ascii through a fresh tracemount (page cache),
# then through a fresh --direct-io mount. sshfs drops a file's pages when it
# is opened again, so every round fetches the archive over ssh. Prints every
# round, the medians and the median of the rounds' own ratios (zstdcat /
# tracemount: >= 1 means tracemount is faster), and cat of the archive
# itself over sshfs: what the network alone costs.
# Needs ./build.sh build first (or TM_BUILD naming a build directory), a
# working /dev/fuse, sshfs and openssh-server.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-3000000}
ROUNDS=${TM_BENCH_ROUNDS:-5}
B=${TM_BUILD:-$PWD/build}
TT=$B/tools/tracetool
W=$(mktemp -d "${TMPDIR:-/tmp}/tmsshfs.XXXXXX")
SHARE=$W/share
MNT=$W/mnt
PID=
# shellcheck source=../tests/integration/sshfs_lib.sh
. tests/integration/sshfs_lib.sh
cleanup() {
        if mountpoint -q "$MNT" 2>/dev/null; then fusermount3 -u "$MNT" || true; fi
        [ -n "$PID" ] && wait "$PID" 2>/dev/null || true
        ssh_stop || true
        rm -rf "$W"
}
trap cleanup EXIT
mkdir -p "$W/server" "$MNT" "$W/cache"

now() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { printf "%.3f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mount_fresh() { # [tracemount options]
        if mountpoint -q "$MNT"; then fusermount3 -u "$MNT"; wait "$PID" 2>/dev/null || true; fi
        "$B/fs/tracemount" -f --cache-dir "$W/cache" "$@" "$SHARE" "$MNT" </dev/null >>"$W/daemon.log" 2>&1 &
        PID=$!
        for _ in $(seq 100); do mountpoint -q "$MNT" && return 0; sleep 0.05; done
        echo "bench: tracemount mount failed" >&2
        cat "$W/daemon.log" >&2
        exit 1
}
timed() { # VAR cmd...: elapsed seconds of cmd in VAR
        local var=$1 s
        shift
        s=$(now)
        "$@"
        printf -v "$var" '%s' "$(secs "$s" "$(now)")"
}

ssh_start "$W/ssh" || { echo "bench: $SSH_WHY" >&2; exit 1; }
sshfs_mount "$W/server" "$SHARE" || exit 1
echo "bench: sshd on 127.0.0.1:$SSH_PORT, $(sshfs --version 2>&1 | grep -i '^sshfs version' | tr 'A-Z' 'a-z')"
echo "bench: generating $N references"
"$B/bench/gen_trace" "$N" 1 >"$W/t.din"
"$TT" pack "$W/t.din" "$W/server/t.pdt2.zst"
zstd -q -19 -T0 "$W/t.din" -o "$W/server/t.din.zst"
text=$(stat -c %s "$W/t.din")
echo "ascii $text bytes; on the share: PDATS II (zstd) $(stat -c %s "$W/server/t.pdt2.zst") bytes," \
        "din text zstd -19 $(stat -c %s "$W/server/t.din.zst") bytes"
timed t_index "$TT" index "$SHARE/t.pdt2.zst"
echo "index built over sshfs in $t_index s: $(ls "$W/server"/.t.pdt2.zst.tmidx)"
mount_fresh
cmp -s "$W/t.din" "$MNT/t.pdt2.zst/ascii" || { echo "bench: ascii through the mount differs" >&2; exit 1; }
rm -f "$W/t.din"

zs="" cs="" ds="" rr="" dr="" fs=""
for r in $(seq "$ROUNDS"); do
        timed f sh -c "cat '$SHARE/t.pdt2.zst' > /dev/null"
        timed z sh -c "zstdcat '$SHARE/t.din.zst' > /dev/null"
        mount_fresh
        timed c sh -c "cat '$MNT/t.pdt2.zst/ascii' > /dev/null"
        mount_fresh --direct-io
        timed d sh -c "cat '$MNT/t.pdt2.zst/ascii' > /dev/null"
        fs="$fs$f"$'\n' zs="$zs$z"$'\n' cs="$cs$c"$'\n' ds="$ds$d"$'\n'
        rc=$(awk -v a="$z" -v b="$c" 'BEGIN { printf "%.2f", a / b }')
        rd=$(awk -v a="$z" -v b="$d" 'BEGIN { printf "%.2f", a / b }')
        rr="$rr$rc"$'\n' dr="$dr$rd"$'\n'
        echo "round $r: zstdcat $z s, cat ascii $c s (${rc}x), --direct-io $d s (${rd}x); cat of the archive $f s"
done
echo "medians: zstdcat $(printf '%s' "$zs" | median) s, cat $(printf '%s' "$cs" | median) s," \
        "--direct-io $(printf '%s' "$ds" | median) s, cat of the archive $(printf '%s' "$fs" | median) s"
echo "median of the rounds' ratios (zstdcat / tracemount) over sshfs: page cache" \
        "$(printf '%s' "$rr" | median)x, --direct-io $(printf '%s' "$dr" | median)x"
