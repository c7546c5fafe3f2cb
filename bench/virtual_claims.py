#!/usr/bin/python3
"""ShadowSync's claims on the virtual clock (docs/RESULTS.md section 3).

Every sync method at N = 1..64 trainers (2 Hogwild workers each, N/2
embedding shards, one dense shard; EASGD methods also with two), network
model at 25 and 1 Gbit/s (20 us), on the virtual clock with the default
cost constants. Virtual-clock runs are deterministic: one run per cell is
the figure, and wall time only decides how long this takes (two runs at a
time here).

  /usr/bin/python3 bench/virtual_claims.py [--build build] [--rows 200000] [--max-n 64] [--jobs 2]

Writes bench/results/virtual_claims.{json,md} and docs/plots/virtual-claims*.png.
"""
import argparse
import concurrent.futures as cf
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import suite_lib as L  # noqa: E402

METHODS = [("none", None), ("s-easgd", None), ("s-ma", None), ("s-bmuf", None),
           ("fr-easgd", 1), ("fr-easgd", 10), ("fr-ma", 1), ("fr-ma", 10), ("fr-bmuf", 1), ("fr-bmuf", 10)]


def label(alg, k):
    return alg if k is None else "%s k=%d" % (alg, k)


def ring(alg):
    return alg.endswith("-ma") or alg.endswith("-bmuf")


def configs(trainers):
    out = []
    for bw in (25, 1):
        for alg, k in METHODS:
            for d in ((1, 2) if "easgd" in alg else (1,)):
                for n in trainers:
                    if ring(alg) and n == 1:
                        continue
                    out.append({"method": label(alg, k), "algorithm": alg, "k": k, "trainers": n,
                                "dense_shards": d, "bandwidth_gbps": bw})
    return out


def args_of(c, common):
    a = common + ["--cluster.mode=simulated", "--sim.clock=virtual", "--net.enabled=true",
                  "--net.latency-us=20", "--net.bandwidth-gbps=%d" % c["bandwidth_gbps"],
                  "--cluster.trainers=%d" % c["trainers"], "--cluster.workers=2",
                  "--cluster.embedding-shards=%d" % max(1, c["trainers"] // 2),
                  "--cluster.dense-shards=%d" % c["dense_shards"], "--sync.algorithm=" + c["algorithm"],
                  "--output.progress=none"]
    if c["k"] is not None:
        a.append("--sync.k=%d" % c["k"])
    return a


def run_one(i, c, common):
    out = os.path.join(L.RESULTS, "tmp-vclaims-%d.json" % i)
    p = subprocess.run([L.binary(), "train"] + args_of(c, common) + ["--output.metrics=" + out],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (c, p.returncode, p.stderr[-2000:]))
    m = json.load(open(out))
    os.remove(out)
    r = dict(c)
    r.update({"simulated_examples_per_second": m["examples_per_second"], "eval_ne": m["eval_ne"],
              "blocked_fraction": m["sync"]["worker_blocked_fraction"], "sync_gap": m["sync"]["sync_gap_mean"],
              "rounds": m["sync"]["rounds"], "lookup_wait_fraction": m["lookup_wait_fraction"],
              "virtual_seconds": m["sim"]["virtual_seconds"], "handlers": m["sim"]["handlers"],
              "nic_max": max(m["net"]["nic_utilisation"]), "net_bytes": m["net"]["bytes"]})
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(L.ROOT, "build"))
    ap.add_argument("--rows", type=int, default=200000)
    ap.add_argument("--max-n", type=int, default=64)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    L.set_build(a.build)
    trainers = [n for n in (1, 2, 4, 8, 16, 32, 64, 128, 256) if n <= a.max_n]
    common = L.synthetic_args(a.rows)
    todo = configs(trainers)
    rows = [run_one(0, todo[0], common)]  # alone: it generates the data
    with cf.ThreadPoolExecutor(a.jobs) as pool:
        futs = {pool.submit(run_one, i + 1, c, common): c for i, c in enumerate(todo[1:])}
        for f in cf.as_completed(futs):
            r = f.result()
            rows.append(r)
            print("  %-14s N=%-3d d=%d %2d Gbit/s %10.0f ex/s  NE %.4f  blocked %5.1f%%" % (
                r["method"], r["trainers"], r["dense_shards"], r["bandwidth_gbps"],
                r["simulated_examples_per_second"], r["eval_ne"] or float("nan"), 100 * r["blocked_fraction"]),
                flush=True)
    write(rows, trainers, a.rows)


def write(rows, trainers, rows_n):
    by = {(r["method"], r["trainers"], r["dense_shards"], r["bandwidth_gbps"]): r for r in rows}
    base = {bw: by[("none", 1, 1, bw)]["simulated_examples_per_second"] for bw in (25, 1)}
    methods = [label(a, k) for a, k in METHODS]
    md = ("## ShadowSync's claims on the virtual clock\n\n"
          "%d train rows, %d eval rows (synthetic, Bayes NE %s), `small`, batch 128, 2 workers per trainer, "
          "N/2 embedding shards, network model 20 us; `sim.clock=virtual` with the default cost constants; one "
          "run per cell (deterministic). Command: `/usr/bin/python3 bench/virtual_claims.py`.\n\n"
          % (rows_n, rows_n // 10, L.bayes_ne(rows_n)))

    def grid(title, cell, d=1, bw=25):
        body = []
        for m in methods:
            body.append([m] + [cell(by[(m, n, d, bw)], n, bw) if (m, n, d, bw) in by else "-" for n in trainers])
        return "### %s\n\n%s\n\n" % (title, L.table(body, ["method"] + ["N=%d" % n for n in trainers]))

    for bw in (25, 1):
        md += grid("Simulated ex/s, %d Gbit/s, one dense shard" % bw,
                   lambda r, n, bw: "%.0f" % r["simulated_examples_per_second"], bw=bw)
        md += grid("Scaling efficiency (ex/s / (N x `none` at N = 1)), %d Gbit/s" % bw,
                   lambda r, n, bw: "%.3f" % (r["simulated_examples_per_second"] / (n * base[bw])), bw=bw)
        md += grid("Relative to `none` at the same N / worker time blocked, %d Gbit/s" % bw,
                   lambda r, n, bw: "%.3f / %.1f%%" % (
                       r["simulated_examples_per_second"] / by[("none", n, 1, bw)]["simulated_examples_per_second"],
                       100 * r["blocked_fraction"]), bw=bw)
        md += grid("Eval NE, %d Gbit/s" % bw, lambda r, n, bw: "%.4f" % r["eval_ne"], bw=bw)
        md += grid("Sync gap (batches between rounds), %d Gbit/s" % bw,
                   lambda r, n, bw: "%.1f" % r["sync_gap"] if r["sync_gap"] is not None else "-", bw=bw)
        md += grid("Busiest NIC's utilisation, %d Gbit/s" % bw,
                   lambda r, n, bw: "%.1f%%" % (100 * r["nic_max"]), bw=bw)
    easgd = [m for m in methods if "easgd" in m]
    for bw in (25, 1):
        body = []
        for m in easgd:
            body.append([m] + ["%.0f / %.0f" % (by[(m, n, 1, bw)]["simulated_examples_per_second"],
                                                by[(m, n, 2, bw)]["simulated_examples_per_second"])
                               if (m, n, 2, bw) in by else "-" for n in trainers])
        md += ("### EASGD with one / two dense shards, simulated ex/s, %d Gbit/s\n\n%s\n\n"
               % (bw, L.table(body, ["method"] + ["N=%d" % n for n in trainers])))
    L.write("virtual_claims", rows, md, {"rows": rows_n, "trainers": trainers})
    plotted = ["none", "s-easgd", "s-ma", "s-bmuf", "fr-easgd k=1", "fr-ma k=1", "fr-bmuf k=1"]
    for bw in (25, 1):
        L.chart("virtual-claims-%dg" % bw,
                [(m, [(n, by[(m, n, 1, bw)]["simulated_examples_per_second"]) for n in trainers
                      if (m, n, 1, bw) in by]) for m in plotted],
                "Simulated examples/s vs trainers, virtual clock, %d Gbit/s" % bw, "trainers",
                "simulated examples/s", logx=True, logy=True)
    L.chart("virtual-claims-ne",
            [(m, [(n, by[(m, n, 1, 25)]["eval_ne"]) for n in trainers if (m, n, 1, 25) in by]) for m in plotted],
            "Eval NE vs trainers, virtual clock, 25 Gbit/s", "trainers", "eval NE", logx=True)


if __name__ == "__main__":
    main()
