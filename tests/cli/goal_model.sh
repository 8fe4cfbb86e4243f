#!/usr/bin/env bash
# cdag tests — tests/cli/goal_model.sh CDAG SOURCE_DIR: `cdag goal` and `cdag model`.
#
# goal writes plain GOAL (no cdag extensions) of the graph and, with --plan, of the lowered
# plan (test_lower.c checks both against LogGOPSim's grammar); model prints the LogGP
# estimate of both; bad arguments exit 2 with the usage, bad input exits 1 naming the problem.
set -u
cdag=$1
src=$2
. "$src/tests/cli/lib/expect.sh"
# These cases test what detection finds and how each collective would run; the price
# (tests/cli/price.sh) would leave small candidates as the messages they were.
export CDAG_PRICE=0
ex="$src/examples/graphs"

cases <<'T'
0 cdag goal "$ex/bcast_binomial8.cdag"
  out num_ranks 8
  out rank 7 {
  out l0: send 64b to 4 tag 0
  out!~ addr|copy|reduce|scratch|#
# goal -o writes the file; the lowered allreduce has calc (local reduces) and requires
0 cdag goal --plan "$ex/allreduce_ring4.cdag" -o "$tmp/plan.goal"
0 cat "$tmp/plan.goal"
  out~ .
  out calc
  out requires
# the exported GOAL loads back into cdag (a GOAL file is a cdag graph file)
0 cdag check "$tmp/plan.goal"
0 CDAG_KERNEL=mpi cdag goal --plan "$ex/bcast_binomial8.cdag"
  out num_ranks 8

0 cdag model "$ex/bcast_binomial8.cdag"
  out LogGOPS: L=1 us o=0.2 us g=0.2 us G=0.0002 us/B O=0 us/B S=65535 B
  out~ graph:[ ]
  out~ plan:[ ]{2}
  out~ bcast over 8 ranks:[ ]
0 cdag model "$ex/allreduce_ring4.cdag" -L 2 -o 0.5 -g 0.4 -G 0.001 -O 0.0001 -S 16 -c 0 -p 4
  out LogGOPS: L=2 us o=0.5 us g=0.4 us G=0.001 us/B O=0.0001 us/B S=16 B copy=0 us/B, p=4
  out allreduce over 4 ranks
0 cdag model "$ex/halo1d8.cdag"
  out residual: 16 messages

# bad arguments and input
2 cdag goal
  err usage: cdag goal
2 cdag goal "$ex/halo1d8.cdag" -o
2 cdag model "$ex/halo1d8.cdag" -L
  err usage: cdag model
2 cdag model "$ex/halo1d8.cdag" -G fast
2 cdag model "$ex/halo1d8.cdag" -o -1
2 cdag model "$ex/halo1d8.cdag" -S -5
2 cdag model "$ex/halo1d8.cdag" -S big
# numbers out of range are refused, not wrapped or clamped (strtoull took 1e23 as 2^64-1)
2 cdag model "$ex/halo1d8.cdag" -S 99999999999999999999999
  err cdag model: -S 99999999999999999999999: expected an integer from 0 to 2^64 - 1
2 cdag model "$ex/halo1d8.cdag" -L nan
  err cdag model: -L nan: expected a number from 0 to 1e12
2 cdag model "$ex/halo1d8.cdag" -L 1e400
2 cdag model "$ex/halo1d8.cdag" -p 99999999999
1 cdag model "$ex/halo1d8.cdag" -p 16
  err -p 16, but
  err has 8 ranks
1 cdag goal "$tmp/missing.cdag"
  err cdag goal:
1 cdag goal "$ex/halo1d8.cdag" -o "$tmp/no/such/dir.goal"
  err cannot open
1 CDAG_KERNEL=fast cdag model "$ex/halo1d8.cdag"
  err CDAG_KERNEL
0 cdag model --help
  out defaults L 1

T

# A graph that computes (tests/data/compute): the panel pipeline's 8 computations of 200 us
# chain through 8 stages of one broadcast each; model gives the computation on each critical
# path, communication's share, the plan stage by stage (each stage's communication modelled
# alone as written and planned: the program's direct sends beat the plan's binomial tree at
# 64 B) and the saving; goal writes each
# computation as a calc of its cost, with and without --plan. A file written as a recording
# writes it (opaque area at 0x7ffe..., packing area at 0x7ffd..., a staging buffer at
# 0x7ffb...) models too: lowering used to refuse it ("above the staging base"). Its packing
# area, scratch, is not delivered by stage 0 (1.454 us planned when it was).
pipe="$src/tests/data/compute/panel_pipeline8.cdag"
rec="$src/tests/data/compute/recorded_areas3.cdag"
cases <<'T'
0 cdag model "$pipe"
  out graph: 1617.041 us (rank 6 finishes last, 120 ops)
  out   computation on the critical path: 1600.000 us; communication: 17.041 us (1.1%)
  out~ ^plan: +16[0-9][0-9]\.[0-9]{3} us
  out   8 stages, 8 computations
  out   before stage 0: 1 computation, 200.000 us on one rank at most
# its first 7 stages are alike: listed once
  out   after stages 0 to 6 (7 alike): 1 computation, 200.000 us on one rank at most
  count 1 ^  stages 0 to 6 \(7 alike\): communication alone 2\.688 us as written, 4\.244 us planned \(saving -1\.556 us\)$
  count 1 ^  stage 7: communication alone 2\.688 us as written, 4\.244 us planned \(saving -1\.556 us\)$
  count 2 ^    bcast over 8 ranks:
  out~ ^saving: -?[0-9]+\.[0-9]{3} us \(-?[0-9.]+% of the graph's time\)$
0 cdag goal "$pipe"
  count 8 ^l[0-9]+: calc 200000$
  out!~ compute|reads|writes
0 cdag goal --plan "$pipe"
  count 8 ^l[0-9]+: calc 200000$
  out requires
0 cdag model "$rec"
  out   computation on the critical path: 0.700 us
  out   2 stages, 2 computations
  out   after stage 0: 2 computations, 0.700 us on one rank at most
  out   stage 0: communication alone 3.036 us as written, 1.445 us planned (saving 1.592 us)
  out saving:
0 cdag goal --plan "$rec"
  out calc 500
  out calc 700
# a graph without computation prints no computation lines
0 cdag model "$ex/halo1d8.cdag"
  out!~ computation|stage|saving
T

# irequires: a ping-pong whose sends start once their receives are posted runs (with
# requires it would deadlock); computation stays in the plan; an empty plan states no speedup
printf 'num_ranks 2\nrank 0 {\nr: recv 8b from 1 tag 0\ns: send 8b to 1 tag 0\ns irequires r\n}\nrank 1 {\nr: recv 8b from 0 tag 0\ns: send 8b to 0 tag 0\ns irequires r\n}\n' > "$tmp/pingpong.goal"
printf 'num_ranks 1\nrank 0 {\nc: calc 100\n}\n' > "$tmp/calc.goal"
printf 'num_ranks 2\nrank 0 {\n}\nrank 1 {\n}\n' > "$tmp/empty.goal"
printf 'num_ranks 2\nrank 0 {\n  send 8b to 1 tag 0\n}\n' > "$tmp/unmatched.cdag"
for r in 0 1 2 3; do printf 'rank %d {\n  bcast 4611686018427387904 root 0 addr 0x0\n}\n' $r; done |
  sed '1i num_ranks 4' > "$tmp/bcast2e62.cdag"
cases <<'T'
# a broadcast of 2^62 bytes: the model says it cannot time it (its kernel's block count is
# bounded: tests/choose/test_kernel_choice.c)
1 cdag model "$tmp/bcast2e62.cdag"
  err~ beyond the model's picosecond clock
0 cdag model "$tmp/pingpong.goal" --goal-buffers=fresh
  out graph: 1.401 us
0 cdag goal "$tmp/pingpong.goal" --goal-buffers=fresh
  out irequires
# the computation stays in the plan
0 cdag model "$tmp/calc.goal"
  out plan:  0.100 us
  out speedup: 1.00x
0 cdag model "$tmp/empty.goal"
  out!~ speedup: [0-9]
# a graph with an unmatched send is refused like `analyze` does (it was exported, exit 0)
1 cdag goal "$tmp/unmatched.cdag"
  err cdag goal: unmatched operation
  err rank 0 op 0 (send, line 3)
T
finish
