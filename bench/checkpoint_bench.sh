#!/usr/bin/env bash
# Checkpoint benchmark (issue 10): medians of REPS runs, ratios from one run
# of this script on one machine.
#   disk      dd of 512 MiB with conv=fdatasync: the disk's own write MB/s
#   write     checkpoint write MB/s (file writes + fsyncs + rename), from the
#             engine's own log lines, against the disk's
#   load      eval's model load MB/s (read + CRC32C + placing rows)
#   size      bytes of one checkpoint of the arch
#   predict   predict examples/s against sequential train's examples/s
#   copied    rows the background writer copied before training changed them
# The throughput cost of checkpointing every 10 s and the peak RSS are
# measured with bench/ab_time.py (see docs/checkpoints.md for the commands).
# usage: bench/checkpoint_bench.sh PATH/TO/shadowsync [WORKDIR] [REPS]
set -euo pipefail
bin=${1:?shadowsync binary}
work=${2:-$(mktemp -d)}
reps=${3:-3}
mkdir -p "$work"
med() { /usr/bin/python3 -c "import statistics,sys; print(round(statistics.median(float(x) for x in sys.argv[1:]), 1))" "$@"; }

"$bin" datagen --rows=200000 --seed=31 --out="$work/train.tsv" > /dev/null
"$bin" datagen --rows=50000 --seed=32 --out="$work/eval.tsv" > /dev/null

# The disk, written the way checkpoints are: a new 177 MB file (one `small`
# checkpoint) after another, each fdatasync'ed, the oldest deleted beyond two.
# On this VM a lone write is much faster than a sequence (writeback
# throttling), so a lone 512 MiB dd is printed too but not compared against.
dd_mbs() { /usr/bin/python3 -c "import re,sys; t=sys.stdin.read(); m=re.search(r'(\d+) bytes.*?, ([\d.]+) s', t); print(int(m.group(1))/float(m.group(2))/1e6)"; }
lone=$(dd if=/dev/zero of="$work/dd.bin" bs=1M count=512 conv=fdatasync 2>&1 | dd_mbs)
rm -f "$work/dd.bin"
disk=()
for r in $(seq $((4 * reps))); do
  disk+=("$(dd if=/dev/zero of="$work/dd-$r.bin" bs=1M count=169 conv=fdatasync 2>&1 | dd_mbs)")
  rm -f "$work/dd-$((r - 2)).bin"
done
rm -f "$work"/dd-*.bin
disk_med=$(med "${disk[@]}")
echo "disk: dd of successive 177 MB files (conv=fdatasync): median $disk_med MB/s over ${#disk[@]} files;" \
     "one lone 512 MiB dd: $(/usr/bin/python3 -c "print(round($lone))") MB/s"

for arch in small dlrm-kaggle; do
  writes=() loads=() trains=() predicts=() copied=()
  for r in $(seq "$reps"); do
    rm -rf "$work/ck" "$work/model"
    "$bin" train --data.train="$work/train.tsv" --cluster.mode=sequential --model.arch=$arch \
      --output.progress=none --checkpoint.dir="$work/ck" --checkpoint.every-examples=50000 \
      --checkpoint.keep=2 > "$work/ck.log" 2>&1
    # periodic checkpoints only (the end one rewrites the last in place)
    mapfile -t w < <(grep -o 'MB in [0-9.]* s ([0-9]* MB/s)' "$work/ck.log" | head -n 4 | grep -o '([0-9]*' | tr -d '(')
    writes+=("${w[@]}")
    mapfile -t cp < <(grep -o '[0-9]* rows copied on write' "$work/ck.log" | head -n 4 | grep -o '^[0-9]*')
    copied+=("${cp[@]}")
    size=$(du -sb "$work/ck/$(cat "$work/ck/LATEST")" | cut -f1)
    "$bin" train --data.train="$work/train.tsv" --cluster.mode=sequential --model.arch=$arch \
      --output.progress=none --output.model="$work/model" --output.metrics="$work/train.json" > /dev/null 2>&1
    trains+=("$(/usr/bin/python3 -c "import json; print(json.load(open('$work/train.json'))['examples_per_second'])")")
    "$bin" eval --model="$work/model" --data.eval="$work/eval.tsv" --output.progress=none > "$work/eval.log" 2>&1
    loads+=("$(grep -o 'loaded [0-9.]* MB in [0-9.]* s' "$work/eval.log" | awk '{print $2 / $5}')")
    "$bin" predict --model="$work/model" --data="$work/train.tsv" --out="$work/p.txt" \
      --output.progress=none > "$work/predict.log" 2>&1
    predicts+=("$(grep -o '([0-9]* examples/s)' "$work/predict.log" | grep -o '[0-9]*')")
  done
  wm=$(med "${writes[@]}")
  echo "$arch: checkpoint $(/usr/bin/python3 -c "print(round($size / 1e6, 1))") MB;" \
       "write median $wm MB/s (${#writes[@]} writes) = $(/usr/bin/python3 -c "print(round(100 * $wm / $disk_med))") % of the disk;" \
       "load median $(med "${loads[@]}") MB/s; rows copied on write median $(med "${copied[@]}");" \
       "predict median $(med "${predicts[@]}") ex/s vs train $(med "${trains[@]}") ex/s" \
       "= $(/usr/bin/python3 -c "print(round($(med "${predicts[@]}") / $(med "${trains[@]}"), 2))")x"
done
