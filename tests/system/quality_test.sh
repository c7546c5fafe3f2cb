#!/usr/bin/env bash
# Quality at scale (issue 36, item 2): on the virtual clock every run is
# deterministic, so a dense-sync method's quality can be pinned by a test
# that fails when it regresses. Generated rows (one set, one held-out set of
# the same teacher), the sequential engine as the reference, then every sync
# method at 4 and 16 trainers (4 embedding shards, defaults otherwise); each
# eval NE must be within its bound of the sequential one:
#   NE_method / NE_sequential - 1 <= bound
# At 16 trainers every shadow method must be within 0.5 % (issue 36's goal);
# S-BMUF must also be no worse than FR-BMUF at 4 and 16 trainers. The bounds hold
# for today's defaults with a margin and are tight enough that earlier
# defaults fail them, each replayed by an environment variable:
#   QUALITY_BMUF_MOMENTUM=paper  BMUF's block momentum 1 - 1/N (before ba159de)
#   QUALITY_EASGD_ALPHA=old      EASGD's elasticity 0.5 / N (before d5438ea)
#   QUALITY_BATCH=128            a batch of 128 per worker at any N (before the
#                                batch size derived from N: train.batch-size=0)
#   QUALITY_DERIVED=old          the batch derived as 512 / N, at least 32: 32 at
#                                16 trainers (now 4096 / N^2, at least 16: 16)
#   QUALITY_BMUF_GAP=1           an S-BMUF round every batch (sync.min-gap-batches
#                                1; now derived: every third batch)
#
# usage: quality_test.sh BIN
set -u
bin=${1:?shadowsync binary}
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2

rows=100000
"$bin" datagen --out=train.tsv --rows="$rows" --seed=1 > /dev/null || { echo "datagen failed"; exit 1; }
"$bin" datagen --out=eval.tsv --rows=10000 --seed=2 > /dev/null || { echo "datagen failed"; exit 1; }

ne_of() { # NAME OPTIONS...: the run's eval NE, or nothing when it failed
  local name=$1
  shift
  if ! "$bin" train --data.train=train.tsv --data.eval=eval.tsv --output.metrics="$name.json" \
       "$@" > "$name.log" 2>&1; then
    echo "run $name failed: $(tail -n 2 "$name.log")" >&2
    return
  fi
  json "$name.json" "d['eval_ne']"
}

seq_ne=$(ne_of sequential --cluster.mode=sequential)
[ -n "$seq_ne" ] || { bad "the sequential run"; summary; exit 1; }
echo "sequential eval NE $seq_ne ($rows rows)"

declare -A ne_at # method-trainers -> eval NE
# method trainers bound
while read -r method n bound; do
  extra=()
  if [ "${QUALITY_BMUF_MOMENTUM:-}" = paper ] && [[ "$method" == *bmuf ]]; then
    extra=(--sync.momentum="$(/usr/bin/python3 -c "print(1 - 1 / $n)")")
  fi
  if [ "${QUALITY_EASGD_ALPHA:-}" = old ] && [[ "$method" == *easgd ]]; then
    extra=(--sync.alpha="$(/usr/bin/python3 -c "print(0.5 / $n)")")
  fi
  if [ "${QUALITY_DERIVED:-}" = old ] && [ "$n" = 16 ]; then
    extra+=(--train.batch-size=32)
  fi
  if [ -n "${QUALITY_BATCH:-}" ]; then
    extra+=(--train.batch-size="$QUALITY_BATCH")
  fi
  if [ "${QUALITY_BMUF_GAP:-}" = 1 ] && [ "$method" = s-bmuf ]; then
    extra+=(--sync.min-gap-batches=1)
  fi
  ne=$(ne_of "$method-$n" --cluster.trainers="$n" --cluster.embedding-shards=4 \
         --sync.algorithm="$method" "${extra[@]}")
  if [ -z "$ne" ]; then
    bad "$method at $n trainers: the run failed"
    continue
  fi
  ne_at[$method-$n]=$ne
  gap=$(/usr/bin/python3 -c "print(f'{($ne / $seq_ne - 1) * 100:+.2f}')")
  if /usr/bin/python3 -c "import sys; sys.exit(0 if $ne / $seq_ne - 1 <= $bound else 1)"; then
    ok "$method at $n trainers: eval NE $ne, $gap % against sequential (bound +$(/usr/bin/python3 -c "print(f'{$bound * 100:g}')") %)"
  else
    bad "$method at $n trainers: eval NE $ne, $gap % against sequential, beyond the bound +$(/usr/bin/python3 -c "print(f'{$bound * 100:g}')") %"
  fi
done <<'EOF'
s-easgd 4 0.005
s-ma 4 0.005
s-bmuf 4 0.005
fr-easgd 4 0.01
fr-ma 4 0.01
fr-bmuf 4 0.01
s-easgd 16 0.0035
s-ma 16 0.005
s-bmuf 16 0.005
fr-easgd 16 0.008
fr-ma 16 0.005
fr-bmuf 16 0.005
EOF
# The shadow BMUF no worse than its foreground twin (every round waited for)
# at 4 and 16 trainers (at 16: -0.21 % and -0.06 % with the batch of 16;
# with 32, +0.23 % and +0.17 %; docs/RESULTS.md 4g).
for n in 4 16; do
  s=${ne_at[s-bmuf-$n]:-} f=${ne_at[fr-bmuf-$n]:-}
  if [ -n "$s" ] && [ -n "$f" ] && /usr/bin/python3 -c "import sys; sys.exit(0 if $s <= $f else 1)"; then
    ok "s-bmuf at $n trainers ($s) no worse than fr-bmuf ($f)"
  else
    bad "s-bmuf at $n trainers (${s:-failed}) worse than fr-bmuf (${f:-failed})"
  fi
done
# One seed cannot tell S-BMUF's round gap apart (seed 1 puts a round every
# batch 0.24 points ahead at 4 trainers, where seeds 1-12 put it 0.38 behind
# on average): over model.seed 1-6 at 4 trainers S-BMUF's mean eval NE must
# be no worse than FR-BMUF's (+0.32 % against +0.66 % of sequential; with a
# round every batch, the default before, +0.85 %; docs/RESULTS.md 4b).
bmuf_gap=()
[ "${QUALITY_BMUF_GAP:-}" = 1 ] && bmuf_gap=(--sync.min-gap-batches=1)
declare -A seed_sum=([s-bmuf]=0 [fr-bmuf]=0)
for method in s-bmuf fr-bmuf; do
  for seed in 1 2 3 4 5 6; do
    extra=()
    [ "$method" = s-bmuf ] && extra=("${bmuf_gap[@]}")
    ne=$(ne_of "$method-4-seed$seed" --cluster.trainers=4 --cluster.embedding-shards=4 \
           --sync.algorithm="$method" --model.seed="$seed" "${extra[@]}")
    if [ -z "$ne" ]; then
      seed_sum[$method]=failed
      break
    fi
    seed_sum[$method]=$(/usr/bin/python3 -c "print(${seed_sum[$method]} + $ne)")
  done
done
s=${seed_sum[s-bmuf]} f=${seed_sum[fr-bmuf]}
if [ "$s" != failed ] && [ "$f" != failed ] &&
   /usr/bin/python3 -c "import sys; sys.exit(0 if $s <= $f else 1)"; then
  ok "s-bmuf at 4 trainers, seeds 1-6: mean eval NE $(/usr/bin/python3 -c "print(f'{$s / 6:.4f}')") no worse than fr-bmuf's $(/usr/bin/python3 -c "print(f'{$f / 6:.4f}')")"
else
  bad "s-bmuf at 4 trainers, seeds 1-6: mean eval NE (sum $s) worse than fr-bmuf's (sum $f)"
fi
summary
