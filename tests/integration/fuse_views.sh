#!/bin/bash
# tracemount reads: every view of traces packed into several formats and
# containers, read through the mount with everyday tools (grep -c, awk,
# perl, tail, wc, dd at random offsets, cmp), equals the same operation on
# `tracetool cat` and on the generated text; the trace shows as a
# directory, other files pass through byte-identical, index files are
# hidden, concurrent readers agree; unmount is clean.
# usage: fuse_views.sh   (TRACEMOUNT and TRACETOOL in the environment)
here=$(dirname "$0")
. "$here/lib.sh"
fuse_prologue
mkdir -p "$SRC/sub/deeper" ref

gen_din 21 250000 >a.din
gen_din 22 40000 32 misc >m.din
gen_din 23 30000 64 >w.din
gen_lackey 24 30000 >l.lackey
"$TT" pack --frame-size 65536 a.din "$SRC/a.pdt2.zst" || fail "pack a.pdt2.zst"
"$TT" pack a.din "$SRC/a.pdt.gz" || fail "pack a.pdt.gz"
"$TT" pack a.din "$SRC/sub/a.pdt2" || fail "pack a.pdt2"
"$TT" pack m.din "$SRC/m.din.zst" || fail "pack m.din.zst"
"$TT" pack m.din "$SRC/sub/deeper/m.pdt" || fail "pack m.pdt"
"$TT" pack w.din "$SRC/w.pdt2.gz" 2>/dev/null || fail "pack w.pdt2.gz"
"$TT" pack l.lackey "$SRC/l.pdt2.zst" || fail "pack l.pdt2.zst"
cp m.din "$SRC/plain-text.din"    # an uncompressed din text trace
head -c 200000 /dev/urandom >"$SRC/random.bin"
echo "just a note" >"$SRC/notes.txt"
: >"$SRC/empty"
ln -s a.pdt2.zst "$SRC/link-to-a"

# TM_MOUNT_OPTS: extra tracemount options for a second run of the same
# checks (meson runs this script plain and with --direct-io).
# shellcheck disable=SC2086
mount_tm "$T/log" "$MNT" -o allow_other $TM_MOUNT_OPTS "$SRC" || { fail "mount"; finish; }

# --- the tree ---
check "a.pdt2.zst is a directory" test -d "$MNT/a.pdt2.zst"
check "sub/deeper/m.pdt is a directory" test -d "$MNT/sub/deeper/m.pdt"
check "ls shows the archive names" test "$(ls "$MNT" | tr '\n' ' ')" = "a.pdt.gz a.pdt2.zst empty l.pdt2.zst link-to-a m.din.zst notes.txt plain-text.din random.bin sub w.pdt2.gz "
check "trace dir lists the views" test "$(ls "$MNT/a.pdt2.zst" | tr '\n' ' ')" = "ascii binary errors fields raw schema stats stats.json streams "
check "streams lists one file per type" test "$(ls "$MNT/a.pdt2.zst/streams" | sort | tr '\n' ' ')" = "$("$TT" views "$SRC/a.pdt2.zst" | sed -n 's|^streams/||p' | sort | tr '\n' ' ')"
check "fields lists type and address" test "$(ls "$MNT/a.pdt2.zst/fields" | tr '\n' ' ')" = "address type "
check "random.bin passes through" cmp -s "$SRC/random.bin" "$MNT/random.bin"
check "notes.txt passes through" cmp -s "$SRC/notes.txt" "$MNT/notes.txt"
check "empty file passes through" test -f "$MNT/empty" -a ! -s "$MNT/empty"
check "symlink passes through" test "$(readlink "$MNT/link-to-a")" = a.pdt2.zst
check "symlink to a trace leads to its views" cmp -s a.din "$MNT/link-to-a/ascii"
check "write is refused" sh -c "! echo x 2>/dev/null >'$MNT/notes.txt'"
check "no such view" test ! -e "$MNT/a.pdt2.zst/nothing"
check "a path under a plain file fails" sh -c "! stat '$MNT/notes.txt/x' 2>/dev/null"

# --- every view of every trace equals tracetool cat ---
traces="a.pdt2.zst a.pdt.gz sub/a.pdt2 m.din.zst sub/deeper/m.pdt w.pdt2.gz l.pdt2.zst plain-text.din"
for tr in $traces; do
        for v in $("$TT" views "$SRC/$tr"); do
                r=ref/$(echo "$tr/$v" | tr / _)
                "$TT" cat "$SRC/$tr" "$v" >"$r"
                check "$tr/$v size" test "$(stat -c %s "$MNT/$tr/$v")" -eq "$(stat -c %s "$r")"
                check "$tr/$v content" cmp -s "$r" "$MNT/$tr/$v"
        done
done
# ... and the generated text
check "a.pdt2.zst/ascii == generated" cmp -s a.din "$MNT/a.pdt2.zst/ascii"
check "a.pdt.gz/ascii == generated" cmp -s a.din "$MNT/a.pdt.gz/ascii"
check "m.din.zst/ascii == generated" cmp -s m.din "$MNT/m.din.zst/ascii"
check "w.pdt2.gz/ascii == generated" cmp -s w.din "$MNT/w.pdt2.gz/ascii"
check "streams/read == awk filter" cmp -s <(awk '$1 == 0' a.din) "$MNT/a.pdt2.zst/streams/read"
check "streams/misc == awk filter" cmp -s <(awk '$1 == 3' m.din) "$MNT/sub/deeper/m.pdt/streams/misc"
check "fields/type == awk column 1" cmp -s <(awk '{print $1}' a.din) "$MNT/a.pdt2.zst/fields/type"
check "fields/address == awk column 2" cmp -s <(awk '{print $2}' w.din) "$MNT/w.pdt2.gz/fields/address"

# --- everyday tools on the mount vs on tracetool cat ---
for tr in a.pdt2.zst a.pdt.gz m.din.zst; do
        A=$MNT/$tr/ascii
        R=ref/${tr}_ascii
        check "$tr grep -c ifetch" test "$(grep -c '^2 ' "$A")" = "$(grep -c '^2 ' "$R")"
        check "$tr awk sum of types" test "$(awk '{s += $1} END {print s}' "$A")" = "$(awk '{s += $1} END {print s}' "$R")"
        check "$tr awk address digits" test "$(awk '{n += length($2)} END {print n}' "$A")" = "$(awk '{n += length($2)} END {print n}' "$R")"
        check "$tr perl count of writes" test "$(perl -ne '$n++ if /^1 /; END {print $n + 0}' "$A")" = "$(perl -ne '$n++ if /^1 /; END {print $n + 0}' "$R")"
        check "$tr tail -n 5" test "$(tail -n 5 "$A")" = "$(tail -n 5 "$R")"
        check "$tr wc -l" test "$(wc -l <"$A")" = "$(wc -l <"$R")"
        check "$tr grep -c streams/write" test "$(grep -c . "$MNT/$tr/streams/write")" = "$(grep -c '^1 ' "$R")"
done

# dd at random offsets, small and large blocks, in several views
RANDOM=7
bad=0
n=0
for tr in a.pdt2.zst a.pdt.gz w.pdt2.gz; do
        for v in ascii binary raw streams/read streams/ifetch; do
                f=$MNT/$tr/$v
                r=ref/$(echo "$tr/$v" | tr / _)
                size=$(stat -c %s "$r")
                [ "$size" -gt 0 ] || continue
                for i in 1 2 3 4 5 6; do
                        k=$(( (RANDOM * 32768 + RANDOM) % size ))
                        c=$(( RANDOM % 300 + 1 ))
                        cmp -s <(dd if="$f" bs=1 skip=$k count=$c 2>/dev/null) \
                               <(dd if="$r" bs=1 skip=$k count=$c 2>/dev/null) || { bad=$((bad + 1)); echo "dd bs=1 $tr/$v skip=$k count=$c differs" >&2; }
                        kb=$(( k / 4096 ))
                        cmp -s <(dd if="$f" bs=4096 skip=$kb count=3 2>/dev/null) \
                               <(dd if="$r" bs=4096 skip=$kb count=3 2>/dev/null) || { bad=$((bad + 1)); echo "dd bs=4096 $tr/$v skip=$kb differs" >&2; }
                        km=$(( k / 1048576 ))
                        cmp -s <(dd if="$f" bs=1M skip=$km count=2 2>/dev/null) \
                               <(dd if="$r" bs=1M skip=$km count=2 2>/dev/null) || { bad=$((bad + 1)); echo "dd bs=1M $tr/$v skip=$km differs" >&2; }
                        n=$((n + 3))
                done
                # the last bytes and reads past the end
                cmp -s <(tail -c 37 "$f") <(tail -c 37 "$r") || { bad=$((bad + 1)); echo "tail -c $tr/$v differs" >&2; }
                test -z "$(dd if="$f" bs=1 skip=$size count=10 2>/dev/null)" || { bad=$((bad + 1)); echo "read past end of $tr/$v" >&2; }
        done
done
check "$n dd reads at random offsets equal tracetool cat" test "$bad" -eq 0

# concurrent readers of one file and of different files
pids=
for i in 1 2 3 4; do
        ( cmp -s ref/a.pdt2.zst_ascii "$MNT/a.pdt2.zst/ascii" && echo same >"conc.$i" ) &
        pids="$pids $!"
done
( cmp -s ref/a.pdt.gz_binary "$MNT/a.pdt.gz/binary" && echo same >conc.5 ) &
pids="$pids $!"
wait $pids
check "5 concurrent readers agree" test "$(cat conc.* 2>/dev/null | wc -l)" -eq 5

# index files are hidden from listings but exist in the source
check "index files exist beside the archives" test -n "$(ls -a "$SRC" | grep '\.tmidx$')"
check "index files are hidden in the mount" test -z "$(ls -a "$MNT" | grep '\.tmidx$')"
# mmap: served from the page cache normally; --direct-io bypasses the
# page cache, so mmap of a view is refused (documented in tracemount(1)).
mmap_same() {
        python3 -c 'import mmap, sys
with open(sys.argv[1], "rb") as f, mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ) as m:
    sys.exit(0 if m[:] == open(sys.argv[2], "rb").read() else 3)' "$@" 2>/dev/null
}
case " ${TM_MOUNT_OPTS:-} " in
*" --direct-io "*)
        mmap_same "$MNT/a.pdt2.zst/binary" ref/a.pdt2.zst_binary
        check "--direct-io: mmap of a view is refused" test $? -eq 1 ;;
*)
        check "mmap of binary equals tracetool cat" mmap_same "$MNT/a.pdt2.zst/binary" ref/a.pdt2.zst_binary ;;
esac
check "nothing logged for good traces" test ! -s "$T/log"

umount_tm "$MNT"
finish
