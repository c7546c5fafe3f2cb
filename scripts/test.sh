#!/usr/bin/env bash
# The README's test command: install missing packages, build, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
./scripts/build.sh
(cd build && ctest --output-on-failure --timeout 900 "$@")

# ThreadSanitizer pass over the actor suite (real threads on a shared Hogwild
# replica; tests/tsan.supp suppresses only races through hogwild_replica).
# SS_SKIP_TSAN=1 skips it for a quick local run.
if [ "${SS_SKIP_TSAN:-0}" != 1 ]; then
  export CXX=${CXX:-g++}
  cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Release -DSS_TSAN=ON > build-tsan.log 2>&1 \
    || { cat build-tsan.log; exit 1; }
  cmake --build build-tsan -j"$(nproc)" --target test_actors \
    >> build-tsan.log 2>&1 || { tail -n 60 build-tsan.log; exit 1; }
  (cd build-tsan && ctest --output-on-failure --timeout 1800 -L tsan --repeat until-pass:3)
fi
