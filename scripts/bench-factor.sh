#!/usr/bin/env bash
# cdag — scripts/bench-factor.sh: communication volume of 2.5D LU and Cholesky against the
# seed's lower bound, from `cdag gen lu25d|cholesky25d` and `cdag analyze --json`.
# For each N (1024 .. 16384), P (64, 256, 1024) and c (1, and the largest c <= P^(1/3) with
# P/c square) it prints the bytes received per process (largest, mean), the bound
# 2N^3/(3P sqrt(M)) (LU) or N^3/(3P sqrt(M)) (Cholesky) with M = cN^2/P elements of 8 B, and
# max/bound. The block size is fixed (v = 32 c, the seed's v = a c), so the lower-order terms
# (O(N v) for the diagonal blocks, and the layer reductions' O(M)) shrink relative to the
# N^3/(P sqrt(M)) of the panels as N grows, and LU's max/bound approaches 1.5 for c = 1.
# Usage: scripts/bench-factor.sh [max N (default 16384)] [lu|cholesky|both (default both)]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD:-$here/build-bench}"
maxn="${1:-16384}"
kinds="${2:-both}"
[ "$kinds" = both ] && kinds="lu cholesky"
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCDAG_TESTS=OFF >/dev/null
cmake --build "$build" --target cdag_tool -j2 >/dev/null
file="$(mktemp --suffix=.cdag)"
trap 'rm -f "$file"' EXIT
printf '| kind | N | P | c | v | ops | volume max (B) | mean (B) | bound (B) | max/bound | mean/bound |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|\n'
for kind in $kinds; do
  for p in 64 256 1024; do
    cmax=1
    for c in 2 3 4 5 6 7 8 9 10; do
      [ $((c * c * c)) -le "$p" ] || break
      s=$(python3 -c "import math; q=$p//$c; r=math.isqrt(q); print(1 if $p%$c==0 and r*r==q else 0)")
      [ "$s" = 1 ] && cmax=$c
    done
    for c in $(echo 1 $cmax | tr ' ' '\n' | sort -un); do
      for n in 1024 2048 4096 8192 16384; do
        [ "$n" -le "$maxn" ] || continue
        v=$((32 * c))
        "$build/cdag" gen "${kind}25d" --n "$n" --p "$p" --c "$c" --v "$v" -o "$file"
        "$build/cdag" analyze --json "$file" | python3 -c "
import json, sys
r = json.load(sys.stdin)
ops = sum(r['ops'].values())
v, b = r['volume'], r['bound']
print('| %s | %d | %d | %d | %d | %d | %d | %.0f | %d | %.3f | %.3f |' % ('$kind', $n, $p, $c, $v, ops, v['max'], v['mean'], b, v['max'] / b, v['mean'] / b))"
      done
    done
  done
done
