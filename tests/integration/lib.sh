# Shared helpers of the integration tests: sourced, not run.
# Every test gets TRACEMOUNT and TRACETOOL (paths of the built programs).

fail_count=0
T=
MNT_PIDS=

# A check that failed is reported and counted; the script goes on so one
# run shows every failure. finish exits 1 if any failed.
fail() {
        echo "FAIL: $*" >&2
        fail_count=$((fail_count + 1))
}
ok() {
        echo "ok: $*"
}
check() { # check "what" command...
        local what=$1
        shift
        if "$@"; then ok "$what"; else fail "$what"; fi
}
finish() {
        if [ "$fail_count" -ne 0 ]; then
                echo "$fail_count check(s) failed" >&2
                exit 1
        fi
        echo "all checks passed"
        exit 0
}

skip() {
        echo "SKIP: $*"
        echo "SKIP: $*" >&2
        exit 77
}

# Skip loudly when FUSE cannot be used here (no device, no fusermount3,
# device not openable).
need_fuse() {
        [ -c /dev/fuse ] || skip "/dev/fuse is missing: FUSE tests need the fuse device"
        command -v fusermount3 >/dev/null 2>&1 || skip "fusermount3 not found"
        fusermount3 -V >/dev/null 2>&1 || skip "fusermount3 is unusable"
        (exec 3<>/dev/fuse) 2>/dev/null || skip "/dev/fuse cannot be opened by $(id -un)"
}

need_programs() {
        [ -x "${TRACEMOUNT:-}" ] || { echo "TRACEMOUNT not set or not executable" >&2; exit 1; }
        [ -x "${TRACETOOL:-}" ] || { echo "TRACETOOL not set or not executable" >&2; exit 1; }
}

# The start of a FUSE test: the programs, a usable /dev/fuse (else SKIP),
# a private temp dir as the working directory, TT the tracetool, SRC and
# MNT the usual source and mount points under it (not made).
fuse_prologue() {
        need_programs
        need_fuse
        setup_tmp
        cd "$T" || exit 1
        TT=$TRACETOOL
        SRC=$T/src
        MNT=$T/mnt
}

# A private temp dir, removed (after unmounting anything left) on exit.
setup_tmp() {
        T=$(mktemp -d "${TMPDIR:-/tmp}/tm-it.XXXXXX") || exit 1
        trap cleanup EXIT
        trap 'exit 1' INT TERM
}
cleanup() {
        local m
        for m in "$T"/mnt*; do
                [ -d "$m" ] || continue
                if mountpoint -q "$m" 2>/dev/null || grep -qs " $m fuse" /proc/mounts; then
                        fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null
                fi
        done
        local p
        for p in $MNT_PIDS; do
                kill "$p" 2>/dev/null
        done
        [ -n "$T" ] && rm -rf "$T"
}

# mount_tm LOG MNT [options] SRC: start tracemount -f in the background and
# wait until MNT is a mount point. Sets MNT_PID.
mount_tm() {
        local log=$1 mnt=$2
        shift 2
        mkdir -p "$mnt"
        "$TRACEMOUNT" -f "$@" "$mnt" >"$log" 2>&1 &
        MNT_PID=$!
        eval "MNT_LOG_$MNT_PID=\$log"
        MNT_PIDS="$MNT_PIDS $MNT_PID"
        local i
        for i in $(seq 100); do
                if grep -qs " $mnt fuse" /proc/mounts; then
                        return 0
                fi
                kill -0 "$MNT_PID" 2>/dev/null || break
                sleep 0.05
        done
        echo "mount of $mnt failed; daemon log:" >&2
        cat "$log" >&2
        return 1
}

# umount_tm MNT: unmount and check the daemon exits 0.
umount_tm() {
        local mnt=$1 rc log
        fusermount3 -u "$mnt" || { fail "fusermount3 -u $mnt"; return 1; }
        wait "$MNT_PID"
        rc=$?
        MNT_PIDS=$(echo "$MNT_PIDS" | sed "s/ $MNT_PID\b//")
        if [ "$rc" -ne 0 ]; then
                fail "daemon for $mnt exited $rc"
                eval "log=\${MNT_LOG_$MNT_PID:-}"
                [ -n "$log" ] && sed 's/^/  daemon log: /' "$log" | tail -n 200 >&2
                return 1
        fi
        ok "unmount of $mnt clean, daemon exit 0"
}

# wait_for SECONDS command...: retry until the command succeeds.
wait_for() {
        local n=$(($1 * 10))
        shift
        while [ "$n" -gt 0 ]; do
                "$@" && return 0
                sleep 0.1
                n=$((n - 1))
        done
        return 1
}

# gen_din SEED NREFS [64] [misc]: a din text trace in the ascii view's canonical
# form ("<type> <hex>\n", lowercase, no 0x) with program-like shapes:
# basic blocks of sequential instruction fetches, loops that jump back,
# calls to other functions, array walks with 4/8/16-byte strides, stores
# into a frame; with "misc", a few misc references (which PDATS II cannot
# hold). With "64", addresses need 64 bits and instructions have variable
# lengths (x86-like); pass "32" for the default.
gen_din() {
        local wide=${3:-32}
        [ "$wide" = 32 ] && wide=
        awk -v seed="$1" -v n="$2" -v wide="$wide" -v misc="${4:-}" '
        function hex(v,   hi, lo) {
                if (!wide)
                        return sprintf("%x", v)
                hi = int(v / 4294967296); lo = v - hi * 4294967296
                return hi ? sprintf("%x%08x", hi, lo) : sprintf("%x", lo)
        }
        function emit(t, a) { printf "%d %s\n", t, hex(a); out++ }
        BEGIN {
                srand(seed)
                base = wide ? 140737488355328 + 4096 * seed : 4194304 + 65536 * seed
                heap = wide ? 140726599344128 : 268435456 + 1048576 * seed
                stack = wide ? 140737488289792 : 2147418112
                pc = base; head = pc; arr = heap; stride = 8; idx = 0; out = 0
                while (out < n) {
                        len = 3 + int(rand() * 10)
                        for (i = 0; i < len && out < n; i++) {
                                emit(2, pc)
                                pc += wide ? 1 + int(rand() * 7) : 4
                                r = rand()
                                if (r < 0.22) {
                                        emit(0, arr + idx * stride); idx++
                                        if (idx > 4096) { idx = 0 }
                                } else if (r < 0.30) {
                                        emit(1, stack - 8 * int(rand() * 16))
                                } else if (misc && r < 0.302) {
                                        emit(3, heap + 64 * int(rand() * 1000))
                                }
                        }
                        r = rand()
                        if (r < 0.75) {
                                pc = head # loop back
                        } else if (r < 0.95) {
                                head = base + 16 * int(rand() * 4096); pc = head # call
                                stride = 4 * 2 ^ int(rand() * 3)
                                arr = heap + 4096 * int(rand() * 256); idx = 0
                        } else {
                                head = pc # fall through into the next loop
                        }
                }
        }'
}

# gen_lackey SEED NREFS: valgrind lackey text of a similar program.
gen_lackey() {
        awk -v seed="$1" -v n="$2" '
        BEGIN {
                srand(seed); pc = 67174400; out = 0
                while (out < n) {
                        printf "I  %08x,%d\n", pc, 1 + int(rand() * 6); out++
                        pc += 1 + int(rand() * 6)
                        r = rand()
                        if (r < 0.2) { printf " L %08x,8\n", 268435456 + 8 * int(rand() * 5000); out++ }
                        else if (r < 0.3) { printf " S %08x,4\n", 268500000 + 4 * int(rand() * 500); out++ }
                        else if (r < 0.35) { printf " M %08x,4\n", 268600000 + 4 * int(rand() * 50); out += 2 }
                        if (rand() < 0.1) pc = 67174400 + 16 * int(rand() * 1000)
                }
        }'
}

# lackey_prog: in the current directory, a real `valgrind --tool=lackey --trace-mem=yes`
# run of a small program (malloc, memset, 8-byte loads, free), its log in prog.lk. The
# caller skips without cc or valgrind.
lackey_prog() {
        cat >prog.c <<'PROG'
#include <stdlib.h>
#include <string.h>
int main(void)
{
        char *p = malloc(4096);
        memset(p, 1, 4096);
        unsigned long s = 0;
        for (int i = 0; i < 4096; i += 8)
                s += *(unsigned long *)(p + i);
        free(p);
        return s == 0;
}
PROG
        cc -O1 -o prog prog.c || fail "cc prog.c"
        valgrind --tool=lackey --trace-mem=yes --log-file=prog.lk ./prog >/dev/null 2>&1
        check "valgrind lackey ran" test -s prog.lk
}

# storage_cut: stats text or stats.json on stdin without a .tmn's storage rows (its last
# paragraph "storage: where the file's bytes go ...", stats.json's last member "storage":
# docs/stats-json.md), which an input in another format has not; the rest as it is (a
# line "rc=N" after the text, a paragraph after it stay)
storage_cut() {
        python3 -c '
import re, sys
t = sys.stdin.read()
t = re.sub(r"\n\nstorage: where the file.s bytes go .*?\n(?=rc=|\n|$)", "\n", t, flags=re.S)
t = re.sub(r",\"storage\":\{.*\}\}\n", "}\n", t)
sys.stdout.write(t)
'
}

# storage_check TMN IN LABEL: TMN's storage rows are there and add up to its size (the
# framing and every stream's bytes: stats.json's, and the total line of the stats text);
# IN has none
storage_check() {
        local tmn=$1 in=$2 label=$3 size
        size=$(stat -c %s "$tmn")
        if "$TT" cat "$tmn" stats.json | python3 -c '
import json, sys
size = int(sys.argv[1])
s = json.load(sys.stdin)["storage"]
def parts(g):
    if "bytes" in g and "value" in g["bytes"]:
        return [g["bytes"]["value"]]
    return [b for k, v in g.items() if isinstance(v, dict) for b in parts(v)]
got = sum(parts({k: v for k, v in s.items() if k != "total"}))
assert got == size == s["total"]["bytes"]["value"], (got, size)
assert s["blocks"]["total"]["value"] >= 1
' "$size" && "$TT" cat "$tmn" stats | grep -Eq "^  total +$size " &&
                ! "$TT" cat "$in" stats.json | grep -q '"storage":'; then
                ok "$label: storage rows add up to the file's $size bytes"
        else
                fail "$label: storage rows missing or not adding up to $size bytes"
        fi
}
