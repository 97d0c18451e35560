#!/bin/bash
# Permissions through a shared mount: root mounts with
# -o allow_other,default_permissions, and a user this test creates
# (tm_perm_user, removed at the end) reads exactly the archives the source
# modes allow: 0644, its own 0600, 0640 of a group it is in; not root's
# 0600, 0640 of a group it is not in, nor anything under a 0700
# directory (EACCES). What it may read is byte-exact against `tracetool
# cat`. Every write-type operation inside the mount (create, touch, rm,
# rmdir, mkdir, mv, chmod, chown, truncate, > file, ln, ln -s, setfattr),
# as that user and as root, fails with EROFS or EACCES.
# SKIPs loudly when not root (it must create a user and mount for others).
# usage: fuse_perms.sh   (TRACEMOUNT and TRACETOOL in the environment)
here=$(dirname "$0")
. "$here/lib.sh"
need_programs
[ "$(id -u)" -eq 0 ] || skip "fuse_perms needs root: it creates a user and mounts with allow_other"
for p in useradd userdel groupadd groupdel setpriv flock; do
        command -v "$p" >/dev/null 2>&1 || skip "$p is missing"
done
# a python3 every user can run (not one under root's home)
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY is missing"
need_fuse
U=tm_perm_user
GIN=tm_perm_grp
GOUT=tm_perm_other
drop_user() {
        userdel "$U" 2>/dev/null
        groupdel "$GIN" 2>/dev/null
        groupdel "$GOUT" 2>/dev/null
}
# one run at a time on this machine (a release and an ASan suite at once
# would create and remove the same user under each other)
exec 9>"${TMPDIR:-/tmp}/tm_perm_user.lock"
flock -w 600 9 || skip "another fuse_perms run holds ${TMPDIR:-/tmp}/tm_perm_user.lock"
setup_tmp
trap 'cleanup; drop_user' EXIT
drop_user # a run killed before its end may have left them
groupadd "$GIN" && groupadd "$GOUT" && useradd -M -N -g users -G "$GIN" -s /bin/sh "$U" ||
        { fail "cannot create $U"; finish; }
check "$U is in $GIN, not in $GOUT" sh -c "id -nG $U | grep -qw $GIN && ! id -nG $U | grep -qw $GOUT"
as_user() { setpriv --reuid="$U" --regid=users --init-groups "$@"; }

chmod 0755 "$T" # the user must reach the mount point
cd "$T" || exit 1
TT=$TRACETOOL
SRC=$T/src
MNT=$T/mnt
mkdir -p "$SRC/private" ref
gen_din 41 30000 >a.din
gen_din 42 20000 64 >w.din
"$TT" pack a.din "$SRC/pub.pdt2.zst" || fail "pack"
"$TT" pack a.din "$SRC/secret.pdt2.zst" || fail "pack"
"$TT" pack w.din "$SRC/mine.pdt.gz" 2>/dev/null || fail "pack"
"$TT" pack a.din "$SRC/group-in.din.zst" || fail "pack"
"$TT" pack w.din "$SRC/group-out.pdt2.gz" 2>/dev/null || fail "pack"
"$TT" pack a.din "$SRC/private/inside.pdt2.zst" || fail "pack"
echo "a note" >"$SRC/notes.txt"
echo "root's note" >"$SRC/secret.txt"
chmod 0644 "$SRC/pub.pdt2.zst" "$SRC/notes.txt" "$SRC/private/inside.pdt2.zst"
chmod 0600 "$SRC/secret.pdt2.zst" "$SRC/mine.pdt.gz" "$SRC/secret.txt"
chown "$U" "$SRC/mine.pdt.gz"
chgrp "$GIN" "$SRC/group-in.din.zst"
chgrp "$GOUT" "$SRC/group-out.pdt2.gz"
chmod 0640 "$SRC/group-in.din.zst" "$SRC/group-out.pdt2.gz"
chmod 0700 "$SRC/private"
READABLE="pub.pdt2.zst mine.pdt.gz group-in.din.zst"
DENIED="secret.pdt2.zst group-out.pdt2.gz private/inside.pdt2.zst"

mount_tm "$T/log" "$MNT" -o allow_other,default_permissions "$SRC" || { fail "mount"; finish; }

# --- reads: exactly what the modes allow ---
for f in $READABLE; do
        for v in $("$TT" views "$SRC/$f"); do
                r=ref/$(echo "$f/$v" | tr / _)
                "$TT" cat "$SRC/$f" "$v" >"$r"
                as_user cat "$MNT/$f/$v" >got 2>err
                check "$U reads $f/$v byte-exact" cmp -s "$r" got
        done
        check "$U lists $f" test "$(as_user ls "$MNT/$f" | tr '\n' ' ')" = "$(ls "$MNT/$f" | tr '\n' ' ')"
done
check "$U reads notes.txt (0644)" test "$(as_user cat "$MNT/notes.txt")" = "a note"
check "$U lists the mount root" test -n "$(as_user ls "$MNT" | grep -x pub.pdt2.zst)"

# errno of opening and reading each path, as the user: "path ERRNO"
cat >probe.py <<'EOF'
import errno, os, sys
for p in sys.argv[1:]:
    try:
        if os.path.isdir(p):
            os.listdir(p)
        else:
            with open(p, "rb") as f:
                f.read()
        print(p, "OK")
    except OSError as e:
        print(p, errno.errorcode.get(e.errno, str(e.errno)))
EOF
paths="$MNT/secret.txt $MNT/private"
for f in $DENIED; do
        paths="$paths $MNT/$f $MNT/$f/ascii $MNT/$f/binary $MNT/$f/stats"
done
# shellcheck disable=SC2086
as_user "$PY" probe.py $paths >denied.txt
while read -r p e; do
        check "$U is refused ${p#"$MNT"/} (EACCES)" test "$e" = EACCES
done <denied.txt
check "every refused path probed" test "$(wc -l <denied.txt)" -eq "$(echo $paths | wc -w)"
# root, for comparison, reads them all (the daemon runs as root)
check "root reads secret.pdt2.zst/ascii byte-exact" cmp -s a.din "$MNT/secret.pdt2.zst/ascii"
check "root reads private/inside.pdt2.zst/ascii byte-exact" cmp -s a.din "$MNT/private/inside.pdt2.zst/ascii"

# --- every write-type operation fails with EROFS or EACCES ---
cat >writes.py <<'EOF'
import errno, os, sys
m = sys.argv[1]
tr, view, note = m + "/mine.pdt.gz", m + "/mine.pdt.gz/ascii", m + "/notes.txt"
ops = [
    ("create a file", lambda: os.open(m + "/new", os.O_CREAT | os.O_WRONLY, 0o644)),
    ("create in a trace dir", lambda: os.open(tr + "/new", os.O_CREAT | os.O_WRONLY, 0o644)),
    ("touch a file", lambda: os.utime(note)),
    ("touch a view", lambda: os.utime(view)),
    ("rm a file", lambda: os.unlink(note)),
    ("rm a view", lambda: os.unlink(view)),
    ("rmdir a trace dir", lambda: os.rmdir(tr)),
    ("mkdir", lambda: os.mkdir(m + "/newdir")),
    ("mkdir in a trace dir", lambda: os.mkdir(tr + "/newdir")),
    ("mv a file", lambda: os.rename(note, m + "/moved")),
    ("mv a trace dir", lambda: os.rename(tr, m + "/moved.pdt.gz")),
    ("mv a view", lambda: os.rename(view, tr + "/moved")),
    ("chmod a file", lambda: os.chmod(note, 0o666)),
    ("chmod a view", lambda: os.chmod(view, 0o666)),
    ("chmod a trace dir", lambda: os.chmod(tr, 0o777)),
    ("chown own trace dir", lambda: os.chown(tr, os.getuid(), -1)),
    ("truncate a file", lambda: os.truncate(note, 0)),
    ("truncate a view", lambda: os.truncate(view, 0)),
    ("> file", lambda: os.open(note, os.O_WRONLY | os.O_TRUNC)),
    ("> view", lambda: os.open(view, os.O_WRONLY | os.O_TRUNC)),
    ("open a view read-write", lambda: os.open(view, os.O_RDWR)),
    (">> file", lambda: os.open(note, os.O_WRONLY | os.O_APPEND)),
    ("ln -s", lambda: os.symlink("notes.txt", m + "/link")),
    ("ln", lambda: os.link(note, m + "/hard")),
    ("setfattr", lambda: os.setxattr(note, "user.x", b"1")),
]
for name, op in ops:
    try:
        op()
        print("SUCCEEDED", name)
    except OSError as e:
        print(errno.errorcode.get(e.errno, str(e.errno)), name)
EOF
for who in "$U" root; do
        if [ "$who" = root ]; then
                python3 writes.py "$MNT" >"writes.$who"
        else
                as_user "$PY" writes.py "$MNT" >"writes.$who"
        fi
        while read -r e op; do
                case $e in
                EROFS | EACCES) ok "$who: $op: $e" ;;
                *) fail "$who: $op: $e (want EROFS or EACCES)" ;;
                esac
        done <"writes.$who"
        check "$who: all 25 write-type operations tried" test "$(wc -l <"writes.$who")" -eq 25
done
check "the source is untouched" test "$(ls "$SRC" | tr '\n' ' ')" = "group-in.din.zst group-out.pdt2.gz mine.pdt.gz notes.txt private pub.pdt2.zst secret.pdt2.zst secret.txt "
check "notes.txt unchanged" test "$(cat "$SRC/notes.txt")" = "a note"
check "mine.pdt.gz keeps its mode" test "$(stat -c %a "$SRC/mine.pdt.gz")" = 600

umount_tm "$MNT"
finish
