#!/bin/sh
# export_lib.sh IN.a OUT.a: the installed form of the library.
#
# IN.a is the library as the tree links it, built with hidden visibility:
# every symbol but the API's (TM_API in include/tracemount.h) is hidden,
# which a shared library would honour but a static archive does not (the
# linker resolves hidden symbols across objects and archives alike). So the
# objects are linked into one (ld -r), which resolves the references
# between them, and the hidden symbols are then made local (objcopy
# --localize-hidden): OUT.a defines no global symbol but the API's, so a
# program linking it cannot collide with the library's internal names.
# tests/api_symbols.sh checks the result. Tools: $LD, $OBJCOPY, $AR.
set -eu
in=$1
out=$2
obj=${out%.a}.o
rm -f "$out" "$obj"
"${LD:-ld}" -r --whole-archive "$in" -o "$obj"
"${OBJCOPY:-objcopy}" --localize-hidden "$obj"
"${AR:-ar}" rcs "$out" "$obj"
rm -f "$obj"
