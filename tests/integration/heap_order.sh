#!/usr/bin/env bash
# Heap traces from elsewhere that do not add up are read as written and
# their stats say so: glibc mtrace logs written out of order (as two threads'
# buffers would be), packed with `tracetool pack`, give `stats` and
# stats.json figures equal to a Perl count over the ascii view with the
# rules of views/stats.h (frees of addresses not live, double frees,
# reallocs of addresses not live, allocations at live addresses), and a
# line that says what they mean.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
TT=${TRACETOOL:?}
setup_tmp
cd "$T" || exit 1

# the figures of views/stats.h over ascii, as one line of name=value
cat >count.pl <<'EOF'
my (%live, %freed, $n, $b, $mn, $mb, $al, $re, $fr, $tot, $nl, $df, $rn, $alv);
sub add { my ($a, $s) = @_; return if $a eq "0x0";
  if (exists $live{$a}) { $alv++; $n--; $b -= $live{$a} }
  $live{$a} = $s; delete $freed{$a}; $n++; $b += $s; $tot += $s;
  $mn = $n if $n > $mn; $mb = $b if $b > $mb }
sub rel { my ($a, $isfree) = @_; return if $a eq "0x0";
  if (exists $live{$a}) { $n--; $b -= $live{$a}; delete $live{$a}; $freed{$a} = 1; return }
  if ($isfree) { $nl++; $df++ if $freed{$a} } else { $rn++ } }
while (<>) { my @f = split;
  if ($f[0] eq "alloc") { $al++; add($f[2], $f[1]) }
  elsif ($f[0] eq "free") { $fr++; rel($f[1], 1) }
  elsif ($f[0] =~ /^realloc/) { $re++; rel($f[2], 0); add($f[3], $f[1]) if $f[0] ne "realloc_free" } }
printf "allocs=%d reallocs=%d frees=%d total_bytes=%d max_objects=%d max_bytes=%d live_objects=%d " .
  "live_bytes=%d frees_not_live=%d double_frees=%d reallocs_not_live=%d allocs_at_live=%d\n",
  $al, $re, $fr, $tot, $mn, $mb, $n, $b, $nl, $df, $rn, $alv;
EOF
# stats.json's heap members, the same way
json_line() {
        python3 -c 'import json, sys
h = json.load(open(sys.argv[1]))["heap"]
ks = "allocs reallocs frees total_bytes max_objects max_bytes live_objects live_bytes frees_not_live double_frees reallocs_not_live allocs_at_live".split()
print(" ".join("%s=%s" % (k, h[k]["value"]) for k in ks))' "$1"
}

# by hand: a free before its allocation, a double free, a realloc of a
# dead address, an allocation at a live one
cat >hand.mtrace <<'EOF'
= Start
@ ./a:[0x1] + 0x1000 0x10
@ ./a:[0x2] - 0x2000
@ ./a:[0x3] + 0x2000 0x20
@ ./a:[0x4] - 0x1000
@ ./a:[0x5] - 0x1000
@ ./a:[0x6] < 0x3000
@ ./a:[0x6] > 0x4000 0x8
@ ./a:[0x7] + 0x2000 0x7
= End
EOF
# two threads, one allocating and one freeing, their lines in blocks in the
# order the blocks were flushed, not the order the calls happened
perl -e 'srand(11); my (@a, @f, @out);
  for my $i (1 .. 20000) { my $p = sprintf "0x%x", 0x10000 + 16 * int(rand(3000));
    push @a, "+ $p " . sprintf("0x%x", 1 + int(rand(500)));
    push @f, "- $p" if rand() < 0.8;
    if (@a >= 64) { push @out, (rand() < 0.5 ? (@a, @f) : (@f, @a)); @a = (); @f = () } }
  print "= Start\n", map("$_\n", @out, @a, @f), "= End\n"' >threads.mtrace

for log in hand threads; do
        "$TT" pack "$log.mtrace" "$log.hatf.zst" >/dev/null 2>pack.err || { cat pack.err; fail "$log: pack"; continue; }
        "$TT" cat "$log.hatf.zst" ascii | perl count.pl >want
        cp want "want.$log"
        "$TT" cat "$log.hatf.zst" stats.json >stats.json || fail "$log: stats.json"
        "$TT" cat "$log.hatf.zst" stats >stats || fail "$log: stats"
        json_line stats.json >got
        if cmp -s want got; then ok "$log: stats.json = Perl over ascii ($(cat got))"
        else fail "$log: stats.json '$(cat got)' != Perl '$(cat want)'"; fi
        check "$log: stats.json exact" sh -c '! grep -q "\"exact\":false" stats.json'
        nl=$(sed -n 's/.*frees_not_live=\([0-9]*\).*/\1/p' want)
        check "$log: some frees do not add up" test "$nl" -gt 0
        check "$log: stats counts them" grep -q "^  frees of addresses not live: $nl$" stats
        check "$log: stats says what they mean" grep -q "order written" stats
done
check "hand: the counts" grep -q "frees_not_live=2 double_frees=1 reallocs_not_live=1 allocs_at_live=1" want.hand
finish
