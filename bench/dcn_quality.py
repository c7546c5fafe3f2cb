#!/usr/bin/python3
"""Eval NE of the sequential engine against the PyTorch reference, same model and batch.

  /usr/bin/python3 bench/dcn_quality.py --train T.tsv --eval E.tsv [--arch dcnv2-small]
                                       [--batch 128 256] [--seeds 3] [--rows-per-table 100000]

For every batch size, trains --seeds models with each tool (engine: build/shadowsync train
--cluster.mode=sequential --model.seed=1..N; PyTorch: bench/torch_reference.py --threads 1
--seed 0..N-1), one pass in file order, row-wise Adagrad 0.03 for the embeddings and the
preset's dense Adagrad rate on both sides, and prints eval NE and AUC as median (min-max) and
the relative NE gap of the medians. Also prints each run's examples/s (train loop only; the
engine's includes no parsing, PyTorch's neither). The build folder is $SS_BUILD_DIR (default build).
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, os.environ.get("SS_BUILD_DIR", "build"))


def engine(a, batch, seed):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run([os.path.join(BUILD, "shadowsync"), "train", "--cluster.mode=sequential",
                        "--model.arch=" + a.arch, "--data.train=" + a.train, "--data.eval=" + a.eval,
                        "--train.batch-size=%d" % batch, "--model.seed=%d" % seed,
                        "--model.rows-per-table=%d" % a.rows_per_table, "--output.metrics=" + f.name],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        return json.load(open(f.name))


def torch(a, batch, seed):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "bench", "torch_reference.py"),
                        "--train", a.train, "--eval", a.eval, "--arch", a.arch, "--batch-size", str(batch),
                        "--seed", str(seed), "--threads", "1", "--rows-per-table", str(a.rows_per_table),
                        "--output", f.name], stdout=subprocess.DEVNULL, check=True)
        return json.load(open(f.name))


def stat(xs, fmt="%.4f"):
    return (fmt + " (" + fmt + "-" + fmt + ")") % (statistics.median(xs), min(xs), max(xs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", required=True)
    ap.add_argument("--eval", required=True)
    ap.add_argument("--arch", default="dcnv2-small")
    ap.add_argument("--batch", nargs="+", type=int, default=[128, 256])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--rows-per-table", type=int, default=100000)
    a = ap.parse_args()
    lines = ["| batch | tool | eval NE median (min-max) | eval AUC median (min-max) | ex/s median |",
             "|---|---|---|---|---|"]
    for b in a.batch:
        runs = {"engine": [], "PyTorch": []}
        for s in range(a.seeds):  # alternated, so a change in the machine's load hits both
            runs["engine"].append(engine(a, b, s + 1))
            runs["PyTorch"].append(torch(a, b, s))
            print("  batch %d seed %d: engine NE %.4f, PyTorch NE %.4f" % (
                b, s, runs["engine"][-1]["eval_ne"], runs["PyTorch"][-1]["eval_ne"]), flush=True)
        for tool, rs in runs.items():
            lines.append("| %d | %s | %s | %s | %.0f |" % (
                b, tool, stat([r["eval_ne"] for r in rs]), stat([r["eval_auc"] for r in rs]),
                statistics.median(r["examples_per_second"] for r in rs)))
        ne_e = statistics.median(r["eval_ne"] for r in runs["engine"])
        ne_t = statistics.median(r["eval_ne"] for r in runs["PyTorch"])
        lines.append("| %d | gap | %+.2f %% (engine - PyTorch) / PyTorch | | |" % (b, 100 * (ne_e - ne_t) / ne_t))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
