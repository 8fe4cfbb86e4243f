#!/usr/bin/env bash
# cdag — scripts/bench-accuracy.sh: the LogGOPS model against measurement, at 2 processes.
# Usage: scripts/bench-accuracy.sh [ROUNDS (default 1)]
# Each round calibrates (`cdag calibrate`), times the graphs as written of the rewrite
# benchmark (scripts/bench-rewrite.sh's rows) and of the shapes (bench/shapes_bench.c, the
# programs of docs/shapes.md), then calibrates again; it prints per row the measured time of
# the graph as written (cdag_run with detect = 0, best of the batches), `cdag model`'s time
# of the same graph under each calibration, and model / measured. A machine whose speed
# drifts (a shared host) moves both; the two calibrations show by how much. Ends with how
# many rows fall within 25 % under each calibration. Build directory: $BUILD (default
# build-bench).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD:-$here/build-bench}"
rounds="${1:-1}"
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCDAG_TESTS=OFF >/dev/null
cmake --build "$build" --target rewrite_bench shapes_bench cdag_tool -j2 >/dev/null
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mpiexec -n 2 "$build/bench/rewrite_bench" --save "$tmp" >/dev/null
for r in $(seq "$rounds"); do
  mpiexec -n 2 "$build/cdag" calibrate -o "$tmp/before" >/dev/null
  mpiexec -n 2 "$build/bench/rewrite_bench" >"$tmp/rewrite.txt"
  CDAG_BENCH_BATCHES=31 mpiexec -n 2 "$build/bench/shapes_bench" >"$tmp/shapes.txt"
  mpiexec -n 2 "$build/cdag" calibrate -o "$tmp/after" >/dev/null
  echo "round $r of $rounds ($(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1 /proc/loadavg))"
  # rows: name, graph file, measured us of the graph as written
  {
    awk -v d="$tmp" '($1 == "neighbour" || $1 == "transpose") && NF == 9 {
      printf "%s_%s_x_%s %s/%s_%s_%s_p2.cdag %s\n", $1, $2, $3, d, $1, $2, $3, $6 }' "$tmp/rewrite.txt"
    awk -v d="$here/examples/graphs/shapes" '$2 == "2" && NF > 4 && $1 != "shape" {
      printf "shape_%s %s/%s_p2.cdag %s\n", $1, d, $1, $4 }' "$tmp/shapes.txt"
  } >"$tmp/rows"
  printf '%-26s %10s %10s %7s %10s %7s\n' row measured before ratio after ratio
  while read -r name file measured; do
    b=$(CDAG_MACHINE="$tmp/before" "$build/cdag" model "$file" | awk '/^graph:/ { print $2 }')
    a=$(CDAG_MACHINE="$tmp/after" "$build/cdag" model "$file" | awk '/^graph:/ { print $2 }')
    awk -v n="$name" -v m="$measured" -v b="$b" -v a="$a" \
      'BEGIN { printf "%-26s %10.2f %10.2f %7.2f %10.2f %7.2f\n", n, m, b, b / m, a, a / m }'
  done <"$tmp/rows" | tee "$tmp/table"
  awk '{ n++; if ($4 >= 0.75 && $4 <= 1.25) b++; if ($6 >= 0.75 && $6 <= 1.25) a++ }
    END { printf "within 25%%: %d of %d rows (before), %d of %d (after)\n", b, n, a, n }' "$tmp/table"
  grep '^size' "$tmp/before" | awk '{ printf "%s:%s ", $2, $3 } END { print "(before: bytes:us per pair)" }'
  grep '^size' "$tmp/after" | awk '{ printf "%s:%s ", $2, $3 } END { print "(after)" }'
done
