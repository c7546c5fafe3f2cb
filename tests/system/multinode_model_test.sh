#!/usr/bin/env bash
# output.model and checkpoint.resume in multi-node runs (issue 39: multi-hot end to end in every
# mode, with predict and eval of the saved model): real node processes on
# loopback (shadowsync launch on 127.0.0.1; mutual TLS for the hashed
# tables, plain TCP for the dynamic ones), the embedding shards
# on the two nodes other than the coordinator's, so every shard's file
# reaches the coordinator in pieces over the wire (save(offset) ->
# file_chunk, cluster/shard_fetch.hpp) and is written there. Generated
# multi-hot rows (datagen --teacher.bag-sizes=mlperf). One trainer node with
# foreground EASGD (no thread timing in the model) must give the model of
# the one-process run on the virtual clock with the same shards bit for bit:
#  - hashed tables: embedding-0.bin, embedding-1.bin, replica-0.bin and
#    centre.bin byte-identical to the one-process run's, the run's eval NE
#    equal; `eval` of the saved model gives exactly the one-process model's
#    metrics and the run's own eval NE; `predict` writes the same scores;
#  - dynamic tables (model.embedding=dynamic): dynamic-0.bin and
#    dynamic-1.bin (each shard's rows by id) byte-identical, eval and
#    predict the same;
#  - two trainer nodes with S-EASGD: both replicas and the centre saved, and
#    eval of the saved model gives the run's own eval NE;
#  - the manifest records mode multi-node and no [deploy]/[openssl] options;
#  - checkpoint.resume of each saved model for a second pass (every node
#    reads its roles' part) gives the one-process resume's model bit for
#    bit, the train NE over both passes and ckpt-000000024000; onto other
#    training files it is refused (checkpoint.new-data not given).
# The code before shard_fetch refused output.model in launch and node
# (exit 2), so every check failed there. About 15 seconds.
#
# usage: multinode_model_test.sh BIN
set -u
bin=${1:?shadowsync binary}
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2

"$bin" datagen --out=all.tsv --rows=14000 --seed=11 --teacher.bag-sizes=mlperf > gen.log ||
  { echo "datagen failed"; exit 1; }
cols=$(sed -n 's/^multi-hot columns: //p' gen.log)
[ -n "$cols" ] || { echo "datagen printed no multi-hot columns"; exit 1; }
head -n 12000 all.tsv > train.tsv
tail -n 2000 all.tsv > eval.tsv
bash "$here/../../scripts/make-certs.sh" certs coord t0 t1 > /dev/null ||
  { echo "make-certs failed"; exit 1; }
read -r pc pt0 pt1 < <(free_ports 3)
[ -n "$pt1" ] || { echo "could not pick free ports"; exit 1; }
nodes3="[coord=127.0.0.1:$pc, t0=127.0.0.1:$pt0, t1=127.0.0.1:$pt1]"

# The job (data.train first: "${job[@]:1}" is the job on other training files).
job=(--data.train=train.tsv --data.eval=eval.tsv --data.multi-hot="$cols" --model.arch=small
     --train.batch-size=128 --cluster.workers=1)
fr1=(--cluster.trainers=1 --sync.algorithm=fr-easgd --train.dense-lr=0.01)
# The tables: hashed, 20 000 rows a table (each shard's file 17.7 MB, 5
# pieces of at most 4 MiB), or dynamic (at most 2 000 rows a table).
hashed=(--model.rows-per-table=20000)
dynamic=(--model.embedding=dynamic --model.rows-per-table=2000 --embedding.admit-after=2)
one() { # NAME OPTIONS...: the one-process run on the virtual clock, its model in NAME
  local name=$1
  shift
  "$bin" train "${job[@]}" --cluster.mode=simulated --sim.clock=virtual --sim.calibration= \
    --cluster.embedding-shards=2 --cluster.dense-shards=1 "${fr1[@]}" --output.progress=none \
    --output.metrics="$name.json" --output.model="$name" "$@" > "$name.log" 2>&1 ||
    echo "run $name failed: $(tail -n 2 "$name.log")" >&2
}
# How the nodes connect: mutual TLS (the default) or, net=(--deploy.insecure=true), plain TCP.
tls=(--openssl.certificate="certs/{node}.pem" --openssl.key="certs/{node}.key"
     --openssl.cafile=certs/ca.pem)
trainers="[t0]"
mn() { # NAME OPTIONS...: a launch of 3 nodes (trainers: $trainers; shards on t0 and t1)
  local name=$1
  shift
  timeout 300 "$bin" launch --config-file="$here/../../config/cluster-3node.ini" \
    "${net[@]}" --deploy.nodes="$nodes3" --deploy.trainers="$trainers" \
    --deploy.embedding-shards="[t0, t1]" --deploy.dense-shards="[coord]" "${job[@]}" \
    --output.progress=none --output.metrics="$name.json" --output.model="$name" "$@" \
    > "$name.log" 2>&1 || echo "launch $name failed (exit $?): $(tail -n 3 "$name.log")" >&2
}
field() { json "$1.json" "$2" 2>/dev/null; }
latest() { echo "$1/$(cat "$1/LATEST" 2>/dev/null)"; }
# Eval and predict of a saved model: the metrics' NE, AUC and logloss, and the scores.
use() { # NAME
  "$bin" eval --model="$1" --data.eval=eval.tsv --output.metrics="$1-eval.json" \
    > "$1-eval.log" 2>&1 || echo "eval of $1 failed: $(tail -n 2 "$1-eval.log")" >&2
  "$bin" predict --model="$1" --data=eval.tsv --out="$1-scores.txt" > "$1-predict.log" 2>&1 ||
    echo "predict with $1 failed: $(tail -n 2 "$1-predict.log")" >&2
}
same_files() { # A B FILES...: every file byte-identical in both models
  local a=$1 b=$2 f
  shift 2
  for f in "$@"; do
    cmp -s "$(latest "$a")/$f" "$(latest "$b")/$f" || { echo "$f"; return 1; }
  done
}

for kind in hashed dynamic; do
  extra=("${hashed[@]}")
  files=(embedding-0.bin embedding-1.bin replica-0.bin centre.bin)
  net=("${tls[@]}")
  how="mutual TLS"
  if [ $kind = dynamic ]; then
    net=(--deploy.insecure=true)
    how="plain TCP"
    extra=("${dynamic[@]}")
    files=(dynamic-0.bin dynamic-1.bin replica-0.bin centre.bin)
  fi
  one "one-$kind" "${extra[@]}"
  mn "mn-$kind" "${fr1[@]}" "${extra[@]}"
  a=$(field "one-$kind" "d['eval_ne'], d['examples']")
  b=$(field "mn-$kind" "d['eval_ne'], d['examples']")
  if [ -n "$a" ] && [ "$a" = "$b" ] && [ "$(field "mn-$kind" "d['mode']")" = multi-node ]; then
    ok "$kind, multi-hot, $how: the multi-node run is the one-process run (eval NE, examples: $b)"
  else
    bad "$kind: multi-node '$b' vs one process '$a'"
  fi
  diff=$(same_files "one-$kind" "mn-$kind" "${files[@]}")
  [ $? = 0 ] && ok "$kind: ${files[*]} byte-identical to the one-process model's ($(cd "$(latest "mn-$kind")" && stat -c %s "${files[@]}" | paste -sd/) bytes)" ||
    bad "$kind: $diff differs from the one-process model's (or is missing): $(ls "$(latest "mn-$kind")" 2>&1)"
  grep -q "model written to .*mn-$kind" "mn-$kind.log" &&
    ok "$kind: $(grep -o "model written to .*" "mn-$kind.log" | head -n 1 | sed "s|$tmp/||")" ||
    bad "$kind: no 'model written to' line: $(grep -i "error\|model" "mn-$kind.log" | tail -n 3)"
  use "one-$kind"
  use "mn-$kind"
  ea=$(field "one-$kind-eval" "d['eval_ne'], d['eval_auc'], d['eval_logloss']")
  eb=$(field "mn-$kind-eval" "d['eval_ne'], d['eval_auc'], d['eval_logloss']")
  run_ne=$(field "mn-$kind" "d['eval_ne']")
  if [ -n "$ea" ] && [ "$ea" = "$eb" ] &&
     python3 -c "import sys; sys.exit(0 if abs(${eb%% *} - $run_ne) < 1e-7 else 1)"; then
    ok "$kind: eval of the saved model = the one-process model's (NE, AUC, logloss: $eb) = the run's eval NE ($run_ne)"
  else
    bad "$kind: eval of the saved model '$eb' vs one process '$ea', the run's eval NE '$run_ne'"
  fi
  if [ "$(wc -l < "mn-$kind-scores.txt" 2>/dev/null)" = 2000 ] &&
     cmp -s "one-$kind-scores.txt" "mn-$kind-scores.txt"; then
    ok "$kind: predict with the saved model: 2000 scores, identical to the one-process model's"
  else
    bad "$kind: predict scores differ or are missing ($(wc -l < "mn-$kind-scores.txt" 2>&1))"
  fi
done

# Two trainer nodes with S-EASGD (thread timing moves the model, so no
# one-process twin): both replicas and the centre are saved, and eval of the
# saved model gives the run's own eval NE (seen 0.968 and 0.970).
trainers="[t0, t1]"
mn mn-s "${hashed[@]}" --cluster.trainers=2 --sync.algorithm=s-easgd
use mn-s
ne=$(field mn-s "d['eval_ne']")
got=$(field mn-s-eval "d['eval_ne']")
if [ -n "$ne" ] && [ "$ne" = "$got" ] && [ -f "$(latest mn-s)/replica-1.bin" ] &&
   [ -f "$(latest mn-s)/centre.bin" ] && [ "$(wc -l < mn-s-scores.txt 2>/dev/null)" = 2000 ]; then
  ok "s-easgd, 2 trainer nodes: 2 replicas and the centre saved; eval of the saved model = the run's eval NE ($ne)"
else
  bad "s-easgd, 2 trainer nodes: eval of the saved model '$got' vs the run's '$ne': $(ls "$(latest mn-s)" 2>&1)"
fi

m=$(latest mn-hashed)/manifest.json
if [ "$(json "$m" "d['mode']")" = multi-node ] &&
   [ "$(json "$m" "'[deploy]' in d['config'] or '[openssl]' in d['config']")" = False ]; then
  ok "the manifest says mode multi-node and holds no [deploy] or [openssl] options"
else
  bad "manifest: mode '$(json "$m" "d['mode']" 2>&1)', config with deploy/openssl groups?"
fi

# checkpoint.resume: one more pass from each saved model, every node reading
# its roles' part of it (the rows only where shards run); the one-process run
# resumes from its own. The same model again, bit for bit, and the train NE
# over both passes.
trainers="[t0]"
for kind in hashed dynamic; do
  extra=("${hashed[@]}")
  files=(embedding-0.bin embedding-1.bin replica-0.bin centre.bin)
  if [ $kind = dynamic ]; then
    extra=("${dynamic[@]}")
    files=(dynamic-0.bin dynamic-1.bin replica-0.bin centre.bin)
  fi
  one "one-$kind-r" "${extra[@]}" --checkpoint.resume="one-$kind" --train.epochs=2
  mn "mn-$kind-r" "${fr1[@]}" "${extra[@]}" --checkpoint.resume="mn-$kind" --train.epochs=2
  a=$(field "one-$kind-r" "d['eval_ne'], d['train_ne'], d['examples']")
  b=$(field "mn-$kind-r" "d['eval_ne'], d['train_ne'], d['examples']")
  diff=$(same_files "one-$kind-r" "mn-$kind-r" "${files[@]}")
  if [ -n "$a" ] && [ "$a" = "$b" ] && [ -z "$diff" ] &&
     [ "$(basename "$(latest "mn-$kind-r")")" = ckpt-000000024000 ] &&
     [ "$(field "mn-$kind-r" "d['eval_ne'] != $(field "mn-$kind" "d['eval_ne']")")" = True ]; then
    ok "$kind: resumed for a second pass, the one-process resume exactly (eval NE, train NE, examples: $b; ${files[*]} byte-identical; ckpt-000000024000)"
  else
    bad "$kind resume: multi-node '$b' vs one process '$a'; differing: '$diff'; $(grep -i "error\|cannot" "mn-$kind-r.log" | head -n 2)"
  fi
done
# Resumed onto other training files without checkpoint.new-data: refused by
# the coordinator before any node trains, as train refuses it.
expect 2 "was trained on data.train = \[train.tsv\], this run reads \[eval.tsv\]" \
  "a resume onto other training files is refused (exit 2)" -- \
  timeout 120 "$bin" launch --config-file="$here/../../config/cluster-3node.ini" \
  --deploy.insecure=true --deploy.nodes="$nodes3" --deploy.trainers="[t0]" \
  --deploy.embedding-shards="[t0, t1]" --deploy.dense-shards="[coord]" --data.train=eval.tsv \
  "${job[@]:1}" "${fr1[@]}" "${hashed[@]}" --checkpoint.resume=mn-hashed --train.epochs=2 --output.progress=none
summary
