#!/usr/bin/env bash
# cdag tests — tests/cli/analyze.sh CDAG SOURCE_DIR: `cdag analyze`, `cdag sst`, `cdag verify`.
#
# The shipped example graphs: analyze --json names the right kind, root and ranks; the text
# report leads with the collective; sst prints the docs/format.md listing; verify passes on every
# shipped graph; nonblocking native collectives load, analyse, verify and model; bad files
# and bad options fail with exit 1 / 2.
set -u
cdag=$1
src=$2
. "$src/tests/cli/lib/expect.sh"
# These cases test what detection finds and how each collective would run; the price
# (tests/cli/price.sh) would leave small candidates as the messages they were.
export CDAG_PRICE=0
ex=$src/examples/graphs
det=$src/tests/data/detect   # hand-written detection cases (each file says what it expects)

cases <<'T'
0 cdag analyze --json "$ex/bcast_binomial8.cdag"
  out "kind": "bcast", "root": 0, "ranks": "all", "bytes": 64, "transfers": 7
  out "ops": {"send": 7, "recv": 7, "reduce": 0, "copy": 0
  out "residual": {"transfers": 0, "bytes": 0, "messages": 0
0 cdag analyze "$ex/bcast_binomial8.cdag"
  first bcast rooted at 0 over all 8 ranks, 64 B per block (7 transfers)
0 cdag analyze --json "$ex/alltoall_butterfly4.cdag"
  out "kind": "alltoall", "root": null, "ranks": "all", "bytes": 16, "transfers": 16
  out "residual": {"transfers": 0, "bytes": 0, "messages": 0
0 cdag analyze --json "$ex/allreduce_ring4.cdag"
  out "kind": "allreduce", "root": null, "ranks": "all"
  out "type": "int32", "op": "sum"
0 cdag analyze --json "$ex/halo1d8.cdag"
  out "collectives": [],
  out "residual": {"transfers": 16, "bytes": 1024, "messages": 16
0 cdag analyze --json "$src/tests/data/goal/binomial_bcast16.goal"
  out "kind": "bcast", "root": 0, "ranks": "all"

0 cdag analyze --json "$det/column_halo2.cdag"
  out "residual": {"transfers": 2, "bytes": 16384, "messages": 2
  out "strided": {"transfers": 2, "blocks": 2048}}
  out "strided_whole": 6
0 cdag analyze "$det/column_halo2.cdag"
  out residual: 2 transfers (16384 B; 2 strided, of 2048 blocks) in 2 messages
0 cdag sst "$det/column_halo2.cdag"
  out 0x100018 <- rank 1 0x100008 (1024 blocks of 8 B, strides 32 here, 32 there)
  out 2 transfers, 0 reductions, 2 splits
0 cdag analyze "$det/native_column2.cdag"
  out 1 residual transfers (64 B) are data of native calls
0 cdag analyze --json "$det/allgather_bruck6.cdag"
  out "kind": "allgather", "root": null, "ranks": "all", "bytes": 32, "transfers": 36
  out "residual": {"transfers": 0, "bytes": 0, "messages": 0
0 cdag analyze --json "$det/barrier_dissemination5.cdag"
  out "kind": "barrier", "root": null, "ranks": "all"
  out "barrier": true
# one zero-byte message among data messages: kept as a sync pair, not a barrier over all ranks,
# and the plan runs (a barrier made it lose); a plan kept from a second planning (the
# candidates the price set aside) is no staged plan when the graph does not compute
0 cdag analyze "$det/zero_byte_alltoallv3.cdag"
  out 1 kept zero-byte syncs
  out 1 zero-byte receive orders nothing
  out message stays as synchronization pairs and makes no barrier
  out!~ ^barrier
  out!~ ^stages?
  out the plan runs
0 cdag verify "$det/zero_byte_alltoallv3.cdag"
  out matches the graph
0 cdag analyze --json "$det/grid_bcast4x4.cdag"
  out {"kind": "bcast", "root": 1, "ranks": [0, 1, 2, 3], "bytes": 256
  out {"kind": "bcast", "root": 13, "ranks": [12, 13, 14, 15], "bytes": 256
  out {"kind": "bcast", "root": 8, "ranks": [0, 4, 8, 12], "bytes": 128
  out {"kind": "bcast", "root": 11, "ranks": [3, 7, 11, 15], "bytes": 128
  count 8 "kind": "bcast"
  out "residual": {"transfers": 0, "bytes": 0, "messages": 0
0 cdag analyze --json "$det/halo2d_torus3x3.cdag"
  out "collectives": [],
  out "residual": {"transfers": 36, "bytes": 2304, "messages": 36
  out neighbourhood exchange, not a collective
  out density 0.50 < 1.00 (options.density, --density=0.50, would take it as a vector collective); not a redistribution: fewer pieces beyond one per pair than the group has pairs
0 cdag analyze "$det/halo2d_torus3x3.cdag"
  first no collectives found

# native vector and prefix collectives (a recording's MPI_Gatherv, MPI_Scan, ...): loaded, reported as called
0 cdag check "$src/tests/data/replay/native_vector4.cdag"
  out ok: 4 ranks, 123 ops (37 send, 37 recv, 15 reduce, 10 copy, 24 calc)
0 cdag analyze "$src/tests/data/replay/native_vector4.cdag"
  out native collective calls: 7 (1 scatterv, 1 gatherv, 1 allgatherv, 1 alltoallv, 1 reduce_scatter, 1 scan, 1 exscan); hand-written collectives found: 0
  out alltoallv over all 4 ranks, 200 B in total (27 transfers)
  out   native: the program called it
  out residual: 0 transfers (0 B) in 0 messages
0 cdag analyze --json "$src/tests/data/replay/native_vector4.cdag"
  out "native": {"calls": {"scatterv": 1, "gatherv": 1, "allgatherv": 1, "alltoallv": 1, "reduce_scatter": 1, "scan": 1, "exscan": 1}
0 cdag verify "$src/tests/data/replay/native_vector4.cdag"
  out matches the graph on all 4 ranks
0 cdag model "$src/tests/data/replay/native_vector4.cdag"
  out graph: 10.423 us (rank 1 finishes last, 123 ops)

0 cdag sst --json "$ex/bcast_binomial8.cdag"
  out "cdag_sst": 1
  out {"src": 0, "src_addr": 4096, "len": 64, "dst": 7, "dst_addr": 4096}
0 cdag sst --json "$ex/allreduce_ring4.cdag"
  out~ "sources": \[\[0,[ ]
0 cdag sst "$ex/alltoall_butterfly4.cdag"
  out rank 0:
T

# nonblocking native calls (MPI_Iallreduce, MPI_Ibcast) overlapped with messages and a
# computation: loaded, reported native, verified, modelled; the same file with blocking
# calls is a deadlock (a rank receives before it calls what the sender called first)
nb=$src/tests/data/replay/native_nb3.cdag
sed 's/ nonblocking$//' "$nb" >"$tmp/nb_blocking.cdag"
cases <<T
0 cdag check "$nb"
  out ok: 3 ranks
0 cdag analyze "$nb"
  out native collective calls: 2 (1 bcast, 1 allreduce)
  out allreduce over all 3 ranks, 32 B of int64 sum
  out native: the program called it
0 cdag verify "$nb"
  out matches the graph
0 cdag model "$nb"
  out plan:
1 cdag analyze "$tmp/nb_blocking.cdag"
  err the graph would deadlock
T

for f in "$ex"/*.cdag "$det"/*.cdag "$src"/tests/data/goal/*.goal; do
  cases <<T
0 cdag verify "$f"
  out matches the graph
T
done

# 2 ranks: nothing is rewritten, and the report says why
printf 'num_ranks 2\nrank 0 {\n send 8b to 1 addr 0x0\n recv 8b from 1 addr 0x8\n}\nrank 1 {\n send 8b to 0 addr 0x8\n recv 8b from 0 addr 0x0\n}\n' > "$tmp/two.cdag"
sed 's/^rank 0 {$/rank 0 {\n scratch 0x3000 64b/' "$det/allreduce_unmarked_tmp4.cdag" > "$tmp/marked.cdag"
printf 'num_ranks 2\nrank 0 {\n send 8b to 1 addr 0x1000\n send 4000b to 1 addr 0x2000\n send 100b to 1 addr 0x4000\n}\nrank 1 {\n recv 8b from 0 addr 0x1000\n recv 4000b from 0 addr 0x2000\n recv 100b from 0 addr 0x4000\n}\n' > "$tmp/pieces.cdag"
# N stages, each a computation and its message: at 100,001, a schedule of as many requests per rank
stages_graph() {
  awk -v n="$1" 'BEGIN { print "num_ranks 2"; print "rank 0 {"
                         for (i = 0; i < n; i++) { print "compute 0 writes 8 at 0x100"; print "send 8b to 1 addr 0x100" }
                         print "}"; print "rank 1 {"
                         for (i = 0; i < n; i++) printf "recv 8b from 0 addr 0x%x\n", 65536 + 8 * i
                         print "}" }'
}
stages_graph 1001 >"$tmp/stages.cdag"
printf 'num_ranks 1\nrank 0 {\n  reduce 2 float sum in 0x0 inout 0x10\n  reduce 2 float sum in 0x0 inout 0x10\n  reduce 2 float sum in 0x0 inout 0x10\n}\n' > "$tmp/ef.cdag"
printf 'num_ranks 1\nrank 0 {\n  copy 2147483648b from 0x0 to 0x100000000\n}\n' >"$tmp/big.cdag"
printf 'num_ranks 2\nrank 0 {\n  send 2147483648b to 1 addr 0x1000\n}\nrank 1 {\n}\n' >"$tmp/bigsend.cdag"
sed 's/^  fence comm 2$/  fence comm 1/' "$det/fence_comm_halves4.cdag" >"$tmp/fence_nonmember.cdag"
printf 'num_ranks 2\nrank 0 {\n  copy 8796093022208 from 0 to 1125899906842624 blocks 1099511627776 from_stride 16\n  send 64 to 1 addr 1125899906842624\n}\nrank 1 {\n  recv 64 from 0 addr 0\n}\n' >"$tmp/blocks40.cdag"
printf 'num_ranks 1\nrank 0 {\n  copy 8796093022208 from 0 to 1125899906842624 blocks 1099511627776 from_stride 16\n  copy 8796093022208 from 0 to 2251799813685248 blocks 1099511627776 from_stride 24\n}\n' >"$tmp/strides2.cdag"
printf 'num_ranks 2\nrank 0 {\n  fence\n  get 8796093022208 from 1 at 0 addr 1125899906842624 blocks 1099511627776 stride 16\n  fence\n}\nrank 1 {\n  fence\n  fence\n}\n' >"$tmp/get40.cdag"
printf 'num_ranks 2\nrank 0 {\n  fence\n  copy 8796093022208 from 0 to 1125899906842624 blocks 1099511627776 to_stride 16\n  put 8 to 1 at 0 addr 64\n  fence\n}\nrank 1 {\n  fence\n  fence\n}\n' >"$tmp/copy40_origin.cdag"
printf 'num_ranks 2\nrank 0 {\n  fence\n  copy 8796093022208 from 0 to 1125899906842624 blocks 1099511627776 to_stride 16\n  fence\n}\nrank 1 {\n  fence\n  put 8 to 0 at 0 addr 64\n  fence\n}\n' >"$tmp/copy40_target.cdag"
sed '/^comm 2 /d' "$det/fence_comm_halves4.cdag" >"$tmp/fence_undeclared.cdag"
cases <<'T'
# one-sided: accumulates are remote reductions (every other rank's into rank 0, sent back:
# an allreduce); fences of a communicator cut only its members' epochs
0 cdag analyze --json "$det/accumulate_allreduce4.cdag"
  out "kind": "allreduce", "root": null, "ranks": "all", "bytes": 32, "transfers": 4, "type": "int64", "op": "sum"
  out "onesided": {"get": 0, "put": 0, "fence": 8, "accumulate": 3}
0 cdag analyze "$det/accumulate_allreduce4.cdag"
  out one-sided: 0 gets, 0 puts, 3 accumulates, 8 fences (counted above as the messages and reductions they became, and the fences as calcs that cost nothing)
0 cdag verify "$det/accumulate_allreduce4.cdag"
0 cdag sst "$det/fence_comm_halves4.cdag"
  out 0x300 <- rank 0 0x10 (8 B)
  out 0x20 <- rank 3 0x200 (8 B)
0 cdag verify "$det/fence_comm_halves4.cdag"
# a get's receive a stage after its send (the staging buffer keeps the get's tag)
0 cdag analyze "$src/tests/data/compute/late_get2.cdag"
  out 1 messages land a stage late, through staging buffers (8 B)
0 cdag verify "$src/tests/data/compute/late_get2.cdag"
# a computation reading all while a nonblocking call writes what a completed one wrote: no race
0 cdag verify "$src/tests/data/compute/reads_all_pending2.cdag"
  out matches the graph on all 2 ranks
# stages that alternate between the ranks' parts of 200 broadcasts (levels in one pass)
0 cdag analyze "$src/tests/data/compute/bcast_turns2.cdag"
  out stages: 200, between them 200 computations
0 cdag verify "$src/tests/data/compute/bcast_turns2.cdag"
# reduces that mix reductions in two stages: cut at both
0 cdag analyze "$src/tests/data/compute/mixed_twice2.cdag"
  out stages: 4, between them 2 computations
0 cdag verify "$src/tests/data/compute/mixed_twice2.cdag"
# stages without computations say why they start (a one-sided graph once said only "between
# them 0 computations")
0 CDAG_PRICE=1 cdag analyze "$src/tests/data/replay/onesided2.cdag"
  out stages: 2, between them 0 computations (0 only take time; 0.0 us in all); 2 local reduces or copies start a stage: they read bytes a message delivered
0 cdag analyze --json "$src/tests/data/replay/mixed_reduce3.cdag"
  out "cut_delivered": 0, "cut_mixed": 1}
# a copy of 2^40 blocks: checked and ordered at once, but the analysis follows blocks one by one
# and refuses it, naming the op (it ran for ever); two reads at two strides are refused by check
0 cdag check "$tmp/blocks40.cdag"
1 cdag analyze "$tmp/blocks40.cdag"
  err cdag analyze: unsupported: the graph's strided ops have 1099511627776 blocks, which the analysis follows one by one (at most 67108864); the largest, rank 0 op 0 (copy, line 3), has 1099511627776
1 cdag model "$tmp/blocks40.cdag"
  err~ the largest, rank 0 op 0 \(copy, line 3\)
1 cdag check "$tmp/strides2.cdag"
  err~ rank 0: ordering its overlapping strided ops takes 2199023255552 blocks one by one \(at most 268435456\); the largest, rank 0 op 0 \(copy, line 3\)
# the race check lists one-sided accesses block by block: a get of 2^40 blocks is refused at
# once, a copy of 2^40 blocks in an epoch nobody accesses costs nothing, one in an accessed
# epoch is refused (each ran for ever)
1 cdag check "$tmp/get40.cdag"
  err~ the race check of one-sided accesses takes their blocks one by one, at most 67108864 in all: rank 0 op 1 \(get, line 4\) has 1099511627776
0 cdag check "$tmp/copy40_origin.cdag"
1 cdag check "$tmp/copy40_target.cdag"
  err~ takes the blocks of ops in epochs one by one, at most 67108864 in all: rank 0 op 1 \(copy, line 4\) has 1099511627776
1 cdag check "$tmp/fence_nonmember.cdag"
  err a fence on communicator 1, of which rank 2 is not a member
1 cdag check "$tmp/fence_undeclared.cdag"
  err a fence on communicator 2, which the graph never declared
1 cdag analyze "$src/tests/data/bad_unknown_label.cdag"
2 cdag analyze --density=2 "$ex/halo1d8.cdag"
  err cdag: --density=2: expected a number in (0, 1]
# the flags take the API's ranges (the options table): --min-group=1 is valid, 0 is not
0 cdag analyze --min-group=1 "$ex/halo1d8.cdag"
0 cdag verify --min-group=1 "$ex/halo1d8.cdag"
2 cdag analyze --min-group=0 "$ex/halo1d8.cdag"
  err cdag: --min-group=0: expected an integer from 1 to 2147483647
# --detect=0: the graph as written, nothing rewritten
0 cdag analyze --detect=0 "$ex/bcast_binomial8.cdag"
  out!~ ^bcast
0 cdag analyze --exact-float=1 --alpha=2e-6 --blocks=2 "$ex/bcast_binomial8.cdag"
  out bcast rooted at 0 over all 8 ranks
2 cdag verify --seed=x "$ex/halo1d8.cdag"
# an empty or negative seed is refused (it ran with seed 0, or 2^64-1), saying which value
2 cdag verify --seed= "$ex/halo1d8.cdag"
  err cdag verify: --seed=: expected an integer from 0 to 2^64 - 1
2 cdag verify --seed=-1 "$ex/halo1d8.cdag"
0 cdag verify --seed=0x10 "$ex/halo1d8.cdag"
# verify bounds its memory by what the graph declares: a 2 GiB copy is refused before any
# byte is allocated (a 16 GiB one met the OOM killer)
1 cdag verify "$tmp/big.cdag"
  err the graph's operations span more than 1024 MiB of memory
# ... and before it is analysed (44 s on Schedgen's linear alltoall of 64 KiB at 1024 ranks):
# an unmatched send of 2 GiB is refused for its size, never reaching the matching
1 cdag verify "$tmp/bigsend.cdag"
  err the graph's operations span more than 1024 MiB of memory
1 cdag sst /nonexistent/file.cdag
# a recording's directory where a file is asked for: which file to give (was "Is a directory")
1 cdag verify "$tmp"
  err is a directory: give one of its graph files (a recording's are 
0 cdag analyze "$tmp/two.cdag"
  out note: 2 ranks: collectives over the whole communicator need 3 or more ranks
  out 2 transfers stay point-to-point
# reasons: min_group and density say which value would take the pattern, and that value does
0 cdag analyze "$det/allgather_subset3of6.cdag"
  out 1 complete all-to-all pattern on fewer than min_group = 4 ranks stayed point-to-point (e.g. 3 ranks: ranks 0-2)
  out --min-group=3 would take it
0 cdag analyze --min-group=3 "$det/allgather_subset3of6.cdag"
  out allgather over ranks 0-2, 64 B per block (6 transfers)
0 cdag analyze "$det/alltoallv_sparse4.cdag"
  out all-to-all pattern on all 4 ranks incomplete: 10 of 12 pairs, density 0.83 < 1.00 (options.density, --density=0.83
0 cdag analyze --density=0.83 "$det/alltoallv_sparse4.cdag"
  out alltoallv over all 4 ranks, 384 B in total (10 transfers)
# an unmarked temporary: the note suggests cdag_scratch; marked, the transfer and the note go
0 cdag analyze "$det/allreduce_unmarked_tmp4.cdag"
  out allreduce over all 4 ranks, 64 B of double sum
  out note: 1 residual transfer (64 B) delivers bytes their rank also reads as the input of a local reduction or copy (e.g. rank 0, 0x3000, 64 B): if that buffer is a temporary, mark it with cdag_scratch
0 cdag analyze "$tmp/marked.cdag"
  out residual: 0 transfers (0 B)
  out! cdag_scratch
# residual pieces: up to the pack limit packed into one message per pair, larger ones alone
0 cdag analyze "$tmp/pieces.cdag"
  out residual: 3 transfers (4108 B) in 2 messages
  out messages: per pair of ranks, pieces up to 1000 B packed into one message, 1 larger ones alone
0 CDAG_OVERHEAD=1e-15 cdag analyze --json "$tmp/pieces.cdag"
  out "residual": {"transfers": 3, "bytes": 4108, "messages": 3, "reductions": 0, "pairs": 1, "pack_limit": 0
0 CDAG_GAMMA=1e-13 cdag analyze --json "$tmp/pieces.cdag"
  out "messages": 1, "reductions": 0, "pairs": 1, "pack_limit": 1000000
# exact_float keeps the written order of floating-point sums of 3 or more values: the graph
# runs as written, verify agrees (it reported a difference the runtime did not have)
0 cdag verify --exact-float --seed=7 "$tmp/ef.cdag"
  out verify: the graph runs as written (exact_float keeps the order of floating-point reductions), and its runs in several orders agree
0 cdag analyze --exact-float "$tmp/ef.cdag"
  out runs as written (exact_float keeps the order of floating-point reductions)
0 cdag analyze --exact-float --json "$tmp/ef.cdag"
  out "as_written": true
0 cdag model "$tmp/stages.cdag"
  out   stages 0 to 999 (1000 alike): communication alone
  out   after stages 0 to 999 (1000 alike): 1 computation, 0.000 us on one rank at most
  out   stage 1000: communication alone
  count 2 ^    residual: 1 messages
T
# The request limit takes 100,001 stages: 2 s a command in the release build, 10 under the
# sanitizers, whose tier (CDAG_TEST_SCALE below 0.5) leaves it to the release build's.
if awk -v s="${CDAG_TEST_SCALE:-1}" 'BEGIN { exit !(s >= 0.5) }'; then
  stages_graph 100001 >"$tmp/requests.cdag"
  cases <<'T'
# a plan whose schedule would hold more persistent MPI requests on a rank than cdag's limit
# (MPICH aborts past about 262,000) runs as written, and says why
0 cdag analyze "$tmp/requests.cdag"
  out runs as written (its schedule would hold more MPI requests than cdag's limit: see the note)
  out note: runs as written: its schedule would hold 100001 MPI requests on rank 0, more than cdag's limit of 100000 per rank
# its 100,000 alike stages are listed once (half a million lines before)
  out stages 1 to 100000 (100000 alike):
  count 2 ^no collectives found$
T
fi
finish
