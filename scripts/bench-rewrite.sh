#!/usr/bin/env bash
# cdag — scripts/bench-rewrite.sh: build and run the rewrite benchmark (bench/rewrite_bench.c).
# Usage: scripts/bench-rewrite.sh [nprocs (default 2)] [pattern]
# Prints, per pattern and size, microseconds per run of the hand-written loop (one message
# per piece), of the graph as written through cdag, and of the compiled phase, with the
# ratios compiled/written and compiled/p2p. Build directory: $BUILD (default build-bench).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD:-$here/build-bench}"
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCDAG_TESTS=OFF >/dev/null
cmake --build "$build" --target rewrite_bench -j2 >/dev/null
exec mpiexec -n "${1:-2}" "$build/bench/rewrite_bench" ${2:+"$2"}
