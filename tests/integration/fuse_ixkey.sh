#!/bin/bash
# Index keys that sshfs cannot fool (issue 33, item 6; docs/network-fs.md):
# over sshfs (a private sshd on loopback, sshfs_lib.sh) mtimes have 1 s
# resolution and there is no stable inode, so an index is keyed on the
# archive's size, mtime and a fingerprint of its content. Two traces of
# equal size and equal mtime (`touch -r`) on the share, each indexed
# beside it through sshfs, then one's index copied over the other's on the
# server: every view of that trace (stats and stats.json included, their
# path and side-file lines aside) equals the same view of a local copy of
# the server's file with no index, and the traces' stats differ (the test
# is not vacuous); the same through a tracemount mount of the share.
# Plain din traces that differ in their first line.
# SKIPs loudly when sshd or sshfs cannot start.
# usage: fuse_ixkey.sh   (TRACEMOUNT and TRACETOOL in the environment)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/sshfs_lib.sh"
need_programs
need_fuse
setup_tmp
trap 'ssh_stop; cleanup' EXIT
cd "$T" || exit 1
TT=$TRACETOOL
SRV=$T/server
SHARE=$T/share
mkdir -p "$SRV" ref "$T/cache"
ssh_start "$T/ssh" || skip "no sshd on loopback here: $SSH_WHY"
sshfs_mount "$SRV" "$SHARE" || skip "sshfs cannot mount from the private sshd"

# A view of a trace as text to compare: stats without the lines naming the
# index file or side files, stats.json without its side_files.
view_of() { # view_of ARCHIVE VIEW
        "$TT" cat --cache-dir "$T/cache" "$1" "$2" 2>/dev/null | filter "$2"
}
filter() { # filter VIEW: stdin without what names files
        case $1 in
        stats) grep -v '^\(index\|side file\) ' ;;
        stats.json) sed 's/"side_files":\[[^]]*\]/"side_files":[]/' ;;
        *) cat ;;
        esac
}

# same_views ARCHIVE REF: every view of ARCHIVE equals REF's; prints the
# first that differs.
same_views() {
        local v
        for v in $("$TT" views --cache-dir "$T/cache" "$2"); do
                [ "$v" = errors ] && continue
                if ! cmp -s <(view_of "$1" "$v") <(view_of "$2" "$v"); then
                        echo "view $v of $1 differs" >&2
                        return 1
                fi
        done
        [ "$("$TT" views --cache-dir "$T/cache" "$1")" = "$("$TT" views --cache-dir "$T/cache" "$2")" ]
}

# mount_views DIR REF: every view in the trace directory DIR of a mount
# equals REF's (tracetool cat of a local copy); prints the first that
# differs.
mount_views() {
        local v n=0
        for v in $("$TT" views --cache-dir "$T/cache" "$2"); do
                [ "$v" = errors ] && continue
                if ! cmp -s <(filter "$v" <"$1/$v") <(view_of "$2" "$v"); then
                        echo "view $v of $1 differs" >&2
                        return 1
                fi
                n=$((n + 1))
        done
        [ "$n" -gt 3 ]
}

# The reference counts of a trace's stats.
counts() {
        "$TT" cat --cache-dir "$T/cache" "$1" stats 2>/dev/null | grep -v '^\(archive\|index\|side file\) '
}

stats_differ() {
        ! cmp -s <(counts "$1") <(counts "$2")
}

# index_says ARCHIVE WORD: tracetool index of ARCHIVE says "(WORD)".
index_says() {
        "$TT" index --cache-dir "$T/cache" "$1" 2>&1 | grep -q "($2)"
}

# swap_case NAME X Y: X and Y (local files of equal size) on the server as
# x.NAME and y.NAME with y's mtime x's, both indexed through sshfs; x's
# index copied over y's on the server; y read through sshfs.
swap_case() {
        local name=$1 x=$2 y=$3
        check "$name: the two archives have the same size" \
                test "$(stat -c %s "$x")" = "$(stat -c %s "$y")"
        cp "$x" "$SRV/x.$name"
        cp "$y" "$SRV/y.$name"
        touch -r "$SRV/x.$name" "$SRV/y.$name"
        cp "$y" "ref/y.$name"
        "$TT" index --cache-dir "$T/cache" "$SHARE/x.$name" >/dev/null 2>&1
        "$TT" index --cache-dir "$T/cache" "$SHARE/y.$name" >/dev/null 2>&1
        check "$name: both indexes written beside the archives through sshfs" \
                test -s "$SRV/.x.$name.tmidx" -a -s "$SRV/.y.$name.tmidx"
        check "$name: the traces' stats differ" stats_differ "$SHARE/x.$name" "$SHARE/y.$name"
        check "$name: sshfs shows them with equal size and mtime" \
                test "$(stat -c '%s %Y' "$SHARE/x.$name")" = "$(stat -c '%s %Y' "$SHARE/y.$name")"
        cp "$SRV/.x.$name.tmidx" "$SRV/.y.$name.tmidx"
        check "$name: with the other's index beside it, the index is built again" \
                index_says "$SHARE/y.$name" built
        check "$name: ... and loaded next time" index_says "$SHARE/y.$name" loaded
        cp "$SRV/.x.$name.tmidx" "$SRV/.y.$name.tmidx"
        check "$name: with the other's index beside it, every view is the archive's own" \
                same_views "$SHARE/y.$name" "ref/y.$name"
        cp "$SRV/.x.$name.tmidx" "$SRV/.y.$name.tmidx"
        if mount_tm "$T/log" "$T/mnt" --cache-dir "$T/cache" "$SHARE"; then
                check "$name: ... and through a mount of the share" \
                        mount_views "$T/mnt/y.$name" "ref/y.$name"
                umount_tm "$T/mnt"
        else
                fail "$name: mount the share"
        fi
}

# plain din: the first reference of one is a write, of the other a read
gen_din 51 3000 >x.din
{ printf 1; tail -c +2 x.din; } >y.din
{ printf 0; tail -c +2 x.din; } >x0.din
swap_case din x0.din y.din
finish
