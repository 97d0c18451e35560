#!/bin/bash
# The conventions of issue 15 that need a real program or an install:
#  1. libtracemount installed (meson install into a DESTDIR) with its
#     pkg-config file: tests/integration/libuse.c built with
#     `cc $(pkg-config --cflags --libs tracemount)` reads every view of an
#     example archive byte-exact against `tracetool cat`; the man pages and
#     bash completions are installed too.
#  2. lackey's sizes and the xdin view: a real `valgrind --tool=lackey
#     --trace-mem=yes` run of a small program, packed (lackey.zst, sizes
#     kept) and mounted; xdin through the mount equals an awk transform of
#     the lackey log, and reads at random offsets agree with it; dineroIV
#     -informat D is run over it when installed (it is not downloaded).
# usage: fuse_xdin.sh   (TRACEMOUNT, TRACETOOL, TM_BUILD, TM_SOURCE_DIR)
here=$(dirname "$0")
. "$here/lib.sh"
need_programs
setup_tmp
cd "$T" || exit 1
TT=$TRACETOOL
SRC_DIR=${TM_SOURCE_DIR:-$here/../..}

# --- 1. the installed library ---
if [ -z "${TM_BUILD:-}" ] || ! command -v pkg-config >/dev/null || ! command -v cc >/dev/null; then
        fail "TM_BUILD, pkg-config and cc are needed for the install check"
else
        D=$T/destdir
        meson install -C "$TM_BUILD" --destdir "$D" --no-rebuild --quiet >install.log 2>&1
        check "meson install into DESTDIR" test $? -eq 0
        pc=$(find "$D" -name tracemount.pc | head -n 1)
        check "tracemount.pc installed" test -n "$pc"
        check "view.h installed under include/tracemount/" test -n "$(find "$D" -path '*/include/tracemount/views/view.h')"
        check "tracetool.1 installed" test -n "$(find "$D" -name tracetool.1)"
        check "bash completion installed" test -n "$(find "$D" -path '*/bash-completion/completions/tracetool')"
        check "libtracemount installed" test -n "$(find "$D" -name 'libtracemount.*')"
        # the include paths of view.h must resolve inside the install, not in the tree
        export PKG_CONFIG_PATH=${pc%/*} PKG_CONFIG_SYSROOT_DIR=$D
        flags=$(pkg-config --cflags --libs tracemount)
        check "pkg-config --cflags --libs tracemount" test $? -eq 0 -a -n "$flags"
        # a sanitizer build installs an instrumented library: its users link the runtime
        san=$(grep -o -- '-fsanitize=[a-z,]*' "$TM_BUILD/build.ninja" | head -n 1)
        # shellcheck disable=SC2086
        cc -std=c11 -Wall -Werror $san -o libuse "$SRC_DIR/tests/integration/libuse.c" $flags 2>cc.log
        check "libuse.c builds against the installed library" test $? -eq 0
        cat cc.log >&2
        unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
        for a in sort.pdt2.zst true.lackey.gz; do
                cp "$SRC_DIR/examples/$a" .
                for v in $("$TT" views "$a"); do
                        check "libuse $a $v == tracetool cat" cmp -s <(./libuse "$a" "$v") <("$TT" cat "$a" "$v")
                done
        done
fi

# --- 2. a real lackey trace, its sizes and the xdin view ---
command -v valgrind >/dev/null || skip "valgrind not installed: no real lackey trace"
need_fuse
lackey_prog
awk '/^(==|--)[0-9]+(==|--)/ { next }
     { split($2, f, ","); a = tolower(f[1]); sub(/^0+/, "", a); if (a == "") a = "0"
       s = sprintf("%03x", f[2] + 0)
       if ($1 == "I") print "i " a " " s; else if ($1 == "L") print "r " a " " s
       else if ($1 == "S") print "w " a " " s; else if ($1 == "M") { print "r " a " " s; print "w " a " " s } }' \
        prog.lk >want.xdin
check "the log has sizes other than 1, 4 and 8" grep -q ' 0[0-9a-f][^148]$\| 0[1-9a-f][0-9a-f]$' want.xdin
mkdir -p src
"$TT" pack prog.lk src/prog.lackey.zst || fail "pack prog.lackey.zst"
cp prog.lk src/prog.lackey # the log itself, valgrind lines and all
mount_tm "$T/log" "$T/mnt" src || { fail "mount"; finish; }
for a in prog.lackey.zst prog.lackey; do
        check "$a: xdin listed" test -f "mnt/$a/xdin"
        check "$a: xdin == awk over the lackey log" cmp -s want.xdin "mnt/$a/xdin"
        check "$a: xdin size == awk's" test "$(stat -c %s "mnt/$a/xdin")" -eq "$(stat -c %s want.xdin)"
        size=$(stat -c %s want.xdin)
        bad=0
        for i in $(seq 40); do
                off=$(( (RANDOM * 32768 + RANDOM) % size ))
                len=$(( 1 + RANDOM % 5000 ))
                cmp -s <(dd if="mnt/$a/xdin" bs=1 skip="$off" count="$len" iflag=skip_bytes,count_bytes 2>/dev/null) \
                        <(tail -c +$((off + 1)) want.xdin | head -c "$len") || bad=$((bad + 1))
        done
        check "$a: 40 reads at random offsets agree" test "$bad" -eq 0
        check "$a: ascii is xdin without sizes, types as digits" cmp -s "mnt/$a/ascii" \
                <(awk '{ t = $1 == "r" ? 0 : $1 == "w" ? 1 : 2; print t, $2 }' want.xdin)
done
if command -v dineroIV >/dev/null; then
        dineroIV -l1-usize 8k -l1-ubsize 16 -informat D <mnt/prog.lackey.zst/xdin >dinero.txt 2>&1
        check "dineroIV -informat D reads xdin" test $? -eq 0
else
        echo "note: dineroIV is not installed here: xdin was not fed to it (not downloaded)"
fi
umount_tm "$T/mnt"
finish
