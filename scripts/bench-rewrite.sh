#!/usr/bin/env bash
# cdag — scripts/bench-rewrite.sh: build and run the rewrite benchmark (bench/rewrite_bench.c).
# Usage: scripts/bench-rewrite.sh [nprocs (default 2)] [pattern] | --save DIR [nprocs]
# Prints, per pattern and size, microseconds per run of the hand-written loop (one message
# per piece), of the graph as written through cdag, and of the compiled phase, with the
# ratios compiled/written and compiled/p2p. --save DIR writes each case's graph as written to
# DIR/PATTERN_A_B_pP.cdag instead (for `cdag model`), timing nothing. Build directory: $BUILD
# (default build-bench).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD:-$here/build-bench}"
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCDAG_TESTS=OFF >/dev/null
cmake --build "$build" --target rewrite_bench -j2 >/dev/null
if [ "${1:-}" = --save ]; then
  mkdir -p "$2"
  exec mpiexec -n "${3:-2}" "$build/bench/rewrite_bench" --save "$2"
fi
exec mpiexec -n "${1:-2}" "$build/bench/rewrite_bench" ${2:+"$2"}
