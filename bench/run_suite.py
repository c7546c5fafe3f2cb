#!/usr/bin/python3
"""The benchmark suite (issue 5): every experiment side by side, one command.

  /usr/bin/python3 bench/run_suite.py [--quick] [--only NAME ...] [--repeats N] [--build DIR]
  /usr/bin/python3 bench/run_suite.py --replot     # redraw the claims charts from claims.json

Experiments (run in this order; --only picks some):
  engine     1. sequential engine vs the PyTorch reference and the SGEMM peak (small,
                dlrm-kaggle; batch 64, 256, 1024)                     bench/engine_vs_torch.py
  hogwild    2. 1 trainer, Hogwild workers 1..4 on 2 threads: examples/s, eval NE
  claims     3. network model on: none, S-EASGD/MA/BMUF, FR-* (k = 1, 10, 100) at trainers
                1..16 (one dense shard, then two for EASGD; merge overwrite for S-MA/S-BMUF)
  quality    4. eval NE gap to the Bayes NE: sequential vs shadow methods at 8 trainers,
                two generator settings
  criteo     5. real Criteo rows (8k train / 2k held out): sequential, S-EASGD x 4, PyTorch
  multinode  6. loopback 3-node cluster (TLS and plain TCP) vs one process: ex/s, eval NE
  multinode-none  6. the same without dense sync (the data plane alone)
  memory     7. peak RSS vs rows x (dim + 1) x 4 bytes of embedding state
  timelines  one run folder (train --output.dir) per method at 8 trainers, charted by
             bench/plot_runs.py: train NE vs examples, examples/s and sync gap vs time

Each writes bench/results/<name>.{csv,json,md,png} (charts also to docs/plots/),
and bench/results/summary.md collects the headline numbers of the latest run
of every experiment. Values are medians of --repeats runs (default 3, --quick
1) with min-max, run interleaved so machine noise hits all configurations
alike. --quick shrinks every experiment to a few minutes. Needs the build
folder's shadowsync and bench/bench_engine (--build, default build), Debian's
python3-torch and gnuplot-nox (./scripts/deps.sh).
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import engine_vs_torch  # noqa: E402
import suite_cluster  # noqa: E402
import suite_lib as L  # noqa: E402

CRITEO = os.path.join("..", "shared", "data", "criteo-kaggle-head10k")


def engine(quick, repeats):
    batches = [64, 256, 1024]
    res = engine_vs_torch.measure(["small", "dlrm-kaggle"], batches, repeats, 4 if quick else 1)
    rows = []
    for r in res:
        e, t = L.stat(r["engine_eps"]), L.stat(r["torch_eps"])
        g, p = L.stat(r["engine_gflops"]), L.stat(r["gemm_peak_gflops"])
        rows.append({"arch": r["arch"], "batch": r["batch"], "torch_blas": r["torch_blas"],
                     "engine_examples_per_second": e,
                     "torch_examples_per_second": t, "speedup": e["median"] / t["median"],
                     "engine_gflops": g, "gemm_peak_gflops": p, "fraction_of_peak": g["median"] / p["median"]})
    md = ("## 1. Engine: sequential train_step vs the PyTorch reference (1 thread each)\n\n"
          "%d round(s) per configuration, each the median of that tool's own timed repeats; "
          "GFLOP/s against a single-thread Eigen SGEMM peak measured in the same process; PyTorch's "
          "BLAS as its process loaded it.\n\n" % repeats)
    md += engine_vs_torch.report(res)
    L.write("engine", rows, md, {"repeats": repeats, "quick": quick})
    series = []
    for arch in ["small", "dlrm-kaggle"]:
        for tool, key in [("engine", "engine_examples_per_second"), ("PyTorch", "torch_examples_per_second")]:
            series.append(("%s %s" % (tool, arch), [(r["batch"], r[key]["median"]) for r in rows if r["arch"] == arch]))
    L.chart("engine", series, "Sequential engine vs PyTorch reference (1 thread)", "batch size",
            "examples/s (median)", logx=True, logy=True)
    return [("1 engine", "%s b%d: engine / PyTorch, %% of SGEMM peak" % (r["arch"], r["batch"]),
             "%.1fx, %.0f%%" % (r["speedup"], 100 * r["fraction_of_peak"])) for r in rows]


def torch_quality(seed, out):
    cmd = ["/usr/bin/python3", os.path.join(L.ROOT, "bench", "torch_reference.py"),
           "--train", os.path.join(CRITEO, "train-8k.tsv"), "--eval", os.path.join(CRITEO, "heldout-2k.tsv"),
           "--arch", "small", "--batch-size", "128", "--rows-per-table", "100000",
           "--sparse-optimizer", "rowwise-adagrad", "--seed", str(seed), "--output", out]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.load(open(out))


def criteo(quick, repeats):
    if not os.path.exists(os.path.join(CRITEO, "train-8k.tsv")):
        return [("5 criteo", "real Criteo rows", "skipped: %s not found" % CRITEO)]
    ini = ["--config-file=config/criteo-kaggle-head10k.ini"]
    configs = [("sequential (adagrad)", ini), ("sequential (rowwise-adagrad)", ini + ["--train.sparse-optimizer=rowwise-adagrad"]),
               ("s-easgd 4 trainers (adagrad)", ini + ["--cluster.mode=simulated", "--cluster.trainers=4",
                                                       "--sync.algorithm=s-easgd", "--scheduler.max-threads=2",
                                                       "--sim.clock=wall"])]
    res = {label: [] for label, _ in configs}
    tres = []
    n = max(repeats, 3)  # cheap: 8k rows; seeds 1..n give the spread
    for r in range(n):
        for label, args in configs:
            res[label].append(L.ce.run(args + ["--model.seed=%d" % (r + 1)], os.path.join(L.RESULTS, "tmp-criteo.json")))
        tres.append(torch_quality(r, os.path.join(L.RESULTS, "tmp-criteo-torch.json")))
    res["PyTorch reference (rowwise-adagrad)"] = tres
    rows, md_rows = [], []
    for label, ms in res.items():
        ne, auc = L.stat([m["eval_ne"] for m in ms]), L.stat([m["eval_auc"] for m in ms])
        rows.append({"config": label, "eval_ne": ne, "eval_auc": auc, "eval_logloss": L.stat([m["eval_logloss"] for m in ms])})
        md_rows.append([label, L.fmt((ne["median"], ne["min"], ne["max"]), 4), L.fmt((auc["median"], auc["min"], auc["max"]), 4)])
    md = ("## 5. Real data: Criteo Kaggle head, 8k train / 2k held-out rows\n\n"
          "small arch, batch 128, 100k rows per table, lr 0.03; %d seeds each (model.seed 1..%d, PyTorch seed "
          "0..%d; independent initialisations). config/criteo-kaggle-head10k.ini uses element-wise Adagrad "
          "for embeddings; the PyTorch reference implements row-wise Adagrad, so both are shown.\n\n" % (n, n, n - 1))
    md += L.table(md_rows, ["config", "eval NE median (min-max)", "eval AUC median (min-max)"])
    L.write("criteo", rows, md, {"seeds": n})
    L.chart("criteo", [(s, [(i, r["eval_ne"][s]) for i, r in enumerate(rows)]) for s in ("min", "median", "max")],
            "Criteo 8k/2k: eval NE over seeds", "", "eval NE", size=(900, 400),
            xtics=[(r["config"].replace(" (", "\\n("), i) for i, r in enumerate(rows)])
    return [("5 criteo", "eval NE / AUC: " + r["config"], "%.4f / %.4f" % (r["eval_ne"]["median"], r["eval_auc"]["median"]))
            for r in rows]


def multinode(quick, repeats):
    """Experiment 6: loopback 3-node cluster (TLS, plain TCP) vs one process (bench/suite_multinode.py)."""
    import suite_multinode
    return suite_multinode.multinode(quick, repeats)


def multinode_none(quick, repeats):
    """Experiment 6 with sync.algorithm=none: the data plane alone (bench/suite_multinode.py)."""
    import suite_multinode
    return suite_multinode.multinode(quick, repeats, sync="none")


def peak_rss_kb(cmd):
    """Runs cmd; returns (exit code, peak RSS in KiB of that child alone; Linux units)."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, usage.ru_maxrss


def memory(quick, repeats):
    sizes = [10000, 100000, 500000] if quick else [10000, 100000, 1000000, 1500000]
    tables, dim = 26, 16
    rows_n = 50000
    modes = [("sequential", ["--cluster.mode=sequential"]),
             ("simulated 2 trainers, 2 shards", ["--cluster.trainers=2", "--cluster.embedding-shards=2",
                                                 "--scheduler.max-threads=2", "--sim.clock=wall"])]
    rows = []
    for size in sizes:
        for label, args in modes:
            cmd = [L.binary(), "train", "--output.progress=none", "--model.rows-per-table=%d" % size] + \
                  L.synthetic_args(rows_n) + args
            rc, kb = peak_rss_kb(cmd)
            if rc != 0:
                sys.exit("memory run failed (%d): %s" % (rc, " ".join(cmd)))
            state = tables * size * (dim + 1) * 4
            rows.append({"mode": label, "rows_per_table": size, "embedding_state_bytes": state,
                         "peak_rss_bytes": kb * 1024, "rss_over_state": kb * 1024 / state})
            print("  memory %-32s rows %8d: state %7.1f MB, peak RSS %7.1f MB" % (label, size, state / 1e6, kb * 1024 / 1e6),
                  flush=True)
    md = ("## 7. Memory: peak RSS against the embedding state\n\n"
          "state = 26 tables x rows x (dim 16 + 1 row-wise Adagrad accumulator) x 4 bytes; %d train rows, small "
          "arch, peak RSS of the process (getrusage of the child). The slope is the extra RSS per extra byte of "
          "state between the two largest sizes (1.0 = the state is held once).\n\n" % rows_n)
    md_rows, out = [], []
    for label, _ in modes:
        rs = [r for r in rows if r["mode"] == label]
        slope = (rs[-1]["peak_rss_bytes"] - rs[-2]["peak_rss_bytes"]) / (rs[-1]["embedding_state_bytes"] - rs[-2]["embedding_state_bytes"])
        for r in rs:
            r["slope"] = slope
            md_rows.append([label, r["rows_per_table"], "%.1f" % (r["embedding_state_bytes"] / 1e6),
                            "%.1f" % (r["peak_rss_bytes"] / 1e6), "%.2f" % r["rss_over_state"], "%.2f" % slope])
        out.append(("7 memory", "RSS slope per state byte: " + label, "%.2f (largest: %.0f MB state, %.0f MB RSS)" % (
            slope, rs[-1]["embedding_state_bytes"] / 1e6, rs[-1]["peak_rss_bytes"] / 1e6)))
    md += L.table(md_rows, ["mode", "rows per table", "state MB", "peak RSS MB", "RSS / state", "slope"])
    L.write("memory", rows, md, {"train_rows": rows_n})
    series = [(label, [(r["embedding_state_bytes"] / 1e6, r["peak_rss_bytes"] / 1e6) for r in rows if r["mode"] == label])
              for label, _ in modes]
    top = max(r["embedding_state_bytes"] for r in rows) / 1e6
    series.append(("RSS = state", [(0.1, 0.1), (top, top)]))
    L.chart("memory", series, "Peak RSS vs embedding state", "embedding state (MB)", "peak RSS (MB)", logx=True, logy=True)
    return out


EXPERIMENTS = [("engine", engine), ("hogwild", suite_cluster.hogwild), ("claims", suite_cluster.claims),
               ("quality", suite_cluster.quality), ("criteo", criteo), ("multinode", multinode),
               ("multinode-none", multinode_none), ("memory", memory),
               ("timelines", suite_cluster.timelines)]


def write_summary(lines):
    path = os.path.join(L.RESULTS, "summary.json")
    old = json.load(open(path)) if os.path.exists(path) else {}
    old.update(lines)
    json.dump(old, open(path, "w"), indent=1)
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    md = ["# Benchmark summary", "",
          "Latest run of each experiment (`bench/run_suite.py`); machine: %s, %d cores, %s. Details and "
          "min-max ranges: bench/results/<name>.md." % (cpu, os.cpu_count(), platform.platform()), "",
          "Load = the 1-minute load average before / after the experiment (2 cores: above 2 means other "
          "work shared the cores and absolute speeds are low; compare ratios).", "",
          "| experiment | measure | result | size | finished | load |", "|---|---|---|---|---|---|"]
    old = {k: v for k, v in old.items() if k in dict(EXPERIMENTS)}
    for name, _ in EXPERIMENTS:
        if name in old:
            for exp, what, value in old[name]["lines"]:
                md.append("| %s | %s | %s | %s | %s | %s |" % (exp, what, value, old[name]["size"], old[name]["when"],
                                                           old[name].get("load", "?")))
    with open(os.path.join(L.RESULTS, "summary.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes: a few minutes per experiment")
    ap.add_argument("--only", nargs="+", choices=[n for n, _ in EXPERIMENTS], default=[n for n, _ in EXPERIMENTS])
    ap.add_argument("--repeats", type=int, help="runs per configuration (default 3, --quick 1)")
    ap.add_argument("--build", default="build", help="build folder with shadowsync and bench/bench_engine")
    ap.add_argument("--replot", action="store_true", help="only redraw the claims charts from bench/results/claims.json")
    a = ap.parse_args()
    os.chdir(L.ROOT)
    if a.replot:
        d = json.load(open(os.path.join(L.RESULTS, "claims.json")))
        suite_cluster.claims_charts(d["rows"], d["meta"]["trainers"])
        return
    L.set_build(a.build)
    repeats = a.repeats or (1 if a.quick else 3)
    lines = {}
    for name, fn in EXPERIMENTS:
        if name not in a.only:
            continue
        t0, load = time.time(), os.getloadavg()[0]
        print("== %s (%s, %d repeat(s))" % (name, "quick" if a.quick else "full", repeats), flush=True)
        out = fn(a.quick, repeats)
        lines[name] = {"lines": out, "size": ("quick" if a.quick else "full") + ", %d rep" % repeats,
                       "when": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "seconds": round(time.time() - t0),
                       "load": "%.1f / %.1f" % (load, os.getloadavg()[0])}
        print("== %s done in %.0f s" % (name, time.time() - t0), flush=True)
        for f in os.listdir(L.RESULTS):
            if f.startswith("tmp-"):
                os.remove(os.path.join(L.RESULTS, f))
    write_summary(lines)


if __name__ == "__main__":
    main()
