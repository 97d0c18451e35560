#!/bin/bash
# tracetool end to end: pack into every format and container, read back
# with cat and compare against the generated text and against independent
# decoders (zstdcat, gzip, perl on the binary view); the 32/64-bit and
# unit retries; stdin and stdout; exit codes.
# usage: tools_cli.sh   (TRACEMOUNT and TRACETOOL in the environment)
here=$(dirname "$0")
. "$here/lib.sh"
need_programs
setup_tmp
cd "$T" || exit 1
TT=$TRACETOOL

gen_din 11 200000 >a.din
gen_din 14 50000 32 misc >m.din
gen_din 12 30000 64 >w.din
gen_lackey 13 40000 >l.lackey
awk '{ t = $1 == "I" ? 2 : $1 == "L" ? 0 : $1 == "S" ? 1 : 9; split($2, p, ",")
       a = p[1]; sub(/^0+/, "", a); if (a == "") a = "0"
       if (t == 9) { print "0 " a; print "1 " a } else print t " " a }' l.lackey >l.din

# --- pack into every format and container, read back ---
for out in a.pdt2.zst a.pdt.gz a.din.zst a.pdt2 a.pdt a.din.gz a.pdt2.gz a.pdt.zst; do
        check "pack $out" "$TT" pack --frame-size 65536 a.din $out
        check "cat $out ascii == input" cmp -s a.din <("$TT" cat $out ascii)
done
check "no index written for pack's input" test ! -e .a.din.tmidx
check "no .tmp left" test -z "$(ls ./*.tmp 2>/dev/null)"

# options: level, unit
check "pack --level 1" "$TT" pack --level 1 a.din l1.pdt2.zst
check "pack --level 19" "$TT" pack --level 19 a.din l19.pdt2.zst
check "--level 19 is no bigger than --level 1" test "$(stat -c %s l19.pdt2.zst)" -le "$(stat -c %s l1.pdt2.zst)"
check "--level 19 reads back" cmp -s a.din <("$TT" cat l19.pdt2.zst ascii)
check "pack --unit 2 --addr-bits 64" "$TT" pack --unit 2 --addr-bits 64 a.din u2.pdt2
check "--unit 2 reads back" cmp -s a.din <("$TT" cat u2.pdt2 ascii)
check "--compress overrides the suffix" "$TT" pack --compress gzip a.din odd.pdt2
check "... giving gzip bytes" test "$(head -c 2 odd.pdt2 | od -An -tx1 | tr -d ' ')" = 1f8b
check "--format overrides the suffix" "$TT" pack --format din a.din fmt.pdt
check "... giving din text" cmp -s a.din fmt.pdt

# containers readable by the standard tools
check "zstdcat of seekable pdt2 == raw view" cmp -s <(zstdcat a.pdt2.zst) <("$TT" cat a.pdt2.zst raw)
check "gzip -dc of pdt.gz == raw view" cmp -s <(gzip -dc a.pdt.gz) <("$TT" cat a.pdt.gz raw)
check "zstdcat a.din.zst == input" cmp -s <(zstdcat a.din.zst) a.din
check "raw of plain pdt2 == the file" cmp -s a.pdt2 <("$TT" cat a.pdt2.zst raw)
check "seekable zstd has several frames" test "$(zstd -lv a.pdt2.zst 2>/dev/null | awk '/^# Frames/ {print $NF}')" != 1

# binary view decoded independently
perl_bin() {
        perl -e 'binmode STDIN; while (read(STDIN, $r, 16) == 16) {
                my ($lo, $hi, $t) = unpack("VVC", $r);
                printf("%d %s\n", $t, $hi ? sprintf("%x%08x", $hi, $lo) : sprintf("%x", $lo)) }'
}
check "binary view (perl) == input" cmp -s a.din <("$TT" cat a.pdt2.zst binary | perl_bin)
check "binary size is 16 per ref" test "$("$TT" cat a.pdt.gz binary | wc -c)" -eq $((16 * $(wc -l <a.din)))

# streams
for t in 0:read 1:write 2:ifetch; do
        n=${t%%:*} name=${t#*:}
        check "streams/$name == awk filter" cmp -s <(awk -v t=$n '$1 == t' a.din) <("$TT" cat a.pdt2.zst streams/$name)
done

# misc references: din and PDATS hold them, PDATS II refuses them
for out in m.pdt.gz m.din.zst; do
        check "pack $out" "$TT" pack m.din $out
        check "cat $out ascii == input" cmp -s m.din <("$TT" cat $out ascii)
done
check "misc stream" cmp -s <(awk '$1 == 3' m.din) <("$TT" cat m.pdt.gz streams/misc)
"$TT" pack m.din m.pdt2 2>err.txt
check "PDATS II refuses misc: exit 1" test $? -eq 1
check "... naming the reference" grep -q "reference" err.txt

# --- 64-bit addresses and odd instruction offsets ---
"$TT" pack w.din w.pdt2.zst 2>err.txt
check "pack w.pdt2.zst succeeds after restarting" test $? -eq 0
check "pack says it started again" grep -q "starting again" err.txt
check "w.pdt2.zst ascii == input" cmp -s w.din <("$TT" cat w.pdt2.zst ascii)
"$TT" pack w.din w.pdt.gz 2>err.txt
check "pack w.pdt.gz" test $? -eq 0
check "w.pdt.gz ascii == input" cmp -s w.din <("$TT" cat w.pdt.gz ascii)
"$TT" pack --addr-bits 32 w.din w32.pdt2 2>err.txt
check "explicit --addr-bits 32 on 64-bit input fails with 1" test $? -eq 1
check "... naming --addr-bits 64" grep -q -- "--addr-bits 64" err.txt
check "... and leaves no output" test ! -e w32.pdt2 -a ! -e w32.pdt2.tmp

# --- stdin / stdout ---
# from a pipe, pack picks the width and the unit by itself, as for a file
# (it keeps a copy of stdin to start again from)
cat w.din | "$TT" pack - s.pdt2 2>err.txt
check "pipe 64-bit odd-offset input with defaults packs first time" test $? -eq 0
check "... starting again with --addr-bits 64" grep -q -- "starting again with --addr-bits 64" err.txt
check "... and with --unit 1" grep -q -- "starting again with --unit 1" err.txt
check "pipe s.pdt2 ascii == input" cmp -s w.din <("$TT" cat s.pdt2 ascii)
cat w.din | "$TT" pack - s.pdt.zst 2>err.txt
check "pipe 64-bit input -> pdt.zst packs first time" test $? -eq 0
check "pipe s.pdt.zst ascii == input" cmp -s w.din <("$TT" cat s.pdt.zst ascii)
"$TT" pack --addr-bits 32 - s.pdt2 <w.din 2>err.txt
check "stdin with explicit --addr-bits 32 fails with 1" test $? -eq 1
check "... naming --addr-bits 64" grep -q -- "--addr-bits 64" err.txt
"$TT" pack --addr-bits 64 --unit 4 - s.pdt2 <w.din 2>err.txt
check "stdin with explicit --unit 4 on odd offsets fails with 1" test $? -eq 1
check "... naming --unit 1" grep -q -- "--unit 1" err.txt
check "stdin with --addr-bits 64 --unit 1" "$TT" pack --addr-bits 64 --unit 1 - s.pdt2 <w.din
check "s.pdt2 ascii == input" cmp -s w.din <("$TT" cat s.pdt2 ascii)
check "stdin din -> zstd" "$TT" pack - s.pdt2.zst <a.din
check "s.pdt2.zst ascii == input" cmp -s a.din <("$TT" cat s.pdt2.zst ascii)
"$TT" pack a.din - >/dev/null 2>err.txt
check "stdout without --format/--compress is a usage error" test $? -eq 2
"$TT" pack --format pdats2 --compress zstd a.din - >o.pdt2.zst
check "stdout pack" test $? -eq 0
check "stdout pack ascii == input" cmp -s a.din <("$TT" cat o.pdt2.zst ascii)
"$TT" pack --format din --compress gzip - - <a.din | gzip -dc >o.din
check "stdin to stdout, din gzip" cmp -s a.din o.din

# --- lackey ---
check "pack lackey file" "$TT" pack l.lackey l.pdt2.zst
check "lackey ascii == awk conversion" cmp -s l.din <("$TT" cat l.pdt2.zst ascii)
check "pack lackey from stdin" "$TT" pack - l2.pdt.gz <l.lackey
check "lackey stdin ascii == awk conversion" cmp -s l.din <("$TT" cat l2.pdt.gz ascii)

# --- stat, index, verify, views ---
"$TT" stat a.pdt2.zst >stat.txt
check "stat exit 0" test $? -eq 0
check "stat counts the references" grep -Eq "^references +$(wc -l <a.din)\$" stat.txt
check "stat names the codec" grep -q pdats2 stat.txt
rm -f .a.pdt.gz.tmidx # built by the cat above
"$TT" index a.pdt.gz >idx.txt
check "index exit 0" test $? -eq 0
check "index file beside the archive" test -s .a.pdt.gz.tmidx
check "index prints its path" grep -q "a.pdt.gz.tmidx" idx.txt
check "first index run builds" grep -q "(built)" idx.txt
check "second index run loads" grep -q "(loaded)" <("$TT" index a.pdt.gz)
check "verify ok" "$TT" verify a.pdt2.zst
check "views lists streams/read" grep -qx "streams/read" <("$TT" views a.pdt2)

# corrupt copies: a bad line in the middle of din text, bytes overwritten
# in the middle of a zstd archive (caught by the content checksums)
awk 'NR == 100000 { print "7 xyz" } { print }' a.din >bad.din
cp a.pdt2.zst badz.pdt2.zst
printf 'XXXXXXXXXXXXXXXX' | dd of=badz.pdt2.zst bs=1 seek=$(($(stat -c %s a.pdt2.zst) / 2)) conv=notrunc 2>/dev/null
for b in bad.din badz.pdt2.zst; do
        "$TT" verify $b 2>err.txt
        check "verify $b fails with 1" test $? -eq 1
        check "verify $b names the file and an offset" grep -q "$b.*offset" err.txt
        "$TT" cat $b ascii >/dev/null 2>err.txt
        check "cat $b fails with 1" test $? -eq 1
        # stat reports the intact prefix, says so, and fails
        "$TT" stat --no-index-beside $b >out.txt 2>err.txt
        check "stat $b fails with 1" test $? -eq 1
        check "stat $b names the damage on stderr" grep -q "^tracetool stat: $b.*offset" err.txt
        check "stat $b says the numbers are the prefix's" grep -q "^damaged .*offset.*intact prefix" out.txt
done

# frames 1 and 2 of a packed archive swapped, their seek-table entries with
# them (as a table rebuilt from the frames would be): the order record sees it
"$TT" pack --frame-size 4096 a.din sw.pdt2.zst 2>/dev/null
python3 - sw.pdt2.zst swapped.pdt2.zst <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
n, desc = struct.unpack_from("<IB", b, len(b) - 9)
assert desc & 0x80 and n >= 4
t = len(b) - 9 - 12 * n - 8
ent = [b[t + 8 + 12 * i: t + 20 + 12 * i] for i in range(n)]
off = [0]
for e in ent:
    off.append(off[-1] + struct.unpack_from("<I", e)[0])
fr = [b[off[i]:off[i + 1]] for i in range(n)]
fr[1], fr[2], ent[1], ent[2] = fr[2], fr[1], ent[2], ent[1]
open(sys.argv[2], "wb").write(b"".join(fr) + b[t:t + 8] + b"".join(ent) + b[len(b) - 9:])
PY
check "verify of the packed archive before the swap" "$TT" verify sw.pdt2.zst
"$TT" verify swapped.pdt2.zst 2>err.txt
check "verify of swapped frames fails with 1" test $? -eq 1
check "verify of swapped frames names the order record and an offset" \
        grep -q "swapped.pdt2.zst: archive offset [0-9]*: zstd: the order record" err.txt
"$TT" cat swapped.pdt2.zst ascii >/dev/null 2>&1
check "cat of swapped frames fails" test $? -eq 1

# The encoder refusing a reference (misc has no place in PDATS II) names
# it; the same text in a gzip member whose CRC is damaged names the damage,
# the likelier cause, instead.
# The refused reference comes early and megabytes of text follow it, so
# the encoder meets it long before the reader reaches the damaged trailer.
{ head -n 1000 a.din; echo "3 1000"; for _ in $(seq 8); do cat a.din; done; } |
        gzip -c >misc.din.gz
"$TT" pack misc.din.gz misc.pdt2 2>err.txt
check "pack of misc into pdats2 fails with 1" test $? -eq 1
check "pack names the refused reference" grep -q "reference 1000: type 3" err.txt
cp misc.din.gz miscbad.din.gz
crc_at=$(($(stat -c %s misc.din.gz) - 8))
printf '\xff\xff\xff\xff' | dd of=miscbad.din.gz bs=1 seek=$crc_at conv=notrunc 2>/dev/null
"$TT" pack miscbad.din.gz misc.pdt2 2>err.txt
check "pack of a damaged archive fails with 1" test $? -eq 1
check "pack names the damage, not the reference" grep -q "miscbad.din.gz: archive offset .*gzip" err.txt
check "pack leaves no output" test ! -e misc.pdt2 -a ! -e misc.pdt2.tmp

# --- exit codes and help ---
"$TT" >/dev/null 2>&1
check "no command: 2" test $? -eq 2
"$TT" frobnicate x >/dev/null 2>&1
check "unknown command: 2" test $? -eq 2
"$TT" cat a.din >/dev/null 2>&1
check "missing argument: 2" test $? -eq 2
"$TT" pack --level x a.din x.pdt2 >/dev/null 2>&1
check "bad option value: 2" test $? -eq 2
"$TT" index --json a.pdt2 >/dev/null 2>err.txt
check "unknown option of a command: 2" test $? -eq 2
check "the unknown option is named" grep -q "unknown option '--json'" err.txt
"$TT" index a.pdt2 extra >/dev/null 2>err.txt
check "too many arguments: 2, and said" grep -q "takes 1 argument, got 2" err.txt
# --cache-dir and --no-index-beside, as tracemount takes them
mkdir -p cd-src && cp a.pdt2 cd-src/
"$TT" index --no-index-beside --cache-dir "$PWD/cd-cache" cd-src/a.pdt2 >idx.txt 2>&1
check "index --cache-dir: the index is in the cache dir" grep -q "cd-cache/.*a.pdt2.tmidx (built)" idx.txt
check "index --no-index-beside: nothing beside the archive" test -z "$(ls -A cd-src | grep tmidx)"
"$TT" stat --cache-dir="$PWD/cd-cache" --no-index-beside cd-src/a.pdt2 >st.txt 2>&1
check "stat uses the index in the cache dir" grep -q "^index .*cd-cache/.*a.pdt2.tmidx" st.txt
"$TT" index cd-src/a.pdt2 --cache-dir >/dev/null 2>err.txt
check "--cache-dir without a value: 2, and said" grep -q "a value is needed for '--cache-dir'" err.txt
"$TT" cat nonexistent.pdt2 ascii >/dev/null 2>&1
check "missing file: 1" test $? -eq 1
"$TT" cat a.pdt2 nosuchview >/dev/null 2>&1
check "unknown view: 1" test $? -eq 1
echo "hello world" >plain.txt
"$TT" stat plain.txt >/dev/null 2>&1
check "not a trace: 1" test $? -eq 1
for c in "" pack cat stat index verify views; do
        check "help $c" "$TT" $c --help >/dev/null
done
check "--version" "$TT" --version >/dev/null
"$TT" pack --help >help.txt
check "pack --help names the heap formats too" grep -q "OUT.hatf\[.gz|.zst\]" help.txt
check "pack --help names mtrace and heaptrack input" grep -q "mtrace log" help.txt

# --- lackey sizes through pack (issue 15): lackey output keeps them ---
check "pack lackey -> lackey.zst" "$TT" pack l.lackey lk.lackey.zst
check "lk.lackey.zst has an xdin view" grep -qx xdin <("$TT" views lk.lackey.zst)
awk '{ split($2, f, ","); a = tolower(f[1]); sub(/^0+/, "", a); if (a == "") a = "0"
       s = sprintf("%03x", f[2] + 0)
       if ($1 == "I") print "i " a " " s; else if ($1 == "L") print "r " a " " s
       else if ($1 == "S") print "w " a " " s; else { print "r " a " " s; print "w " a " " s } }' \
        l.lackey >l.xdin
check "xdin of the packed lackey == awk over the lackey text" cmp -s l.xdin <("$TT" cat lk.lackey.zst xdin)
check "xdin of the lackey text itself == awk" cmp -s l.xdin <("$TT" cat l.lackey xdin)
check "pdt2 from lackey has no xdin (no sizes)" test -z "$("$TT" views l.pdt2.zst | grep -x xdin)"
"$TT" pack a.din a.lackey 2>err.txt
check "lackey output from din (no sizes) fails with 1" test $? -eq 1
check "... naming the record and the field it lacks" grep -q "record 0 (.*): lackey output needs its field size, which din has not" err.txt

# --- one packer for every row: the output's row by its suffix ---
SRCDIR=${TM_SOURCE_DIR:-$here/../..}
# every row that writes, from an input of its family: ascii back == the input's
rows_of() { # IN SUFFIX...: pack IN as each suffix, plain and zstd; ascii == IN's
        local in=$1 suf c
        shift
        for suf in "$@"; do
                for c in "" .zst; do
                        check "pack $(basename "$in") -> row$suf$c" "$TT" pack "$in" "row$suf$c"
                        check "... ascii == the input's" cmp -s <("$TT" cat "$in" ascii) <("$TT" cat "row$suf$c" ascii)
                done
        done
}
rows_of a.din .din .pdt .pdt2
rows_of l.lackey .lackey .tmn
rows_of "$SRCDIR/tests/data/heap/heapprog.mtrace" .hatf .mtf
rows_of "$SRCDIR/tests/data/ptf/figure3.ptf" .ptfb .ptf
rows_of "$SRCDIR/tests/data/laplace/loop.lpt" .lpr .lpt
check "every writing row has a test above" test "$("$TT" pack --help | grep -c '^  OUT\.')" -eq 11
# --- pack's default levels: the ones --help names, below --level 19's smallest archives ---
"$TT" pack --help >help_lv.txt 2>&1
lv=$(sed -n 's/.*(default: zstd \([0-9]*\),.*/\1/p' help_lv.txt)
glv=$(sed -n 's/.*; gzip \([0-9]\))$/\1/p' help_lv.txt)
check "pack --help names the default zstd level ($lv)" test -n "$lv"
check "pack --help names the default gzip level ($glv)" test -n "$glv"
check "... the zstd one fast, below 19" test "${lv:-19}" -lt 19
# more heap events than pack compares the encodings on (--help: the first 65536 records)
awk 'BEGIN { srand(5); print "= Start"; live = 0
        for (i = 0; i < 70000; i++) {
                if (live > 0 && rand() < 0.45) {
                        k = int(rand() * live); a = addr[k]; addr[k] = addr[--live]
                        printf "@ ./prog:[0x%x] - 0x%x\n", 4096 + i % 977, a
                } else {
                        a = 94000000000000 + 16 * i; addr[live++] = a
                        printf "@ ./prog:[0x%x] + 0x%x 0x%x\n", 4096 + i % 977, a, 1 + int(rand() * 4000)
                }
        }
        print "= End" }' >h.mtrace
check "pack mtrace -> .hatf.zst at the default level" "$TT" pack h.mtrace hd.hatf.zst
check "... reads back" cmp -s <("$TT" cat h.mtrace ascii) <("$TT" cat hd.hatf.zst ascii)
check "pack --level ${lv:-?}" "$TT" pack --level "${lv:-0}" h.mtrace hl.hatf.zst
check "... the default's bytes" cmp -s hd.hatf.zst hl.hatf.zst
check "pack --level 19" "$TT" pack --level 19 h.mtrace h19.hatf.zst 2>msg19.txt
check "... smaller than the default" test "$(stat -c %s h19.hatf.zst)" -lt "$(stat -c %s hd.hatf.zst)"
enc=$(sed -n 's/.*, encoding \([a-z0-9]*\): .*/\1/p' msg19.txt)
check "pack -e ${enc:-?} --level 19 (the encoding chosen alone)" "$TT" pack -e "${enc:-none}" --level 19 h.mtrace he.hatf.zst
check "... the bytes of the choice among all encodings" cmp -s he.hatf.zst h19.hatf.zst
cat h.mtrace | "$TT" pack - hp.hatf.zst 2>/dev/null
check "a pipe (read again from its spool) packs to the file's bytes" cmp -s hp.hatf.zst hd.hatf.zst
check "pack mtrace -> .hatf.gz at the default level" "$TT" pack h.mtrace hd.hatf.gz
check "pack --level ${glv:-?} -> .hatf.gz" "$TT" pack --level "${glv:-0}" h.mtrace hg.hatf.gz
check "... the default's bytes" cmp -s hd.hatf.gz hg.hatf.gz
check "... which gzip reads back" cmp -s <(gzip -dc hd.hatf.gz) <("$TT" cat hd.hatf.zst raw)
check "no .tmp left by the candidates" test -z "$(ls ./*.tmp 2>/dev/null)"

# PTF both ways: text -> binary -> text is the text, byte for byte
for f in figure3 every_event; do
        check "pack $f.ptf -> .ptfb.zst -> .ptf" \
                "$TT" pack "$SRCDIR/tests/data/ptf/$f.ptf" p$f.ptfb.zst
        check "..." "$TT" pack p$f.ptfb.zst p$f.ptf
done
check "... figure3: the same bytes" cmp -s pfigure3.ptf "$SRCDIR/tests/data/ptf/figure3.ptf"
check "... every_event: the same bytes but the event ids" \
        cmp -s pevery_event.ptf <(sed -E 's/^[0-9]+ //' "$SRCDIR/tests/data/ptf/every_event.ptf")
# a record the output cannot hold: an error naming it, no output left
"$TT" pack "$SRCDIR/examples/sort.hatf.zst" h.pdt2 2>err.txt
check "heap trace -> .pdt2 fails with 1" test $? -eq 1
check "... naming the record, its kind and the output" grep -q "sort.hatf.zst: record 0 (alloc): pdats2 output has no alloc records" err.txt
check "... leaving no output" test ! -e h.pdt2 -a ! -e h.pdt2.tmp
"$TT" pack a.din a.hatf.zst 2>err.txt
check "address trace -> .hatf fails with 1" test $? -eq 1
check "... naming the record" grep -q "a.din: record 0 (.*): hatf output has no" err.txt
# the address encodings are the rows' names: -e 32/4 is --addr-bits 32 --unit 4
check "pack -e 32/4" "$TT" pack -e 32/4 a.din e324.pdt2
check "pack --addr-bits 32 --unit 4" "$TT" pack --addr-bits 32 --unit 4 a.din o324.pdt2
check "... the same bytes" cmp -s e324.pdt2 o324.pdt2
check "... the default's" cmp -s e324.pdt2 a.pdt2
"$TT" pack -e 32/4 w.din e.pdt2 2>err.txt
check "-e 32/4 on 64-bit input: exit 1, no starting again" test $? -eq 1 -a -z "$(grep 'starting again' err.txt)"
"$TT" pack -e 32/4 --unit 1 a.din x.pdt2 2>/dev/null
check "-e with --unit: usage error" test $? -eq 2
"$TT" pack --unit 1 "$SRCDIR/examples/sort.hatf.zst" x.hatf 2>/dev/null
check "--unit for a heap output: usage error" test $? -eq 2
"$TT" pack -e 48/2 a.din x.pdt2 2>err.txt
check "unknown address encoding: usage error naming the encodings" grep -q "encodings: 64, 64/2" err.txt
# the retry: pack says which encoding it kept
"$TT" pack w.din wr.pdt2 2>err.txt
check "retry: starting again, twice" test "$(grep -c 'starting again' err.txt)" -eq 2
check "... writing 64 (64-bit, unit 1)" grep -q "wr.pdt2: .* records, encoding 64:" err.txt
check "... the bytes of --addr-bits 64 --unit 1" cmp -s wr.pdt2 <("$TT" pack --addr-bits 64 --unit 1 w.din - --format pdt2 --compress none 2>/dev/null)
# --format by a row's name or suffix; a heap trace to stdout
"$TT" pack --format mtf --compress zstd "$SRCDIR/examples/sort.hatf.zst" - >so.mtf.zst 2>/dev/null
check "--format mtf to stdout" test $? -eq 0
check "... reads back" cmp -s <("$TT" cat "$SRCDIR/examples/sort.hatf.zst" ascii) <("$TT" cat so.mtf.zst ascii)

# --- bash completion (completions/): COMPREPLY for a few cases ---
if command -v bash >/dev/null; then
        comp() { # comp SCRIPT WORD...: the completions of the last word, one a line
                local script=$1
                shift
                bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
                        f=$(complete -p "$(basename "$1")" | sed "s/.*-F \([^ ]*\).*/\1/")
                        "$f"; printf "%s\n" "${COMPREPLY[@]}"' _ "$script" "$@"
        }
        CD=${TM_SOURCE_DIR:-$here/../..}/completions # $here: absolute under meson
        CT=$CD/tracetool CM=$CD/tracemount
        check "completion: commands" test "$(comp "$CT" tracetool st | sort | tr '\n' ' ')" = "stat "
        check "completion: all commands" test "$(comp "$CT" tracetool "" | wc -l)" -eq 9
        check "completion: pack options" grep -qx -- --addr-bits <(comp "$CT" tracetool pack --a)
        check "completion: --format values" test "$(comp "$CT" tracetool pack --format pd | tr '\n' ' ')" = "pdats pdats2 "
        check "completion: --compress values" grep -qx zstd <(comp "$CT" tracetool pack --compress "")
        check "completion: cat ARCHIVE lists its views" test "$(comp "$CT" "$TT" cat lk.lackey.zst x)" = xdin
        check "completion: ... streams/" test "$(comp "$CT" "$TT" cat lk.lackey.zst streams/i)" = streams/ifetch
        check "completion: ... no xdin on a din archive" test -z "$(comp "$CT" "$TT" cat a.pdt2.zst x)"
        check "completion: cat completes the archive as a file" grep -qx lk.lackey.zst <(comp "$CT" "$TT" cat lk.lack)
        check "completion: tracemount options" grep -qx -- --cache-dir <(comp "$CM" tracemount --ca)
        check "completion: tracemount -o values" grep -qx allow_other <(comp "$CM" tracemount -o allow_o)
        mkdir -p compdir.d
        check "completion: tracemount directories" test "$(comp "$CM" tracemount compd)" = compdir.d
fi

finish
