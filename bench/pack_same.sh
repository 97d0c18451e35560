#!/usr/bin/env bash
# pack_same.sh: what `tracetool pack` writes, as two builds write it, byte for byte.
#
#   bench/pack_same.sh OLD_TRACETOOL NEW_TRACETOOL [TRACE...]
#
# For a change to pack that must not change its output: build the commit before it (git archive
# into a directory, meson setup, ninja there) and pass its tools/tracetool as OLD. Traces default
# to examples/* and the test fixtures (tests/data/{heap,ptf,laplace,java,fuzz}), plus din and
# lackey text made as the tests make theirs (tests/integration/lib.sh: 32-bit, with misc
# references, 64-bit with odd instruction offsets, lackey). Each trace is packed by both builds
# into every output OLD's pack writes (.din .pdt .pdt2 .lackey .hatf .mtf, plain, .gz, .zst),
# then with options (--addr-bits/--unit, --level, --frame-size, -e, --format/--compress to
# stdout) and from stdin. Compared: the exit status, and the bytes when both succeed. Prints one
# line a difference (and one for each output only NEW writes) and a summary; exit 1 if anything
# differs. PACK_SAME_VERBOSE=1 prints every case with both exit statuses.
set -u
[ $# -ge 2 ] || { sed -n '2,14p' "$0"; exit 2; }
old=$(realpath "$1") new=$(realpath "$2")
shift 2
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/pack_same.XXXXXX")
trap 'rm -rf "$work"' EXIT

traces=("$@")
if [ ${#traces[@]} -eq 0 ]; then
        for f in "$here"/examples/* "$here"/tests/data/{heap,ptf,laplace,java}/* \
                "$here"/tests/data/fuzz/*/*; do
                case $f in *.txt | *.sh | *.c | *.py) continue ;; esac
                traces+=("$f")
        done
        # shellcheck source=../tests/integration/lib.sh
        . "$here/tests/integration/lib.sh"
        mkdir -p "$work/gen"
        gen_din 11 20000 >"$work/gen/a.din"
        gen_din 14 20000 32 misc >"$work/gen/m.din"
        gen_din 12 20000 64 >"$work/gen/w.din"
        gen_lackey 13 20000 >"$work/gen/l.lackey"
        traces+=("$work/gen/a.din" "$work/gen/m.din" "$work/gen/w.din" "$work/gen/l.lackey")
fi

same=0 differ=0 newonly=0 bothfail=0

# one NAME ARGS...: pack with both builds (ARGS end with IN OUT, OUT's name without a
# directory, or '-' for stdout); stdin is a pipe giving $stdin_file
one() {
        local name=$1
        shift
        local out=${*: -1} ro rn
        mkdir -p "$work/old" "$work/new"
        rm -f "$work/old/$out" "$work/new/$out"
        (cd "$work/old" && cat "$stdin_file" | "$old" pack "$@" >"$work/old/stdout" 2>"$work/old/err")
        ro=$?
        (cd "$work/new" && cat "$stdin_file" | "$new" pack "$@" >"$work/new/stdout" 2>"$work/new/err")
        rn=$?
        local fo="$work/old/$out" fn="$work/new/$out"
        [ "$out" = - ] && fo="$work/old/stdout" fn="$work/new/stdout"
        [ -n "${PACK_SAME_VERBOSE:-}" ] && echo "$name: old $ro, new $rn"
        if [ $ro -ne 0 ] && [ $rn -ne 0 ]; then
                bothfail=$((bothfail + 1))
        elif [ $ro -ne 0 ]; then
                newonly=$((newonly + 1))
                echo "new only: $name (old: $(head -c 200 "$work/old/err" | tr '\n' ' '))"
        elif [ $rn -ne 0 ]; then
                differ=$((differ + 1))
                echo "DIFFERS: $name: new fails: $(head -c 300 "$work/new/err" | tr '\n' ' ')"
        elif cmp -s "$fo" "$fn"; then
                same=$((same + 1))
        else
                differ=$((differ + 1))
                echo "DIFFERS: $name: $(cmp "$fo" "$fn" 2>&1 | head -1)"
        fi
}

for t in "${traces[@]}"; do
        t=$(realpath "$t")
        b=$(basename "$t")
        stdin_file=/dev/null
        for f in din pdt pdt2 lackey hatf mtf; do
                for c in "" .gz .zst; do
                        one "$b -> .$f$c" "$t" "o.$f$c"
                done
        done
        for opts in "--addr-bits 64 --unit 2" "--addr-bits 32" "--unit 1" "--level 1" \
                "--frame-size 65536"; do
                # shellcheck disable=SC2086
                one "$b -> .pdt2.zst $opts" $opts "$t" o.pdt2.zst
        done
        one "$b -> .pdt.gz --level 9" --level 9 "$t" o.pdt.gz
        one "$b -> stdout din/gzip" --format din --compress gzip "$t" -
        one "$b -> stdout pdats2/zstd" --format pdats2 --compress zstd "$t" -
        for opts in "-e naive" "-e best --level 1" "--level 3" "-e stride --level 12"; do
                # shellcheck disable=SC2086
                one "$b -> .hatf.zst $opts" $opts "$t" o.hatf.zst
        done
        for opts in "-e hatf" "-e splitaddr" "--level 5"; do
                # shellcheck disable=SC2086
                one "$b -> .mtf.zst $opts" $opts "$t" o.mtf.zst
        done
        one "$b -> .hatf.gz -e smallsize" -e smallsize "$t" o.hatf.gz
        # from stdin: the raw stream, as a pipe gives it
        case $t in
        *.gz) gzip -dc "$t" >"$work/stdin" ;;
        *.zst) zstd -qdc "$t" >"$work/stdin" ;;
        *) cp "$t" "$work/stdin" ;;
        esac
        stdin_file=$work/stdin
        for f in pdt2.zst pdt.gz din lackey hatf.zst mtf.zst; do
                one "$b (stdin) -> .$f" - "o.$f"
        done
        one "$b (stdin) -> .pdt2 --addr-bits 32" --addr-bits 32 - o.pdt2
done
echo "pack_same: $same outputs identical, $differ differ, $bothfail refused by both," \
        "$newonly written by NEW only"
[ "$differ" -eq 0 ]
