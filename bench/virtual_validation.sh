#!/bin/bash
# The virtual clock against real runs on this machine (docs/virtual-time.md,
# "Validation"): one trainer with 1 and 2 Hogwild workers, sync none, on the
# wall clock and on the virtual clock (sim.placement=one-host: every role on
# one host of sim.cores-per-host = this machine's cores, as the real run
# shares them) under sim.cost=model and sim.cost=measured; the sequential engine
# for reference. REPEATS alternated runs each; prints the median examples/s
# and each prediction's error against the real run.
# usage: bench/virtual_validation.sh [SHADOWSYNC] [DATA.tsv] [REPEATS]
# SIM_OPTS (environment): more options for the virtual runs, e.g. the lines
# of `shadowsync calibrate` as --sim.gflops=... --sim.memory-gbps=...
set -eu
SIM_OPTS=${SIM_OPTS:-}
B=${1:-build/shadowsync}
# CALIBRATE=1 (environment): first measure the cost constants here
# (bench/calibrated_opts.sh) and add them to SIM_OPTS.
if [ "${CALIBRATE:-0}" = 1 ]; then
  SIM_OPTS="$("$(dirname "$0")/calibrated_opts.sh" "$B") $SIM_OPTS"
  echo "SIM_OPTS: $SIM_OPTS"
fi
D=${2:-/tmp/vv/train.tsv}
R=${3:-3}
CORES=$(nproc)
mkdir -p "$(dirname "$D")"
[ -f "$D" ] || "$B" datagen --rows=100000 --seed=3 --out="$D" > /dev/null
M=$(mktemp -d)
trap 'rm -rf "$M"' EXIT
eps() { "$B" train --data.train="$D" --output.progress=none --output.metrics="$M/m.json" "$@" \
          > /dev/null 2>&1 && python3 -c "import json; print(json.load(open('$M/m.json'))['examples_per_second'])"; }
# Where the host put the two vCPUs (bench/core_to_core.cpp): near ~31-48 ns,
# far ~154-177 ns per cache-line turn; the real 2-worker runs depend on it.
PROBE="$(dirname "$B")/bench/bench_core_to_core"
probe() { [ -x "$PROBE" ] && echo "core-to-core probe ($1): $("$PROBE" 2>/dev/null | tail -1)" || true; }
probe before
for r in $(seq "$R"); do
  echo "sequential $(eps --cluster.mode=sequential)" >> "$M/all"
  for w in 1 2; do
    C=(--cluster.trainers=1 --cluster.workers=$w --sync.algorithm=none)
    echo "w$w-wall $(eps "${C[@]}" --sim.clock=wall)" >> "$M/all"
    for cost in model measured; do
      echo "w$w-$cost $(eps "${C[@]}" --sim.clock=virtual --sim.placement=one-host --sim.cores-per-host=$CORES --sim.cost=$cost $SIM_OPTS)" >> "$M/all"
    done
  done
done
probe after
python3 - "$M/all" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    k, v = line.split()
    runs.setdefault(k, []).append(float(v))
med = {k: statistics.median(v) for k, v in runs.items()}
print("sequential engine: %.0f ex/s (median of %d)" % (med["sequential"], len(runs["sequential"])))
print("| workers | real (wall) | virtual, model | error | virtual, measured | error |")
print("|---|---|---|---|---|---|")
for w in (1, 2):
    real = med["w%d-wall" % w]
    cells = ["%d" % w, "%.0f" % real]
    for cost in ("model", "measured"):
        p = med["w%d-%s" % (w, cost)]
        cells += ["%.0f" % p, "%+.0f %%" % (100 * (p / real - 1))]
    print("| " + " | ".join(cells) + " |")
PY
