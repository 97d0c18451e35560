#!/bin/bash
# Damaged archives through the mount (issue 34 item 3, docs/damage.md): a
# trace cut inside its first zstd frame (one-frame and seekable), inside
# its gzip member, a zip cut before its directory, and empty gzip and zstd
# archives are trace directories: `ls` lists them, `errors` names the
# archive, the offset and the reason, ascii fails with EIO, and the reason
# is in --log-file. With -o unverified_prefix a half gzip member serves
# the lines zcat recovers, and says so in errors.
# usage: fuse_damaged.sh   (TRACEMOUNT and TRACETOOL in the environment)
here=$(dirname "$0")
. "$here/lib.sh"
fuse_prologue
need_cmd() { command -v "$1" >/dev/null 2>&1 || skip "$1 not found"; }
need_cmd zstd
need_cmd zip
mkdir -p "$SRC" "$MNT"

gen_din 34 60000 >a.din
"$TT" pack a.din a.pdt2 || fail "pack a.pdt2"
"$TT" pack --frame-size 65536 a.din a.pdt2.zst || fail "pack a.pdt2.zst"
"$TT" pack a.din a.pdt.gz || fail "pack a.pdt.gz"
zstd -q --single-thread -c a.pdt2 >one.pdt2.zst
cp a.pdt2 trace && zip -q a.zip trace
half() { head -c $(($(stat -c %s "$1") / 2)) "$1" >"$2"; }
half one.pdt2.zst "$SRC/one.pdt2.zst"
head -c 100 a.pdt2.zst >"$SRC/seek.pdt2.zst"
half a.pdt.gz "$SRC/half.pdt.gz"
half a.zip "$SRC/half.zip"
gzip -c </dev/null >"$SRC/empty.gz"
zstd -q -c </dev/null >"$SRC/empty.zst"

mount_tm log "$MNT" --log-file "$T/tm.log" "$SRC" || { fail "mount"; finish; }
# NAME WORDS [read]: without "read" the reason is logged once the
# directory is listed (the probe met it), with it once a view is read (the
# damage is met by the index pass: the codec's header was whole)
expect_dir() {
        local x=$MNT/$1
        check "$1 is a directory" test -d "$x"
        check "ls $1 lists errors" grep -qx errors <(ls "$x")
        [ "${3:-}" = read ] ||
                check "the log names $1 and '$2' once listed" grep -q "$SRC/$1: .*$2" "$T/tm.log"
        check "$1/errors names the archive and '$2'" grep -q "$SRC/$1: .*offset.*$2" "$x/errors"
        check "cat $1/ascii fails" bash -c "! cat '$x/ascii' >/dev/null 2>err.$1"
        check "... with EIO" grep -q "Input/output error" "err.$1"
        check "the log names $1 and '$2'" grep -q "$SRC/$1: .*$2" "$T/tm.log"
}
expect_dir one.pdt2.zst "archive ends inside a frame"
expect_dir seek.pdt2.zst "archive ends inside a frame"
expect_dir half.pdt.gz "archive ends inside a member" read
expect_dir half.zip "no end of central directory record"
expect_dir empty.gz "no raw bytes (empty)"
expect_dir empty.zst "no raw bytes (empty)"
umount_tm "$MNT"

# --- the unverified prefix of the half gzip member, on request ---
"$TT" cat a.pdt.gz ascii >whole.ascii || fail "tracetool cat a.pdt.gz"
"$TT" cat --unverified-prefix "$SRC/half.pdt.gz" ascii >half.ascii 2>half.err
check "tracetool cat --unverified-prefix fails at the damage" test $? -ne 0
check "... after the intact trace's first $(stat -c %s half.ascii) bytes" \
        cmp -s half.ascii <(head -c "$(stat -c %s half.ascii)" whole.ascii)
check "... which are more than a third of its lines" \
        test "$(wc -l <half.ascii)" -gt "$(($(wc -l <whole.ascii) / 3))"
check "... and says they are unverified" grep -q "unverified prefix served" half.err
mount_tm log2 "$MNT" -o unverified_prefix --direct-io "$SRC" || { fail "mount"; finish; }
check "mount -o unverified_prefix: errors says so" \
        grep -q "unverified prefix served" "$MNT/half.pdt.gz/errors"
n=$(($(stat -c %s half.ascii) - 131072))
check "... ascii serves the prefix" cmp -s <(head -c "$n" "$MNT/half.pdt.gz/ascii") \
        <(head -c "$n" half.ascii)
check "... stats counts its references" grep -q "unverified prefix served" "$MNT/half.pdt.gz/stats"
check "... a damaged zstd frame still serves nothing" \
        bash -c "! cat '$MNT/one.pdt2.zst/ascii' >/dev/null 2>&1"
umount_tm "$MNT"
finish
