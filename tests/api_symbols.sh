#!/bin/bash
# api_symbols.sh ARCHIVE: the installed libtracemount (include/export_lib.sh
# makes it) defines no global symbol without the tm_ prefix, and exactly
# the functions that include/tracemount.h marks TM_API, so that a program
# linking it meets only the API and cannot collide with the library's
# internal names. Fails on the tree's own archive (libtm), whose hidden
# symbols are still global. NM, TM_SOURCE_DIR: nm and the source tree.
set -u
a=$1
hdr=${TM_SOURCE_DIR:-$(dirname "$0")/..}/include/tracemount.h
defined=$("${NM:-nm}" -g --defined-only "$a" | awk 'NF == 3 { print $3 }' | sort -u)
[ -n "$defined" ] || { echo "FAIL: no global symbol defined in $a"; exit 1; }
rc=0
bad=$(grep -v '^tm_' <<<"$defined")
if [ -n "$bad" ]; then
        echo "FAIL: $a defines $(wc -l <<<"$bad") global symbols without the tm_ prefix:"
        head -n 40 <<<"$bad"
        rc=1
fi
api=$(sed -n 's/^TM_API .*[ *]\(tm_[a-z0-9_]*\)(.*/\1/p' "$hdr" | sort -u)
[ "$(wc -l <<<"$api")" -ge 10 ] || { echo "FAIL: no TM_API functions found in $hdr"; exit 1; }
extra=$(comm -23 <(echo "$defined") <(echo "$api") | grep '^tm_')
missing=$(comm -13 <(echo "$defined") <(echo "$api"))
if [ -n "$extra" ]; then
        echo "FAIL: $a exports tm_ symbols that include/tracemount.h does not declare:"
        head -n 40 <<<"$extra"
        rc=1
fi
if [ -n "$missing" ]; then
        echo "FAIL: $a lacks API functions of include/tracemount.h:"
        echo "$missing"
        rc=1
fi
[ $rc -eq 0 ] && echo "ok: $a exports the $(wc -l <<<"$api") functions of include/tracemount.h and nothing else"
exit $rc
