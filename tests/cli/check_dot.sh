#!/usr/bin/env bash
# cdag tests — tests/cli/check_dot.sh CDAG SOURCE_DIR: `cdag check` and `cdag dot` on shipped files.
#
# check prints the expected one-line summary (files, standard input, --goal-buffers=fresh),
# fails with exit 1 and FILE:LINE on a malformed file or a matching error (truncation,
# deadlock), exit 2 on usage errors; dot writes a digraph with one cluster per rank, solid
# message edges and dashed dependency edges; help and unknown commands.
set -u
cdag=$1
src=$2
. "$src/tests/cli/lib/expect.sh"
# These cases test what detection finds and how each collective would run; the price
# (tests/cli/price.sh) would leave small candidates as the messages they were.
export CDAG_PRICE=0

# ---- check: summaries ----
cases <<'T'
0 cdag check "$src/tests/data/goal/binomial_bcast16.goal"
  out ok: 16 ranks, 30 ops (15 send, 15 recv, 0 reduce, 0 copy, 0 calc), 15 messages, 11 dependencies
0 cdag check "$src/examples/graphs/bcast_binomial8.cdag"
  out ok: 8 ranks, 14 ops (7 send, 7 recv, 0 reduce, 0 copy, 0 calc), 7 messages, 4 dependencies
0 cdag check "$src/tests/data/goal/calc_cpu_nic.goal"
  out ok: 4 ranks, 9 ops (3 send, 3 recv, 0 reduce, 0 copy, 3 calc), 3 messages
# A dissemination barrier as GOAL writes it (send, then receive, round after round) with every
# op on address 0: each receive overwrites the buffer the rank's earlier send reads, so it waits
# for that send; sends take their data when they run (eager, as in GOAL), so this is no
# deadlock. With its own buffer per op (--goal-buffers=fresh) it is fine too.
0 cdag check "$src/tests/data/goal/dissemination8.goal"
  out ok: 8 ranks, 48 ops (24 send, 24 recv, 0 reduce, 0 copy, 0 calc), 24 messages
0 cdag check --goal-buffers=fresh "$src/tests/data/goal/dissemination8.goal"
  out ok: 8 ranks, 48 ops (24 send, 24 recv, 0 reduce, 0 copy, 0 calc), 24 messages, 16 dependencies
0 cdag check - <"$src/examples/graphs/halo1d8.cdag"
  out ok: 8 ranks, 32 ops (16 send, 16 recv, 0 reduce, 0 copy, 0 calc), 16 messages, 0 dependencies
T
for f in "$src"/examples/graphs/*.cdag "$src"/tests/data/goal/binomial*.goal "$src/tests/data/mixed.cdag"; do
  cases <<T
0 cdag check "$f"
  out~ ok:[ ]
T
done

# ---- GOAL buffers: follow (default: only the file's requires order; a send that requires a
# receive forwards its data), shared address 0 (every op on one buffer), fresh ----
printf 'num_ranks 3\nrank 0 { send 8b to 1 }\nrank 1 {\n recv 8b from 0\n send 8b to 2\n}\nrank 2 { recv 8b from 1 }\n' >"$tmp/fwd.goal"
printf 'num_ranks 3\nrank 0 { send 8b to 1 }\nrank 1 {\n r: recv 8b from 0\n s: send 8b to 2\n s requires r\n}\nrank 2 { recv 8b from 1 }\n' >"$tmp/fwd2.goal"
cases <<'T'
0 cdag check "$tmp/fwd.goal"
  out , 0 dependencies
0 cdag check --goal-buffers=shared "$tmp/fwd.goal"
  out , 1 dependencies
0 cdag check --goal-buffers=fresh "$tmp/fwd.goal"
  out , 0 dependencies
# rank 2 gets rank 0's bytes through rank 1
0 cdag analyze "$tmp/fwd2.goal"
  out bcast rooted at 0 over all 3 ranks
2 cdag check --goal-buffers=sometimes "$tmp/fwd.goal"
T

# ---- check: errors ----
printf 'num_ranks 2\nrank 0 {\n  l1: recv 1b from -1\n}\n' >"$tmp/wild.goal"
printf 'num_ranks 1\nrank 0 {\n  a: calc 1\n  b: calc 1\n  a requires b\n  b requires a\n}\n' >"$tmp/cycle.cdag"
cases <<'T'
1 cdag check "$src/tests/data/bad_unknown_label.cdag"
  err bad_unknown_label.cdag:9:
  err unknown label 'missing'
# a NUL byte ends the read at once (the whole of /dev/zero was read before parsing)
1 timeout 10 "$cdag_bin" check /dev/zero
  err /dev/zero:1:1: unexpected byte 0x00
1 cdag check "$tmp/wild.goal"
  err wild.goal:3:
  err not supported
1 cdag check "$tmp/cycle.cdag"
  err~ cycle\.cdag:[ ]
  err cycle
1 cdag check "$tmp/does-not-exist.cdag"
  err cannot open
2 cdag check
2 cdag check a.cdag b.cdag
1 cdag check "$src/fuzz/corpus/truncate.goal"
  err truncation
  err line 6
1 cdag check "$src/fuzz/corpus/deadlock.cdag"
  err deadlock
T

# ---- dot ----
cases <<'T'
0 cdag dot "$src/examples/graphs/bcast_binomial8.cdag"
  out digraph cdag {
  out subgraph cluster_rank0 {
  out subgraph cluster_rank7 {
  out [style=dashed]
  out label="send 64B to 4 tag 0\nsend_to_4"
  count 8 subgraph cluster_rank
  last }
  count 7 ^  o[0-9]+ -> o[0-9]+;$
0 cdag dot --plan "$src/examples/graphs/bcast_binomial8.cdag"
  out subgraph cluster_original
  out subgraph cluster_plan
  out c0_r0 [label="bcast (root 0)\n64 B"
  count 7  -> c0_r[1-7] \[style=bold\]
0 cdag dot --plan "$src/examples/graphs/halo1d8.cdag"
  out m0_s -> m0_r;
# a graph that computes: computations are hexagons; --plan draws a cluster per stage and the
# computations between the stages
0 cdag dot "$src/tests/data/compute/panel_pipeline8.cdag"
  count 8 \[label="compute 200000 ns\\nreads 64B at 0x[0-9a-f]+\\nwrites 64B at 0x[0-9a-f]+", shape=hexagon\];$
# a computation of blocks is labelled at its first block, as the file writes it
0 cdag dot "$src/tests/data/compute/blocks_written.cdag"
  out [label="compute 1000 ns\nreads all\nwrites 32B at 0x3000 in 2 blocks", shape=hexagon];
  out [label="compute 1000 ns\nreads all\nwrites 32B at 0x4000 in 2 blocks", shape=hexagon];
0 cdag dot --plan "$src/tests/data/compute/panel_pipeline8.cdag"
  count 8 subgraph cluster_stage[0-7] \{
  count 8 ^  k[0-7] \[shape=hexagon, label="compute 200000 ns\\nrank [0-7]"\];$
  out s0_c0_r0 [label="bcast (root 0)\n64 B"
  out   k0 -> s0 [style=dotted];
  out   s0 -> k1 [style=dotted];
  out   s6 -> s7 [style=invis];
1 cdag dot "$src/tests/data/bad_unknown_label.cdag"
  err bad_unknown_label.cdag:9:
1 cdag dot "$src/fuzz/corpus/deadlock.cdag"
  err deadlock
2 cdag dot
T

# ---- help and unknown commands ----
cases <<'T'
0 cdag --help
  out check
0 cdag check --help
  out usage: cdag check
0 cdag --version
  out~ ^cdag [0-9]+\.[0-9]+\.[0-9]+
0 cdag version
  out~ ^cdag [0-9]+\.[0-9]+
2 cdag frobnicate
  err unknown command
T

finish
