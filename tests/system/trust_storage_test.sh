#!/usr/bin/env bash
# Trust (issue 40): storage cases. Each case reproduces a row of the issue's
# table and checks the fixed behaviour. usage: trust_storage_test.sh PATH/TO/shadowsync SOURCE_DIR
#  row 3: a model whose embedding-0.bin is well-formed but holds more weights
#         than the tables (manifest updated) is refused by eval, naming the
#         file and the lengths (was: segfault, exit 139);
#  row 4: a checkpoint of the same name (a periodic one on the final count)
#         never leaves LATEST naming a folder that is being removed (strace);
#  row 5: a second run on a checkpoint dir that a live run owns is refused
#         (exit 2, naming the dir and the owner's pid); after the owner dies
#         the dir is taken over.
set -u
bin=${1:?shadowsync binary}
src=${2:?source dir}
tmp=$(mktemp -d)
owner=
trap '[ -n "$owner" ] && kill -KILL "$owner" 2>/dev/null; rm -rf "$tmp"' EXIT
source "$src/tests/system/lib.sh"

"$bin" datagen --rows=4000 --seed=31 --out="$tmp/train.tsv" > /dev/null || { echo "datagen failed"; exit 1; }
"$bin" datagen --rows=1000 --seed=32 --out="$tmp/eval.tsv" > /dev/null || exit 1
common=(--data.train="$tmp/train.tsv" --cluster.mode=sequential --model.rows-per-table=1000
        --output.progress=none)

# Row 3. embedding-0.bin rewritten with every array twice as long (its
# attributes unchanged), the manifest's byte count and CRC32C updated.
"$bin" train "${common[@]}" --output.model="$tmp/m" > "$tmp/m.log" 2>&1 \
  || bad "train for row 3: $(tail -n 2 "$tmp/m.log")"
/usr/bin/python3 - "$tmp/m/$(cat "$tmp/m/LATEST")" <<'PY' || bad "row 3: could not craft the file"
import json, struct, sys
folder = sys.argv[1]
path = folder + "/embedding-0.bin"
b = open(path, "rb").read()
hlen = struct.unpack_from("<Q", b, 8)[0]
h, arrays = bytearray(b[16:16 + hlen]), b[16 + hlen:]
# Cereal portable binary: 1 byte endianness, u32 version, kind, attrs, arrays
# (each name a u64 length and bytes, each value a u64).
p = 1 + 4
def text(p):
    n = struct.unpack_from("<Q", h, p)[0]
    return p + 8 + n
p = text(p)
n = struct.unpack_from("<Q", h, p)[0]; p += 8
for _ in range(n):
    p = text(p) + 8
n = struct.unpack_from("<Q", h, p)[0]; p += 8
out, off = b"", 0
for _ in range(n):
    p = text(p)
    count = struct.unpack_from("<Q", h, p)[0]
    struct.pack_into("<Q", h, p, 2 * count)
    data = arrays[off:off + 4 * count]
    out += data + data
    off += 4 * count
    p += 8
new = b[:16] + bytes(h) + out
open(path, "wb").write(new)
def crc32c(data):
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    c = 0xFFFFFFFF
    for x in data:
        c = t[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF
m = json.load(open(folder + "/manifest.json"))
for f in m["files"]:
    if f["name"] == "embedding-0.bin":
        f["bytes"], f["crc32c"] = len(new), crc32c(new)
json.dump(m, open(folder + "/manifest.json", "w"))
PY
"$bin" eval --model="$tmp/m" --data.eval="$tmp/eval.tsv" --output.progress=none > "$tmp/r3.log" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "embedding-0.bin.*array 'weights' has [0-9]* floats, the model.* needs" "$tmp/r3.log" \
  && ok "row 3: eval refuses an embedding file longer than the tables (exit 1): $(grep -o "array 'weights'.*" "$tmp/r3.log" | head -n 1)" \
  || bad "row 3: eval of an over-long embedding file: exit $rc: $(tail -n 1 "$tmp/r3.log")"

# Row 4. Periodic checkpoints every 2000 examples of 4000, written in the
# foreground (a background one still being written skips the next): the one at 4000
# and the final one share a name. strace records every unlink, rmdir and
# rename; at no point may a path under the folder LATEST names be removed
# or replaced.
if command -v strace > /dev/null; then
  strace -f -o "$tmp/r4.trace" -e trace=unlink,unlinkat,rmdir,rename,renameat,renameat2 \
    "$bin" train "${common[@]}" --checkpoint.dir="$tmp/ck" --checkpoint.every-examples=2000 \
    --checkpoint.keep=1 --checkpoint.background=false > "$tmp/r4.log" 2>&1
  rc=$?
  verdict=$(/usr/bin/python3 - "$tmp/r4.trace" "$tmp/ck" <<'PY'
import re, sys
trace, d = sys.argv[1], sys.argv[2]
latest, pending, bad, switches = None, None, [], 0
for line in open(trace):
    paths = re.findall(r'"([^"]*)"', line)
    if not paths:
        continue
    if "rename" in line and len(paths) >= 2:
        src, dst = paths[0], paths[-1]
        if dst == d + "/LATEST":
            latest, switches = pending, switches + 1
            continue
        if dst.startswith(d + "/ckpt-"):
            if latest and (dst == d + "/" + latest or dst.startswith(d + "/" + latest + "/")):
                bad.append("renamed onto " + dst + " while LATEST names it")
            pending = dst[len(d) + 1:]
            continue
    if ("unlink" in line or "rmdir" in line) and latest:
        p = paths[-1]
        if p == d + "/" + latest or p.startswith(d + "/" + latest + "/"):
            bad.append("removed " + p + " while LATEST names " + latest)
print("ok" if not bad and switches >= 2 else "; ".join(bad[:2]) or f"{switches} LATEST switches")
PY
)
  if [ $rc = 0 ] && [ "$verdict" = ok ]; then
    ok "row 4: a checkpoint of the same name goes in beside the old one, LATEST switched first ($(cat "$tmp/ck/LATEST"))"
  else
    bad "row 4: exit $rc: $verdict"
  fi
  ls "$tmp/ck/$(cat "$tmp/ck/LATEST")/manifest.json" > /dev/null 2>&1 \
    && [ "$(ls -d "$tmp/ck"/ckpt-* | wc -l)" = 1 ] \
    && ok "row 4: keep=1 leaves exactly the checkpoint LATEST names" \
    || bad "row 4: after the run: LATEST $(cat "$tmp/ck/LATEST"), folders $(ls "$tmp/ck" | tr '\n' ' ')"
else
  ok "row 4: skipped (no strace)"
fi

# Row 5. A run that owns $tmp/own (long: many passes), then a second run on it.
"$bin" train "${common[@]}" --train.epochs=1000 --checkpoint.dir="$tmp/own" \
  --checkpoint.every-examples=4000 > "$tmp/owner.log" 2>&1 &
owner=$!
if wait_for 60 test -s "$tmp/own/LATEST"; then
  for mode in sequential simulated; do
    "$bin" train --data.train="$tmp/train.tsv" --model.rows-per-table=1000 --output.progress=none \
      --cluster.mode=$mode --checkpoint.dir="$tmp/own" > "$tmp/second-$mode.log" 2>&1
    rc=$?
    [ $rc = 2 ] && grep -q "$tmp/own.*in use.*pid $owner" "$tmp/second-$mode.log" \
      && ok "row 5: a second ($mode) run is refused (exit 2): $(grep -o "checkpoint dir.*" "$tmp/second-$mode.log" | head -n 1)" \
      || bad "row 5: a second ($mode) run on an owned dir: exit $rc: $(tail -n 1 "$tmp/second-$mode.log")"
  done
  kill -0 "$owner" 2>/dev/null && ok "row 5: the owner runs on" || bad "row 5: the owner stopped: $(tail -n 2 "$tmp/owner.log")"
  kill -KILL "$owner" 2>/dev/null
  wait "$owner" 2>/dev/null
  mkdir -p "$tmp/own/.tmp-ckpt-000000000123-$owner" # as if it died mid-checkpoint
  owner=
  "$bin" train "${common[@]}" --checkpoint.dir="$tmp/own" > "$tmp/third.log" 2>&1
  rc=$?
  [ $rc = 0 ] && [ ! -e "$tmp/own/.tmp-ckpt-000000000123-"* ] \
    && ok "row 5: after the owner died the dir is taken over and its temporary folder removed" \
    || bad "row 5: after the owner died: exit $rc, $(ls -a "$tmp/own" | tr '\n' ' '): $(tail -n 1 "$tmp/third.log")"
else
  bad "row 5: the owner wrote no checkpoint within 60 s: $(tail -n 2 "$tmp/owner.log")"
fi

summary
