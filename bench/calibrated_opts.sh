#!/bin/bash
# Prints the cost constants `shadowsync calibrate` measures now as train
# options (--sim.gflops=... --sim.core-contention=... ...), and calibrate's
# own output on stderr. Used by the validation scripts with CALIBRATE=1.
# usage: bench/calibrated_opts.sh [SHADOWSYNC]
set -eu
B=${1:-build/shadowsync}
out=$("$B" calibrate 2> /dev/null)
echo "$out" >&2
echo "$out" | grep -E '^[a-z-]+ = ' | sed 's/ = /=/; s/^/--sim./' | tr '\n' ' '
