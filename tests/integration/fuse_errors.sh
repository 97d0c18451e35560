#!/bin/bash
# tracemount's errors before it detaches, in the background mode (no -f):
# an unknown option, a bad -o value, a mount point that is a file or
# already a tracemount, /dev/fuse not accessible, an unopenable --log-file
# each print a message naming the problem on stderr and exit non-zero, and
# nothing is mounted. After a good mount the daemon's messages go to
# --log-file (background and foreground), each line with a timestamp: the
# EIO reason of a truncated archive, naming it and the offset.
# usage: fuse_errors.sh   (TRACEMOUNT and TRACETOOL in the environment)
here=$(dirname "$0")
. "$here/lib.sh"
fuse_prologue
mkdir -p "$SRC" "$MNT"

gen_din 31 120000 >a.din
"$TT" pack --frame-size 65536 a.din "$SRC/a.pdt2.zst" || fail "pack a.pdt2.zst"
"$TT" pack a.din a.pdt.gz || fail "pack a.pdt.gz"
sz=$(stat -c %s a.pdt.gz)
head -c $((sz * 2 / 3)) a.pdt.gz >"$SRC/cut.pdt.gz" # truncated: EIO past the cut
"$TT" cat "$SRC/a.pdt2.zst" ascii >ref.ascii || fail "tracetool cat a.pdt2.zst"

mounted() { grep -qs " $1 fuse" /proc/mounts; }

# refuse WHAT PATTERN args...: tracemount in the background with args fails
# (non-zero exit), says PATTERN on stderr, and leaves $MNT unmounted (unless
# it was mounted before: LIVE=1).
LIVE=0
refuse() {
        local what=$1 pat=$2 rc
        shift 2
        "$TRACEMOUNT" "$@" >out 2>err
        rc=$?
        check "$what: exit status non-zero (got $rc)" test "$rc" -ne 0
        check "$what: stderr names it ('$pat')" grep -q -- "$pat" err
        [ -s err ] || echo "  (stderr was empty)" >&2
        sed 's/^/  stderr: /' err
        if [ "$LIVE" = 0 ] && mounted "$MNT"; then
                fail "$what: $MNT got mounted"
                fusermount3 -u "$MNT"
        fi
}

refuse "unknown option" "--bogus" --bogus "$SRC" "$MNT"
refuse "option of libfuse's path-based layer" "kernel_cache" -o kernel_cache "$SRC" "$MNT"
refuse "bad -o value" "read.ahead" -o read_ahead=lots "$SRC" "$MNT"
refuse "bad long option value" "drop.behind" --drop-behind -3 "$SRC" "$MNT"
touch "$T/plainfile"
refuse "mount point a regular file" "not a directory" "$SRC" "$T/plainfile"
if grep -qs " $T/plainfile " /proc/mounts; then
        fail "a tracemount on the file $T/plainfile"
        fusermount3 -u "$T/plainfile"
fi
refuse "unopenable --log-file" "$T/no/such/dir/log" --log-file "$T/no/such/dir/log" "$SRC" "$MNT"

# --- a mount point that is already a tracemount ---
"$TRACEMOUNT" "$SRC" "$MNT" 2>err
rc=$?
check "background mount exits 0 (got $rc)" test "$rc" -eq 0
check "background mount is up when tracemount returns" mounted "$MNT"
check "... and serves the views" cmp -s ref.ascii "$MNT/a.pdt2.zst/ascii"
LIVE=1
refuse "mount point already a tracemount" "already a tracemount" "$SRC" "$MNT"
mkdir -p other
refuse "already a tracemount, other source" "already a tracemount" "$T/other" "$MNT"
LIVE=0
check "one mount there, not two" test "$(grep -c " $MNT fuse" /proc/mounts)" -eq 1
check "the first mount still serves" cmp -s ref.ascii "$MNT/a.pdt2.zst/ascii"
fusermount3 -u "$MNT" || fail "fusermount3 -u $MNT"
wait_for 5 sh -c "! grep -qs ' $MNT fuse' /proc/mounts" || fail "unmount of $MNT"

# --- --log-file gets the EIO reason, background and foreground ---
"$TRACEMOUNT" --log-file "$T/bg.log" "$SRC" "$MNT" 2>err
check "background mount with --log-file exits 0" test $? -eq 0
check "background: the intact archive reads right" cmp -s ref.ascii "$MNT/a.pdt2.zst/ascii"
check "background: the truncated archive's ascii fails" sh -c "! cat '$MNT/cut.pdt.gz/ascii' >/dev/null 2>cat.err"
check "background: ... with EIO" grep -q "Input/output error" cat.err
check "background: the log file names the archive" wait_for 5 grep -q "cut.pdt.gz" "$T/bg.log"
check "background: ... and the offset" grep -q "cut.pdt.gz.*offset [0-9]" "$T/bg.log"
check "background: lines start with a timestamp" \
        sh -c "grep 'cut.pdt.gz' '$T/bg.log' | grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} '"
sed 's/^/  bg.log: /' "$T/bg.log"
fusermount3 -u "$MNT" || fail "fusermount3 -u $MNT"
wait_for 5 sh -c "! grep -qs ' $MNT fuse' /proc/mounts" || fail "unmount of $MNT"

echo "an earlier line" >"$T/fg.log"
mount_tm "$T/fg.out" "$MNT" --log-file "$T/fg.log" "$SRC" || fail "foreground mount with --log-file"
check "foreground: the truncated archive's ascii fails" sh -c "! cat '$MNT/cut.pdt.gz/ascii' >/dev/null 2>&1"
check "foreground: the log file names the archive" wait_for 5 grep -q "cut.pdt.gz.*offset [0-9]" "$T/fg.log"
check "foreground: the log file is appended to" test "$(head -n 1 "$T/fg.log")" = "an earlier line"
check "foreground: stderr has the reason too" grep -q "cut.pdt.gz" "$T/fg.out"
umount_tm "$MNT"

# --- an index that can be saved nowhere: the log says why, once ---
touch "$T/cachefile"
mkdir -p "$T/src2" && cp "$SRC/a.pdt2.zst" "$T/src2/" # no index beside it yet
mount_tm "$T/note.out" "$MNT" --no-index-beside --cache-dir "$T/cachefile/sub" \
        --log-file "$T/note.log" "$T/src2" || fail "mount with an unusable --cache-dir"
check "in-memory index: views still read right" cmp -s ref.ascii "$MNT/a.pdt2.zst/ascii"
stat "$MNT/a.pdt2.zst/binary" >/dev/null
check "in-memory index: the log says why" wait_for 5 \
        grep -q "a.pdt2.zst: index in memory only: .*cachefile/sub: Not a directory" "$T/note.log"
check "in-memory index: ... once" test "$(grep -c "a.pdt2.zst: index in memory" "$T/note.log")" -eq 1
umount_tm "$MNT"

# --- /dev/fuse not accessible: a user of our own, in a private mount
# namespace where /dev/fuse is a mode-000 file (the real device untouched) ---
U=tm_err_user
if [ "$(id -u)" -ne 0 ]; then
        echo "SKIP: /dev/fuse-denied check needs root (useradd, unshare -m)" >&2
        echo "SKIP: /dev/fuse-denied check needs root (useradd, unshare -m)"
elif ! command -v useradd >/dev/null || ! command -v unshare >/dev/null ||
        ! command -v setpriv >/dev/null; then
        echo "SKIP: /dev/fuse-denied check needs useradd, unshare and setpriv" >&2
        echo "SKIP: /dev/fuse-denied check needs useradd, unshare and setpriv"
else
        created=
        if ! id "$U" >/dev/null 2>&1; then
                useradd -M -r -s /usr/sbin/nologin "$U" && created=1
        fi
        trap '[ -n "$created" ] && userdel "$U" 2>/dev/null; cleanup' EXIT
        D=$(mktemp -d /tmp/tm-err.XXXXXX)
        mkdir "$D/src" "$D/mnt"
        cp "$SRC/a.pdt2.zst" "$D/src/"
        chmod -R a+rX "$D"
        chmod a+w "$D/mnt"
        : >"$D/nofuse"
        chmod 000 "$D/nofuse"
        unshare -m --propagation private sh -c '
                mount --bind "$1/nofuse" /dev/fuse || exit 99
                exec setpriv --reuid="$2" --regid="$2" --clear-groups "$3" "$1/src" "$1/mnt"
        ' sh "$D" "$U" "$TRACEMOUNT" >out 2>err
        rc=$?
        if [ "$rc" -eq 99 ]; then
                fail "could not bind a file over /dev/fuse in a private namespace"
        else
                check "/dev/fuse denied: exit status non-zero (got $rc)" test "$rc" -ne 0
                check "/dev/fuse denied: stderr names /dev/fuse" grep -q "/dev/fuse" err
                check "/dev/fuse denied: stderr says why" grep -q "Permission denied" err
                check "/dev/fuse denied: stderr says it did not mount" grep -q "cannot mount" err
                sed 's/^/  stderr: /' err
        fi
        check "/dev/fuse denied: nothing mounted" sh -c "! grep -qs ' $D/mnt ' /proc/mounts"
        rm -rf "$D"
        if [ -n "$created" ]; then
                userdel "$U" || fail "userdel $U"
                created=
        fi
fi

finish
