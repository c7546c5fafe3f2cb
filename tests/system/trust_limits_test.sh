#!/usr/bin/env bash
# Trust (issue 40): limits cases. Each case reproduces a row of the issue's
# table and checks the fixed behaviour. usage: trust_limits_test.sh PATH/TO/shadowsync SOURCE_DIR
#   row 7   data.columns and column indices have a range (no bad_alloc, no 6 GB schema)
#   row 8   train.max-examples is exact for any trainer count, in every mode
#   row 9   the memory check counts batch buffers; node and launch check too
#   row 10  timeouts and pauses have ranges that fit in nanoseconds
#   row 12  deploy.insecure accepts only numeric loopback hosts
# Every refusal is exit 2 before any training, so the cases are fast. Each
# command runs under a 4 GiB address-space cap (ulimit -v): a regression that
# allocates without bound fails here with bad_alloc instead of taking the
# machine's memory.
set -u
bin=${1:?shadowsync binary}
src=${2:?source dir}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$src/tests/system/lib.sh"

# Every command runs under a 4 GiB address-space limit and a 120 s timeout:
# a refusal that fails allocates or hangs instead of taking the machine.
expect_wrap=(bash -c 'ulimit -v 4194304; exec timeout 120 "$@"' expect)

"$bin" datagen --rows=2000 --seed=1 --out="$tmp/train.tsv" > /dev/null || { echo "datagen failed"; exit 1; }
"$bin" datagen --rows=200 --seed=2 --out="$tmp/eval.tsv" > /dev/null || exit 1
printf 'a,b,c\n1,2,x\n0,3,y\n' > "$tmp/small.csv"
data=(--data.train="$tmp/train.tsv" --data.eval="$tmp/eval.tsv" --output.progress=none
      --model.rows-per-table=1000)
csv=(--data.train="$tmp/small.csv" --data.format=delimited --data.delimiter=, --output.progress=none
     --model.rows-per-table=1000)

# Row 7: columns and indices.
expect 2 "data.columns.*1000000000000.*\[0, 65536\]" "row 7: data.columns=1e12 refused with its range" -- \
  "$bin" train "${csv[@]}" --data.dense=1 --data.categorical=2 --data.columns=1000000000000
expect 2 "data.categorical.*400000000.*0\.\.65535" "row 7: a categorical index of 4e8 refused with the range" -- \
  "$bin" train "${csv[@]}" --data.dense=1 --data.categorical=400000000
expect 2 "data.dense.*99999999999.*0\.\.65535" "row 7: a 11-digit dense index is an index, refused with the range" -- \
  "$bin" train "${csv[@]}" --data.dense=99999999999 --data.categorical=2
expect 2 "data.label.*70000.*0\.\.65535" "row 7: a label index of 70000 refused" -- \
  "$bin" train "${csv[@]}" --data.label=70000 --data.dense=1 --data.categorical=2
expect 0 "" "row 7: a small delimited run still trains" -- \
  "$bin" train "${csv[@]}" --data.dense=1 --data.categorical=2 --data.columns=3 --cluster.mode=sequential

# Row 8: max-examples exact for any trainer count and mode.
examples_of() { # OUT [options]: trains and prints the metrics' example count
  local out=$1
  shift
  "$bin" train "${data[@]}" --output.metrics="$out" "$@" > "$out.log" 2>&1 || { echo "rc $?"; return; }
  json "$out" "d['examples']"
}
for spec in "3 4 s-easgd" "5 4 s-ma" "1 3 none" "7 8 fr-easgd" "3 4 s-bmuf"; do
  read -r max trainers alg <<< "$spec"
  got=$(examples_of "$tmp/m8-$max-$trainers.json" --train.max-examples=$max --cluster.trainers=$trainers \
        --sync.algorithm=$alg)
  [ "$got" = "$max" ] && ok "row 8: max-examples=$max with $trainers trainers ($alg) trains $max" \
    || bad "row 8: max-examples=$max with $trainers trainers ($alg) trained $got (log: $(tail -n 2 "$tmp/m8-$max-$trainers.json.log"))"
done
got=$(examples_of "$tmp/m8-wall.json" --train.max-examples=3 --cluster.trainers=4 --sim.clock=wall)
[ "$got" = 3 ] && ok "row 8: max-examples=3, 4 trainers, wall clock trains 3" || bad "row 8: wall clock trained $got"
got=$(examples_of "$tmp/m8-seq.json" --train.max-examples=3 --cluster.mode=sequential)
[ "$got" = 3 ] && ok "row 8: max-examples=3 sequential trains 3" || bad "row 8: sequential trained $got"

# Row 9: the memory check counts batch buffers, in train, node and launch.
expect 2 "option 'train.batch-size' = 1048576: the run would need about 1[67]\.[0-9] GiB.*64 trainers.*cluster.memory-limit-gib, 16.0 GiB" \
  "row 9: the issue's 64 trainers x batch 1048576 counted at ~17 GiB, refused under a 16 GiB limit" -- \
  "$bin" train "${data[@]}" --cluster.trainers=64 --train.batch-size=1048576 --cluster.memory-limit-gib=16
# (cluster.memory-limit-gib=16: the same answer on any machine.)
huge=(--cluster.trainers=1024 --cluster.workers=256 --train.batch-size=1048576 --cluster.memory-limit-gib=16)
expect 2 "option 'train.batch-size' = 1048576.*need about [0-9.]+ (GiB|TiB).*batch buffers.*1024 trainers x 256 workers" \
  "row 9: train refuses batch buffers beyond memory, naming the key and the estimate" -- \
  "$bin" train "${data[@]}" "${huge[@]}"
expect 2 "option 'train.eval-batch-size' = 4194304.*need about" \
  "row 9: train refuses an evaluation batch beyond memory" -- \
  "$bin" train --output.progress=none --data.synthetic-eval-rows=4194304 --train.eval-batch-size=4194304 \
  --model.dim=4096 --model.top=4096-4096-4096 --data.synthetic-dir="$tmp/synthetic"
read -r pc pt0 < <(free_ports 2)
spec=(--deploy.nodes="[coord=127.0.0.1:$pc, t0=127.0.0.1:$pt0]" --deploy.embedding-shards="[coord]" --deploy.dense-shards="[coord]" --deploy.insecure=true
      --deploy.startup-timeout-ms=2000 "${data[@]}")
expect 2 "option 'train.batch-size' = 1048576.*need about" "row 9: node t0 refuses its roles' memory" -- \
  "$bin" node --node=t0 "${spec[@]}" --deploy.trainers="$(printf 't0,%.0s' {1..1023})t0" \
  --cluster.workers=256 --train.batch-size=1048576 --cluster.memory-limit-gib=16
expect 2 "option 'train.batch-size' = 1048576.*need about" "row 9: launch refuses the nodes' memory" -- \
  "$bin" launch "${spec[@]}" --deploy.trainers="$(printf 't0,%.0s' {1..1023})t0" \
  --cluster.workers=256 --train.batch-size=1048576 --cluster.memory-limit-gib=16

# Row 10: timeouts and pauses.
expect 2 "cluster.timeout-ms.*9223372036854775807.*\[1, 86400000\]" "row 10: cluster.timeout-ms=2^63-1 refused with its range" -- \
  "$bin" train "${data[@]}" --cluster.timeout-ms=9223372036854775807
expect 2 "sync.min-pause-ms.*9223372036854775.*\[0, 3600000\]" "row 10: a huge sync.min-pause-ms refused with its range" -- \
  "$bin" train "${data[@]}" --sync.min-pause-ms=9223372036854775
expect 2 "faults.mtbf.*faults.time-scale.*1e\+?0?9" "row 10: faults.mtbf x time-scale beyond 1e9 s refused" -- \
  "$bin" train "${data[@]}" --faults.mtbf=1e12 --faults.time-scale=1e6
expect 2 "checkpoint.every-seconds.*1e\+?0?12.*\[0, 1e\+?0?9\]" "row 10: checkpoint.every-seconds beyond 1e9 s refused" -- \
  "$bin" train "${data[@]}" --checkpoint.every-seconds=1e12

# Row 12: deploy.insecure only on numeric loopback hosts.
expect 2 "only allowed on loopback.*127.foo.example" "row 12: '127.foo.example' is not loopback" -- \
  "$bin" launch "${data[@]}" --deploy.nodes="[coord=127.0.0.1:$pc, t0=127.foo.example:$pt0]" \
  --deploy.trainers="[t0]" --deploy.embedding-shards="[coord]" --deploy.dense-shards="[coord]" \
  --deploy.insecure=true --deploy.startup-timeout-ms=1000
expect 2 "only allowed on loopback.*localhost" "row 12: 'localhost' (a name, resolved elsewhere) is not loopback" -- \
  "$bin" launch "${data[@]}" --deploy.nodes="[coord=127.0.0.1:$pc, t0=localhost:$pt0]" \
  --deploy.trainers="[t0]" --deploy.embedding-shards="[coord]" --deploy.dense-shards="[coord]" \
  --deploy.insecure=true --deploy.startup-timeout-ms=1000

summary
