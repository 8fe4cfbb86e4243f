#!/usr/bin/env bash
# cdag — the scale benchmark: analysis time (match, dataflow, detect) and memory per process
# for each generated pattern, p = 2^LO .. 2^HI, one process per pattern so peak memory is
# the pattern's own. CDAG_BENCH_FILE=/tmp/x.cdag also times loading the text file.
# Usage: scripts/bench-scale.sh [LO=10] [HI=16] [PATTERN]
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target scale_bench >/dev/null
lo=${1:-10}; hi=${2:-16}
pats=${3:-"binomial_bcast linear_bcast chain_bcast ring_allgather butterfly_alltoall rd_allreduce dissemination_barrier halo1d"}
first=1
for pat in $pats; do
  for k in $(seq "$lo" "$hi"); do
    out=$(./build/bench/scale_bench "$k" "$k" "$pat")
    if [ $first = 1 ]; then echo "$out" | head -1; first=0; fi
    echo "$out" | tail -n +2
  done
done
