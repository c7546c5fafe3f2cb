#!/usr/bin/env bash
# Installs the Debian packages the project needs (only those missing), for
# one of three uses:
#   deps.sh [train]   building and training (the README's run command)
#   deps.sh test      + what the test suite uses: clang with libFuzzer (the
#                     fuzz targets), openssl (test certificates), python3
#                     (the system tests read JSON with it), gnuplot-nox
#                     (the run charts' test), prometheus (the /metrics
#                     test), chromium (the report page's test, headless)
#   deps.sh bench     + the PyTorch reference and its numpy (bench/), and
#                     OpenBLAS: Debian's PyTorch does its GEMMs in whatever
#                     libblas.so.3 provides, the reference BLAS (~3 GFLOP/s
#                     a core) unless an optimised one is installed
# Needs root (or sudo) and the Debian archive; idempotent and quiet when
# everything is already there.
set -euo pipefail
use=${1:-train}
train=(g++ cmake make libcaf-dev libcaf-openssl0.17 libcereal-dev libeigen3-dev libspdlog-dev
       doctest-dev libssl-dev libisal-dev nlohmann-json3-dev libcpp-httplib-dev libzstd-dev
       libabsl-dev)
test=(clang libclang-rt-14-dev openssl python3 gnuplot-nox prometheus chromium)
bench=(python3-numpy python3-torch libopenblas0-pthread)
case "$use" in
  train) pkgs=("${train[@]}") ;;
  test) pkgs=("${train[@]}" "${test[@]}") ;;
  bench) pkgs=("${train[@]}" "${test[@]}" "${bench[@]}") ;;
  *)
    echo "deps: unknown use '$use' (expected train, test or bench)" >&2
    exit 2
    ;;
esac
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps ($use): all ${#pkgs[@]} packages present"
  exit 0
fi
echo "deps ($use): installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
