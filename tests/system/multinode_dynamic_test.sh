#!/usr/bin/env bash
# Dynamic embedding tables (model.embedding=dynamic, issue 39 item 4) in
# multi-node runs: real node processes on loopback (shadowsync launch on
# 127.0.0.1, plain TCP and one run over mutual TLS), with the embedding
# shards on nodes other than the coordinator's, so that lookups of (table,
# id) pairs, pushes, dct.mp's row marks, the end-of-run counters (stats) and
# the rows gathered for evaluation (dump) all cross the wire. Generated rows whose vocabularies
# (up to 50 000 ids) are larger than the tables (2 000 rows), as in
# dynamic_embedding_test.sh. Checks:
#  - one trainer node with foreground EASGD (no thread timing in the model):
#    eval NE, train NE and every table counter equal the one-process run's
#    (virtual clock), dense (over mutual TLS) and with dct.mp;
#  - two trainer nodes with S-EASGD: every example trained, rows admitted
#    and evicted, lookups of ids without a row counted in training and
#    evaluation, at most 2 000 rows a table, and an eval NE below 0.98 and
#    within 0.03 of the one-process wall-clock run of the same job;
#  - recovery.mode=partial: the node of an embedding shard is killed,
#    restarted (launch --restart=on-failure), reloads its shard's dynamic
#    tables from its CPR saves, and the job finishes every example;
#  - recovery.mode=full: the same node killed after the first cut, restarted,
#    and every node rolled back to the cut; the job counts every example once.
# About 20 seconds.
#
# usage: multinode_dynamic_test.sh BIN
set -u
bin=${1:?shadowsync binary}
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
tmp=$(mktemp -d)
launch_pid=
# launch ends its nodes when it exits (SIGTERM included).
cleanup() { [ -n "$launch_pid" ] && kill -TERM "$launch_pid" 2>/dev/null; wait; rm -rf "$tmp"; }
trap cleanup EXIT
cd "$tmp" || exit 2

"$bin" datagen --out=all.tsv --rows=48000 --seed=5 --teacher.vocab-scale=0.05 > gen.log ||
  { echo "datagen failed"; exit 1; }
head -n 40000 all.tsv > train.tsv
tail -n 8000 all.tsv > eval.tsv
bash "$here/../../scripts/make-certs.sh" certs coord t0 t1 > /dev/null ||
  { echo "make-certs failed"; exit 1; }
read -r pc pt0 pt1 < <(free_ports 3)
[ -n "$pt1" ] || { echo "could not pick free ports"; exit 1; }

job=(--data.train=train.tsv --data.eval=eval.tsv --model.arch=small --model.rows-per-table=2000
     --model.embedding=dynamic --embedding.admit-after=2 --embedding.ttl=15000
     --train.batch-size=128 --cluster.workers=1)
fr1=(--cluster.trainers=1 --sync.algorithm=fr-easgd --train.dense-lr=0.01)
# What must be equal: the model's quality and every table counter.
same="d['eval_ne'], d['train_ne'], d['examples'], d['embedding']"

one() { # NAME OPTIONS...: a one-process run of the simulated cluster
  local name=$1
  shift
  "$bin" train "${job[@]}" --cluster.mode=simulated --sim.calibration= --output.progress=none \
    --output.metrics="$name.json" "$@" > "$name.log" 2>&1 ||
    echo "run $name failed: $(tail -n 2 "$name.log")" >&2
}
# How the nodes connect: plain TCP on loopback, or (net=("${tls[@]}")) mutual TLS.
tls=(--openssl.certificate="certs/{node}.pem" --openssl.key="certs/{node}.key"
     --openssl.cafile=certs/ca.pem)
net=(--deploy.insecure=true)
mn() { # NAME NODES TRAINERS SHARDS OPTIONS...: a launch of the nodes on loopback
  local name=$1 nodes=$2 trainers=$3 shards=$4
  shift 4
  timeout 300 "$bin" launch --config-file="$here/../../config/cluster-3node.ini" \
    "${net[@]}" --deploy.nodes="$nodes" --deploy.trainers="$trainers" \
    --deploy.embedding-shards="$shards" --deploy.dense-shards="[coord]" "${job[@]}" \
    --output.progress=none --output.metrics="$name.json" "$@" > "$name.log" 2>&1
}
field() { json "$1.json" "$2" 2>/dev/null; }

# 1. One trainer node, foreground EASGD: the one-process model exactly. The
# shards are on t0 and t1, the dense shard on the coordinator.
nodes3="[coord=127.0.0.1:$pc, t0=127.0.0.1:$pt0, t1=127.0.0.1:$pt1]"
for v in dense mp; do
  extra=()
  net=(--deploy.insecure=true)
  how="plain TCP"
  [ $v = dense ] && net=("${tls[@]}") && how="mutual TLS"
  [ $v = mp ] && extra=(--dct.mp=true)
  one "one-$v" --sim.clock=virtual --cluster.embedding-shards=2 --cluster.dense-shards=1 \
    "${fr1[@]}" "${extra[@]}"
  mn "mn-$v" "$nodes3" "[t0]" "[t0, t1]" "${fr1[@]}" "${extra[@]}" ||
    echo "launch mn-$v failed (exit $?): $(tail -n 3 "mn-$v.log")"
  a=$(field "one-$v" "$same")
  b=$(field "mn-$v" "$same")
  if [ -n "$a" ] && [ "$a" = "$b" ] && [ "$(field "mn-$v" "d['mode']")" = multi-node ] &&
     [ "$(field "mn-$v" "d['embedding']['admissions'] > 0")" = True ]; then
    ok "fr-easgd, 1 trainer node, shards on 2 nodes ($v, $how): the one-process run exactly (eval NE $(field "mn-$v" "d['eval_ne']"), $(field "mn-$v" "d['embedding']['rows']") rows, $(field "mn-$v" "d['embedding']['admissions']") admitted)"
  else
    bad "fr-easgd ($v): multi-node '$b' vs one process '$a'"
  fi
done
net=(--deploy.insecure=true)
[ "$(field mn-mp "d['dct']['mp']['reduction'] > 10")" = True ] &&
  ok "dct.mp across nodes: $(field mn-mp "round(d['dct']['mp']['reduction'], 2)")x fewer embedding bytes" ||
  bad "dct.mp across nodes: $(field mn-mp "d.get('dct')")"

# 2. Two trainer nodes, S-EASGD, one shard on each: the tables' metrics come
# from both nodes; the model learns as the one-process wall-clock run does
# (thread timing moves both: seen 0.004-0.010 apart).
one one-wall --sim.clock=wall --cluster.trainers=2 --cluster.embedding-shards=2 \
  --cluster.dense-shards=1
mn mn-s "$nodes3" "[t0, t1]" "[t0, t1]" || echo "launch mn-s failed: $(tail -n 3 mn-s.log)"
e() { field mn-s "d['embedding']['$1']"; }
if [ "$(field mn-s "d['examples'], d['mode']")" = "40000 multi-node" ] && [ "$(e rows)" -gt 0 ] &&
   [ "$(e admissions)" -gt "$(e rows)" ] && [ "$(e evictions)" -gt 0 ] &&
   [ "$(e missing_lookups)" -gt 0 ] && [ "$(e eval_missing_lookups)" -gt 0 ] &&
   [ "$(field mn-s "max(d['embedding']['rows_per_table']) <= 2000")" = True ]; then
  ok "s-easgd, 2 trainer nodes: 40000 examples; $(e rows) rows, $(e admissions) admitted, $(e evictions) evicted, $(e missing_lookups) of $(e lookups) lookups without a row"
else
  bad "s-easgd metrics: $(field mn-s "d['examples'], d['mode'], d.get('embedding')")"
fi
nw=$(field one-wall "d['eval_ne']")
ns=$(field mn-s "d['eval_ne']")
if [ -n "$nw" ] && [ -n "$ns" ] &&
   python3 -c "import sys; sys.exit(0 if $ns < 0.98 and abs($ns - $nw) < 0.03 else 1)"; then
  ok "s-easgd across nodes learns: eval NE $ns, one process on the wall clock $nw"
else
  bad "s-easgd eval NE '$ns' vs one process on the wall clock '$nw' (bounds: < 0.98, within 0.03)"
fi
grep -q "dynamic embeddings over 2 shards" mn-s.log && ok "the summary names the shards' tables" ||
  bad "no 'dynamic embeddings over 2 shards' line in the coordinator's log"

# 3. recovery.mode=partial: SIGKILL the node holding embedding shard 0 (s0;
# shard 1 on t1) once it has saved, while training (20 epochs, about 4 s
# here: eval NE is not checked, so many passes overfit); launch restarts it,
# the shard reloads its ids and rows from its newest CPR save.
nodes3s="[coord=127.0.0.1:$pc, s0=127.0.0.1:$pt0, t1=127.0.0.1:$pt1]"
# kill_s0 NAME READY [options]: launches this layout with the options (log
# NAME.log, metrics NAME.json), SIGKILLs s0 once the function READY returns
# 0, and waits; rc: launch's exit status.
kill_s0() {
  local name=$1 ready=$2
  shift 2
  timeout 300 "$bin" launch --restart=on-failure --config-file="$here/../../config/cluster-3node.ini" \
    --deploy.insecure=true --deploy.nodes="$nodes3s" --deploy.trainers="[t1]" \
    --deploy.embedding-shards="[s0, t1]" --deploy.dense-shards="[coord]" "${job[@]}" \
    --output.progress=plain --output.progress-seconds=1 --train.epochs=20 "$@" \
    --output.metrics="$name.json" > "$name.log" 2>&1 &
  launch_pid=$!
  if $ready; then
    local pid
    pid=$(grep -o "node s0: pid [0-9]*" "$name.log" | awk '{print $4}')
    [ -n "$pid" ] && kill -KILL "$pid"
  fi
  wait $launch_pid
  rc=$?
  launch_pid=
}
saved() { [ -n "$(ls cpr/cpr/embedding-0/*.bin 2>/dev/null)" ]; }
cpr_ready() { wait_for 120 in_log cpr.log "\[train\]" && wait_for 60 saved; }
kill_s0 cpr cpr_ready --recovery.mode=partial --checkpoint.dir=cpr --cpr.interval=0.2
event=$(grep -o "RECOVERED embedding shard 0 on node s0 lost at .*" cpr.log | head -n 1)
got=$(field cpr "d['examples'], d['recovery']['failures'], d['embedding']['admissions'] > 0")
if [ $rc = 0 ] && [ -n "$event" ] && [ "$got" = "800000 1 True" ] &&
   grep -q "node s0: restarted (1 of" cpr.log; then
  ok "shard node killed, restarted, its dynamic tables reloaded: exit 0, 800000 examples; $event"
else
  bad "partial recovery: exit $rc, (examples, failures, admitted) '$got': $(grep -i "error\|recovered" cpr.log | tail -n 3)"
fi

# 4. recovery.mode=full: the same layout, cuts every 4 000 examples; SIGKILL
# s0 once the first cut is written. launch restarts it, and every node
# starts its roles again from that cut (the shards read their ids and rows
# of dynamic-S.bin, the trainer its reader position); every example is
# counted once.
full_ready() { wait_for 120 in_log full.log "cut while training"; }
kill_s0 full full_ready --recovery.mode=full --checkpoint.dir=full --checkpoint.every-examples=4000
event=$(grep -o "RECOVERED embedding shard 0 on node s0 is down .*rolled back to full/ckpt-.*" full.log | head -n 1)
got=$(field full "d['examples'], d['recovery']['failures'], d['recovery']['loads'], d['embedding']['admissions'] > 0")
if [ $rc = 0 ] && [ -n "$event" ] && [ "$got" = "800000 1 1 True" ] &&
   grep -q "node s0: restarted (1 of" full.log; then
  ok "full recovery of dynamic tables across nodes: exit 0, 800000 examples; ${event#RECOVERED }"
else
  bad "full recovery: exit $rc, (examples, failures, loads, admitted) '$got': $(grep -i "error\|roll" full.log | tail -n 3)"
fi

summary
