# Helpers shared by the multi-process tests (sourced, not run).
#   free_ports N        prints N distinct free loopback ports (held together
#                       while picked, so they differ)
#   wait_for SECS CMD   polls CMD every 0.1 s until it succeeds (0) or the
#                       deadline passes (1)
#   in_log FILE RE      FILE contains a line matching RE (grep -q)
#   ok MSG / bad MSG    count a passed / failed check and print it
#   summary             print the counts; status 1 when a check failed (the
#                       test script's last command)
#   json FILE EXPR      print the Python expression EXPR over the JSON object
#                       d read from FILE
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
