#!/usr/bin/env python3
"""DCT against issue 36's goals (docs/dct.md): at the defaults, on the virtual
clock (deterministic: one run per cell), on two generated sets (seeds 1, 2):
- dct.dp: bytes per round against the dense sync, and eval NE against the
  dense run, S-EASGD, S-MA and S-BMUF at 4 and 16 trainers;
- dct.mp: lookup + push bytes per example against dense, 2 trainers
  (--mp-trainers);
- end to end: virtual seconds at 1 and 10 Gbit/s, 16 trainers, dense against
  dct.mp, dct.dp and both.
Two runs at a time (the virtual clock is one thread). Extra options after
`--` go to every DCT run (e.g. -- --dct.dp-keep=0.002).

usage: bench/dct_goals.py [--shadowsync build/shadowsync] [--parts dp,mp,e2e]
       [--seeds 1,2] [--rows 200000] [--trainers 4,16] [--mp-trainers 2]
       [--work DIR] [-- OPTIONS...]
Results are cached in WORK by the run's arguments, so a rerun only runs
what changed.
"""
import argparse, concurrent.futures as cf, hashlib, json, os, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument("--shadowsync", default="build/shadowsync")
ap.add_argument("--parts", default="dp,mp,e2e")
ap.add_argument("--seeds", default="1,2")
ap.add_argument("--rows", type=int, default=200000)
ap.add_argument("--trainers", default="4,16", help="dp: the numbers of trainers")
ap.add_argument("--mp-trainers", default="2", help="mp: the numbers of trainers")
ap.add_argument("--algorithms", default="s-easgd,s-ma,s-bmuf")
ap.add_argument("--work", default="/tmp/dct-goals")
ap.add_argument("--jobs", type=int, default=2)
ap.add_argument("extra", nargs="*")
a = ap.parse_args()
os.makedirs(a.work, exist_ok=True)


def base(seed):
    return ["--sim.clock=virtual", "--cluster.mode=simulated", "--output.progress=none",
            f"--data.synthetic-rows={a.rows}", f"--data.synthetic-seed={seed}",
            f"--data.synthetic-dir={a.work}/data", "--cluster.embedding-shards=4"]


def metrics(args):
    key = hashlib.sha1(" ".join(args).encode()).hexdigest()[:16]
    out = os.path.join(a.work, key + ".json")
    if not os.path.exists(out):
        p = subprocess.run([a.shadowsync, "train"] + args + [f"--output.metrics={out}.tmp"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            sys.exit(f"failed: {' '.join(args)}\n{p.stdout[-2000:]}")
        os.rename(out + ".tmp", out)
    return json.load(open(out))


def run_all(jobs):
    """jobs: {name: args}; runs them two at a time, returns {name: metrics}."""
    # The first run of a seed generates its data: one per seed first.
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        futs = {n: ex.submit(metrics, args) for n, args in jobs.items()}
        return {n: f.result() for n, f in futs.items()}


def ne_change(m, dense):
    return 100 * (m["eval_ne"] - dense["eval_ne"]) / dense["eval_ne"]


seeds = [int(s) for s in a.seeds.split(",")]
parts = a.parts.split(",")
for s in seeds:  # generate each set once, alone (a run the dp table needs)
    metrics(base(s) + ["--cluster.trainers=4", "--sync.algorithm=s-easgd"])

if "dp" in parts:
    jobs = {}
    for s in seeds:
        for n in a.trainers.split(","):
            for alg in a.algorithms.split(","):
                args = base(s) + [f"--cluster.trainers={n}", f"--sync.algorithm={alg}"]
                jobs[(s, n, alg, "dense")] = args
                jobs[(s, n, alg, "dct")] = args + ["--dct.dp=true"] + a.extra
    r = run_all(jobs)
    print("| set | method | trainers | dense eval NE | reduction | KB per round | eval NE | vs dense "
          "| sent / replied |\n|---|---|---|---|---|---|---|---|---|")
    for (s, n, alg, kind), m in r.items():
        if kind != "dct":
            continue
        dense = r[(s, n, alg, "dense")]
        d, sy = m["dct"], m["sync"]
        per_round = d["bytes_per_round"] if "bytes_per_round" in d else 0
        rep = f" / {100 * d['reply_fraction']:.2f} %" if alg.endswith("easgd") else ""
        print(f"| {s} | {alg} | {n} | {dense['eval_ne']:.4f} | {d['reduction']:.1f}x | "
              f"{per_round / 1e3:.2f} | {m['eval_ne']:.4f} | {ne_change(m, dense):+.2f} % | "
              f"{100 * d['sent_fraction']:.2f} %{rep} |", flush=True)

if "mp" in parts:
    jobs = {}
    mp_trainers = a.mp_trainers.split(",")
    for s in seeds:
        for n in mp_trainers:
            args = base(s) + [f"--cluster.trainers={n}", "--sync.algorithm=s-easgd"]
            jobs[(s, n, "dense")] = args
            jobs[(s, n, "mp")] = args + ["--dct.mp=true"] + a.extra
    r = run_all(jobs)
    print("| set | trainers | dense eval NE | bytes/example | reduction | eval NE | vs dense | rows / grads sent |"
          "\n|---|---|---|---|---|---|---|---|")
    for s, n in ((s, n) for s in seeds for n in mp_trainers):
        m, dense = r[(s, n, "mp")], r[(s, n, "dense")]
        d = m["dct"]["mp"]
        print(f"| {s} | {n} | {dense['eval_ne']:.4f} | {d['bytes_per_example']:.1f} | {d['reduction']:.2f}x | "
              f"{m['eval_ne']:.4f} | {ne_change(m, dense):+.2f} % | {100 * d['row_fraction']:.1f} % / "
              f"{100 * d['grad_fraction']:.2f} % |", flush=True)

if "e2e" in parts:
    jobs = {}
    for s in seeds[:1]:
        for g in (1, 10):
            args = base(s) + ["--cluster.trainers=16", "--sync.algorithm=s-easgd",
                              "--net.enabled=true", f"--net.bandwidth-gbps={g}"]
            jobs[(g, "dense")] = args
            jobs[(g, "mp")] = args + ["--dct.mp=true"] + a.extra
            jobs[(g, "dp")] = args + ["--dct.dp=true"] + a.extra
            jobs[(g, "both")] = args + ["--dct.mp=true", "--dct.dp=true"] + a.extra
    r = run_all(jobs)
    print("| Gbit/s | dense | dct.mp | dct.dp | both |\n|---|---|---|---|---|")
    for g in (1, 10):
        dense = r[(g, "dense")]
        t0 = dense["sim"]["virtual_seconds"]
        cells = [f"{t0:.4f} ({dense['eval_ne']:.4f})"]
        for k in ("mp", "dp", "both"):
            m = r[(g, k)]
            t = m["sim"]["virtual_seconds"]
            cells.append(f"{t:.4f}, {100 * (t - t0) / t0:+.1f} % ({m['eval_ne']:.4f})")
        print(f"| {g} | " + " | ".join(cells) + " |", flush=True)
