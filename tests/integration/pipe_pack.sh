#!/bin/bash
# tracetool pack reading its input from a pipe ('-'): address traces (din
# and lackey text) and heap traces (HATF, Meta-TF, a glibc mtrace log)
# packed from stdin equal the same input packed from a file, byte for byte
# through `tracetool cat` (ascii and binary), and the input's own ascii.
# usage: pipe_pack.sh   (TRACETOOL in the environment)
here=$(dirname "$0")
. "$here/lib.sh"
need_programs
setup_tmp
cd "$T" || exit 1
TT=$TRACETOOL
SRC=${TM_SOURCE_DIR:-$here/../..}

# same IN OUT [exact]: pack IN from the file and from a pipe into OUT's
# format; the views of both are equal; with exact, their ascii is IN's too
same() {
        local in=$1 out=$2 v
        "$TT" pack "$in" "file.$out" 2>/dev/null || { fail "pack $in $out from the file"; return; }
        cat "$in" | "$TT" pack - "pipe.$out" 2>/dev/null || { fail "pack - $out from a pipe"; return; }
        for v in ascii binary; do
                check "$in -> $out from a pipe, $v" \
                        cmp -s <("$TT" cat "file.$out" $v) <("$TT" cat "pipe.$out" $v)
        done
        check "$in -> $out from a pipe: ascii not empty" \
                test -n "$("$TT" cat "pipe.$out" ascii | head -c 1)"
        [ -n "${3:-}" ] || return 0
        check "$in -> $out from a pipe: ascii = the input's" \
                cmp -s <("$TT" cat "$in" ascii) <("$TT" cat "pipe.$out" ascii)
}

gen_din 7 50000 >a.din
gen_lackey 7 20000 >a.lackey
for out in a.pdt2.zst a.pdt.gz a.din; do same a.din "$out" exact; done
same a.lackey l.pdt2.zst exact
zstd -dc "$SRC/examples/sort.hatf.zst" >sort.hatf
zstd -dc "$SRC/examples/heapwork.mtf.zst" >heapwork.mtf
same sort.hatf h.hatf.zst exact
same sort.hatf h.mtf.zst exact
same heapwork.mtf h.hatf.zst
same heapwork.mtf h.mtf.zst
same "$SRC/tests/data/heap/heapprog.mtrace" m.hatf.zst
finish
