#!/usr/bin/env bash
# The README's test command: install missing packages, build, run every test.
#  1. build/: every ctest entry (unit suites, fuzz corpus replay and bounded
#     libFuzzer runs, CLI, simulated cluster, certificates, multi-node on
#     loopback, the chaos runs, and the network-namespace test as root);
#  2. build-asan/: the unit and actor suites and the fuzz corpus replay under
#     AddressSanitizer + UndefinedBehaviorSanitizer (label asan);
#  3. build-tsan/: the real-threads Hogwild test under ThreadSanitizer.
# SS_SKIP_ASAN=1 / SS_SKIP_TSAN=1 skip parts 2 / 3 for a quick local run.
# Extra arguments go to part 1's ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh test
# A fresh build/ is a unity build (SS_UNITY: the libraries, the tool and the
# test suites compile in batches of 8 sources), as the sanitizer builds
# below: a first build in about half the time; an existing build/ keeps its
# own setting.
SS_UNITY=${SS_UNITY:-ON} ./scripts/build.sh
# As many tests at once as there are cores; multinode, multinode_netns and
# chaos run alone (RUN_SERIAL: their deadlines assume a machine of their own).
jobs=$(nproc)
(cd build && ctest -j"$jobs" --output-on-failure --timeout 1800 "$@")

export CXX=${CXX:-g++}
# Builds the named targets in build-$1 with -D$2=ON (each library as unity
# builds: SS_UNITY), then runs ctest -L $1.
sanitized() {
  local name=$1 option=$2
  shift 2
  cmake -S . -B "build-$name" -DCMAKE_BUILD_TYPE=Release -DSS_UNITY=ON "-D$option=ON" > "build-$name.log" 2>&1 \
    || { cat "build-$name.log"; exit 1; }
  cmake --build "build-$name" -j"$(nproc)" --target "$@" >> "build-$name.log" 2>&1 \
    || { tail -n 60 "build-$name.log"; exit 1; }
  (cd "build-$name" && ctest -j"$jobs" --output-on-failure --timeout 1800 -L "$name")
}
if [ "${SS_SKIP_ASAN:-0}" != 1 ]; then
  sanitized asan SS_ASAN asan_suites # (tests/CMakeLists.txt lists its targets)
fi
# ThreadSanitizer pass over the actor suite (real threads on a shared Hogwild
# replica; tests/tsan.supp suppresses only races through hogwild_replica).
if [ "${SS_SKIP_TSAN:-0}" != 1 ]; then
  sanitized tsan SS_TSAN tsan_suites
fi
