#!/usr/bin/env bash
# The live /metrics endpoint (output.metrics-port) scraped by a real
# Prometheus (Debian's prometheus, scrape interval 1 s), all on loopback:
# a simulated cluster trains on the virtual clock long enough for several
# scrapes; its page passes `promtool check metrics` and has bytes by kind
# and by shard and per-trainer counters; Prometheus's HTTP API answers range
# queries of shadowsync_examples_total and of trainer 1's
# shadowsync_trainer_examples_total with at least two samples, rising; a
# second run on the same port and a port out of range fail naming the
# option. usage: metrics_test.sh PATH/TO/shadowsync
set -u
bin=${1:?shadowsync binary}
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
for tool in prometheus promtool curl; do
  command -v $tool > /dev/null || { echo "missing $tool (scripts/deps.sh installs it)"; exit 1; }
done

"$bin" datagen --rows=50000 --seed=1 --out="$tmp/train.tsv" > /dev/null || { echo "datagen failed"; exit 1; }
read -r mport pport <<< "$(free_ports 2)"

cat > "$tmp/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: shadowsync
    static_configs:
      - targets: ['127.0.0.1:$mport']
EOF
promtool check config "$tmp/prometheus.yml" > "$tmp/promtool-config.log" 2>&1 ||
  { echo "promtool rejects the test's config: $(cat "$tmp/promtool-config.log")"; exit 1; }
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
  --web.listen-address="127.0.0.1:$pport" > "$tmp/prometheus.log" 2>&1 &
pids+=($!)
if wait_for 30 curl -sf "http://127.0.0.1:$pport/-/ready" -o /dev/null; then
  ok "prometheus ready on 127.0.0.1:$pport"
else
  bad "prometheus not ready in 30 s: $(tail -n 3 "$tmp/prometheus.log")"
  summary
  exit 1
fi

# Many epochs of a small set: far longer than the test needs; stopped below
# once Prometheus has seen the counter rise.
"$bin" train --data.train="$tmp/train.tsv" --model.rows-per-table=20000 --train.epochs=400 \
  --cluster.trainers=2 --cluster.embedding-shards=2 --sync.algorithm=s-easgd \
  --scheduler.max-threads=2 --output.progress=none \
  --output.metrics-port="$mport" > "$tmp/train.log" 2>&1 &
train=$!
pids+=($train)

page_counts() { # the page is up and has trained examples
  curl -sf "http://127.0.0.1:$mport/metrics" -o "$tmp/page.txt" &&
    grep -qE '^shadowsync_examples_total\{role="coordinator"\} [1-9]' "$tmp/page.txt"
}
if wait_for 30 page_counts; then
  ok "/metrics serves $(grep -c '^# TYPE' "$tmp/page.txt") families while training: $(grep '^shadowsync_examples_total' "$tmp/page.txt")"
else
  bad "/metrics has no trained examples after 30 s: $(tail -n 3 "$tmp/train.log")"
fi
if promtool check metrics < "$tmp/page.txt" > "$tmp/promtool.log" 2>&1; then
  ok "promtool check metrics accepts the page"
else
  bad "promtool check metrics: $(cat "$tmp/promtool.log")"
fi
for family in examples_per_second train_ne sync_rounds_total sync_gap_batches \
              sync_blocked_ratio virtual_seconds_total; do
  grep -qE "^shadowsync_${family}\{role=\"coordinator\"\} [0-9]" "$tmp/page.txt" ||
    bad "the page lacks shadowsync_$family"
done
for k in lookup push dense_sync; do
  grep -qE "^shadowsync_bytes_total\{role=\"coordinator\",kind=\"$k\"\} [1-9]" "$tmp/page.txt" ||
    bad "the page lacks $k bytes"
done
for sk in '0",kind="lookup' '1",kind="push'; do
  grep -qE "^shadowsync_shard_bytes_total\{role=\"coordinator\",shard=\"$sk\"\} [1-9]" "$tmp/page.txt" ||
    bad "the page lacks shadowsync_shard_bytes_total{shard=\"$sk\"}"
done
for t in 0 1; do
  grep -qE "^shadowsync_trainer_examples_total\{role=\"coordinator\",trainer=\"$t\"\} [1-9]" "$tmp/page.txt" ||
    bad "the page lacks trainer $t's examples"
  grep -qE "^shadowsync_trainer_sync_rounds_total\{role=\"coordinator\",trainer=\"$t\"\} [0-9]" "$tmp/page.txt" ||
    bad "the page lacks trainer $t's sync rounds"
done

# Prometheus's own answer: a counter's samples of the last minute, rising.
rising() { # QUERY (a range selector of one series)
  curl -sf "http://127.0.0.1:$pport/api/v1/query" \
    --data-urlencode "query=$1" -o "$tmp/query.json" &&
    /usr/bin/python3 - "$tmp/query.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["data"]["result"]
v = [float(x[1]) for x in r[0]["values"]] if d["status"] == "success" and len(r) == 1 else []
sys.exit(0 if len(v) >= 2 and all(a < b for a, b in zip(v, v[1:])) else 1)
EOF
}
values() { /usr/bin/python3 -c "import json; d=json.load(open('$tmp/query.json')); print(', '.join(x[1] for x in d['data']['result'][0]['values']))"; }
for q in 'shadowsync_examples_total{job="shadowsync"}[1m]' \
         'shadowsync_trainer_examples_total{job="shadowsync",trainer="1"}[1m]'; do
  if wait_for 30 rising "$q"; then
    ok "prometheus query $q: rose over $(values) examples"
  else
    bad "prometheus saw no rising $q in 30 s: $(cat "$tmp/query.json" 2>/dev/null)"
  fi
done

# A second run on the port the first one serves: refused, naming the option.
expect 1 "output.metrics-port = $mport.*cannot listen on 127.0.0.1:$mport \(Address already in use\)" \
  "a port in use is refused" -- \
  "$bin" train --data.train="$tmp/train.tsv" --output.progress=none --output.metrics-port="$mport"
expect 2 "output.metrics-port" "a port above 65535 is refused" -- \
  "$bin" train --data.train="$tmp/train.tsv" --output.progress=none --output.metrics-port=70000

kill -TERM "$train" 2>/dev/null # stops at a batch boundary
wait "$train" 2>/dev/null
summary
