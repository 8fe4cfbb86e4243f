#!/usr/bin/env bash
# cdag tests — tests/cli/price.sh CDAG SOURCE_DIR: the price (src/model/price.c). A candidate
# collective that costs no less than its transfers as messages (a reduction: as residual
# reductions) is left as them, with both prices in a note; a plan that models no faster than the graph as written is set aside for
# the graph, with both times; options.price = 0 (--price=0, CDAG_PRICE=0) turns both off and
# the report says so. Times are LogGOPS microseconds under the built-in parameters (L 1,
# o = g = 0.2 us, G 0.0002 us/B), printed with three decimals.
set -u
cdag=$1
src=$2
. "$src/tests/cli/lib/expect.sh"
ex=$src/examples/graphs
unset CDAG_PRICE CDAG_KERNEL CDAG_ALPHA CDAG_BETA CDAG_OVERHEAD CDAG_GAMMA

cases <<'T'
# a 1-D halo: the plan's packed messages model slower than the program's, so the graph runs
0 cdag analyze "$ex/halo1d8.cdag"
  first no collectives found
  out price (LogGOPS L=1 o=0.2 g=0.2 us, G=0.0002 us/B, copy 0.0001 us/B; built in): plan 1.851 us, as written 1.625 us: runs as written (the plan is not faster)
0 cdag analyze --json "$ex/halo1d8.cdag"
  out "as_written": true,
  out "price": {"priced": true, "candidates_left": 0, "plan_us": 1.850600, "plan_bound": false, "written_us": 1.625200, "runs": "as_written", "params": {"L": 1, "o": 0.2, "g": 0.2, "G": 0.0002, "O": 0, "S": 65535, "copy": 0.0001, "rcopy": 0, "queue": 0, "sizes": []}, "source": "built in"},
# a plan with a collective set aside says so first, before the collective it would use
0 cdag analyze "$src/tests/data/detect/allgather3_loses.cdag"
  first runs as written (the plan below is not faster: see price); the plan would use:
  out~ : runs as written \(the plan is not faster; the collectives above are not used\)$
# a 64 B binomial bcast on 8 ranks: the root's seven sends beat the collective's three rounds
0 cdag analyze "$ex/bcast_binomial8.cdag"
  first no collectives used: 1 found cost no less than their messages (notes below)
  out note: left as messages: bcast over all 8 ranks would cost 4.244 us, its 7 transfers as messages 2.695 us
  out plan 2.695 us, as written 4.238 us: the plan runs (saves 1.543 us)
0 cdag analyze --json "$ex/bcast_binomial8.cdag"
  out "collectives": [],
  out "candidates_left": 1,
  out "runs": "plan"
# verify checks the plan as priced: the bcast's transfers are messages
0 cdag verify "$ex/bcast_binomial8.cdag"
  out verify: plan (0 collectives, 7 residual messages) matches the graph on all 8 ranks
# a collective that pays keeps both prices beside its algorithm
0 cdag analyze "$ex/alltoall_butterfly4.cdag"
  first alltoall over all 4 ranks
  out~ ^  price: [0-9.]+ us as this collective, [0-9.]+ us as messages$
  out~ : the plan runs \(saves [0-9.]+ us\)$
0 cdag analyze --json "$ex/alltoall_butterfly4.cdag"
  out~ "price": \{"collective_us": [0-9.]+, "messages_us": [0-9.]+\}
# reduce + bcast to the ranks that keep the dot product model slower than residual reductions
# (each keeper receives every contribution), which beat the program's own sums
0 cdag analyze "$ex/cg_dot16.cdag"
  out note: left as residual reductions: reduce over all 16 ranks with the bcast of its result would cost 8.428 us, its 4 reductions as messages 4.683 us
0 cdag model "$ex/cg_dot16.cdag"
  out graph: 5.622 us
  out plan:  4.683 us
# a 4-rank allreduce: the census kernel loses to residual reductions, which beat the ring
0 cdag analyze "$ex/allreduce_ring4.cdag"
  out note: left as residual reductions: allreduce over all 4 ranks would cost 2.857 us, its 4 reductions as messages 2.314 us
  out : the plan runs (saves 6.109 us)
# a program's own collective call is weighed like any other: its flat messages (the graph as
# written) model faster for 64 B on 8 ranks than MPI's binomial tree, so they run
0 cdag analyze "$src/tests/data/replay/native_bcast8.cdag"
  first no collectives used: 1 found cost no less than their messages
  out native collective calls: 1 (1 bcast)
  out note: left as messages: bcast over all 8 ranks would cost 4.244 us, its 7 transfers as messages 2.695 us
  out (a call on fewer than min_group ranks, or one whose messages cost less: see the notes)
  out plan 2.695 us, as written 2.688 us: runs as written (the plan is not faster)
  out note: the 1 collective the price set aside, kept, would make a plan of 4.244 us, against 2.695 us with it left
  out! the graph calls collectives
# a native allreduce left as residual reductions is counted as native data
0 cdag analyze "$src/tests/data/replay/native_allreduce3.cdag"
  out 3 residual reductions are results of native calls that no collective of the plan covers
0 cdag analyze --json "$src/tests/data/replay/native_allreduce3.cdag"
  out "native": {"calls": {"allreduce": 1}, "residual": {"transfers": 0, "bytes": 0, "reductions": 3}}
# a candidate left as messages where the plan without it loses to the graph: planned again with
# every candidate kept, the gather pays
0 cdag analyze "$src/tests/data/replay/native_gather4.cdag"
  first stages: 1, between them 1 computations
  out gather rooted at 2 over all 4 ranks
  out note: the 1 collective the price set aside, kept: 2.905 us, against 3.012 us otherwise
  out : the plan runs (saves 0.106 us)
# the price can be turned off: the plan runs unweighed, and the report says so
0 cdag analyze --price=0 "$ex/halo1d8.cdag"
  out price: options.price = 0 (or CDAG_PRICE=0): the plan runs without being weighed
  out! runs as written
0 CDAG_PRICE=0 cdag analyze "$ex/bcast_binomial8.cdag"
  first bcast rooted at 0 over all 8 ranks
  out! left as messages
0 CDAG_PRICE=0 cdag analyze --json "$ex/halo1d8.cdag"
  out "price": {"priced": false, "candidates_left": 0, "params":
  out "as_written": false,
# residual reductions of P^2 contributions (partial sums left in memory that is not scratch):
# their receives alone lose, so they are bounded, not lowered, and the graph runs as written
0 cdag analyze "$src/tests/data/detect/allreduce_unmarked64.cdag"
  out   price: 8.559 us as this collective, 12.600 us as messages
  out plan at least 12.400 us (the receives of its residual reductions; not lowered), as written 8.514 us: runs as written
0 cdag analyze --json "$src/tests/data/detect/allreduce_unmarked64.cdag"
  out "plan_us": 12.400000, "plan_bound": true, "written_us": 8.514000, "runs": "as_written"
0 cdag verify "$src/tests/data/detect/allreduce_unmarked64.cdag"
  out matches the graph on all 64 ranks
# local sums of bytes received at the top of the address space: the second planning is weighed
0 cdag analyze "$src/tests/data/detect/delivered_high2.cdag"
  out~ ^note: 2 local reductions and copies read bytes messages deliver: reading them where they land, a stage after the messages, would cost [0-9.]+ us, against [0-9.]+ us as planned$
0 cdag verify "$src/tests/data/detect/delivered_high2.cdag"
  out matches the graph on all 2 ranks
# bad values are refused, naming the option
2 cdag analyze --price=2 "$ex/halo1d8.cdag"
  err price
1 CDAG_PRICE=yes cdag analyze "$ex/halo1d8.cdag"
  err CDAG_PRICE
T

# The same graph with the ranks' address ranges permuted (as address-space randomisation
# does) prices alike: residual reductions are lowered by rank, not by address (the six
# orders gave 11.399, 11.799 or 11.999 us, the allreduce kept in some, left in others). The
# SST lists each sum's contributions by rank in every order too: the runtime and the
# simulator combine them in that order, so a float sum has the same bits from run to run.
first=""
for perm in 123 132 213 231 312 321; do
  sed -e "s/0x1\([0-9a-f]\{5\}\)/0xA\1/g; s/0x2\([0-9a-f]\{5\}\)/0xB\1/g; s/0x3\([0-9a-f]\{5\}\)/0xC\1/g" \
      -e "s/0xA/0x${perm:0:1}/g; s/0xB/0x${perm:1:1}/g; s/0xC/0x${perm:2:1}/g" \
      "$src/tests/data/model/allreduce3_addresses.cdag" >"$tmp/perm.cdag"
  "$cdag" analyze "$tmp/perm.cdag" 2>&1 | grep -E '^(price|note: left|allreduce)' >"$tmp/perm.txt"
  grep -q '^price' "$tmp/perm.txt" || fail "allreduce3_addresses ($perm): no price line"
  if [ -z "$first" ]; then first=$(cat "$tmp/perm.txt")
  elif [ "$(cat "$tmp/perm.txt")" != "$first" ]; then fail "allreduce3_addresses ($perm) prices otherwise: $(cat "$tmp/perm.txt")"; fi
  order=$("$cdag" sst "$tmp/perm.cdag" | grep -o 'over .*' | sed 's/0x[0-9a-f]*//g' | sort -u)
  [ "$order" = "over 0: 1: 2:" ] || fail "allreduce3_addresses ($perm): contributions not by rank: $order"
done
finish
