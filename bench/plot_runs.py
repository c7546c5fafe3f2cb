#!/usr/bin/python3
"""Charts of training runs with Debian's gnuplot (package gnuplot-nox).

  /usr/bin/python3 bench/plot_runs.py RUN_DIR [RUN_DIR ...] [--out DIR] [--formats png svg]
                                      [--labels A B ...] [--title TEXT]

Each RUN_DIR is a folder written by `shadowsync train --output.dir=RUN_DIR`
(timeline.csv, metrics.json, config.ini). Writes into --out (default: the
first run folder):
  train_ne.{png,svg}        progressive train NE against examples
  examples_per_s.{png,svg}  examples/s (per timeline interval) against time
  sync_gap.{png,svg}        mean batches between sync rounds so far, against time
One line per run, labelled by folder name (or --labels). Only the Python
standard library and gnuplot are used; `plot_xy` is also used by
bench/run_suite.py for the experiment charts.
"""
import argparse
import csv
import os
import shutil
import subprocess
import sys

TERMINALS = {
    "png": "pngcairo size %d,%d font 'sans,10' noenhanced",
    "svg": "svg size %d,%d font 'sans,10' noenhanced",
}


def gnuplot():
    exe = shutil.which("gnuplot")
    if not exe:
        sys.exit("gnuplot not found: install Debian's gnuplot-nox (./scripts/deps.sh does)")
    return exe


def quote(text):
    return "'" + str(text).replace("'", "''") + "'"


def plot_xy(series, out_base, title, xlabel, ylabel, formats=("png", "svg"), logx=False,
            logy=False, points=False, size=(720, 440), xtics=None):
    """series: list of (label, [(x, y), ...]). Writes out_base.<fmt> per format."""
    if not any(pts for _, pts in series):
        print("plot: no data for %s" % out_base, file=sys.stderr)
        return []
    blocks, plots = [], []
    for i, (label, pts) in enumerate(series):  # i keeps a run's colour when another has no data
        if not pts:
            continue
        blocks.append("$d%d << EOD\n%s\nEOD\n" % (i, "\n".join("%.9g %.9g" % p for p in pts)))
        style = "linespoints pt 7 ps 0.6" if points else "lines"
        # 8 colours, then the same colours dashed, so up to 16 lines stay apart.
        plots.append("$d%d using 1:2 with %s lw 2 lc %d dt %d title %s" % (i, style, i % 8 + 1, 1 + i // 8,
                                                                           quote(label)))
    written = []
    for fmt in formats:
        path = "%s.%s" % (out_base, fmt)
        script = "".join(blocks)
        script += "set terminal %s\nset output %s\n" % (TERMINALS[fmt] % size, quote(path))
        script += "set title %s\nset xlabel %s\nset ylabel %s\n" % (quote(title), quote(xlabel),
                                                                  quote(ylabel))
        script += "set grid\nset key outside right top\nset border 3\nset tics nomirror\n"
        if logx:
            script += "set logscale x 2\n"
        if logy:
            script += "set logscale y\n"
        if xtics:
            script += "set xtics (%s)\n" % ", ".join("%s %g" % (quote(l), v) for l, v in xtics)
        script += "plot " + ", \\\n  ".join(plots) + "\nunset output\n"
        p = subprocess.run([gnuplot()], input=script, text=True, stderr=subprocess.PIPE)
        if p.returncode != 0:
            sys.exit("gnuplot failed for %s:\n%s" % (path, p.stderr))
        written.append(path)
    return written


def read_timeline(run_dir):
    """Rows of run_dir/timeline.csv as dicts of floats (None for empty fields)."""
    path = os.path.join(run_dir, "timeline.csv")
    if not os.path.exists(path):
        sys.exit("%s: no timeline.csv (run `shadowsync train --output.dir=%s` first)" % (run_dir, run_dir))
    with open(path) as f:
        return [{k: (float(v) if v not in ("", None) else None) for k, v in row.items()}
                for row in csv.DictReader(f)]


def column(rows, x, y):
    return [(r[x], r[y]) for r in rows if r.get(x) is not None and r.get(y) is not None]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", help="run folders (train --output.dir)")
    ap.add_argument("--out", help="output folder (default: the first run folder)")
    ap.add_argument("--labels", nargs="*", help="one label per run (default: folder names)")
    ap.add_argument("--formats", nargs="+", default=["png", "svg"], choices=sorted(TERMINALS))
    ap.add_argument("--title", default="", help="prefix of the chart titles")
    a = ap.parse_args()
    labels = a.labels or [os.path.basename(os.path.normpath(r)) for r in a.runs]
    if len(labels) != len(a.runs):
        sys.exit("--labels: %d labels for %d runs" % (len(labels), len(a.runs)))
    out = a.out or a.runs[0]
    os.makedirs(out, exist_ok=True)
    data = [(label, read_timeline(r)) for label, r in zip(labels, a.runs)]
    prefix = (a.title + ": ") if a.title else ""
    charts = [("train_ne", "examples", "train_ne", "train NE against examples", "examples",
               "train NE (progressive)"),
              ("examples_per_s", "time_s", "examples_per_s", "examples/s against time",
               "time (s)", "examples/s"),
              ("sync_gap", "time_s", "sync_gap", "sync gap against time", "time (s)",
               "batches between sync rounds (mean so far)")]
    for name, x, y, title, xl, yl in charts:
        series = [(label, column(rows, x, y)) for label, rows in data]
        for path in plot_xy(series, os.path.join(out, name), prefix + title, xl, yl, a.formats):
            print(path)


if __name__ == "__main__":
    main()
