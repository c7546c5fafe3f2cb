#!/bin/bash
# The virtual clock against the 3-node loopback cluster (docs/virtual-time.md,
# "Validation"). The job of config/cluster-3node.ini (two trainer nodes of
# one Hogwild worker, the embedding shard and the EASGD centre on the
# coordinator node, S-EASGD) runs
#  - for real: `shadowsync launch` on loopback over plain TCP, each node with
#    max(1, cores / 3) scheduler threads (launch's split);
#  - on the virtual clock: one process, the same trainers, shards and
#    settings, one core per simulated host, the network model on with its
#    defaults, under sim.cost=model and sim.cost=measured; with ONE_HOST=1
#    (environment) instead every role on one host of this machine's cores
#    (sim.placement=one-host), as the three real nodes share them; with
#    MACHINE=1 each role's host has one core (a node's one scheduler thread)
#    and all hosts share one machine of this machine's cores
#    (sim.machine-cores), so messages between them still cross hosts (and
#    pay sim.remote-message-us and sim.remote-gbps when SIM_OPTS gives them).
# REPEATS alternated rounds; prints the median training examples/s of each
# and each prediction's error against the real run.
# usage: bench/virtual_validation_3node.sh [SHADOWSYNC] [DATA.tsv] [REPEATS]
# SIM_OPTS (environment): more options for the virtual runs.
set -eu
SIM_OPTS=${SIM_OPTS:-}
B=${1:-build/shadowsync}
# CALIBRATE=1 (environment): first measure the cost constants here
# (bench/calibrated_opts.sh) and add them to SIM_OPTS.
if [ "${CALIBRATE:-0}" = 1 ]; then
  SIM_OPTS="$("$(dirname "$0")/calibrated_opts.sh" "$B") $SIM_OPTS"
  echo "SIM_OPTS: $SIM_OPTS"
fi
D=${2:-/tmp/vv3/train.tsv}
R=${3:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SPEC=$ROOT/config/cluster-3node.ini
mkdir -p "$(dirname "$D")"
[ -f "$D" ] || "$B" datagen --rows=200000 --seed=31 --out="$D" > /dev/null
M=$(mktemp -d)
trap 'rm -rf "$M"' EXIT
eps() { # KEY: the metric to print; the rest: the command after the binary
  local key=$1
  shift
  if ! "$B" "$@" --data.train="$D" --data.eval= --output.progress=none \
         --output.metrics="$M/m.json" > "$M/log" 2>&1; then
    echo "failed: $B $*" >&2
    tail -20 "$M/log" >&2
    exit 1
  fi
  python3 -c "import json; print(json.load(open('$M/m.json'))['$key'])"
}
# The job of the spec in one process, as bench/suite_multinode.py runs it:
# config/default.ini holds the spec's model, training and sync settings (2
# trainers of one worker, S-EASGD); the spec's one embedding shard and its
# request timeout are added.
JOB=(--config-file="$ROOT/config/default.ini" --cluster.embedding-shards=1 --cluster.dense-shards=1
     --cluster.timeout-ms=10000)
VIRT=(--cluster.mode=simulated --sim.clock=virtual --net.enabled=true)
if [ "${ONE_HOST:-0}" = 1 ]; then
  VIRT+=(--sim.placement=one-host --sim.cores-per-host="$(nproc)")
elif [ "${MACHINE:-0}" = 1 ]; then
  VIRT+=(--sim.cores-per-host=1 --sim.machine-cores="$(nproc)")
else
  VIRT+=(--sim.cores-per-host=1)
fi
for r in $(seq "$R"); do
  echo "real $(eps examples_per_second launch --config-file="$SPEC" --deploy.insecure=true)" >> "$M/all"
  for cost in model measured; do
    # shellcheck disable=SC2086 # SIM_OPTS is a list of options
    echo "$cost $(eps simulated_examples_per_second train "${JOB[@]}" "${VIRT[@]}" \
                  --sim.cost=$cost $SIM_OPTS)" >> "$M/all"
  done
done
where="one core per simulated host"
[ "${ONE_HOST:-0}" = 1 ] && where="every role on one host of $(nproc) cores"
[ "${MACHINE:-0}" = 1 ] && where="one core per simulated host, all on one machine of $(nproc) cores"
python3 - "$M/all" "$R" "$where" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    k, v = line.split()
    runs.setdefault(k, []).append(float(v))
med = {k: statistics.median(v) for k, v in runs.items()}
real = med["real"]
print("3-node loopback cluster (plain TCP) against the virtual clock (%s), medians of %s rounds"
      % (sys.argv[3], sys.argv[2]))
print("| run | examples/s | error against the real run |")
print("|---|---|---|")
print("| real: launch, 3 nodes on loopback | %.0f (%.0f-%.0f) | |" % (real, min(runs["real"]), max(runs["real"])))
for cost in ("model", "measured"):
    p = med[cost]
    print("| virtual, sim.cost=%s | %.0f | %+.0f %% |" % (cost, p, 100 * (p / real - 1)))
PY
