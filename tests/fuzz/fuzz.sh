#!/usr/bin/env bash
# Builds the fuzz targets with clang's libFuzzer (+ ASan + UBSan) and fuzzes
# each, starting from the committed corpus.
#   usage: fuzz.sh SECONDS_PER_TARGET|seeded [BUILD_DIR] [TARGET ...]
# SECONDS: open-ended search, a fresh random seed each time (by hand, to find
# new bugs). seeded: what ctest's fuzz_run does: seed 1 and a fixed number of
# inputs per target (about 30 s each here), without libFuzzer's time- and
# address-driven choices, so a run explores the same inputs every time and
# the test passes or fails deterministically for a given build. A find from an open search goes into tests/fuzz/corpus/<target>
# with its fix, and the replay tests keep it fixed.
# Targets: data ini meta messages checkpoint dct (default: all). Finds are written to
# BUILD_DIR/<target>/crash-* and make the script fail; new corpus entries
# stay in BUILD_DIR/<target>/corpus (tests/fuzz/corpus is not modified; merge
# by hand with -merge=1 to grow it). Needs clang and libFuzzer (Debian clang-14,
# libclang-rt-14-dev); scripts/deps.sh --fuzz installs them.
# libFuzzer, not CAF's option parsing: nothing here goes through
# caf::config_option (clang builds crash there against Debian's GCC-built CAF).
set -euo pipefail
budget=${1:?usage: fuzz.sh SECONDS|seeded [BUILD_DIR] [TARGET ...]}
case $budget in
  seeded) ;;
  *[!0-9]*|'') echo "fuzz.sh: the first argument is a number of seconds or 'seeded', not '$budget'"; exit 2 ;;
esac
src=$(cd "$(dirname "$0")/../.." && pwd)
out=${2:-$src/build/fuzz-libfuzzer}
shift $(($# >= 2 ? 2 : 1))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(data ini meta messages checkpoint dct)
CLANG=${CLANG:-clang++}
command -v "$CLANG" > /dev/null || { echo "fuzz.sh: $CLANG not found (apt-get install clang)"; exit 1; }
mkdir -p "$out/obj"
out=$(cd "$out" && pwd) # the fuzzers run inside it
san=(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
cflags=(-std=c++17 -O1 -g "${san[@]}" -I"$src" -I/usr/include/eigen3 -DNDEBUG)

# Compiles library sources once (again when one changed) with coverage, as
# unity builds: the batches of 8 of one folder's sources in CMake's order (as
# under SS_UNITY, whose batches keep file-local names apart), one
# translation unit each. Prints the objects.
objs_of() {
  local folder batch o i n s
  local -a files
  for folder in $(printf '%s\n' "$@" | sed 's|/[^/]*$||' | LC_ALL=C sort -u); do
    mapfile -t files < <(printf '%s\n' "$@" | grep "^$folder/[^/]*$" | LC_ALL=C sort)
    n=${#files[@]}
    for ((i = 0; i < n; i += 8)); do
      batch=("${files[@]:i:8}")
      o="$out/obj/${folder}_$(printf '%s\n' "${batch[@]}" | md5sum | cut -c1-10).o"
      local stale=0
      [ -f "$o" ] || stale=1
      for s in "${batch[@]}"; do [ "$src/$s" -nt "$o" ] && stale=1; done
      if [ $stale = 1 ]; then
        # (written under a temporary name and renamed: ctest runs the targets
        # in parallel, and two of them may compile the same batch at once)
        printf '#include "%s"\n' "${batch[@]}" > "$o.$$.cpp"
        "$CLANG" "${cflags[@]}" -fsanitize=fuzzer-no-link -c "$o.$$.cpp" -o "$o.$$.tmp" >&2 \
          && mv -f "$o.$$.tmp" "$o"
        rm -f "$o.$$.cpp"
      fi
      echo "$o"
    done
  done
}
sources_of() {
  case $1 in
    data|meta) ls "$src"/data/*.cpp | sed "s|$src/||" ;;
    ini) ls "$src"/data/*.cpp "$src"/model/*.cpp "$src"/config/*.cpp | sed "s|$src/||"
         echo checkpoint/cpr_policy.cpp ;;
    messages) ls "$src"/messages/*.cpp | sed "s|$src/||" ;;
    checkpoint) ls "$src"/checkpoint/*.cpp "$src"/model/*.cpp | sed "s|$src/||" ;;
    dct) echo model/dct_codec.cpp model/half.cpp ;;
  esac
}
libs_of() {
  # model/dynamic_table*.cpp: Abseil's flat_hash_map (libabsl-dev), flags from
  # its pkg-config file as CMake's absl::flat_hash_map target links them
  local absl
  absl=$(pkg-config --libs absl_flat_hash_map)
  case $1 in
    messages) echo "-lcaf_core -lpthread" ;;
    checkpoint) echo "-lisal $absl" ;;
    ini) echo "-lz -lzstd $absl" ;; # data/decoders.cpp: gzip and zstd input
    data|meta) echo "-lz -lzstd" ;;
  esac
}

# Inputs per target in seeded mode: about 30 s each on this 2-core machine.
runs_of() {
  case $1 in
    data) echo 30000 ;;
    ini) echo 20000 ;;
    meta) echo 600000 ;;
    messages) echo 1500000 ;;
    checkpoint) echo 30000 ;;
    dct) echo 5000000 ;;
  esac
}

norandom=()
if [ "$budget" = seeded ] && setarch -R true 2> /dev/null; then
  norandom=(setarch -R)
fi

failed=0
printf '%-9s %10s %10s %8s %8s %s\n' target execs exec/s cov ft result
for t in "${targets[@]}"; do
  # shellcheck disable=SC2046
  mapfile -t objs < <(objs_of $(sources_of "$t"))
  bin="$out/$t/fuzz_$t"
  mkdir -p "$out/$t/corpus"
  # shellcheck disable=SC2046
  "$CLANG" "${cflags[@]}" -fsanitize=fuzzer "$src/tests/fuzz/${t}_fuzz.cpp" "${objs[@]}" \
    $(libs_of "$t") -o "$bin"
  log="$out/$t/fuzz.log"
  if [ "$budget" = seeded ]; then
    # -reload=0: no time-driven rereads of the corpus folder; -use_cmp=0: no
    # mutations from compared values, some of which are heap and stack
    # addresses; no address randomisation where setarch may turn it off.
    # Together they make a seeded run explore the same inputs every time
    # (checked: the same cov/ft/corpus in repeated runs).
    limit=(-seed=1 -runs="$(runs_of "$t")" -reload=0 -use_cmp=0)
    rm -rf "$out/$t/corpus" && mkdir -p "$out/$t/corpus" # same start every time
  else
    limit=(-max_total_time="$budget")
  fi
  set +e
  (cd "$out/$t" && "${norandom[@]}" "$bin" "${limit[@]}" -rss_limit_mb=2048 -timeout=10 \
     -print_final_stats=1 corpus "$src/tests/fuzz/corpus/$t" > "$log" 2>&1)
  rc=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | grep -o '[0-9]*' || echo 0)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -n 1 | grep -o '[0-9]*' || echo 0)
  if [ $rc = 0 ]; then result=ok; else result="FAILED (exit $rc, see $log)"; failed=1; fi
  printf '%-9s %10s %10s %8s %8s %s\n' "$t" "$execs" "$rate" "$cov" "$ft" "$result"
  [ $rc = 0 ] || grep -m 5 -E "ERROR|runtime error|fuzz property|Test unit written" "$log" || true
done
exit $failed
