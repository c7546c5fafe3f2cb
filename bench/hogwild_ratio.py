#!/usr/bin/python3
"""Issue 14's speed goals, as ratios measured in one run: each cluster
configuration against the sequential engine on the same data, in alternated
pairs (sequential, cluster, sequential, cluster, ...), the ratio of their
examples/s taken pair by pair and the median quoted. Both figures are
training time only: the sequential engine starts its clock after its
tables' initialisation, the cluster after its shards answered a readiness
lookup (wall clock).

usage: /usr/bin/python3 bench/hogwild_ratio.py [--pairs 5] [--rows 200000]
         [--arch small] [--batch 128] [--dense-lr X] [--build build] [--only NAME ...]
         [--extra OPTION ...] [--out FILE]
       /usr/bin/python3 bench/hogwild_ratio.py --ab 1x2 1x2-local [--pairs N] ...
       /usr/bin/python3 bench/hogwild_ratio.py --ab 1x2 1x2 --extra-b=--scheduler.policy=sharing

Writes a markdown table (and prints it): per configuration, the median
examples/s of both, the median ratio with its range, and eval NE of both
(the same held-out rows).

When build/bench/bench_core_to_core is built, each cluster run is framed by
two probes of the cache line hand-over between CPUs 0 and 1
(bench_data.core_probe). On this VM the host places the two vCPUs near each
other (31-48 ns) or far apart (154-177 ns) and changes that over time; a
second table gives the ratio's median over the pairs run near, and over
those run far, besides the median over all of them."""
import argparse
import os
import statistics
import subprocess
import tempfile

import bench_data

ROOT = bench_data.ROOT

CLUSTER = ["--cluster.mode=simulated", "--sim.clock=wall", "--sync.algorithm=none"]
CONFIGS = {  # name -> options after the common ones
    "1x1": CLUSTER + ["--cluster.trainers=1", "--cluster.workers=1"],  # the cluster without Hogwild
    "1x2": CLUSTER + ["--cluster.trainers=1", "--cluster.workers=2"],
    "4x1": CLUSTER + ["--cluster.trainers=4", "--cluster.workers=1"],
    # the workers read and write the shards' rows directly (cluster.local-rows)
    "1x2-local": CLUSTER + ["--cluster.trainers=1", "--cluster.workers=2", "--cluster.local-rows=true"],
    "4x1-local": CLUSTER + ["--cluster.trainers=4", "--cluster.workers=1", "--cluster.local-rows=true"],
}


def run(binary, work, name, args):
    return bench_data.train_metrics(binary, work, name, args + ["--output.progress=none"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--rows", type=int, default=200000)
    ap.add_argument("--arch", default="small")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--dense-lr", help="train.dense-lr of both runs (default: the preset's, small 0.03, dlrm-kaggle 0.005)")
    ap.add_argument("--build", default="build")
    ap.add_argument("--only", nargs="*", default=[c for c in CONFIGS if c != "1x1"], choices=list(CONFIGS))
    ap.add_argument("--extra", nargs="*", default=[], help="options for the cluster runs only")
    ap.add_argument("--extra-b", nargs="*", default=[],
                    help="with --ab: options for B's runs only (A and B may then name one configuration)")
    ap.add_argument("--ab", nargs=2, metavar=("A", "B"), choices=list(CONFIGS),
                    help="instead: configurations A and B alternated, the ratio B/A of their ex/s")
    ap.add_argument("--out", help="markdown file (default bench/results/hogwild_ratio-ARCH.md; - for none)")
    a = ap.parse_args()
    binary = bench_data.built_binary(a.build)
    probe = bench_data.core_probe(a.build)
    with tempfile.TemporaryDirectory() as work:
        train, held = os.path.join(work, "train.tsv"), os.path.join(work, "eval.tsv")
        for path, rows, seed in ((train, a.rows, 5), (held, a.rows // 10, 6)):
            subprocess.run([binary, "datagen", f"--rows={rows}", f"--seed={seed}", "--out=" + path],
                           check=True, stdout=subprocess.DEVNULL)
        common = ["--data.train=" + train, "--data.eval=" + held, "--model.arch=" + a.arch,
                  f"--train.batch-size={a.batch}"]
        if a.dense_lr:
            common.append(f"--train.dense-lr={a.dense_lr}")
        if a.ab:
            return ab(a, binary, work, common)
        rows, by_place = [], []
        for name in a.only:
            seq, clu, ratio, place, gap = [], [], [], [], []
            for i in range(a.pairs):
                # Pair i: both runs with model seed i + 1, so the eval NE gap is a
                # paired median over initialisations, not one draw's.
                seed = [f"--model.seed={i + 1}"]
                s = run(binary, work, "seq", common + seed + ["--cluster.mode=sequential"])
                c, probes = bench_data.framed(
                    probe, lambda: run(binary, work, name, common + seed + CONFIGS[name] + a.extra))
                seq.append(s)
                clu.append(c)
                ratio.append(c["examples_per_second"] / s["examples_per_second"])
                where = ""
                if probes:
                    place.append(bench_data.placement(*probes))
                    where = f", probes {probes[0]:.0f} / {probes[1]:.0f} ns ({place[-1]})"
                gap.append(100.0 * (c["eval_ne"] / s["eval_ne"] - 1.0))
                print(f"{name} pair {i + 1}: sequential {s['examples_per_second']:.0f} ex/s, "
                      f"cluster {c['examples_per_second']:.0f} ex/s, ratio {ratio[-1]:.3f}, "
                      f"eval NE {s['eval_ne']:.4f} / {c['eval_ne']:.4f} ({gap[-1]:+.2f} %){where}",
                      flush=True)
            if place:
                by_place.append((name, ratio, place))
            med = lambda ms, k: statistics.median(m[k] for m in ms)
            rows.append((name, med(seq, "examples_per_second"), med(clu, "examples_per_second"),
                         statistics.median(ratio), min(ratio), max(ratio), med(seq, "eval_ne"),
                         med(clu, "eval_ne"), statistics.median(gap), min(gap), max(gap),
                         med(clu, "lookup_wait_fraction"), med(seq, "train_ne"), med(clu, "train_ne")))
    lines = [f"## Cluster against the sequential engine (wall clock, sync none)\n",
             f"`/usr/bin/python3 bench/hogwild_ratio.py --pairs {a.pairs} --rows {a.rows} --arch {a.arch} "
             f"--batch {a.batch}" + (f" --dense-lr {a.dense_lr}" if a.dense_lr else "")
             + (" --only " + " ".join(a.only)) + (" --extra " + " ".join(a.extra) if a.extra else "") + "`: "
             f"{a.rows} generated rows (`datagen --seed=5`, eval {a.rows // 10} rows, seed 6), "
             f"{os.cpu_count()} cores; {a.pairs} alternated pairs, medians; ratio = cluster ex/s / "
             "sequential ex/s of the same pair; pair k runs both with `--model.seed=k`, and the eval NE "
             "gap is the median of the pairs' gaps (cluster / sequential - 1).\n",
             "| config | sequential ex/s | cluster ex/s | ratio median (min-max) | eval NE seq | eval NE cluster "
             "| eval NE gap median (min-max) | lookup wait | train NE seq | train NE cluster |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for n, s, c, r, lo, hi, ns, nc, g, glo, ghi, lw, ts, tc in rows:
        lines.append(f"| {n} | {s:.0f} | {c:.0f} | {r:.3f} ({lo:.3f}-{hi:.3f}) | {ns:.4f} | {nc:.4f} | "
                     f"{g:+.2f} % ({glo:+.2f} to {ghi:+.2f}) | {100 * lw:.1f} % | {ts:.4f} | {tc:.4f} |")
    if by_place:
        lines += ["\nThe same ratios by where the host had placed the two vCPUs during the cluster run "
                  "(`bench_core_to_core` before and after it: near when both probes are under "
                  f"{bench_data.FAR_PLACEMENT_NS:.0f} ns, far when both are over, else mixed); "
                  "median (pairs):\n",
                  "| config | all | near | far | mixed |", "|---|---|---|---|---|"]
        for n, ratio, place in by_place:
            cells = [f"{statistics.median(ratio):.3f} ({len(ratio)})"]
            for where in ("near", "far", "mixed"):
                rs = [r for r, p in zip(ratio, place) if p == where]
                cells.append(f"{statistics.median(rs):.3f} ({len(rs)})" if rs else "-")
            lines.append(f"| {n} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    out = a.out or os.path.join(ROOT, "bench", "results", f"hogwild_ratio-{a.arch}.md")
    if out != "-":
        with open(out, "w") as f:
            f.write(text)


def ab(a, binary, work, common):
    """Configurations A and B alternated, pair by pair; prints (and writes)
    the median ratio B/A of their examples/s."""
    name_a, name_b = a.ab
    label_b = name_b + ("".join(" " + x for x in a.extra_b))
    ratio, xa, xb = [], [], []
    for i in range(a.pairs):
        ma = run(binary, work, "a", common + CONFIGS[name_a] + a.extra)
        mb = run(binary, work, "b", common + CONFIGS[name_b] + a.extra + a.extra_b)
        xa.append(ma["examples_per_second"])
        xb.append(mb["examples_per_second"])
        ratio.append(xb[-1] / xa[-1])
        print(f"pair {i + 1}: {name_a} {xa[-1]:.0f} ex/s, {label_b} {xb[-1]:.0f} ex/s, ratio {ratio[-1]:.3f}",
              flush=True)
    opts = "".join(f" {k} " + " ".join(v) for k, v in (("--extra", a.extra), ("--extra-b", a.extra_b)) if v)
    text = (f"`/usr/bin/python3 bench/hogwild_ratio.py --ab {name_a} {name_b} --pairs {a.pairs} --rows {a.rows} "
            f"--arch {a.arch} --batch {a.batch}{opts}`: ({label_b}) / {name_a} examples/s, {a.pairs} alternated pairs: "
            f"median {statistics.median(ratio):.3f} (min {min(ratio):.3f}, max {max(ratio):.3f}); "
            f"median ex/s {statistics.median(xa):.0f} and {statistics.median(xb):.0f}\n")
    print(text)
    if a.out and a.out != "-":
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
