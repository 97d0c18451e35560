#!/usr/bin/env bash
# Re-record the sample traces with valgrind lackey and pack them with tracetool.
# Usage: examples/record.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")"
TT=${1:-../build}/tools/tracetool
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
lackey() { valgrind --tool=lackey --trace-mem=yes --log-fd=9 "$@" 9> "$W/out" > /dev/null; cat "$W/out"; }
seq 1 300 | shuf --random-source=<(yes) > "$W/nums"
lackey sort -n "$W/nums" -o /dev/null | "$TT" pack - sort.pdt2.zst
lackey ls /usr | "$TT" pack - ls.pdt.gz
head -c 4000 ../README.md > "$W/text"
lackey gzip -c "$W/text" | "$TT" pack - gzip.din.zst
lackey /bin/true | gzip -9 > true.lackey.gz
ls -l
