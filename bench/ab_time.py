#!/usr/bin/python3
"""Times two commands as whole processes, alternated A B A B ..., and prints
each one's wall, user, sys and CPU seconds and peak RSS as min / median / max,
then the ratio A/B of each figure taken pair by pair (min / median / max).
One warm-up run of each comes first and is not counted. Quote the medians:
the machines are shared and noisy, and pairing keeps a drift of the
machine's speed out of the ratio.

usage: /usr/bin/python3 bench/ab_time.py [-n RUNS] [--warmup N] --vs 'COMMAND B' -- COMMAND A ...

COMMAND B is one string split as a shell splits words (no shell runs it);
both commands' output is thrown away. Exits 1 when a run fails, naming it."""
import argparse
import os
import shlex
import statistics
import subprocess
import sys
import time


def timed(cmd):
    """One run: wall, user, sys, cpu seconds and peak RSS (MiB)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"ab_time: exit {code}: {shlex.join(cmd)}")
    return {"wall s": wall, "user s": ru.ru_utime, "sys s": ru.ru_stime,
            "cpu s": ru.ru_utime + ru.ru_stime, "peak MiB": ru.ru_maxrss / 1024.0}


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit(__doc__)
    cut = argv.index("--")
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("-n", type=int, default=5, help="counted runs of each command")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--vs", required=True, help="command B, one string")
    a = ap.parse_args(argv[:cut])
    cmd_a, cmd_b = argv[cut + 1:], shlex.split(a.vs)
    if not cmd_a or not cmd_b:
        sys.exit("ab_time: both commands are needed")
    for _ in range(a.warmup):
        timed(cmd_a)
        timed(cmd_b)
    runs_a, runs_b = [], []
    for _ in range(a.n):
        runs_a.append(timed(cmd_a))
        runs_b.append(timed(cmd_b))
    stat = lambda xs: f"{min(xs):10.3f} {statistics.median(xs):10.3f} {max(xs):10.3f}"
    print(f"{'':14} {'min':>10} {'median':>10} {'max':>10}   {a.n} alternated pairs; whole process")
    for name, runs in (("A", runs_a), ("B", runs_b)):
        for k in runs[0]:
            print(f"{name} {k:12} {stat([r[k] for r in runs])}")
    for k in ("wall s", "user s", "cpu s"):
        ratios = [ra[k] / rb[k] for ra, rb in zip(runs_a, runs_b) if rb[k] > 0]
        print(f"A/B {k[:-2]:10} {stat(ratios)}")


if __name__ == "__main__":
    main()
