#!/usr/bin/env bash
# cdag — scripts/bench-overlap.sh: build and run the overlap benchmark (bench/overlap_bench.c).
# Usage: scripts/bench-overlap.sh [nprocs (default 2)] [bytes (default 1048576)] [test interval us]
# Prints, for a 1 MiB allgather and bcast, the time per run with T us of computation (calling
# cdag_test now and then) between cdag_start and cdag_wait, against max(T, communication).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD:-$here/build-bench}"
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCDAG_TESTS=OFF >/dev/null
cmake --build "$build" --target overlap_bench -j2 >/dev/null
exec mpiexec -n "${1:-2}" "$build/bench/overlap_bench" "${2:-1048576}" ${3:+"$3"}
