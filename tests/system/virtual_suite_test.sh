#!/bin/bash
# bench/virtual_suite.py in miniature (issue 38): two configurations, two
# rounds, 3 000 generated rows. Asserts what does not depend on this
# machine's speed: every round's virtual prediction is the same (the
# constants are inputs, nothing is measured during a virtual run), the table
# has a row per configuration with its error computed from the two columns,
# and a calibration file with half the GEMM rate predicts fewer examples/s
# for the one-worker run (the file is what the prediction rests on).
# usage: virtual_suite_test.sh SHADOWSYNC SOURCE_DIR
set -eu
B=$1
SRC=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
python3 "$SRC/bench/virtual_suite.py" --bin "$B" --only 1,4 --repeats 2 --rows 3000 \
  --json "$T/a.json" > "$T/a.md" 2> "$T/a.err" || { cat "$T/a.err"; fail "suite failed"; }
cat "$T/a.md"
python3 - "$T/a.json" "$T/a.md" <<'PY' || fail "suite output"
import json, re, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert [r["configuration"] for r in runs] == ["1 trainer x 1 worker, no sync", "2 trainers, s-easgd"], runs
for r in runs:
    assert len(r["real"]) == 2 and len(r["virtual"]) == 2, r
    assert all(x > 0 for x in r["real"] + r["virtual"]), r
    assert r["virtual"][0] == r["virtual"][1], ("virtual rounds differ", r)
rows = [l for l in open(sys.argv[2]) if l.startswith("| ") and not l.startswith("| configuration")]
assert len(rows) == 2, rows
for line, r in zip(rows, runs):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    real = sorted(r["real"])
    median = (real[0] + real[1]) / 2
    assert abs(float(cells[1].split()[0]) - median) <= 1, (cells, median)
    err = 100 * (r["virtual"][0] / median - 1)
    assert abs(float(cells[3].split()[0]) - err) <= 0.06, (cells, err)
print("ok: 2 configurations, virtual rounds identical, errors as computed")
PY
python3 - "$SRC/config/calibrations/epyc-x86-64-v3-2core.json" "$T/half.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["sim"]["gflops"] /= 2
json.dump(c, open(sys.argv[2], "w"))
PY
python3 "$SRC/bench/virtual_suite.py" --bin "$B" --only 1 --repeats 1 --rows 3000 \
  --calibration "$T/half.json" --json "$T/h.json" > /dev/null 2> "$T/h.err" || { cat "$T/h.err"; fail "suite with a file failed"; }
python3 - "$T/a.json" "$T/h.json" <<'PY' || fail "half the GEMM rate"
import json, sys
full = json.load(open(sys.argv[1]))["runs"][0]["virtual"][0]
half = json.load(open(sys.argv[2]))["runs"][0]["virtual"][0]
assert half < full, (half, full)
print("ok: half the GEMM rate predicts %.0f examples/s against %.0f" % (half, full))
PY
# --real-from reuses the first suite's real runs and runs only the virtual
# ones: the same real medians, the same (deterministic) predictions.
python3 "$SRC/bench/virtual_suite.py" --bin "$B" --only 1,4 --repeats 1 --rows 3000 \
  --real-from "$T/a.json" --json "$T/r.json" > /dev/null 2> "$T/r.err" || { cat "$T/r.err"; fail "suite --real-from failed"; }
python3 - "$T/a.json" "$T/r.json" <<'PY' || fail "--real-from"
import json, sys
a = json.load(open(sys.argv[1]))["runs"]
r = json.load(open(sys.argv[2]))["runs"]
for x, y in zip(a, r):
    assert y["real"] == x["real"], (x, y)
    assert y["virtual"] == x["virtual"][:1], (x, y)
print("ok: --real-from keeps the real runs and predicts the same")
PY
if python3 "$SRC/bench/virtual_suite.py" --bin "$B" --only 1 --repeats 1 --rows 2000 \
     --real-from "$T/a.json" > /dev/null 2> "$T/w.err"; then
  fail "--real-from with another --rows was accepted"
fi
grep -q "read 3000 rows, not --rows=2000" "$T/w.err" || { cat "$T/w.err"; fail "--real-from's refusal"; }
echo "virtual_suite_test: ok"
