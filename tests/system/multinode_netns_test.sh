#!/usr/bin/env bash
# The 3-node cluster across three network namespaces created here: a bridge
# in the coordinator's namespace, a veth link to each trainer's namespace,
# addresses 10.77.<id>.1-3/24 that exist only inside these namespaces, and
# tc netem delay on the trainers' links. Mutual TLS (the hosts are not
# loopback). Skips (exit 77) without root or ip netns; without netem it runs
# with no delay and says so.
# usage: multinode_netns_test.sh PATH/TO/shadowsync SOURCE_DIR
set -u
bin=${1:?shadowsync binary}
src=${2:?source dir}
skip() { echo "SKIP: $1"; exit 77; }
[ "$(id -u)" = 0 ] || skip "not root: cannot create network namespaces"
command -v ip > /dev/null || skip "no 'ip' command (iproute2)"
command -v tc > /dev/null || skip "no 'tc' command (iproute2)"
id=$(( $$ % 200 + 20 ))
ns=(ssc$id sst0$id sst1$id)
net=10.77.$id
tmp=$(mktemp -d)
cleanup() {
  for n in "${ns[@]}"; do
    ip netns pids "$n" 2>/dev/null | xargs -r kill -KILL
    ip netns del "$n" 2>/dev/null
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
for n in "${ns[@]}"; do
  ip netns add "$n" 2>/dev/null || skip "cannot create network namespace $n"
  ip -n "$n" link set lo up
done
ip -n "${ns[0]}" link add br0 type bridge && ip -n "${ns[0]}" addr add "$net.1/24" dev br0 \
  && ip -n "${ns[0]}" link set br0 up || skip "cannot create a bridge"
for i in 1 2; do
  ip link add "ssv$id-$i" type veth peer name "ssp$id-$i" || skip "cannot create veth links"
  ip link set "ssv$id-$i" netns "${ns[0]}"
  ip link set "ssp$id-$i" netns "${ns[$i]}"
  ip -n "${ns[0]}" link set "ssv$id-$i" master br0 up
  ip -n "${ns[$i]}" addr add "$net.$((i + 1))/24" dev "ssp$id-$i"
  ip -n "${ns[$i]}" link set "ssp$id-$i" up
  if ip netns exec "${ns[$i]}" tc qdisc add dev "ssp$id-$i" root netem delay 2ms 2> /dev/null; then
    delay="2 ms netem delay"
  else
    delay="no delay: tc netem is not available here (kernel module sch_netem)"
  fi
done
echo "links: $delay"
source "$src/tests/system/lib.sh"
if command -v ping > /dev/null; then
  rtt=$(ip netns exec "${ns[1]}" ping -c 3 -q "$net.1" 2>/dev/null | awk -F/ '/rtt/ {print $5}')
  [ -n "$rtt" ] && ok "namespaces linked: ping t0 -> coord avg RTT $rtt ms ($delay)" \
    || bad "no connectivity between the namespaces"
fi

bash "$src/scripts/make-certs.sh" "$tmp/certs" coord t0 t1 > /dev/null || exit 1
"$bin" datagen --rows=60000 --seed=21 --out="$tmp/train.tsv" > /dev/null || exit 1
"$bin" datagen --rows=20000 --seed=22 --out="$tmp/eval.tsv" > /dev/null || exit 1
args=(--config-file="$src/config/cluster-3node.ini" --data.train="$tmp/train.tsv"
      --data.eval="$tmp/eval.tsv" --openssl.certificate="$tmp/certs/{node}.pem"
      --openssl.key="$tmp/certs/{node}.key" --openssl.cafile="$tmp/certs/ca.pem"
      --deploy.nodes="[coord=$net.1:7900, t0=$net.2:7901, t1=$net.3:7902]"
      --output.progress=none --output.metrics="$tmp/m.json")
i=0
for node in coord t0 t1; do
  ip netns exec "${ns[$i]}" timeout 300 "$bin" node "${args[@]}" --node=$node > "$tmp/$node.log" 2>&1 &
  pids[$i]=$!
  i=$((i + 1))
done
wait "${pids[0]}"
rc=$?
wait "${pids[1]}" "${pids[2]}"
if [ $rc = 0 ]; then
  ne=$(/usr/bin/python3 -c "import json; d=json.load(open('$tmp/m.json')); print(round(d['eval_ne'], 4), d['examples'])")
  ok "3 nodes in 3 namespaces over TLS ($delay): eval NE, examples = $ne"
else
  bad "netns cluster: coordinator exit $rc: $(tail -n 3 "$tmp/coord.log")"
fi
grep -q "mutual TLS" "$tmp/t0.log" && ok "t0 listened with mutual TLS on $net.2" || bad "t0 log: $(tail -n 2 "$tmp/t0.log")"
summary
