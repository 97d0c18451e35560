#!/usr/bin/env bash
# Exact heap figures past any live-object table (issue 26): a glibc mtrace
# log of 3.5 million allocations at distinct addresses, of which 250 000
# are freed, so that 3.25 million objects are live at the peak and at the
# end, mounted as it is (the mtrace record codec). `tracetool stat --json`
# must give the figures Perl computes while it writes the log (not from
# tracemount's output): allocs, frees, total bytes, max objects, max bytes,
# live objects and bytes at the end, and say they are exact.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
TT=${TRACETOOL:?}
T=$(mktemp -d "${TMPDIR:-/tmp}/tm-live.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1

N=${TM_LIVE_ALLOCS:-3500000}
M=$((N - 500000)) # frees start after M allocations, one every second one
perl -e '
my ($N, $M) = @ARGV;
my ($n, $b, $mn, $mb, $tot, $fr) = (0) x 6;
open my $log, "|-", "gzip -1 > log.mtrace.gz" or die;
print $log "= Start\n";
for my $i (0 .. $N - 1) {
        my $s = 1 + $i % 61;
        printf $log "+ 0x%x 0x%x\n", 0x100000 + 16 * $i, $s;
        $n++; $b += $s; $tot += $s;
        $mn = $n if $n > $mn; $mb = $b if $b > $mb;
        if ($i >= $M && ($i - $M) % 2 == 0) {
                my $j = $i - $M;
                printf $log "- 0x%x\n", 0x100000 + 16 * $j;
                $n--; $b -= 1 + $j % 61; $fr++;
        }
}
print $log "= End\n";
close $log or die;
print "allocs=$N frees=$fr total_bytes=$tot max_objects=$mn max_bytes=$mb live_objects=$n live_bytes=$b exact=True\n";
' "$N" "$M" >want.txt || fail "writing the log"
"$TT" stat --json log.mtrace.gz >stats.json 2>err.txt || fail "tracetool stat: $(cat err.txt)"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); h = d["heap"]
ks = "allocs frees total_bytes max_objects max_bytes live_objects live_bytes".split()
print(" ".join("%s=%s" % (k, h[k]["value"]) for k in ks) + " exact=%s" % all(h[k]["exact"] for k in ks))' stats.json >got.txt
echo "want: $(cat want.txt)"
echo "got:  $(cat got.txt)"
check "3.25 million live objects: stats.json equals the Perl count" cmp -s want.txt got.txt
check "... and the text stats say no figure is unknown" \
        eval '! "$TT" stat log.mtrace.gz 2>/dev/null | grep -q "not known"'
finish
