#!/usr/bin/env bash
# cdag tests — tests/cli/shapes.sh CDAG SOURCE_DIR: the graphs of examples/graphs/shapes load,
# verify and are priced.
#
# Those files are the shapes of bench/shapes_bench.c (a one-sided histogram, a typed transpose,
# 1-D and 2-D halos, a ring shift, a sparse CG halo, CG dot products) as the program wrote them,
# saved by scripts/bench-shapes.sh --save at the rank counts it times. For every file, `cdag
# verify` must find that the compiled plan leaves the graph's bytes on every rank, and `cdag
# model` must price the graph and the plan. Which plan is chosen is the compiler's business
# (issue #32 changes it), so no plan is asserted here.
set -u
cdag=$1
src=$2
. "$src/tests/cli/lib/expect.sh"
dir=$src/examples/graphs/shapes

# Every shape at the rank counts the script saves, and nothing else.
cases <<'T'
0 ls "$dir"
  count 15 ^[a-z0-9_]+_p[234]\.cdag$
  out histogram_p2.cdag
  out histogram_p3.cdag
  out histogram_p4.cdag
  out transpose_p2.cdag
  out jacobi_p2.cdag
  out jacobi_p3.cdag
  out halo2d_p2.cdag
  out halo2d_p4.cdag
  out ring_p2.cdag
  out ring_p3.cdag
  out sparse_p2.cdag
  out sparse_p3.cdag
  out sparse_p4.cdag
  out cg_dot_p2.cdag
  out cg_dot_p4.cdag
T

# The one-sided histogram reduces what the puts deliver into its segment: its reductions read
# those bytes where they landed, a stage after the puts, instead of receiving them a second
# time as inputs (an alltoall beside a reduce_scatter_block, before).
cases <<T
0 cdag analyze "$dir/histogram_p2.cdag"
  out~ ^note: 2 local reductions and copies read bytes messages deliver where they land, a stage after them: [0-9.]+ us, against [0-9.]+ us otherwise \\(those bytes sent again as their inputs\\)$
  out~ ^stages: 2,
  out~ ^residual: 5 transfers \(640 B\) in 2 messages and 3 local copies
  out~ ^residual: 0 transfers \(0 B\) in 0 messages, 2 reductions
  out! repeated contributions
0 cdag model "$dir/histogram_p4.cdag"
  out~ ^  stage 0: .*
  out~ ^    alltoall over 4 ranks
  out~ ^    residual: 0 messages, 4 reductions, 0 syncs$
  out! reduce_scatter
0 cdag analyze --price=0 "$dir/histogram_p4.cdag"
  out~ ^reduce_scatter_block over all 4 ranks
  out! read bytes messages deliver
T

# One row per file: verify, then model.
rows() {
  local f
  for f in "$dir"/*.cdag; do
    printf '0 cdag verify "%s"\n  out~ ^verify: plan .* matches the graph on all [234] ranks \\(\n' "$f"
    printf '0 cdag model "%s"\n  out~ ^graph: +[0-9.]+ us\n  out~ ^plan: +[0-9.]+ us\n' "$f"
  done
}
cases < <(rows)
finish
