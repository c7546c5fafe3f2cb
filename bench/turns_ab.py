#!/usr/bin/env python3
"""scheduler.max-throughput against CAF's default on the wall clock
(docs/virtual-time.md, "The scheduler's turns"): alternated runs of the same
job with CAF's default (--scheduler.max-throughput=0, given explicitly: the
option's own default derives the value from the sync algorithm) and with
each value given, medians of the metrics JSON.

  bench/turns_ab.py speed [--pairs 3] [--values 1,4,16] [--only 4-s-ma,4-fr-ma,...]
      100 000 generated rows (datagen --seed=3), no eval, 2 embedding shards:
      examples/s against CAF's default pair by pair (median, range),
      sync.rounds and sync.worker_blocked_fraction.
  bench/turns_ab.py quality [--seeds 3] [--jobs 4:s-ma,16:s-easgd] [--sets a,b]
      the 400 000-row sets a and b of docs/RESULTS.md 4e (datagen --seed=1 / 7,
      50 000 held-out rows --seed=2 / 8), 4 embedding shards, model.seed 1..N:
      eval NE, examples/s and rounds with the default and with 1.

Data goes to --work (default /tmp/turns-ab); the binary is --bin
(default build/shadowsync). Runs one at a time; nothing else should run.
"""
import argparse, json, os, statistics, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JOBS = {
    "1x2-none": ["--cluster.trainers=1", "--cluster.workers=2", "--sync.algorithm=none"],
    "1x4-none": ["--cluster.trainers=1", "--cluster.workers=4", "--sync.algorithm=none"],
    "4x1-none": ["--cluster.trainers=4", "--sync.algorithm=none"],
    "4-s-ma": ["--cluster.trainers=4", "--sync.algorithm=s-ma"],
    "4-fr-ma": ["--cluster.trainers=4", "--sync.algorithm=fr-ma"],
    "4-s-bmuf": ["--cluster.trainers=4", "--sync.algorithm=s-bmuf"],
    "4-fr-bmuf": ["--cluster.trainers=4", "--sync.algorithm=fr-bmuf"],
    "2x2-fr-ma": ["--cluster.trainers=2", "--cluster.workers=2", "--sync.algorithm=fr-ma"],
    "2-s-easgd": ["--cluster.trainers=2", "--sync.algorithm=s-easgd"],
    "2-fr-easgd": ["--cluster.trainers=2", "--sync.algorithm=fr-easgd"],
}
SETS = {"a": (1, 2), "b": (7, 8)}


def datagen(binary, out, rows, seed):
    if not os.path.exists(out):
        subprocess.run([binary, "datagen", "--out=" + out, "--rows=%d" % rows, "--seed=%d" % seed],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out


def train(binary, work, opts, m):
    metrics = os.path.join(work, "m.json")
    extra = ["--scheduler.max-throughput=" + m] # 0: CAF's (the default derives it: see --help)
    proc = subprocess.run([binary, "train", "--sim.clock=wall", "--output.progress=none",
                           "--output.metrics=" + metrics] + opts + extra,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        sys.exit("failed (exit %d): %s\n%s" % (proc.returncode, " ".join(opts + extra),
                                               proc.stdout[-2000:]))
    with open(metrics) as f:
        d = json.load(f)
    return d["eval_ne"], d["examples_per_second"], d["sync"].get("rounds", 0), \
        d["sync"].get("worker_blocked_fraction", 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=["speed", "quality"])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "shadowsync"))
    ap.add_argument("--work", default="/tmp/turns-ab")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--values", default="1")
    ap.add_argument("--only", default=",".join(JOBS))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--jobs", default="4:s-ma,4:s-bmuf,16:s-ma,16:s-easgd")
    ap.add_argument("--sets", default="a,b")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    res = {}
    if a.mode == "speed":
        data = datagen(a.bin, os.path.join(a.work, "train-100000-seed3.tsv"), 100000, 3)
        values = ["0"] + a.values.split(",")
        jobs = a.only.split(",")
        for _ in range(a.pairs):
            for j in jobs:
                for m in values:
                    opts = ["--data.train=" + data, "--data.eval=",
                            "--cluster.embedding-shards=2"] + JOBS[j]
                    res.setdefault((j, m), []).append(train(a.bin, a.work, opts, m))
        print("| job | max-throughput | examples/s against CAF's default (0), median (range) "
              "| examples/s | rounds | worker_blocked_fraction |")
        print("|---|---|---|---|---|---|")
        for j in jobs:
            base = res[(j, "0")]
            for m in values:
                r = res[(j, m)]
                ratios = [x[1] / b[1] for x, b in zip(r, base)]
                print("| %s | %s | %.3f (%.3f-%.3f) | %.0f | %s | %.3f |" % (
                    j, m if m != "0" else "0 (CAF's)", statistics.median(ratios),
                    min(ratios), max(ratios), statistics.median(x[1] for x in r),
                    statistics.median(x[2] for x in r), statistics.median(x[3] for x in r)))
    else:
        print("| job | set | max-throughput | eval NE median (runs) | examples/s | rounds |")
        print("|---|---|---|---|---|---|")
        rows = []
        for s in a.sets.split(","):
            tseed, eseed = SETS[s]
            t = datagen(a.bin, os.path.join(a.work, "%s-train-400000.tsv" % s), 400000, tseed)
            e = datagen(a.bin, os.path.join(a.work, "%s-eval-50000.tsv" % s), 50000, eseed)
            for seed in range(1, a.seeds + 1):
                for job in a.jobs.split(","):
                    n, alg = job.split(":")
                    for m in ["0", "1"]:
                        opts = ["--data.train=" + t, "--data.eval=" + e,
                                "--cluster.embedding-shards=4", "--cluster.trainers=" + n,
                                "--sync.algorithm=" + alg, "--model.seed=%d" % seed]
                        res.setdefault((job, s, m), []).append(train(a.bin, a.work, opts, m))
            for job in a.jobs.split(","):
                for m in ["0", "1"]:
                    r = res[(job, s, m)]
                    print("| %s | %s | %s | %.4f (%s) | %.0f | %s |" % (
                        job, s, m, statistics.median(x[0] for x in r),
                        " ".join("%.4f" % x[0] for x in r), statistics.median(x[1] for x in r),
                        statistics.median(x[2] for x in r)))


if __name__ == "__main__":
    main()
