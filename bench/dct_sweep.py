#!/usr/bin/env python3
"""DCT on the dense sync (issue 13; docs/dct.md): bytes per EASGD round
against eval NE, over keep fractions, on the virtual clock (deterministic:
one run per cell). S-EASGD at 4 and 16 trainers, dense (dct.dp off) against
dct.dp at each keep; then the threshold's refresh interval and error
feedback at one keep; the real Criteo rows when present.

Bytes are the dense-sync payloads both ways (the syncers' exchanges and the
shards' replies), summed over trainers, per round. Reduction = the bytes
dense EASGD would have moved for the same rounds over the bytes moved.

usage: bench/dct_sweep.py [--shadowsync build/shadowsync] [--train F --eval F]
       [--criteo DIR] [--out bench/results/dct_sweep]
       bench/dct_sweep.py --plot-only bench/results/dct_sweep.json   (the chart again)
The chart of the curve goes to docs/plots/dct_curve.png.
"""
import argparse, json, os, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_data

ap = bench_data.arg_parser("bench/results/dct_sweep")
ap.add_argument("--keeps", default="0.1,0.03,0.01,0.003,0.001")
ap.add_argument("--plot-only", metavar="JSON", help="draw the chart from a sweep's points and stop")
a = ap.parse_args()




def plot_curve(curve, out_base):
    """Reduction against eval NE change, one line per trainer count (gnuplot)."""
    import plot_runs
    series = [(f"{t} trainers", sorted((r, d) for tt, k, r, d in curve if tt == t))
              for t in sorted({c[0] for c in curve})]
    os.makedirs(os.path.dirname(out_base), exist_ok=True)
    plot_runs.plot_xy(series, out_base, "DCT on S-EASGD: bytes against eval NE (keep 0.1 ... 0.001)",
                      "dense bytes / DCT bytes (x)", "eval NE vs dense (%)", formats=("png",),
                      points=True)


def plot_ring_curve(curve, out_base):
    """The ring methods: reduction against eval NE change, one line per (method, trainers)."""
    import plot_runs
    keys = sorted({(g, t) for g, t, k, r, d in curve})
    series = [(f"{g}, {t} trainers", sorted((r, d) for gg, tt, k, r, d in curve if (gg, tt) == (g, t)))
              for g, t in keys]
    plot_runs.plot_xy(series, out_base, "DCT on MA and BMUF: bytes against eval NE (keep 0.1 ... 0.001)",
                      "dense ring bytes / DCT bytes (x)", "eval NE vs dense (%)", formats=("png",),
                      points=True)


if a.plot_only:
    plot_curve(json.load(open(a.plot_only)), "docs/plots/dct_curve")
    sys.exit(0)

bench_data.ensure_planted(a)
work = tempfile.mkdtemp(prefix="dct-bench-")
BASE = ["--sim.clock=virtual", "--cluster.mode=simulated", "--output.progress=none"]


def run(name, args):
    return bench_data.train_metrics(a.shadowsync, work, name, BASE + args)


def row(label, m, dense):
    s = m["sync"]
    rounds = max(1, s["rounds"])
    per_round = (s["bytes"] + s["bytes_received"]) / rounds
    d = m.get("dct")
    red = d["reduction"] if d else 1.0
    sent = f"{100 * d['sent_fraction']:.2f}" if d else "100"
    rep = f"{100 * d['reply_fraction']:.2f}" if d else "100"
    dne = 100 * (m["eval_ne"] - dense["eval_ne"]) / dense["eval_ne"]
    return (f"| {label} | {s['rounds']} | {per_round / 1e3:.1f} | {red:.1f}x | {sent} | {rep} | "
            f"{m['eval_ne']:.4f} | {dne:+.2f}% | {m['sim']['virtual_seconds']:.3f} |")


HEAD = ("| run | rounds | KB per round (both ways) | reduction | % of changes sent | "
        "% of d sent | eval NE | NE vs dense | virtual s |\n|---|---|---|---|---|---|---|---|---|")
lines = ["# DCT on S-EASGD's dense sync (bench/dct_sweep.py)", "",
         "Virtual clock, deterministic; generated data (100k train rows, 20k eval). "
         "Bytes: exchanges and replies, payload, summed over trainers. Both pictures of a "
         "replica start at the centre (docs/dct.md).", ""]
curve = []
for trainers in (4, 16):
    data = [f"--data.train={a.train}", f"--data.eval={a.eval}",
            f"--cluster.trainers={trainers}", "--sync.algorithm=s-easgd"]
    dense = run(f"dense-{trainers}", data)
    lines += [f"## {trainers} trainers", "", HEAD, row("dense (dct.dp off)", dense, dense)]
    for keep in a.keeps.split(","):
        m = run(f"k{keep}-{trainers}", data + ["--dct.dp=true", f"--dct.dp-keep={keep}",
                                                "--dct.refresh=10"])
        lines.append(row(f"keep {keep}", m, dense))
        curve.append((trainers, float(keep), m["dct"]["reduction"],
                      100 * (m["eval_ne"] - dense["eval_ne"]) / dense["eval_ne"]))
    for refresh in (1, 1000):
        m = run(f"r{refresh}-{trainers}", data + ["--dct.dp=true", "--dct.dp-keep=0.01",
                                                  f"--dct.refresh={refresh}"])
        lines.append(row(f"keep 0.01, refresh {refresh}", m, dense))
    m = run(f"noef-{trainers}", data + ["--dct.dp=true", "--dct.dp-keep=0.01",
                                        "--dct.refresh=10", "--dct.error-feedback=false"])
    lines.append(row("keep 0.01, error feedback off", m, dense))
    lines.append("")
    print("\n".join(lines[-14:]), flush=True)

# The ring methods (a sparse all-gather of thresholded changes): bytes each
# member sends per round, summed over members, against the dense ring's.
RING_HEAD = ("| run | rounds | KB per round (all members) | reduction | % of changes sent | "
             "eval NE | NE vs dense | virtual s |\n|---|---|---|---|---|---|---|---|")


def ring_row(label, m, dense):
    s = m["sync"]
    d = m.get("dct")
    red = f"{d['reduction']:.1f}x" if d else "1x"
    sent = f"{100 * d['sent_fraction']:.2f}" if d else "100"
    return (f"| {label} | {s['rounds']} | {s['bytes'] / max(1, s['rounds']) / 1e3:.1f} | {red} | "
            f"{sent} | {m['eval_ne']:.4f} | {100 * (m['eval_ne'] - dense['eval_ne']) / dense['eval_ne']:+.2f}% | "
            f"{m['sim']['virtual_seconds']:.3f} |")


ring_curve = []
for alg in ("s-ma", "s-bmuf"):
    for trainers in (4, 16):
        data = [f"--data.train={a.train}", f"--data.eval={a.eval}",
                f"--cluster.trainers={trainers}"]
        dense = run(f"{alg}-dense-{trainers}", data + [f"--sync.algorithm={alg}"])
        lines += [f"## {alg}, {trainers} trainers", "", RING_HEAD,
                  ring_row("dense ring (dct.dp off)", dense, dense)]
        for keep in a.keeps.split(","):
            m = run(f"{alg}-k{keep}-{trainers}", data + [f"--sync.algorithm={alg}", "--dct.dp=true",
                                                          f"--dct.dp-keep={keep}", "--dct.refresh=10"])
            lines.append(ring_row(f"keep {keep}", m, dense))
            ring_curve.append((alg, trainers, float(keep), m["dct"]["reduction"],
                               100 * (m["eval_ne"] - dense["eval_ne"]) / dense["eval_ne"]))
        if trainers == 4:
            m = run(f"{alg}-noef", data + [f"--sync.algorithm={alg}", "--dct.dp=true",
                                           "--dct.dp-keep=0.01", "--dct.refresh=10",
                                           "--dct.error-feedback=false"])
            lines.append(ring_row("keep 0.01, error feedback off", m, dense))
        lines.append("")
        print("\n".join(lines[-9:]), flush=True)

crit_train = os.path.join(a.criteo, "train-8k.tsv")
if os.path.exists(crit_train):
    # config/criteo-kaggle-head10k.ini: one pass, as in bench/cpr_table.py.
    data = ["--config-file=config/criteo-kaggle-head10k.ini", "--model.rows-per-table=20000",
            f"--data.train={crit_train}",
            f"--data.eval={os.path.join(a.criteo, 'heldout-2k.tsv')}", "--cluster.trainers=4",
            "--sync.algorithm=s-easgd"]
    dense = run("criteo-dense", data)
    lines += ["## Criteo (8k train rows, 2k held out), 4 trainers", "", HEAD,
              row("dense (dct.dp off)", dense, dense)]
    for keep in ("0.03", "0.01", "0.003"):
        m = run(f"criteo-{keep}", data + ["--dct.dp=true", f"--dct.dp-keep={keep}",
                                          "--dct.refresh=10"])
        lines.append(row(f"keep {keep}", m, dense))
    lines.append("")

lines += ["## Curve: reduction against eval NE change (refresh 10)", "",
          "| trainers | keep | reduction | NE vs dense |", "|---|---|---|---|"]
lines += [f"| {t} | {k} | {r:.1f}x | {d:+.2f}% |" for t, k, r, d in curve]
os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
open(a.out + ".md", "w").write("\n".join(lines) + "\n")
lines += ["", "## Curve of the ring methods", "",
          "| algorithm | trainers | keep | reduction | NE vs dense |", "|---|---|---|---|---|"]
lines += [f"| {g} | {t} | {k} | {r:.1f}x | {d:+.2f}% |" for g, t, k, r, d in ring_curve]
open(a.out + ".md", "w").write("\n".join(lines) + "\n")
json.dump(curve, open(a.out + ".json", "w"))
json.dump(ring_curve, open(a.out + "_ring.json", "w"))
plot_ring_curve(ring_curve, "docs/plots/dct_ring_curve")
plot_curve(curve, "docs/plots/dct_curve")
print(f"wrote {a.out}.md")
