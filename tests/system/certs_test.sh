#!/usr/bin/env bash
# System test of scripts/make-certs.sh: two private CAs in a temp dir; each
# node certificate verifies against its own CA (as TLS client and server) and
# not against the other; the CA is reused when nodes are added; keys are mode
# 600; bad input fails with a clear message. usage: certs_test.sh SOURCE_DIR
set -u
src=${1:?source dir}
script="$src/scripts/make-certs.sh"
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2> /dev/null; rm -rf "$tmp"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
verifies() { openssl verify -CAfile "$1" -purpose "$3" "$2" > /dev/null 2>&1; }
# expect_error NAME PATTERN CMD...: CMD fails and its stderr matches PATTERN.
expect_error() {
  local name=$1 pattern=$2
  shift 2
  if "$@" > "$tmp/out" 2> "$tmp/err"; then
    bad "$name: exit 0"
  elif grep -q -- "$pattern" "$tmp/err"; then
    ok "$name: $(head -n 1 "$tmp/err")"
  else
    bad "$name: stderr lacks '$pattern': $(cat "$tmp/err")"
  fi
}

command -v openssl > /dev/null || { echo "SKIP: openssl CLI not installed"; exit 0; }

if bash "$script" --ca-name "Cluster A" "$tmp/a" coord shard-0 trainer_1 > "$tmp/a.log" 2>&1; then
  ok "cluster A: CA and three node certificates"
else
  bad "cluster A: $(cat "$tmp/a.log")"
fi
if bash "$script" --ca-name "Cluster B" --days 30 "$tmp/b" coord intruder > "$tmp/b.log" 2>&1; then
  ok "cluster B: CA and two node certificates"
else
  bad "cluster B: $(cat "$tmp/b.log")"
fi

for d in a b; do
  for f in ca.pem ca.key coord.pem coord.key; do
    [ -s "$tmp/$d/$f" ] || bad "$d/$f missing"
  done
done
keys=$(ls "$tmp"/a/*.key "$tmp"/b/*.key 2>/dev/null | wc -l)
modes=$(stat -c '%a %n' "$tmp"/a/*.key "$tmp"/b/*.key 2>&1 | grep -v '^600 ')
[ "$keys" -ge 4 ] && [ -z "$modes" ] && ok "all $keys keys are mode 600" \
  || bad "keys ($keys found) not all mode 600: $modes"

for id in coord shard-0 trainer_1; do
  for purpose in sslserver sslclient; do
    if verifies "$tmp/a/ca.pem" "$tmp/a/$id.pem" $purpose; then
      ok "a/$id verifies against CA A as $purpose"
    else
      bad "a/$id does not verify against CA A as $purpose"
    fi
  done
  if verifies "$tmp/b/ca.pem" "$tmp/a/$id.pem" sslclient; then
    bad "a/$id verifies against the foreign CA B"
  else
    ok "a/$id is refused by the foreign CA B"
  fi
done
verifies "$tmp/a/ca.pem" "$tmp/b/intruder.pem" sslclient &&
  bad "b/intruder verifies against CA A" || ok "b/intruder is refused by CA A"

cn=$(openssl x509 -in "$tmp/a/shard-0.pem" -noout -subject)
[[ "$cn" == *"CN = shard-0"* || "$cn" == *"CN=shard-0"* ]] && ok "CN is the node id ($cn)" ||
  bad "subject is '$cn'"
issuer=$(openssl x509 -in "$tmp/b/coord.pem" -noout -issuer)
[[ "$issuer" == *"Cluster B"* ]] && ok "issuer is the named CA ($issuer)" || bad "issuer is '$issuer'"
openssl x509 -in "$tmp/a/coord.pem" -noout -text | grep -q "TLS Web Server Authentication, TLS Web Client Authentication" &&
  ok "extended key usage serverAuth + clientAuth" || bad "extended key usage missing"
# The certificate and key of a node belong together.
if [ "$(openssl x509 -in "$tmp/a/coord.pem" -noout -pubkey)" = "$(openssl pkey -in "$tmp/a/coord.key" -pubout)" ]; then
  ok "a/coord.key matches a/coord.pem"
else
  bad "a/coord.key does not match a/coord.pem"
fi

# Adding a node later reuses the CA: old and new certificates share it.
ca_before=$(openssl x509 -in "$tmp/a/ca.pem" -noout -fingerprint -sha256)
if bash "$script" "$tmp/a" trainer-2 > "$tmp/a2.log" 2>&1 && grep -q "reusing CA" "$tmp/a2.log"; then
  ca_after=$(openssl x509 -in "$tmp/a/ca.pem" -noout -fingerprint -sha256)
  if [ "$ca_before" = "$ca_after" ] && verifies "$tmp/a/ca.pem" "$tmp/a/trainer-2.pem" sslclient &&
      verifies "$tmp/a/ca.pem" "$tmp/a/coord.pem" sslserver; then
    ok "adding trainer-2 reuses CA A; old and new certificates verify"
  else
    bad "CA changed or certificates no longer verify after adding a node"
  fi
else
  bad "adding a node: $(cat "$tmp/a2.log")"
fi

expect_error "bad node id" "bad node id 'Shard0'" bash "$script" "$tmp/c" Shard0
expect_error "node id with a slash" "bad node id" bash "$script" "$tmp/c" ../x
expect_error "reserved node id" "reserved" bash "$script" "$tmp/c" ca
expect_error "bad --days" "positive integer" bash "$script" --days x "$tmp/c" n1
expect_error "no node id" "need OUTDIR" bash "$script" "$tmp/c"
expect_error "unknown option" "unknown option" bash "$script" --bogus "$tmp/c" n1
touch "$tmp/file"
expect_error "OUTDIR under a file" "cannot create directory" bash "$script" "$tmp/file/sub" n1
mkdir -p "$tmp/onlyca" && cp "$tmp/a/ca.pem" "$tmp/onlyca/"
expect_error "CA certificate without key" "only one of" bash "$script" "$tmp/onlyca" n1
cp "$tmp/b/ca.key" "$tmp/onlyca/"
expect_error "CA key of another CA" "does not belong" bash "$script" "$tmp/onlyca" n1
if [ "$(id -u)" != 0 ]; then
  mkdir "$tmp/ro" && chmod 555 "$tmp/ro"
  expect_error "unwritable OUTDIR" "not writable" bash "$script" "$tmp/ro" n1
else
  echo "skip - unwritable OUTDIR (running as root)"
fi
mkdir -p "$tmp/bin" && ln -s "$(command -v bash)" "$tmp/bin/bash"
expect_error "no openssl on PATH" "openssl command is not installed" \
  env PATH="$tmp/bin" "$tmp/bin/bash" "$script" "$tmp/c" n1
[ ! -e "$tmp/c" ] && ok "failed runs wrote nothing" || bad "failed runs created $tmp/c"
bash "$script" --help | grep -q "usage:" && ok "--help prints usage" || bad "--help"

summary
