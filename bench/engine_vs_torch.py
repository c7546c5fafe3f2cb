#!/usr/bin/python3
"""Sequential engine vs the PyTorch reference, measured in one run.

  /usr/bin/python3 bench/engine_vs_torch.py [--arch small dlrm-kaggle] [--batch 64 256 1024]
                                           [--rounds 3] [--quick] [--scale K] [--name engine]
                                           [--torch-blas system|openblas|reference|DIR ...]

Alternates build/bench/bench_engine and bench/torch_reference.py --bench
(1 thread each) for every (arch, batch) and reports medians over the rounds of
each tool's own median, the speed-up ratio, and the engine's GFLOP/s against
the Eigen SGEMM peak bench_engine measures in the same process. PyTorch's row
names the BLAS library its process loaded and that library's one-thread SGEMM
GFLOP/s, measured in the same process: Debian's PyTorch does its GEMMs in
whatever libblas.so.3 provides (--torch-blas: several are alternated per round). Iterations
scale with 1/batch so every batch size times about the same examples
(--quick: a quarter, one round). Writes bench/results/NAME.{json,md} (--name,
default engine; the DCNv2 presets: --arch dcnv2-small --name engine-dcn);
bench/run_suite.py --only engine adds the CSV and the chart. The build
folder is $SS_BUILD_DIR (default build).

  /usr/bin/python3 bench/engine_vs_torch.py --train T.tsv [--max-examples N] [--multi-hot C1,C2,..
                                           [--pooling sum|mean]] --arch dcnv2-small --batch 256

times both on a file instead (one pass in file order, one thread each, alternated rounds):
`shadowsync train --cluster.mode=sequential` (its examples/s, which includes reading and parsing
the file as it trains) against torch_reference.py --train (its train loop; it parses first).
--multi-hot and its companions read those columns as bags in both tools. The table then has
each round's speed-up instead of the GFLOP/s.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from dcn_quality import add_multi_hot_args, engine_multi_hot, torch_multi_hot

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, os.environ.get("SS_BUILD_DIR", "build"))


def engine(arch, batch, examples=51200, repeats=5):
    out = subprocess.run([os.path.join(BUILD, "bench", "bench_engine"), "--arch=" + arch,
                          "--batch=%d" % batch, "--iterations=%d" % max(5, examples // batch),
                          "--repeats=%d" % repeats],
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    rows = [json.loads(l) for l in out.splitlines() if l.startswith('{"bench"')]
    gemm = [r for r in rows if r["bench"] == "gemm"][0]
    eng = [r for r in rows if r["bench"] == "engine"][0]
    return eng["examples_per_second_median"], eng["gflops"], gemm["gflops_median"]


# --torch-blas: the BLAS under PyTorch. Debian's python3-torch is built with BLAS_INFO=generic, so
# its GEMMs call libblas.so.3: the reference BLAS (libblas3, about 3 GFLOP/s on one core) unless an
# optimised one (libopenblas0-pthread, which scripts/deps.sh bench installs) provides it.
BLAS_DIRS = {"openblas": "/usr/lib/x86_64-linux-gnu/openblas-pthread",
             "reference": "/usr/lib/x86_64-linux-gnu/blas"}


def torch_env(blas):
    """The environment of a torch run on BLAS `blas` (system: what libblas.so.3 points to)."""
    env = dict(os.environ)
    if blas != "system":
        d = BLAS_DIRS.get(blas, blas)
        if not os.path.exists(os.path.join(d, "libblas.so.3")):
            sys.exit("--torch-blas %s: no libblas.so.3 in %s (openblas: apt-get install "
                     "libopenblas0-pthread)" % (blas, d))
        env["LD_LIBRARY_PATH"] = d + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    return env


def torch(arch, batch, examples=25600, repeats=5, blas="system"):
    """(examples/s median, the BLAS library loaded, its SGEMM GFLOP/s in the same process)."""
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "bench", "torch_reference.py"),
                        "--bench", "--arch", arch, "--batch-size", str(batch), "--threads", "1",
                        "--iterations", str(max(5, examples // batch)), "--warmup", "3",
                        "--repeats", str(repeats), "--output", f.name],
                       stdout=subprocess.DEVNULL, check=True, env=torch_env(blas))
        r = json.load(open(f.name))
        return r["examples_per_second_median"], r.get("blas", "unknown"), r.get("sgemm_gflops", 0.0)


def engine_file(a, arch, batch):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run([os.path.join(BUILD, "shadowsync"), "train", "--cluster.mode=sequential",
                        "--model.arch=" + arch, "--data.train=" + a.train, "--train.batch-size=%d" % batch,
                        "--train.max-examples=%d" % a.max_examples, "--output.metrics=" + f.name]
                       + engine_multi_hot(a), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        return json.load(open(f.name))["examples_per_second"]


def torch_file(a, arch, batch, seed, blas="system"):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "bench", "torch_reference.py"),
                        "--train", a.train, "--arch", arch, "--batch-size", str(batch), "--threads", "1",
                        "--seed", str(seed), "--max-examples", str(a.max_examples), "--output", f.name]
                       + torch_multi_hot(a), stdout=subprocess.DEVNULL, check=True, env=torch_env(blas))
        r = json.load(open(f.name))
        return r["examples_per_second"], r.get("blas", "unknown")


def measure_file(a):
    """Like measure(), on the file --train: [{arch, batch, torch_blas, engine_eps, torch_eps}]."""
    res = []
    for arch in a.arch:
        for b in a.batch:
            e, t = [], {x: [] for x in a.torch_blas}
            lib = {x: "" for x in a.torch_blas}
            for r in range(a.rounds):
                e.append(engine_file(a, arch, b))
                for x in a.torch_blas:
                    teps, lib[x] = torch_file(a, arch, b, r, x)
                    t[x].append(teps)
                    print("  %s batch %d round %d: engine %.0f ex/s, torch (%s) %.0f ex/s" %
                          (arch, b, r + 1, e[-1], x, t[x][-1]), flush=True)
            for x in a.torch_blas:
                res.append({"arch": arch, "batch": b, "torch_blas": lib[x], "engine_eps": e, "torch_eps": t[x],
                            "train": a.train, "multi_hot": a.multi_hot,
                            "pooling": a.pooling if a.multi_hot else None})
    return res


def report_file(res):
    lines = ["| arch | batch | PyTorch's BLAS | engine ex/s median (min-max) | PyTorch ex/s median (min-max) | "
             "speed-up per round | median |", "|---|---|---|---|---|---|---|"]
    for r in res:
        e, t = r["engine_eps"], r["torch_eps"]
        ratio = [x / y for x, y in zip(e, t)]
        lines.append("| %s | %d | %s | %.0f (%.0f-%.0f) | %.0f (%.0f-%.0f) | %s | %.1fx |" % (
            r["arch"], r["batch"], r.get("torch_blas", "system"), statistics.median(e), min(e), max(e),
            statistics.median(t), min(t), max(t), ", ".join("%.1fx" % x for x in ratio), statistics.median(ratio)))
    return "\n".join(lines)


def measure(archs, batches, rounds, scale=1, blases=("system",)):
    """[{arch, batch, torch_blas, engine_eps, torch_eps, engine_gflops, gemm_peak_gflops,
    torch_sgemm_gflops}], one value per round; every round runs the engine, then PyTorch on each BLAS
    of `blases` in turn (the rows of one (arch, batch) share the engine's rounds)."""
    res = []
    for arch in archs:
        for b in batches:
            e, g, p = [], [], []
            t = {x: [] for x in blases}
            lib = {x: "" for x in blases}
            peak_t = {x: [] for x in blases}
            for r in range(rounds):
                eps, gf, peak = engine(arch, b, 51200 // scale, 3 if scale > 1 else 5)
                e.append(eps), g.append(gf), p.append(peak)
                for x in blases:
                    teps, lib[x], tpeak = torch(arch, b, 25600 // scale, 3, x)
                    t[x].append(teps), peak_t[x].append(tpeak)
                    print("  %s batch %d round %d: engine %.0f ex/s, torch (%s) %.0f ex/s" %
                          (arch, b, r + 1, eps, x, teps), flush=True)
            for x in blases:
                res.append({"arch": arch, "batch": b, "torch_blas": lib[x], "engine_eps": e, "torch_eps": t[x],
                            "engine_gflops": g, "gemm_peak_gflops": p, "torch_sgemm_gflops": peak_t[x]})
    return res


def report(res):
    """The Markdown table of measure()'s result."""
    lines = ["| arch | batch | engine ex/s median (min-max) | PyTorch ex/s median (min-max) | speed-up | "
             "engine GFLOP/s | SGEMM peak GFLOP/s | % of peak | PyTorch's BLAS (its SGEMM GFLOP/s) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in res:
        me, mt = statistics.median(r["engine_eps"]), statistics.median(r["torch_eps"])
        mg, mp = statistics.median(r["engine_gflops"]), statistics.median(r["gemm_peak_gflops"])
        tp = statistics.median(r.get("torch_sgemm_gflops") or [0.0])
        lines.append("| %s | %d | %.0f (%.0f-%.0f) | %.0f (%.0f-%.0f) | %.1fx | %.1f | %.1f | %.0f%% | %s (%.1f) |" % (
            r["arch"], r["batch"], me, min(r["engine_eps"]), max(r["engine_eps"]), mt, min(r["torch_eps"]),
            max(r["torch_eps"]), me / mt, mg, mp, 100 * mg / mp, r.get("torch_blas", "unknown"), tp))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", nargs="+", default=["small", "dlrm-kaggle"])
    ap.add_argument("--batch", nargs="+", type=int, default=[64, 256, 1024])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="a quarter of the iterations, one round")
    ap.add_argument("--scale", type=int, default=0,
                    help="divide the examples timed by this (default 1; --quick: 4), e.g. 16 for dlrm-dcnv2")
    ap.add_argument("--torch-blas", nargs="+", default=["system"],
                    help="PyTorch's BLAS, one or more, alternated in every round: system (libblas.so.3 as "
                    "installed), openblas, reference, or a folder holding a libblas.so.3")
    ap.add_argument("--name", help="results file name: bench/results/NAME.{json,md} (default engine; "
                    "with --train engine-file)")
    ap.add_argument("--train", help="time both tools training on this file instead of random batches")
    ap.add_argument("--max-examples", type=int, default=0, help="--train: the first N examples (0: all)")
    add_multi_hot_args(ap)
    a = ap.parse_args()
    if a.multi_hot and not a.train:
        ap.error("--multi-hot needs --train (bench_engine's random batches are single-hot)")
    a.name = a.name or ("engine-file" if a.train else "engine")
    if a.train:
        res = measure_file(a)
        md = report_file(res)
    else:
        res = measure(a.arch, a.batch, 1 if a.quick else a.rounds, a.scale or (4 if a.quick else 1),
                      a.torch_blas)
        md = report(res)
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    json.dump(res, open(os.path.join(ROOT, "bench", "results", a.name + ".json"), "w"), indent=1)
    open(os.path.join(ROOT, "bench", "results", a.name + ".md"), "w").write(md + "\n")
    print("\n" + md)


if __name__ == "__main__":
    main()
