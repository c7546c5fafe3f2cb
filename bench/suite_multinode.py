"""Experiment 6 of bench/run_suite.py: the same job on a loopback 3-node
cluster (coordinator + shards, two trainer nodes; `shadowsync launch`) with
mutual TLS and with plain TCP, against one process (`train`, simulated
cluster, same trainers and shards). Runs alternate within each repeat.
Reports training examples/s and eval NE, medians (min-max), and the ratios
to the one-process run."""
import os
import shutil
import subprocess
import sys
import tempfile

import suite_lib as L

SPEC = os.path.join(L.ROOT, "config", "cluster-3node.ini")


def certs(folder):
    script = os.path.join(L.ROOT, "scripts", "make-certs.sh")
    subprocess.run(["bash", script, folder, "coord", "t0", "t1"], check=True,
                   stdout=subprocess.DEVNULL)


def launch(args, out_json):
    cmd = [L.binary(), "launch", "--config-file=" + SPEC, "--output.progress=none",
           "--output.metrics=" + out_json] + args
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stdout[-3000:]))
    import json
    with open(out_json) as f:
        return json.load(f)


def chart(name, rows):
    """bench/results/NAME.png (and docs/plots/): ex/s and eval NE relative to one process."""
    L.chart(name, [("examples/s vs one process", [(i, r["speed_vs_one_process"]) for i, r in enumerate(rows)]),
                          ("eval NE vs one process", [(i, r["ne_vs_one_process"]) for i, r in enumerate(rows)])],
            "Multi-node on loopback vs one process (medians)", "", "ratio", size=(800, 400),
            xtics=[(r["config"], i) for i, r in enumerate(rows)])


def multinode(quick, repeats, sync="s-easgd"):
    """sync: sync.algorithm of every run; other than s-easgd, the results are named multinode-SYNC."""
    name = "multinode" if sync == "s-easgd" else "multinode-" + sync
    rows = 200000 if quick else 1000000
    train = L.datagen("mn-train-%d" % rows, rows, 31)
    evalf = L.datagen("mn-eval-%d" % (rows // 10), rows // 10, 32)
    tmp = tempfile.mkdtemp(prefix="ss-mn-bench-")
    try:
        certs(os.path.join(tmp, "certs"))
        data = ["--data.train=" + train, "--data.eval=" + evalf, "--sync.algorithm=" + sync]
        tls = ["--openssl.certificate=%s/certs/{node}.pem" % tmp, "--openssl.key=%s/certs/{node}.key" % tmp,
               "--openssl.cafile=%s/certs/ca.pem" % tmp]
        configs = [
            ("one process", lambda out: L.ce.run(data + [
                "--config-file=" + os.path.join(L.ROOT, "config", "default.ini"), "--cluster.trainers=2",
                "--cluster.embedding-shards=1", "--cluster.dense-shards=1", "--sim.clock=wall"], out)),
            ("3 nodes, mutual TLS", lambda out: launch(data + tls, out)),
            ("3 nodes, plain TCP", lambda out: launch(data + ["--deploy.insecure=true"], out)),
        ]
        res = {label: [] for label, _ in configs}
        for r in range(repeats):
            for label, fn in configs:
                m = fn(os.path.join(tmp, "m.json"))
                res[label].append(m)
                print("  %s, repeat %d: %.0f ex/s, eval NE %.4f" % (label, r + 1, m["examples_per_second"],
                                                                    m["eval_ne"]), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    base = L.med([m["examples_per_second"] for m in res["one process"]])[0]
    base_ne = L.med([m["eval_ne"] for m in res["one process"]])[0]
    out_rows, md_rows = [], []
    for label, _ in configs:
        ms = res[label]
        eps = L.stat([m["examples_per_second"] for m in ms])
        ne = L.stat([m["eval_ne"] for m in ms])
        row = {"config": label, "examples_per_second": eps, "eval_ne": ne,
               "speed_vs_one_process": eps["median"] / base, "ne_vs_one_process": ne["median"] / base_ne,
               "sync_bytes": L.stat([m["sync"]["bytes"] for m in ms]),
               "sync_rounds": L.stat([m["sync"]["rounds"] for m in ms])}
        out_rows.append(row)
        md_rows.append([label, L.fmt(L.med([m["examples_per_second"] for m in ms])),
                        "%.3f" % row["speed_vs_one_process"], L.fmt(L.med([m["eval_ne"] for m in ms]), 4),
                        "%+.2f %%" % (100 * (row["ne_vs_one_process"] - 1)),
                        L.fmt(L.med([m["sync"]["rounds"] for m in ms]))])
    md = ("## 6. Multi-node (loopback, 3 nodes) vs one process\n\n"
          "`small` model, %d generated rows (eval %d), sync %s, 2 trainers x 1 worker, 1 embedding shard, "
          "1 dense shard; medians (min-max) of %d alternating repeats on one 2-core machine (the three "
          "node processes share it). Command: `/usr/bin/python3 bench/run_suite.py --only %s%s --repeats %d`.\n\n"
          % (rows, rows // 10, sync, repeats, name, " --quick" if quick else "", repeats))
    md += L.table(md_rows, ["config", "examples/s", "speed vs one process", "eval NE", "NE vs one process",
                            "sync rounds"])
    L.write(name, out_rows, md, {"rows": rows, "repeats": repeats, "sync": sync})
    chart(name, out_rows)
    tag = "6 " + name
    return [(tag, "3 nodes TLS: ex/s ratio, eval NE diff vs one process",
             "%.3f, %+.2f %%" % (out_rows[1]["speed_vs_one_process"], 100 * (out_rows[1]["ne_vs_one_process"] - 1))),
            (tag, "3 nodes plain TCP: ex/s ratio, eval NE diff vs one process",
             "%.3f, %+.2f %%" % (out_rows[2]["speed_vs_one_process"], 100 * (out_rows[2]["ne_vs_one_process"] - 1)))]
