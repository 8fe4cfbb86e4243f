#!/usr/bin/env bash
# cdag tests — tests/cli/gen_redistribute.sh CDAG SOURCE_DIR: `cdag gen redistribute`.
#
# Generated graphs (a 2 x 2 grid to a 1 x 4 row; a 2 x 2 grid to a 3 x 1 column overlapping
# it in two ranks; 3 : 5 overlapping groups) pass `cdag verify`; under the default options
# the first two are one alltoallv over the union of the groups, own pieces included,
# reported as a redistribution; the third, whose pairs move whole columns (too few pieces
# for the rule), is one alltoallv when --density admits it; bad shapes and layouts are
# usage or argument errors.
set -u
cdag=$1
src=$2
. "$src/tests/cli/lib/expect.sh"
# These cases test what detection finds and how each collective would run; the price
# (tests/cli/price.sh) would leave small candidates as the messages they were.
export CDAG_PRICE=0

cases <<'T'
0 cdag gen redistribute --shape 32x32 --elem 8 --from 8x8@2x2 --to 4x4@1x4 -o "$tmp/a.cdag"
0 cdag check "$tmp/a.cdag"
  out ok: 4 ranks, 224 ops (96 send, 96 recv, 0 reduce, 32 copy, 0 calc)
0 cdag verify "$tmp/a.cdag"
  out matches the graph on all 4 ranks
0 cdag analyze "$tmp/a.cdag"
  out alltoallv over all 4 ranks, 8192 B in total (128 transfers)
  out   redistribution: 6 of 12 pairs move 96 pieces, 90 beyond the first of each pair (at least the group's 12 pairs)
  out residual: 0 transfers (0 B) in 0 messages
0 cdag analyze --json "$tmp/a.cdag"
  out "redistribution": {"pairs": 6, "pieces": 96}
0 cdag verify "$tmp/a.cdag"
  out plan (1 collectives, 0 residual messages) matches the graph on all 4 ranks
0 cdag analyze --density=0.5 "$tmp/a.cdag"
  out alltoallv over all 4 ranks, 8192 B in total (128 transfers)
# 2 x 2 from rank 0 to 3 x 1 from rank 2: 5 ranks, 10 of 20 pairs
0 cdag gen redistribute --shape 32x32 --elem 8 --from 4x4@2x2 --to 8x2@3x1+2 -o "$tmp/c.cdag"
0 cdag analyze "$tmp/c.cdag"
  out alltoallv over all 5 ranks, 8192 B in total
  out   redistribution: 10 of 20 pairs
  out residual: 0 transfers (0 B) in 0 messages
0 cdag verify "$tmp/c.cdag"
  out plan (1 collectives, 0 residual messages) matches the graph on all 5 ranks
# 3 ranks to 5, overlapping in ranks 1 and 2: 6 ranks, one alltoallv over all
0 cdag gen redistribute --shape 30x30 --elem 8 --from 4x4@1x3 --to 3x3@1x5+1 -o "$tmp/b.cdag"
0 cdag verify "$tmp/b.cdag"
  out matches the graph on all 6 ranks
0 cdag analyze --density=0.3 "$tmp/b.cdag"
  out alltoallv over all 6 ranks
0 cdag verify --density=0.3 "$tmp/b.cdag"
  out plan (1 collectives
# source at 0, destination at 2^40 on every rank
0 cdag gen redistribute --shape 4x4 --elem 1 --from 4x4@1x1 --to 4x4@1x1+1
  out addr 0x10000000000
# errors
2 cdag gen redistribute --shape 4x4 --elem 8 --from 2x2@2x2
2 cdag gen redistribute --shape 4 --elem 8 --from 2x2@2x2 --to 2x2@1x1
2 cdag gen redistribute --shape 4x4 --elem 8 --from 2x2@2x2+x --to 2x2@1x1
2 cdag gen redistribute --shape 99999999999999999999x4 --elem 8 --from 2x2@1x2 --to 2x2@2x1
2 cdag gen redistribute --shape 4x4 --elem 8 --from 2x2@1x2+99999999999 --to 2x2@2x1
2 cdag gen redistribute --shape 4x4 --elem 99999999999999999999 --from 2x2@1x2 --to 2x2@2x1
1 cdag gen redistribute --shape 4x4 --elem 0 --from 2x2@2x2 --to 2x2@1x1
  err elem_bytes is 0
1 cdag gen redistribute --shape 0x4 --elem 8 --from 2x2@2x2 --to 2x2@1x1
  err M is 0
1 cdag gen redistribute --shape 4x4 --elem 8 --from 2x2@0x2 --to 2x2@1x1
  err PR is 0
T
finish
