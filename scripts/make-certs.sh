#!/usr/bin/env bash
# Private cluster CA and one certificate + key per node, for CAF's mutual TLS
# (openssl.certificate / openssl.key / openssl.cafile on every node).
#
# usage: scripts/make-certs.sh [--ca-name NAME] [--days N] OUTDIR NODE_ID...
#
# Writes OUTDIR/ca.pem + OUTDIR/ca.key (created once, then reused so nodes can
# be added later) and OUTDIR/NODE_ID.pem + OUTDIR/NODE_ID.key per node: EC
# P-256 keys (mode 600), CN=NODE_ID, subjectAltName DNS:NODE_ID, signed by the
# CA, extended key usage serverAuth + clientAuth. Re-running with an existing
# node id issues that node a new key and certificate. CAF 0.17 checks only
# that a peer's certificate chains to the CA (no host name check): keep ca.key
# private, anyone holding it can join the cluster.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: scripts/make-certs.sh [--ca-name NAME] [--days N] OUTDIR NODE_ID...

Creates a private cluster CA (OUTDIR/ca.pem, OUTDIR/ca.key; reused if both
already exist) and, for each NODE_ID, OUTDIR/NODE_ID.pem and OUTDIR/NODE_ID.key
(mode 600): CN=NODE_ID, signed by the CA, usable as TLS client and server.

  --ca-name NAME  common name of a new CA (default "ShadowSync cluster CA")
  --days N        validity of new certificates in days (default 825)
  -h, --help      this text

NODE_ID: lower-case letters, digits, '_' and '-' ([a-z0-9_-]+); not "ca".
Node settings: openssl.certificate=OUTDIR/NODE_ID.pem,
openssl.key=OUTDIR/NODE_ID.key, openssl.cafile=OUTDIR/ca.pem.
EOF
}

die() {
  echo "make-certs: error: $*" >&2
  exit 1
}

ca_name="ShadowSync cluster CA"
days=825
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --ca-name) [ $# -ge 2 ] || die "--ca-name needs a value"; ca_name=$2; shift 2 ;;
    --ca-name=*) ca_name=${1#*=}; shift ;;
    --days) [ $# -ge 2 ] || die "--days needs a value"; days=$2; shift 2 ;;
    --days=*) days=${1#*=}; shift ;;
    --) shift; args+=("$@"); break ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) args+=("$1"); shift ;;
  esac
done
[ ${#args[@]} -ge 2 ] || { usage >&2; die "need OUTDIR and at least one NODE_ID"; }
outdir=${args[0]}
nodes=("${args[@]:1}")

command -v openssl > /dev/null 2>&1 || die "the openssl command is not installed (apt-get install openssl)"
[[ "$days" =~ ^[1-9][0-9]{0,4}$ ]] || die "--days must be a positive integer (got '$days')"
[ -n "$ca_name" ] || die "--ca-name must not be empty"
[[ "$ca_name" != */* ]] || die "--ca-name must not contain '/' (got '$ca_name')"
for id in "${nodes[@]}"; do
  [[ "$id" =~ ^[a-z0-9_-]+$ ]] || die "bad node id '$id': use [a-z0-9_-]+"
  [ "$id" != ca ] || die "node id 'ca' is reserved for the CA files"
done

if [ ! -d "$outdir" ]; then
  mkdir -p -- "$outdir" 2> /dev/null || die "cannot create directory '$outdir'"
fi
[ -w "$outdir" ] && [ -x "$outdir" ] || die "directory '$outdir' is not writable"

umask 077
work=$(mktemp -d "$outdir/.make-certs.XXXXXX" 2> /dev/null) || die "directory '$outdir' is not writable"
trap 'rm -rf -- "$work"' EXIT

# Run openssl quietly; on failure show its output and stop.
ossl() {
  if ! openssl "$@" > "$work/log" 2>&1; then
    cat "$work/log" >&2
    die "openssl $1 failed"
  fi
}

ca_pem="$outdir/ca.pem"
ca_key="$outdir/ca.key"
if [ -e "$ca_pem" ] || [ -e "$ca_key" ]; then
  [ -f "$ca_pem" ] && [ -f "$ca_key" ] || die "only one of $ca_pem and $ca_key exists: restore the other or remove both"
  cert_pub=$(openssl x509 -in "$ca_pem" -noout -pubkey 2> /dev/null) || die "$ca_pem is not a PEM certificate"
  key_pub=$(openssl pkey -in "$ca_key" -pubout 2> /dev/null) || die "$ca_key is not an unencrypted PEM key"
  [ "$cert_pub" = "$key_pub" ] || die "$ca_key does not belong to $ca_pem"
  echo "reusing CA $ca_pem ($(openssl x509 -in "$ca_pem" -noout -subject))"
else
  ossl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -sha256 \
    -days "$days" -subj "/CN=$ca_name" -keyout "$work/ca.key" -out "$work/ca.pem" \
    -addext "basicConstraints=critical,CA:TRUE,pathlen:0" \
    -addext "keyUsage=critical,keyCertSign,cRLSign"
  chmod 600 "$work/ca.key"
  chmod 644 "$work/ca.pem"
  mv -f -- "$work/ca.key" "$ca_key"
  mv -f -- "$work/ca.pem" "$ca_pem"
  echo "created CA $ca_pem (CN=$ca_name, $days days), key $ca_key"
fi

for id in "${nodes[@]}"; do
  cat > "$work/ext.cnf" <<EOF
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment,keyAgreement
extendedKeyUsage=serverAuth,clientAuth
subjectAltName=DNS:$id
subjectKeyIdentifier=hash
authorityKeyIdentifier=keyid,issuer
EOF
  ossl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -sha256 \
    -subj "/CN=$id" -keyout "$work/$id.key" -out "$work/$id.csr"
  ossl x509 -req -in "$work/$id.csr" -CA "$ca_pem" -CAkey "$ca_key" -sha256 \
    -set_serial "0x$(openssl rand -hex 16)" -days "$days" -extfile "$work/ext.cnf" \
    -out "$work/$id.pem"
  for purpose in sslserver sslclient; do
    openssl verify -CAfile "$ca_pem" -purpose "$purpose" "$work/$id.pem" > "$work/log" 2>&1 ||
      { cat "$work/log" >&2; die "certificate for '$id' does not verify as $purpose"; }
  done
  chmod 600 "$work/$id.key"
  chmod 644 "$work/$id.pem"
  existed=created
  [ -e "$outdir/$id.pem" ] && existed=reissued
  mv -f -- "$work/$id.key" "$outdir/$id.key"
  mv -f -- "$work/$id.pem" "$outdir/$id.pem"
  echo "$existed $outdir/$id.pem and $outdir/$id.key (CN=$id)"
done
