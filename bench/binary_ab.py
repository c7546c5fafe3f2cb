#!/usr/bin/python3
"""Two shadowsync binaries on the same `train` command, alternated A B A B ...:
each run's training examples/s from its metrics JSON (the training phase
only: start-up, table filling and evaluation are not in it), the ratio A/B
pair by pair, and its median and range. For a code change's speed: A is the
new build, B a copy of the binary before it (cp build/shadowsync /tmp/old
first). Quote the median: the machines are shared and noisy, and pairing
keeps a drift of the machine's speed out of the ratio.

usage: /usr/bin/python3 bench/binary_ab.py A_BINARY B_BINARY [--pairs 5] -- TRAIN_OPTION ...

Example (dct.mp, 2 trainers on 2 cores):
  shadowsync datagen --rows=200000 --seed=3 --out=/tmp/s.csv
  /usr/bin/python3 bench/binary_ab.py build/shadowsync /tmp/old --pairs 9 -- \\
    --data.train=/tmp/s.csv --data.eval= --cluster.embedding-shards=2 --cluster.trainers=2 \\
    --sync.algorithm=s-easgd --sim.clock=wall --dct.mp=true
Exits 1 when a run fails, naming it."""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile


def examples_per_second(binary, options, metrics):
    cmd = [binary, "train", "--output.progress=none", "--output.metrics=" + metrics] + options
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit("binary_ab: exit %d: %s\n%s" % (p.returncode, shlex.join(cmd), p.stdout[-2000:]))
    with open(metrics) as f:
        return json.load(f)["examples_per_second"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", help="binary A (the change)")
    ap.add_argument("b", help="binary B (the baseline)")
    ap.add_argument("--pairs", type=int, default=5)
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    a = ap.parse_args(argv[:cut])
    a.options = argv[cut + 1:] # the train options, as given
    for binary in (a.a, a.b):
        if not os.access(binary, os.X_OK):
            sys.exit("binary_ab: %s is not an executable" % binary)
    with tempfile.TemporaryDirectory(prefix="ss-binary-ab-") as tmp:
        metrics = os.path.join(tmp, "m.json")
        ratios = []
        for k in range(1, a.pairs + 1):
            ea = examples_per_second(a.a, a.options, metrics)
            eb = examples_per_second(a.b, a.options, metrics)
            ratios.append(ea / eb)
            print("pair %d: A %.0f ex/s, B %.0f ex/s, A/B %.3f" % (k, ea, eb, ratios[-1]), flush=True)
    print("A/B examples/s, %d alternated pairs: median %.3f (min %.3f, max %.3f)" %
          (a.pairs, statistics.median(ratios), min(ratios), max(ratios)))


if __name__ == "__main__":
    main()
