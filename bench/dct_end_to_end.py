#!/usr/bin/env python3
"""DCT end to end on the virtual clock (issue 13; docs/dct.md): virtual
seconds to train one pass with and without dct.dp, 16 trainers, S-EASGD and
FR-EASGD, at 1 and 10 Gbit/s (keep 0.01, refresh 10); then the sync gap at
25 Gbit/s, 4 trainers, S-EASGD back to back (keep 0.1), dense against DCT.
Deterministic: one run per cell. Data as bench/dct_sweep.py.

usage: bench/dct_end_to_end.py [--shadowsync build/shadowsync] [--train F --eval F]
       [--out bench/results/dct_end_to_end]
"""
import json, os, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_data

ap = bench_data.arg_parser("bench/results/dct_end_to_end")
a = ap.parse_args()
bench_data.ensure_planted(a)
work = tempfile.mkdtemp(prefix="dct-e2e-")


def run(name, args):
    return bench_data.train_metrics(
        a.shadowsync, work, name,
        [f"--data.train={a.train}", f"--data.eval={a.eval}", "--cluster.mode=simulated",
         "--sim.clock=virtual", "--net.enabled=true", "--output.progress=none"] + args)


lines = ["# DCT end to end (bench/dct_end_to_end.py)", "",
         "16 trainers, keep 0.01, refresh 10: virtual seconds for one pass "
         "(workers blocked, FR), dense -> DCT.", "",
         "| algorithm | Gbit/s | dense | DCT | change |", "|---|---|---|---|---|"]
for alg in ("s-easgd", "fr-easgd"):
    for bw in (1, 10):
        m = {dp: run(f"{alg}-{bw}-{dp}", [f"--sync.algorithm={alg}", "--cluster.trainers=16",
                                          f"--net.bandwidth-gbps={bw}", f"--dct.dp={dp}",
                                          "--dct.dp-keep=0.01", "--dct.refresh=10"])
             for dp in ("false", "true")}
        t = {dp: m[dp]["sim"]["virtual_seconds"] for dp in m}
        b = {dp: 100 * m[dp]["sync"]["worker_blocked_fraction"] for dp in m}
        lines.append(f"| {alg} | {bw} | {t['false']:.4f} ({b['false']:.2f} %) | "
                     f"{t['true']:.4f} ({b['true']:.2f} %) | "
                     f"{100 * (t['true'] - t['false']) / t['false']:+.1f} % |")
lines += ["", "Sync gap at 25 Gbit/s, 4 trainers, S-EASGD, sync.min-gap-batches=0, keep 0.1:", "",
          "| | dense | DCT |", "|---|---|---|"]
g = {dp: run(f"gap-{dp}", ["--sync.algorithm=s-easgd", "--cluster.trainers=4",
                           "--net.bandwidth-gbps=25", "--sync.min-gap-batches=0",
                           f"--dct.dp={dp}", "--dct.dp-keep=0.1"])["sync"]["sync_gap_mean"]
     for dp in ("false", "true")}
lines.append(f"| mean batches between rounds | {g['false']:.4f} | {g['true']:.4f} |")
open(a.out + ".md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
