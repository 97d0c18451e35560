#!/usr/bin/env bash
# tracemount developer entry point. Idempotent: installs only what is missing.
#   ./build.sh demo   install, build, mount examples/ and show them (the main job)
#   ./build.sh test   install, build, run every test (release build, then ASan+UBSan)
#   ./build.sh deps | build | bench
set -euo pipefail
cd "$(dirname "$0")"

# Debian 12 packages: build, runtime, tests (perl/gawk for integration checks,
# sshfs + openssh-server for the network-filesystem test over loopback,
# default-jdk-headless for the JVMTI agent's jvmti.h and javac of its test,
# unzip to check the archives it writes, clang and its libFuzzer runtime for
# the fuzz harnesses the suite runs: tests/fuzz_smoke.sh).
PKGS="build-essential meson ninja-build pkg-config libfuse3-dev fuse3 zlib1g-dev
      libzstd-dev zstd libcmocka-dev gzip perl gawk python3 heaptrack
      sshfs openssh-server openssh-client
      default-jdk-headless unzip clang libclang-rt-dev"

deps() {
        local missing=()
        for p in $PKGS; do
                dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
                        missing+=("$p")
        done
        [ ${#missing[@]} -eq 0 ] && return 0
        echo "build.sh: installing ${missing[*]}"
        local sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        # Another install (unattended-upgrades, a second build.sh) holds
        # dpkg's lock: wait for it (up to 10 minutes) instead of failing.
        wait_dpkg_lock
        local lock=(-o DPkg::Lock::Timeout=600)
        $sudo apt-get "${lock[@]}" update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get "${lock[@]}" install -y -qq "${missing[@]}"
}

# Wait while a process holds dpkg's or apt's lock (fuser, when installed,
# sees them; apt-get's DPkg::Lock::Timeout covers the rest).
wait_dpkg_lock() {
        command -v fuser >/dev/null 2>&1 || return 0
        local waited=0 locks="/var/lib/dpkg/lock-frontend /var/lib/dpkg/lock
                /var/lib/apt/lists/lock /var/cache/apt/archives/lock"
        # shellcheck disable=SC2086
        while fuser $locks >/dev/null 2>&1; do
                [ "$waited" -eq 0 ] && echo "build.sh: waiting for another package install to finish"
                [ "$waited" -ge 600 ] && break
                sleep 5
                waited=$((waited + 5))
        done
}

build() {
        [ -f build/build.ninja ] || meson setup build --buildtype=release
        ninja -C build
}

build_asan() {
        [ -f build-asan/build.ninja ] ||
                meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false
        ninja -C build-asan
}

run_tests() {
        deps
        build
        echo "== tests: release build =="
        meson test -C build --print-errorlogs --num-processes 2
        build_asan
        echo "== tests: ASan + UBSan build =="
        ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
                UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
                meson test -C build-asan --print-errorlogs --num-processes 2
}

demo() {
        deps
        build
        local mnt=${TRACEMOUNT_DEMO_MNT:-$PWD/mnt}
        mkdir -p "$mnt"
        if mountpoint -q "$mnt"; then fusermount3 -u "$mnt"; fi
        if [ ! -e /dev/fuse ]; then
                echo "build.sh: /dev/fuse is missing: cannot mount; showing through tracetool instead"
                for a in examples/*; do build/tools/tracetool stat "$a" 2>/dev/null || true; done
                return 0
        fi
        # Index files go to a cache dir so the checkout stays clean.
        build/fs/tracemount --cache-dir "${XDG_CACHE_HOME:-$HOME/.cache}" \
                --no-index-beside examples "$mnt"
        echo "== mounted examples/ at $mnt =="
        ( set -x
          ls -l "$mnt"
          ls -l "$mnt/sort.pdt2.zst" "$mnt/sort.pdt2.zst/streams"
          head -n 5 "$mnt/sort.pdt2.zst/ascii"
          tail -n 3 "$mnt/sort.pdt2.zst/ascii"
          grep -c '^1 ' "$mnt/sort.pdt2.zst/ascii"
          awk '$1 == 2 { n++ } END { print n, "instruction fetches" }' "$mnt/ls.pdt.gz/ascii"
          cat "$mnt/sort.pdt2.zst/stats"
          cat "$mnt/tex-table3.din/ascii"
          ls "$mnt/sort.hatf.zst" "$mnt/sort.hatf.zst/fields"
          head -n 5 "$mnt/sort.hatf.zst/ascii"
          awk '$1 == "alloc" { n++; b += $2 } END { print n, "allocs,", b / n, "bytes on average" }' \
                "$mnt/sort.hatf.zst/ascii"
          sed -n '/^heap/,/avg/p' "$mnt/sort.hatf.zst/stats"
          ls "$mnt/heapwork.mtf.zst/sections"
          tail -n 3 "$mnt/heapwork.mtf.zst/sections/heap" )
        cat <<MSG

== try it ==
  ls $mnt                      every archive is a directory of views
  less $mnt/gzip.din.zst/ascii    din text, decoded on demand
  dinero-style tools:          any program that reads din text reads $mnt/*/ascii
  numpy:                       np.fromfile('$mnt/sort.pdt2.zst/binary', dtype=[('addr','<u8'),('type','u1'),('pad','V7')])
  heap traces:                 cat $mnt/sort.hatf.zst/schema (kinds, fields, binary layout)
  record your own:             build/tools/tracetool record -o x.hatf.zst -- PROGRAM ARGS
  unmount:                     fusermount3 -u $mnt
MSG
}

case "${1:-}" in
deps) deps ;;
build) deps; build ;;
test) run_tests ;;
demo) demo ;;
bench) deps; build; bench/run.sh "${@:2}" ;;
*) sed -n '2,6p' "$0"; exit 2 ;;
esac
