#!/bin/bash
# Index files as input from other users (issue 15, items 1 and 6), through
# live mounts:
# 1. a symlink planted at the index path beside the archive, at the cache
#    directory and at the index path inside the cache directory, each
#    pointing at a file the test owns: the views stay byte-exact (against
#    tracetool cat with its own cache), the target stays unchanged, the
#    index path ends as a regular file and `tracetool verify` accepts it;
# 2. two daemons on two mount points of one source directory, racing to
#    write the same index files while readers read every view through both
#    at once, for several rounds with the indexes deleted between: every
#    read byte-exact, the final indexes valid (tracetool verify loads and
#    checks them), no temporary file left;
# 3. (root only: users are created) two users of one group sharing a
#    setgid, group-writable cache directory: files are created
#    group-writable in the group; for archives the first user cannot
#    change, the second refuses the first's index (it gives the first no
#    power over the second's views they did not have) and keeps its own
#    beside it, untouched, unless told --trust-group-index (tracetool and
#    the daemon then load the first's, same inode and mtime); for archives
#    in a directory of the group, the first's index is believed as is; in
#    a 1777 cache the second keeps its own file beside the first's; in a
#    shared 1777 XDG_CACHE_HOME the second is told why the index stays in
#    memory.
# usage: fuse_index.sh   (TRACEMOUNT and TRACETOOL in the environment)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
fuse_prologue
mkdir -p "$SRC" ref ttcache

gen_din 31 120000 >a.din
gen_din 32 60000 32 misc >m.din
gen_lackey 33 40000 >l.lackey
"$TT" pack --frame-size 65536 a.din "$SRC/a.pdt2.zst" || fail "pack a.pdt2.zst"
"$TT" pack m.din "$SRC/m.pdt.gz" || fail "pack m.pdt.gz"
"$TT" pack l.lackey "$SRC/l.pdt2.zst" || fail "pack l.pdt2.zst"
# a record trace too (the record index file): a heaptrack recording as HATF
"$TT" pack "$here/../data/heap/heapprog.heaptrack" "$SRC/h.hatf.zst" >/dev/null ||
        fail "pack h.hatf.zst"
traces="a.pdt2.zst m.pdt.gz l.pdt2.zst h.hatf.zst"

# references: tracetool with its own cache, nothing written beside
ttref() { "$TT" "$1" --no-index-beside --cache-dir "$T/ttcache" "${@:2}"; }
for tr in $traces; do
        for v in $(ttref views "$SRC/$tr"); do
                f=ref/$tr/$v
                mkdir -p "$(dirname "$f")"
                ttref cat "$SRC/$tr" "$v" >"$f" || fail "tracetool cat $tr $v"
        done
done

# every view of every trace under mount point $1 equals the reference; with
# $2 (a reason), a side file refused for it may be named in stats ("side
# file" lines, left out of the comparison), in stats.json (its side_files,
# emptied: the test's paths hold no ']') and in errors
views_exact() {
        local m=$1 why=${2:-} tr v bad=0
        for tr in $traces; do
                [ -d "ref/$tr" ] || { echo "no reference views of $tr" >&2; bad=1; }
                for v in $(cd "ref/$tr" && find . -type f | sed 's|^\./||'); do
                        if [ -n "$why" ] && [ "$v" = stats ]; then
                                grep -v '^side file  ' "$m/$tr/$v" | cmp -s "ref/$tr/$v" - && continue
                        elif [ -n "$why" ] && [ "$v" = stats.json ]; then
                                sed 's/"side_files":\[[^]]*\]/"side_files":[]/' "$m/$tr/$v" |
                                        cmp -s "ref/$tr/$v" - && continue
                        elif [ -n "$why" ] && [ "$v" = errors ] && [ -s "$m/$tr/$v" ]; then
                                grep -q "$why" "$m/$tr/$v" && continue
                        else
                                cmp -s "ref/$tr/$v" "$m/$tr/$v" && continue
                        fi
                        echo "differs: $m/$tr/$v" >&2
                        bad=1
                done
        done
        return $bad
}

# the index beside $SRC/$1 (or in cache dir $2) is valid: verify loads it
# and compares it with a fresh pass
verify_ok() {
        local out
        if [ -n "${2:-}" ]; then
                out=$("$TT" verify --no-index-beside --cache-dir "$2" "$SRC/$1" 2>&1)
        else
                out=$("$TT" verify "$SRC/$1" 2>&1)
        fi
        echo "$out" | grep -q ": ok$" || { echo "verify $1: $out" >&2; return 1; }
}

# --- 1. planted symlinks ---
printf 'precious, not an index\n' >victim
cp victim victim.orig
ln -s "$T/victim" "$SRC/.a.pdt2.zst.tmidx"
mount_tm "$T/log1" "$T/mnt1" "$SRC" || { fail "mount"; finish; }
check "symlink at the index path: views byte-exact" views_exact "$T/mnt1" "a symlink, not followed"
umount_tm "$T/mnt1"
check "symlink at the index path: its target unchanged" cmp -s victim victim.orig
check "symlink at the index path: replaced by a regular file" \
        sh -c "test -f '$SRC/.a.pdt2.zst.tmidx' && test ! -L '$SRC/.a.pdt2.zst.tmidx'"
check "symlink at the index path: the index written instead is valid" verify_ok a.pdt2.zst
rm -f "$SRC"/.*.tmidx

ln -s "$T/victim" "$T/cachelink"
mount_tm "$T/log2" "$T/mnt2" --no-index-beside --cache-dir "$T/cachelink" "$SRC" ||
        { fail "mount"; finish; }
check "cache dir a symlink to a file: views byte-exact" views_exact "$T/mnt2"
umount_tm "$T/mnt2"
check "cache dir a symlink to a file: the file unchanged" cmp -s victim victim.orig
out=$("$TT" index --no-index-beside --cache-dir "$T/cachelink" "$SRC/a.pdt2.zst" 2>&1)
check "cache dir a symlink to a file: the reason is printed" \
        sh -c "echo '$out' | grep -q 'index in memory only: .*cachelink.*Not a directory'"

mkdir "$T/cache3"
mount_tm "$T/log3" "$T/mnt3" --no-index-beside --cache-dir "$T/cache3" "$SRC" ||
        { fail "mount"; finish; }
check "cache dir: views byte-exact" views_exact "$T/mnt3"
umount_tm "$T/mnt3"
ixa=$(ls "$T"/cache3/*-a.pdt2.zst.tmidx 2>/dev/null | head -1)
check "cache dir: index written there" test -f "$ixa"
rm -f "$ixa"
ln -s "$T/victim" "$ixa"
mount_tm "$T/log3" "$T/mnt3" --no-index-beside --cache-dir "$T/cache3" "$SRC" ||
        { fail "mount"; finish; }
check "symlink in the cache dir: views byte-exact" views_exact "$T/mnt3" "a symlink, not followed"
umount_tm "$T/mnt3"
check "symlink in the cache dir: its target unchanged" cmp -s victim victim.orig
check "symlink in the cache dir: replaced by a valid index" \
        sh -c "test ! -L '$ixa' && test -f '$ixa'"
check "symlink in the cache dir: the index is valid" verify_ok a.pdt2.zst "$T/cache3"

# --- 2. two daemons racing to write one index ---
race_bad=0
for round in 1 2 3; do
        rm -f "$SRC"/.*.tmidx
        mount_tm "$T/logA$round" "$T/mntA" "$SRC" || { fail "mount A"; break; }
        pidA=$MNT_PID
        mount_tm "$T/logB$round" "$T/mntB" "$SRC" || { fail "mount B"; break; }
        pidB=$MNT_PID
        pids=
        for m in "$T/mntA" "$T/mntB"; do
                for tr in $traces; do
                        (
                                for v in $(cd "ref/$tr" && find . -type f | sed 's|^\./||' | sort -R); do
                                        cmp -s "ref/$tr/$v" "$m/$tr/$v" || { echo "round $round: differs: $m/$tr/$v" >&2; exit 1; }
                                done
                        ) &
                        pids="$pids $!"
                done
        done
        for p in $pids; do
                wait "$p" || race_bad=$((race_bad + 1))
        done
        MNT_PID=$pidB
        umount_tm "$T/mntB"
        MNT_PID=$pidA
        umount_tm "$T/mntA"
        for tr in $traces; do
                verify_ok "$tr" || { echo "round $round: index of $tr not valid" >&2; race_bad=$((race_bad + 1)); }
        done
        left=$(ls -A "$SRC" | grep -c '\.tmidx\.')
        [ "$left" -eq 0 ] || { echo "round $round: $left temporary index files left" >&2; race_bad=$((race_bad + 1)); }
done
check "two daemons racing, 3 rounds x 8 concurrent readers: byte-exact, indexes valid, no temporary left" test "$race_bad" -eq 0

# --- 3. a lab's shared cache ---
if [ "$(id -u)" -ne 0 ]; then
        echo "SKIP: shared-cache part: needs root to create the users tm_idx_a and tm_idx_b" >&2
        echo "SKIP: shared-cache part: needs root to create the users tm_idx_a and tm_idx_b"
        finish
fi
if ! command -v useradd >/dev/null || ! command -v runuser >/dev/null; then
        echo "SKIP: shared-cache part: useradd or runuser missing" >&2
        finish
fi
# fusermount3 opens /dev/fuse with the user's own rights: where the device
# is root's only (0600 in some containers; Debian's udev makes it 0666),
# the second user's daemon gets it for this test, and the mode back after
fuse_mode=$(stat -c %a /dev/fuse 2>/dev/null)
users_cleanup() {
        userdel tm_idx_a 2>/dev/null
        userdel tm_idx_b 2>/dev/null
        groupdel tm_idx_g 2>/dev/null
        [ -n "$fuse_mode" ] && chmod "$fuse_mode" /dev/fuse 2>/dev/null
}
trap 'users_cleanup; cleanup' EXIT
users_cleanup
groupadd tm_idx_g || fail "groupadd"
useradd -M -N -g users -G tm_idx_g -s /bin/sh tm_idx_a || fail "useradd tm_idx_a"
useradd -M -N -g users -G tm_idx_g -s /bin/sh tm_idx_b || fail "useradd tm_idx_b"
chmod 755 "$T"
mkdir -p "$T/arch" "$T/lab"
cp "$SRC/a.pdt2.zst" "$T/arch/"
chmod 755 "$T/arch"             # archives read-only for the users: indexes go to the cache
chgrp tm_idx_g "$T/lab"
chmod 3775 "$T/lab"             # docs/shared-cache.md: setgid, sticky, group-writable
as() { local u=$1; shift; runuser -u "$u" -- env HOME=/nonexistent "$@"; }

out=$(as tm_idx_a "$TT" index --cache-dir "$T/lab" "$T/arch/a.pdt2.zst" 2>&1)
check "lab: the first user builds into the shared cache" sh -c "echo '$out' | grep -q 'index $T/lab/.*(built)'"
ix=$(ls "$T"/lab/*-a.pdt2.zst.tmidx 2>/dev/null | head -1)
check "lab: the index file is its writer's alone (0644), of the lab's group" \
        test "$(stat -c '%a %G %U' "$ix" 2>/dev/null)" = "644 tm_idx_g tm_idx_a"
before=$(stat -c '%i %Y' "$ix" 2>/dev/null)
uidb=$(id -u tm_idx_b)
own=${ix%.tmidx}.u$uidb.tmidx
out=$(as tm_idx_b "$TT" index --cache-dir "$T/lab" "$T/arch/a.pdt2.zst" 2>&1)
check "lab: an archive the first user cannot change: the second builds its own" \
        sh -c "echo '$out' | grep -q 'index $own (built)'"
check "lab: ... the first user's file untouched" test "$(stat -c '%i %Y' "$ix")" = "$before"
out=$(as tm_idx_b "$TT" index --cache-dir "$T/lab" "$T/arch/a.pdt2.zst" 2>&1)
check "lab: ... and loads its own next time" sh -c "echo '$out' | grep -q 'index $own (loaded)'"
rm -f "$own"
out=$(as tm_idx_b "$TT" index --trust-group-index --cache-dir "$T/lab" "$T/arch/a.pdt2.zst" 2>&1)
check "lab: with --trust-group-index the second user's tracetool loads the first's" \
        sh -c "echo '$out' | grep -q 'index $ix (loaded)'"
check "lab: the file is the first user's, untouched" test "$(stat -c '%i %Y' "$ix")" = "$before"

mkdir -p "$T/mntb"
chown tm_idx_b "$T/mntb"
[ -n "$fuse_mode" ] && chmod o+rw /dev/fuse
as tm_idx_b "$TRACEMOUNT" -f -o trust_group_index --cache-dir "$T/lab" "$T/arch" "$T/mntb" \
        >"$T/logb" 2>&1 &
pidb=$!
MNT_PIDS="$MNT_PIDS $pidb"
if wait_for 10 grep -qs " $T/mntb fuse" /proc/mounts; then
        # (a FUSE mount is its user's alone without allow_other: read as b)
        check "lab: the second user's daemon (-o trust_group_index) serves byte-exact views" \
                sh -c "runuser -u tm_idx_b -- cat '$T/mntb/a.pdt2.zst/ascii' | cmp -s ref/a.pdt2.zst/ascii -"
        check "lab: ... from the first user's index (same inode and mtime)" \
                test "$(stat -c '%i %Y' "$ix")" = "$before"
        check "lab: ... and wrote none of its own" test ! -e "$own"
        fusermount3 -u "$T/mntb" || fail "unmount the second user's mount"
        wait "$pidb"
        # without the option the daemon does not believe it: its own index
        as tm_idx_b "$TRACEMOUNT" -f --cache-dir "$T/lab" "$T/arch" "$T/mntb" >>"$T/logb" 2>&1 &
        pidb=$!
        MNT_PIDS="$MNT_PIDS $pidb"
        if wait_for 10 grep -qs " $T/mntb fuse" /proc/mounts; then
                check "lab: the second user's daemon without the option: byte-exact views" \
                        sh -c "runuser -u tm_idx_b -- cat '$T/mntb/a.pdt2.zst/ascii' | cmp -s ref/a.pdt2.zst/ascii -"
                check "lab: ... from an index of its own, beside the first's" test -s "$own"
                check "lab: ... the first's untouched" test "$(stat -c '%i %Y' "$ix")" = "$before"
                fusermount3 -u "$T/mntb" || fail "unmount the second user's mount"
        else
                fail "lab: the second user's daemon did not mount again"
        fi
        wait "$pidb"
        rm -f "$own"
else
        echo "SKIP: lab: a daemon as tm_idx_b cannot mount here: $(cat "$T/logb")" >&2
        echo "SKIP: lab: a daemon as tm_idx_b cannot mount here"
        kill "$pidb" 2>/dev/null
fi

# archives in a directory of the group (any member could replace them):
# the first user's index is believed without the option
mkdir -p "$T/garch"
cp "$SRC/a.pdt2.zst" "$T/garch/"
chgrp tm_idx_g "$T/garch"
chmod 2775 "$T/garch"
as tm_idx_a "$TT" index --no-index-beside --cache-dir "$T/lab" "$T/garch/a.pdt2.zst" >/dev/null 2>&1
gix=$(ls -t "$T"/lab/*-a.pdt2.zst.tmidx 2>/dev/null | grep -v "^$ix\$" | head -1)
out=$(as tm_idx_b "$TT" index --no-index-beside --cache-dir "$T/lab" "$T/garch/a.pdt2.zst" 2>&1)
check "lab: archives in the group's directory: the second user loads the first's index" \
        sh -c "[ -n '$gix' ] && echo '$out' | grep -q 'index $gix (loaded)'"

# an index in a 1777 cache written by someone outside the group: not
# believed, not replaced (sticky); the second user keeps its own beside it
gpasswd -d tm_idx_a tm_idx_g >/dev/null 2>&1
rm -f "$T"/lab/*
chmod 1777 "$T/lab"
chgrp users "$T/lab"
as tm_idx_a "$TT" index --cache-dir "$T/lab" "$T/arch/a.pdt2.zst" >/dev/null 2>&1
ix=$(ls "$T"/lab/*-a.pdt2.zst.tmidx 2>/dev/null | head -1)
own=${ix%.tmidx}.u$uidb.tmidx
before=$(stat -c '%i %Y' "$ix" 2>/dev/null)
out=$(as tm_idx_b "$TT" index --trust-group-index --cache-dir "$T/lab" "$T/arch/a.pdt2.zst" 2>&1)
check "1777 cache: another user's index is not believed, even with --trust-group-index" \
        sh -c "echo '$out' | grep -q 'index $own (built)'"
check "1777 cache: ... and not replaced" test "$(stat -c '%i %Y' "$ix")" = "$before"

# a shared XDG_CACHE_HOME (1777): the first user's tracemount/ is 0755
mkdir -m 1777 "$T/xdg"
as tm_idx_a env XDG_CACHE_HOME="$T/xdg" "$TT" index "$T/arch/a.pdt2.zst" >/dev/null 2>&1
out=$(as tm_idx_b env XDG_CACHE_HOME="$T/xdg" "$TT" stat "$T/arch/a.pdt2.zst" 2>&1)
check "shared XDG_CACHE_HOME: stat names the directory and the reason" \
        sh -c "echo '$out' | grep -q '^index  *index in memory only: $T/xdg/tracemount.*Permission denied'"
finish
