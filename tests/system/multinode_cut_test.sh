#!/usr/bin/env bash
# Checkpoint cuts in multi-node runs (checkpoint.every-examples): real node
# processes on loopback (shadowsync launch on 127.0.0.1, plain TCP), the
# embedding shards on the two nodes other than the coordinator's. At each
# cut every shard keeps its file in memory and the coordinator's node
# fetches it in pieces over the wire (cut(N, offset) -> file_chunk,
# cluster/cut_run.hpp) into the cut's folder, while training goes on.
#  - the launch takes cuts while training and writes each as a complete
#    checkpoint folder (mode multi-node), then the one of the end;
#  - eval of a cut reads it as any saved model (a finite NE over the 2 000
#    eval rows; several passes over 12 000 rows overfit, so above 1);
#  - checkpoint.resume of the newest cut taken while training, by a
#    multi-node run and by the one-process run on the virtual clock with the
#    same shards: one foreground-EASGD trainer node gives the same model
#    (eval NE, train NE, examples; the shards' files byte for byte);
#  - a shard's node killed while a cut's files are fetched: exit 1 naming the
#    cut and the node, nothing of that cut committed;
#  - a trainer's node killed during a cut: the cut aborted, the job goes on
#    (exit 0) and takes cuts after the loss, which hold the lost trainer's
#    part as at the cut before (here: its start), as does the end's
#    checkpoint; that one resumes in one process with both trainers and
#    trains every example of every pass;
#  - SIGTERM to the launch: a cut of that point, then the stop (exit 143).
# The code before refused checkpoint.every-* in launch (exit 2), so every
# check fails there. About 45 seconds.
#
# usage: multinode_cut_test.sh BIN
set -u
bin=${1:?shadowsync binary}
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2

"$bin" datagen --out=all.tsv --rows=14000 --seed=11 > gen.log || { echo "datagen failed"; exit 1; }
head -n 12000 all.tsv > train.tsv
tail -n 2000 all.tsv > eval.tsv
read -r pc pt0 pt1 < <(free_ports 3)
[ -n "$pt1" ] || { echo "could not pick free ports"; exit 1; }
nodes3="[coord=127.0.0.1:$pc, t0=127.0.0.1:$pt0, t1=127.0.0.1:$pt1]"

# One trainer node, foreground EASGD (no thread timing in the model);
# 20 000-row tables: each shard's file 17.7 MB, 5 pieces of at most 4 MiB;
# 4 passes (48 000 examples: several of the coordinator's 200 ms polls, at
# most one cut each, so the count of cuts varies with the machine's speed).
job=(--data.train=train.tsv --data.eval=eval.tsv --model.arch=small --train.batch-size=128
     --cluster.workers=1 --cluster.trainers=1 --sync.algorithm=fr-easgd --train.dense-lr=0.01
     --model.rows-per-table=20000 --train.epochs=4 --output.progress=none)
mn() { # NAME OPTIONS...: a launch of 3 nodes (trainer t0; shards on t0 and t1); $epochs
  local name=$1 j=("${job[@]}")
  shift
  [ -n "${epochs:-}" ] && j=("${j[@]/--train.epochs=4/--train.epochs=$epochs}")
  timeout 300 "$bin" launch --config-file="$here/../../config/cluster-3node.ini" \
    --deploy.insecure=true --deploy.nodes="$nodes3" --deploy.trainers="[t0]" \
    --deploy.embedding-shards="[t0, t1]" --deploy.dense-shards="[coord]" "${j[@]}" \
    --output.metrics="$name.json" "$@" > "$name.log" 2>&1
}
field() { json "$1.json" "$2" 2>/dev/null; }
latest() { echo "$1/$(cat "$1/LATEST" 2>/dev/null)"; }
# kill_t1_at_fetch DIR LOG PID: SIGKILL to node t1 (its pid from LOG) as
# soon as a cut's fetch into DIR has begun, while launch PID runs; prints
# the cut's temporary folder, or nothing when it killed nothing.
kill_t1_at_fetch() {
  local dir=$1 log=$2 pid=$3 end=$(($(date +%s) + 120)) f t1
  until f=$(ls "$dir"/.tmp-.cut-*/embedding-0.bin 2> /dev/null | head -n 1); [ -n "$f" ] ||
    [ "$(date +%s)" -ge "$end" ] || ! kill -0 "$pid" 2> /dev/null; do
    sleep 0.005
  done
  t1=$(grep -o "node t1: pid [0-9]*" "$log" | awk '{print $4}')
  [ -n "$f" ] && [ -n "$t1" ] && kill -KILL "$t1" && basename "$(dirname "$f")"
}

mn cuts --checkpoint.dir=cuts --checkpoint.every-examples=6000 --checkpoint.keep=20
rc=$?
taken=$(grep -c "cut while training" cuts.log)
folders=$(ls -d cuts/ckpt-* 2>/dev/null | wc -l)
if [ $rc = 0 ] && [ "$taken" -ge 1 ] && [ "$folders" = $((taken + 1)) ]; then
  ok "launch with checkpoint.every-examples=6000: exit 0, $taken cuts while training, $folders checkpoint folders ($(ls cuts | grep ckpt | paste -sd' '))"
else
  bad "launch with cuts: exit $rc, $taken cuts, $folders folders: $(grep -i "error\|refus\|fail" cuts.log | head -n 3)"
fi
# The newest cut taken while training (not the checkpoint of the end).
cut=$(grep -o "checkpoint [^ ]*ckpt-[0-9.]*: [0-9]* examples, cut while training" cuts.log |
  tail -n 1 | awk '{print $2}' | sed 's/:$//')
m="$cut/manifest.json"
if [ -n "$cut" ] && [ "$(json "$m" "d['mode']" 2>/dev/null)" = multi-node ] &&
   [ -f "$cut/embedding-0.bin" ] && [ -f "$cut/embedding-1.bin" ] &&
   [ -f "$cut/replica-0.bin" ] && [ -f "$cut/centre.bin" ]; then
  ok "cut $(basename "$cut"): mode multi-node, embedding-0/1.bin ($(stat -c %s "$cut/embedding-0.bin" "$cut/embedding-1.bin" | paste -sd/) bytes), replica-0.bin, centre.bin"
else
  bad "cut folder '$cut': $(ls "$cut" 2>&1); mode $(json "$m" "d['mode']" 2>&1)"
fi
"$bin" eval --model="$cut" --data.eval=eval.tsv --output.metrics=cut-eval.json > cut-eval.log 2>&1
ne=$(field cut-eval "d['eval_ne']")
if [ -n "$ne" ] && python3 -c "import math, sys; sys.exit(0 if math.isfinite($ne) and 0 < $ne < 5 else 1)" &&
   grep -q "on 2000 examples: NE" cut-eval.log; then
  ok "eval of the cut: 2000 examples, NE $ne"
else
  bad "eval of the cut: '$ne': $(tail -n 2 cut-eval.log)"
fi

# Resume of the cut: multi-node, and the one-process run on the virtual clock.
mn res --checkpoint.resume="$cut" --output.model=mn-r
"$bin" train "${job[@]}" --cluster.mode=simulated --sim.clock=virtual --sim.calibration= \
  --cluster.embedding-shards=2 --cluster.dense-shards=1 --output.metrics=one.json \
  --checkpoint.resume="$cut" --output.model=one-r > one.log 2>&1
a=$(field one "d['eval_ne'], d['train_ne'], d['examples']")
b=$(field res "d['eval_ne'], d['train_ne'], d['examples']")
diff=
for f in embedding-0.bin embedding-1.bin replica-0.bin centre.bin; do
  cmp -s "$(latest one-r)/$f" "$(latest mn-r)/$f" || diff="$diff $f"
done
if [ -n "$cut" ] && [ -n "$a" ] && [ "$a" = "$b" ] && [ -z "$diff" ]; then
  ok "resume of the cut: multi-node = one process (eval NE, train NE, examples: $b; the model's files byte-identical)"
else
  bad "resume of the cut: multi-node '$b' vs one process '$a'; differing:$diff; $(grep -i "error\|cannot" res.log | head -n 2)"
fi
# A shard's node killed while a cut's files are fetched (SIGKILL to t1 as soon
# as the fetch of the cut's first file has begun): no partial recovery is
# asked, so the launch stops with exit 1 and an error naming the cut and the
# node or shard; the cut in flight commits nothing (no ckpt-* folder of it, LATEST not
# moved to it) and any folder committed before stays whole (eval reads
# LATEST's). (The cut's temporary folder is removed when its fetch gives up.)
# (12 passes: several cuts' chances on a fast machine.)
epochs=12 mn kill --checkpoint.dir=kcuts --checkpoint.every-examples=6000 --checkpoint.keep=20 &
launch=$!
at=$(kill_t1_at_fetch kcuts kill.log $launch)
[ -n "$at" ] && killed="killed t1 during the fetch into $at"
wait $launch
rc=$?
before=$(ls -d kcuts/ckpt-* 2> /dev/null | wc -l)
left=$(ls -d kcuts/.tmp-.cut-* 2> /dev/null | wc -l)
# (The cut ends with the first DOWN: t1's, or the trainer's that names the shard.)
err=$(grep -m 1 "error node coord: checkpoint: cut" kill.log)
if [ -n "${killed:-}" ] && [ $rc = 1 ] && echo "$err" | grep -q "node t1\|embedding-shard-1 failed"; then
  ok "$killed: exit 1, '${err#*error node coord: }'; $before folders committed before it, $left temporary left"
else
  bad "kill during a fetch: '${killed:-no kill}', exit $rc, error '$err', $before folders, $left temporary: $(grep -i "error\|fail" kill.log | head -n 3)"
fi
if [ -z "${killed:-}" ]; then
  bad "no state to check after the kill (no kill)"
elif [ "$before" -ge 1 ]; then
  "$bin" eval --model="$(latest kcuts)" --data.eval=eval.tsv --output.metrics=k-eval.json > k-eval.log 2>&1
  kne=$(field k-eval "d['eval_ne']")
  if [ -n "$kne" ] && grep -q "on 2000 examples: NE" k-eval.log; then
    ok "the newest committed cut ($(cat kcuts/LATEST)) still evaluates: NE $kne"
  else
    bad "eval of LATEST after the kill: $(tail -n 2 k-eval.log)"
  fi
elif [ ! -e kcuts/LATEST ]; then
  ok "the first cut was the one in flight: nothing committed, no LATEST ($(ls -A kcuts | paste -sd' '))"
else
  bad "no folder committed, yet LATEST says '$(cat kcuts/LATEST)'"
fi
# A trainer's node killed while a cut's files are fetched (two S-MA trainer
# nodes t0 and t1, the shards on coord and t0): the job survives a trainer's
# loss, during a cut too: the cut is aborted, the ring re-forms, the cuts
# after it hold trainer 1's part as at the cut before (none committed: its
# start), and the launch ends with exit 0 and the end's model. (Before, no
# cut was taken after a trainer's loss.)
job2=("${job[@]/--cluster.trainers=1/--cluster.trainers=2}")
job2=("${job2[@]/--train.epochs=4/--train.epochs=12}")
job2=("${job2[@]/--sync.algorithm=fr-easgd/--sync.algorithm=s-ma}")
timeout 300 "$bin" launch --config-file="$here/../../config/cluster-3node.ini" \
  --deploy.insecure=true --deploy.nodes="$nodes3" --deploy.trainers="[t0, t1]" \
  --deploy.embedding-shards="[coord, t0]" --deploy.dense-shards="[coord]" "${job2[@]}" \
  --checkpoint.dir=tcuts --checkpoint.every-examples=6000 --checkpoint.keep=20 \
  --output.metrics=tkill.json > tkill.log 2>&1 &
launch=$!
tkilled=$(kill_t1_at_fetch tcuts tkill.log $launch)
wait $launch
rc=$?
after=$(grep -c "cut while training; .*lost, at their position of the cut before: trainer 1" tkill.log)
if [ -n "$tkilled" ] && [ $rc = 0 ] && grep -q "cut 1 aborted: .*t1.*; the job goes on" tkill.log &&
   grep -q "LOST trainer 1 on node t1" tkill.log && [ "$after" -ge 1 ] &&
   [ -f "$(latest tcuts)/manifest.json" ]; then
  ok "trainer node t1 killed during cut 1's fetch: exit 0, the cut aborted and the job went on, $after cut(s) after it holding trainer 1's part, the end's model $(cat tcuts/LATEST)"
else
  bad "trainer kill during a cut: killed '${tkilled:-no}', exit $rc, $after cuts after it: $(grep -i "error\|abort\|LOST" tkill.log | head -n 3)"
fi
# The end's checkpoint (LATEST) holds trainer 1's part as the cuts after the
# loss do; resumed in one process with both trainers: trainer 1 from its
# start again, trainer 0 has nothing left; together every example of the 12
# passes over 12 000 rows.
tcut=$(latest tcuts)
if grep -q "model written to $tcut .*lost, at their position of the newest cut: trainer 1" tkill.log &&
   [ -f "$tcut/manifest.json" ]; then
  "$bin" train "${job2[@]}" --cluster.mode=simulated --sim.clock=virtual \
    --cluster.embedding-shards=2 --checkpoint.resume="$tcut" --output.metrics=tres.json \
    > tres.log 2>&1
  rc=$?
  base=$(json "$tcut/manifest.json" "d['examples']" 2>/dev/null)
  more=$(field tres "d['examples']")
  if [ $rc = 0 ] && [ -n "$base" ] && [ -n "$more" ] && [ $((base + more)) = 144000 ] &&
     grep -q "2 replica(s) restored to 2 trainer(s)" tres.log; then
    ok "the end's checkpoint after the loss ($tcut, $base examples) resumed in one process: exit 0, $more examples more, $((base + more)) in all"
  else
    bad "resume of the end's checkpoint after the loss $tcut: exit $rc, $base + $more examples: $(grep -i "error\|refus" tres.log | head -n 2)"
  fi
else
  bad "the end's checkpoint $tcut does not hold the lost trainer's part: $(grep "model written" tkill.log)"
fi
# SIGTERM to the launch while training (checkpoint.dir, no every-*): the
# coordinator takes a cut of that point and stops the job, as one process
# does; exit 143, the log names the folder, which evaluates.
timeout --foreground 300 "$bin" launch --config-file="$here/../../config/cluster-3node.ini" \
  --deploy.insecure=true --deploy.nodes="$nodes3" --deploy.trainers="[t0]" \
  --deploy.embedding-shards="[t0, t1]" --deploy.dense-shards="[coord]" \
  "${job[@]/--train.epochs=4/--train.epochs=400}" --checkpoint.dir=scuts > stop.log 2>&1 &
launch=$!
wait_for 120 in_log stop.log "all 3 nodes ready" && sleep 1
kill -TERM $launch
wait $launch
rc=$?
at=$(grep -o "the checkpoint of this point: [^ ]*" stop.log | awk '{print $NF}')
"$bin" eval --model="$at" --data.eval=eval.tsv --output.metrics=s-eval.json > s-eval.log 2>&1
sne=$(field s-eval "d['eval_ne']")
if [ $rc = 143 ] && [ -n "$at" ] && [ "$(json "$at/manifest.json" "d['mode']" 2>/dev/null)" = multi-node ] &&
   [ -n "$sne" ]; then
  ok "SIGTERM to the launch: exit 143, '$(grep -o "stopped by SIGTERM after [0-9]* examples" stop.log)', the cut of that point $(basename "$at") evaluates: NE $sne"
else
  bad "SIGTERM with checkpoint.dir: exit $rc, '$at': $(grep "stopped\|error" stop.log | head -n 3)"
fi
summary
