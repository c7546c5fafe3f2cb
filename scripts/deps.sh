#!/usr/bin/env bash
# Installs the Debian packages the project needs (only those missing).
# Needs root (or sudo) and the Debian archive; idempotent and quiet when
# everything is already there.
set -euo pipefail
pkgs=(g++ cmake make clang libclang-rt-14-dev libcaf-dev libcaf-openssl0.17 libcereal-dev libeigen3-dev libspdlog-dev
      doctest-dev libssl-dev libisal-dev nlohmann-json3-dev openssl python3 python3-numpy python3-torch gnuplot-nox)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#pkgs[@]} packages present"
  exit 0
fi
echo "deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
