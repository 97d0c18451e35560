#!/usr/bin/env bash
# Every Java allocation of every thread in the trace, and what the agent
# could not see said in it (docs/formats/java.md "What JVMTI sees").
# JavaAllocProbe.java (compiled here with javac) allocates objects of its
# own classes on the main thread before and after a 4 MiB array, on a
# second thread, by reflection and by clone, and prints its tally; it is
# recorded with tracetool record --java=nothis and with the default mode.
# For each recording: object_alloc lines per class in tracetool cat ascii
# equal the tally exactly (the first 1,000 of the main thread among them,
# which a sampler point drawn before the agent set the interval hid);
# stats' and stats.json's objects allocated equal the lines; the notes
# (the trace's leading comments) are in stats and stats.json, the
# classes loaded before VMStart among them with a count that the JVM's own
# -Xlog:class+load bounds; every key of sections/methods splits at its
# last '.' into a class and a method that a method_entry line pairs, one
# class of them a hidden class (with a '.'); the ZIP member's date is a
# valid MS-DOS date, the recording's. No FUSE: tracetool cat.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
need_programs
command -v javac >/dev/null 2>&1 || skip "javac not found (build.sh installs default-jdk-headless)"
setup_tmp
cd "$T" || exit 1
TT=$TRACETOOL
javac -d classes "$HERE/JavaAllocProbe.java" || { fail "javac JavaAllocProbe.java"; finish; }

for mode in nothis this; do
        opt=--java=nothis
        [ $mode = this ] && opt=--java
        z=$T/probe-$mode.zip
        before=$(date +%s)
        "$TT" record $opt -o "$z" -- \
                java -Xlog:class+load:file="$T/classes-$mode.log" -cp classes JavaAllocProbe \
                >out-$mode 2>err-$mode || { cat err-$mode >&2; fail "$mode: tracetool record"; continue; }
        after=$(date +%s)
        "$TT" cat "$z" ascii >ascii-$mode || fail "$mode: tracetool cat ascii"
        "$TT" cat "$z" stats >stats-$mode || fail "$mode: tracetool cat stats"
        "$TT" cat "$z" stats.json >json-$mode || fail "$mode: tracetool cat stats.json"
        "$TT" cat "$z" sections/methods >methods-$mode || fail "$mode: sections/methods"

        # the program's tally against object_alloc lines per class
        awk '$1 == "object_alloc" { n[$3]++ } END { for (c in n) print c, n[c] }' \
                ascii-$mode | sort >counted-$mode
        grep -c . counted-$mode >/dev/null || fail "$mode: no object_alloc line"
        while read -r _ cls want; do
                got=$(awk -v c="$cls" '$1 == c { print $2 }' counted-$mode)
                if [ "${got:-0}" -eq "$want" ]; then
                        ok "$mode: $cls: $want object_alloc lines, as the program counted"
                else
                        fail "$mode: $cls: ${got:-0} object_alloc lines, the program allocated $want"
                fi
        done < <(grep '^tally ' out-$mode)
        [ "$(grep -c '^tally ' out-$mode)" -eq 5 ] || fail "$mode: the program's tally is not 5 lines"
        check "$mode: one object of the lambda's hidden class" \
                test "$(awk '$1 ~ /^JavaAllocProbe\$\$Lambda[$0-9]*\.0x/ { s += $2 } END { print s + 0 }' counted-$mode)" -eq 1
        oa=$(awk '$1 == "object_alloc"' ascii-$mode | wc -l)
        check "$mode: stats' objects allocated = the object_alloc lines ($oa)" \
                grep -q "^  objects allocated  $oa (as recorded: see the notes)\$" stats-$mode
        python3 - json-$mode ascii-$mode "$T/classes-$mode.log" $mode <<'PY' || fail "$mode: stats.json's figures and notes"
import json, re, sys
j = json.load(open(sys.argv[1]))
ascii_lines = open(sys.argv[2], encoding="latin-1").read().splitlines()
mode = sys.argv[4]
oa = sum(1 for l in ascii_lines if l.startswith("object_alloc "))
assert j["java"]["objects_allocated"]["value"] == oa, (j["java"]["objects_allocated"], oa)
notes = j["notes"]
# the notes are the trace's leading comment records, in order
comments = []
for l in ascii_lines:
    if not l.startswith("comment "):
        break
    comments.append(l[8:].replace("%20", " "))
assert comments == notes, (comments, notes)
def note(prefix):
    hits = [n for n in notes if n.startswith(prefix)]
    assert len(hits) == 1, (prefix, notes)
    return hits[0]
assert "every one, of every thread" in note("allocations from VMInit on: ")
note("objects allocated before VMInit: ")
note("method calls before VMInit: ")
assert ("nothis: " in " ".join(notes)) == (mode == "nothis"), notes
# classes loaded before VMStart: N; the JVM's log (L) holds them and the
# classes with a CL line (C): |L - C| <= N <= |L|
n = int(re.match(r"classes loaded before VMStart: (\d+),", note("classes loaded before VMStart: ")).group(1))
log = set()
for l in open(sys.argv[3]):
    m = re.search(r"\[class,load\] (\S+) ", l)
    if m:
        log.add(re.sub(r"/(0x[0-9a-f]+)$", r".\1", m.group(1).replace(".", "/")))
cl = {l.split(" ", 2)[2] for l in ascii_lines if l.startswith("class_load ")}
assert cl <= log, sorted(cl - log)[:5]
assert len(log - cl) <= n <= len(log), (len(log - cl), n, len(log))
print("notes", len(notes), "classes before VMStart", n, "JVM log", len(log), "CL names", len(cl))
PY
        grep -q "^note       allocations from VMInit on: every one" stats-$mode &&
                grep -q "^note       classes loaded before VMStart: [0-9]" stats-$mode ||
                fail "$mode: the notes in stats"

        # sections/methods: each key's last '.' ends its class
        python3 - methods-$mode ascii-$mode <<'PY' || fail "$mode: sections/methods split at the last '.'"
import sys
pairs = set()
for l in open(sys.argv[2], encoding="latin-1"):
    w = l.split()
    if w[0] in ("method_entry", "method_exit", "frame_pop"):
        pairs.add((w[3], w[4]))
keys = 0
hidden = 0
for l in open(sys.argv[1], encoding="latin-1"):
    key = l.rstrip("\n").split(" ", 1)[1]
    cls, _, m = key.rpartition(".")
    assert (cls, m) in pairs, key
    keys += 1
    hidden += "." in cls
assert keys == len(pairs), (keys, len(pairs))
assert hidden > 0, "no method of a hidden class"
print("hidden-class methods", hidden)
PY

        # the member's date: a valid MS-DOS date and time, when recording ran
        python3 - "$z" "$before" "$after" <<'PY' || fail "$mode: the ZIP member's date"
import sys, time, zipfile
before, after = int(sys.argv[2]), int(sys.argv[3])
for i in zipfile.ZipFile(sys.argv[1]).infolist():
    y, mo, d, h, mi, s = i.date_time
    assert 1 <= mo <= 12 and 1 <= d <= 31 and h < 24 and mi < 60 and s < 60, i.date_time
    t = time.mktime((y, mo, d, h, mi, s, 0, 0, -1))
    assert before - 2 <= t <= after, (i.filename, i.date_time, before, after)
print("dates ok")
PY
        ok "$mode: checked"
done
finish
