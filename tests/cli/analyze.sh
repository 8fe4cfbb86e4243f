#!/usr/bin/env bash
# cdag tests — tests/cli/analyze.sh CDAG SOURCE_DIR: `cdag analyze`, `cdag sst`, `cdag verify`.
#
# The shipped example graphs: analyze --json names the right kind, root and ranks; the text
# report leads with the collective; sst prints the docs/format.md listing; verify passes on every
# shipped graph; bad files and bad options fail with exit 1 / 2.
set -u
cdag=$1
src=$2
. "$src/tests/cli/lib/expect.sh"
ex=$src/examples/graphs

expect_status 0 "$cdag" analyze --json "$ex/bcast_binomial8.cdag"
expect_out '"kind": "bcast", "root": 0, "ranks": "all", "bytes": 64, "transfers": 7'
expect_out '"ops": {"send": 7, "recv": 7, "reduce": 0, "copy": 0'
expect_out '"residual": {"transfers": 0, "bytes": 0, "messages": 0'
expect_status 0 "$cdag" analyze "$ex/bcast_binomial8.cdag"
head -1 "$tmp/out" | grep -qF "bcast rooted at 0 over all 8 ranks, 64 B per block (7 transfers)" || fail "text report: $(head -1 "$tmp/out")"
expect_status 0 "$cdag" analyze --json "$ex/alltoall_butterfly4.cdag"
expect_out '"kind": "alltoall", "root": null, "ranks": "all", "bytes": 16, "transfers": 16'
expect_out '"residual": {"transfers": 0, "bytes": 0, "messages": 0'
expect_status 0 "$cdag" analyze --json "$ex/allreduce_ring4.cdag"
expect_out '"kind": "allreduce", "root": null, "ranks": "all"'
expect_out '"type": "int32", "op": "sum"'
expect_status 0 "$cdag" analyze --json "$ex/halo1d8.cdag"
expect_out '"collectives": [],'
expect_out '"residual": {"transfers": 16, "bytes": 1024, "messages": 16'
expect_status 0 "$cdag" analyze --json "$src/tests/data/goal/binomial_bcast16.goal"
expect_out '"kind": "bcast", "root": 0, "ranks": "all"'

# hand-written detection cases (tests/data/detect: each file says what it expects)
det=$src/tests/data/detect
expect_status 0 "$cdag" analyze --json "$det/allgather_bruck6.cdag"
expect_out '"kind": "allgather", "root": null, "ranks": "all", "bytes": 32, "transfers": 36'
expect_out '"residual": {"transfers": 0, "bytes": 0, "messages": 0'
expect_status 0 "$cdag" analyze --json "$det/barrier_dissemination5.cdag"
expect_out '"kind": "barrier", "root": null, "ranks": "all"'
expect_out '"barrier": true'
expect_status 0 "$cdag" analyze --json "$det/grid_bcast4x4.cdag"
for c in '"root": 1, "ranks": [0, 1, 2, 3], "bytes": 256' '"root": 13, "ranks": [12, 13, 14, 15], "bytes": 256' \
         '"root": 8, "ranks": [0, 4, 8, 12], "bytes": 128' '"root": 11, "ranks": [3, 7, 11, 15], "bytes": 128'; do
  expect_out "{\"kind\": \"bcast\", $c"
done
[ "$(grep -c '"kind": "bcast"' "$tmp/out")" = 8 ] || fail "grid: expected 8 bcasts"
expect_out '"residual": {"transfers": 0, "bytes": 0, "messages": 0'
expect_status 0 "$cdag" analyze --json "$det/halo2d_torus3x3.cdag"
expect_out '"collectives": [],'
expect_out '"residual": {"transfers": 36, "bytes": 2304, "messages": 36'
expect_out 'neighbourhood exchange, not a collective'
expect_out 'density 0.50 < 1.00 (options.density, --density=0.50, would take it as a vector collective); not a redistribution: fewer pieces beyond one per pair than the group has pairs'
expect_status 0 "$cdag" analyze "$det/halo2d_torus3x3.cdag"
head -1 "$tmp/out" | grep -qF "no collectives found" || fail "halo text report: $(head -1 "$tmp/out")"

expect_status 0 "$cdag" sst --json "$ex/bcast_binomial8.cdag"
expect_out '"cdag_sst": 1'
expect_out '{"src": 0, "src_addr": 4096, "len": 64, "dst": 7, "dst_addr": 4096}'
expect_status 0 "$cdag" sst --json "$ex/allreduce_ring4.cdag"
expect_out '"sources": [[0, '
expect_status 0 "$cdag" sst "$ex/alltoall_butterfly4.cdag"
expect_out "rank 0:"

for f in "$ex"/*.cdag "$det"/*.cdag "$src"/tests/data/goal/*.goal; do
  expect_status 0 "$cdag" verify "$f"
  expect_out "matches the graph"
done

expect_status 1 "$cdag" analyze "$src/tests/data/bad_unknown_label.cdag"
expect_status 2 "$cdag" analyze --density=2 "$ex/halo1d8.cdag"
expect_err "cdag: --density=2: expected a number in (0, 1]"
# the flags take the API's ranges (the options table): --min-group=1 is valid, 0 is not
expect_status 0 "$cdag" analyze --min-group=1 "$ex/halo1d8.cdag"
expect_status 0 "$cdag" verify --min-group=1 "$ex/halo1d8.cdag"
expect_status 2 "$cdag" analyze --min-group=0 "$ex/halo1d8.cdag"
expect_err "cdag: --min-group=0: expected an integer from 1 to 2147483647"
# --detect=0: the graph as written, nothing rewritten
expect_status 0 "$cdag" analyze --detect=0 "$ex/bcast_binomial8.cdag"
grep -q "^bcast" "$tmp/out" && fail "--detect=0 still found the bcast"
expect_status 0 "$cdag" analyze --exact-float=1 --alpha=2e-6 --blocks=2 "$ex/bcast_binomial8.cdag"
expect_out "bcast rooted at 0 over all 8 ranks"
expect_status 2 "$cdag" verify --seed=x "$ex/halo1d8.cdag"
expect_status 1 "$cdag" sst /nonexistent/file.cdag
# 2 ranks: nothing is rewritten, and the report says why
printf 'num_ranks 2\nrank 0 {\n send 8b to 1 addr 0x0\n recv 8b from 1 addr 0x8\n}\nrank 1 {\n send 8b to 0 addr 0x8\n recv 8b from 0 addr 0x0\n}\n' > "$tmp/two.cdag"
expect_status 0 "$cdag" analyze "$tmp/two.cdag"
expect_out "note: 2 ranks: collectives over the whole communicator need 3 or more ranks"
expect_out "2 transfers stay point-to-point"
# reasons: min_group and density say which value would take the pattern, and that value does
expect_status 0 "$cdag" analyze "$det/allgather_subset3of6.cdag"
expect_out "1 complete all-to-all pattern on fewer than min_group = 4 ranks stayed point-to-point (e.g. 3 ranks: ranks 0-2)"
expect_out "--min-group=3 would take it"
expect_status 0 "$cdag" analyze --min-group=3 "$det/allgather_subset3of6.cdag"
expect_out "allgather over ranks 0-2, 64 B per block (6 transfers)"
expect_status 0 "$cdag" analyze "$det/alltoallv_sparse4.cdag"
expect_out "all-to-all pattern on all 4 ranks incomplete: 10 of 12 pairs, density 0.83 < 1.00 (options.density, --density=0.83"
expect_status 0 "$cdag" analyze --density=0.83 "$det/alltoallv_sparse4.cdag"
expect_out "alltoallv over all 4 ranks, 384 B in total (10 transfers)"
# an unmarked temporary: the note suggests cdag_scratch; marked, the transfer and the note go
expect_status 0 "$cdag" analyze "$det/allreduce_unmarked_tmp4.cdag"
expect_out "allreduce over all 4 ranks, 64 B of double sum"
expect_out "note: 1 residual transfer (64 B) delivers bytes their rank also reads as the input of a local reduction or copy (e.g. rank 0, 0x3000, 64 B): if that buffer is a temporary, mark it with cdag_scratch"
sed 's/^rank 0 {$/rank 0 {\n scratch 0x3000 64b/' "$det/allreduce_unmarked_tmp4.cdag" > "$tmp/marked.cdag"
expect_status 0 "$cdag" analyze "$tmp/marked.cdag"
expect_out "residual: 0 transfers (0 B)"
grep -q "cdag_scratch" "$tmp/out" && fail "marked temporary: the note is still there"
# residual pieces: up to the pack limit packed into one message per pair, larger ones alone
printf 'num_ranks 2\nrank 0 {\n send 8b to 1 addr 0x1000\n send 4000b to 1 addr 0x2000\n send 100b to 1 addr 0x4000\n}\nrank 1 {\n recv 8b from 0 addr 0x1000\n recv 4000b from 0 addr 0x2000\n recv 100b from 0 addr 0x4000\n}\n' > "$tmp/pieces.cdag"
expect_status 0 "$cdag" analyze "$tmp/pieces.cdag"
expect_out "residual: 3 transfers (4108 B) in 2 messages"
expect_out "messages: per pair of ranks, pieces up to 1000 B packed into one message, 1 larger ones alone"
CDAG_OVERHEAD=1e-15 expect_status 0 "$cdag" analyze --json "$tmp/pieces.cdag"
expect_out '"residual": {"transfers": 3, "bytes": 4108, "messages": 3, "reductions": 0, "pairs": 1, "pack_limit": 0'
CDAG_GAMMA=1e-13 expect_status 0 "$cdag" analyze --json "$tmp/pieces.cdag"
expect_out '"messages": 1, "reductions": 0, "pairs": 1, "pack_limit": 1000000'
# exact_float keeps the written order of floating-point sums of 3 or more values: the graph
# runs as written, verify agrees (it reported a difference the runtime did not have)
printf 'num_ranks 1\nrank 0 {\n  reduce 2 float sum in 0x0 inout 0x10\n  reduce 2 float sum in 0x0 inout 0x10\n  reduce 2 float sum in 0x0 inout 0x10\n}\n' > "$tmp/ef.cdag"
expect_status 0 "$cdag" verify --exact-float --seed=7 "$tmp/ef.cdag"
expect_status 0 "$cdag" analyze --exact-float "$tmp/ef.cdag"
expect_out "runs as written (exact_float keeps the order of floating-point reductions)"
expect_status 0 "$cdag" analyze --exact-float --json "$tmp/ef.cdag"
expect_out '"as_written": true'
finish
