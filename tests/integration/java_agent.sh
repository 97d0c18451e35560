#!/usr/bin/env bash
# A Java trace recorded by the JVMTI agent (libtmjava.so) from a real Java
# program (JavaWork.java, compiled here with javac) through tracetool
# record --java, written by the agent as a ready ZIP archive and mounted:
# every event type occurs, the archive passes unzip -t, and stats.json's java figures equal an awk count over
# the mounted ascii view (events per type, objects allocated and freed,
# max live objects, method entries and max stack depth per thread), and
# each streams/thread/<id> holds that thread's records, sections/classes
# and sections/methods number the names awk finds in ascii, binary unpacked
# by Python equals ascii with names by those numbers; record's summary
# line counts ascii's records; every Node object the program made has its
# object_alloc line, as many as its constructor's entries; with the agent's
# option nothis (given to java by hand), method entries carry object id 0;
# record --java without -o writes java.PID.tmn (the ZIP removed); with -o
# X.tmn and the ZIP kept (TM_RECORD_KEEP_ZIP=1) X.tmn's ascii is the ZIP's,
# byte for byte; one whose OUT cannot be written keeps the ZIP and names it.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
AGENT=${TM_JAVA_AGENT:?}
command -v javac >/dev/null 2>&1 || skip "javac not found (build.sh installs default-jdk-headless)"
fuse_prologue
mkdir -p "$SRC" classes
javac -d classes "$HERE/JavaWork.java" || fail "javac JavaWork.java"
# tracetool record --java, the agent found in the build tree beside tracetool
env -u TM_JAVA_AGENT "$TT" record --java -o "$SRC/work.zip" -- java -cp classes JavaWork \
        >java.out 2>rec.err || { cat rec.err >&2; fail "tracetool record --java"; }
check "the program ran to its end" grep -q '^done ' java.out
check "record --java sums the archive up" \
        grep -q "^tracetool record: $SRC/work.zip: java in zip, [0-9]* records" java.out
"$TT" record --java -o "$T/x.zip" -- sh -c true 2>/dev/null
check "record --java refuses a PROGRAM that is not java (status 2)" test $? -eq 2
if command -v unzip >/dev/null 2>&1; then
        check "unzip -t accepts the agent's archive" unzip -tq "$SRC/work.zip"
fi
mount_tm mnt.log "$MNT" "$SRC" || { fail "mount"; finish; }
D=$MNT/work.zip
cat "$D/ascii" >ascii || fail "read ascii"

# the java family's rules (codecs/java/jstats.h) over ascii
awk '
{ n[$1]++ }
$1 == "object_alloc" { live++; if (live > maxlive) maxlive = live }
$1 == "object_free" { if (live) live--; else notlive++ }
$1 == "method_entry" { t = $3; ent[t]++; d[t]++; if (d[t] > md[t]) md[t] = d[t]; if (d[t] > maxd) maxd = d[t] }
$1 == "method_exit" || $1 == "frame_pop" { t = $3; if (d[t]) d[t]--; else notent++ }
END {
  split("vm_start vm_init vm_death class_load object_alloc object_free thread_start thread_end method_entry method_exit frame_pop", k, " ")
  for (i = 1; i <= 11; i++) printf "%s=%d ", k[i], n[k[i]]
  printf "max_live_objects=%d frees_not_live=%d max_stack_depth=%d exits_not_entered=%d\n", maxlive, notlive, maxd, notent
  for (t in ent) printf "thread %s entries=%d max_depth=%d\n", t, ent[t], md[t]
}' ascii | sort >awk.txt
python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))["java"]
ev = j["events"]
print(" ".join("%s=%d" % (k, ev[k]["value"]) for k in "vm_start vm_init vm_death class_load object_alloc object_free thread_start thread_end method_entry method_exit frame_pop".split()) + " " +
      " ".join("%s=%d" % (k, j[k]["value"]) for k in "max_live_objects frees_not_live max_stack_depth exits_not_entered".split()))
for i, t in j.get("threads", {}).items():
    if t["method_entries"]["value"]:
        print("thread %s entries=%d max_depth=%d" % (i, t["method_entries"]["value"], t["max_depth"]["value"]))' \
        "$D/stats.json" | sort >json.txt || fail "stats.json"
recs=$(sed -n 's/.*, \([0-9]*\) records.*/\1/p' java.out)
check "record --java's summary: as many records as ascii has lines ($recs)" \
        test "$recs" -eq "$(wc -l <ascii)"
if cmp -s awk.txt json.txt; then
        ok "stats.json = awk over ascii: $(head -c 300 json.txt)"
else
        fail "stats.json and awk over ascii differ:"
        diff awk.txt json.txt >&2
fi
for k in vm_start vm_init vm_death class_load object_alloc object_free thread_start thread_end \
        method_entry method_exit frame_pop; do
        grep -q "^$k=0 \| $k=0 " json.txt && fail "no $k event in the recording"
done
check "the stats view names the format and container" grep -q "java (java family) in zip" "$D/stats"
for s in "$D"/streams/thread/*; do
        id=${s##*/}
        want=$(awk -v t="$id" '($1 ~ /^(thread_start|thread_end|method_entry|method_exit|frame_pop)$/) && $3 == t' ascii | wc -l)
        got=$(wc -l <"$s")
        [ "$want" -eq "$got" ] || fail "streams/thread/$id: $got lines, ascii has $want"
done
ok "streams/thread/<id> hold each thread's records"
# sections/classes, sections/methods: the names in order of first
# appearance, numbered from 0, as awk finds them in ascii
awk '$1 ~ /^(class_load|object_alloc|object_free)$/ { c = $3 }
     $1 ~ /^(method_entry|method_exit|frame_pop)$/ { c = $4; m = c "." $5; if (!(m in ms)) { ms[m]; print nm++, m >"methods.want" } }
     c != "" && !(c in cs) { cs[c]; print nc++, c >"classes.want" }
     { c = "" }' ascii
for tab in classes methods; do
        if cmp -s "$tab.want" "$D/sections/$tab"; then
                ok "sections/$tab = awk over ascii ($(wc -l <"$tab.want") names)"
        else
                fail "sections/$tab differs from awk over ascii"
                diff "$tab.want" "$D/sections/$tab" | head -5 >&2
        fi
done
# binary: 40-byte records (java.md "Names"), unpacked by hand: each
# equals its ascii line, fields in the paper's order, names as their
# numbers in sections/
if nrec=$(python3 - "$D" <<'PY'
import struct, sys
d = sys.argv[1]
def table(name):
    t = {}
    for line in open(d + "/sections/" + name, "rb"):
        if not line.startswith(b"#"):
            num, _, s = line.rstrip(b"\n").partition(b" ")
            t[s] = int(num)
    return t
cls, mth = table("classes"), table("methods")
kinds = ("vm_start vm_init vm_death class_load object_alloc object_free thread_start "
         "thread_end method_entry method_exit frame_pop comment").split()
# t time, h thread, c class, m method, o object: bit 0..4 of present
params = {"class_load": "tc", "object_alloc": "tco", "object_free": "tco", "thread_start": "th",
          "thread_end": "th", "method_entry": "thcmo", "method_exit": "thcm", "frame_pop": "thcm",
          "comment": ""}  # a note: its text is not in binary
rec = struct.Struct("<IIQQQII")
b = open(d + "/binary", "rb").read()
n = 0
for n, line in enumerate(open("ascii", "rb"), 1):
    w = line.split()
    k = w[0].decode()
    p = params.get(k, "t")
    v = dict(zip(p, w[1:]))
    want = (kinds.index(k), sum(1 << "thcmo".index(c) for c in p), int(v.get("t", 0)),
            int(v.get("h", 0)), int(v.get("o", 0)), cls[v["c"]] if "c" in v else 0,
            mth[v["c"] + b"." + v["m"]] if "m" in v else 0)
    got = rec.unpack_from(b, 40 * (n - 1)) if 40 * n <= len(b) else None
    if got != want:
        sys.exit("binary record %d: %s, ascii and sections/ say %s" % (n - 1, got, want))
if len(b) != 40 * n:
    sys.exit("binary holds %d bytes for %d records" % (len(b), n))
print(n)
PY
); then
        ok "binary = ascii with names numbered as in sections/ ($nrec records)"
else
        fail "binary differs from ascii and sections/"
fi
check "schema gives binary's numpy dtype" grep -q '("class_no", "<u4"), ("method_no", "<u4")' "$D/schema"
# every Node the program made, by either worker or by main: as many
# object_alloc lines as entries of its constructor (2 * 200 + 10)
nodes=$(awk '$1 == "object_alloc" && $3 == "JavaWork$Node"' ascii | wc -l)
inits=$(awk '$1 == "method_entry" && $4 == "JavaWork$Node" && $5 == "<init>"' ascii | wc -l)
check "every JavaWork\$Node allocated is in the trace ($nodes object_alloc, $inits <init>, 410 made)" \
        test "$nodes" -eq 410 -a "$inits" -eq 410
check "MN carries this: some method entries name an object" \
        awk '$1 == "method_entry" && $6 != 0 { f = 1 } END { exit !f }' ascii
umount_tm "$MNT"
# ,nothis: the same events, MN's object id 0
java -agentpath:"$AGENT=$T/nothis.zip,nothis" -cp classes JavaWork >java2.out 2>&1 ||
        fail "java with the agent, nothis"
"$TT" cat "$T/nothis.zip" ascii >ascii2 || fail "ascii of the nothis recording"
check "nothis: method entries recorded, every object id 0" \
        awk '$1 == "method_entry" { n++; if ($6 != 0) bad = 1 } END { exit !(n > 0 && !bad) }' ascii2
# record --java without -o: java.PID.tmn in the current directory, named on stderr; the
# agent's ZIP beside it packed into it, checked against it and removed
mkdir -p jdef
(cd jdef && env -u TM_JAVA_AGENT "$TT" record --java -- java -cp ../classes JavaWork >rec.out 2>rec.err)
check "record --java without -o: exit 0" test $? -eq 0
name=$(sed -n 's/^tracetool record: writing //p' jdef/rec.err)
check "... says the name it writes: java.PID.tmn ($name)" \
        sh -c 'echo "$1" | grep -Eq "^java\.[0-9]+\.tmn$" && test -s "jdef/$1"' sh "$name"
check "... no ZIP left" sh -c '! ls jdef | grep -q "\.zip$"'
check "... a native file that verifies" "$TT" verify "jdef/$name"
check "... summed up as native, as many records as its ascii has lines" \
        sh -c 'r=$(sed -n "s/.*: native in plain, \([0-9]*\) records.*/\1/p" "$1")
               test -n "$r" && test "$r" -eq "$("$2" cat "$3" ascii | wc -l)"' sh jdef/rec.out "$TT" "jdef/$name"
# -o X.tmn with the ZIP kept (TM_RECORD_KEEP_ZIP=1, for tests): X.tmn's ascii is the ZIP's
mkdir -p jkeep
(cd jkeep && TM_RECORD_KEEP_ZIP=1 env -u TM_JAVA_AGENT "$TT" record --java -o k.tmn -- \
        java -cp ../classes JavaWork >rec.out 2>rec.err)
check "record --java -o X.tmn: exit 0" test $? -eq 0
zip=$(sed -n 's/^tracetool record: the recording is kept in //p' jkeep/rec.err)
"$TT" cat "jkeep/$zip" ascii >jkeep/zip.txt 2>&1
"$TT" cat jkeep/k.tmn ascii >jkeep/tmn.txt 2>&1
check "... X.tmn's ascii is the agent's ZIP's, byte for byte ($(wc -l <jkeep/tmn.txt) lines)" \
        sh -c 'test -n "$1" && test "$(wc -l <jkeep/zip.txt)" -gt 1000 && cmp -s jkeep/zip.txt jkeep/tmn.txt' sh "$zip"
# -o X.tmn that cannot be written (a directory): the ZIP is kept, named, and holds the recording
mkdir -p jbad/x.tmn
(cd jbad && env -u TM_JAVA_AGENT "$TT" record --java -o x.tmn -- java -cp ../classes JavaWork \
        >rec.out 2>rec.err)
check "record --java -o X.tmn that cannot be written: exit 1" test $? -eq 1
zip=$(sed -n 's/^tracetool record: the recording is kept in //p' jbad/rec.err)
check "... the ZIP is kept and named ($zip)" test -s "jbad/$zip"
check "... and it is the recording" "$TT" verify "jbad/$zip"
finish
