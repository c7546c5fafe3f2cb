#!/usr/bin/env bash
# System test of the simulated actor cluster on the wall clock (real threads,
# sim.clock=wall): every sync algorithm trains a small cluster (2 trainers,
# 2 embedding shards) on generated data to an eval NE close to sequential
# mode on the same data, and the metrics JSON carries the sync fields. usage: cluster_test.sh PATH/TO/shadowsync
set -u
bin=${1:?shadowsync binary}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

"$bin" datagen --rows=60000 --seed=1 --out="$tmp/train.tsv" > /dev/null || { echo "datagen failed"; exit 1; }
"$bin" datagen --rows=10000 --seed=2 --out="$tmp/eval.tsv" > /dev/null || { echo "datagen failed"; exit 1; }
common=(--data.train="$tmp/train.tsv" --data.eval="$tmp/eval.tsv" --model.rows-per-table=20000
        --output.progress=none --scheduler.max-threads=2 --sim.clock=wall)

if "$bin" train "${common[@]}" --cluster.mode=sequential --output.metrics="$tmp/seq.json" > "$tmp/seq.log" 2>&1; then
  seq_ne=$(json "$tmp/seq.json" "d['eval_ne']")
  ok "sequential: eval NE $seq_ne"
else
  bad "sequential run: $(tail -n 3 "$tmp/seq.log")"
  echo "$pass passed, $fail failed"
  exit 1
fi

# Hogwild within one trainer, no sync.
for alg in none s-easgd s-ma s-bmuf fr-easgd fr-ma fr-bmuf; do
  out="$tmp/$alg.json"
  timeout 300 "$bin" train "${common[@]}" --cluster.trainers=2 --cluster.workers=1 \
    --cluster.embedding-shards=2 --sync.algorithm=$alg --sync.k=5 \
    --output.metrics="$out" > "$tmp/$alg.log" 2>&1
  rc=$?
  if [ $rc != 0 ]; then
    bad "$alg: exit $rc: $(tail -n 3 "$tmp/$alg.log")"
    continue
  fi
  check=$(json "$out" "d['examples'] == 60000 and d['trainers'] == 2 and d['sync']['algorithm'] == '$alg'")
  ne=$(json "$out" "d['eval_ne']")
  # 'Close to sequential': within 3 % relative (two trainers see half the data each).
  close=$(json "$out" "abs(d['eval_ne'] - $seq_ne) / $seq_ne < 0.03")
  rounds=$(json "$out" "d['sync']['rounds']")
  if [ "$check" != "True" ]; then
    bad "$alg: metrics JSON fields wrong: $(cat "$out")"
  elif [ "$close" != "True" ]; then
    bad "$alg: eval NE $ne not within 3 % of sequential $seq_ne"
  elif [ "$alg" != "none" ] && [ "$rounds" = "0" ]; then
    bad "$alg: no sync round completed"
  else
    ok "$alg: eval NE $ne (sequential $seq_ne), $rounds rounds, gap $(json "$out" "d['sync']['sync_gap_mean']")"
  fi
done

summary
