#!/usr/bin/env bash
# The README's test command: install missing packages, build, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
./scripts/build.sh
cd build
ctest --output-on-failure --timeout 900 "$@"
