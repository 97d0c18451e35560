#!/bin/bash
# A root daemon shared with -o allow_other (default_permissions) cannot be
# made to read or write through a symlink a user swaps in (issue 33, items
# 1 and 2; docs/reliability.md, "Threat model"). The source holds a 1777
# "pub", a 0700 "priv" with root's 0600 file, and a root-owned 0755
# "rootdir". As uid 2001 (no group):
#   1. in pub: make d/f (its own file, larger than root's), read it through
#      the mount, then `mv d d.old; ln -s SRC/priv d` and read MNT/pub/d/f
#      again at once (the kernel still holds d and f): 10 tries, root's
#      bytes never printed;
#   2. start the index pass of its own trace pub/e/y.din.gz (cat stats),
#      and while it runs `mv e e.old; ln -s SRC/rootdir e`: 3 tries, no
#      file lands in rootdir, the index is written beside the archive where
#      it was (e.old).
# And a real directory swapped (no symlink): the open refuses the object
# the kernel was not told of (ESTALE), the kernel looks the path up again,
# and the new file reads whole, not cut to the old one's size.
# Both were proven attacks before the daemon opened by descriptor below
# its source root. Also: the user still reads its own file, a symlink of
# the source shows as a symlink with its target, and the swapped path
# fails with an error, not data. Run with TM_WALK=components too: the
# per-component walk (no openat2) must refuse the same.
# SKIPs loudly when not root (it must switch to uid 2001 and mount for
# others) or without /dev/fuse.
# usage: fuse_symlink_race.sh   (TRACEMOUNT and TRACETOOL in the environment)
here=$(dirname "$0")
. "$here/lib.sh"
need_programs
[ "$(id -u)" -eq 0 ] || skip "fuse_symlink_race needs root: it mounts with allow_other and switches to uid 2001"
command -v setpriv >/dev/null 2>&1 || skip "setpriv is missing"
need_fuse
setup_tmp
chmod 0755 "$T" # uid 2001 must reach the mount point and the source
cd "$T" || exit 1
U=2001
as_user() { setpriv --reuid=$U --regid=$U --clear-groups "$@"; }
as_user true || skip "cannot switch to uid $U with setpriv"
TT=$TRACETOOL
SRC=$T/src
MNT=$T/mnt

mkdir -p "$SRC/pub" "$SRC/priv" "$SRC/rootdir"
chmod 0755 "$SRC" "$SRC/rootdir"
chmod 1777 "$SRC/pub"
chmod 0700 "$SRC/priv"
secret="root-secret-$$-$RANDOM"
printf '%s\n' "$secret" >"$SRC/priv/f"
chmod 0600 "$SRC/priv/f"
# a trace whose index pass lasts long enough to swap its directory under
gen_din 7 3000000 >big.din
"$TT" pack big.din y.din.gz >/dev/null 2>&1 || fail "pack"
chmod 0644 y.din.gz
rm -f big.din

# attack1 MNT: 10 tries; prints how many printed root's bytes
attack1() {
        local mnt=$1 i leaks=0
        for i in $(seq 10); do
                as_user sh -c "cd '$SRC/pub' && rm -rf d d.old &&
                        mkdir d && head -c 8192 /dev/zero | tr '\\0' u >d/f &&
                        cat '$mnt/pub/d/f' >/dev/null &&
                        mv d d.old && ln -s '$SRC/priv' d &&
                        head -c 200 '$mnt/pub/d/f'" >"$T/a1.out" 2>&1
                grep -q "$secret" "$T/a1.out" && leaks=$((leaks + 1))
        done
        echo "$leaks"
}

# attack2 MNT: 3 tries of the index-pass swap
attack2() {
        local mnt=$1 i
        for i in 1 2 3; do
                as_user sh -c "cd '$SRC/pub' && rm -rf e e.old && mkdir e &&
                        cp '$T/y.din.gz' e/ && ls '$mnt/pub/e/y.din.gz/' >/dev/null &&
                        { cat '$mnt/pub/e/y.din.gz/stats' >/dev/null 2>&1 & p=\$!; } &&
                        sleep 0.1 && mv e e.old && ln -s '$SRC/rootdir' e; wait \$p" \
                        >/dev/null 2>&1
        done
}

for walk in openat2 components; do
        rm -rf "$SRC/pub"/* "$SRC/pub"/.[!.]* "$SRC/rootdir"/.[!.]* "$SRC/rootdir"/*
        if [ $walk = components ]; then
                export TM_WALK=components
        else
                unset TM_WALK
        fi
        mount_tm "$T/log.$walk" "$MNT" -o allow_other --log-file "$T/daemon.$walk.log" "$SRC" ||
                { fail "mount ($walk)"; finish; }

        check "$walk: uid $U cannot read priv/f directly through the mount" \
                sh -c "! setpriv --reuid=$U --regid=$U --clear-groups cat '$MNT/priv/f' >/dev/null 2>&1"
        leaks=$(attack1 "$MNT")
        check "$walk: attack 1 (directory swapped for a symlink to priv): root's bytes printed 0 times of 10 (got $leaks)" \
                test "$leaks" -eq 0
        check "$walk: attack 1: the swapped path gives an error, not data" \
                grep -qi 'too many levels\|stale' "$T/a1.out"
        # the same swap with a real directory (no symlink): the open finds
        # another object than the kernel was told of (ESTALE), the kernel
        # looks the path up again, and the new file reads whole, not cut to
        # the size the kernel held for the old one
        as_user sh -c "cd '$SRC/pub' && rm -rf r r.old && mkdir r &&
                head -c 8192 /dev/zero | tr '\\0' u >r/f && cat '$MNT/pub/r/f' >/dev/null &&
                mv r r.old && mkdir r && head -c 16384 /dev/zero | tr '\\0' v >r/f &&
                cat '$MNT/pub/r/f'" >"$T/a1b.out" 2>&1
        check "$walk: a real directory swapped: the new file reads whole (16384 bytes, got $(wc -c <"$T/a1b.out"))" \
                sh -c "head -c 16384 /dev/zero | tr '\\0' v | cmp -s - '$T/a1b.out'"
        check "$walk: the user still reads its own file (moved) byte for byte" \
                sh -c "head -c 8192 /dev/zero | tr '\\0' u | cmp -s - '$MNT/pub/d.old/f'"
        sleep 1.2 # the kernel's entry for d (a directory) expires
        check "$walk: a symlink of the source shows as a symlink, its target as written" \
                test "$(readlink "$MNT/pub/d")" = "$SRC/priv"

        attack2 "$MNT"
        check "$walk: attack 2 (directory swapped during the index pass): nothing written in the root-owned directory" \
                test -z "$(ls -A "$SRC/rootdir")"
        check "$walk: attack 2: the index is written beside the archive where it was (e.old)" \
                wait_for 10 test -f "$SRC/pub/e.old/.y.din.gz.tmidx"
        check "$walk: attack 2: the user's trace still reads right" \
                bash -c "cmp -s '$MNT/pub/e.old/y.din.gz/ascii' <('$TT' cat '$T/y.din.gz' ascii)"
        umount_tm "$MNT"
done
ls -la "$SRC/rootdir" >&2
finish
