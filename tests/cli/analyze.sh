#!/usr/bin/env bash
# cdag tests — tests/cli/analyze.sh CDAG SOURCE_DIR: `cdag analyze`, `cdag sst`, `cdag verify`.
#
# The shipped example graphs: analyze --json names the right kind, root and ranks; the text
# report leads with the collective; sst prints the FORMAT.md listing; verify passes on every
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

expect_status 0 "$cdag" sst --json "$ex/bcast_binomial8.cdag"
expect_out '"cdag_sst": 1'
expect_out '{"src": 0, "src_addr": 4096, "len": 64, "dst": 7, "dst_addr": 4096}'
expect_status 0 "$cdag" sst --json "$ex/allreduce_ring4.cdag"
expect_out '"sources": [[0, '
expect_status 0 "$cdag" sst "$ex/alltoall_butterfly4.cdag"
expect_out "rank 0:"

for f in "$ex"/*.cdag "$src"/tests/data/goal/*.goal; do
  expect_status 0 "$cdag" verify "$f"
  expect_out "matches the graph"
done

expect_status 1 "$cdag" analyze "$src/tests/data/bad_unknown_label.cdag"
expect_status 2 "$cdag" analyze --density=2 "$ex/halo1d8.cdag"
expect_status 2 "$cdag" verify --seed=x "$ex/halo1d8.cdag"
expect_status 1 "$cdag" sst /nonexistent/file.cdag
finish
