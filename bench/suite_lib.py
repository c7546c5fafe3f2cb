"""Shared pieces of bench/run_suite.py: paths, runs of `shadowsync train`,
medians, tables and the result files bench/results/<name>.{csv,json,md,png}.

Runs and medians come from cluster_experiments.py (run, measure, med, fmt,
table); this module adds the build folder choice, run folders with
timelines, synthetic data through `datagen`, and the writers."""
import csv
import json
import os
import statistics
import subprocess
import sys

import cluster_experiments as ce
import plot_runs

ROOT = ce.ROOT
RESULTS = ce.RESULTS
DATA = os.path.join(RESULTS, "data")
RUNS = os.path.join(RESULTS, "runs")    # run folders (train --output.dir) for the timeline charts
PLOTS = os.path.join(ROOT, "docs", "plots")

med, fmt, table, measure = ce.med, ce.fmt, ce.table, ce.measure


def set_build(build_dir):
    """Every tool of the suite (and the scripts it calls) uses this build folder."""
    os.environ["SS_BUILD_DIR"] = build_dir
    ce.BIN = os.path.join(ROOT, build_dir, "shadowsync")
    if not os.path.exists(ce.BIN):
        sys.exit("%s not found: build it first (cmake --build %s)" % (ce.BIN, build_dir))


def binary():
    return ce.BIN


def datagen(name, rows, seed, teacher=()):
    """bench/results/data/<name>.tsv (+ .meta.json), generated once."""
    os.makedirs(DATA, exist_ok=True)
    path = os.path.join(DATA, name + ".tsv")
    if not os.path.exists(path + ".meta.json"):
        cmd = [ce.BIN, "datagen", "--out=" + path, "--rows=%d" % rows, "--seed=%d" % seed] + list(teacher)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return path


def synthetic_args(rows):
    """train options for the default synthetic set of `rows` rows (eval: rows / 10)."""
    return ["--data.synthetic-rows=%d" % rows, "--data.synthetic-eval-rows=%d" % (rows // 10),
            "--data.synthetic-dir=" + DATA]


def bayes_ne(rows):
    meta = os.path.join(DATA, "teacher42-eval-%d-seed2.tsv.meta.json" % (rows // 10))
    return json.load(open(meta))["bayes_ne"] if os.path.exists(meta) else None


def run_dir(name):
    """--output.dir for a run whose timeline is plotted (kept under bench/results/runs)."""
    path = os.path.join(RUNS, name)
    return ["--output.dir=" + path, "--output.timeline-seconds=0.25"]


def stat(xs):
    """{median, min, max} of the non-null values (nulls when there are none)."""
    m, lo, hi = med(xs)
    return {"median": m, "min": lo, "max": hi}


def flatten(row):
    """{'a': {'median': 1, ...}} -> {'a_median': 1, ...} for the CSV."""
    out = {}
    for k, v in row.items():
        if isinstance(v, dict):
            for kk, vv in v.items():
                out[k + "_" + kk] = vv
        else:
            out[k] = v
    return out


def write(name, rows, md, meta):
    """bench/results/<name>.csv (one line per row), .json (meta + rows), .md."""
    os.makedirs(RESULTS, exist_ok=True)
    flat = [flatten(r) for r in rows]
    keys = []
    for r in flat:
        keys += [k for k in r if k not in keys]
    with open(os.path.join(RESULTS, name + ".csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in flat:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in keys})
    with open(os.path.join(RESULTS, name + ".json"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    with open(os.path.join(RESULTS, name + ".md"), "w") as f:
        f.write(md + "\n")
    print("\n" + md + "\n", flush=True)


def chart(name, series, title, xlabel, ylabel, **kw):
    """bench/results/<name>.png and a copy for docs/plots/<name>.png."""
    out = plot_runs.plot_xy(series, os.path.join(RESULTS, name), title, xlabel, ylabel,
                            formats=("png",), points=True, **kw)
    os.makedirs(PLOTS, exist_ok=True)
    for path in out:
        with open(path, "rb") as src, open(os.path.join(PLOTS, os.path.basename(path)), "wb") as dst:
            dst.write(src.read())
    return out


def timeline_charts(name, folders, labels):
    """docs/plots/<name>-{train_ne,examples_per_s,sync_gap}.png from run folders."""
    have = [(f, l) for f, l in zip(folders, labels) if os.path.exists(os.path.join(f, "timeline.csv"))]
    if not have:
        return
    out = os.path.join(RESULTS, "runs", name + "-charts")
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "bench", "plot_runs.py")] + [f for f, _ in have] +
                   ["--out", out, "--labels"] + [l for _, l in have] + ["--title", name],
                   check=True, stdout=subprocess.DEVNULL)
    os.makedirs(PLOTS, exist_ok=True)
    for chart_name in ("train_ne", "examples_per_s", "sync_gap"):
        src = os.path.join(out, chart_name + ".png")
        if os.path.exists(src):
            with open(src, "rb") as s, open(os.path.join(PLOTS, "%s-%s.png" % (name, chart_name)), "wb") as d:
                d.write(s.read())


def median_of(ms, key):
    xs = [m[key] for m in ms if m.get(key) is not None]
    return statistics.median(xs) if xs else None
