#!/usr/bin/env bash
# System test of checkpoints, resume, export, predict and eval (sequential
# mode, real processes):
#  - a run SIGKILLed after a checkpoint and resumed from its checkpoint dir
#    ends with a model bit for bit equal to an uninterrupted run's;
#  - predict's scores give the NE that train's own evaluation reported, and
#    eval prints the same NE;
#  - a damaged checkpoint is refused by eval and by resume with the file
#    named, and is left as it was;
#  - option mistakes are refused at startup.
# usage: checkpoint_test.sh PATH/TO/shadowsync SOURCE_DIR
set -u
bin=${1:?shadowsync binary}
src=${2:?source dir}
source "$src/tests/system/lib.sh"
tmp=$(mktemp -d)
trap 'pkill -KILL -f "$tmp/" 2>/dev/null; rm -rf "$tmp"' EXIT

"$bin" datagen --rows=100000 --seed=21 --out="$tmp/train.tsv" > /dev/null || { echo "datagen failed"; exit 1; }
"$bin" datagen --rows=20000 --seed=22 --out="$tmp/eval.tsv" > /dev/null || exit 1
common=(--data.train="$tmp/train.tsv" --data.eval="$tmp/eval.tsv" --cluster.mode=sequential
        --model.rows-per-table=50000 --train.epochs=2 --output.progress=none)

# 1. Uninterrupted run, exported.
"$bin" train "${common[@]}" --output.model="$tmp/full" --output.metrics="$tmp/full.json" \
  > "$tmp/full.log" 2>&1 || { bad "uninterrupted run: $(tail -n 3 "$tmp/full.log")"; }
full=$(cat "$tmp/full/LATEST" 2>/dev/null)

# 2. The same run with checkpoints, SIGKILLed after its first one, resumed.
"$bin" train "${common[@]}" --checkpoint.dir="$tmp/ck" --checkpoint.every-examples=40000 \
  > "$tmp/killed.log" 2>&1 &
pid=$!
if wait_for 120 in_log "$tmp/killed.log" "checkpoint $tmp/ck/"; then
  kill -KILL $pid 2>/dev/null
  wait $pid 2>/dev/null
  rc=$?
  at=$(cat "$tmp/ck/LATEST")
  [ $rc = 137 ] && ok "killed (SIGKILL) after checkpoint $at" \
    || bad "the run was not killed mid-run (exit $rc): $(tail -n 2 "$tmp/killed.log")"
  "$bin" train "${common[@]}" --resume="$tmp/ck" --output.model="$tmp/resumed" \
    --output.metrics="$tmp/resumed.json" > "$tmp/resumed.log" 2>&1 \
    || bad "resume: $(tail -n 3 "$tmp/resumed.log")"
  grep -q "resuming from $tmp/ck/$at" "$tmp/resumed.log" && ok "resumed from $at" \
    || bad "resume did not name $at: $(grep -m1 resum "$tmp/resumed.log")"
  same=yes
  for f in embedding-0.bin replica-0.bin; do
    cmp -s "$tmp/full/$full/$f" "$tmp/resumed/$full/$f" || same="no ($f differs)"
  done
  [ "$same" = yes ] && ok "resumed model is bit for bit the uninterrupted one ($full)" \
    || bad "resumed model differs from the uninterrupted one: $same"
  [ "$(json "$tmp/resumed.json" "d['examples'], d['train_ne'], d['eval_ne']")" = \
    "$(json "$tmp/full.json" "d['examples'], d['train_ne'], d['eval_ne']")" ] \
    && ok "resumed metrics (examples, train NE, eval NE) equal the uninterrupted run's" \
    || bad "metrics differ: $(json "$tmp/resumed.json" "d['train_ne']") vs $(json "$tmp/full.json" "d['train_ne']")"
else
  kill -KILL $pid 2>/dev/null
  bad "no checkpoint within 120 s: $(tail -n 3 "$tmp/killed.log")"
fi

# 3. predict and eval of the exported model.
if "$bin" predict --model="$tmp/full" --data="$tmp/eval.tsv" --out="$tmp/p.txt" --output.progress=none \
    > "$tmp/predict.log" 2>&1; then
  ne=$(/usr/bin/python3 - "$tmp/p.txt" "$tmp/eval.tsv" <<'PY'
import math, sys
p = [float(x) for x in open(sys.argv[1])]
y = [int(l.split('\t', 1)[0]) for l in open(sys.argv[2])]
assert len(p) == len(y), (len(p), len(y))
ll = -sum(math.log(q) if t else math.log(1 - q) for q, t in zip(p, y)) / len(y)
b = sum(y) / len(y)
print(ll / -(b * math.log(b) + (1 - b) * math.log(1 - b)))
PY
)
  want=$(json "$tmp/full.json" "d['eval_ne']")
  close=$(/usr/bin/python3 -c "print(abs($ne - $want) < 1e-7)" 2>/dev/null)
  [ "$close" = True ] && ok "predict: $(wc -l < "$tmp/p.txt") scores, NE $ne = train's eval NE $want" \
    || bad "predict NE '$ne' vs train's eval NE $want"
else
  bad "predict: $(tail -n 3 "$tmp/predict.log")"
fi
"$bin" eval --model="$tmp/full" --data.eval="$tmp/eval.tsv" --output.progress=none \
  --output.metrics="$tmp/eval.json" > "$tmp/eval.log" 2>&1
[ "$(json "$tmp/eval.json" "round(d['eval_ne'], 9)")" = "$(json "$tmp/full.json" "round(d['eval_ne'], 9)")" ] \
  && ok "eval: $(grep -o 'NE [0-9.]*  AUC [0-9.]*' "$tmp/eval.log")" || bad "eval: $(tail -n 2 "$tmp/eval.log")"

# 3b. The simulated cluster's model: 3 embedding shards write their own
# files, 2 trainers their replicas; eval of the saved model scores exactly
# what the cluster's own evaluation scored.
"$bin" train --data.train="$tmp/train.tsv" --data.eval="$tmp/eval.tsv" --model.rows-per-table=50000 \
  --cluster.trainers=2 --cluster.embedding-shards=3 --sync.algorithm=s-ma --output.progress=none \
  --output.model="$tmp/cm" --output.metrics="$tmp/cm.json" > "$tmp/cm.log" 2>&1 \
  || bad "simulated cluster with output.model: $(tail -n 3 "$tmp/cm.log")"
files=$(ls "$tmp/cm/$(cat "$tmp/cm/LATEST" 2>/dev/null)" 2>/dev/null | tr '\n' ' ')
[ "$files" = "embedding-0.bin embedding-1.bin embedding-2.bin manifest.json replica-0.bin replica-1.bin " ] \
  && ok "simulated cluster: one file per embedding shard and per replica" || bad "cluster model files: $files"
"$bin" eval --model="$tmp/cm" --data.eval="$tmp/eval.tsv" --output.progress=none \
  --output.metrics="$tmp/cm-eval.json" > "$tmp/cm-eval.log" 2>&1
[ "$(json "$tmp/cm-eval.json" "d['eval_ne']" 2>/dev/null)" = "$(json "$tmp/cm.json" "d['eval_ne']")" ] \
  && ok "eval of the cluster's saved model = the cluster's own eval NE ($(json "$tmp/cm.json" "d['eval_ne']"))" \
  || bad "cluster model eval: $(tail -n 1 "$tmp/cm-eval.log") vs $(json "$tmp/cm.json" "d['eval_ne']")"

# 3c. The cluster resumes onto 4 embedding shards (saved with 3): with both
# learning rates 0 the second pass changes no weight, so the model it writes
# must score exactly what the saved one scores: every row found its new
# shard, the replicas' average became both trainers' start.
"$bin" train --data.train="$tmp/train.tsv" --data.eval="$tmp/eval.tsv" --model.rows-per-table=50000 \
  --cluster.trainers=2 --cluster.embedding-shards=4 --sync.algorithm=s-ma --train.epochs=2 \
  --train.dense-lr=0 --train.sparse-lr=0 --resume="$tmp/cm" --output.progress=none \
  --output.model="$tmp/cm4" --output.metrics="$tmp/cm4.json" > "$tmp/cm4.log" 2>&1 \
  || bad "cluster resume onto 4 shards: $(tail -n 3 "$tmp/cm4.log")"
grep -q "3 embedding file(s) re-split over 4 shards" "$tmp/cm4.log" \
  && ok "cluster resumed from 3 shard files onto 4 shards" || bad "no re-split in: $(grep -m1 resum "$tmp/cm4.log")"
grep -q "train.dense-lr 0.03 -> 0 (the checkpoint's run -> this run)" "$tmp/cm4.log" \
  && grep -q "train.sparse-lr 0.03 -> 0 (the checkpoint's run -> this run)" "$tmp/cm4.log" \
  && ok "the resume warns that both learning rates differ from the checkpoint's run" \
  || bad "no learning-rate warnings in: $(grep -m2 "resume from" "$tmp/cm4.log")"
[ "$(json "$tmp/cm4.json" "d['eval_ne'], d['examples']" 2>/dev/null)" = "$(json "$tmp/cm.json" "d['eval_ne']") 100000" ] \
  && ok "the resumed cluster's model is the saved one (eval NE $(json "$tmp/cm4.json" "d['eval_ne']"), one more pass at lr 0)" \
  || bad "resumed cluster: $(json "$tmp/cm4.json" "d['eval_ne'], d['examples']" 2>/dev/null) vs $(json "$tmp/cm.json" "d['eval_ne']")"
"$bin" train --data.train="$tmp/train.tsv" --model.rows-per-table=50000 --resume="$tmp/cm" \
  --output.progress=none > "$tmp/cm1.log" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "leaves nothing to train" "$tmp/cm1.log" && ok "resume with no pass left is refused (exit 1)" \
  || bad "resume with nothing left: exit $rc: $(tail -n 1 "$tmp/cm1.log")"

# 4. Damage: a truncated embedding file, refused and left as it was.
cp -r "$tmp/full" "$tmp/damaged"
emb="$tmp/damaged/$full/embedding-0.bin"
truncate -s -100 "$emb"
size=$(stat -c %s "$emb")
"$bin" eval --model="$tmp/damaged" --data.eval="$tmp/eval.tsv" > "$tmp/d1.log" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "$emb.*truncated\|$emb.*bytes, the manifest" "$tmp/d1.log" \
  && ok "eval refuses a truncated file, naming it (exit 1)" || bad "eval of damage: exit $rc: $(tail -n 1 "$tmp/d1.log")"
"$bin" train "${common[@]}" --resume="$tmp/damaged" > "$tmp/d2.log" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "cannot resume: .*$emb" "$tmp/d2.log" && [ "$(stat -c %s "$emb")" = "$size" ] \
  && ok "resume refuses it too and leaves it untouched" || bad "resume of damage: exit $rc: $(tail -n 1 "$tmp/d2.log")"
"$bin" predict --model="$tmp/nowhere" --data="$tmp/eval.tsv" --out="$tmp/q.txt" > "$tmp/d3.log" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "$tmp/nowhere' does not exist" "$tmp/d3.log" && ok "a missing model is named (exit 1)" \
  || bad "missing model: exit $rc: $(tail -n 1 "$tmp/d3.log")"

# 5. Option mistakes, refused before anything runs.
"$bin" train "${common[@]}" --checkpoint.every-examples=10 > "$tmp/o1.log" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "needs checkpoint.dir" "$tmp/o1.log" && ok "every-examples without a dir refused (exit 2)" \
  || bad "every-examples without dir: exit $rc"
"$bin" train "${common[@]}" --checkpoint.evry-examples=10 > "$tmp/o2.log" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "checkpoint.evry-examples" "$tmp/o2.log" && ok "a mistyped key is named (exit 2)" \
  || bad "mistyped key: exit $rc"
"$bin" predict --model="$tmp/full" --out="$tmp/q.txt" > "$tmp/o3.log" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "'use.data' is required" "$tmp/o3.log" && ok "predict without --data refused (exit 2)" \
  || bad "predict without data: exit $rc: $(tail -n 1 "$tmp/o3.log")"

summary
