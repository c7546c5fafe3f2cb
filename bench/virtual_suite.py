#!/usr/bin/python3
"""The virtual clock's validation suite (issue 38 item 3; docs/virtual-time.md).

Every configuration runs for real on this machine and on the virtual clock,
alternated, REPEATS rounds, each round over every configuration (so that each
configuration's real runs sample the machine over the suite's whole time);
the suite prints, per configuration, the median real examples/s (with its
range), the virtual clock's prediction and its error, and the dense sync's
rounds of both (how often the syncers ran: the
schedule, which quality follows), then the mean absolute and the median
absolute error, and the virtual rounds over the real ones.

Real: the one-process cluster on the wall clock (sim.clock=wall; real
threads, CAF's scheduler with this machine's cores), or `launch` of three
nodes on loopback (plain TCP and mutual TLS) for the multi-node rows.
Virtual: the same job on the virtual clock, every role on one simulated
host of this machine's cores (sim.placement=one-host), as the real run
shares them; the 3-node rows give each node's roles one host of one core
(launch's split of 2 cores over 3 nodes), put the three hosts on one
machine of this machine's cores (sim.machine-cores: the real nodes share
them) and turn the network model on; the TLS row charges the messages
between hosts at the TLS constants (sim.remote-tls).
The cost constants come from --calibration (a file or a preset name;
default: the shipped preset of this machine type), never measured during
the run.

usage: bench/virtual_suite.py [--bin build/shadowsync] [--repeats 3]
         [--rows 300000] [--calibration NAME|FILE] [--only N,...] [--list]
         [--json FILE] [--real-from FILE] [--virtual-option OPTION ...]
         [--calibrate N [--calibration-out FILE]]
--calibrate N measures N calibrations (`shadowsync calibrate`, about 30 s
each here) spread over the real runs, so that they sample the machine as the
real runs find it, and runs every virtual run after them at the calibrations'
per-constant medians (--calibration-out FILE keeps that file for
--real-from reruns): the error left is the model's, not the drift of a
machine whose speed moves by 10-20 % within minutes.
--virtual-option adds an option to the virtual runs only, for example
--virtual-option=--sim.cost=measured: each handler costs its thread's CPU
time here instead of the cost model's price, so the error left is the
schedule's (who runs when), not the constants'.
--real-from FILE takes the real runs from an earlier --json FILE (same
--rows) and runs only the virtual ones: the virtual clock is deterministic,
so another calibration is compared against the same real medians. FILE may
also be a Markdown file holding a table this suite printed (such as
docs/virtual-time.md's): each row's real median and range, and its rounds,
stand for its runs (low, median, high); its rows are taken to be --rows.
Prints a Markdown table for docs/virtual-time.md. Exit 1 when a run fails.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name -> (options of both runs, kind); kind: "local" or "3node-plain"/"3node-tls".
def configurations():
    one = ["--cluster.trainers=1", "--sync.algorithm=none"]
    rows = [
        ("1 trainer x 1 worker, no sync", one + ["--cluster.workers=1"], "local"),
        ("1 trainer x 2 workers, no sync", one + ["--cluster.workers=2"], "local"),
        ("1 trainer x 4 workers, no sync", one + ["--cluster.workers=4"], "local"),
    ]
    for n, alg in ((2, "s-easgd"), (2, "fr-easgd"), (4, "s-ma"), (4, "fr-ma"), (4, "s-bmuf"),
                   (4, "fr-bmuf"), (8, "s-easgd")):
        rows.append(("%d trainers, %s" % (n, alg),
                     ["--cluster.trainers=%d" % n, "--sync.algorithm=" + alg], "local"))
    rows += [
        ("4 trainers, s-ma, dct.dp", ["--cluster.trainers=4", "--sync.algorithm=s-ma",
                                      "--dct.dp=true"], "local"),
        ("2 trainers, s-easgd, dct.mp", ["--cluster.trainers=2", "--sync.algorithm=s-easgd",
                                         "--dct.mp=true"], "local"),
        ("3 nodes on loopback, plain TCP", [], "3node-plain"),
        ("3 nodes on loopback, mutual TLS", [], "3node-tls"),
    ]
    return rows


def run(cmd, metrics, key, rounds=None):
    proc = subprocess.run(cmd + ["--output.progress=none", "--output.metrics=" + metrics],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        sys.stderr.write("failed (exit %d): %s\n%s\n" % (proc.returncode, " ".join(cmd),
                                                         proc.stdout[-3000:]))
        sys.exit(1)
    with open(metrics) as f:
        m = json.load(f)
    if key == "virtual": # the virtual clock's rate: examples per virtual second
        key = "examples_per_second"
        assert m["sim"]["clock"] == "virtual", "a virtual run's metrics say sim.clock=virtual"
    if rounds is not None: # the dense sync's rounds (none: 0)
        rounds.append(int((m.get("sync") or {}).get("rounds", 0)))
    return float(m[key])


def table_runs(text, rows):
    """The runs of the first table this suite printed in a Markdown text, as
    --json writes them: each row's real low, median and high examples/s and
    rounds ("-": none)."""
    lines = text.splitlines()
    head = [i for i, l in enumerate(lines)
            if l.startswith("| configuration | real examples/s (range) | virtual | error |")]
    if not head:
        sys.exit("--real-from: no table of this suite in the Markdown file")
    def spread(cell):
        cell = cell.replace(" ", "")
        if cell == "-":
            return [0, 0, 0]
        med, _, rng = cell.partition("(")
        lo, hi = rng.rstrip(")").split("-") if rng else (med, med)
        return [float(lo), float(med), float(hi)]
    runs = []
    for line in lines[head[0] + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        runs.append({"configuration": cells[0], "real": spread(cells[1]),
                     "real_rounds": [int(x) for x in spread(cells[4])]})
    return {"rows": rows, "runs": runs}


def write_median_calibration(paths, out):
    """Per-constant medians of calibration files, as one calibration file."""
    files = []
    for p in paths:
        with open(p) as f:
            files.append(json.load(f))
    merged = dict(files[0])
    merged["sim"] = {k: statistics.median(c["sim"][k] for c in files if k in c["sim"])
                     for k in files[0]["sim"]}
    merged["note"] = ("per-constant medians of %d calibrations measured among the validation "
                      "suite's real runs (bench/virtual_suite.py --calibrate); the first's note: %s"
                      % (len(files), files[0].get("note", "")))
    merged["machine"] = dict(files[0]["machine"])
    merged["machine"]["command"] = "bench/virtual_suite.py --calibrate %d" % len(files)
    with open(out, "w") as f:
        json.dump(merged, f, indent=2, sort_keys=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "shadowsync"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rows", type=int, default=300000)
    ap.add_argument("--calibration", default="epyc-x86-64-v3-2core")
    ap.add_argument("--only", default="", help="comma-separated configuration numbers (1-based)")
    ap.add_argument("--list", action="store_true", help="list the configurations and exit")
    ap.add_argument("--json", default="", help="also write every run's examples/s to this file")
    ap.add_argument("--real-from", default="",
                    help="reuse the real runs of an earlier --json file; run only the virtual ones")
    ap.add_argument("--calibrate", type=int, default=0, metavar="N",
                    help="measure N calibrations (shadowsync calibrate) spread over the real runs "
                         "and run the virtual ones at their per-constant medians")
    ap.add_argument("--calibration-out", default="",
                    help="with --calibrate: keep the medians' calibration file here")
    ap.add_argument("--virtual-option", action="append", default=[],
                    help="an option for the virtual runs only (repeatable)")
    a = ap.parse_args()
    configs = configurations()
    if a.list:
        for i, (name, opts, kind) in enumerate(configs, 1):
            print("%2d  %s  %s" % (i, name, " ".join(opts) or kind))
        return
    if a.calibrate and a.real_from:
        sys.exit("--calibrate measures the machine while the real runs run: not with --real-from")
    if a.calibration_out and not a.calibrate:
        sys.exit("--calibration-out keeps what --calibrate measures: give --calibrate N")
    if a.only:
        keep = {int(x) for x in a.only.split(",")}
        configs = [c for i, c in enumerate(configs, 1) if i in keep]
    cores = os.cpu_count() or 1
    tmp = tempfile.mkdtemp(prefix="ss-vsuite-")
    try:
        data = os.path.join(tmp, "train.tsv")
        subprocess.run([a.bin, "datagen", "--out=" + data, "--rows=%d" % a.rows, "--seed=3"],
                       check=True, stdout=subprocess.DEVNULL)
        metrics = os.path.join(tmp, "m.json")
        common = ["--data.train=" + data, "--data.eval=", "--cluster.embedding-shards=2"]
        spec = os.path.join(ROOT, "config", "cluster-3node.ini")
        job3 = ["--config-file=" + os.path.join(ROOT, "config", "default.ini"),
                "--cluster.embedding-shards=1", "--cluster.dense-shards=1", "--cluster.timeout-ms=10000",
                "--data.train=" + data, "--data.eval="]
        certs = None
        earlier, earlier_rounds = {}, {}
        if a.real_from:
            with open(a.real_from) as f:
                old = table_runs(f.read(), a.rows) if a.real_from.endswith(".md") else json.load(f)
            if old["rows"] != a.rows:
                sys.exit("--real-from %s: its runs read %d rows, not --rows=%d" % (a.real_from,
                                                                                old["rows"], a.rows))
            earlier = {r["configuration"]: r["real"] for r in old["runs"]}
            earlier_rounds = {r["configuration"]: r.get("real_rounds", []) for r in old["runs"]}
        results, raw, round_ratios = [], [], []
        runs = {} # name -> (real, virt, real_rounds, virt_rounds)
        for name, opts, kind in configs:
            real, real_rounds = list(earlier.get(name, [])), list(earlier_rounds.get(name, []))
            if a.real_from and not real:
                sys.exit("--real-from %s: no real runs of '%s'" % (a.real_from, name))
            runs[name] = (real, [], real_rounds, [])

        def local_virtual(opts):
            return ([a.bin, "train"] + common + opts +
                    ["--sim.clock=virtual", "--sim.placement=one-host",
                     "--sim.cores-per-host=%d" % cores, "--sim.calibration=" + calibration] +
                    a.virtual_option)

        def node_virtual(kind):
            return ([a.bin, "train"] + job3 +
                    ["--sim.clock=virtual", "--net.enabled=true",
                     "--sim.cores-per-host=1", "--sim.machine-cores=%d" % cores,
                     "--sim.remote-tls=%s" % str(kind == "3node-tls").lower(),
                     "--sim.calibration=" + calibration] + a.virtual_option)

        def launch_of(kind):
            nonlocal certs
            launch = [a.bin, "launch", "--config-file=" + spec, "--data.train=" + data,
                      "--data.eval="]
            if kind == "3node-plain":
                return launch + ["--deploy.insecure=true"]
            if certs is None:
                certs = os.path.join(tmp, "certs")
                subprocess.run(["bash", os.path.join(ROOT, "scripts", "make-certs.sh"), certs,
                                "coord", "t0", "t1"], check=True, stdout=subprocess.DEVNULL)
            return launch + ["--openssl.certificate=%s/{node}.pem" % certs,
                             "--openssl.key=%s/{node}.key" % certs,
                             "--openssl.cafile=%s/ca.pem" % certs]

        # Round by round over every configuration (each configuration's real
        # runs spread over the suite's whole time, as the machine's speed
        # moves by 10-20 % within minutes; its virtual runs beside them).
        # --calibrate N: N calibrations spread over the real runs, then every
        # virtual run at their per-constant medians.
        # (several before one run where N exceeds the runs)
        order = [(r, i) for r in range(a.repeats) for i in range(len(configs))]
        calibrate_before = [(k * len(order)) // a.calibrate for k in range(a.calibrate)]
        measured = []
        calibration = a.calibration
        for j, (_, i) in enumerate(order):
            name, opts, kind = configs[i]
            real, virt, real_rounds, virt_rounds = runs[name]
            for _ in range(calibrate_before.count(j)):
                out = os.path.join(tmp, "calibration-%d.json" % len(measured))
                subprocess.run([a.bin, "calibrate", "--out=" + out], check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                measured.append(out)
            if not a.real_from:
                real.append(run([a.bin, "train"] + common + opts + ["--sim.clock=wall"]
                                if kind == "local" else launch_of(kind),
                                metrics, "examples_per_second", real_rounds))
            if not a.calibrate:
                virt.append(run(local_virtual(opts) if kind == "local" else node_virtual(kind),
                                metrics, "virtual", virt_rounds))
        if a.calibrate:
            calibration = a.calibration_out or os.path.join(tmp, "calibration-median.json")
            write_median_calibration(measured, calibration)
            for name, opts, kind in configs:
                _, virt, _, virt_rounds = runs[name]
                for _ in range(a.repeats):
                    virt.append(run(local_virtual(opts) if kind == "local" else node_virtual(kind),
                                    metrics, "virtual", virt_rounds))
        for name, opts, kind in configs:
            real, virt, real_rounds, virt_rounds = runs[name]
            r, v = statistics.median(real), statistics.median(virt)
            rr = "%d (%d-%d)" % (statistics.median(real_rounds), min(real_rounds),
                                 max(real_rounds)) if real_rounds else "-"
            vr = "%d" % statistics.median(virt_rounds) if virt_rounds else "-"
            results.append((name, r, min(real), max(real), v, 100.0 * (v / r - 1.0), rr, vr))
            if real_rounds and virt_rounds and statistics.median(real_rounds) > 0:
                round_ratios.append(statistics.median(virt_rounds) / statistics.median(real_rounds))
            raw.append({"configuration": name, "real": real, "virtual": virt,
                        "real_rounds": real_rounds, "virtual_rounds": virt_rounds})
            sys.stderr.write("%s: real %.0f, virtual %.0f (%+.1f %%)\n" % (name, r, v, results[-1][5]))
    finally: # the data, the metrics and the certificates
        shutil.rmtree(tmp, ignore_errors=True)
    print("Virtual clock against real runs on this machine (%d cores), %d generated rows, medians "
          "of %d alternated rounds; constants: sim.calibration=%s"
          % (cores, a.rows, a.repeats, calibration if not a.calibrate else
             "per-constant medians of %d calibrations among the real runs%s"
             % (a.calibrate, " (" + a.calibration_out + ")" if a.calibration_out else "")))
    print()
    print("| configuration | real examples/s (range) | virtual | error | sync rounds: real (range) | virtual |")
    print("|---|---|---|---|---|---|")
    for name, r, lo, hi, v, err, rr, vr in results:
        print("| %s | %.0f (%.0f-%.0f) | %.0f | %+.1f %% | %s | %s |" % (name, r, lo, hi, v, err, rr, vr))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rows": a.rows, "calibration": calibration if not a.calibrate else
                       a.calibration_out or "medians of %d calibrations" % a.calibrate,
                       "runs": raw}, f, indent=1)
    errs = [abs(x[5]) for x in results]
    print()
    print("mean |error| %.1f %%, median |error| %.1f %%, largest %.1f %%, within 10 %%: %d of %d"
          % (statistics.mean(errs), statistics.median(errs), max(errs),
             sum(1 for e in errs if e <= 10.0), len(errs)))
    if round_ratios:
        print("sync rounds, virtual over real (%d configurations that sync): median %.2f, "
              "range %.2f-%.2f" % (len(round_ratios), statistics.median(round_ratios),
                                   min(round_ratios), max(round_ratios)))


if __name__ == "__main__":
    main()
