#!/usr/bin/env bash
# Configures and builds (Release, g++) into ./build: everything, or only the
# targets given (the README's run command builds `shadowsync` alone).
set -euo pipefail
cd "$(dirname "$0")/.."
export CXX=${CXX:-g++}
targets=()
for t in "$@"; do targets+=(--target "$t"); done
# SS_UNITY=ON|OFF in the environment configures a fresh build/ with that
# setting (run.sh asks for ON: the libraries as unity builds, a first build of
# `shadowsync` in about two thirds of the time); an existing build/ keeps its own.
unity=()
if [ -n "${SS_UNITY:-}" ] && [ ! -f build/CMakeCache.txt ]; then
  unity=(-DSS_UNITY="$SS_UNITY")
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${unity[@]}" > build.log 2>&1 || { cat build.log; exit 1; }
cmake --build build -j"$(nproc)" "${targets[@]}" >> build.log 2>&1 || { tail -n 60 build.log; exit 1; }
echo "build: ok${*:+ ($*)} (log in build.log)"
