#!/bin/bash
# Direct node-to-node links against relaying through the coordinator (issue
# 14): 4 nodes on loopback with mutual TLS and with plain TCP (coord with the dense shard, s0
# with the embedding shard, trainer nodes t0 and t1), S-EASGD, one pass over
# generated rows; bench/ab_time.py runs deploy.direct-links=true and =false
# in turn (A B A B ...) and prints the whole-process ratio's median.
# Writes bench/results/direct_links.md.
# usage: bench/direct_links.sh [SHADOWSYNC] [ROWS] [RUNS]
set -eu
B=$(realpath "${1:-build/shadowsync}")
ROWS=${2:-200000}
RUNS=${3:-3}
T="/usr/bin/python3 $PWD/bench/ab_time.py"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
bash scripts/make-certs.sh "$W/certs" coord s0 t0 t1 > /dev/null
"$B" datagen --rows="$ROWS" --seed=11 --out="$W/train.tsv" > /dev/null
"$B" datagen --rows=$((ROWS / 5)) --seed=12 --out="$W/eval.tsv" > /dev/null
read -r p0 p1 p2 p3 < <(/usr/bin/python3 -c "
import socket
ss = [socket.socket() for _ in range(4)]
for s in ss: s.bind(('127.0.0.1', 0))
print(*[s.getsockname()[1] for s in ss])")
C="$B launch --config-file=$PWD/config/cluster-3node.ini --data.train=$W/train.tsv --data.eval=$W/eval.tsv"
C="$C --openssl.cafile=$W/certs/ca.pem --openssl.certificate=$W/certs/{node}.pem --openssl.key=$W/certs/{node}.key"
C="$C --output.progress=none --deploy.nodes=[coord=127.0.0.1:$p0,s0=127.0.0.1:$p1,t0=127.0.0.1:$p2,t1=127.0.0.1:$p3]"
C="$C --deploy.trainers=[t0,t1] --deploy.embedding-shards=[s0] --deploy.dense-shards=[coord] --sync.algorithm=s-easgd"
$T -n "$RUNS" --vs "$C --deploy.direct-links=false" -- $C --deploy.direct-links=true \
  > "$W/tls.txt" 2>&1
P="$C --deploy.insecure=true"
$T -n "$RUNS" --vs "$P --deploy.direct-links=false" -- $P --deploy.direct-links=true \
  > "$W/plain.txt" 2>&1
# Bytes through the coordinator node: every other node connects to its port
# (it connects to no one), so the sum over the sockets on that port of
# bytes_sent + bytes_received (ss -ti, sampled every 0.2 s; the last sample
# before a socket closes) is its traffic. One run per mode.
/usr/bin/python3 - "$C" "$p0" > "$W/bytes.md" <<'PY'
import shlex, subprocess, sys, time
cmd, port = sys.argv[1], sys.argv[2]
def through_coordinator(extra):
    p = subprocess.Popen(shlex.split(cmd) + extra, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen = {}
    while p.poll() is None:
        out = subprocess.run(["ss", "-tinH", "( sport = :%s )" % port], capture_output=True, text=True).stdout
        peer = None
        for line in out.splitlines():
            f = line.split()
            if f and f[0] == "ESTAB":
                peer = f[4]
            elif peer:
                kv = dict(x.split(":", 1) for x in f if x.startswith(("bytes_sent:", "bytes_received:")))
                seen[peer] = int(kv.get("bytes_sent", 0)) + int(kv.get("bytes_received", 0))
                peer = None
        time.sleep(0.2)
    if p.returncode != 0:
        sys.exit("launch failed: %d" % p.returncode)
    return sum(seen.values()) / 1e6
print("| transport | direct links: MB through the coordinator | relayed: MB through the coordinator |")
print("|---|---|---|")
for name, extra in (("mutual TLS", []), ("plain TCP", ["--deploy.insecure=true"])):
    d = through_coordinator(extra + ["--deploy.direct-links=true"])
    r = through_coordinator(extra + ["--deploy.direct-links=false"])
    print("| %s | %.1f | %.1f |" % (name, d, r))
PY
OUT=bench/results/direct_links.md
{
  echo "## Direct node-to-node links vs relaying through the coordinator"
  echo
  echo "\`bash bench/direct_links.sh\`: 4 nodes on loopback, mutual TLS, then plain TCP (coord: dense shard; s0: embedding shard;"
  echo "t0, t1: one trainer each), S-EASGD, \`small\`, one pass over $ROWS generated rows, eval on $((ROWS / 5));"
  echo "$(nproc) cores shared by the four processes. A = \`deploy.direct-links=true\`, B = \`false\` (every message"
  echo "between two non-coordinator nodes relayed by the coordinator node); whole \`launch\` process timed by"
  echo "\`bench/ab_time.py\`, $RUNS alternating pairs after a warm-up pair; quote the medians."
  echo
  echo
  echo "Traffic of the coordinator node's sockets (bytes sent + received on its port, \`ss -ti\` sampled every"
  echo "0.2 s; TLS bytes include the record overhead), one run each:"
  echo
  cat "$W/bytes.md"
  for m in tls plain; do
    echo
    echo "$m:"
    echo
    echo '```'
    grep -E "min +median|A/B|wall s|cpu s" "$W/$m.txt"
    echo '```'
  done
} > "$OUT"
cat "$OUT"
