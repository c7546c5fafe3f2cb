#!/bin/bash
# The README's run command on a bare Debian 12 machine (issue 37 item 4): a
# fresh minbase system made by debootstrap (the "required" packages only: no
# compiler, no CMake, no library), a clone of this repository at REV inside
# it, and `./scripts/run.sh` timed from its start to the trained model's
# summary: the package installation (deps.sh), the build of shadowsync and
# the first run (this machine's calibration measured once, the data
# generated, one pass). Needs root, debootstrap and the Debian archive.
# The chroot shares this machine's kernel and cores; nothing else of this
# machine is visible in it.
#
# usage: bench/bare_machine.sh [REV] [RUNS]   (REV: default HEAD; RUNS: 1)
# Prints one line per run: the seconds from run.sh's start to its exit, and
# the seconds of its three phases read from run.sh's own output.
set -eu
REV=$(git rev-parse "${1:-HEAD}")
RUNS=${2:-1}
SRC=$PWD
command -v debootstrap > /dev/null || { echo "bare_machine: needs debootstrap (apt-get install debootstrap)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "bare_machine: needs root (chroot, mount)" >&2; exit 2; }
W=$(mktemp -d /tmp/ss-bare-XXXXXX)
R=$W/root
cleanup() {
  for m in sys dev/pts dev proc; do mountpoint -q "$R/$m" && umount "$R/$m"; done
  # Only the folder made above, and only once nothing is mounted in it.
  if ! grep -q " $W/" /proc/mounts; then rm -rf "$W"; fi
}
trap cleanup EXIT
for i in $(seq 1 "$RUNS"); do
  cleanup; mkdir -p "$W"
  debootstrap --variant=minbase bookworm "$R" http://deb.debian.org/debian > "$W/debootstrap.log" 2>&1 ||
    { tail -n 5 "$W/debootstrap.log"; exit 1; }
  cp /etc/resolv.conf "$R/etc/resolv.conf"
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then # the updates and security suites too
    rm -f "$R/etc/apt/sources.list"; cp /etc/apt/sources.list.d/debian.sources "$R/etc/apt/sources.list.d/"
  fi
  mount -t proc proc "$R/proc"; mount --bind /dev "$R/dev"; mount --bind /dev/pts "$R/dev/pts"
  mount -t sysfs sys "$R/sys"
  mkdir -p "$R/work"; git clone -q "$SRC" "$R/work/main"; git -C "$R/work/main" checkout -q "$REV"
  chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root /bin/bash -c '
    cd /work/main; s=$(date +%s.%N)
    ./scripts/run.sh > /tmp/run.log 2>&1; rc=$?
    e=$(date +%s.%N); echo "$s $e $rc" > /tmp/run.times' || true
  read -r s e rc < "$R/tmp/run.times"
  cp "$R/tmp/run.log" "$W/../ss-bare-run-$i.log"
  # Phase ends, to the second: the packages' at dpkg's last write of its
  # status, the build's at build.sh's last write of build.log.
  d=$(stat -c %Y "$R/var/lib/dpkg/status")
  b=$(stat -c %Y "$R/work/main/build.log")
  awk -v s="$s" -v e="$e" -v rc="$rc" -v b="$b" -v d="$d" -v rev="${REV:0:7}" -v i="$i" 'BEGIN {
    printf "run %d of %s: rc=%d, %.0f s in all (packages %.0f s, build %.0f s, first run %.0f s)\n",
      i, rev, rc, e - s, d - s, b - d, e - b }'
  echo "  log: /tmp/ss-bare-run-$i.log"
done
