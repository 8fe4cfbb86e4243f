#!/usr/bin/env bash
# cdag — scripts/fuzz.sh [SECONDS]: fuzz the graph-file loader, the `cdag check` path, the
# whole compiler checked by simulation (analyse with options the input chooses, simulate graph
# and plan and compare, lower, model, GOAL, save and reload), the merger of `cdag record` (part
# files to phase files) and graphs built through the public API (fuzz_api).
#
# Configures a clang build in build-fuzz/ (-DCDAG_FUZZ=ON), builds fuzz_load, fuzz_check,
# fuzz_verify, fuzz_merge and fuzz_api, and runs each for SECONDS/5 seconds (default SECONDS=120; CDAG_FUZZ_JOBS, default 2, at once) on a copy
# of its corpus (fuzz/corpus; fuzz/corpus_merge and fuzz/corpus_api for those targets) in a temporary directory, so the repository is not modified. Exits 1 if a target found a crash
# (or leak, timeout, out-of-memory) and prints where the crashing input is; turn it into a
# regression with: cp <input> tests/data/regress/<what-it-does>.goal (see docs/fuzzing.md).
# `fuzz.sh --build` only configures and builds the targets (scripts/test.sh builds them while
# its release tests run).
set -euo pipefail

build_only=0
[ "${1:-}" = --build ] && build_only=1 && shift
secs=${1:-120}
half=$(( secs / 5 > 0 ? secs / 5 : 1 ))
root=$(cd "$(dirname "$0")/.." && pwd)
# CDAG_FUZZ_BUILD=Debug builds unoptimised in build-fuzz-debug/: a third of the build's time,
# for a short run (the test suite's), at fewer inputs a second
build_type=${CDAG_FUZZ_BUILD:-RelWithDebInfo}
case $build_type in
  RelWithDebInfo) build=$root/build-fuzz ;;
  Debug) build=$root/build-fuzz-debug ;;
  *) echo "fuzz.sh: CDAG_FUZZ_BUILD is RelWithDebInfo or Debug" >&2; exit 2 ;;
esac
jobs=${CDAG_FUZZ_JOBS:-2}

command -v clang >/dev/null || { echo "fuzz.sh: clang is needed" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/cdag-fuzz.XXXXXX")
if ! { CC=clang cmake -S "$root" -B "$build" -DCDAG_FUZZ=ON -DCDAG_TESTS=OFF -DCMAKE_BUILD_TYPE="$build_type" &&
       cmake --build "$build" -j "$jobs" --target fuzz_load fuzz_check fuzz_verify fuzz_merge fuzz_api; } >"$work/build.log" 2>&1; then
  cat "$work/build.log" >&2
  echo "fuzz.sh: build failed" >&2
  exit 2
fi
[ $build_only = 1 ] && { rm -rf "$work"; exit 0; }
targets=(fuzz_load fuzz_check fuzz_verify fuzz_merge fuzz_api)
# One target: its corpus copied to $work/<target>, its exit status in $work/<target>/rc.
run_target() {
  local target=$1 dir=$work/$1
  mkdir -p "$dir/corpus" "$dir/artifacts"
  local corpus=$root/fuzz/corpus limits="-max_len=4096 -timeout=5 -rss_limit_mb=2048"
  # the merger's inputs are part files (two, split at a NUL byte): larger, and bounded tighter
  [ "$target" = fuzz_merge ] && corpus=$root/fuzz/corpus_merge limits="-max_len=16384 -timeout=10 -rss_limit_mb=512"
  # API-built graphs: 8 bytes a call, at most 256 calls
  [ "$target" = fuzz_api ] && corpus=$root/fuzz/corpus_api limits="-max_len=2056 -timeout=5 -rss_limit_mb=2048"
  cp "$corpus"/* "$dir/corpus/"
  local rc=0
  # shellcheck disable=SC2086
  "$build/fuzz/$target" -max_total_time="$half" $limits \
    -artifact_prefix="$dir/artifacts/" -print_final_stats=1 "$dir/corpus" >"$dir/log" 2>&1 || rc=$?
  echo $rc >"$dir/rc"
}
# Each target is one process: as many run at once as jobs (each still for SECONDS/5 seconds).
running=0
for target in "${targets[@]}"; do
  echo "fuzz.sh: running $target for $half s (log: $work/$target/log)"
  run_target "$target" &
  running=$((running + 1))
  if [ $running -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait
status=0
for target in "${targets[@]}"; do
  dir=$work/$target
  rc=$(cat "$dir/rc")
  found=$(find "$dir/artifacts" -type f | sort)
  if [ "$rc" -ne 0 ] || [ -n "$found" ]; then
    status=1
    echo "fuzz.sh: $target FAILED (exit $rc); crashing input(s):"
    for f in $found; do echo "  $f"; done
    grep -E "ERROR|SUMMARY|runtime error|fuzz_load:|fuzz_check:|fuzz_verify:|fuzz_merge:|fuzz_api:" "$dir/log" | head -20 || true
  else
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$dir/log" | grep -o '[0-9]*$' || echo "?")
    echo "fuzz.sh: $target ok: $runs inputs, no crash"
  fi
done
if [ $status -eq 0 ]; then rm -rf "$work"; else echo "fuzz.sh: inputs and logs kept in $work"; fi
exit $status
