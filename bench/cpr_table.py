#!/usr/bin/env python3
"""CPR on our system (issue 12; docs/cpr.md): partial recovery with full, MFU
and SSU checkpoints at two failure rates, against a failure-free run without
checkpoints, on the virtual clock (deterministic: one run per cell).

For each run: virtual training seconds, the overhead against the failure-free
run (the time lost to saves, loads and outages as training really saw it), the
store's share by the paper's accounting (save + load seconds over the shards'
time), failures, lost examples and PLS (measured and predicted), checkpoint
bytes, the policy's bookkeeping memory, and eval NE/AUC. Then the accuracy
cost of PLS: eval NE against cpr.target-pls.

usage: bench/cpr_table.py [--shadowsync build/shadowsync] [--train F --eval F]
       [--out bench/results/cpr_table]
"""
import argparse, json, os, shutil, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--shadowsync", default="build/shadowsync")
ap.add_argument("--train", default="/tmp/cpr-bench/train.tsv")
ap.add_argument("--eval", default="/tmp/cpr-bench/eval.tsv")
ap.add_argument("--out", default="bench/results/cpr_table")
ap.add_argument("--trainers", type=int, default=4)
ap.add_argument("--shards", type=int, default=4)
ap.add_argument("--storage-gbps", type=float, default=20.0)
a = ap.parse_args()

for path, rows, seed in ((a.train, 100000, 3), (a.eval, 20000, 4)):
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        subprocess.run([a.shadowsync, "datagen", f"--rows={rows}", f"--seed={seed}",
                        f"--out={path}"], check=True, stdout=subprocess.DEVNULL)

work = tempfile.mkdtemp(prefix="cpr-bench-")
BASE = [f"--data.train={a.train}", f"--data.eval={a.eval}", "--sim.clock=virtual",
        f"--cluster.trainers={a.trainers}", f"--cluster.embedding-shards={a.shards}",
        "--sync.algorithm=s-easgd", "--output.progress=none"]


def run(name, extra):
    m = os.path.join(work, name + ".json")
    cmd = [a.shadowsync, "train", *BASE, *extra, f"--output.metrics={m}"]
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"{name} failed: {' '.join(cmd)}\n{r.stderr[-2000:]}")
    return json.load(open(m))


base = run("baseline", [])
T = base["seconds"]
print(f"failure-free run without checkpoints: {T:.4f} virtual s, eval NE {base['eval_ne']:.4f}")
rows = []
# Two failure rates: about 2 and about 6 shard failures in a run of T seconds.
for label, mtbf in (("MTBF = T/2", T / 2), ("MTBF = T/6", T / 6)):
    for policy, r in (("full", 1), ("mfu", 0.25), ("ssu", 0.25), ("mfu", 0.002), ("ssu", 0.002)):
        name = f"{policy}-{r}-{mtbf:.4f}"
        ck = os.path.join(work, "ck-" + name)
        m = run(name, ["--recovery.mode=partial", f"--checkpoint.dir={ck}",
                       f"--cpr.policy={policy}", f"--cpr.fraction={r}", "--cpr.target-pls=0.02",
                       f"--faults.mtbf={mtbf}", f"--checkpoint.storage-gbps={a.storage_gbps}"])
        shutil.rmtree(ck, ignore_errors=True)
        rows.append((label, policy if policy == "full" else f"{policy} r={r}", m, m["recovery"]))

lines = []
out = lines.append
out(f"Virtual clock, {a.trainers} trainers x 1 worker, {a.shards} embedding shards, S-EASGD, "
    f"100k train / 20k eval rows, checkpoint.storage-gbps={a.storage_gbps}, cpr.target-pls=0.02, "
    f"cpr.full-every=4, cpr.ssu-sample=16384.")
out(f"Failure-free run without checkpoints: {T:.4f} virtual s, eval NE {base['eval_ne']:.4f}, "
    f"AUC {base['eval_auc']:.4f}.")
out("")
out("| failures | policy | interval s | train s | overhead | store share | failures | lost ex. | "
    "PLS | predicted PLS | saves (full) | ckpt MB | bookkeeping KB | eval NE | eval AUC |")
out("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for label, policy, m, r in rows:
    out(f"| {label} | {policy} | {r['interval_seconds']:.4f} | {m['seconds']:.4f} | "
        f"{100 * (m['seconds'] / T - 1):+.2f}% | {100 * r['overhead_fraction']:.2f}% | "
        f"{r['failures']} | {r['lost_examples']:.0f} | {r['pls']:.4f} | "
        f"{(r['predicted_pls'] or 0):.4f} | {r['saves']} ({r['full_saves']}) | "
        f"{r['bytes'] / 1e6:.0f} | {r['tracking_bytes'] / 1e3:.0f} | {m['eval_ne']:.4f} | "
        f"{m['eval_auc']:.4f} |")

# The accuracy cost of PLS: MFU at MTBF = T/6, target PLS swept.
out("")
out("Accuracy cost of PLS (cpr.policy=mfu, MTBF = T/6):")
out("")
out("| target PLS | interval s | measured PLS | failures | eval NE | eval AUC |")
out("|---|---|---|---|---|---|")
for pls in (0.01, 0.05, 0.1, 0.2):
    name = f"pls-{pls}"
    ck = os.path.join(work, "ck-" + name)
    m = run(name, ["--recovery.mode=partial", f"--checkpoint.dir={ck}", "--cpr.policy=mfu",
                   f"--cpr.target-pls={pls}", f"--faults.mtbf={T / 6}",
                   f"--checkpoint.storage-gbps={a.storage_gbps}"])
    shutil.rmtree(ck, ignore_errors=True)
    r = m["recovery"]
    out(f"| {pls} | {r['interval_seconds']:.4f} | {r['pls']:.4f} | {r['failures']} | "
        f"{m['eval_ne']:.4f} | {m['eval_auc']:.4f} |")

shutil.rmtree(work, ignore_errors=True)
text = "\n".join(lines) + "\n"
print(text)
os.makedirs(os.path.dirname(a.out), exist_ok=True)
open(a.out + ".md", "w").write(text)
