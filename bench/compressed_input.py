#!/usr/bin/python3
"""Reader throughput on compressed input against the same lines plain.

Writes the shared Criteo sample (../shared/data/criteo-kaggle-head10k/
train-8k.tsv) COPIES times into one plain file, and the same bytes as gzip
(level 6, Python's zlib) and zstd (the zstd command, level 3), in a temporary
folder removed at the end. Then runs build/bench/bench_reader on each, the
three alternated (plain gz zst, gz zst plain, ...) for ROUNDS rounds, each run
one timed pass after a warm-up pass (the files are in the page cache: this is
decompression and parsing, not the disk). Prints each input's lines/s and
lines per CPU second as median [min, max], and the ratio to plain taken round
by round. The machine is shared: quote medians.

usage: /usr/bin/python3 bench/compressed_input.py [--rounds N] [--copies K] [--bench PATH]"""
import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(HERE, "..", "..", "shared", "data", "criteo-kaggle-head10k", "train-8k.tsv")


def run(bench, path):
    out = subprocess.run([bench, path, "--repeats", "1", "--file-only"], check=True,
                         capture_output=True, text=True).stdout
    j = json.loads(out.strip().splitlines()[-1])
    return j["lines"], j["lines_per_second_median"], j["lines_per_cpu_second_median"]


def spread(xs, fmt):
    return f"{fmt.format(statistics.median(xs))} [{fmt.format(min(xs))}, {fmt.format(max(xs))}]"


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--copies", type=int, default=25)
    ap.add_argument("--bench", default=os.path.join(HERE, "..", "build", "bench", "bench_reader"))
    a = ap.parse_args()
    if not os.path.exists(SAMPLE):
        sys.exit(f"compressed_input: {SAMPLE} is absent")
    if not shutil.which("zstd"):
        sys.exit("compressed_input: the zstd command is absent (apt install zstd)")
    tmp = tempfile.mkdtemp(prefix="ss-compressed-bench-")
    try:
        with open(SAMPLE, "rb") as f:
            text = f.read() * a.copies
        paths = {k: os.path.join(tmp, "train" + ext) for k, ext in
                 (("plain", ".tsv"), ("gzip", ".tsv.gz"), ("zstd", ".tsv.zst"))}
        with open(paths["plain"], "wb") as f:
            f.write(text)
        with open(paths["gzip"], "wb") as f:
            f.write(gzip.compress(text, 6))
        subprocess.run(["zstd", "-q", "-3", "-f", paths["plain"], "-o", paths["zstd"]], check=True)
        sizes = {k: os.path.getsize(p) for k, p in paths.items()}
        kinds = list(paths)
        res = {k: {"lps": [], "lpc": []} for k in kinds}
        for r in range(a.rounds):
            order = kinds[r % 3:] + kinds[:r % 3]
            for k in order:
                lines, lps, lpc = run(a.bench, paths[k])
                assert lines == 8000 * a.copies, (k, lines)
                res[k]["lps"].append(lps)
                res[k]["lpc"].append(lpc)
        print(f"{8000 * a.copies} lines, {sizes['plain'] / 1e6:.1f} MB plain, "
              f"gzip {sizes['gzip'] / 1e6:.1f} MB, zstd {sizes['zstd'] / 1e6:.1f} MB; {a.rounds} rounds")
        for k in kinds:
            line = f"{k:6s} lines/s {spread(res[k]['lps'], '{:,.0f}')}  lines/cpu-s {spread(res[k]['lpc'], '{:,.0f}')}"
            if k != "plain":
                ratio = [x / p for x, p in zip(res[k]["lps"], res["plain"]["lps"])]
                ratio_c = [x / p for x, p in zip(res[k]["lpc"], res["plain"]["lpc"])]
                line += f"  vs plain: {spread(ratio, '{:.2f}')} (cpu {spread(ratio_c, '{:.2f}')})"
            print(line)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
