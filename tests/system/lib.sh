# Helpers shared by the multi-process tests (sourced, not run).
#   free_ports N        prints N distinct free loopback ports (held together
#                       while picked, so they differ)
#   wait_for SECS CMD   polls CMD every 0.1 s until it succeeds (0) or the
#                       deadline passes (1)
#   in_scratch          makes a scratch folder $tmp, removed at exit, and
#                       enters it
#   start_test BIN      $bin = BIN's absolute path (exit 2 without one), then
#                       in_scratch
#   in_log FILE RE      FILE contains a line matching RE (grep -q)
#   ok MSG / bad MSG    count a passed / failed check and print it
#   summary             print the counts; status 1 when a check failed (the
#                       test script's last command)
#   json FILE EXPR      print the Python expression EXPR over the JSON object
#                       d read from FILE
#   expect CODE PATTERN WHAT -- CMD...
#                       runs CMD (through "${expect_wrap[@]}" when a script
#                       sets it, e.g. a memory limit): ok when it exits CODE
#                       and its output matches the extended regex PATTERN
#                       (empty: any output), else bad with the output's end
free_ports() {
  /usr/bin/python3 -c "
import socket
ss = [socket.socket() for _ in range($1)]
for s in ss: s.bind(('127.0.0.1', 0))
print(*(s.getsockname()[1] for s in ss))"
}

wait_for() {
  local end=$(($(date +%s) + $1))
  shift
  until "$@"; do
    [ "$(date +%s)" -ge "$end" ] && return 1
    sleep 0.1
  done
}

in_scratch() {
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  cd "$tmp" || exit 2
}

start_test() {
  [ -n "${1:-}" ] || { echo "usage: $0 BIN (the shadowsync binary)" >&2; exit 2; }
  bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
  in_scratch
}

in_log() { grep -q "$2" "$1" 2>/dev/null; }

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }
summary() {
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
}
json() { /usr/bin/python3 -c "import json; d=json.load(open('$1')); print($2)"; }

expect_wrap=()
expect() {
  local code=$1 pattern=$2 what=$3
  shift 4
  local out rc
  out=$("${expect_wrap[@]}" "$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$code" ]; then
    bad "$what: exit $rc, expected $code; output: $(echo "$out" | tail -n 3)"
  elif [ -n "$pattern" ] && ! echo "$out" | grep -qE -- "$pattern"; then
    bad "$what: output lacks /$pattern/: $(echo "$out" | tail -n 3)"
  else
    ok "$what"
  fi
}
