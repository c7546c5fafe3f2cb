#!/usr/bin/env bash
# Measures whether strangers' failed TLS handshakes stop a training job: RUNS
# times, 3 nodes over mutual TLS train S-EASGD for 2 epochs of 200k rows; 3 s
# into training a TLS client without a certificate (`openssl s_client`)
# connects to the coordinator. One line per run: exit code, trainers lost,
# examples trained. Used for the before/after of deploy/openssl_shim.hpp:
# build an older commit and pass its binary.
#   usage: tls_stranger.sh PATH/TO/shadowsync SOURCE_DIR [RUNS]
set -u
bin=${1:?shadowsync binary}
src=${2:?source dir}
runs=${3:-2}
source "$src/tests/system/lib.sh"
tmp=$(mktemp -d)
trap 'pkill -KILL -f "$tmp/spec.ini" 2>/dev/null; rm -rf "$tmp"' EXIT
bash "$src/scripts/make-certs.sh" "$tmp/certs" coord t0 t1 > /dev/null || exit 1
"$bin" datagen --rows=200000 --seed=11 --out="$tmp/train.tsv" > /dev/null || exit 1
cp "$src/config/cluster-3node.ini" "$tmp/spec.ini"
for r in $(seq 1 "$runs"); do
  read -r pc p0 p1 < <(free_ports 3)
  log="$tmp/run-$r.log"
  timeout 200 "$bin" launch --config-file="$tmp/spec.ini" \
    --deploy.nodes="[coord=127.0.0.1:$pc, t0=127.0.0.1:$p0, t1=127.0.0.1:$p1]" \
    --openssl.certificate="$tmp/certs/{node}.pem" --openssl.key="$tmp/certs/{node}.key" \
    --openssl.cafile="$tmp/certs/ca.pem" --data.train="$tmp/train.tsv" --data.eval= \
    --train.epochs=2 --sync.algorithm=s-easgd --output.progress=plain \
    --output.progress-seconds=1 > "$log" 2>&1 &
  lp=$!
  if wait_for 60 in_log "$log" "\[train\]"; then
    sleep 3
    timeout 10 openssl s_client -connect "127.0.0.1:$pc" -CAfile "$tmp/certs/ca.pem" \
      < /dev/null > /dev/null 2>&1
  fi
  wait "$lp"
  rc=$?
  echo "run $r: exit $rc; trainer lines lost: $(grep -c 'lost after' "$log");" \
    "$(grep -o 'every trainer was lost\|trained [0-9]* examples' "$log" | head -n 1)"
done
