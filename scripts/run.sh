#!/usr/bin/env bash
# The README's run command: install missing packages, build, then train on the
# built-in defaults (synthetic data generated on first use, a simulated cluster
# on the virtual clock; config/default.ini).
# Extra arguments go to `shadowsync train`.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
SS_UNITY=${SS_UNITY:-ON} ./scripts/build.sh shadowsync # (test.sh builds the rest)
mkdir -p out # (a fresh clone has none: output.metrics needs its folder)
exec ./build/shadowsync train --config-file=config/default.ini --output.metrics=out/metrics.json "$@"
