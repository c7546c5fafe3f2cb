#!/usr/bin/env bash
# System test of the multi-node cluster: real processes on loopback with
# mutual TLS (shadowsync launch / node). Checks:
#  - nodes train exactly the one-process model where that model does not
#    depend on thread timing (FR-EASGD with one trainer node, dense and
#    through DCT, FR-MA with two and frozen embeddings); S-EASGD and S-MA over 2 trainer nodes finish
#    every example with shadow rounds and a model that learned;
#  - a node with a certificate from another CA, and a node speaking plain TCP,
#    are refused; incomplete TLS settings and insecure non-loopback hosts are
#    refused at startup; the coordinator names the nodes still missing;
#  - an impostor holding t0's valid certificate that starts as t1 is refused
#    by name (deploy/node_identity.hpp), exits 1, and the real t1 then joins;
#    a fake coordinator (t0's certificate as coord) is refused by the node;
#  - SIGKILL of a trainer node mid-run: the job finishes without it (S-MA ring
#    re-formed) and says so;
#  - SIGKILL of the shard node: the job ends with an error naming the node
#    within the configured timeout; with recovery.mode=partial a new process
#    of it (launch --restart=on-failure, or by hand) rejoins, reloads its
#    shard and the job finishes; with recovery.mode=full every node rolls
#    back to the newest cut once the new process has joined (twice in one
#    run when the new process is killed too);
#  - strangers' failed handshakes (a TLS client without a certificate, plain
#    TCP bytes) against running nodes do not disturb the job
#    (deploy/openssl_shim.hpp);
#  - SIGTERM to the coordinator's process, and SIGINT to launch (passed to the
#    coordinator), stop the job: the other nodes exit 0;
#  - no node process is left behind.
# Ports are picked free at the start, so two runs can share a machine; every
# wait is on a condition in a log or a process table, with a deadline.
# usage: multinode_test.sh PATH/TO/shadowsync SOURCE_DIR
set -u
bin=${1:?shadowsync binary}
src=${2:?source dir}
source "$src/tests/system/lib.sh"
tmp=$(mktemp -d)
cleanup() { pkill -KILL -f "$tmp/spec.ini" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
leftovers() { pgrep -f "node --node=.*$tmp/spec.ini" > /dev/null && echo yes || echo no; }
no_leftovers() { [ "$(leftovers)" = no ]; }

bash "$src/scripts/make-certs.sh" "$tmp/certs" coord s0 t0 t1 > /dev/null || { echo "make-certs failed"; exit 1; }
bash "$src/scripts/make-certs.sh" --ca-name other "$tmp/other" t0 > /dev/null || exit 1
"$bin" datagen --rows=200000 --seed=11 --out="$tmp/train.tsv" > /dev/null || { echo "datagen failed"; exit 1; }
"$bin" datagen --rows=40000 --seed=12 --out="$tmp/eval.tsv" > /dev/null || exit 1
cp "$src/config/cluster-3node.ini" "$tmp/spec.ini"
read -r pc pt0 pt1 ps0 < <(free_ports 4)
[ -n "$ps0" ] || { echo "could not pick free ports"; exit 1; }
echo "ports: coord $pc, t0 $pt0, t1 $pt1, s0 $ps0"
nodes3="[coord=127.0.0.1:$pc, t0=127.0.0.1:$pt0, t1=127.0.0.1:$pt1]"
# An option may be given once on the command line: `fixed` plus either the
# cluster certificates (cert) or others, and the node list.
fixed=(--config-file="$tmp/spec.ini" --data.train="$tmp/train.tsv" --data.eval="$tmp/eval.tsv"
       --openssl.cafile="$tmp/certs/ca.pem" --output.progress=plain --output.progress-seconds=1
       --cluster.timeout-ms=8000)
cert=(--openssl.certificate="$tmp/certs/{node}.pem" --openssl.key="$tmp/certs/{node}.key")
common=("${fixed[@]}" "${cert[@]}" --deploy.nodes="$nodes3")

# 1a. The same model as one process, bit for bit. Two configurations whose
# result does not depend on thread timing: foreground EASGD with one trainer node (lookups,
# pushes and elastic exchanges cross the wire), and foreground MA with two
# trainer nodes and sparse-lr 0 (the ring crosses the wire; with embeddings
# frozen the trainers do not race on shared rows). The metrics JSON holds
# 10 significant digits; both must print the same eval NE. (A build with
# SS_NATIVE=ON was not deterministic here at the last bit, even with one
# trainer and no sync; the likely cause, not verified, is that with AVX-512
# Eigen's vector loops start at the first 64-byte aligned element, so the
# summation order follows each run's heap addresses.)
one_process() { # ALG OUT [options]: the one-process cluster on the same data
  local alg=$1 out=$2
  shift 2
  "$bin" train --config-file="$src/config/default.ini" --data.train="$tmp/train.tsv" \
    --data.eval="$tmp/eval.tsv" --cluster.embedding-shards=1 --cluster.dense-shards=1 \
    --sync.algorithm=$alg --train.dense-lr=0.01 --output.progress=none --output.metrics="$out" \
    --sim.calibration= "$@" > "$tmp/one.log" 2>&1 # built-in constants: no machine's calibration
}
same_model() { # NAME ALG NODES TRAINER-NODES [options]: one process vs nodes, same eval NE
  local name=$1 alg=$2 nodes=$3 trainers=$4
  shift 4
  if ! one_process $alg "$tmp/one-$name.json" "$@"; then
    bad "$name: one-process run failed: $(tail -n 3 "$tmp/one.log")"
    return
  fi
  if ! timeout 300 "$bin" launch "${fixed[@]}" "${cert[@]}" --deploy.nodes="$nodes" --deploy.trainers="$trainers" \
      --sync.algorithm=$alg --train.dense-lr=0.01 --output.metrics="$tmp/mn-$name.json" "$@" > "$tmp/mn-$name.log" 2>&1; then
    bad "$name: 3-node run failed: $(tail -n 5 "$tmp/mn-$name.log")"
    return
  fi
  local one mn
  one=$(json "$tmp/one-$name.json" "d['eval_ne']")
  mn=$(json "$tmp/mn-$name.json" "d['eval_ne'], d['examples'], d['mode']")
  [ "$mn" = "$one 200000 multi-node" ] \
    && ok "$name: the nodes trained the one-process model exactly (eval NE $one)" \
    || bad "$name: nodes (eval NE, examples, mode) $mn vs one process eval NE $one"
}
same_model fr-easgd-1-trainer fr-easgd "[coord=127.0.0.1:$pc, t0=127.0.0.1:$pt0]" "[t0]" \
  --cluster.trainers=1
same_model fr-ma-2-trainers fr-ma "$nodes3" "[t0, t1]" --cluster.trainers=2 --train.sparse-lr=0
# DCT's sparse exchanges (messages::sparse_range; dct.mp's sparse_rows and
# sparse_grads) cross the wire and give the same model.
same_model fr-easgd-dct-1-trainer fr-easgd "[coord=127.0.0.1:$pc, t0=127.0.0.1:$pt0]" "[t0]" \
  --cluster.trainers=1 --dct.dp=true --dct.mp=true
# ... and the ring's (messages::ring_sparse, DCT for MA).
same_model fr-ma-dct-2-trainers fr-ma "$nodes3" "[t0, t1]" --cluster.trainers=2 --train.sparse-lr=0 \
  --dct.dp=true
# ... and the reduce's thresholded partial sums (dct.dp-ring=reduce).
same_model fr-ma-dct-reduce-2-trainers fr-ma "$nodes3" "[t0, t1]" --cluster.trainers=2 \
  --train.sparse-lr=0 --dct.dp=true --dct.dp-ring=reduce
grep -q "mutual TLS" "$tmp/mn-fr-ma-2-trainers.log" && ok "nodes listened with mutual TLS" \
  || bad "no 'mutual TLS' in the node logs"

# 1b. Shadow sync over the wire. Its result depends on thread timing by
# design (repeating the one-process S-MA run of 1a's data, `train
# --sync.algorithm=s-ma --train.dense-lr=0.01`, gave eval NE 0.874-0.884 in
# 6 runs here), so no run-to-run equality is asserted: the job must
# finish with every example, sync rounds must have run, and the model must
# have learned (eval NE below 0.95; a constant predictor scores 1.0). What
# the rounds compute over the wire is checked exactly in 1a.
for alg in s-easgd s-ma; do
  if ! timeout 300 "$bin" launch "${common[@]}" --sync.algorithm=$alg --train.dense-lr=0.01 \
      --output.metrics="$tmp/mn-$alg.json" > "$tmp/mn-$alg.log" 2>&1; then
    bad "$alg 3-node run: $(tail -n 5 "$tmp/mn-$alg.log")"
    continue
  fi
  got=$(json "$tmp/mn-$alg.json" "d['examples'], d['mode'], d['sync']['rounds'] > 0, d['eval_ne'] < 0.95, d['eval_ne']")
  case "$got" in
    "200000 multi-node True True "*) ok "$alg: 3 nodes over TLS trained every example with shadow rounds: $got" ;;
    *) bad "$alg: (examples, mode, rounds > 0, eval NE < 0.95, eval NE) = $got" ;;
  esac
done
[ "$(leftovers)" = no ] && ok "no node process left after the runs" || bad "node processes left behind"
# launch split this machine's cores between its 3 nodes (runtime::threads_per_node).
per_node=$(( $(nproc) / 3 )); [ "$per_node" -lt 1 ] && per_node=1
n=$(grep -c "listening on .*, $per_node scheduler thread(s))" "$tmp/mn-s-easgd.log")
[ "$n" = 3 ] && ok "launch gave each of its 3 nodes $per_node scheduler thread(s) on $(nproc) cores" \
  || bad "nodes logging $per_node scheduler thread(s): $n of 3: $(grep "listening on" "$tmp/mn-s-easgd.log")"

# 2. Refusals. A coordinator alone, waiting 6 s for nodes that are refused.
wait_coord=(--deploy.startup-timeout-ms=6000)
"$bin" node "${common[@]}" "${wait_coord[@]}" --node=coord > "$tmp/coord.log" 2>&1 &
coord_pid=$!
wait_for 30 in_log "$tmp/coord.log" "listening on" || bad "the lone coordinator never listened"
"$bin" node "${fixed[@]}" --deploy.nodes="$nodes3" "${wait_coord[@]}" --node=t0 \
  --openssl.certificate="$tmp/other/t0.pem" --openssl.key="$tmp/other/t0.key" > "$tmp/other.log" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "TLS handshake was refused" "$tmp/other.log" \
  && ok "a certificate from another CA is refused (exit 1): $(grep -o 'failed: [^(]*' "$tmp/other.log" | head -n 1)" \
  || bad "foreign-CA node: exit $rc: $(tail -n 2 "$tmp/other.log")"
"$bin" node "${common[@]}" "${wait_coord[@]}" --node=t1 --deploy.insecure=true > "$tmp/plain.log" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "failed" "$tmp/plain.log" && ok "plain TCP to a TLS node is refused (exit 1)" \
  || bad "plain TCP node: exit $rc: $(tail -n 2 "$tmp/plain.log")"
wait $coord_pid
rc=$?
[ $rc = 1 ] && grep -q "nodes missing after 6000 ms.*t0 (127.0.0.1:$pt0), t1" "$tmp/coord.log" \
  && ok "the coordinator admitted neither and named the missing nodes" \
  || bad "coordinator after refusals: exit $rc: $(tail -n 2 "$tmp/coord.log")"
"$bin" node "${fixed[@]}" --deploy.nodes="$nodes3" --node=t0 \
  --openssl.certificate="$tmp/certs/{node}.pem" --openssl.key= > "$tmp/nokey.log" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "openssl.key' is not set" "$tmp/nokey.log" \
  && ok "incomplete TLS settings refused at startup (exit 2)" || bad "no key: exit $rc: $(cat "$tmp/nokey.log")"
"$bin" node "${fixed[@]}" --node=t0 --deploy.insecure=true \
  --deploy.nodes="[coord=10.9.9.9:$pc, t0=127.0.0.1:$pt0, t1=127.0.0.1:$pt1]" \
  > "$tmp/remote.log" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "only allowed on loopback" "$tmp/remote.log" \
  && ok "plain TCP with a non-loopback node refused (exit 2)" || bad "insecure remote: exit $rc: $(cat "$tmp/remote.log")"
"$bin" node "${common[@]}" --node=zz > "$tmp/zz.log" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "no such node" "$tmp/zz.log" && ok "unknown --node refused (exit 2)" \
  || bad "unknown node: exit $rc: $(cat "$tmp/zz.log")"
"$bin" node "${common[@]}" --node=t0 --node=t1 > "$tmp/twice.log" 2>&1
rc=$?
"$bin" node "${common[@]}" --node t0 > "$tmp/space.log" 2>&1
rc2=$?
[ $rc = 2 ] && [ $rc2 = 2 ] && grep -q "given twice" "$tmp/twice.log" && grep -q "value attached" "$tmp/space.log" \
  && ok "--node twice, and --node without '=', refused (exit 2)" \
  || bad "--node misuse: exit $rc / $rc2: $(cat "$tmp/twice.log" "$tmp/space.log")"

# 2b. An impostor: a process holding t0's valid certificate starts as t1.
# The coordinator refuses its hello naming both ids (deploy/node_identity.hpp:
# a node signs the coordinator's challenge with its key; the certificate's CN
# must be the id it claims), the impostor exits 1 saying why, the real t1
# then joins and the job finishes (exit 0 on every node).
imp=(--deploy.startup-timeout-ms=60000 --train.max-examples=20000)
timeout 300 "$bin" node "${common[@]}" "${imp[@]}" --node=coord > "$tmp/imp-coord.log" 2>&1 &
imp_coord=$!
timeout 300 "$bin" node "${common[@]}" "${imp[@]}" --node=t0 > "$tmp/imp-t0.log" 2>&1 &
imp_t0=$!
wait_for 30 in_log "$tmp/imp-coord.log" "listening on" || bad "impostor case: the coordinator never listened"
timeout 120 "$bin" node "${fixed[@]}" --deploy.nodes="$nodes3" "${imp[@]}" --node=t1 \
  --openssl.certificate="$tmp/certs/t0.pem" --openssl.key="$tmp/certs/t0.key" > "$tmp/imp-t1.log" 2>&1
rc_imp=$?
timeout 300 "$bin" node "${common[@]}" "${imp[@]}" --node=t1 > "$tmp/imp-real.log" 2>&1 &
imp_t1=$!
wait $imp_coord; rc_c=$?
wait $imp_t0; rc_0=$?
wait $imp_t1; rc_1=$?
claim="claims 't1' but its certificate is for 't0'"
if [ $rc_imp != 0 ] && grep -q "$claim" "$tmp/imp-t1.log"; then
  ok "an impostor with t0's certificate as t1 is refused (exit $rc_imp): $(grep -o "refused.*$claim" "$tmp/imp-t1.log" | head -n 1)"
else
  bad "impostor with t0's certificate as t1: exit $rc_imp: $(tail -n 3 "$tmp/imp-t1.log")"
fi
grep -q "refused node hello from .*: $claim" "$tmp/imp-coord.log" \
  && ok "the coordinator logged the refusal: $(grep -o "refused node hello from .*" "$tmp/imp-coord.log" | head -n 1)" \
  || bad "no refusal naming both ids in the coordinator's log: $(grep -i "refused\|joined" "$tmp/imp-coord.log" | head -n 3)"
[ $rc_c = 0 ] && [ $rc_0 = 0 ] && [ $rc_1 = 0 ] && grep -q "node t1 ready" "$tmp/imp-real.log" \
  && ok "the real t1 joined after the impostor and the job finished (exit 0 on coord, t0, t1)" \
  || bad "after the impostor: exit coord $rc_c, t0 $rc_0, t1 $rc_1: $(tail -n 2 "$tmp/imp-coord.log" "$tmp/imp-real.log")"

# 2c. A fake coordinator: t0's certificate listening as coord. A node checks
# the coordinator's signature of its own nonce, and its certificate's CN,
# before it lets it direct anything: t1 refuses it, naming both, and exits 1.
timeout 60 "$bin" node "${fixed[@]}" --deploy.nodes="$nodes3" --deploy.startup-timeout-ms=6000 \
  --node=coord --openssl.certificate="$tmp/certs/t0.pem" --openssl.key="$tmp/certs/t0.key" \
  > "$tmp/fake-coord.log" 2>&1 &
fake_pid=$!
wait_for 30 in_log "$tmp/fake-coord.log" "listening on" || bad "the fake coordinator never listened"
timeout 60 "$bin" node "${common[@]}" --deploy.startup-timeout-ms=6000 --node=t1 > "$tmp/fake-t1.log" 2>&1
rc=$?
wait $fake_pid
fake="is not the spec's coordinator 'coord': claims 'coord' but its certificate is for 't0'"
[ $rc = 1 ] && grep -q "$fake" "$tmp/fake-t1.log" \
  && ok "a fake coordinator with t0's certificate is refused by the node (exit 1): $(grep -o "the node at .*$fake" "$tmp/fake-t1.log" | head -n 1)" \
  || bad "fake coordinator: t1 exit $rc: $(tail -n 2 "$tmp/fake-t1.log")"

# Starts `launch` in the background and waits until training has begun (the
# coordinator's first progress line). Sets launch_pid; returns 1 (after
# stopping the launch) when training never began.
launch_training() {
  local log=$1
  shift
  timeout 300 "$bin" launch "$@" > "$log" 2>&1 &
  launch_pid=$!
  if ! wait_for 120 in_log "$log" "\[train\]"; then
    kill -TERM "$launch_pid" 2>/dev/null
    wait "$launch_pid"
    return 1
  fi
}

# launch_and_signal SIG NODE LOG ARGS...: launch_training, then signal $1 to
# node $2's process. Sets launch_pid and killed_at; returns 1 (and stops the
# launch) when training never began or the node's pid is not in the log.
# Three epochs, so that even a much faster machine is still training then
# (eval NE is not checked there: 3 passes over 200k rows overfit, ~1.46 NE
# in sequential mode too).
launch_and_signal() {
  local sig=$1 victim=$2 log=$3
  shift 3
  launch_training "$log" "$@" --train.epochs=3 || return 1
  local pid
  pid=$(grep -o "node $victim: pid [0-9]*" "$log" | awk '{print $4}')
  if [ -z "$pid" ]; then
    kill -TERM "$launch_pid" 2>/dev/null
    wait "$launch_pid"
    return 1
  fi
  killed_at=$(date +%s.%N)
  kill -"$sig" "$pid"
}

# 3. SIGKILL a trainer node (S-MA: the ring re-forms).
if launch_and_signal KILL t1 "$tmp/kill-t1.log" "${common[@]}" --sync.algorithm=s-ma \
    --output.metrics="$tmp/kill-t1.json"; then
  wait $launch_pid
  rc=$?
else
  rc=never-started
fi
if [ $rc = 0 ] && grep -q "LOST trainer 1 on node t1" "$tmp/kill-t1.log"; then
  ok "trainer node t1 killed mid-run: the job finished (exit 0): $(json "$tmp/kill-t1.json" "'%d examples by the survivor, lost: %s' % (d['examples'], d['lost_trainers'][0][:60])")"
else
  bad "trainer kill: exit $rc: $(tail -n 5 "$tmp/kill-t1.log")"
fi
grep -q "ring re-formed with 1 member" "$tmp/kill-t1.log" && ok "the surviving syncer re-formed its ring" \
  || bad "no ring re-form in the log"

# 3b. SIGSTOP a trainer node: a frozen peer is only seen through heartbeats
# (here 500 ms, connection timeout 2 s); the job finishes without it.
if launch_and_signal STOP t1 "$tmp/stop-t1.log" "${common[@]}" --sync.algorithm=s-ma \
    --deploy.heartbeat-ms=500 --deploy.connection-timeout-ms=2000; then
  wait $launch_pid
  rc=$?
else
  rc=never-started
fi
lost=$(grep -o "trainer 1 on node t1 lost after [0-9.]* s" "$tmp/stop-t1.log" | head -n 1)
[ $rc = 0 ] && [ -n "$lost" ] && ok "trainer node t1 frozen (SIGSTOP): detected by heartbeats, $lost; exit 0" \
  || bad "trainer freeze: exit $rc: $(tail -n 4 "$tmp/stop-t1.log")"

# 4. SIGKILL the shard node (4 nodes: coord, s0 with every shard, t0, t1).
nodes4="[coord=127.0.0.1:$pc, s0=127.0.0.1:$ps0, t0=127.0.0.1:$pt0, t1=127.0.0.1:$pt1]"
if launch_and_signal KILL s0 "$tmp/kill-s0.log" "${fixed[@]}" "${cert[@]}" --deploy.nodes="$nodes4" \
    --deploy.embedding-shards="[s0]" --deploy.dense-shards="[s0]"; then
  wait $launch_pid
  rc=$?
else
  rc=never-started
  killed_at=$(date +%s.%N)
fi
ended_at=$(date +%s.%N)
took=$(/usr/bin/python3 -c "print(round($ended_at - $killed_at, 2))")
within=$(/usr/bin/python3 -c "print($ended_at - $killed_at < 8 + 5 + 3)")
if [ $rc = 1 ] && grep -q "error node coord: node s0 (127.0.0.1:$ps0) hosting embedding shard 0" "$tmp/kill-s0.log" \
    && [ "$within" = True ]; then
  ok "shard node s0 killed: clear error naming it, exit 1, $took s after the kill"
else
  bad "shard kill: exit $rc after $took s: $(grep -i error "$tmp/kill-s0.log" | tail -n 3)"
fi

# 4b. recovery.mode=partial: SIGKILL the node of embedding shard 0 (s0; the
# dense shard is on coord). A new process of s0 (started by `launch
# --restart=on-failure`, then by hand with `shadowsync node --node=s0`)
# rejoins, reloads the shard from its newest save under checkpoint.dir, the
# trainers' lookups wait for it and go on; the job finishes with exit 0 and
# every example.
partial=(--deploy.nodes="$nodes4" --deploy.embedding-shards="[s0]" --deploy.dense-shards="[coord]"
         --recovery.mode=partial --checkpoint.dir="$tmp/cpr" --cpr.interval=0.5)
for how in launch hand; do
  rm -rf "$tmp/cpr"
  restart=()
  [ $how = launch ] && restart=(--restart=on-failure)
  if launch_and_signal KILL s0 "$tmp/cpr-$how.log" "${fixed[@]}" "${cert[@]}" "${partial[@]}" \
      "${restart[@]}" --output.metrics="$tmp/cpr-$how.json"; then
    if [ $how = hand ]; then
      "$bin" node "${fixed[@]}" "${cert[@]}" "${partial[@]}" --train.epochs=3 --node=s0 \
        > "$tmp/cpr-s0.log" 2>&1 &
    fi
    wait $launch_pid
    rc=$?
    [ $how = hand ] && wait
  else
    rc=never-started
  fi
  event=$(grep -o "RECOVERED embedding shard 0 on node s0 lost at .*" "$tmp/cpr-$how.log" | head -n 1)
  got=$(json "$tmp/cpr-$how.json" "d['examples'], d['recovery']['failures'], d['recovery']['saves']" 2>/dev/null)
  restarted=yes
  [ $how = launch ] && ! grep -q "node s0: restarted (1 of" "$tmp/cpr-$how.log" && restarted=no
  [ $how = hand ] && ! grep -q "node s0 ready" "$tmp/cpr-s0.log" && restarted=no
  if [ $rc = 0 ] && [ -n "$event" ] && [ "$got" = "600000 1 None" ] && [ $restarted = yes ]; then
    ok "shard node s0 killed, restarted ($how), reloaded and rejoined: exit 0, 600000 examples; $event"
  else
    bad "partial recovery, restart by $how: exit $rc, (examples, failures, saves) = $got, restarted $restarted: $(grep -i "error\|recovered" "$tmp/cpr-$how.log" | tail -n 3)"
  fi
done

# 4c. recovery.mode=full: SIGKILL the node of embedding shard 0 (s0), then
# a trainer node (t1), after the first cut (six passes: a cut of this table
# takes seconds, and the kill must land while training); s0's new process
# is killed too, after a cut of the restarted cluster (two rollbacks in one
# run, the second to the later cut). Every role stops,
# `launch --restart=on-failure` starts a new process of the node, and every
# node starts its roles again from the cut (each reads its part: the
# trainers' readers resume at the cut's positions); the job finishes with
# exit 0 and every example counted once (the examples after the cut are
# redone, not counted twice). The trainer node's case: the coordinator's
# roster may still list its dead process when the rollback begins. s0's
# case also counts the examples to redo: the trainers trained on after the
# cut (the coordinator's poll counts while a cut is in flight too; before,
# it paused there and read 0, the cuts of this run being back to back).
cuts_beyond() { [ "$(grep -c "cut while training" "$1")" -gt "$2" ]; }
full=(--deploy.nodes="$nodes4" --deploy.embedding-shards="[s0]" --deploy.dense-shards="[coord]"
      --recovery.mode=full --checkpoint.dir="$tmp/full" --cpr.interval=0.5)
for victim in s0 t1; do
  rm -rf "$tmp/full"
  [ $victim = s0 ] && role="embedding shard 0" || role="trainer 1"
  # (The progress lines are few while cuts run back to back: the kill waits
  # for the first cut's line instead.)
  timeout 300 "$bin" launch "${fixed[@]}" "${cert[@]}" "${full[@]}" --restart=on-failure \
    --train.epochs=6 --output.metrics="$tmp/full-$victim.json" > "$tmp/full-$victim.log" 2>&1 &
  launch_pid=$!
  rc=never-cut
  if wait_for 120 in_log "$tmp/full-$victim.log" "cut while training"; then
    pid=$(grep -o "node $victim: pid [0-9]*" "$tmp/full-$victim.log" | awk '{print $4}')
    [ -n "$pid" ] && kill -KILL "$pid"
    if [ $victim = s0 ]; then # its new process too, after a cut of the restarted cluster
      if wait_for 60 in_log "$tmp/full-$victim.log" "the cluster runs again"; then
        n=$(grep -c "cut while training" "$tmp/full-$victim.log")
        if wait_for 60 cuts_beyond "$tmp/full-$victim.log" "$n"; then
          pid=$(grep -o "node $victim: restarted (1 of at most [0-9]*), pid [0-9]*" \
                  "$tmp/full-$victim.log" | awk '{print $NF}')
          [ -n "$pid" ] && kill -KILL "$pid"
        fi
      fi
    fi
    wait $launch_pid
    rc=$?
  else
    kill -TERM "$launch_pid" 2>/dev/null
    wait "$launch_pid"
  fi
  event=$(grep -o "RECOVERED $role on node $victim is down .*rolled back to $tmp/full/ckpt-.*" "$tmp/full-$victim.log" | head -n 1)
  got=$(json "$tmp/full-$victim.json" "d['examples'], d['recovery']['failures'], d['recovery']['loads']" 2>/dev/null)
  redone=$(json "$tmp/full-$victim.json" "d['recovery']['redone_examples']" 2>/dev/null)
  if [ $victim = s0 ] && ! [ "${redone:-0}" -gt 0 ] 2>/dev/null; then
    bad "full recovery, s0 killed after a cut: redone_examples ${redone:-absent}, expected more than 0 (the trainers trained on after the cut)"
  fi
  kills=1
  [ $victim = s0 ] && kills=2
  # s0's second rollback goes to a cut of the restarted cluster, past the first's.
  cuts=$(grep -o "RECOVERED $role on node $victim is down .*rolled back to $tmp/full/ckpt-[0-9]*" \
           "$tmp/full-$victim.log" | sed 's/.*ckpt-0*//' | tr '\n' ' ')
  if [ $victim = s0 ] && ! python3 -c "import sys; c = list(map(int, '$cuts'.split())); sys.exit(0 if len(c) == 2 and c[1] > c[0] else 1)"; then
    bad "full recovery, s0 killed twice: the rollbacks' cuts '$cuts', expected two, the second later"
  fi
  if [ $rc = 0 ] && [ -n "$event" ] && [ "$got" = "1200000 $kills $kills" ] \
      && grep -q "node $victim: restarted ($kills of" "$tmp/full-$victim.log"; then
    ok "full recovery across nodes: $victim killed $kills time(s), each after a cut, restarted, every node rolled back to the cut: exit 0, 1200000 examples; ${event#RECOVERED }"
  else
    bad "full recovery, $victim killed: exit $rc, (examples, failures, loads) = $got: $(grep -i "error\|roll" "$tmp/full-$victim.log" | tail -n 3)"
  fi
done

# 5. Strangers' failed handshakes against the running coordinator and a
# trainer node: a TLS client with no certificate, then plain TCP bytes. Before
# deploy/openssl_shim.cpp each one dropped the nodes' healthy TLS links (the
# job lost every trainer); now the job must finish with every example.
if launch_training "$tmp/stranger.log" "${common[@]}" --sync.algorithm=s-easgd --train.epochs=2 \
    --output.metrics="$tmp/stranger.json"; then
  for port in $pc $pt0; do
    timeout 10 openssl s_client -connect 127.0.0.1:$port -CAfile "$tmp/certs/ca.pem" \
      < /dev/null > "$tmp/s_client.log" 2>&1
    timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port; printf 'GET / HTTP/1.0\r\n\r\n' >&3; cat <&3" \
      > /dev/null 2>&1
  done
  wait $launch_pid
  rc=$?
  if [ $rc = 0 ] && ! grep -q "LOST\|lost after" "$tmp/stranger.log" \
      && [ "$(json "$tmp/stranger.json" "d['examples']")" = 400000 ]; then
    ok "failed handshakes of strangers (no client certificate; plain TCP) left the job intact: exit 0, 400000 examples, no node lost"
  else
    bad "stranger handshakes: exit $rc: $(grep -i "lost\|error" "$tmp/stranger.log" | head -n 3)"
  fi
else
  bad "stranger run: training never began: $(tail -n 3 "$tmp/stranger.log")"
fi

# 6. SIGTERM to the coordinator's process stops the job at its next progress
# poll: exit 143 naming the signal, the other nodes are ended (exit 0).
term=(--deploy.startup-timeout-ms=60000 --train.epochs=5)
timeout 300 "$bin" node "${common[@]}" "${term[@]}" --node=coord > "$tmp/term-coord.log" 2>&1 &
term_coord=$!
timeout 300 "$bin" node "${common[@]}" "${term[@]}" --node=t0 > "$tmp/term-t0.log" 2>&1 &
term_t0=$!
timeout 300 "$bin" node "${common[@]}" "${term[@]}" --node=t1 > "$tmp/term-t1.log" 2>&1 &
term_t1=$!
if wait_for 120 in_log "$tmp/term-coord.log" "\[train\] .* ex |"; then
  kill -TERM $term_coord
  wait $term_coord; rc_c=$?
  wait $term_t0; rc_0=$?
  wait $term_t1; rc_1=$?
  [ $rc_c = 143 ] && grep -q "stopped by SIGTERM after" "$tmp/term-coord.log" && [ $rc_0 = 0 ] && [ $rc_1 = 0 ] \
    && ok "SIGTERM to the coordinator stopped the job: coord exit 143 ($(grep -o 'stopped by SIGTERM after [0-9]* examples' "$tmp/term-coord.log")), t0 and t1 exit 0" \
    || bad "SIGTERM to the coordinator: exit coord $rc_c, t0 $rc_0, t1 $rc_1: $(tail -n 4 "$tmp/term-coord.log"); t0: $(tail -n 4 "$tmp/term-t0.log"); t1: $(tail -n 4 "$tmp/term-t1.log")"
else
  kill -KILL $term_coord $term_t0 $term_t1 2>/dev/null
  bad "SIGTERM case: training never began: $(tail -n 3 "$tmp/term-coord.log")"
fi

# 6b. SIGINT to `launch` (Ctrl-C): passed to the coordinator alone, which
# stops the job; the other nodes are ended (exit 0) and launch exits 130.
if launch_training "$tmp/int-launch.log" "${common[@]}" --train.epochs=5; then
  launcher=$(pgrep -P "$launch_pid" -f "launch" | head -n 1)
  kill -INT "$launcher"
  wait "$launch_pid"; rc=$?
  log="$tmp/int-launch.log"
  [ "$rc" = 130 ] && grep -q "\[launch\] Interrupt: passed to the coordinator node coord" "$log" \
    && grep -q "stopped by SIGINT after" "$log" && grep -q "\[launch\] node t0 exited with status 0" "$log" \
    && grep -q "\[launch\] node t1 exited with status 0" "$log" \
    && ok "SIGINT to launch went to the coordinator: launch exit 130, $(grep -o 'stopped by SIGINT after [0-9]* examples' "$log"), t0 and t1 exit 0" \
    || bad "SIGINT to launch: exit $rc: $(grep "\[launch\]\|stopped by" "$log" | tail -n 6)"
else
  bad "SIGINT case: training never began: $(tail -n 3 "$tmp/int-launch.log")"
fi

wait_for 10 no_leftovers && ok "no node process left after the kills" || bad "node processes left behind"

summary
