#!/bin/bash
# An archive rewritten in place under readers of the mount (issue 33 item
# 8, docs/damage.md "Rewritten under readers"): four reader processes read
# random ranges of `ascii` of a gzip trace and of a seekable-zstd trace,
# through the page cache and with --direct-io, while the archive is
# rewritten in place every 0.3 s with another version (the same din
# references with other addresses: the same view size; and a shorter
# trace: another size). Every read returns the bytes of one version's
# `ascii` at that offset (`tracetool cat` of each version beforehand) or
# fails with EIO: 0 reads of neither version, 0 reads of 0 bytes inside
# the size the reader's fstat gave. fuse_rewrite.py does the reads.
# usage: fuse_rewrite.sh   (TRACEMOUNT and TRACETOOL in the environment)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 not found"
fuse_prologue
SECS=${TM_REWRITE_SECONDS:-5}
mkdir -p "$SRC"

gen_din 33 150000 >a.din
# the same references, each address's last hex digit changed: same size
sed 's/0$/1/;t;s/1$/0/;t;s/8$/9/;t;s/9$/8/' a.din >b.din
gen_din 34 60000 >c.din
for ext in pdt2.gz pdt2.zst; do
        for v in a b c; do
                "$TT" pack --frame-size 65536 $v.din $v.$ext 2>/dev/null ||
                        "$TT" pack $v.din $v.$ext || fail "pack $v.$ext"
                "$TT" cat $v.$ext ascii >$v.$ext.ascii || fail "tracetool cat $v.$ext"
        done
        check "a.$ext and b.$ext have views of one size" \
                test "$(stat -c %s a.$ext.ascii)" = "$(stat -c %s b.$ext.ascii)"
        check "c.$ext has a view of another size" \
                test "$(stat -c %s a.$ext.ascii)" != "$(stat -c %s c.$ext.ascii)"
done

# MODE EXT SEED: one run of the readers and the writer
run() {
        local mode=$1 ext=$2 seed=$3 opts=
        [ "$mode" = direct ] && opts=--direct-io
        rm -f "$SRC"/*
        cp a.$ext "$SRC/t.$ext"
        mount_tm "tm.$mode.$ext.log" "$MNT" $opts "$SRC" || {
                fail "mount ($mode)"
                return
        }
        check "$mode, $ext: ascii matches version a before the rewrites" \
                cmp -s "$MNT/t.$ext/ascii" a.$ext.ascii
        check "$mode, $ext: every read is one version's bytes or EIO" \
                timeout 60 python3 "$here/fuse_rewrite.py" "$MNT/t.$ext/ascii" "$SRC/t.$ext" \
                "$SECS" "$seed" a.$ext=a.$ext.ascii b.$ext=b.$ext.ascii c.$ext=c.$ext.ascii
        # the last version written stays: a fresh read shows all of it
        local last
        for last in a b c; do
                cmp -s "$SRC/t.$ext" $last.$ext && break
        done
        check "$mode, $ext: after the rewrites ascii is version $last's" \
                wait_for 3 cmp -s "$MNT/t.$ext/ascii" $last.$ext.ascii
        umount_tm "$MNT"
}
run cache pdt2.gz 1
run cache pdt2.zst 2
run direct pdt2.gz 3
run direct pdt2.zst 4
finish
