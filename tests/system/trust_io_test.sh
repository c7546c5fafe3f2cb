#!/usr/bin/env bash
# Trust (issue 40): I/O cases. Outputs never destroy inputs and are checked
# before the first example (rows 6, 18), data bytes never reach the log raw
# and a line has a bounded length (13), a signal stops training with a
# checkpoint that resume finishes exactly (15), a model trained on a
# delimited file is usable and predict refuses another layout (16, 17), a
# resume onto other files says so (19).
# usage: trust_io_test.sh PATH/TO/shadowsync SOURCE_DIR
set -u
bin=${1:?shadowsync binary}
src=${2:?source dir}
tmp=$(mktemp -d)
trap 'pkill -KILL -f "$tmp/" 2>/dev/null; rm -rf "$tmp"' EXIT
source "$src/tests/system/lib.sh"


"$bin" datagen --rows=3000 --seed=1 --out="$tmp/train.tsv" > /dev/null || { echo "datagen failed"; exit 1; }
"$bin" datagen --rows=1000 --seed=2 --out="$tmp/eval.tsv" > /dev/null || exit 1
small=(--data.eval="$tmp/eval.tsv" --model.rows-per-table=1000 --cluster.mode=sequential
       --output.progress=none)
"$bin" train --data.train="$tmp/train.tsv" "${small[@]}" --output.model="$tmp/model" > "$tmp/model.log" 2>&1 \
  || { bad "training the small model: $(tail -n 3 "$tmp/model.log")"; summary; exit 1; }

# Row 6: predict --out naming its own --data file.
cp "$tmp/eval.tsv" "$tmp/in.tsv"
sum=$(md5sum < "$tmp/in.tsv")
expect 2 "use.out.*in.tsv.*one of this run's inputs" "row 6: predict --out = --data refused" -- \
  "$bin" predict --model="$tmp/model" --data="$tmp/in.tsv" --out="$tmp/in.tsv"
[ "$(md5sum < "$tmp/in.tsv")" = "$sum" ] && ok "row 6: the input is intact" \
  || bad "row 6: the input changed ($(wc -c < "$tmp/in.tsv") bytes)"
ln "$tmp/in.tsv" "$tmp/hardlink.tsv"
expect 2 "one of this run's inputs" "row 6: a hard link to the input refused" -- \
  "$bin" predict --model="$tmp/model" --data="$tmp/in.tsv" --out="$tmp/hardlink.tsv"
expect 2 "output.metrics.*one of this run's inputs" "row 6: eval --output.metrics = its data refused" -- \
  "$bin" eval --model="$tmp/model" --data.eval="$tmp/in.tsv" --output.metrics="$tmp/in.tsv"
expect 2 "output.config.*one of this run's inputs" "row 6: train --output.config = its data refused" -- \
  "$bin" train --data.train="$tmp/train.tsv" "${small[@]}" --output.config="$tmp/train.tsv"
[ "$(md5sum < "$tmp/in.tsv")" = "$sum" ] && ok "row 6: the input is still intact" || bad "row 6: input changed"
# An output is replaced only when complete: a predict that fails half-way
# leaves the old predictions as they were.
echo "old predictions" > "$tmp/p.txt"
{ head -n 500 "$tmp/eval.tsv"; head -n 1 "$tmp/eval.tsv" | cut -f 2-; } > "$tmp/cut.tsv"
"$bin" predict --model="$tmp/model" --data="$tmp/cut.tsv" --out="$tmp/p.txt" > /dev/null 2>&1
[ "$(cat "$tmp/p.txt")" = "old predictions" ] && ok "row 6: a failed predict leaves the old --out" \
  || bad "row 6: a failed predict changed --out ($(wc -l < "$tmp/p.txt") lines)"
ls "$tmp"/p.txt.tmp-* > /dev/null 2>&1 && bad "row 6: a temporary file was left" \
  || ok "row 6: no temporary file left"
expect 0 "" "datagen onto an existing file" -- "$bin" datagen --rows=10 --seed=3 --out="$tmp/p.txt"
[ "$(wc -l < "$tmp/p.txt")" = 10 ] && ok "datagen replaced the file" || bad "datagen output"

# Row 18: unwritable outputs are found before the first example.
for kv in "output.metrics=/nonexistent/dir/m.json" "output.config=/nonexistent/dir/c.ini" \
          "output.dir=/proc/version/x" "output.model=/proc/version/m" "checkpoint.dir=/proc/version/c"; do
  key=${kv%%=*}
  out=$("$bin" train --data.train="$tmp/train.tsv" "${small[@]}" --"$kv" 2>&1)
  rc=$?
  if [ $rc = 2 ] && echo "$out" | grep -q "option '$key'" && ! echo "$out" | grep -q "model small"; then
    ok "row 18: $key refused before training: $(echo "$out" | tail -n 1 | cut -c1-120)"
  else
    bad "row 18: $key: exit $rc: $(echo "$out" | tail -n 2)"
  fi
done
expect 2 "output.metrics.*does not exist" "row 18: eval's output.metrics checked before evaluating" -- \
  "$bin" eval --model="$tmp/model" --data.eval="$tmp/eval.tsv" --output.metrics=/nonexistent/m.json

# Row 13: terminal escapes in a field are escaped in the log; a line longer
# than 1 MiB is an error naming the file and line.
{ head -n 3 "$tmp/eval.tsv"; printf '1\t\033]0;owned\007\033[31mred\n'; head -n 3 "$tmp/eval.tsv"; } > "$tmp/esc.tsv"
"$bin" train "${small[@]}" --data.train="$tmp/esc.tsv" > "$tmp/esc.log" 2>&1
if grep -q $'\033' "$tmp/esc.log"; then
  bad "row 13: a raw ESC byte reached the log"
elif grep -q 'esc.tsv:4: .*\\x1b\]0;owned\\x07\\x1b\[31mred' "$tmp/esc.log"; then
  ok "row 13: escapes shown as \\x1b: $(grep -m1 'esc.tsv:4' "$tmp/esc.log" | cut -c1-160)"
else
  bad "row 13: no escaped message for line 4: $(grep -m1 malformed "$tmp/esc.log")"
fi
{ head -n 2 "$tmp/eval.tsv"; head -c 2000000 /dev/zero | tr '\0' 'x'; echo; } > "$tmp/long.tsv"
expect 1 "long.tsv:3: line longer than 1048576 bytes" "row 13: a 2 MB line is an error naming file and line" -- \
  "$bin" train "${small[@]}" --data.train="$tmp/long.tsv"

# Row 9: a batch larger than the file takes what the lines need, not what
# the batch size says (64 trainers x batch 1048576 on 3 000 rows took 17 GB).
/usr/bin/time -f "%M" -o "$tmp/rss.txt" "$bin" train --data.train="$tmp/train.tsv" --data.eval= \
  --cluster.trainers=64 --train.batch-size=1048576 --model.rows-per-table=1000 --output.progress=none \
  > "$tmp/rss.log" 2>&1
rc=$?
kb=$(tail -n 1 "$tmp/rss.txt")
[ $rc = 0 ] && [ "$kb" -lt 2000000 ] && ok "row 9: 64 trainers x batch 1048576 on 3000 rows: peak RSS $((kb / 1024)) MiB" \
  || bad "row 9: exit $rc, peak RSS ${kb} KiB: $(tail -n 2 "$tmp/rss.log")"

# Row 16: a model trained on a delimited file is usable by predict and eval.
/usr/bin/python3 - "$tmp/eval.tsv" "$tmp/d.csv" <<'PY'
import sys
with open(sys.argv[1]) as f, open(sys.argv[2], "w") as o:
    o.write("click,a,b,c1,c2\n")
    for line in f:
        x = line.rstrip("\n").split("\t")
        o.write(",".join([x[0], x[1], x[2], x[14], x[15]]) + "\n")
PY
delim=(--data.format=delimited --data.delimiter=, --data.header=true --data.label=click
       --data.dense=a,b --data.categorical=c1,c2)
expect 0 "" "row 16: train on a delimited file" -- "$bin" train "${delim[@]}" --data.train="$tmp/d.csv" \
  --data.eval= --model.rows-per-table=1000 --cluster.mode=sequential --output.progress=none \
  --output.model="$tmp/dmodel"
expect 0 "1000 predictions written" "row 16: predict with the delimited model" -- \
  "$bin" predict --model="$tmp/dmodel" --data="$tmp/d.csv" --out="$tmp/dp.txt" --output.progress=none
expect 0 "eval of .* on 1000 examples" "row 16: eval with the delimited model" -- \
  "$bin" eval --model="$tmp/dmodel" --data.eval="$tmp/d.csv" --output.progress=none

# Row 17: predict never scores lines from shifted columns. Label-less rows
# (Criteo's test set) are read as the layout without its label
# (data.labels=auto) and score as the labelled rows do; with
# data.labels=yes they are refused, naming file and line.
cut -f 2- "$tmp/eval.tsv" > "$tmp/nolabel.tsv"
expect 1 "nolabel.tsv:1: expected 40 fields, got 39 .*label column" \
  "row 17: predict --data.labels=yes on label-less rows refused, naming file and line" -- \
  "$bin" predict --model="$tmp/model" --data="$tmp/nolabel.tsv" --data.labels=yes --out="$tmp/nl.txt" \
  --output.progress=none
[ -e "$tmp/nl.txt" ] && bad "row 17: predictions written anyway" || ok "row 17: no predictions written"
expect 0 "" "row 17: predict on label-less rows (data.labels=auto)" -- \
  "$bin" predict --model="$tmp/model" --data="$tmp/nolabel.tsv" --out="$tmp/nl.txt" --output.progress=none
"$bin" predict --model="$tmp/model" --data="$tmp/eval.tsv" --out="$tmp/wl.txt" --output.progress=none \
  > /dev/null 2>&1
cmp -s "$tmp/nl.txt" "$tmp/wl.txt" && ok "row 17: label-less rows score as the labelled ones" \
  || bad "row 17: label-less rows score differently from the labelled ones"

# Row 19: a resume onto other training files is refused unless asked for.
"$bin" datagen --rows=2000 --seed=5 --out="$tmp/day2.tsv" > /dev/null
expect 2 "checkpoint.resume.*train.tsv.*day2.tsv.*checkpoint.new-data" "row 19: resume onto other files refused" -- \
  "$bin" train "${small[@]}" --data.train="$tmp/day2.tsv" --resume="$tmp/model"
expect 0 "new training files" "row 19: with checkpoint.new-data the new files are read from their start" -- \
  "$bin" train "${small[@]}" --data.train="$tmp/day2.tsv" --resume="$tmp/model" \
  --checkpoint.new-data=true --output.metrics="$tmp/day2.json" --output.log-level=info
[ "$(json "$tmp/day2.json" "d['examples']")" = 5000 ] && ok "row 19: 3000 + 2000 examples" \
  || bad "row 19: examples $(json "$tmp/day2.json" "d['examples']"), expected 5000"

# Row 15: SIGTERM stops at a batch boundary with a checkpoint; resume
# finishes exactly the interrupted run.
"$bin" datagen --rows=400000 --seed=7 --out="$tmp/big.tsv" > /dev/null
big=(--data.train="$tmp/big.tsv" --data.eval="$tmp/eval.tsv" --model.rows-per-table=20000
     --cluster.mode=sequential --train.epochs=2)
"$bin" train "${big[@]}" --output.progress=none --output.model="$tmp/full" \
  --output.metrics="$tmp/full.json" > "$tmp/full.log" 2>&1 || bad "row 15: the uninterrupted run failed"
"$bin" train "${big[@]}" --output.progress=plain --output.progress-seconds=0.2 \
  --checkpoint.dir="$tmp/ck" --output.metrics="$tmp/stopped.json" > "$tmp/stop.log" 2>&1 &
pid=$!
if wait_for 60 in_log "$tmp/stop.log" "\[train\] .* ex |"; then
  # Twice at once, as GNU timeout delivers it (the child, then its group):
  # one request (engine/stop_signal.hpp).
  kill -TERM $pid; kill -TERM $pid
  wait $pid
  rc=$?
  if [ $rc = 143 ] && grep -q "stopped by SIGTERM after" "$tmp/stop.log" && [ -s "$tmp/ck/LATEST" ]; then
    ok "row 15: SIGTERM: exit 143, checkpoint $(cat "$tmp/ck/LATEST"), $(grep -m1 'stopped by' "$tmp/stop.log" | sed 's/.*stopped/stopped/' | cut -c1-100)"
  else
    bad "row 15: SIGTERM: exit $rc: $(tail -n 3 "$tmp/stop.log")"
  fi
  [ "$(json "$tmp/stopped.json" "d['stopped_by']")" = SIGTERM ] && ok "row 15: metrics say stopped_by SIGTERM" \
    || bad "row 15: metrics JSON: $(json "$tmp/stopped.json" "d.get('stopped_by')")"
  "$bin" train "${big[@]}" --output.progress=none --resume="$tmp/ck" --output.model="$tmp/resumed" \
    --output.metrics="$tmp/resumed.json" > "$tmp/resumed.log" 2>&1 || bad "row 15: resume failed"
  a=$(json "$tmp/full.json" "d['examples'], d['train_ne'], d['eval_ne']")
  b=$(json "$tmp/resumed.json" "d['examples'], d['train_ne'], d['eval_ne']")
  [ "$a" = "$b" ] && ok "row 15: the resumed run equals the uninterrupted one ($a)" \
    || bad "row 15: resumed $b, uninterrupted $a"
  cmp -s "$tmp/full/$(cat "$tmp/full/LATEST")/replica-0.bin" "$tmp/resumed/$(cat "$tmp/resumed/LATEST")/replica-0.bin" \
    && ok "row 15: the resumed model's dense replica is bit for bit the uninterrupted one's" \
    || bad "row 15: the resumed model's replica differs"
else
  kill -KILL $pid 2>/dev/null
  bad "row 15: no progress line within 60 s: $(tail -n 3 "$tmp/stop.log")"
fi
# The simulated cluster: a cut of the stop's point (4 passes, so that the
# signal lands well before the end: a signal after the last progress poll
# finds training done and the run ends normally).
"$bin" train --data.train="$tmp/big.tsv" --data.eval= --model.rows-per-table=20000 --train.epochs=4 \
  --sim.clock=wall --output.progress=plain --output.progress-seconds=0.2 --checkpoint.dir="$tmp/cck" \
  > "$tmp/cstop.log" 2>&1 &
pid=$!
if wait_for 60 in_log "$tmp/cstop.log" "\[train\] .* ex |"; then
  kill -INT $pid
  wait $pid
  rc=$?
  [ $rc = 130 ] && grep -q "stopped by SIGINT" "$tmp/cstop.log" && [ -s "$tmp/cck/LATEST" ] \
    && ok "row 15: SIGINT to a simulated cluster: exit 130, cut $(cat "$tmp/cck/LATEST")" \
    || bad "row 15: cluster SIGINT: exit $rc: $(tail -n 3 "$tmp/cstop.log")"
else
  kill -KILL $pid 2>/dev/null
  bad "row 15: cluster: no progress line within 60 s"
fi

summary
