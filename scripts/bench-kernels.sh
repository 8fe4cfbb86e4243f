#!/usr/bin/env bash
# cdag — scripts/bench-kernels.sh: build and run the kernel benchmark (bench/kernel_bench.c).
# Usage: scripts/bench-kernels.sh [nprocs (default 2)] [max bytes (default 1048576)]
# Prints microseconds per call of each cdag kernel (src/exec/kernels/kernel_*.c) and of MPI's own
# collective for sizes 8, 128, ... up to max bytes, then the cost model's predicted
# broadcast times for p = 2^4 .. 2^16 (circulant, binomial, scatter+allgather). The library
# is built in $BUILD (default build-bench-kernels, Release, no tests); the benchmark is
# compiled there with mpicc against the internal static library (bench/CMakeLists.txt is
# not involved).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD:-$here/build-bench-kernels}"
np="${1:-2}"
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCDAG_TESTS=OFF >/dev/null
cmake --build "$build" --target cdag_internal -j2 >/dev/null
mpicc -std=c11 -O2 -D_POSIX_C_SOURCE=200809L -I"$here/include" -I"$here/src" \
  "$here/bench/kernel_bench.c" "$build/libcdag_internal.a" -lJudy -lm -o "$build/kernel_bench"
exec mpiexec -n "$np" "$build/kernel_bench" "${2:-1048576}"
