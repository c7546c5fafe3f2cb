#!/usr/bin/env bash
# train.dense-warmup (the dense learning rate ramps linearly from 0 over the
# first examples: the sequential run's, each trainer's in a cluster), and a
# resume that continues the ramp where the checkpoint was cut:
#  - a warm-up of 1000 examples changes the model (eval NE differs from no
#    warm-up), in the sequential engine and a 2-trainer cluster on the
#    virtual clock;
#  - resumed from a checkpoint cut past the ramp (each trainer over 1000
#    examples), the run with warm-up 1000 gives exactly the model of the run
#    resumed without warm-up (the rate is full from the first example after
#    the cut), and with a ramp of 100 000 examples it does not. A ramp that
#    started over at the resume (the cluster's workers counted from 0) fails
#    the exact comparison.
# About 10 seconds.
#
# usage: dense_warmup_test.sh BIN
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
start_test "${1:-}"

"$bin" datagen --out=all.tsv --rows=8000 --seed=9 > gen.log || { echo "datagen failed"; exit 1; }
head -n 6000 all.tsv > train.tsv
tail -n 2000 all.tsv > eval.tsv
job=(--data.train=train.tsv --data.eval=eval.tsv --model.arch=small --model.rows-per-table=5000
     --output.progress=none)
seq=(--cluster.mode=sequential)
sim=(--cluster.mode=simulated --sim.clock=virtual --cluster.trainers=2 --cluster.embedding-shards=2
     --sync.algorithm=s-easgd)
ne() { # NAME OPTIONS...: the run's eval NE (empty when it failed)
  local name=$1
  shift
  "$bin" train "${job[@]}" "$@" --output.metrics="$name.json" > "$name.log" 2>&1 &&
    json "$name.json" "repr(d['eval_ne'])"
}

for mode in seq sim; do
  [ $mode = seq ] && opts=("${seq[@]}") || opts=("${sim[@]}")
  plain=$(ne $mode-0 "${opts[@]}")
  warm=$(ne $mode-w "${opts[@]}" --train.dense-warmup=1000 --checkpoint.dir=$mode-ck \
    --checkpoint.every-examples=3000)
  if [ -n "$plain" ] && [ -n "$warm" ] && [ "$plain" != "$warm" ]; then
    ok "$mode: a warm-up of 1000 examples changes the model (eval NE $warm against $plain)"
  else
    bad "$mode: eval NE with warm-up '$warm', without '$plain'"
  fi
  # The first cut past 3000 examples (each trainer past 1000 in the cluster).
  cut=$(ls -d $mode-ck/ckpt-* 2> /dev/null | head -n 1)
  at=$(json "$cut/manifest.json" "d['examples']" 2> /dev/null)
  if [ -z "$at" ] || [ "$at" -ge 6000 ] || [ "$at" -lt 3000 ]; then
    bad "$mode: no checkpoint cut inside the pass: $(ls $mode-ck 2>&1 | paste -sd' ')"
    continue
  fi
  r0=$(ne $mode-r0 "${opts[@]}" --checkpoint.resume="$cut")
  r1=$(ne $mode-r1 "${opts[@]}" --checkpoint.resume="$cut" --train.dense-warmup=1000)
  rl=$(ne $mode-rl "${opts[@]}" --checkpoint.resume="$cut" --train.dense-warmup=100000)
  if [ -n "$r0" ] && [ "$r0" = "$r1" ]; then
    ok "$mode: resumed at $at examples, warm-up 1000 = none (eval NE $r1): the ramp continued"
  else
    bad "$mode: resumed at $at examples, warm-up 1000 '$r1' against none '$r0'"
  fi
  if [ -n "$rl" ] && [ "$rl" != "$r0" ]; then
    ok "$mode: resumed with a ramp of 100000 examples: still ramping (eval NE $rl)"
  else
    bad "$mode: resumed with a ramp of 100000: '$rl' against '$r0' without"
  fi
done
summary
