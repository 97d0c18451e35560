#!/usr/bin/env bash
# views_same.sh: every view of every trace given, as two builds show it, byte for byte.
#
#   bench/views_same.sh OLD_TRACETOOL NEW_TRACETOOL [TRACE...]
#   CHANGED="stats.json" bench/views_same.sh ...   (views whose bytes change on purpose)
#
# For a change that must not change output (a refactor): build the commit before it in a
# worktree (git worktree add /tmp/wt-before HEAD~1; meson setup, ninja there) and pass its
# tools/tracetool as OLD. Traces default to examples/* and the test fixtures (tests/data/heap,
# tests/data/fuzz), plus HATF and Meta-TF packs of the mtrace fixture made by OLD. Each build
# reads its own copy of the traces with its own index cache, twice: once building the index
# (cold) and once loading it (warm), so both the pass and the index file are exercised. For
# each trace: the view list (after the index), `tracetool stat` and `stat --json`, and
# `tracetool cat` of every view (and of streams/thread/<id> for every thread id stats.json
# names: those are not listed), compared with cmp. Prints one line a difference and a
# summary; exit 1 if anything differs. A view named in $CHANGED is reported as changed, not as
# a difference (with `stat --json` for stats.json), and its size lines are left out of the view
# list and `stat`: for a change of a view's bytes on purpose, every other view is still compared.
set -u
[ $# -ge 2 ] || { sed -n '2,18p' "$0"; exit 2; }
old=$(realpath "$1") new=$(realpath "$2")
shift 2
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/views_same.XXXXXX")
trap 'rm -rf "$work"' EXIT

traces=("$@")
if [ ${#traces[@]} -eq 0 ]; then
        for f in "$here"/examples/* "$here"/tests/data/heap/* "$here"/tests/data/fuzz/*/*; do
                case $f in *.txt | *.sh | *.c) continue ;; esac
                traces+=("$f")
        done
        mt="$here/tests/data/heap/heapprog.mtrace"
        mkdir -p "$work/packs"
        "$old" pack "$mt" "$work/packs/heapprog.hatf" >/dev/null 2>&1 && traces+=("$work/packs/heapprog.hatf")
        "$old" pack "$mt" "$work/packs/heapprog.mtf.zst" >/dev/null 2>&1 && traces+=("$work/packs/heapprog.mtf.zst")
fi

# dump BUILD TRACETOOL ROUND: every view of every trace into $work/BUILD/ROUND/<trace>/
dump() {
        local b=$1 tt=$2 r=$3 i=0
        mkdir -p "$work/$b/in" "$work/$b/cache"
        for t in "${traces[@]}"; do
                i=$((i + 1))
                local name="$i-$(basename "$t")" src="$work/$b/in/$i-$(basename "$t")"
                [ -e "$src" ] || cp "$t" "$src"
                local out="$work/$b/$r/$name"
                mkdir -p "$out"
                export XDG_CACHE_HOME="$work/$b/cache"
                "$tt" index "$src" >/dev/null 2>&1
                "$tt" views "$src" >"$out/.views" 2>"$out/.views.err"
                echo "rc=$?" >>"$out/.views"
                sed -i "s|$work/$b|WORK|g" "$out/.views.err"
                "$tt" stat "$src" 2>&1 | sed "s|$work/$b|WORK|g" >"$out/.stat"
                "$tt" stat --json "$src" 2>&1 | sed "s|$work/$b|WORK|g" >"$out/.stat.json"
                local v n
                while IFS= read -r v; do
                        [ -n "$v" ] || continue
                        n=${v//\//%}
                        "$tt" cat "$src" "$v" >"$out/$n.out" 2>"$out/$n.err"
                        echo "$v rc=$?" >"$out/$n.name"
                        sed -i "s|$work/$b|WORK|g" "$out/$n.err"
                done < <(
                        grep -v '^rc=' "$out/.views"
                        # per-id streams, reachable though not listed: the ids stats.json names
                        "$tt" cat "$src" stats.json 2>/dev/null |
                                python3 -c 'import json, sys  # version 1 (arrays of {id}) or 2 (objects by id)
try:
    d = json.load(sys.stdin)
except ValueError:
    sys.exit(0)
for fam in ("heap", "java"):
    t = (d.get(fam) or {}).get("threads") or []
    for i in ([x["id"] for x in t] if isinstance(t, list) else t):
        print("streams/thread/%s" % i)'
                )
        done
}

for r in cold warm; do
        dump old "$old" $r
        dump new "$new" $r
done

# Views only the new build has are reported as added, not as differences
# (a change that adds views, as fields/ for address traces); the view list
# and `stat` are compared without their lines. A view the new build lacks
# is a difference.
diffs=0 files=0 added=0 changed=0
# changed FILE: is FILE (a dump of a view, or stat --json) of a view in $CHANGED?
is_changed() {
        local b=${1##*/} v
        for v in ${CHANGED:-}; do
                [ "$b" = "${v//\//%}.out" ] && return 0
                [ "$v" = stats.json ] && [ "$b" = .stat.json ] && return 0
        done
        return 1
}
for r in cold warm; do
        for d in "$work/old/$r"/*/; do
                t=$(basename "$d") nd="$work/new/$r/$(basename "$d")"
                grep -v '^rc=' "$d/.views" | sort >"$work/o.lst"
                grep -v '^rc=' "$nd/.views" 2>/dev/null | sort >"$work/n.lst"
                comm -13 "$work/o.lst" "$work/n.lst" >"$work/add.lst"
                while IFS= read -r v; do
                        echo "added:   $r/$t/$v"
                        added=$((added + 1))
                done <"$work/add.lst"
                printf '%s\n' ${CHANGED:-} >"$work/chg.lst"
                for f in .views .stat; do
                        files=$((files + 1))
                        # drop the added views' lines (a name alone, or indented with its
                        # size) from the new list, the changed views' from both
                        local_drop='open my $a, "<", $ARGV[0]; my %a = map { chomp; ($_, 1) } <$a>;
                                open my $f, "<", $ARGV[1]; while (<$f>) { my ($n) = /^\s*(\S+)/;
                                print unless defined $n && $a{$n} }'
                        cat "$work/add.lst" "$work/chg.lst" >"$work/drop.lst"
                        if ! cmp -s <(perl -e "$local_drop" "$work/chg.lst" "$d/$f") \
                                <(perl -e "$local_drop" "$work/drop.lst" "$nd/$f"); then
                                diffs=$((diffs + 1))
                                echo "DIFFERS: $r/$t/$f (list/stat)"
                        fi
                done
                while IFS= read -r f; do
                        rel=${f#"$work/old/"}
                        files=$((files + 1))
                        if is_changed "$f"; then
                                cmp -s "$f" "$work/new/$rel" || changed=$((changed + 1))
                                cmp -s "$f" "$work/new/$rel" || echo "changed: $rel"
                        elif ! cmp -s "$f" "$work/new/$rel"; then
                                diffs=$((diffs + 1))
                                echo "DIFFERS: $rel ($(cat "${f%.*}.name" 2>/dev/null))"
                        fi
                done < <(find "$d" -type f ! -name '.views' ! -name '.stat' | sort)
        done
done
bytes=$(du -sb "$work/old/cold" | cut -f1)
echo "views_same: ${#traces[@]} traces, $files files compared ($bytes bytes a round), $diffs differ, $added views added, $changed changed on purpose (${CHANGED:-none})"
[ $diffs -eq 0 ]
