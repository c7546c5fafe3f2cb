# Helpers shared by the multi-process tests (sourced, not run).
#   free_ports N        prints N distinct free loopback ports (held together
#                       while picked, so they differ)
#   wait_for SECS CMD   polls CMD every 0.1 s until it succeeds (0) or the
#                       deadline passes (1)
#   in_log FILE RE      FILE contains a line matching RE (grep -q)
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
