#!/usr/bin/env bash
# cdag — scripts/bench-shapes.sh: build and run the shapes benchmark (bench/shapes_bench.c), the
# programs of issue #32 written the way a new user writes them.
# Usage: scripts/bench-shapes.sh [nprocs...] (default: 2 3 4) | --save | --model
# At 2 ranks every shape runs; at 3 the histogram, the 1-D Jacobi halo (3 x 1), the ring shift
# and the sparse CG halo; at 4 the histogram, the 2-D halo (2 x 2), the sparse CG halo and the
# CG dot products (on a 2-core machine, runs above 2 ranks are oversubscribed). Prints per
# shape microseconds per run of MPI by hand, of the graph as written through cdag, of the
# compiled phase, compiled/written and the compiled plan.
# --save rewrites examples/graphs/shapes/*.cdag (the graphs as written, at the same rank
# counts) for `cdag model` and `cdag analyze`; --model prints, for each of those files, the
# LogGOPS model's microseconds of the graph as written and of the compiled plan (`cdag model`).
# CDAG_BENCH_BATCHES=N: best of N batches instead of 9 (more find quiet moments on a busy
# machine). Build directory: $BUILD (default build-bench).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD:-$here/build-bench}"
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCDAG_TESTS=OFF >/dev/null
cmake --build "$build" --target shapes_bench cdag_tool -j2 >/dev/null
bench="$build/bench/shapes_bench"
# The shapes run at each rank count (2: all of them).
shapes_at() {
  case $1 in
    2) echo "" ;;
    3) echo "histogram jacobi ring sparse" ;;
    4) echo "histogram halo2d sparse cg_dot" ;;
    *) echo "" ;;
  esac
}
if [ "${1:-}" = --save ]; then
  out="$here/examples/graphs/shapes"
  mkdir -p "$out"
  for np in 2 3 4; do
    # shellcheck disable=SC2046 # the list splits into shape names
    mpiexec -n "$np" "$bench" --save "$out" $(shapes_at "$np")
  done
  exit 0
fi
if [ "${1:-}" = --model ]; then
  printf '%-20s %9s %9s %11s  %s\n' file graph_us plan_us plan/graph "plan (cdag analyze)"
  for f in "$here"/examples/graphs/shapes/*.cdag; do
    plan=$("$build/cdag" analyze "$f" | awk '
      $1 ~ /^(bcast|scatter|gather|allgather|alltoall|scatterv|gatherv|allgatherv|alltoallv|reduce|allreduce|reduce_scatter|reduce_scatter_block|barrier)$/ {
        sub(/, .*/, ""); s = s (s ? " + " : "") $0 }
      END { print s ? s : "as written" }')
    "$build/cdag" model "$f" | awk -v f="$(basename "$f")" -v plan="$plan" '
      /^graph:/ { g = $2 } /^plan:/ { p = $2 }
      END { printf "%-20s %9.3f %9.3f %11.2f  %s\n", f, g, p, p / g, plan }'
  done
  exit 0
fi
for np in "${@:-2 3 4}"; do
  for n in $np; do
    # shellcheck disable=SC2046
    mpiexec -n "$n" "$bench" $(shapes_at "$n")
  done
done
