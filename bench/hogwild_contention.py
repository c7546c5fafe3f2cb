#!/usr/bin/python3
"""Why two Hogwild workers of one trainer do not reach twice the sequential
engine on this machine: the workers' own accounting (metrics `workers`:
thread CPU time on batches, the part of it in the dense step on the shared
replica, batches run on another scheduler thread than the previous one) in
three settings, alternated round by round on the same rows:

  1x1   one trainer, one worker, one scheduler thread: the work uncontended;
  pair  two 1x1 processes at once, one per core: what two busy cores cost
        each other when they share no memory;
  1x2   one trainer, two Hogwild workers on two threads (one replica).

If the cores themselves slowed each other, `pair` would show it; what 1x2
adds beyond `pair` comes from sharing one process's memory (the replica's
parameters and optimiser state written by both workers after every batch).

Before and after each 1x2 run, build/bench/bench_core_to_core (when built)
times a cache line's hand-over between the two cores (ping-pong, ns one
way). Under a hypervisor that depends on where the host placed the two
vCPUs at the time, so each 1x2 run is listed with the probes around it.

usage: /usr/bin/python3 bench/hogwild_contention.py [--rounds 5] [--rows 1000000]
         [--build build] [--local] [--extra OPTION ...] [--out FILE]

--local runs the workers with cluster.local-rows (no lookup or push messages:
the batch work is the sequential engine's). Prints every run, then medians
and the correlation of thread moves with worker CPU time over the 1x2 runs;
writes the summary as markdown (default bench/results/hogwild_contention.md)."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import bench_data

ROOT = bench_data.ROOT


def pearson(xs, ys):
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sx = sum((x - mx) ** 2 for x in xs) ** 0.5
    sy = sum((y - my) ** 2 for y in ys) ** 0.5
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / (sx * sy) if sx and sy else float("nan")


def row(m):
    w = m["workers"]
    return {"eps": m["examples_per_second"], "cpu": w["cpu_seconds"],
            "dense": w["dense_step_cpu_seconds"], "moves": w["thread_moves"]}


def show(name, r):
    probe = f"  probes {r['before']:.0f} / {r['after']:.0f} ns" if "before" in r else ""
    print(f"  {name:5} {r['eps']:8.0f} ex/s  worker CPU {r['cpu']:6.2f} s  dense step {r['dense']:5.2f} s  "
          f"thread moves {r['moves']}{probe}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--build", default="build")
    ap.add_argument("--local", action="store_true", help="cluster.local-rows=true in every run")
    ap.add_argument("--extra", nargs="*", default=[], help="more options for every run")
    ap.add_argument("--out", help="markdown file (default bench/results/hogwild_contention.md; - for none)")
    a = ap.parse_args()
    binary = bench_data.built_binary(a.build)
    probe = bench_data.core_probe(a.build)
    with tempfile.TemporaryDirectory() as work:
        train = os.path.join(work, "train.tsv")
        subprocess.run([binary, "datagen", f"--rows={a.rows}", "--seed=5", "--out=" + train],
                       check=True, stdout=subprocess.DEVNULL)
        common = ["--data.train=" + train, "--data.eval=", "--output.progress=none",
                  "--cluster.mode=simulated", "--sim.clock=wall", "--sync.algorithm=none",
                  "--cluster.trainers=1"] + (["--cluster.local-rows=true"] if a.local else []) + a.extra
        one = common + ["--cluster.workers=1", "--scheduler.max-threads=1"]
        two = common + ["--cluster.workers=2", "--scheduler.max-threads=2"]
        runs = {"1x1": [], "pair": [], "1x2": []}
        for i in range(a.rounds):
            print(f"round {i + 1}", flush=True)
            runs["1x1"].append(row(bench_data.train_metrics(binary, work, "solo", one)))
            show("1x1", runs["1x1"][-1])
            procs = []
            for k in range(2):
                out = os.path.join(work, f"pair{k}.json")
                procs.append(subprocess.Popen([binary, "train"] + one + [f"--output.metrics={out}"],
                                              stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT))
            if any(p.wait() != 0 for p in procs):
                sys.exit("a pair run failed")
            pair = [row(json.load(open(os.path.join(work, f"pair{k}.json")))) for k in range(2)]
            for r in pair:
                runs["pair"].append(r)
                show("pair", r)
            r, probes = bench_data.framed(
                probe, lambda: row(bench_data.train_metrics(binary, work, "hogwild", two)))
            if probes:
                r["before"], r["after"] = probes
            runs["1x2"].append(r)
            show("1x2", r)
    med = lambda name, k: statistics.median(r[k] for r in runs[name])
    base_cpu, base_dense = med("1x1", "cpu"), med("1x1", "dense")
    h = runs["1x2"]
    corr = pearson([r["moves"] for r in h], [r["cpu"] for r in h])
    opts = (" --local" if a.local else "") + (" --extra " + " ".join(a.extra) if a.extra else "")
    lines = ["## Hogwild contention: the workers' own CPU accounting\n",
             f"`/usr/bin/python3 bench/hogwild_contention.py --rounds {a.rounds} --rows {a.rows}{opts}`: "
             f"{a.rows} generated rows (`datagen --seed=5`), `small`, batch 128, sync none, wall clock, "
             f"{os.cpu_count()} cores; medians of {a.rounds} alternated rounds (pair: both processes of "
             "every round). CPU: thread CPU time of all workers on their batches; x 1x1: over the "
             "one-worker run's.\n",
             "| setting | ex/s | worker CPU s | x 1x1 | dense step CPU s | x 1x1 | thread moves |",
             "|---|---|---|---|---|---|---|"]
    for name in ("1x1", "pair", "1x2"):
        cpu, dense = med(name, "cpu"), med(name, "dense")
        spread = f" ({min(r['cpu'] for r in runs[name]):.2f}-{max(r['cpu'] for r in runs[name]):.2f})"
        lines.append(f"| {name} | {med(name, 'eps'):.0f} | {cpu:.2f}{spread} | {cpu / base_cpu:.3f} | "
                     f"{dense:.2f} | {dense / base_dense:.2f} | {med(name, 'moves'):.0f} |")
    lines.append(f"\nOver the {len(h)} 1x2 runs, the correlation (Pearson) of thread moves with worker "
                 f"CPU time is {corr:.2f}.\n")
    if h and "before" in h[0]:
        lines += ["Each 1x2 run with the core-to-core probes around it (`bench_core_to_core`: ns for a "
                  "cache line to move one way between CPUs 0 and 1, before / after the run):\n",
                  "| run | ex/s | worker CPU s | dense step CPU s | thread moves | probe before / after ns | placement |",
                  "|---|---|---|---|---|---|---|"]
        for i, r in enumerate(h):
            lines.append(f"| {i + 1} | {r['eps']:.0f} | {r['cpu']:.2f} | {r['dense']:.2f} | {r['moves']} | "
                         f"{r['before']:.0f} / {r['after']:.0f} | "
                         f"{bench_data.placement(r['before'], r['after'])} |")
        both = [(r["before"] + r["after"]) / 2 for r in h]
        lines.append(f"\nCorrelation (Pearson) of the probes' mean with the dense step's CPU time: "
                     f"{pearson(both, [r['dense'] for r in h]):.2f}. Placement: near when both probes are "
                     f"under {bench_data.FAR_PLACEMENT_NS:.0f} ns, far when both are over, else mixed.\n")
    text = "\n".join(lines)
    print(text)
    out = a.out or os.path.join(ROOT, "bench", "results", "hogwild_contention.md")
    if out != "-":
        with open(out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
