#!/usr/bin/env python3
"""Issue 36's quality table: every dense-sync method and `none` against the
sequential engine on the same rows, on the virtual clock (deterministic: one
run per cell), at 4, 16 and 64 trainers, defaults otherwise (the batch is
derived from the number of trainers, train.batch-size=0).

Sets (generated once with `shadowsync datagen` into WORK/data):
  a-100k / b-100k    100 000 rows, seeds 1 / 7, 10 000 held-out rows, seeds 2 / 8
                     (docs/RESULTS.md 4c and 4d)
  a-400k / b-400k    400 000 rows, same seeds, 50 000 held-out rows
  a-1600k / b-1600k  1 600 000 rows, same seeds, 50 000 held-out rows (64
                     trainers see 25 000 rows each, as 16 do on 400 000)
  criteo             ../shared/data/criteo-kaggle-head10k (8 000 / 2 000 rows)
                     through config/criteo-kaggle-head10k.ini (skipped when absent)

Per set: `train --cluster.mode=sequential` (the reference), then
`train --cluster.mode=simulated --sim.clock=virtual --cluster.trainers=N
--cluster.embedding-shards=4 --sync.algorithm=A`. Every run, and every
datagen, takes the shared build lock alone (`flock LOCK ...`), one run at a
time, so other jobs interleave. Each run's metrics JSON is cached in
WORK/<binary hash>/ by its arguments: a rerun resumes, a rebuilt binary
starts over. Extra options after `--` go to every simulated run (sweeps);
--reference-extra=OPTION (repeatable) to the sequential reference runs too.

With --seeds 1,2,...: every run (the sequential reference too) once per
`model.seed` (the initial weights, the readers' order and the engine's
draws); a cell is then the mean of the per-seed gaps (each seed's run
against the sequential run of the same seed), with their range. The default
(no --seeds) passes no seed: the model's default, 1.

usage: bench/quality_table.py [--shadowsync build/shadowsync] [--work DIR]
       [--sets a-100k,b-100k,...] [--trainers 4,16,64] [--algorithms ...]
       [--seeds 1,2,3] [--out bench/results/quality_table.md]
       [--reference-extra=OPTION ...] [-- OPTIONS...]
"""
import argparse, hashlib, json, os, resource, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALGS = "none,s-easgd,s-ma,s-bmuf,fr-easgd,fr-ma,fr-bmuf"
NAMES = {"none": "none", "s-easgd": "S-EASGD", "s-ma": "S-MA", "s-bmuf": "S-BMUF",
         "fr-easgd": "FR-EASGD", "fr-ma": "FR-MA", "fr-bmuf": "FR-BMUF"}
# name: (train rows, train seed, eval rows, eval seed)
SETS = {"a-100k": (100000, 1, 10000, 2), "b-100k": (100000, 7, 10000, 8),
        "a-400k": (400000, 1, 50000, 2), "b-400k": (400000, 7, 50000, 8),
        "a-1600k": (1600000, 1, 50000, 2), "b-1600k": (1600000, 7, 50000, 8)}
CRITEO_DIR = os.path.join(ROOT, "..", "shared", "data", "criteo-kaggle-head10k")
CRITEO_INI = "config/criteo-kaggle-head10k.ini"

ap = argparse.ArgumentParser()
ap.add_argument("--shadowsync", default=os.path.join(ROOT, "build", "shadowsync"))
ap.add_argument("--work", default="/tmp/quality-table")
ap.add_argument("--sets", default=",".join(list(SETS) + ["criteo"]))
ap.add_argument("--trainers", default="4,16,64")
ap.add_argument("--algorithms", default=ALGS)
ap.add_argument("--lock", default="/tmp/ss-build.lock")
ap.add_argument("--goal", type=float, default=0.5, help="gap (%%) printed in bold above it")
ap.add_argument("--out", help="also write the Markdown here")
ap.add_argument("--seeds", help="model.seed values, comma-separated: a cell is the mean gap over them")
ap.add_argument("--reference-extra", action="append", default=[], metavar="OPTION",
                help="an option for the sequential reference runs too (repeatable; "
                     "--reference-extra=--train.dense-warmup=250)")
ap.add_argument("extra", nargs="*")
a = ap.parse_args()

binary = os.path.abspath(a.shadowsync)
with open(binary, "rb") as f:
    bin_hash = hashlib.sha1(f.read()).hexdigest()[:12]
cache = os.path.join(a.work, bin_hash)
data = os.path.join(a.work, "data")
os.makedirs(cache, exist_ok=True)
os.makedirs(data, exist_ok=True)
cpu_total = [0.0, 0]  # CPU seconds and runs actually executed now


def locked(cmd):
    """Runs cmd under the build lock; returns (completed process, CPU seconds)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(["flock", a.lock] + cmd, cwd=ROOT, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return p, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def datagen(path, rows, seed):
    if not os.path.exists(path + ".meta.json"):
        p, _ = locked([binary, "datagen", "--out=" + path, f"--rows={rows}", f"--seed={seed}"])
        if p.returncode != 0:
            sys.exit(f"datagen failed: {p.stdout[-2000:]}")
    return path


def metrics(args):
    """The run's metrics JSON (cached), plus the CPU seconds it took when it ran."""
    key = hashlib.sha1("\0".join(args).encode()).hexdigest()[:16]
    out = os.path.join(cache, key + ".json")
    if not os.path.exists(out):
        p, cpu = locked([binary, "train"] + args + ["--output.progress=none", f"--output.metrics={out}.tmp"])
        if p.returncode != 0:
            sys.exit(f"failed: train {' '.join(args)}\n{p.stdout[-2000:]}")
        with open(out + ".tmp") as f:
            m = json.load(f)
        m["_cpu_seconds"] = cpu
        m["_args"] = args
        with open(out + ".tmp", "w") as f:
            json.dump(m, f)
        os.rename(out + ".tmp", out)
        cpu_total[0] += cpu
        cpu_total[1] += 1
        print(f"  {cpu:6.1f} s CPU  train {' '.join(args)}", file=sys.stderr, flush=True)
    with open(out) as f:
        return json.load(f)


def batch_of(cells, n):
    """The batch the runs of row n trained on, as their metrics say ("?" from a binary
    older than the batch_size key; several values joined by /)."""
    got = sorted({str(m.get("batch_size", "?")) for alg in algs for m in cells[(n, alg)]})
    return "/".join(got)


def set_args(name):
    """(options naming the data, description) for a set, or None when it is absent."""
    if name == "criteo":
        if not os.path.isdir(CRITEO_DIR):
            print(f"criteo: {CRITEO_DIR} absent, skipped", file=sys.stderr)
            return None
        # The INI runs the sequential engine at batch 128; simulated runs get the derived batch.
        return [f"--config-file={CRITEO_INI}"], "8 000 / 2 000"
    rows, seed, erows, eseed = SETS[name]
    t = datagen(os.path.join(data, f"{name[0]}-train-{rows}-seed{seed}.tsv"), rows, seed)
    e = datagen(os.path.join(data, f"{name[0]}-eval-{erows}-seed{eseed}.tsv"), erows, eseed)
    return [f"--data.train={t}", f"--data.eval={e}"], f"{rows:,} / {erows:,}".replace(",", " ")


def sim_args(n, alg, criteo):
    return (["--cluster.mode=simulated", "--sim.clock=virtual", f"--cluster.trainers={n}",
             "--cluster.embedding-shards=4", f"--sync.algorithm={alg}"]
            + (["--train.batch-size=0"] if criteo and not any(
                o.startswith("--train.batch-size=") for o in a.extra) else []) + a.extra)


def gap(ms, refs):
    """Mean over seeds of each seed's gap to the sequential run of the same seed."""
    return sum(100 * (m["eval_ne"] / r["eval_ne"] - 1) for m, r in zip(ms, refs)) / len(ms)


def spread(ms, refs):
    gs = [100 * (m["eval_ne"] / r["eval_ne"] - 1) for m, r in zip(ms, refs)]
    return f" ({min(gs):+.2f}..{max(gs):+.2f})" if len(gs) > 1 else ""


def mean_ne(refs):
    return sum(r["eval_ne"] for r in refs) / len(refs)


started = time.time()
algs = a.algorithms.split(",")
trainers = [int(n) for n in a.trainers.split(",")]
seeds = [int(x) for x in a.seeds.split(",")] if a.seeds else [None]
seed_args = lambda s: [] if s is None else [f"--model.seed={s}"]
results = []  # (set, description, [sequential metrics per seed], {(n, alg): [metrics per seed]})
for name in a.sets.split(","):
    got = set_args(name)
    if got is None:
        continue
    data_args, desc = got
    ref = [metrics(data_args + ["--cluster.mode=sequential"] + seed_args(s) + a.reference_extra)
           for s in seeds]
    cells = {}
    for n in trainers:
        for alg in algs:
            cells[(n, alg)] = [metrics(data_args + sim_args(n, alg, name == "criteo") + seed_args(s))
                               for s in seeds]
    results.append((name, desc, ref, cells))

head = " | ".join(NAMES.get(x, x) for x in algs)
lines = ["Eval NE gap to the sequential engine on the same rows (%, **bold** above "
         f"+{a.goal:g} %), virtual clock, "
         + ("one run per cell:" if len(seeds) == 1 else
            f"model.seed {a.seeds}: the mean of the per-seed gaps (their range):"), "",
         f"| set | rows (train / eval) | N | batch | sequential NE | {head} |",
         "|---|---|---|---|---|" + "---|" * len(algs)]
over16 = []
for name, desc, ref, cells in results:
    for n in trainers:
        row = []
        for alg in algs:
            g = gap(cells[(n, alg)], ref)
            row.append((f"**{g:+.2f}**" if g > a.goal else f"{g:+.2f}") + spread(cells[(n, alg)], ref))
            if n == 16 and g > a.goal:
                over16.append(f"{name} {NAMES.get(alg, alg)} {g:+.2f} %")
        lines.append(f"| {name} | {desc} | {n} | {batch_of(cells, n)} | {mean_ne(ref):.4f} | " + " | ".join(row) + " |")
lines += ["", "Virtual examples/s (thousands) of the same runs:", "",
          f"| set | N | {head} |", "|---|---|" + "---|" * len(algs)]
for name, desc, ref, cells in results:
    for n in trainers:
        row = [f"{cells[(n, alg)][0]['sim']['simulated_examples_per_second'] / 1e3:,.0f}".replace(",", " ")
               for alg in algs]
        lines.append(f"| {name} | {n} | " + " | ".join(row) + " |")
lines += ["", f"Over +{a.goal:g} % at 16 trainers: " + ("; ".join(over16) if over16 else "none") + "."]

cpu_all = sum(m["_cpu_seconds"] for _, _, ref, cells in results
              for m in ref + [x for ms in cells.values() for x in ms] if "_cpu_seconds" in m)
commands = [
    "Commands (`shadowsync` = build/shadowsync, run from the repository root; "
    f"binary sha1 {bin_hash}; HEAD when the table was written: "
    + subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, stdout=subprocess.PIPE,
                     text=True).stdout.strip() + "):", "",
    "```",
    "bench/quality_table.py"
    # the arguments that chose this table's cells, as given (defaults left out)
    + "".join(f" --{flag} {val}" for flag, val, default in (
        ("sets", a.sets, ap.get_default("sets")), ("trainers", a.trainers, ap.get_default("trainers")),
        ("algorithms", a.algorithms, ap.get_default("algorithms"))) if val != default)
    + (f" --out {a.out}" if a.out else "")
    + (f" --seeds {a.seeds}" if a.seeds else "")
    + "".join(f" --reference-extra={o}" for o in a.reference_extra)
    + (" -- " + " ".join(a.extra) if a.extra else ""),
    "# sets: shadowsync datagen --out=T --rows=R --seed=S (a: train seed 1, eval seed 2; b: 7 / 8;",
    "#   R = 100000 with 10000 held-out rows, 400000 and 1600000 with 50000)",
    "shadowsync train --data.train=T --data.eval=E --cluster.mode=sequential"
    + "".join(" " + o for o in a.reference_extra),
    "shadowsync train --data.train=T --data.eval=E --cluster.mode=simulated --sim.clock=virtual \\",
    "  --cluster.trainers=N --cluster.embedding-shards=4 --sync.algorithm=A"
    + (" " + " ".join(a.extra) if a.extra else ""),
    *(["# each run (the sequential one too) once per --model.seed=S, S in " + a.seeds] if a.seeds else []),
    f"# Criteo: --config-file={CRITEO_INI} in place of --data.*; its INI sets batch 128,",
    "#   so the simulated runs add --train.batch-size=0 (the derived batch) unless the options set it",
    "```", "",
    f"{sum(len(r) + sum(len(x) for x in c.values()) for _, _, r, c in results)} runs, {cpu_all / 60:.1f} min CPU in all "
    "(the CPU seconds of each run, recorded when it ran).",
]
md = "\n".join(lines + [""] + commands)
print(md)
print(f"this invocation: {cpu_total[1]} runs executed, {cpu_total[0]:.0f} s CPU, "
      f"{time.time() - started:.0f} s wall", file=sys.stderr)
if a.out:
    with open(a.out, "w") as f:
        f.write(md + "\n")
