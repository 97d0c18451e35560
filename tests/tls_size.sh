#!/bin/bash
# tls_size.sh BINARY...: each program's static thread-local storage (its
# PT_TLS segment, which the C library zeroes in every thread it makes) is
# under 16 KiB. A large _Thread_local array costs every FUSE worker its
# size in RSS whether or not it ever decodes, and keeps it while the
# worker idles (issue 33: 243 KiB a thread, RSS after closing 2,000
# handles 30% above idle); per-thread buffers go through tm_tls.h.
# READELF: readelf.
set -u
rc=0
for b in "$@"; do
        line=$("${READELF:-readelf}" -lW "$b" | awk '$1 == "TLS"')
        if [ -z "$line" ]; then
                echo "ok: $b has no TLS segment"
                continue
        fi
        memsz=$(awk '{ print strtonum($6) }' <<<"$line")
        if [ "$memsz" -ge 16384 ]; then
                echo "FAIL: $b: $memsz bytes of static TLS (>= 16384): $line"
                rc=1
        else
                echo "ok: $b: $memsz bytes of static TLS"
        fi
done
exit $rc
