#!/bin/bash
# The native encoding's schema 2 (docs/formats/native.md): every example
# and fixture of every family but the address one, packed by `tracetool
# pack IN OUT.tmn` (no option), is a schema-2 file whose every view is the
# input's, byte for byte: ascii, binary, streams/..., fields/...,
# sections/...; stats, stats.json and schema too, once the lines that name
# the archive, its codec and its size are set aside (they differ by
# nature), and the .tmn's storage rows, checked apart: they add up to its
# size. Also the .tmn packed again is the same bytes.
# usage: ncol_views.sh   (TRACETOOL in the environment)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
[ -x "${TRACETOOL:-}" ] || { echo "TRACETOOL not set or not executable" >&2; exit 1; }
src=$(cd "$here/../.." && pwd)
setup_tmp
cd "$T" || exit 1
TT=$TRACETOOL

# The view v of archive a as compared: identity lines set aside.
view() {
        local a=$1 v=$2 codec
        case $v in
        stats) "$TT" cat "$a" stats | storage_cut | grep -v -E '^(trace|format|archive|raw) ' ;;
        stats.json) "$TT" cat "$a" stats.json | storage_cut |
                sed -E 's/"(archive|codec|container)":"[^"]*"//g; s/"(archive|raw)_bytes":[0-9]+//g' ;;
        schema) codec=$("$TT" cat "$a" stats | sed -n 's/^format *\([^ ]*\) .*/\1/p')
                "$TT" cat "$a" schema | sed "s|this $codec trace|this CODEC trace|; s|// $codec tag|// CODEC tag|" ;;
        *) "$TT" cat "$a" "$v" ;;
        esac
}

one() {
        local in=$1 name fam bad=0 n=0 v hl
        name=$(basename "$in")
        fam=$("$TT" cat "$in" stats 2>/dev/null | sed -n 's/^format .*(\(.*\) family).*/\1/p')
        [ -n "$fam" ] && [ "$fam" != address ] || return 0
        "$TT" pack "$in" "$name.tmn" 2>"$name.err" || { fail "$name: pack: $(cat "$name.err")"; return; }
        [ "$(od -An -tu1 -j9 -N1 "$name.tmn" | tr -d ' ')" = 2 ] ||
                { fail "$name: $name.tmn is not schema 2"; return; }
        hl=$(od -An -tu1 -j12 -N1 "$name.tmn" | tr -d ' ') # the file's block-log2
        check "$name: pack reports the block-log2 written ($hl)" grep -q "block-log2 $hl:" "$name.err"
        "$TT" views "$in" >"$name.views"
        check "$name: the same views" cmp -s "$name.views" <("$TT" views "$name.tmn")
        while read -r v; do
                [ "$v" = raw ] && continue
                view "$in" "$v" >a.out 2>&1
                view "$name.tmn" "$v" >b.out 2>&1
                cmp -s a.out b.out || { fail "$name ($fam): view $v differs"; bad=1; }
                n=$((n + 1))
        done <"$name.views"
        [ $bad = 0 ] && ok "$name ($fam): $n views byte-identical through schema 2"
        storage_check "$name.tmn" "$in" "$name ($fam)"
        "$TT" pack "$name.tmn" "$name.again.tmn" 2>/dev/null
        check "$name: packed again, the same bytes" cmp -s "$name.tmn" "$name.again.tmn"
        count=$((count + 1))
}

count=0
for f in "$src"/examples/* "$src"/tests/data/{heap,java,laplace,ptf}/*; do
        case $f in *.c | *.sh | *.py | *.txt | *README*) continue ;; esac
        [ -f "$f" ] && one "$f"
done
check "inputs of four families or more were tried ($count)" [ "$count" -ge 8 ]
finish
