#!/usr/bin/env bash
# cdag — scripts/fuzz.sh [SECONDS]: fuzz the graph-file loader, the `cdag check` path and the
# whole compiler checked by simulation (analyse, then simulate graph and plan and compare).
#
# Configures a clang build in build-fuzz/ (-DCDAG_FUZZ=ON), builds fuzz_load, fuzz_check and
# fuzz_verify, and runs each for SECONDS/3 seconds (default SECONDS=120) on a copy of fuzz/corpus in a
# temporary directory, so the repository is not modified. Exits 1 if a target found a crash
# (or leak, timeout, out-of-memory) and prints where the crashing input is; turn it into a
# regression with: cp <input> tests/data/regress/<what-it-does>.goal (see docs/fuzzing.md).
set -euo pipefail

secs=${1:-120}
half=$(( secs / 3 > 0 ? secs / 3 : 1 ))
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-fuzz
jobs=${CDAG_FUZZ_JOBS:-2}

command -v clang >/dev/null || { echo "fuzz.sh: clang is needed" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/cdag-fuzz.XXXXXX")
if ! { CC=clang cmake -S "$root" -B "$build" -DCDAG_FUZZ=ON -DCDAG_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
       cmake --build "$build" -j "$jobs" --target fuzz_load fuzz_check fuzz_verify; } >"$work/build.log" 2>&1; then
  cat "$work/build.log" >&2
  echo "fuzz.sh: build failed" >&2
  exit 2
fi
status=0
for target in fuzz_load fuzz_check fuzz_verify; do
  dir=$work/$target
  mkdir -p "$dir/corpus" "$dir/artifacts"
  cp "$root"/fuzz/corpus/* "$dir/corpus/"
  echo "fuzz.sh: running $target for $half s (log: $dir/log)"
  set +e
  "$build/fuzz/$target" -max_total_time="$half" -max_len=4096 -timeout=5 -rss_limit_mb=2048 \
    -artifact_prefix="$dir/artifacts/" -print_final_stats=1 "$dir/corpus" >"$dir/log" 2>&1
  rc=$?
  set -e
  found=$(find "$dir/artifacts" -type f | sort)
  if [ $rc -ne 0 ] || [ -n "$found" ]; then
    status=1
    echo "fuzz.sh: $target FAILED (exit $rc); crashing input(s):"
    for f in $found; do echo "  $f"; done
    grep -E "ERROR|SUMMARY|runtime error|fuzz_load:|fuzz_check:|fuzz_verify:" "$dir/log" | head -20 || true
  else
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$dir/log" | grep -o '[0-9]*$' || echo "?")
    echo "fuzz.sh: $target ok: $runs inputs, no crash"
  fi
done
if [ $status -eq 0 ]; then rm -rf "$work"; else echo "fuzz.sh: inputs and logs kept in $work"; fi
exit $status
