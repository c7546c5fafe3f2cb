#!/bin/bash
# Where the time goes (issue 14, "profile first"): perf profiles of the
# sequential engine and of 1 trainer x 2 Hogwild workers (sync none, wall
# clock) on the same generated data, each summarised as the top symbols and
# as shares per part of the code. Writes bench/results/profile_hogwild.md.
# Shares are of the samples of the whole process, setup (table
# initialisation, reading) included; run it on a quiet machine.
# usage: [OUT=FILE.md] bench/profile_hogwild.sh [SHADOWSYNC] [ROWS] [BATCH]
set -eu
B=${1:-build/shadowsync}
ROWS=${2:-200000}
BATCH=${3:-128}
command -v perf > /dev/null || { echo "profile_hogwild.sh: perf not found (apt-get install linux-perf)"; exit 1; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
"$B" datagen --rows="$ROWS" --seed=5 --out="$W/train.tsv" > /dev/null
OUT=${OUT:-bench/results/profile_hogwild.md}
profile() { # name, then train options
  local name=$1
  shift
  perf record -q -F 2000 -g -o "$W/$name.data" "$B" train --data.train="$W/train.tsv" \
    --train.batch-size="$BATCH" --output.progress=none --output.metrics="$W/$name.json" "$@" \
    > /dev/null 2>&1
  perf report -i "$W/$name.data" -n --no-children --sort symbol --stdio 2> /dev/null |
    grep -E '^ +[0-9]+\.[0-9]+%' | awk '{$1=$1; print}' > "$W/$name.txt"
  perf report -i "$W/$name.data" -n --no-children --sort comm --stdio 2> /dev/null |
    grep -E '^ +[0-9]+\.[0-9]+%' | awk '{$1=$1; print}' > "$W/$name.comm.txt"
}
profile sequential --cluster.mode=sequential
profile hogwild --cluster.mode=simulated --sim.clock=wall --cluster.trainers=1 \
  --cluster.workers=2 --sync.algorithm=none
python3 - "$W" "$ROWS" "$BATCH" "$(nproc)" > "$OUT" <<'PY'
import json, re, sys
w, rows, batch, cores = sys.argv[1:5]
parts = [  # (part, pattern on the symbol), first match wins
    ("GEMM (Eigen)", r"Eigen::"),
    ("interaction fwd/bwd", r"model::interaction_"),
    ("MLP other (activations, bias)", r"model::mlp_"),
    ("embedding table init (random rows)", r"embedding_tables::init|mersenne_twister"),
    ("embedding shard: push", r"embedding_shard_state::push|sparse_optimizer|embedding_tables::(apply|update)"),
    ("embedding shard: lookup", r"embedding_shard_state::(lookup|owns)"),
    ("worker batch prep (keys, index)", r"worker_batch|sparse_index|make_keys"),
    ("dense optimiser", r"dense_optimizer"),
    ("reader and parser", r"data::|log1p|memchr|strto"),
    ("memcpy / memset", r"mem(move|cpy|set)"),
    ("malloc / free", r"malloc|free|_int_"),
    ("CAF runtime", r"caf::"),
    ("kernel", None),
]
def load(name):
    out = []
    for line in open(f"{w}/{name}.txt"):
        m = re.match(r"([0-9.]+)% ([0-9]+) (\[[.k]\]) (.*)", line)
        if m:
            out.append((float(m.group(1)), m.group(3), m.group(4).rstrip(" -"), int(m.group(2))))
    return out
def eps(name):
    return json.load(open(f"{w}/{name}.json"))["examples_per_second"]
runs = {n: load(n) for n in ("sequential", "hogwild")}
print("## Profile: sequential engine and 1 trainer x 2 Hogwild workers (sync none, wall clock)\n")
print(f"`bash bench/profile_hogwild.sh`: {rows} generated rows (`datagen --seed=5`), default `small` arch, "
      f"batch {batch}, {cores} cores, `perf record -F 2000 -g`; shares of all samples of the process "
      "(setup included), one run each.\n")
print(f"Examples/s in the profiled runs: sequential {eps('sequential'):.0f}, "
      f"1x2 Hogwild {eps('hogwild'):.0f} (ratio {eps('hogwild') / eps('sequential'):.2f}; "
      "perf's sampling slows both).\n")
print("Extra samples: the 1x2 run's samples of the part less the sequential run's, as % of all "
      "the sequential run's samples (the same rows and sampling rate; what running on two "
      "threads adds).\n")
print("| part | sequential % | 1x2 Hogwild % | extra samples, % of sequential |\n|---|---|---|---|")
shares, counts = {}, {}
for n, syms in runs.items():
    acc = {p: 0.0 for p, _ in parts}
    acc["other"] = 0.0
    cnt = {p: 0 for p in acc}
    for pct, kind, sym, k in syms:
        key = "kernel" if kind == "[k]" else "other"
        for p, pat in parts:
            if key == "other" and p != "kernel" and re.search(pat, sym):
                key = p
                break
        acc[key] += pct
        cnt[key] += k
    shares[n], counts[n] = acc, cnt
seq_total = sum(counts["sequential"].values())
for p in [p for p, _ in parts] + ["other"]:
    extra = 100.0 * (counts["hogwild"][p] - counts["sequential"][p]) / seq_total
    print(f"| {p} | {shares['sequential'][p]:.1f} | {shares['hogwild'][p]:.1f} | {extra:+.1f} |")
extra = 100.0 * (sum(counts["hogwild"].values()) - seq_total) / seq_total
print(f"| all | 100 | 100 | {extra:+.1f} |")
print("\nSamples by thread (`caf.multiplexer`: CAF's scheduler threads; `caf.clock`: its timer "
      "thread; `shadowsync`: the main thread), as % of all the sequential run's samples:\n")
print("| thread | sequential | 1x2 Hogwild |\n|---|---|---|")
threads = {}
for n in runs:
    for line in open(f"{w}/{n}.comm.txt"):
        pct, k, comm = line.split(None, 2)
        threads.setdefault(comm.strip(), {})[n] = int(k)
for comm, k in sorted(threads.items(), key=lambda x: -x[1].get("hogwild", 0)):
    print(f"| {comm} | {100.0 * k.get('sequential', 0) / seq_total:.1f} | "
          f"{100.0 * k.get('hogwild', 0) / seq_total:.1f} |")
for n, syms in runs.items():
    print(f"\n### Top symbols, {n}\n\n| % | symbol |\n|---|---|")
    for pct, kind, sym, _ in syms[:15]:
        sym = re.sub(r"<.*", "<...>", sym)[:90]
        print(f"| {pct:.2f} | `{kind} {sym}` |")
PY
echo "wrote $OUT"
cat "$OUT"
