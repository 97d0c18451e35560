#!/bin/bash
# Files beside an archive are input from other users (issue 25, items 1 and
# 4; docs/side-files.md), through a live mount and tracetool:
# - a FIFO, a symlink and (as root) another user's file as the DTD beside a
#   Meta-TF archive (examples/heapwork.mtf.zst names hatf10.dtd): stat of
#   the trace and of its views returns within seconds (`timeout`), ascii
#   equals the one read with nothing beside it (the built-in DTD), errors
#   and stats name the file and why; tracetool stat returns too; so is a
#   DTD of the caller's own that everyone may write (mode 0666: issue 33);
# - an .mtf whose DTD exists nowhere is a directory, its ascii fails with
#   EIO, its errors says where the DTD was looked for;
# - tracetool cat ARCHIVE streams/thread/<id> equals the mount's bytes, for
#   every thread stream the mount lists.
# usage: fuse_sidefiles.sh   (TRACEMOUNT and TRACETOOL in the environment)
here=$(dirname "$0")
. "$here/lib.sh"
fuse_prologue
EX=${TM_SOURCE_DIR:-$here/../..}/examples
mkdir -p "$SRC/fifo" "$SRC/link" "$SRC/other" "$SRC/w666" "$SRC/missing"
for d in fifo link other w666; do
        cp "$EX/heapwork.mtf.zst" "$SRC/$d/h.mtf.zst"
done
"$TT" cat "$EX/heapwork.mtf.zst" ascii >ref.txt || fail "tracetool cat the reference"
printf '<!ELEMENT trace (nosuch)>\n<!ATTLIST broken\n' >"$T/bad.dtd"
mkfifo "$SRC/fifo/hatf10.dtd"
ln -s "$T/bad.dtd" "$SRC/link/hatf10.dtd"
cp "$T/bad.dtd" "$SRC/w666/hatf10.dtd"
chmod 666 "$SRC/w666/hatf10.dtd"
other=
if [ "$(id -u)" -eq 0 ]; then
        cp "$T/bad.dtd" "$SRC/other/hatf10.dtd"
        chown 65534:65534 "$SRC/other/hatf10.dtd" && other=1
else
        echo "SKIP: another user's DTD beside the archive: needs root for chown" >&2
        echo "SKIP: another user's DTD beside the archive: needs root for chown"
fi
# an .mtf naming a DTD that exists nowhere
"$TT" cat "$EX/heapwork.mtf.zst" raw | sed 's/hatf10\.dtd/nosuch\.dtd/' >"$SRC/missing/m.mtf"

# every tracetool call and every access to the mount returns (SIGKILL
# after 20 s: a caller blocked in an open ignores every other signal), so
# that a hang is a failure, not a stuck test
tt() { timeout -s KILL 20 "$TT" "$@"; }
b() { timeout -s KILL 20 "$@"; }

mount_tm "$T/log" "$MNT" "$SRC" || { fail "mount"; finish; }

# passed_over DIR WHY: the DTD beside DIR/h.mtf.zst is passed over
passed_over() {
        local d=$1 why=$2 m=$MNT/$1/h.mtf.zst
        check "$d: stat of the trace returns, a directory" timeout -s KILL 20 test -d "$m"
        check "$d: stat of ascii returns" timeout -s KILL 20 sh -c 'stat "$1" >/dev/null' _ "$m/ascii"
        timeout -s KILL 20 cat "$m/ascii" >"$d.txt"
        check "$d: ascii equals the reference (the built-in DTD)" cmp -s "$d.txt" ref.txt
        check "$d: errors names the DTD and says $why" \
                b grep -q "$SRC/$d/hatf10.dtd.*$why" "$m/errors"
        check "$d: stats names the DTD and says $why" \
                b grep -q "^side file .*$SRC/$d/hatf10.dtd.*$why" "$m/stats"
        tt stat "$SRC/$d/h.mtf.zst" >"$d.stat" 2>&1
        check "$d: tracetool stat returns, exit 0" test $? -eq 0
        check "$d: tracetool stat says $why" grep -q "side file .*$why" "$d.stat"
        tt cat "$SRC/$d/h.mtf.zst" ascii | cmp -s - ref.txt
        check "$d: tracetool cat ascii equals the reference" test $? -eq 0
}
passed_over fifo "FIFO"
passed_over link "symlink, not followed"
[ -n "$other" ] && passed_over other "not trusted"
passed_over w666 "not trusted: writable by all (mode 0666)"

# --- a DTD that exists nowhere ---
m=$MNT/missing/m.mtf
check "missing DTD: the trace is a directory" timeout -s KILL 20 test -d "$m"
check "missing DTD: ls lists errors" b sh -c "ls '$m' | grep -qx errors"
timeout -s KILL 20 cat "$m/ascii" >/dev/null 2>cat.err
check "missing DTD: ascii fails" test $? -ne 0
check "missing DTD: with EIO" grep -q "Input/output error" cat.err
check "missing DTD: errors says where the DTD was looked for" \
        b grep -qF "nosuch.dtd' not found: not beside the archive ($SRC/missing/nosuch.dtd); not built in; not in TM_DTD_PATH" "$m/errors"
check "missing DTD: stats says it was not opened" b grep -q "not opened" "$m/stats"
tt cat "$SRC/missing/m.mtf" errors >tool.errors
check "missing DTD: tracetool cat errors gives the same line" b cmp -s tool.errors "$m/errors"

# --- every thread stream the mount lists, through tracetool cat ---
h=$MNT/fifo/h.mtf.zst
b ls -l "$h/ascii" >/dev/null # the index: the thread streams are listed then
n=0
for f in $(b ls -d "$h"/streams/thread/* 2>/dev/null); do
        [ -e "$f" ] || continue
        id=${f##*/}
        tt cat "$SRC/fifo/h.mtf.zst" "streams/thread/$id" >"thread.$id" 2>thread.err
        check "tracetool cat streams/thread/$id exits 0" test $? -eq 0
        check "tracetool cat streams/thread/$id equals the mount's bytes" b cmp -s "thread.$id" "$f"
        n=$((n + 1))
done
check "the mount lists thread streams ($n)" test "$n" -gt 0
m2=$MNT/link/h.mtf.zst # a trace not indexed yet: the name alone is enough
check "a thread stream is found by name before any listing" \
        b cmp -s "$m2/streams/thread/0" "thread.0"

# a build that waits in the FIFO's open would keep a daemon worker there:
# an open for reading and writing never waits, and ends that wait
b sh -c 'exec 3<>"$1"' _ "$SRC/fifo/hatf10.dtd"
umount_tm "$MNT"
finish
