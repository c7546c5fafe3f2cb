#!/usr/bin/env bash
# GAUC (data.user) end to end: the same model on the same data gives the same
# GAUC in the sequential engine's evaluation, `shadowsync eval` and `predict`
# (and the simulated cluster's, virtual and wall clock, against `eval` of its
# saved model; a two-node job's against the one-process cluster's), and that
# GAUC is the one a plain pair-counting computation in Python gets from
# predict's scores, the labels and the raw user column.
# The generated Criteo-shaped data has no user column: categorical C1 (616
# distinct values in the 3 000 eval rows, 170 of them with both labels)
# stands in for the user.
# usage: gauc_test.sh PATH/TO/shadowsync SOURCE_DIR
set -u
bin=${1:?shadowsync binary}
src=${2:?source dir}
source "$src/tests/system/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bin" datagen --rows=20000 --seed=31 --out="$tmp/train.tsv" > /dev/null || { echo "datagen failed"; exit 1; }
"$bin" datagen --rows=3000 --seed=32 --out="$tmp/eval.tsv" > /dev/null || exit 1
user=C1
common=(--data.train="$tmp/train.tsv" --data.eval="$tmp/eval.tsv" --data.user=$user
        --model.rows-per-table=5000 --output.progress=none)

# GAUC by pair counting: per user, wins (1) and ties (1/2) of positive over
# negative scores, weighted by the user's examples; one-class users left out.
cat > "$tmp/gauc.py" <<'PY'
import sys
from collections import defaultdict
scores = [float(x) for x in open(sys.argv[1])]
col = int(sys.argv[3])
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[2])]
assert len(scores) == len(rows), (len(scores), len(rows))
by_user = defaultdict(list)
for s, r in zip(scores, rows):
    by_user[r[col] if col < len(r) else ''].append((s, int(r[0])))
num = den = 0.0
for ex in by_user.values():
    pos = [s for s, y in ex if y == 1]
    neg = [s for s, y in ex if y == 0]
    if pos and neg:
        wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
        num += len(ex) * wins / (len(pos) * len(neg))
        den += len(ex)
print(repr(num / den), len(by_user))
PY

# 1. Sequential: train's eval, eval, predict, Python.
if "$bin" train "${common[@]}" --cluster.mode=sequential --output.model="$tmp/seq" \
    --output.metrics="$tmp/seq.json" > "$tmp/seq.log" 2>&1; then
  gauc=$(json "$tmp/seq.json" "repr(d['eval_gauc'])")
  users=$(json "$tmp/seq.json" "d['eval_users']")
  counted=$(json "$tmp/seq.json" "d['eval_gauc_users']")
  auc=$(json "$tmp/seq.json" "d['eval_auc']")
  [ "$(json "$tmp/seq.json" "0.5 < d['eval_gauc'] < 1 and 0 < d['eval_gauc_users'] < d['eval_users'] and d['eval_gauc_examples'] < 3000 and d['eval_gauc'] != d['eval_auc']")" = True ] \
    && ok "sequential: GAUC $gauc over $counted of $users users (AUC $auc)" \
    || bad "sequential metrics: gauc $gauc, $counted of $users users, auc $auc"
  grep -q "GAUC .* over $counted of $users users" "$tmp/seq.log" && ok "the summary states GAUC" \
    || bad "no GAUC in the summary: $(grep -i auc "$tmp/seq.log")"
  "$bin" eval --model="$tmp/seq" --data.eval="$tmp/eval.tsv" --output.progress=none \
    --output.metrics="$tmp/seq-eval.json" > "$tmp/seq-eval.log" 2>&1
  [ "$(json "$tmp/seq-eval.json" "repr(d['eval_gauc'])")" = "$gauc" ] \
    && ok "eval of the saved model (its own data.user): the same GAUC, bit for bit" \
    || bad "eval GAUC $(json "$tmp/seq-eval.json" "d.get('eval_gauc')") vs $gauc: $(tail -n 2 "$tmp/seq-eval.log")"
  if "$bin" predict --model="$tmp/seq" --data="$tmp/eval.tsv" --out="$tmp/p.txt" --output.progress=none \
      > "$tmp/predict.log" 2>&1; then
    said=$(sed -n 's/.*GAUC \([0-9.]*\) over.*/\1/p' "$tmp/predict.log")
    [ "$(/usr/bin/python3 -c "print('%.6f' % $gauc == '$said')")" = True ] \
      && ok "predict states GAUC $said" || bad "predict said GAUC '$said', want $gauc"
    read -r py pyusers < <(/usr/bin/python3 "$tmp/gauc.py" "$tmp/p.txt" "$tmp/eval.tsv" 14)
    [ "$(/usr/bin/python3 -c "print(abs($py - $gauc) < 1e-6 and $pyusers == $users)")" = True ] \
      && ok "Python pair counting on predict's scores: GAUC $py over $pyusers users" \
      || bad "Python GAUC $py over $pyusers users vs $gauc over $users"
  else
    bad "predict: $(tail -n 3 "$tmp/predict.log")"
  fi
  # Scores without labels: no AUC, no GAUC.
  cut -f2- "$tmp/eval.tsv" > "$tmp/bare.tsv"
  "$bin" predict --model="$tmp/seq" --data="$tmp/bare.tsv" --out="$tmp/pb.txt" --output.progress=none \
    > "$tmp/bare.log" 2>&1
  cmp -s "$tmp/p.txt" "$tmp/pb.txt" && ! grep -q "AUC" "$tmp/bare.log" \
    && ok "predict without labels: the same scores, no (G)AUC" || bad "predict without labels: $(tail -n 2 "$tmp/bare.log")"
  # Another user column at eval time: another GAUC; a mistyped one is refused.
  "$bin" eval --model="$tmp/seq" --data.eval="$tmp/eval.tsv" --data.user=C13 --output.progress=none \
    --output.metrics="$tmp/c13.json" > /dev/null 2>&1
  [ "$(json "$tmp/c13.json" "d['eval_gauc'] != $gauc")" = True ] && ok "eval --data.user=C13 overrides the model's" \
    || bad "eval --data.user=C13: $(json "$tmp/c13.json" "d.get('eval_gauc')")"
else
  bad "sequential train: $(tail -n 3 "$tmp/seq.log")"
fi
expect 2 "data.user.*'C99'.*not in the column names" "train: a mistyped data.user is refused" -- \
  "$bin" train --data.train="$tmp/train.tsv" --data.user=C99
expect 2 "data.user.*out of range" "eval: a data.user beyond the layout is refused" -- \
  "$bin" eval --model="$tmp/seq" --data.eval="$tmp/eval.tsv" --data.user=40

# 2. The simulated cluster, virtual and wall clock: its eval against eval of
#    its saved model on the same data (exactly), and against Python.
for clock in virtual wall; do
  if "$bin" train "${common[@]}" --sim.clock=$clock --output.model="$tmp/sim-$clock" \
      --output.metrics="$tmp/sim-$clock.json" > "$tmp/sim-$clock.log" 2>&1; then
    g=$(json "$tmp/sim-$clock.json" "repr(d['eval_gauc'])")
    "$bin" eval --model="$tmp/sim-$clock" --data.eval="$tmp/eval.tsv" --output.progress=none \
      --output.metrics="$tmp/sim-$clock-eval.json" > /dev/null 2>&1
    "$bin" predict --model="$tmp/sim-$clock" --data="$tmp/eval.tsv" --out="$tmp/ps.txt" \
      --output.progress=none > /dev/null 2>&1
    read -r py _ < <(/usr/bin/python3 "$tmp/gauc.py" "$tmp/ps.txt" "$tmp/eval.tsv" 14)
    [ "$(json "$tmp/sim-$clock-eval.json" "repr(d['eval_gauc'])")" = "$g" ] && \
      [ "$(/usr/bin/python3 -c "print(abs($py - $g) < 1e-6)")" = True ] \
      && ok "simulated cluster ($clock clock): GAUC $g = eval of its model = Python $py" \
      || bad "simulated ($clock): $g vs eval $(json "$tmp/sim-$clock-eval.json" "d.get('eval_gauc')") vs Python $py"
  else
    bad "simulated train ($clock): $(tail -n 3 "$tmp/sim-$clock.log")"
  fi
done
# 3. Multi-node (two node processes on loopback, plain TCP): the coordinator
#    evaluates over the network what the one-process cluster evaluates; with
#    one trainer node and FR-EASGD both train the same model exactly
#    (multinode_test.sh 1a), so their GAUC must be equal, bit for bit.
read -r pc pt0 < <(free_ports 2)
mn=(--data.train="$tmp/train.tsv" --data.eval="$tmp/eval.tsv" --data.user=$user
    --model.rows-per-table=5000 --sync.algorithm=fr-easgd --train.dense-lr=0.01 --cluster.trainers=1
    --output.progress=none)
"$bin" train --config-file="$src/config/default.ini" --sim.calibration= "${mn[@]}" --cluster.embedding-shards=1 \
  --cluster.dense-shards=1 --output.metrics="$tmp/one.json" > "$tmp/one.log" 2>&1
if timeout 300 "$bin" launch --config-file="$src/config/cluster-3node.ini" "${mn[@]}" \
    --deploy.insecure=true --deploy.nodes="[coord=127.0.0.1:$pc, t0=127.0.0.1:$pt0]" --deploy.trainers="[t0]" \
    --output.metrics="$tmp/mn.json" > "$tmp/mn.log" 2>&1; then
  one=$(json "$tmp/one.json" "repr(d.get('eval_gauc'))")
  got=$(json "$tmp/mn.json" "repr(d.get('eval_gauc')), d['mode']")
  [ "$got" = "$one multi-node" ] && [ "$one" != None ] && ok "multi-node: GAUC $one, as the one-process cluster's" \
    || bad "multi-node GAUC, mode: $got vs one process $one"
else
  bad "multi-node run: $(tail -n 5 "$tmp/mn.log")"
fi
summary
