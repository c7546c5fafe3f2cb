"""Cluster experiments of the suite (bench/run_suite.py): 2 hogwild, 3 claims,
4 quality. Each takes (quick, repeats) and returns summary lines
[(experiment, measure, value)] after writing its result files."""
import os

import suite_lib as L

THREADS = ["--sim.clock=wall", "--scheduler.max-threads=2", "--train.batch-size=256"]
NET = ["--net.enabled=true", "--net.latency-us=20", "--net.bandwidth-gbps=25"]


def metric(ms, key):
    return L.stat([m.get(key) for m in ms])


def sync_metric(ms, key):
    return L.stat([m["sync"].get(key) for m in ms])


def hogwild(quick, repeats):
    rows_n = 100000 if quick else 1000000
    common = L.synthetic_args(rows_n) + THREADS
    configs = [("sequential", ["--cluster.mode=sequential"])]
    for w in [1, 2, 3, 4]:
        configs.append(("1 trainer x %d workers" % w, ["--cluster.trainers=1", "--cluster.workers=%d" % w,
                                                      "--sync.algorithm=none"]))
    res = L.measure(configs, common, repeats, "hogwild")
    base = L.median_of(res["sequential"], "examples_per_second")
    rows = []
    for label, ms in res.items():
        eps = metric(ms, "examples_per_second")
        rows.append({"config": label, "workers": 0 if label == "sequential" else int(label.split("x ")[1][0]),
                     "examples_per_second": eps, "ratio_vs_sequential": eps["median"] / base,
                     "eval_ne": metric(ms, "eval_ne"), "lookup_wait_fraction": metric(ms, "lookup_wait_fraction")})
    md = ("## 2. Hogwild: 1 trainer, workers 1..4 on 2 scheduler threads (sync none)\n\n"
          "%d train rows, small arch, batch 256, %d repeats; Bayes NE of the eval data %s\n\n" %
          (rows_n, repeats, L.bayes_ne(rows_n)))
    md += L.table([[r["config"], L.fmt(L.med([m["examples_per_second"] for m in res[r["config"]]])),
                    "%.2f" % r["ratio_vs_sequential"],
                    L.fmt(L.med([m["eval_ne"] for m in res[r["config"]]]), 4),
                    L.fmt(L.med([m["lookup_wait_fraction"] for m in res[r["config"]]]), 1, 100.0)]
                   for r in rows],
                  ["config", "examples/s median (min-max)", "ratio vs sequential", "eval NE", "lookup wait %"])
    L.write("hogwild", rows, md, {"rows": rows_n, "repeats": repeats})
    L.chart("hogwild", [("Hogwild (1 trainer)", [(r["workers"], r["examples_per_second"]["median"])
                                                 for r in rows if r["workers"]]),
                        ("sequential", [(1, base), (4, base)])],
            "Hogwild workers on 2 threads", "workers per trainer", "examples/s (median)")
    best = max(rows[1:], key=lambda r: r["ratio_vs_sequential"])
    return [("2 hogwild", "best workers vs sequential (ex/s ratio)",
             "%s: %.2fx" % (best["config"], best["ratio_vs_sequential"]))]


ALGS = [("none", None), ("s-easgd", None), ("s-ma", None), ("s-bmuf", None)] + \
       [(a, k) for a in ["fr-easgd", "fr-ma", "fr-bmuf"] for k in [1, 10, 100]]


def ring(alg):
    return alg.endswith("-ma") or alg.endswith("-bmuf")


def claim_configs(trainers):
    configs = []
    for n in trainers:
        base = ["--cluster.trainers=%d" % n, "--cluster.workers=1", "--cluster.embedding-shards=2"] + NET
        for alg, k in ALGS:
            if n == 1 and ring(alg):
                continue  # a ring of one averages nothing (and FR-MA/FR-BMUF hang at N=1, see RESULTS.md)
            for d in ([1, 2] if "easgd" in alg else [1]):
                args = base + ["--sync.algorithm=" + alg, "--cluster.dense-shards=%d" % d]
                if k:
                    args.append("--sync.k=%d" % k)
                configs.append(((alg, k, "delta", n, d), args))
        for alg in ["s-ma", "s-bmuf"] if n > 1 else []:
            configs.append(((alg, None, "overwrite", n, 1), base + ["--sync.algorithm=" + alg, "--sync.merge=overwrite"]))
    return configs


def name_of(key):
    alg, k, merge, n, d = key
    return "%s%s%s N=%d D=%d" % (alg, " k=%d" % k if k else "", " overwrite" if merge == "overwrite" else "", n, d)


TIMELINE_OF = ["none", "s-easgd", "s-bmuf", "fr-easgd k=1", "fr-ma k=10"]


def timelines(quick, repeats):
    """One run each of TIMELINE_OF at 8 trainers (network model on) with --output.dir, and their
    charts: the per-run time series of `train --output.dir` as bench/plot_runs.py draws them."""
    rows_n = 200000 if quick else 1000000
    common = L.synthetic_args(rows_n) + THREADS + NET + ["--cluster.trainers=8", "--cluster.workers=1",
                                                         "--cluster.embedding-shards=2"]
    folders, out = [], []
    for label in TIMELINE_OF:
        alg, _, k = label.partition(" k=")
        folder = os.path.join(L.RUNS, "N8-" + label.replace(" ", "").replace("=", ""))
        m = L.ce.run(common + ["--sync.algorithm=" + alg] + (["--sync.k=" + k] if k else []) +
                     L.run_dir(os.path.basename(folder)), os.path.join(L.RESULTS, "tmp-timeline.json"))
        folders.append(folder)
        out.append(("timelines", "one run, 8 trainers, %d rows: %s ex/s, eval NE" % (rows_n, label),
                    "%.0f, %.4f" % (m["examples_per_second"], m["eval_ne"])))
    L.timeline_charts("timeline-N8", folders, TIMELINE_OF)
    return out


def claims_charts(rows, trainers):
    """claims.png, claims-host.png and claims-ne.png (run_suite.py --replot too)."""
    by = {(r["config"].split(" N=")[0], r["trainers"]): r for r in rows
          if r["dense_shards"] == 1 and r["merge"] == "delta"}
    plotted = ["none", "s-easgd", "s-ma", "s-bmuf", "fr-easgd k=1", "fr-ma k=1", "fr-bmuf k=1",
               "fr-easgd k=10", "fr-ma k=10", "fr-bmuf k=10"]
    L.chart("claims", [(m, [(n, by[(m, n)]["simulated_examples_per_second"]["median"]) for n in trainers
                            if (m, n) in by])
                       for m in plotted],
            "Simulated examples/s vs trainers (network model on)", "trainers", "simulated examples/s",
            logx=True, logy=True)
    L.chart("claims-host", [(m, [(n, by[(m, n)]["host_examples_per_second"]["median"]) for n in trainers
                                 if (m, n) in by]) for m in plotted],
            "Per-host virtual-time examples/s vs trainers", "trainers", "host examples/s",
            logx=True, logy=True)
    L.chart("claims-ne", [(m, [(n, by[(m, n)]["eval_ne"]["median"]) for n in trainers if (m, n) in by])
                          for m in plotted],
            "Eval NE vs trainers", "trainers", "eval NE (median)", logx=True)


def claims(quick, repeats):
    rows_n = 100000 if quick else 200000
    trainers = [1, 2, 4, 8, 16]
    common = L.synthetic_args(rows_n) + THREADS
    configs = [(name_of(key), args) for key, args in claim_configs(trainers)]
    res = L.measure(configs, common, repeats, "claims")
    keys = {name_of(k): k for k, _ in claim_configs(trainers)}
    rows = []
    for label, ms in res.items():
        alg, k, merge, n, d = keys[label]
        rows.append({"config": label, "algorithm": alg, "k": k, "merge": merge, "trainers": n, "dense_shards": d,
                     "simulated_examples_per_second": metric(ms, "simulated_examples_per_second"),
                     "host_examples_per_second": metric(ms, "host_examples_per_second"),
                     "examples_per_second": metric(ms, "examples_per_second"),
                     "eval_ne": metric(ms, "eval_ne"), "sync_gap": sync_metric(ms, "sync_gap_mean"),
                     "blocked_fraction": sync_metric(ms, "worker_blocked_fraction"),
                     "rounds": sync_metric(ms, "rounds")})
    # One yardstick for every method: N x one unsynchronised trainer (none, N = 1).
    base = [r for r in rows if r["trainers"] == 1 and r["algorithm"] == "none"][0]
    base_eps = base["simulated_examples_per_second"]["median"]
    base_host = base["host_examples_per_second"]["median"]
    for r in rows:
        r["scaling_efficiency"] = r["simulated_examples_per_second"]["median"] / (r["trainers"] * base_eps)
        r["host_scaling_efficiency"] = r["host_examples_per_second"]["median"] / (r["trainers"] * base_host)
    md = ("## 3. ShadowSync's claims: network model on (25 Gbit/s, 20 us), trainers 1..16\n\n"
          "%d train rows, small arch, batch 256, 1 worker per trainer, 2 embedding shards, 2 scheduler "
          "threads, dilation auto (= trainers / 2), %d repeats; Bayes NE of the eval data %s. Simulated ex/s = "
          "wall ex/s x dilation; efficiency = simulated ex/s / (N x simulated ex/s of `none` at N = 1), i.e. 1.0 "
          "is linear scaling of one unsynchronised trainer. Ring methods (MA, BMUF) start at N = 2.\n\n" %
          (rows_n, repeats, L.bayes_ne(rows_n)))
    pick = [r for r in rows if r["dense_shards"] == 1 and r["merge"] == "delta"]
    methods = []
    for r in pick:
        m = r["config"].split(" N=")[0]
        if m not in methods:
            methods.append(m)
    by = {(r["config"].split(" N=")[0], r["trainers"]): r for r in pick}
    md += "### Scaling efficiency (one dense shard, merge delta)\n\n" + L.table(
        [[m] + [("%.2f" % by[(m, n)]["scaling_efficiency"]) if (m, n) in by else "-" for n in trainers]
         for m in methods],
        ["method"] + ["N=%d" % n for n in trainers]) + "\n\n"
    md += ("### Scaling efficiency by per-host virtual time (one dense shard, merge delta)\n\n"
           "host ex/s = examples / (worker thread CPU + (lookup + sync waits) / dilation): unlike wall x "
           "dilation it does not count time the shared cores spent on other work.\n\n") + L.table(
        [[m] + [("%.2f" % by[(m, n)]["host_scaling_efficiency"]) if (m, n) in by else "-" for n in trainers]
         for m in methods],
        ["method"] + ["N=%d" % n for n in trainers]) + "\n\n"
    none_at = {r["trainers"]: r["simulated_examples_per_second"]["median"] for r in pick if r["algorithm"] == "none"}
    md += "### Simulated ex/s relative to `none` at the same N / blocked %\n\n" + L.table(
        [[m] + [("%.2f / %.1f" % (by[(m, n)]["simulated_examples_per_second"]["median"] / none_at[n],
                                  100 * by[(m, n)]["blocked_fraction"]["median"])) if (m, n) in by else "-"
                for n in trainers] for m in methods],
        ["method"] + ["N=%d" % n for n in trainers]) + "\n\n"
    md += "### Eval NE, median (one dense shard, merge delta)\n\n" + L.table(
        [[m] + [("%.4f" % by[(m, n)]["eval_ne"]["median"]) if (m, n) in by else "-" for n in trainers]
         for m in methods],
        ["method"] + ["N=%d" % n for n in trainers]) + "\n\n"
    md += "### Every configuration\n\n" + L.table(
        [[r["config"], L.fmt(L.med([m["simulated_examples_per_second"] for m in res[r["config"]]])),
          "%.2f" % r["scaling_efficiency"], "%.2f" % r["host_scaling_efficiency"], L.fmt(L.med([m["eval_ne"] for m in res[r["config"]]]), 4),
          L.fmt(L.med([m["sync"]["sync_gap_mean"] for m in res[r["config"]]]), 2),
          L.fmt(L.med([m["sync"]["worker_blocked_fraction"] for m in res[r["config"]]]), 1, 100.0)]
         for r in rows],
        ["config", "simulated ex/s median (min-max)", "efficiency", "host efficiency", "eval NE", "sync gap", "blocked %"])
    L.write("claims", rows, md, {"rows": rows_n, "repeats": repeats, "trainers": trainers})
    claims_charts(rows, trainers)
    out = []
    for m in ["none", "s-easgd", "s-bmuf", "fr-easgd k=1", "fr-ma k=10"]:
        out.append(("3 claims", "scaling efficiency at N=16 (wall x dilation / per-host time): " + m,
                    "%.2f / %.2f" % (by[(m, 16)]["scaling_efficiency"], by[(m, 16)]["host_scaling_efficiency"])))
    for m in ["s-easgd", "s-ma", "s-bmuf", "fr-easgd k=10", "fr-ma k=10", "fr-bmuf k=10"]:
        out.append(("3 claims", "eval NE at N=8: " + m, "%.4f" % by[(m, 8)]["eval_ne"]["median"]))
    out.append(("3 claims", "blocked % at N=8: s-easgd / fr-easgd k=1",
                "%.1f / %.1f" % (100 * by[("s-easgd", 8)]["blocked_fraction"]["median"],
                                 100 * by[("fr-easgd k=1", 8)]["blocked_fraction"]["median"])))
    return out


SETTINGS = [("default", "teacher 42 (defaults: Zipf 1.1, interactions 0.5, CTR 0.25)", ["--teacher.seed=42"]),
            ("harder", "teacher 7, Zipf 1.05, interactions 1.0, CTR 0.10",
             ["--teacher.seed=7", "--teacher.zipf-exponent=1.05", "--teacher.interaction-scale=1.0",
              "--teacher.target-ctr=0.1"])]


def quality(quick, repeats):
    rows_n = 200000 if quick else 1000000
    eight = ["--cluster.trainers=8", "--cluster.workers=1", "--cluster.embedding-shards=2"]
    methods = [("sequential", ["--cluster.mode=sequential"])] + \
              [(a, eight + ["--sync.algorithm=" + a]) for a in ["s-easgd", "s-ma", "s-bmuf"]] + \
              [(a + " k=10", eight + ["--sync.algorithm=" + a, "--sync.k=10"]) for a in ["fr-easgd", "fr-bmuf"]]
    rows, md_rows = [], []
    for sname, desc, teacher in SETTINGS:
        train = L.datagen("%s-train-%d" % (sname, rows_n), rows_n, 1, teacher)
        ev = L.datagen("%s-eval-%d" % (sname, rows_n // 10), rows_n // 10, 2, teacher)
        common = ["--data.train=" + train, "--data.eval=" + ev] + THREADS
        res = L.measure([(sname + " " + m, a) for m, a in methods], common, repeats, "quality")
        for m, _ in methods:
            ms = res[sname + " " + m]
            gap = L.stat([x["eval_ne"] - x["eval_bayes_ne"] for x in ms])
            rows.append({"setting": sname, "method": m, "eval_ne": metric(ms, "eval_ne"),
                         "bayes_ne": ms[0]["eval_bayes_ne"], "gap_to_bayes": gap,
                         "eval_auc": metric(ms, "eval_auc"), "sync_gap": sync_metric(ms, "sync_gap_mean")})
            md_rows.append([sname, m, L.fmt(L.med([x["eval_ne"] for x in ms]), 4), "%.4f" % ms[0]["eval_bayes_ne"],
                            L.fmt((gap["median"], gap["min"], gap["max"]), 4),
                            L.fmt(L.med([x["eval_auc"] for x in ms]), 4)])
    md = ("## 4. Quality against the Bayes floor: sequential vs shadow methods at 8 trainers\n\n"
          "%d train rows / %d eval rows per setting, small arch, batch 256, 2 scheduler threads, no network "
          "model, %d repeats. Settings: %s. FR k=10 rows are the foreground reference.\n\n" %
          (rows_n, rows_n // 10, repeats, "; ".join("%s = %s" % (s, d) for s, d, _ in SETTINGS)))
    md += L.table(md_rows, ["setting", "method", "eval NE median (min-max)", "Bayes NE", "gap to Bayes", "eval AUC"])
    L.write("quality", rows, md, {"rows": rows_n, "repeats": repeats})
    names = [m for m, _ in methods]
    L.chart("quality", [(s, [(i, r["gap_to_bayes"]["median"]) for i, m in enumerate(names)
                             for r in rows if r["setting"] == s and r["method"] == m]) for s, _, _ in SETTINGS],
            "Eval NE gap to the Bayes NE", "method", "eval NE - Bayes NE (median)",
            xtics=[(m, i) for i, m in enumerate(names)], size=(820, 440))
    out = []
    for s, _, _ in SETTINGS:
        g = {r["method"]: r["gap_to_bayes"]["median"] for r in rows if r["setting"] == s}
        out.append(("4 quality", "NE gap to Bayes (%s): seq / s-easgd / s-ma / s-bmuf / fr-easgd k=10" % s,
                    " / ".join("%.4f" % g[m] for m in ["sequential", "s-easgd", "s-ma", "s-bmuf", "fr-easgd k=10"])))
    return out
