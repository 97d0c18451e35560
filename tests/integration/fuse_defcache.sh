#!/bin/bash
# The default cache directory (no --cache-dir: $HOME/.cache/tracemount of
# the daemon's user) is opened once, at mount, and index files are written
# through that descriptor, never through its path (docs/reliability.md,
# "Threat model"):
# - a mount with a fresh $HOME makes the directory at mount;
# - after mount the (existing) directory is renamed and a symlink to another
#   directory put at its name; the index pass (--no-index-beside: into the
#   cache) writes into the renamed directory, nothing appears at the
#   symlink's target, the index there is valid (tracetool verify) and
#   ascii equals tracetool cat's;
# - a --cache-dir that is a symlink to a file: the daemon logs why the
#   index stays in memory ("index in memory only: DIR: Not a directory",
#   the reason of the open at mount) and writes nowhere.
# usage: fuse_defcache.sh   (TRACEMOUNT and TRACETOOL in the environment)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
fuse_prologue
unset XDG_CACHE_HOME
mkdir -p "$SRC" "$T/home" "$T/elsewhere"
gen_din 41 60000 >a.din
"$TT" pack a.din "$SRC/a.pdt2.zst" || fail "pack a.pdt2.zst"
HOME=$T/ttcache "$TT" cat --no-index-beside "$SRC/a.pdt2.zst" ascii >ref.ascii ||
        fail "tracetool cat the reference"
cache=$T/home/.cache/tracemount

# the default cache made at mount
HOME=$T/home0 mount_tm "$T/log0" "$T/mnt0" --no-index-beside "$SRC" || { fail "mount"; finish; }
check "default cache: made at mount" test -d "$T/home0/.cache/tracemount"
umount_tm "$T/mnt0"

# one that exists, renamed after mount, a symlink at its name
mkdir -p "$cache"
HOME=$T/home mount_tm "$T/log1" "$T/mnt1" --no-index-beside "$SRC" || { fail "mount"; finish; }
mv "$cache" "$cache.old"
ln -s "$T/elsewhere" "$cache"
check "default cache swapped: ascii byte-exact" cmp -s ref.ascii "$T/mnt1/a.pdt2.zst/ascii"
cat "$T/mnt1/a.pdt2.zst/stats" >/dev/null || fail "stats" # the index pass is over
umount_tm "$T/mnt1"
check "default cache swapped: nothing at the symlink's target" \
        test -z "$(ls -A "$T/elsewhere")"
ix=$(ls "$cache.old"/*-a.pdt2.zst.tmidx 2>/dev/null | head -1)
check "default cache swapped: the index in the directory opened at mount" test -f "$ix"
out=$("$TT" verify --no-index-beside --cache-dir "$cache.old" "$SRC/a.pdt2.zst" 2>&1)
check "default cache swapped: the index is valid" sh -c "echo '$out' | grep -q ': ok\$'"
rm -f "$cache"

# a cache directory that cannot be opened at mount: no path route later
printf 'not a directory\n' >"$T/victim"
cp "$T/victim" "$T/victim.orig"
ln -s "$T/victim" "$T/cachelink"
mount_tm "$T/log2" "$T/mnt2" --no-index-beside --cache-dir "$T/cachelink" "$SRC" ||
        { fail "mount"; finish; }
check "cache dir a symlink to a file: ascii byte-exact" cmp -s ref.ascii "$T/mnt2/a.pdt2.zst/ascii"
cat "$T/mnt2/a.pdt2.zst/stats" >/dev/null || fail "stats"
umount_tm "$T/mnt2"
check "cache dir a symlink to a file: the daemon says why the index is in memory" \
        grep -q "index in memory only: $T/cachelink: Not a directory" "$T/log2"
check "cache dir a symlink to a file: the file unchanged" cmp -s "$T/victim" "$T/victim.orig"
finish
