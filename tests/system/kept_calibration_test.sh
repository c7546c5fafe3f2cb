#!/usr/bin/env bash
# sim.calibration = this-machine (config/default.ini; config/kept_calibration.hpp):
# the first virtual-clock run measures this machine's calibration and keeps
# it under SHADOWSYNC_STATE_DIR; a later run reads it without measuring and
# trains to the same metrics; a damaged kept file stops the run naming it and
# is left as it was; a sequential run neither measures nor keeps anything;
# a model saved by such a run evaluates where no calibration is kept.
# usage: kept_calibration_test.sh PATH/TO/shadowsync SOURCE_DIR
set -u
bin=${1:?shadowsync binary}
src=${2:?source dir}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$src/tests/system/lib.sh"

"$bin" datagen --rows=4000 --seed=3 --out="$tmp/train.tsv" > /dev/null || { echo "datagen failed"; exit 1; }
export SHADOWSYNC_STATE_DIR="$tmp/state"
run=("$bin" train --config-file="$src/config/default.ini" --data.train="$tmp/train.tsv"
     --output.progress=none)

"${run[@]}" --output.metrics="$tmp/m1.json" > "$tmp/run1.log" 2>&1
rc=$?
kept=("$tmp"/state/calibrations/*.json)
if [ $rc -eq 0 ] && [ ${#kept[@]} -eq 1 ] && [ -f "${kept[0]}" ] && in_log "$tmp/run1.log" "measuring it once"; then
  ok "first run measured this machine's calibration and kept it: ${kept[0]#"$tmp/"}"
else
  bad "first run: exit $rc, kept '${kept[*]}': $(tail -n 3 "$tmp/run1.log")"
fi
file=${kept[0]}
cp "$file" "$tmp/kept.copy" 2> /dev/null
# The handlers' spread around the model's price (sim.jitter), measured: in
# (0, 0.9] (measured times never sit exactly on the price).
jitter=$(json "$file" "d['sim']['jitter']" 2> /dev/null)
if python3 -c "import sys; j = float(sys.argv[1]); sys.exit(0 if 0 < j <= 0.9 else 1)" "$jitter" 2> /dev/null; then
  ok "the kept calibration carries a measured jitter ($jitter)"
else
  bad "the kept calibration's jitter: '$jitter', expected a number in (0, 0.9]"
fi
if grep -q "constants: $file (" "$tmp/run1.log" \
   && [ "$(json "$tmp/m1.json" "d['sim']['constants'].split(' (')[0]")" = "$file" ]; then
  ok "the summary and metrics name the kept file as the constants' source"
else
  bad "constants' source: $(grep -m1 constants "$tmp/run1.log")"
fi

"${run[@]}" --output.metrics="$tmp/m2.json" > "$tmp/run2.log" 2>&1
rc=$?
if [ $rc -eq 0 ] && ! in_log "$tmp/run2.log" "measuring" && cmp -s "$file" "$tmp/kept.copy"; then
  ok "second run read the kept file without measuring; the file is unchanged"
else
  bad "second run: exit $rc: $(grep -m1 measuring "$tmp/run2.log")"
fi
if cmp -s "$tmp/m1.json" "$tmp/m2.json"; then
  ok "both runs give byte-identical metrics"
else
  bad "metrics differ: $(diff "$tmp/m1.json" "$tmp/m2.json" | head -n 4)"
fi

head -c 200 "$tmp/kept.copy" > "$file"
cp "$file" "$tmp/damaged.copy"
expect 1 "calibration file '$file'.*remove the file to measure it anew" \
  "a damaged kept file stops the run, naming it" -- "${run[@]}"
if cmp -s "$file" "$tmp/damaged.copy"; then
  ok "the damaged file is left as it was"
else
  bad "the damaged kept file was changed"
fi

SHADOWSYNC_STATE_DIR="$tmp/state2" expect 0 "" "a sequential run with this-machine trains" -- \
  "${run[@]}" --cluster.mode=sequential
if [ ! -e "$tmp/state2" ]; then
  ok "a sequential run neither measures nor keeps a calibration"
else
  bad "a sequential run made $(find "$tmp/state2" | tail -n 1)"
fi
cp "$tmp/kept.copy" "$file"
"${run[@]}" --output.model="$tmp/model" > "$tmp/run3.log" 2>&1 || bad "train with output.model failed"
SHADOWSYNC_STATE_DIR="$tmp/state3" expect 0 "NE [0-9]" \
  "the saved model evaluates on a machine that keeps no calibration" -- \
  "$bin" eval --model="$tmp/model" --data.eval="$tmp/train.tsv"
summary
