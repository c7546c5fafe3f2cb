#!/usr/bin/env bash
# The virtual-clock regression oracle (issue 35, "Behaviour stays the same").
# The simulated cluster on the virtual clock is deterministic, so the metrics
# JSON of a fixed set of configurations pins the behaviour: a change that is
# meant to keep results must leave every configuration's metrics byte-identical.
#
# usage: oracle.sh BIN SRC record FILE   run every configuration, write FILE
#        oracle.sh BIN SRC check FILE    rerun them, print recorded vs now;
#                                        exit 1 on any difference
# BIN is the shadowsync binary, SRC the source tree (for the commit recorded).
# Re-record after an intended change (and say in the commit which field
# changed and why):
#   tests/system/oracle.sh build/shadowsync . record tests/system/oracle.txt
#
# Each configuration is hashed as the sha256 of its whole metrics file: two
# recordings in a row give the same bytes for every configuration (no field
# of the metrics JSON depends on the wall clock under sim.clock=virtual), so
# nothing is stripped. FILE keeps each configuration's options and hash, and
# its metrics as one line of JSON, so that check can name the top-level
# fields whose values changed.
#
# Every run works in a scratch folder with relative paths (data, checkpoint
# dirs), so no path of this machine enters the metrics. Not covered: sim.cost
# =measured (a handler's cost is its thread CPU time, not repeatable) and
# anything on the wall clock.
set -u
bin=${1:?shadowsync binary}
src=${2:?source dir}
mode=${3:?record or check}
file=${4:?oracle file}
case "$mode" in record|check) ;; *) echo "oracle.sh: mode must be record or check, not '$mode'" >&2; exit 2 ;; esac
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
src=$(cd "$src" && pwd)
file=$(cd "$(dirname "$file")" && pwd)/$(basename "$file")
[ -x "$bin" ] || { echo "oracle.sh: no binary $bin" >&2; exit 2; }
[ "$mode" = check ] && [ ! -f "$file" ] && { echo "oracle.sh: no oracle file $file" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2

# Data: 40 000 training rows, 5 000 held out (each run is about a second).
"$bin" datagen --rows=40000 --seed=3 --out=train.tsv > /dev/null || { echo "datagen failed"; exit 2; }
"$bin" datagen --rows=5000 --seed=4 --out=eval.tsv > /dev/null || { echo "datagen failed"; exit 2; }

common="--data.train=train.tsv --data.eval=eval.tsv --model.rows-per-table=20000
  --cluster.mode=simulated --sim.clock=virtual --scheduler.max-threads=2 --output.progress=none"
common=$(echo $common)

# name|options (added to $common). Fault times are virtual seconds or fractions
# of the examples; a run of 40 000 examples on 2 trainers lasts about 0.35 virtual s.
configs=(
  "none|--cluster.trainers=2 --cluster.workers=2 --cluster.embedding-shards=2 --sync.algorithm=none"
  "s-easgd|--cluster.trainers=2 --cluster.embedding-shards=2 --sync.algorithm=s-easgd --net.enabled=true"
  "fr-easgd|--cluster.trainers=2 --cluster.workers=2 --cluster.embedding-shards=2 --sync.algorithm=fr-easgd --sync.k=5"
  "s-ma|--cluster.trainers=3 --cluster.embedding-shards=2 --sync.algorithm=s-ma --net.enabled=true"
  "fr-ma|--cluster.trainers=3 --cluster.workers=2 --cluster.embedding-shards=2 --sync.algorithm=fr-ma --sync.k=5"
  "s-bmuf|--cluster.trainers=3 --cluster.embedding-shards=2 --sync.algorithm=s-bmuf --net.enabled=true"
  "fr-bmuf|--cluster.trainers=2 --cluster.workers=2 --cluster.embedding-shards=2 --sync.algorithm=fr-bmuf --sync.k=5"
  "dct-dp-easgd|--cluster.trainers=2 --cluster.embedding-shards=2 --sync.algorithm=s-easgd --dct.dp=true --net.enabled=true"
  "dct-dp-ma|--cluster.trainers=3 --cluster.embedding-shards=2 --sync.algorithm=fr-ma --sync.k=5 --dct.dp=true"
  "dct-dp-reduce|--cluster.trainers=6 --cluster.embedding-shards=2 --sync.algorithm=s-bmuf --dct.dp=true"
  "dct-mp-straight|--cluster.trainers=2 --cluster.embedding-shards=2 --sync.algorithm=s-easgd --dct.mp=true --net.enabled=true"
  "dct-mp-mask|--cluster.trainers=2 --cluster.embedding-shards=2 --sync.algorithm=s-ma --dct.mp=true --dct.mp-backward=mask"
  "cpr-partial|--cluster.trainers=2 --cluster.embedding-shards=2 --sync.algorithm=s-easgd --recovery.mode=partial --checkpoint.dir=ck-partial --cpr.policy=mfu --cpr.interval=0.05 --faults.kill=[embedding-shard-1@0.5]"
  "cpr-full|--cluster.trainers=2 --cluster.embedding-shards=2 --sync.algorithm=s-easgd --recovery.mode=full --checkpoint.dir=ck-full --cpr.interval=0.05 --faults.kill=[embedding-shard-0@0.5]"
  "cpr-mtbf|--cluster.trainers=2 --cluster.embedding-shards=2 --sync.algorithm=s-ma --recovery.mode=partial --checkpoint.dir=ck-mtbf --cpr.policy=ssu --faults.mtbf=0.1"
  "trainer-kill|--cluster.trainers=4 --cluster.embedding-shards=2 --sync.algorithm=s-ma --faults.kill=[trainer-1@0.5]"
  "cuts|--cluster.trainers=2 --cluster.workers=2 --cluster.embedding-shards=2 --sync.algorithm=s-easgd --net.enabled=true --checkpoint.dir=ck-cuts --checkpoint.every-examples=10000 --checkpoint.keep=100"
  "freeze|--cluster.trainers=2 --cluster.embedding-shards=2 --sync.algorithm=s-easgd --net.enabled=true --faults.freeze=[trainer-1@0.3+0.05s,embedding-shard-0@0.1s+0.02s]"
  "slow-nic|--cluster.trainers=2 --cluster.embedding-shards=2 --sync.algorithm=s-ma --net.enabled=true --faults.slow-nic=[embedding-shard-1@0.05s+0.1s*0.1]"
  "one-host-jitter|--cluster.trainers=2 --cluster.workers=2 --cluster.embedding-shards=2 --sync.algorithm=s-easgd --sim.placement=one-host --sim.cores-per-host=3 --sim.jitter=0.1 --sim.core-contention=1.5"
  "one-host-send-at-work|--cluster.trainers=2 --cluster.embedding-shards=2 --sync.algorithm=s-easgd --sim.placement=one-host --sim.cores-per-host=2 --sim.jitter=0.3 --sim.send-at=work"
  "read-ahead|--cluster.trainers=2 --cluster.workers=2 --cluster.embedding-shards=2 --sync.algorithm=s-easgd --cluster.read-ahead=true --net.enabled=true"
)

# Hash and metrics line of one metrics file: sha256 of the file's bytes, and
# the object as one line of JSON (for naming changed fields).
hash_of() { sha256sum "$1" | cut -d' ' -f1; }
line_of() { /usr/bin/python3 -c "import json,sys; print(json.dumps(json.load(open(sys.argv[1])), separators=(',', ':')))" "$1"; }

# run NAME OPTIONS: writes NAME.json, prints the hash (or FAILED:rc).
run() {
  local name=$1 opts=$2 rc
  # shellcheck disable=SC2086 # the options are words
  "$bin" train $common $opts --output.metrics="$name.json" > "$name.log" 2>&1
  rc=$?
  if [ $rc != 0 ] || [ ! -s "$name.json" ]; then
    echo "oracle.sh: $name: exit $rc: $(tail -n 3 "$name.log")" >&2
    echo "FAILED:exit-$rc"
    return
  fi
  hash_of "$name.json"
}

data_hash=$(cat train.tsv eval.tsv | sha256sum | cut -d' ' -f1)

# The build's float-relevant settings (another instruction-set level or build
# type may round differently), from the CMake cache beside the binary.
build_of() {
  local cache
  cache=$(dirname "$bin")/CMakeCache.txt
  [ -f "$cache" ] || { echo unknown; return; }
  echo "$(grep -E '^(CMAKE_BUILD_TYPE|SS_ISA|SS_ASAN|SS_TSAN):' "$cache" | sed 's/:[A-Z]*=/=/' | tr '\n' ' ' | sed 's/ $//')"
}
build=$(build_of)

if [ "$mode" = record ]; then
  rev=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
  dirty=$(git -C "$src" status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo " (with uncommitted changes)")
  {
    echo "# Virtual-clock regression oracle, written by tests/system/oracle.sh (read its header)."
    echo "# Recorded at $rev$dirty. Check: tests/system/oracle.sh build/shadowsync . check tests/system/oracle.txt"
    echo "# Re-record:                     tests/system/oracle.sh build/shadowsync . record tests/system/oracle.txt"
    echo "# build: $build"
    echo "# common options: $common"
    echo "# hash<TAB>configuration<TAB>sha256 of the metrics JSON<TAB>options; json<TAB>configuration<TAB>metrics"
    printf 'hash\tdatagen\t%s\t%s\n' "$data_hash" "datagen --rows=40000 --seed=3; datagen --rows=5000 --seed=4"
  } > "$tmp/oracle.txt"
  failed=0
  for c in "${configs[@]}"; do
    name=${c%%|*} opts=${c#*|}
    h=$(run "$name" "$opts")
    case "$h" in FAILED*) failed=1 ;; esac
    printf 'hash\t%s\t%s\t%s\n' "$name" "$h" "$opts" >> "$tmp/oracle.txt"
    printf '%-16s %s\n' "$name" "$h"
  done
  for c in "${configs[@]}"; do
    name=${c%%|*}
    [ -s "$name.json" ] && printf 'json\t%s\t%s\n' "$name" "$(line_of "$name.json")" >> "$tmp/oracle.txt"
  done
  [ $failed = 0 ] || { echo "oracle.sh: a configuration failed; $file left as it was" >&2; exit 1; }
  cp "$tmp/oracle.txt" "$file"
  echo "recorded ${#configs[@]} configurations into $file"
  exit 0
fi

# check
recorded_field() { # NAME COLUMN (3 = hash, 4 = options) of a hash line
  awk -F'\t' -v n="$1" -v c="$2" '$1 == "hash" && $2 == n { print $c; exit }' "$file"
}
different=0
was_build=$(sed -n 's/^# build: //p' "$file")
[ "$was_build" = "$build" ] || echo "note: recorded with the build '$was_build', checking '$build' (floats may round differently)"
[ "$(sed -n 's/^# common options: //p' "$file")" = "$common" ] \
  || { echo "DIFFERENT: the common options changed since recording (re-record)"; different=1; }
printf '%-16s %-16s %-16s %s\n' configuration recorded now result
row() { printf '%-16s %-16s %-16s %s\n' "$1" "${2:0:16}" "${3:0:16}" "$4"; }
was=$(recorded_field datagen 3)
if [ "$was" = "$data_hash" ]; then row datagen "$was" "$data_hash" same
else row datagen "${was:--}" "$data_hash" "DIFFERENT (the generated data changed)"; different=1; fi
for c in "${configs[@]}"; do
  name=${c%%|*} opts=${c#*|}
  was=$(recorded_field "$name" 3)
  if [ -z "$was" ]; then
    row "$name" - - "DIFFERENT: not in $file (re-record)"; different=1; continue
  fi
  if [ "$(recorded_field "$name" 4)" != "$opts" ]; then
    row "$name" "$was" - "DIFFERENT: the options changed since recording (re-record)"; different=1; continue
  fi
  now=$(run "$name" "$opts")
  if [ "$now" = "$was" ]; then
    row "$name" "$was" "$now" same
    continue
  fi
  different=1
  fields=-
  if [ -s "$name.json" ]; then
    awk -F'\t' -v n="$name" '$1 == "json" && $2 == n { print $3; exit }' "$file" > "$name.recorded.json"
    fields=$(/usr/bin/python3 - "$name.recorded.json" "$name.json" <<'EOF'
import json, sys
try:
    old = json.load(open(sys.argv[1]))
except ValueError:
    print("(no recorded metrics)"); sys.exit()
new = json.load(open(sys.argv[2]))
keys = list(old) + [k for k in new if k not in old]
out = []
for k in keys:
    a, b = old.get(k, "<absent>"), new.get(k, "<absent>")
    if a == b:
        continue
    if isinstance(a, dict) and isinstance(b, dict):  # name the changed members
        sub = [s for s in list(a) + [s for s in b if s not in a] if a.get(s, "<absent>") != b.get(s, "<absent>")]
        out.append(k + "{" + ",".join(sub) + "}")
    elif not isinstance(a, (dict, list)) and not isinstance(b, (dict, list)):
        out.append("%s %s->%s" % (k, a, b))
    else:
        out.append(k)
print("; ".join(out) if out else "(same values, different bytes: formatting or field order)")
EOF
)
  fi
  row "$name" "$was" "$now" "DIFFERENT: $fields"
done
for n in $(awk -F'\t' '$1 == "hash" && $2 != "datagen" { print $2 }' "$file"); do
  printf '%s\n' "${configs[@]}" | grep -q "^$n|" || { row "$n" "$(recorded_field "$n" 3)" - "DIFFERENT: no longer a configuration (re-record)"; different=1; }
done
if [ $different = 0 ]; then
  echo "oracle: all ${#configs[@]} configurations byte-identical to $file"
else
  echo "oracle: DIFFERENT from $file (see above); if the change is meant, re-record with"
  echo "  tests/system/oracle.sh BIN SRC record $file  and say in the commit which field changed and why"
fi
exit $different
