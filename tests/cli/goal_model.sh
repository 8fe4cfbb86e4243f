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
ex="$src/examples/graphs"

expect_status 0 "$cdag" goal "$ex/bcast_binomial8.cdag"
expect_out "num_ranks 8"
expect_out "rank 7 {"
expect_out "l0: send 64b to 4 tag 0"
grep -qE 'addr|copy|reduce|scratch|#' "$tmp/out" && fail "goal output holds cdag extensions: $(grep -E 'addr|copy|reduce|scratch|#' "$tmp/out" | head -2)"

expect_status 0 "$cdag" goal --plan "$ex/allreduce_ring4.cdag" -o "$tmp/plan.goal"
[ -s "$tmp/plan.goal" ] || fail "goal -o wrote nothing"
grep -q "calc" "$tmp/plan.goal" || fail "the lowered allreduce has no calc (local reduces): $(head -5 "$tmp/plan.goal")"
grep -q "requires" "$tmp/plan.goal" || fail "the lowered allreduce has no requires"
# the exported GOAL loads back into cdag (a GOAL file is a cdag graph file)
expect_status 0 "$cdag" check "$tmp/plan.goal"
CDAG_KERNEL=mpi expect_status 0 "$cdag" goal --plan "$ex/bcast_binomial8.cdag"
expect_out "num_ranks 8"

expect_status 0 "$cdag" model "$ex/bcast_binomial8.cdag"
expect_out "LogGOPS: L=1 us o=0.2 us g=0.2 us G=0.0002 us/B O=0 us/B S=65535 B"
expect_out "graph: "
expect_out "plan:  "
expect_out "bcast over 8 ranks: "
expect_status 0 "$cdag" model "$ex/allreduce_ring4.cdag" -L 2 -o 0.5 -g 0.4 -G 0.001 -O 0.0001 -S 16 -c 0 -p 4
expect_out "LogGOPS: L=2 us o=0.5 us g=0.4 us G=0.001 us/B O=0.0001 us/B S=16 B copy=0 us/B, p=4"
expect_out "allreduce over 4 ranks"
expect_status 0 "$cdag" model "$ex/halo1d8.cdag"
expect_out "residual: 16 messages"

# bad arguments and input
expect_status 2 "$cdag" goal
expect_err "usage: cdag goal"
expect_status 2 "$cdag" goal "$ex/halo1d8.cdag" -o
expect_status 2 "$cdag" model "$ex/halo1d8.cdag" -L
expect_err "usage: cdag model"
expect_status 2 "$cdag" model "$ex/halo1d8.cdag" -G fast
expect_status 2 "$cdag" model "$ex/halo1d8.cdag" -o -1
expect_status 2 "$cdag" model "$ex/halo1d8.cdag" -S -5
expect_status 2 "$cdag" model "$ex/halo1d8.cdag" -S big
expect_status 1 "$cdag" model "$ex/halo1d8.cdag" -p 16
expect_err "-p 16, but"
expect_err "has 8 ranks"
expect_status 1 "$cdag" goal "$tmp/missing.cdag"
expect_err "cdag goal:"
expect_status 1 "$cdag" goal "$ex/halo1d8.cdag" -o "$tmp/no/such/dir.goal"
expect_err "cannot open"
CDAG_KERNEL=fast expect_status 1 "$cdag" model "$ex/halo1d8.cdag"
expect_err "CDAG_KERNEL"
expect_status 0 "$cdag" model --help
expect_out "defaults L 1"

# irequires: a ping-pong whose sends start once their receives are posted runs (with
# requires it would deadlock); computation stays in the plan; an empty plan states no speedup
printf 'num_ranks 2\nrank 0 {\nr: recv 8b from 1 tag 0\ns: send 8b to 1 tag 0\ns irequires r\n}\nrank 1 {\nr: recv 8b from 0 tag 0\ns: send 8b to 0 tag 0\ns irequires r\n}\n' > "$tmp/pingpong.goal"
expect_status 0 "$cdag" model "$tmp/pingpong.goal" --goal-buffers=fresh
expect_out "graph: 1.401 us"
expect_status 0 "$cdag" goal "$tmp/pingpong.goal" --goal-buffers=fresh
expect_out "irequires"
printf 'num_ranks 1\nrank 0 {\nc: calc 100\n}\n' > "$tmp/calc.goal"
expect_status 0 "$cdag" model "$tmp/calc.goal"
expect_out "plan:  0.100 us"    # the computation stays in the plan
expect_out "speedup: 1.00x"
printf 'num_ranks 2\nrank 0 {\n}\nrank 1 {\n}\n' > "$tmp/empty.goal"
expect_status 0 "$cdag" model "$tmp/empty.goal"
if grep -q "speedup: [0-9]" "$tmp/out"; then fail "an empty plan states a speedup"; fi

# a graph with an unmatched send is refused like `analyze` does (it was exported, exit 0)
printf 'num_ranks 2\nrank 0 {\n  send 8b to 1 tag 0\n}\n' > "$tmp/unmatched.cdag"
expect_status 1 "$cdag" goal "$tmp/unmatched.cdag"
expect_err "cdag goal: unmatched operation"
expect_err "rank 0 op 0 (send, line 3)"
finish
