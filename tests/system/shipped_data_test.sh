#!/bin/bash
# Data as it is shipped (issue 39 item 5), on the real Criteo rows: a gzip
# file, a zstd file, a folder of files, a glob pattern and standard input each
# train the same model as the plain file (the same metrics, sequential mode),
# and predict scores the held-out rows without their label column exactly as
# with it. Exit 77 (skipped) when the shared rows are absent.
# usage: shipped_data_test.sh SHADOWSYNC CRITEO_DIR
set -u
ss=$1
src=$2
[ -f "$src/train-8k.tsv" ] || { echo "skipped: $src is absent"; exit 77; }
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
train=$src/train-8k.tsv
held=$src/heldout-2k.tsv
gzip -c "$train" > "$tmp/train.gz"
kinds=gz
command -v zstd > /dev/null && zstd -q -c "$train" > "$tmp/train.zst" && kinds="gz zst" # the zstd command: optional
mkdir "$tmp/parts" && split -l 2700 -d "$train" "$tmp/parts/x" # x00 x01 x02: name order = line order
gzip "$tmp/parts/x01"                                           # a folder may mix plain and gzip
common=(--cluster.mode=sequential --model.rows-per-table=20000 --data.eval="$held" --output.progress=none)

run() { # NAME ENTRY...: trains, the metrics in $tmp/NAME.json
  local name=$1
  shift
  "$ss" train "${common[@]}" --data.train="$1" --output.metrics="$tmp/$name.json" "${@:2}" \
    > "$tmp/$name.log" 2>&1
}
same() { # NAME: the same examples, NE, AUC and logloss as the plain run
  local keys="[d['examples'], d['train_ne'], d['eval_ne'], d['eval_auc'], d['eval_logloss']]"
  if [ "$(json "$tmp/$1.json" "$keys")" = "$(json "$tmp/plain.json" "$keys")" ]; then
    ok "$1: $(json "$tmp/$1.json" "$keys") as plain"
  else
    bad "$1: $(json "$tmp/$1.json" "$keys") against plain $(json "$tmp/plain.json" "$keys")"
  fi
}

run plain "$train" --output.model="$tmp/model" || bad "plain run: $(tail -n 3 "$tmp/plain.log")"
for f in $kinds; do
  run "$f" "$tmp/train.$f" && same "$f" || bad "$f run: $(tail -n 3 "$tmp/$f.log")"
done
run folder "$tmp/parts" && same folder || bad "folder run: $(tail -n 3 "$tmp/folder.log")"
run glob "$tmp/parts/x*" && same glob || bad "glob run: $(tail -n 3 "$tmp/glob.log")"
run stdin - < "$tmp/train.gz" && same stdin || bad "stdin run: $(tail -n 3 "$tmp/stdin.log")"

# predict: the held-out rows without their label column score the same.
cut -f2- "$held" > "$tmp/nolabel.tsv"
"$ss" predict --model="$tmp/model" --data="$held" --out="$tmp/with.txt" > /dev/null 2>&1
"$ss" predict --model="$tmp/model" --data="$tmp/nolabel.tsv" --out="$tmp/without.txt" > /dev/null 2>&1
if [ "$(wc -l < "$tmp/with.txt")" = 2000 ] && cmp -s "$tmp/with.txt" "$tmp/without.txt"; then
  ok "predict: 2000 scores without the label column, identical to those with it"
else
  bad "predict: $(wc -l < "$tmp/with.txt") / $(wc -l < "$tmp/without.txt" 2>/dev/null) lines, differ"
fi
expect 1 "expected 40 fields, got 39" "predict --data.labels=yes refuses the 39-column file" -- \
  "$ss" predict --model="$tmp/model" --data="$tmp/nolabel.tsv" --out="$tmp/x.txt" --data.labels=yes

# Errors: the file, the line reached, what was expected; nothing deleted.
head -c 200000 "$tmp/train.gz" > "$tmp/cut.gz"
expect 1 "cut.gz:[0-9]+: the gzip data of '.*cut.gz' is truncated" "a truncated .gz" -- \
  "$ss" train "${common[@]}" --data.train="$tmp/cut.gz"
[ "$(stat -c %s "$tmp/cut.gz")" = 200000 ] && ok "the truncated file is left as it was" || bad "cut.gz changed"
expect 2 "matches no file" "a pattern matching nothing" -- \
  "$ss" train "${common[@]}" --data.train="$tmp/nothing-*.gz"
mkdir "$tmp/empty"
expect 2 "the folder holds no data file" "an empty folder" -- \
  "$ss" train "${common[@]}" --data.train="$tmp/empty"
expect 2 "train.epochs.*read once" "standard input with two epochs" -- \
  "$ss" train "${common[@]}" --data.train=- --train.epochs=2
summary
