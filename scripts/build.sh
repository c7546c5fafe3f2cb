#!/usr/bin/env bash
# Configures and builds everything (Release, g++) into ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
export CXX=${CXX:-g++}
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > build.log 2>&1 || { cat build.log; exit 1; }
cmake --build build -j"$(nproc)" >> build.log 2>&1 || { tail -n 60 build.log; exit 1; }
echo "build: ok (log in build.log)"
