#!/usr/bin/env bash
# Chaos test: N multi-node runs (4 processes on loopback, mutual TLS: coord,
# s0 with every shard, trainers t0 and t1), each with one random fault:
# SIGKILL or SIGSTOP of a random non-coordinator node at a random moment of
# training, under a random sync algorithm. Every run must end by itself
# within its deadline with
#   - exit 0 (a trainer node was lost and the survivors finished; or the job
#     ended before the fault landed, or after the victim's part was done, with
#     every example trained), or
#   - exit 1 with an error naming the lost node and its role,
# and leave no process behind. Prints one table row per run. The job is long
# enough (epochs x rows) for the fault to land in training; the test fails
# when fewer than half of the runs had their fault land (a job that ends
# before any fault tests nothing).
#   usage: chaos.sh PATH/TO/shadowsync SOURCE_DIR [N] [SEED]
set -u
bin=${1:?shadowsync binary}
src=${2:?source dir}
runs=${3:-10}
seed=${4:-$RANDOM}
RANDOM=$seed
deadline=150
rows=100000
epochs=20 # 2 000 000 examples: about 13 s of training at 150 k ex/s, faults land within 5 s
examples=$((rows * epochs))
source "$src/tests/system/lib.sh"
tmp=$(mktemp -d)
cleanup() { pkill -KILL -f "$tmp/spec.ini" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
leftovers() { pgrep -f "$tmp/spec.ini" > /dev/null; }
not_leftovers() { ! leftovers; }

bash "$src/scripts/make-certs.sh" "$tmp/certs" coord s0 t0 t1 > /dev/null || { echo "make-certs failed"; exit 1; }
"$bin" datagen --rows=$rows --seed=21 --out="$tmp/train.tsv" > /dev/null || exit 1
"$bin" datagen --rows=20000 --seed=22 --out="$tmp/eval.tsv" > /dev/null || exit 1
cp "$src/config/cluster-3node.ini" "$tmp/spec.ini"
algs=(none s-easgd s-ma s-bmuf fr-easgd fr-ma fr-bmuf)
victims=(s0 t0 t1)
sigs=(KILL STOP)
echo "chaos: $runs runs, seed $seed"
printf '%-4s %-9s %-3s %-5s %-6s %-5s %-7s %s\n' run alg on sig at_s exit took_s outcome
pass=0
fail=0
landed_runs=0
for r in $(seq 1 "$runs"); do
  read -r pc ps pt0 pt1 < <(free_ports 4)
  alg=${algs[RANDOM % ${#algs[@]}]}
  victim=${victims[RANDOM % ${#victims[@]}]}
  sig=${sigs[RANDOM % ${#sigs[@]}]}
  at="$((RANDOM % 4)).$((RANDOM % 10))" # in this shell: a $(...) subshell reseeds RANDOM
  log="$tmp/run-$r.log"
  start=$(date +%s.%N)
  timeout -s KILL $deadline "$bin" launch --config-file="$tmp/spec.ini" \
    --deploy.nodes="[coord=127.0.0.1:$pc, s0=127.0.0.1:$ps, t0=127.0.0.1:$pt0, t1=127.0.0.1:$pt1]" \
    --deploy.embedding-shards="[s0]" --deploy.dense-shards="[s0]" \
    --deploy.heartbeat-ms=500 --deploy.connection-timeout-ms=2500 --cluster.timeout-ms=8000 \
    --openssl.certificate="$tmp/certs/{node}.pem" --openssl.key="$tmp/certs/{node}.key" \
    --openssl.cafile="$tmp/certs/ca.pem" --data.train="$tmp/train.tsv" --data.eval="$tmp/eval.tsv" \
    --sync.algorithm="$alg" --train.epochs=$epochs --output.progress=plain --output.progress-seconds=1 \
    > "$log" 2>&1 &
  lp=$!
  landed=no
  # Training has started, or the job has ended (then no fault can land).
  started_or_over() { in_log "$log" "\[train\]" || ! kill -0 "$lp" 2>/dev/null; }
  if wait_for 60 started_or_over && in_log "$log" "\[train\]"; then
    sleep "$at"
    pid=$(grep -o "node $victim: pid [0-9]*" "$log" | awk '{print $4}')
    if [ -n "$pid" ] && kill -0 "$lp" 2>/dev/null && kill -"$sig" "$pid" 2>/dev/null; then
      landed=yes
    fi
  fi
  wait "$lp"
  rc=$?
  [ $landed = yes ] && landed_runs=$((landed_runs + 1))
  took=$(/usr/bin/python3 -c "print(round($(date +%s.%N) - $start, 1))")
  # A stopped node must not outlive the run: its launcher sends SIGKILL,
  # which a stopped process still receives.
  wait_for 10 not_leftovers || true
  if leftovers; then
    outcome="FAIL: processes left behind"
    pkill -KILL -f "$tmp/spec.ini"
  elif [ $rc = 0 ] && [ $landed = no ]; then
    outcome="ok: finished before the fault"
  elif [ $rc = 0 ] && grep -q "trained $examples examples" "$log" && ! grep -q "lost after" "$log"; then
    # The signal landed after the victim's part was done (e.g. in the final
    # stop): every example trained, nobody lost.
    outcome="ok: every example trained; the fault landed after $victim's part was done"
  elif [ $rc = 0 ] && [ "$victim" != s0 ] && grep -q "trainer [01] on node $victim lost after" "$log"; then
    outcome="ok: $(grep -o "trainer [01] on node $victim lost after [0-9.]* s" "$log" | head -n 1), survivors finished"
  elif [ $rc = 1 ] && grep "error node coord" "$log" | grep -q "node $victim .*\(embedding shard\|dense shard\|trainer\)\|trainer [01] on node $victim"; then
    outcome="ok: exit 1: $(grep "error node coord" "$log" | grep -o "node $victim[^;]*" | head -n 1 | cut -c1-90)"
  else
    outcome="FAIL: $(grep -iE "error|lost" "$log" | tail -n 2 | tr '\n' ' ' | cut -c1-160)"
  fi
  case $outcome in ok*) pass=$((pass + 1)) ;; *) fail=$((fail + 1)); cp "$log" "/tmp/chaos-fail-$seed-$r.log" ;; esac
  printf '%-4s %-9s %-3s %-5s %-6s %-5s %-7s %s\n' "$r" "$alg" "$victim" "$sig" "$at" "$rc" "$took" "$outcome"
done
echo "$pass passed, $fail failed, faults landed in $landed_runs (seed $seed; failing logs kept as /tmp/chaos-fail-$seed-*.log)"
if [ $((2 * landed_runs)) -lt "$runs" ]; then
  echo "FAIL: the fault landed in only $landed_runs of $runs runs: the job ends before the faults"
  exit 1
fi
[ $fail = 0 ]
