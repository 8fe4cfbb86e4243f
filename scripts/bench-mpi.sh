#!/usr/bin/env bash
# cdag — scripts/bench-mpi.sh: build and run the MPI benchmark (bench/mpi_bench.c).
# Usage: scripts/bench-mpi.sh [nprocs (default 2)] [max bytes (default 1048576)] [pattern]
# Prints, per pattern and message size, microseconds per run of the hand-written MPI
# point-to-point loop, the MPI collective, cdag_run of the compiled schedule, the compile
# time and the break-even number of iterations. Build directory: $BUILD (default build-bench).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD:-$here/build-bench}"
np="${1:-2}"
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCDAG_TESTS=OFF >/dev/null
cmake --build "$build" --target mpi_bench -j2 >/dev/null
exec mpiexec -n "$np" "$build/bench/mpi_bench" "${2:-1048576}" ${3:+"$3"}
