#!/usr/bin/env bash
# Trust (issue 40): io cases. Each case reproduces a row of the issue's
# table and checks the fixed behaviour. usage: trust_io_test.sh PATH/TO/shadowsync SOURCE_DIR
set -u
bin=${1:?shadowsync binary}
src=${2:?source dir}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$src/tests/system/lib.sh"

summary
