#!/usr/bin/python3
"""Cluster experiments of issue 3, measured side by side in one run.

  /usr/bin/python3 bench/cluster_experiments.py [--quick] [--repeats N] [--only NAME ...]

Experiments (each writes bench/results/<name>.json and a Markdown table that
is also printed):
  hogwild   sequential mode vs 1 trainer x 2 Hogwild workers (sync none)
  sync      4 trainers x 1 worker: none, S-EASGD, S-MA, S-BMUF, and FR-* at k = 1, 10, 100
  network   network model on (25 Gbit/s, 20 us): trainers 1..16, S-EASGD vs FR-EASGD,
            one dense shard; simulated examples/s and sync gap

Every configuration runs --repeats times (interleaved, so machine noise hits all
alike); tables show the median with min-max. Ratios are against the baseline of
the same experiment and run. Data: the project's synthetic generator (1 M train
rows, 100 k eval rows; --quick: 200 k / 20 k), generated once under
bench/results/data/. Uses build/shadowsync (build it first; $SS_BUILD_DIR
names another build folder). bench/run_suite.py reuses run/measure/med/fmt.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, os.environ.get("SS_BUILD_DIR", "build"), "shadowsync")
RESULTS = os.path.join(ROOT, "bench", "results")


def run(args, out_json):
    cmd = [BIN, "train", "--output.progress=none", "--output.metrics=" + out_json] + args
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        sys.exit("no result within 900 s (hung?): %s" % " ".join(cmd))
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stdout[-2000:]))
    with open(out_json) as f:
        return json.load(f)


def med(xs):
    xs = [x for x in xs if x is not None]
    return (statistics.median(xs), min(xs), max(xs)) if xs else (None, None, None)


def fmt(t, digits=0, scale=1.0):
    m, lo, hi = t
    if m is None:
        return "-"
    f = "%%.%df" % digits
    return (f % (m * scale)) + " (" + (f % (lo * scale)) + "-" + (f % (hi * scale)) + ")"


def measure(configs, common, repeats, tag):
    """configs: list of (label, args). Returns {label: [metrics...]}."""
    res = {label: [] for label, _ in configs}
    for r in range(repeats):
        for label, args in configs:
            out = os.path.join(RESULTS, "tmp-%s.json" % tag)
            res[label].append(run(common + args, out))
            print("  [%d/%d] %-24s %8.0f ex/s  eval NE %.4f" % (
                r + 1, repeats, label, res[label][-1]["examples_per_second"],
                res[label][-1]["eval_ne"] or float("nan")), flush=True)
    return res


def table(rows, header):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def summarize(res, base, extra=()):
    base_eps = med([m["examples_per_second"] for m in res[base]])[0]
    rows = []
    for label, ms in res.items():
        eps = med([m["examples_per_second"] for m in ms])
        row = [label, fmt(eps), "%.2f" % (eps[0] / base_eps),
               fmt(med([m["eval_ne"] for m in ms]), 4),
               fmt(med([m["sync"]["worker_blocked_fraction"] for m in ms]), 2, 100.0),
               fmt(med([m["sync"]["sync_gap_mean"] for m in ms]), 2),
               fmt(med([m["sync"]["rounds"] for m in ms]))]
        for key, digits in extra:
            row.append(fmt(med([m.get(key) for m in ms]), digits))
        rows.append(row)
    header = ["config", "examples/s median (min-max)", "ratio", "eval NE", "blocked %",
              "sync gap", "rounds"] + [k for k, _ in extra]
    return table(rows, header)


def save(name, res, md, notes):
    with open(os.path.join(RESULTS, name + ".json"), "w") as f:
        json.dump(res, f, indent=1)
    with open(os.path.join(RESULTS, name + ".md"), "w") as f:
        f.write(notes + "\n\n" + md + "\n")
    print("\n" + notes + "\n\n" + md + "\n", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="200k rows instead of 1M")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=["hogwild", "sync", "network"])
    ap.add_argument("--batch-size", type=int, default=256)
    a = ap.parse_args()
    if not os.path.exists(BIN):
        sys.exit("build/shadowsync not found: run ./scripts/build.sh first")
    os.makedirs(RESULTS, exist_ok=True)
    rows = 200000 if a.quick else 1000000
    common = ["--data.synthetic-rows=%d" % rows, "--data.synthetic-eval-rows=%d" % (rows // 10),
              "--data.synthetic-dir=" + os.path.join(RESULTS, "data"),
              "--sim.clock=wall", "--scheduler.max-threads=2", "--train.batch-size=%d" % a.batch_size]
    bayes = None
    meta = os.path.join(RESULTS, "data", "teacher42-eval-%d-seed2.tsv.meta.json" % (rows // 10))
    ctx = "synthetic data %d train rows, small arch, batch %d, 2 scheduler threads, %d repeats" % (
        rows, a.batch_size, a.repeats)

    if "hogwild" in a.only:
        res = measure([("sequential", ["--cluster.mode=sequential"]),
                       ("1 trainer x 2 workers", ["--cluster.trainers=1", "--cluster.workers=2",
                                                  "--sync.algorithm=none"])], common, a.repeats, "hw")
        if os.path.exists(meta):
            bayes = json.load(open(meta))["bayes_ne"]
        save("hogwild", res, summarize(res, "sequential"),
             "## Hogwild scaling (%s)\nBayes NE of the eval data: %s" % (ctx, bayes))

    if "sync" in a.only:
        four = ["--cluster.trainers=4", "--cluster.workers=1", "--cluster.embedding-shards=2"]
        configs = [("sequential", ["--cluster.mode=sequential"])]
        configs += [(alg, four + ["--sync.algorithm=" + alg]) for alg in ["none", "s-easgd", "s-ma", "s-bmuf"]]
        for alg in ["fr-easgd", "fr-ma", "fr-bmuf"]:
            for k in [1, 10, 100]:
                configs.append(("%s k=%d" % (alg, k), four + ["--sync.algorithm=" + alg, "--sync.k=%d" % k]))
        res = measure(configs, common, a.repeats, "sync")
        if os.path.exists(meta):
            bayes = json.load(open(meta))["bayes_ne"]
        save("sync", res, summarize(res, "none"),
             "## 4 trainers x 1 worker, ratios against `none` (%s)\nBayes NE of the eval data: %s" % (ctx, bayes))

    if "network" in a.only:
        configs = []
        for n in [1, 2, 4, 8, 16]:
            base = ["--cluster.trainers=%d" % n, "--cluster.workers=1", "--cluster.embedding-shards=2",
                    "--cluster.dense-shards=1", "--net.enabled=true", "--net.latency-us=20",
                    "--net.bandwidth-gbps=25"]
            configs.append(("s-easgd N=%d" % n, base + ["--sync.algorithm=s-easgd"]))
            configs.append(("fr-easgd k=1 N=%d" % n, base + ["--sync.algorithm=fr-easgd", "--sync.k=1"]))
            configs.append(("fr-easgd k=10 N=%d" % n, base + ["--sync.algorithm=fr-easgd", "--sync.k=10"]))
        res = measure(configs, common, a.repeats, "net")
        save("network", res, summarize(res, "s-easgd N=1", extra=[("simulated_examples_per_second", 0), ("host_examples_per_second", 0)]),
             "## Network model (25 Gbit/s, 20 us per host), one dense shard (%s)" % ctx)
    tmp = [f for f in os.listdir(RESULTS) if f.startswith("tmp-")]
    for f in tmp:
        os.remove(os.path.join(RESULTS, f))


if __name__ == "__main__":
    main()
