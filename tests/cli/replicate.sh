#!/usr/bin/env bash
# cdag tests — tests/cli/replicate.sh CDAG SOURCE_DIR: the replication pass from the command line.
#
# examples/graphs/cg_dot16.cdag (a CG step's dot products kept by grid column 0 of 4x4) must
# report a reduce to rank 0 and a bcast to ranks 0, 4, 8, 12 after it, with the replication
# descriptor, in text and JSON; verify, model and goal --plan must accept the plan (the
# lowered plan sends the reduce's result). A file kept by ranks that do not contribute only
# gets a note.
set -u
cdag=$1
src=$2
. "$src/tests/cli/lib/expect.sh"
# These cases test the replication pass; the price (tests/cli/price.sh) would leave cg_dot16's
# reduce and bcast as residual reductions.
export CDAG_PRICE=0
ex=$src/examples/graphs

cases <<'T'
0 cdag analyze "$ex/cg_dot16.cdag"
  first reduce rooted at 0 over all 16 ranks, 16 B of double sum (1 reductions)
  out bcast rooted at 0 over ranks 0,4,8,12, 16 B per block (3 reductions)
  out bcast: MPI (a replication: it sends the result of collective 0, after it); model: reduce + bcast 6.02 us, allreduce over the 16 contributors 8.01 us
  out replicates the double sum of the reduce rooted at 0 over all 16 ranks to the ranks that keep it (sent once that reduce completes)
  out replication: rank 0's block on 4 ranks in 1 strided range: 0 to 12 step 4
  out residual: 8 transfers (128 B) in 0 messages and 8 local copies (128 B), 0 reductions

0 cdag analyze --json "$ex/cg_dot16.cdag"
  out {"kind": "reduce", "root": 0, "ranks": "all", "bytes": 16, "transfers": 1, "type": "double", "op": "sum"
  out {"kind": "bcast", "root": 0, "ranks": [0, 4, 8, 12], "bytes": 16, "transfers": 3, "after": 0, "replication": {"root": 0, "ranges": [{"first": 0, "count": 4, "stride": 4}]}
  out "residual": {"transfers": 8, "bytes": 128, "messages": 0, "reductions": 0
  out "local_copies": {"transfers": 8, "bytes": 128}
# the JSON parses
0 cdag analyze --json "$ex/cg_dot16.cdag" | python3 -c 'import json,sys; json.load(sys.stdin)'
0 cdag verify "$ex/cg_dot16.cdag"
  out verify: plan (2 collectives, 0 residual messages, 8 local copies) matches the graph on all 16 ranks
0 cdag model "$ex/cg_dot16.cdag"
  out bcast over 4 ranks: mpi
0 cdag goal --plan "$ex/cg_dot16.cdag"

# Only ranks outside the contributors keep the sum: noted, left as residual reductions.
T
cat >"$tmp/outside.cdag" <<'G'
num_ranks 6
rank 0 {
  scratch 0x300 8b
  copy 8b from 0x100 to 0x200
  recv 8b from 1 tag 1 addr 0x300
  reduce 2 int32 sum in 0x300 inout 0x200
  recv 8b from 2 tag 1 addr 0x300
  reduce 2 int32 sum in 0x300 inout 0x200
  recv 8b from 3 tag 1 addr 0x300
  reduce 2 int32 sum in 0x300 inout 0x200
  send 8b to 4 tag 2 addr 0x200
  send 8b to 5 tag 2 addr 0x200
  scratch 0x200 8b
}
rank 1 { send 8b to 0 tag 1 addr 0x100 }
rank 2 { send 8b to 0 tag 1 addr 0x100 }
rank 3 { send 8b to 0 tag 1 addr 0x100 }
rank 4 { recv 8b from 0 tag 2 addr 0x200 }
rank 5 { recv 8b from 0 tag 2 addr 0x200 }
G
cases <<'T'
0 cdag analyze "$tmp/outside.cdag"
  out no collectives found
  out note: 2 ranks that do not contribute keep the int32 sum reduction over ranks 0-3: left as residual reductions
0 cdag verify "$tmp/outside.cdag"
T
finish
