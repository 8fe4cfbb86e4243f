#!/usr/bin/env bash
# cdag — scripts/bench-reuse.sh: build and run the reuse benchmark (bench/reuse_bench.c).
# Usage: scripts/bench-reuse.sh [nprocs (default 2)] [halo | ring] [multiple]
# Prints, per phase, microseconds per iteration of the schedule compiled once and run, of the
# graph rebuilt, compiled (a cache hit), run and freed every iteration, their ratio, the
# building of the graph alone and one small MPI_Allreduce. Build directory: $BUILD (default
# build-bench). `multiple`: under MPI_THREAD_MULTIPLE (a duplicate communicator per graph).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD:-$here/build-bench}"
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCDAG_TESTS=OFF >/dev/null
cmake --build "$build" --target reuse_bench -j2 >/dev/null
exec mpiexec -n "${1:-2}" "$build/bench/reuse_bench" "${@:2}"
