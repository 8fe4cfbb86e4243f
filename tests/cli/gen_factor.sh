#!/usr/bin/env bash
# cdag tests — tests/cli/gen_factor.sh CDAG SOURCE_DIR: `cdag gen lu25d` and `cdag gen cholesky25d`.
#
# Generated graphs pass `cdag verify`; the analysis finds the layer reductions (c = 4: subset
# reductions over 4 ranks) and the plane broadcasts; the report gives the volume and the seed's
# bound, whose value is checked against 2N^3/(3P sqrt(M)) * 8 (LU) and N^3/(3P sqrt(M)) * 8
# (Cholesky) with M = cN^2/P; bad shapes are usage or argument errors.
set -u
cdag=$1
src=$2
. "$src/tests/cli/lib/expect.sh"
# These cases test what detection finds and how each collective would run; the price
# (tests/cli/price.sh) would leave small candidates as the messages they were.
export CDAG_PRICE=0

cases <<'T'
0 cdag gen lu25d --n 256 --p 36 --c 1 -o "$tmp/lu.cdag"
1 cdag gen lu25d --n 256 --p 32 --c 1
  err must be a square
1 cdag gen lu25d --n 256 --p 16 --c 4 --v 6
  err must be a multiple of C = 4
0 cdag gen lu25d --n 128 --p 16 --c 4 -o "$tmp/lu.cdag"
0 cdag verify "$tmp/lu.cdag"
  out matches the graph on all 16 ranks
# M = 4 * 128^2 / 16 = 4096, sqrt(M) = 64: LU bound 2 * 128^3 / (3 * 16 * 64) * 8 = 10922.67 -> 10923
0 cdag analyze "$tmp/lu.cdag"
  out reduce rooted at
  out of double sum
  out scatterv rooted at
  out lower bound 10923 B
0 cdag analyze --json "$tmp/lu.cdag"
  out "bound": 10923,
  out~ "volume": \{"max":[ ]
0 cdag gen cholesky25d --n 128 --p 16 --c 4 -o "$tmp/ch.cdag"
0 cdag verify "$tmp/ch.cdag"
0 cdag analyze "$tmp/ch.cdag"
  out lower bound 5461 B
# default layers: the largest c <= P^(1/3) with P/c square (P = 64: c = 4, M = 4096)
0 cdag gen lu25d --n 256 --p 64 -o "$tmp/d.cdag"
0 cdag analyze --json "$tmp/d.cdag"
  out "bound": 21845,
# c = 1 on a 6 x 6 grid: the plane broadcasts of the panels are found
0 cdag gen lu25d --n 288 --p 36 --c 1 -o "$tmp/p.cdag"
0 cdag analyze "$tmp/p.cdag"
  out bcast rooted at
2 cdag gen lu25d --n 0 --p 4
2 cdag gen nothing
# Work bounded by what was asked: an out-of-range number is refused, not clamped; a prime N
# finds its block size among N's divisors (no O(N) search) and a graph too large to build is
# refused before anything is allocated.
2 cdag gen lu25d --n 99999999999999999999 --p 4
2 cdag gen lu25d --n 64x --p 4
1 timeout 10 "$cdag_bin" gen lu25d --n 1000000007 --p 4
  err N / v = 1000000007 steps on P = 4 processes
1 timeout 10 "$cdag_bin" gen lu25d --n 1099511627777 --p 4
  err need 1 <= N <= 1099511627776
1 cdag gen lu25d --n 64 --p 16777217
  err need 1 <= P <= 16777216
T
finish
