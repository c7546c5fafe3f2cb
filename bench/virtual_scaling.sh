#!/bin/bash
# Scaling on the virtual clock (docs/virtual-time.md): simulated examples/s
# by trainers and sync method; 2 workers per trainer, trainers/2 embedding
# shards, network model on. Virtual-clock runs are deterministic, so one run
# per cell is the figure (wall time only decides how long this takes).
# usage: bench/virtual_scaling.sh [SHADOWSYNC] [DATA.tsv] [OUT_DIR]
set -u
B=${1:-build/shadowsync}
D=${2:-/tmp/vt/big.tsv}
O=${3:-/tmp/vt}
mkdir -p "$O"
[ -f "$D" ] || "$B" datagen --rows=1000000 --seed=41 --out="$D" > /dev/null
printf "%-9s" N; for a in none s-easgd s-ma s-bmuf fr-easgd fr-ma; do printf "%12s" $a; done; echo
for n in 1 2 4 8 16 32 64; do
  e=$(( n / 2 )); [ $e -lt 1 ] && e=1
  printf "%-9s" $n
  for a in none s-easgd s-ma s-bmuf fr-easgd fr-ma; do
    $B train --data.train=$D --cluster.mode=simulated --cluster.trainers=$n --cluster.workers=2 \
      --cluster.embedding-shards=$e --sync.algorithm=$a --net.enabled=true --sim.clock=virtual \
      --output.progress=none --output.metrics=$O/M-$a-$n.json > $O/L-$a-$n.log 2>&1 || echo "FAIL $a $n"
    printf "%12.0f" $(python3 -c "import json; print(json.load(open('$O/M-$a-$n.json'))['examples_per_second'])")
  done; echo
done
