#!/usr/bin/env python3
"""DCT on the embedding traffic (dct.mp; issue 13; docs/dct.md): lookup +
push bytes per example against eval NE over keep fractions, on the virtual
clock (deterministic: one run per cell). S-EASGD at 4 and 16 trainers:
dense against both backward passes (mask: the gradients of the entries
received; straight: thresholded gradients with per-row error feedback);
the gradient keep and error feedback at one row keep; the real Criteo rows
when present; then one pass end to end at 16 trainers, 1 and 10 Gbit/s,
dense against dct.mp, dct.dp and both.

Bytes are payloads: the rows of lookup replies plus the keys and gradients
of pushes, summed over workers (a lookup request's 8-byte keys are the same
either way and not counted). Reduction = what dense moves for the same keys
over what moved.

usage: bench/dct_mp_sweep.py [--shadowsync build/shadowsync] [--train F --eval F]
       [--criteo DIR] [--out bench/results/dct_mp_sweep]
       bench/dct_mp_sweep.py --plot-only bench/results/dct_mp_sweep.json
The chart goes to docs/plots/dct_mp_curve.png.
"""
import json, os, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_data

ap = bench_data.arg_parser("bench/results/dct_mp_sweep")
ap.add_argument("--plot-only", metavar="JSON", help="draw the chart from a sweep's points and stop")
a = ap.parse_args()


def plot_curve(curve, out_base):
    """Reduction against eval NE change, one line per (trainers, backward)."""
    import plot_runs
    keys = sorted({(t, b) for t, b, k, r, d in curve})
    series = [(f"{t} trainers, {b}", sorted((r, d) for tt, bb, k, r, d in curve
                                            if (tt, bb) == (t, b))) for t, b in keys]
    os.makedirs(os.path.dirname(out_base), exist_ok=True)
    plot_runs.plot_xy(series, out_base,
                      "DCT on lookups and pushes: bytes against eval NE (row keep 0.3 ... 0.03)",
                      "dense bytes / DCT bytes (x)", "eval NE vs dense (%)", formats=("png",),
                      points=True)


if a.plot_only:
    plot_curve(json.load(open(a.plot_only)), "docs/plots/dct_mp_curve")
    sys.exit(0)

bench_data.ensure_planted(a)
work = tempfile.mkdtemp(prefix="dct-mp-")
BASE = ["--sim.clock=virtual", "--cluster.mode=simulated", "--sync.algorithm=s-easgd",
        "--output.progress=none"]


def run(name, args):
    return bench_data.train_metrics(a.shadowsync, work, name, BASE + args)


def ne_change(m, dense):
    return 100 * (m["eval_ne"] - dense["eval_ne"]) / dense["eval_ne"]


def row(label, m, dense):
    b = m["bytes"]
    per_ex = (b["lookup"] + b["push"]) / max(1, m["examples"])
    d = (m.get("dct") or {}).get("mp")
    red = f"{d['reduction']:.1f}x" if d else "1x"
    rows = f"{100 * d['row_fraction']:.2f}" if d else "100"
    grads = f"{100 * d['grad_fraction']:.2f}" if d else "100"
    return (f"| {label} | {per_ex:.1f} | {red} | {rows} | {grads} | {m['eval_ne']:.4f} | "
            f"{ne_change(m, dense):+.2f}% | {m['sim']['virtual_seconds']:.3f} |")


HEAD = ("| run | bytes per example (rows + pushes) | reduction | % of row entries sent | "
        "% of gradient entries sent | eval NE | NE vs dense | virtual s |\n"
        "|---|---|---|---|---|---|---|---|")


def mp(keep, backward="straight", grad_keep="0.01", extra=()):
    return ["--dct.mp=true", f"--dct.mp-keep={keep}", f"--dct.mp-backward={backward}",
            f"--dct.mp-grad-keep={grad_keep}", "--dct.refresh=10"] + list(extra)


lines = ["# DCT on the embedding traffic (bench/dct_mp_sweep.py)", "",
         "Virtual clock, deterministic; generated data (100k train rows, 20k eval), S-EASGD, "
         "refresh 10. Bytes: lookup replies' rows and pushes' keys + gradients, payload, "
         "summed over workers.", ""]
curve = []
for trainers, keeps, mask_keeps in ((4, ("0.3", "0.1", "0.05", "0.03"), ("0.3", "0.1", "0.03")),
                                    (16, ("0.3", "0.1", "0.03"), ("0.1",))):
    data = [f"--data.train={a.train}", f"--data.eval={a.eval}", f"--cluster.trainers={trainers}"]
    dense = run(f"dense-{trainers}", data)
    lines += [f"## {trainers} trainers", "", HEAD, row("dense (dct.mp off)", dense, dense)]
    for keep in keeps:
        m = run(f"s{keep}-{trainers}", data + mp(keep))
        lines.append(row(f"straight, keep {keep}, gradient keep 0.01", m, dense))
        curve.append((trainers, "straight", float(keep), m["dct"]["mp"]["reduction"],
                      ne_change(m, dense)))
    for keep in mask_keeps:
        m = run(f"m{keep}-{trainers}", data + mp(keep, "mask"))
        lines.append(row(f"mask, keep {keep}", m, dense))
        curve.append((trainers, "mask", float(keep), m["dct"]["mp"]["reduction"],
                      ne_change(m, dense)))
    if trainers == 4:
        for gk in ("0.1", "0.001"):
            m = run(f"g{gk}", data + mp("0.1", grad_keep=gk))
            lines.append(row(f"straight, keep 0.1, gradient keep {gk}", m, dense))
        m = run("noef", data + mp("0.1", extra=["--dct.error-feedback=false"]))
        lines.append(row("straight, keep 0.1, gradient keep 0.01, error feedback off", m, dense))
    lines.append("")
    print("\n".join(lines[-16:]), flush=True)

crit_train = os.path.join(a.criteo, "train-8k.tsv")
if os.path.exists(crit_train):
    data = ["--config-file=config/criteo-kaggle-head10k.ini", "--model.rows-per-table=20000",
            f"--data.train={crit_train}",
            f"--data.eval={os.path.join(a.criteo, 'heldout-2k.tsv')}", "--cluster.trainers=4"]
    dense = run("criteo-dense", data)
    lines += ["## Criteo (8k train rows, 2k held out), 4 trainers", "", HEAD,
              row("dense (dct.mp off)", dense, dense)]
    for keep in ("0.3", "0.1"):
        lines.append(row(f"straight, keep {keep}, gradient keep 0.01",
                         run(f"criteo-{keep}", data + mp(keep)), dense))
    lines.append(row("mask, keep 0.1", run("criteo-m0.1", data + mp("0.1", "mask")), dense))
    lines.append("")

lines += ["## End to end: one pass, 16 trainers, S-EASGD, network model on", "",
          "dct.mp at its defaults (keep 0.1, straight, gradient keep 0.01); dct.dp at keep 0.01 "
          "(as bench/dct_end_to_end.py).", "",
          "| Gbit/s | run | virtual s | change | lookup + push MB | dense sync MB | eval NE |",
          "|---|---|---|---|---|---|---|"]
for bw in (1, 10):
    data = [f"--data.train={a.train}", f"--data.eval={a.eval}", "--cluster.trainers=16",
            "--net.enabled=true", f"--net.bandwidth-gbps={bw}"]
    runs = {"dense": [], "dct.mp": ["--dct.mp=true"],
            "dct.dp": ["--dct.dp=true", "--dct.dp-keep=0.01"],
            "dct.mp + dct.dp": ["--dct.mp=true", "--dct.dp=true", "--dct.dp-keep=0.01"]}
    base_t = None
    for label, extra in runs.items():
        m = run(f"e2e-{bw}-{label}", data + extra)
        t = m["sim"]["virtual_seconds"]
        base_t = base_t or t
        b = m["bytes"]
        lines.append(f"| {bw} | {label} | {t:.4f} | {100 * (t - base_t) / base_t:+.1f} % | "
                     f"{(b['lookup'] + b['push']) / 1e6:.1f} | {b['dense_sync'] / 1e6:.1f} | "
                     f"{m['eval_ne']:.4f} |")
    print("\n".join(lines[-4:]), flush=True)
lines.append("")

lines += ["## Curve: reduction against eval NE change", "",
          "| trainers | backward | keep | reduction | NE vs dense |", "|---|---|---|---|---|"]
lines += [f"| {t} | {b} | {k} | {r:.1f}x | {d:+.2f}% |" for t, b, k, r, d in curve]
os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
open(a.out + ".md", "w").write("\n".join(lines) + "\n")
json.dump(curve, open(a.out + ".json", "w"))
plot_curve(curve, "docs/plots/dct_mp_curve")
print(f"wrote {a.out}.md")
