#!/usr/bin/env bash
# Multi-hot bags cut to data.max-ids are counted (issue 39: "longer ones are
# cut and counted"): the metrics JSON's cut_bags (training, all passes) and
# eval_cut_bags must equal the count of bags longer than data.max-ids that
# awk finds in the files, in every mode: the sequential engine, the simulated
# cluster on both clocks (2 trainers, each reader its part), a multi-node
# launch (2 nodes on loopback), and runs resumed from a checkpoint cut inside
# the second pass (sequential, and the cluster on the virtual clock), which
# count on from the checkpoint. The run's summary line names them.
# The code before wrote no cut_bags field, so every check fails there.
# About 20 seconds.
#
# usage: cut_bags_test.sh BIN
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
start_test "${1:-}"

"$bin" datagen --out=all.tsv --rows=3000 --seed=5 --teacher.bag-sizes=mlperf > gen.log ||
  { echo "datagen failed"; exit 1; }
cols=$(sed -n 's/^multi-hot columns: //p' gen.log)
head -n 2400 all.tsv > train.tsv
tail -n 600 all.tsv > eval.tsv
max=8
longer() { # FILE: the bags of more than $max ids (categorical columns 15..40)
  awk -v max=$max 'BEGIN { FS = "\t" } { for (i = 15; i <= NF; i++) if (split($i, a, "|") > max) n++ }
    END { print n + 0 }' "$1"
}
per_pass=$(longer train.tsv)
want_eval=$(longer eval.tsv)
want=$((2 * per_pass))
[ "$per_pass" -gt 0 ] && [ "$want_eval" -gt 0 ] ||
  { echo "the generated bags are never longer than $max ids ($per_pass, $want_eval)"; exit 1; }

job=(--data.train=train.tsv --data.eval=eval.tsv --data.multi-hot="$cols" --data.max-ids=$max
     --model.arch=small --model.rows-per-table=5000 --train.epochs=2 --output.progress=none)
counted() { # NAME WHAT: ok when NAME.json counts $want training and $want_eval eval bags
  local got
  got=$(json "$1.json" "d['cut_bags'], d['eval_cut_bags']" 2>/dev/null)
  if [ "$got" = "$want $want_eval" ]; then
    ok "$2: cut_bags $want (2 passes x $per_pass), eval_cut_bags $want_eval"
  else
    bad "$2: (cut_bags, eval_cut_bags) '$got', expected '$want $want_eval': $(grep -i "error" "$1.log" | head -n 2)"
  fi
}

"$bin" train "${job[@]}" --cluster.mode=sequential --output.metrics=seq.json > seq.log 2>&1
counted seq "sequential"
grep -q "bags cut to data.max-ids: $want train, $want_eval eval" seq.log &&
  ok "the summary: 'bags cut to data.max-ids: $want train, $want_eval eval'" ||
  bad "the summary lacks the cut bags: $(grep -i "bags" seq.log | tail -n 2)"

for clock in virtual wall; do
  "$bin" train "${job[@]}" --cluster.mode=simulated --cluster.trainers=2 \
    --cluster.embedding-shards=2 --sim.clock=$clock --output.metrics=$clock.json > $clock.log 2>&1
  counted $clock "2 trainers, $clock clock"
done

# Resumed inside the second pass: the first pass's bags come from the
# checkpoint, the second pass's are counted again from its start.
"$bin" train "${job[@]}" --cluster.mode=sequential --checkpoint.dir=sck \
  --checkpoint.every-examples=3000 --output.metrics=sck.json > sck.log 2>&1
cut=$(ls -d sck/ckpt-* | head -n 1) # (at the first batch's end past 3000 examples)
at=$(json "$cut/manifest.json" "d['examples']" 2>/dev/null)
if [ -n "$at" ] && [ "$at" -gt 2400 ] && [ "$at" -lt 4800 ]; then
  "$bin" train "${job[@]}" --cluster.mode=sequential --checkpoint.resume="$cut" \
    --output.metrics=sres.json > sres.log 2>&1
  counted sres "sequential, resumed at $at examples (pass 2)"
else
  bad "no sequential checkpoint inside pass 2: $(ls sck 2>&1 | paste -sd' ')"
fi
"$bin" train "${job[@]}" --cluster.mode=simulated --cluster.trainers=2 --cluster.embedding-shards=2 \
  --sim.clock=virtual --checkpoint.dir=vck --checkpoint.every-examples=3000 \
  --output.metrics=vck.json > vck.log 2>&1
vcut=$(grep -o "checkpoint [^ ]*ckpt-[0-9.]*: [0-9]* examples, cut while training" vck.log |
  awk '$3 > 2400 {print $2}' | sed 's/:$//' | tail -n 1)
if [ -n "$vcut" ]; then
  "$bin" train "${job[@]}" --cluster.mode=simulated --cluster.trainers=2 \
    --cluster.embedding-shards=2 --sim.clock=virtual --checkpoint.resume="$vcut" \
    --output.metrics=vres.json > vres.log 2>&1
  counted vres "2 trainers, virtual clock, resumed at $(basename "$vcut") (pass 2)"
else
  bad "no cluster cut inside pass 2: $(grep "checkpoint" vck.log | head -n 3)"
fi

read -r pc pt0 < <(free_ports 2)
timeout 300 "$bin" launch --config-file="$here/../../config/cluster-3node.ini" \
  --deploy.insecure=true --deploy.nodes="[coord=127.0.0.1:$pc, t0=127.0.0.1:$pt0]" \
  --deploy.trainers="[t0]" "${job[@]}" --output.metrics=mn.json > mn.log 2>&1
counted mn "multi-node launch, 2 nodes"
summary
