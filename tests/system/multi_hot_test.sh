#!/usr/bin/env bash
# Multi-hot training end to end (issue 39, items 1 and 6): generated rows
# whose 26 columns are bags of ids (MLPerf DLRM-DCNv2's sizes; the teacher
# sums per-id effects over each bag), trained on the bags and on each bag's
# first id only (the same rows with every bag cut to its first id). In the
# sequential engine (sum and mean pooling) and a 2-trainer cluster on both
# clocks, the bags must reach an eval NE clearly below the first-id model's:
#   NE_bags <= NE_first - margin   (0.015; 0.008 on the wall clock, 0.01 with dct.mp)
# Seen at 100k rows: sequential 0.892 (sum), 0.889 (mean) vs 0.920; virtual
# clock 0.901 vs 0.924; wall clock (dense-lr 0.01) 0.895-0.907 vs 0.924-0.929;
# dct.mp 0.905 vs 0.921.
# A model that pools wrongly (only one id, or gradients to one row) loses
# that margin. The same with dct.mp on the virtual clock. Multi-node (launch, 3 nodes on
# loopback) trains on the bags too: bit for bit the one-process model with one
# foreground-EASGD trainer node, and below the first-id model with S-EASGD. A
# saved model's eval and predict read the same bags
# (its eval NE is the training run's). Partial recovery with cpr.policy=mfu
# and ssu restarts a killed shard and keeps the bags' NE.
#
# usage: multi_hot_test.sh BIN
set -u
bin=${1:?shadowsync binary}
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2

"$bin" datagen --out=all.tsv --rows=110000 --seed=3 --teacher.bag-sizes=mlperf > gen.log ||
  { echo "datagen failed"; exit 1; }
cols=$(sed -n 's/^multi-hot columns: //p' gen.log)
head -n 100000 all.tsv > train.tsv
tail -n 10000 all.tsv > eval.tsv
for f in train eval; do # every bag cut to its first id (categorical columns 15..40)
  awk 'BEGIN { FS = OFS = "\t" } { for (i = 15; i <= NF; i++) sub(/\|.*/, "", $i); print }' \
    "$f.tsv" > "$f-first.tsv"
done

ne_of() { # NAME TRAIN EVAL OPTIONS...: the run's eval NE, or nothing when it failed
  local name=$1 train=$2 eval=$3
  shift 3
  if ! "$bin" train --data.train="$train" --data.eval="$eval" --output.metrics="$name.json" \
       "$@" > "$name.log" 2>&1; then
    echo "run $name failed: $(tail -n 2 "$name.log")" >&2
    return
  fi
  json "$name.json" "d['eval_ne']"
}

better() { # NAME NE_BAGS NE_FIRST [MARGIN]
  local margin=${4:-0.015}
  if [ -n "$2" ] && [ -n "$3" ] &&
     python3 -c "import sys; sys.exit(0 if $2 <= $3 - $margin else 1)"; then
    ok "$1: bags eval NE $2 <= first-id $3 - $margin"
  else
    bad "$1: bags eval NE '$2' not below first-id '$3' - $margin"
  fi
}

seq=(--cluster.mode=sequential)
first=$(ne_of seq-first train-first.tsv eval-first.tsv "${seq[@]}")
sum=$(ne_of seq-sum train.tsv eval.tsv "${seq[@]}" --data.multi-hot="$cols" --output.model=model)
mean=$(ne_of seq-mean train.tsv eval.tsv "${seq[@]}" --data.multi-hot="$cols" --model.pooling=mean)
better "sequential, sum" "$sum" "$first"
better "sequential, mean" "$mean" "$first"

for clock in virtual wall; do
  sim=(--cluster.mode=simulated --cluster.trainers=2 --cluster.embedding-shards=2
       --sim.clock="$clock")
  # The wall clock's runs follow thread timing; at dense-lr 0.01 (as the
  # 3-node runs below) their NE spreads less: 7 pairs, 4 beside four busy
  # loops, bags 0.895-0.907 against first ids 0.924-0.929, where the
  # preset's 0.03 gave 0.893-0.910 against 0.922-0.925 (8 pairs).
  [ "$clock" = wall ] && sim+=(--train.dense-lr=0.01)
  cfirst=$(ne_of "$clock-first" train-first.tsv eval-first.tsv "${sim[@]}")
  cbags=$(ne_of "$clock-bags" train.tsv eval.tsv "${sim[@]}" --data.multi-hot="$cols")
  # The wall clock's runs vary with the scheduling: seen 0.012 apart.
  better "2 trainers, $clock clock" "$cbags" "$cfirst" "$([ "$clock" = wall ] && echo 0.008)"
done
# dct.mp thresholds the batch's unique rows and their summed gradients.
mp=(--cluster.mode=simulated --cluster.trainers=2 --cluster.embedding-shards=2 --dct.mp=true)
better "2 trainers, dct.mp" "$(ne_of mp-bags train.tsv eval.tsv "${mp[@]}" --data.multi-hot="$cols")" \
  "$(ne_of mp-first train-first.tsv eval-first.tsv "${mp[@]}")" 0.01

# Multi-node (shadowsync launch, loopback, plain TCP): the batch's bag
# offsets cross the wire with its ids. Foreground EASGD with one trainer node
# on the first 50k rows does not depend on thread timing, so it must print the
# one-process model's eval NE exactly (seen 0.9149496671), and beat the
# first-id model's, also exact. Three nodes with S-EASGD on all 100k rows
# must learn from the bags: their NE follows thread timing, so they are
# compared with the same cluster on the first ids, margin 0.008. Both use
# dense-lr 0.01: at cluster-3node.ini's 0.03 the summed bags (up to 100 ids)
# make the dense steps noisy, and about 30 runs on 50k rows (quiet and loaded) spread over 0.918-0.940
# (one CI run under ctest -j2: 0.952), near the first-id model's 0.931-0.938.
# Seen at 0.01 on 100k rows, 10 runs, half of them beside six busy loops:
# bags 0.892-0.905, first ids 0.922-0.928.
head -n 50000 train.tsv > train50.tsv
head -n 50000 train-first.tsv > train50-first.tsv
read -r pc pt0 pt1 < <(free_ports 3)
mn_ne() { # NAME NODES TRAINERS TRAIN EVAL OPTIONS...: a launch's "eval NE examples mode"
  local name=$1 nodes=$2 trainers=$3 train=$4 eval=$5
  shift 5
  if ! timeout 300 "$bin" launch --config-file="$here/../../config/cluster-3node.ini" \
       --deploy.insecure=true --deploy.nodes="$nodes" --deploy.trainers="$trainers" \
       --data.train="$train" --data.eval="$eval" --output.progress=none \
       --output.metrics="$name.json" "$@" > "$name.log" 2>&1; then
    echo "run $name failed: $(tail -n 3 "$name.log")" >&2
    return
  fi
  json "$name.json" "d['eval_ne'], d['examples'], d['mode']"
}
fr1=(--cluster.trainers=1 --sync.algorithm=fr-easgd --train.dense-lr=0.01)
one=$(ne_of one-fr1 train50.tsv eval.tsv --config-file="$here/../../config/default.ini" \
  --sim.calibration= --cluster.embedding-shards=1 --cluster.dense-shards=1 "${fr1[@]}" --data.multi-hot="$cols")
mn=$(mn_ne mn-fr1 "[coord=127.0.0.1:$pc, t0=127.0.0.1:$pt0]" "[t0]" train50.tsv eval.tsv "${fr1[@]}" \
  --data.multi-hot="$cols")
[ -n "$one" ] && [ "$mn" = "$one 50000 multi-node" ] \
  && ok "multi-node, 1 trainer node, fr-easgd: the one-process model exactly (eval NE $one)" \
  || bad "multi-node fr-easgd (eval NE, examples, mode) '$mn' vs one process '$one'"
mfirst=$(mn_ne mn-fr1-first "[coord=127.0.0.1:$pc, t0=127.0.0.1:$pt0]" "[t0]" train50-first.tsv \
  eval-first.tsv "${fr1[@]}")
better "multi-node, 1 trainer node, fr-easgd" "${mn%% *}" "${mfirst%% *}"
nodes3="[coord=127.0.0.1:$pc, t0=127.0.0.1:$pt0, t1=127.0.0.1:$pt1]"
mn3=(--train.dense-lr=0.01)
mbags=$(mn_ne mn-bags "$nodes3" "[t0, t1]" train.tsv eval.tsv "${mn3[@]}" --data.multi-hot="$cols")
mfirst3=$(mn_ne mn-first "$nodes3" "[t0, t1]" train-first.tsv eval-first.tsv "${mn3[@]}")
case "$mbags" in
  *" 100000 multi-node") ok "3 nodes, s-easgd: learned from all 100000 rows" ;;
  *) bad "3 nodes, s-easgd: (eval NE, examples, mode) '$mbags', expected 100000 examples" ;;
esac
better "3 nodes, s-easgd" "${mbags%% *}" "${mfirst3%% *}" 0.008

# The saved model reads the bags again: eval gives the run's NE, predict a
# score per line.
expect 0 "NE ${sum:0:6}" "eval of the saved model" -- \
  "$bin" eval --model=model --data.eval=eval.tsv
expect 0 "10000 predictions" "predict with the saved model" -- \
  "$bin" predict --model=model --data=eval.tsv --out=scores.txt
[ "$(wc -l < scores.txt)" = 10000 ] && ok "10000 scores" || bad "scores.txt: $(wc -l < scores.txt) lines"

# Partial recovery with CPR's MFU and SSU row choice (virtual clock, first 50k
# rows): a shard push carries one summed gradient per unique id of the batch,
# with bags as without, so a row's count is its updates. An embedding shard
# killed mid-run is restarted from its saves; the run trains every row and
# keeps the bags' NE (seen 0.9255 for both with the kill, 0.9273 without,
# first-id with the kill 0.9443).
vsim=(--cluster.mode=simulated --cluster.trainers=2 --cluster.embedding-shards=2 --sim.clock=virtual)
kill=(--recovery.mode=partial --cpr.interval=0.05 "--faults.kill=[embedding-shard-1@0.5]")
nokill=$(ne_of cpr-nokill train50.tsv eval.tsv "${vsim[@]}" --data.multi-hot="$cols")
kfirst=$(ne_of cpr-first train50-first.tsv eval-first.tsv "${vsim[@]}" "${kill[@]}" \
  --cpr.policy=mfu --checkpoint.dir=ck-first)
for p in mfu ssu; do
  ne=$(ne_of cpr-$p train50.tsv eval.tsv "${vsim[@]}" "${kill[@]}" --data.multi-hot="$cols" \
    --cpr.policy=$p --checkpoint.dir=ck-$p)
  better "cpr.policy=$p, shard killed" "$ne" "$kfirst"
  got=$(json cpr-$p.json "d['examples'], d['recovery']['failures'], d['recovery']['loads']" 2>/dev/null)
  [ "$got" = "50000 1 1" ] && ok "cpr.policy=$p: 50000 rows, 1 shard restarted from its saves" \
    || bad "cpr.policy=$p: (examples, failures, loads) '$got'"
  [ -n "$ne" ] && [ -n "$nokill" ] && python3 -c "import sys; sys.exit(abs($ne - $nokill) > 0.005)" \
    && ok "cpr.policy=$p: eval NE $ne within 0.005 of the run without a kill ($nokill)" \
    || bad "cpr.policy=$p: eval NE '$ne' vs '$nokill' without a kill"
done
summary
