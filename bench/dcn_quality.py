#!/usr/bin/python3
"""Eval NE of the sequential engine against the PyTorch reference, same model and batch.

  /usr/bin/python3 bench/dcn_quality.py --train T.tsv --eval E.tsv [--arch dcnv2-small]
                                       [--batch 128 256] [--seeds 3] [--rows-per-table 100000]
                                       [--multi-hot C1,C2,.. [--pooling sum|mean]
                                        [--id-delimiter '|'] [--max-ids 1024]]

For every batch size, trains --seeds models with each tool (engine: build/shadowsync train
--cluster.mode=sequential --model.seed=1..N; PyTorch: bench/torch_reference.py --threads 1
--seed 0..N-1), one pass in file order, row-wise Adagrad 0.03 for the embeddings and the
preset's dense Adagrad rate on both sides, and prints eval NE and AUC as median (min-max) and
the relative NE gap of the medians. --multi-hot (and the options after it) reads those columns
as bags in both tools (data.multi-hot, model.pooling, data.id-delimiter, data.max-ids). Also
prints each tool's examples/s as median (min-max) and the per-pair ratios (engine / PyTorch,
pairs in run order): the engine's is its train loop as `train` reports it, which reads and
parses the file as it trains; PyTorch's is its train loop alone (it parses the files before).
The build folder is $SS_BUILD_DIR (default build).
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, os.environ.get("SS_BUILD_DIR", "build"))


def engine_multi_hot(a):
    """The engine's options for --multi-hot and its companions (none without it)."""
    if not a.multi_hot:
        return []
    return ["--data.multi-hot=" + a.multi_hot, "--model.pooling=" + a.pooling,
            "--data.id-delimiter=" + a.id_delimiter, "--data.max-ids=%d" % a.max_ids]


def torch_multi_hot(a):
    if not a.multi_hot:
        return []
    return ["--multi-hot", a.multi_hot, "--pooling", a.pooling, "--id-delimiter", a.id_delimiter,
            "--max-ids", str(a.max_ids)]


def add_multi_hot_args(ap):
    ap.add_argument("--multi-hot", default="", help="data.multi-hot columns (C1..C26, comma-separated)")
    ap.add_argument("--pooling", choices=["sum", "mean"], default="sum")
    ap.add_argument("--id-delimiter", default="|")
    ap.add_argument("--max-ids", type=int, default=1024)


def engine(a, batch, seed):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run([os.path.join(BUILD, "shadowsync"), "train", "--cluster.mode=sequential",
                        "--model.arch=" + a.arch, "--data.train=" + a.train, "--data.eval=" + a.eval,
                        "--train.batch-size=%d" % batch, "--model.seed=%d" % seed,
                        "--model.rows-per-table=%d" % a.rows_per_table, "--output.metrics=" + f.name]
                       + engine_multi_hot(a),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        return json.load(open(f.name))


def torch(a, batch, seed):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "bench", "torch_reference.py"),
                        "--train", a.train, "--eval", a.eval, "--arch", a.arch, "--batch-size", str(batch),
                        "--seed", str(seed), "--threads", "1", "--rows-per-table", str(a.rows_per_table),
                        "--output", f.name] + torch_multi_hot(a), stdout=subprocess.DEVNULL, check=True)
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
    ap.add_argument("--json", help="also write every run's metrics to this file")
    add_multi_hot_args(ap)
    a = ap.parse_args()
    lines = ["| batch | tool | eval NE median (min-max) | eval AUC median (min-max) | ex/s median (min-max) |",
             "|---|---|---|---|---|"]
    ratios, dump = [], {}
    for b in a.batch:
        runs = {"engine": [], "PyTorch": []}
        for s in range(a.seeds):  # alternated, so a change in the machine's load hits both
            runs["engine"].append(engine(a, b, s + 1))
            runs["PyTorch"].append(torch(a, b, s))
            e, t = runs["engine"][-1], runs["PyTorch"][-1]
            print("  batch %d seed %d: engine NE %.4f %.0f ex/s, PyTorch NE %.4f %.0f ex/s" % (
                b, s, e["eval_ne"], e["examples_per_second"], t["eval_ne"], t["examples_per_second"]), flush=True)
        dump[b] = runs
        for tool, rs in runs.items():
            lines.append("| %d | %s | %s | %s | %s |" % (
                b, tool, stat([r["eval_ne"] for r in rs]), stat([r["eval_auc"] for r in rs]),
                stat([r["examples_per_second"] for r in rs], "%.0f")))
        ne_e = statistics.median(r["eval_ne"] for r in runs["engine"])
        ne_t = statistics.median(r["eval_ne"] for r in runs["PyTorch"])
        lines.append("| %d | gap | %+.2f %% (engine - PyTorch) / PyTorch | | |" % (b, 100 * (ne_e - ne_t) / ne_t))
        pair = [e["examples_per_second"] / t["examples_per_second"] for e, t in zip(runs["engine"], runs["PyTorch"])]
        ratios.append("batch %d: speed-up per pair %s, median %.1fx" % (
            b, ", ".join("%.1fx" % r for r in pair), statistics.median(pair)))
    if a.json:
        json.dump(dump, open(a.json, "w"), indent=1)
    print("\n".join(lines + [""] + ratios))


if __name__ == "__main__":
    main()
