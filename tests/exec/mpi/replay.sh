#!/usr/bin/env bash
# cdag tests — tests/exec/mpi/replay.sh CDAG SOURCE_DIR MPIEXEC GROUP: `cdag replay` under mpiexec.
#
# Each GROUP is one ctest entry (tests/exec/mpi/CMakeLists.txt):
#   np1..np4  files replayed at that many processes: every run must leave the same memory as
#             written and compiled, print both times (median and best of --repeat rounds of
#             --iterations runs, by default as many as take about 0.25 s, at most 100,
#             the ratio from the medians), the compile time, the break-even and
#             the report (a file of one rank; one-sided puts, gets and fences; a broadcast;
#             allgathers of two sizes that once merged into one that could not run; an
#             allreduce of float, double and complex sums and products; a max over sums,
#             compared within their tolerance; complex products
#             fed their own results until they overflow (counted, not compared); native collectives
#             of every kind with waits and a communicator; nonblocking ones overlapped
#             with messages and a computation; fetch-and-ops in fence epochs; accesses of
#             an accumulate's bytes later in its epoch and in the next, checked byte by
#             byte against what the file says (acc_epochs_oracle.py); a GOAL file;
#             a file in Schedgen's
#             style, without addresses; --json parsed as JSON; computations in stages
#             with a staging buffer; a reduce mixing ops; a native allreduce between
#             computations; a pipeline of computations
#             and broadcasts in 8 stages, with --compute=none and, by default, spending the
#             computations' time);
#   corrupt   the comparison is real: CDAG_REPLAY_CORRUPT=R flips a bit of rank R's memory
#             after the compiled run, and replay must name the rank, the file address and both
#             values, and exit 1 (a byte compared exactly, and a floating-point sum);
#   errors    a process count other than the file's, a bad file, an unmatched send, a
#             missing file, a file too large for the node's memory (--memory), bad arguments:
#             one clear message, exit 1 (2 for usage) on every rank.
# Every mpiexec runs under `timeout`, so a hang fails the test instead of stopping the suite.
set -u
cdag=$1
src=$2
mpiexec=$3
group=$4
. "$src/tests/cli/lib/expect.sh"
# Replays compare the graph with its plan: every plan runs, even one the price would set aside
# (tests/cli/price.sh tests the price).
export CDAG_PRICE=0
data=$src/tests/data/replay
iters='--iterations 3'   # few: oversubscribed ranks poll, and the check needs one run each way
once="$iters --repeat 1"   # and one round: at 3 and 4 processes each round costs a second

run() {
  local np=$1
  shift
  timeout 60 "$mpiexec" -n "$np" "$cdag" replay "$@"
}

# `summary` in a table: the lines every successful replay prints.
kind_summary() {
  local t
  for t in "same memory as written and compiled on every rank: " "as written: " "compiled:   " ", from the medians" \
           "compile:    " "break-even: "; do
    expect out "$t" "$2"
  done
}

# The tables below are unquoted here-documents: $data, $src, $tmp and $iters expand in rows
# and patterns alike.
case $group in
np1)
  cases <<T
0 run 1 "$data/local1.cdag" $iters
  summary
  out replay $data/local1.cdag: 1 ranks, 7 operations, 3 iterations each way, repeated 5 times
  out 160 bytes equal, 8 floating-point sums and products within tolerance
  out~ us per iteration \(median of 5; best [0-9]
0 run 1 "$data/local1.cdag" $iters --repeat 3
  out 3 iterations each way, repeated 3 times
  out~ us per iteration \(median of 3; best [0-9]
# computations spend no time: the option is accepted where there is none to spend
0 run 1 "$data/local1.cdag" $iters --compute=none
  summary
# without --iterations: as many as take about 0.25 s (up to 100 for a graph that takes
# microseconds, fewer when the machine is busy), 1 for one that computes for 0.3 s (100 would
# take a minute per round)
0 run 1 "$data/local1.cdag" --repeat 1
  out~ : 1 ranks, 7 operations, [0-9]+ iterations each way, repeated 1 times
0 run 1 "$data/slow_compute1.cdag" --repeat 1
  out 1 iterations each way, repeated 1 times
  summary
T
  ;;
np2)
  awk 'BEGIN { n = 262200; print "num_ranks 2"; print "rank 0 {"
               for (i = 0; i < n; i++) { print "compute 0 writes 8 at 0x100"; print "send 8b to 1 addr 0x100" }
               print "}"; print "rank 1 {"
               for (i = 0; i < n; i++) printf "recv 8b from 0 addr 0x%x\n", 65536 + 8 * i
               print "}" }' >"$tmp/ready.cdag"
  cases <<T
0 run 2 "$data/onesided2.cdag" $iters
  summary
  out 544 bytes equal
  out one-sided: 3 gets, 2 puts, 0 accumulates, 4 fences, run as the messages they expand to
# accumulates (as the message and reduce they expand to) and fences beside a native reduce
0 run 2 "$data/accumulate_native2.cdag" $iters
  summary
  out 80 bytes equal
# MPI_Fetch_and_op in fence epochs (a get, then an accumulate of the same bytes)
0 run 2 "$data/fetch_and_op2.cdag" $iters
  summary
  out 40 bytes equal
# target sides in blocks run as messages through the target's scratch; a put into the gap
# between an accumulate's blocks is not taken for one over them
0 run 2 "$data/strided_onesided2.cdag" $iters
  summary
  out 480 bytes equal
  out one-sided: 1 gets, 2 puts, 1 accumulates, 4 fences
# an accumulate, then a put of its origin over part of its bytes in its epoch, and a put and
# a get of them in the next: no race (the accumulate is done at the fence), and the bytes
# the file says (acc_epochs_oracle.py: before, replay moved the reduce into the next epoch,
# where its own race check met it)
0 run 2 "$data/acc_epochs2.cdag" $iters --dump $tmp
  summary
  out 48 bytes equal
# 262,200 receives that nothing orders: started together they are more requests than MPICH
# holds (it aborted with an assertion); refused when built, on every rank
1 run 2 "$tmp/ready.cdag" --iterations 1 --repeat 1
  err rank 1: 262200 messages of the graph as written start at once (no operation orders them)
T
  python3 "$src/tests/exec/mpi/acc_epochs_oracle.py" "$tmp" >"$tmp/oracle" ||
    fail "acc_epochs2.cdag replays other bytes than the file's: $(cat "$tmp/oracle")"
  ;;
np3)
  printf 'num_ranks 3\nrank 1 {\n  calc 5\n  send 0b to 2\n}\nrank 2 {\n  recv 0b from 1\n}\n' >"$tmp/idle.goal"
  cases <<T
0 run 3 "$data/bcast3.cdag" $once
  summary
  out 960 bytes equal
  out bcast rooted at 0 over all 3 ranks, 320 B per block
# allgathers of two sizes, one moving an own block: two allgathers that compile and run
0 run 3 "$data/merge_own_block3.cdag" $once
  summary
  out 216 bytes equal
  out allgather over all 3 ranks, 16 B per block (6 transfers)
  out allgather over all 3 ranks, 8 B per block (7 transfers)
# no rank touches memory, rank 0 does nothing
0 run 3 "$tmp/idle.goal" $once
  out 0 bytes equal, 0 floating-point
# computations in 3 stages, a message landing a stage late through a staging buffer
0 run 3 "$src/tests/data/fault/compute_stages3.cdag" $once
  summary
  out 80 bytes equal
  out stages: 3, between them 4 computations
  out 1 messages land a stage late, through staging buffers (8 B)
# nonblocking native calls overlapped with a ring message and a computation
0 run 3 "$data/native_nb3.cdag" $once
  summary
  out 480 bytes equal
  out allreduce over all 3 ranks, 32 B of int64 sum
# a reduce that mixes ops starts a stage of its own
0 run 3 "$data/mixed_reduce3.cdag" $once
  summary
  out 48 bytes equal
  out stages: 2, between them 0 computations
# the options of the compiled run (cmd_options): --detect=0 compiles nothing away
0 run 3 "$data/bcast3.cdag" --detect=0 $once
  out graph run as written (detect = 0) over 3 ranks
T
  ;;
np4)
  cases <<T
# products fed their own results overflow in one order and not another: not compared (the
# replay before said "different memory" for this file every time)
0 run 4 "$data/prod_chain4.cdag" $once
  summary
  out 128 bytes equal
  out more overflowed in one order or both: not compared
0 run 4 "$data/allreduce_float4.cdag" $once
  summary
  out 0 bytes equal, 56 floating-point sums and products within tolerance
  out allreduce over all 4 ranks, 64 B of double sum
  out allreduce over all 4 ranks, 16 B of float prod
# a max over sums (co_sum then co_max of one variable) carries the sums' last bits: compared
# within their tolerance (the replay before said "different memory": 1 of 8 bytes)
0 run 4 "$data/sum_then_max4.cdag" $once
  summary
  out 0 bytes equal, 4 floating-point sums and products within tolerance
0 run 4 "$data/native4.cdag" $once
  summary
  out replay $data/native4.cdag: 4 ranks, 56 operations
  out 1280 bytes equal, 52 floating-point sums and products within tolerance
  out allreduce over all 4 ranks, 32 B of double sum
0 run 4 "$data/native_vector4.cdag" $once
  summary
  out replay $data/native_vector4.cdag: 4 ranks, 24 operations
  out 552 bytes equal
  out native collective calls: 7 (1 scatterv, 1 gatherv, 1 allgatherv, 1 alltoallv, 1 reduce_scatter, 1 scan, 1 exscan)
# a float product written by hand, read by a computation before an int32 sum overwrites it:
# its last bits differ compiled, and must not spread through the computations' hashes
0 run 4 "$data/reassoc_read4.cdag" --price=0 $once
  summary
  out 768 bytes equal
0 run 4 "$src/tests/data/goal/calc_cpu_nic.goal" $once
  summary
  out replay $src/tests/data/goal/calc_cpu_nic.goal: 4 ranks, 9 operations
# follow: every receive has a region of its own
0 run 4 "$data/schedgen_reduce4.goal" $once
  summary
  out 5120 bytes equal
# shared: one buffer of 1024 B per rank
0 run 4 "$data/schedgen_reduce4.goal" --goal-buffers=shared $once
  out 4096 bytes equal
0 run 4 "$src/examples/graphs/allreduce_ring4.cdag" --json --iterations=2 --repeat=3
T
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["cdag_replay"] == 1 and d["nprocs"] == 4 and d["ops"] == 60 and d["iterations"] == 2, d
assert d["repeat"] == 3, d["repeat"]
assert d["compared"] == {"bytes": 256, "float_values": 0, "float_overflowed": 0}, d["compared"]
s, b = d["seconds"], d["best"]   # seconds: the medians
assert s["as_written"] > 0 and s["compiled"] > 0 and s["compile"] > 0, s
assert 0 < b["as_written"] <= s["as_written"] and 0 < b["compiled"] <= s["compiled"], (b, s)
assert abs(d["speedup"] - s["as_written"] / s["compiled"]) <= 1e-3 * d["speedup"], d["speedup"]
assert d["break_even"] is None or d["break_even"] >= 1, d["break_even"]
assert d["report"]["cdag_report"] == 1 and d["report"]["collectives"][0]["kind"] == "allreduce", d["report"]
' "$tmp/out" || fail "--json output is not the expected JSON: $(head -c 400 "$tmp/out")"
  # a graph that computes: 8 panels, each computed from the one before by its owner (200 us),
  # then sent to the others; stage by stage, one broadcast each, the same memory both ways
  cases <<T
0 run 4 "$data/pipeline4.cdag" $iters --repeat 1 --compute=none
  summary
  out 2112 bytes equal, 0 floating-point
  out stages: 8, between them 8 computations (0 only take time; 0.0 us in all)
  out stage 7:
  out bcast rooted at 3 over all 4 ranks, 64 B per block (3 transfers)
  out! allgather
# a native allreduce between computations: its stage runs it (here as one of cdag's kernels)
0 run 4 "$data/native_compute4.cdag" --iterations 2 --repeat 1 --compute=none
  summary
  out 448 bytes equal
  out stages: 2, between them 12 computations
  out allreduce over all 4 ranks, 32 B of int64 sum
0 run 4 "$data/pipeline4.cdag" --iterations 1 --repeat 1 --json
T
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = d["seconds"]   # --compute=recorded (the default): the 8 computations in a chain cost 1.6 ms
assert d["compared"] == {"bytes": 2112, "float_values": 0, "float_overflowed": 0}, d["compared"]
assert s["as_written"] >= 1.6e-3 and s["compiled"] >= 1.6e-3, s
' "$tmp/out" || fail "replay of a graph that computes spent less than its computations: $(head -c 400 "$tmp/out")"
  # two runs leave the same bytes, computed ones included (their hashes once mixed where the
  # run had mapped its memory)
  mkdir -p "$tmp/d1" "$tmp/d2"
  for d in d1 d2; do
    run 4 "$data/pipeline4.cdag" --iterations 1 --repeat 1 --compute=none --dump "$tmp/$d" >/dev/null 2>&1 ||
      fail "replay --dump $d of pipeline4.cdag failed"
  done
  for r in 0 1 2 3; do
    cmp -s "$tmp/d1/replay-$r.mem" "$tmp/d2/replay-$r.mem" || fail "two replays of pipeline4.cdag left rank $r other bytes"
  done
  ;;
corrupt)
  cases <<T
1 CDAG_REPLAY_CORRUPT=2 run 3 "$data/bcast3.cdag" $iters
  err cdag replay: rank 2, file address 0x
  err : as written 0x
  err1 cdag replay: rank 2: the compiled run and the run as written leave different memory: 1 of 320 bytes
  out! same memory
1 CDAG_REPLAY_CORRUPT=1 run 4 "$data/allreduce_float4.cdag" $iters
  err~ cdag replay: rank 1, file address 0x1060 \(complex_double, a sum of 4 values\): as written[ ]
  err 0 of 0 bytes and 1 of 14 floating-point values differ (first at file address 0x1060)
1 CDAG_REPLAY_CORRUPT=x run 1 "$data/local1.cdag"
  err CDAG_REPLAY_CORRUPT=x: expected a rank
T
  ;;
errors)
  printf 'num_ranks 2\nrank 0 {\n  sned 8b to 1\n}\n' >"$tmp/bad.cdag"
  {   # 100 KB of text: more than 1 MiB loaded on 2 processes
    printf 'num_ranks 2\nrank 0 {\n'
    for k in $(seq 2000); do printf '  send 8b to 1 tag %d addr 0x%x\n' "$k" $((8 * k)); done
    printf '}\nrank 1 {\n'
    for k in $(seq 2000); do printf '  recv 8b from 0 tag %d addr 0x%x\n' "$k" $((8 * k)); done
    printf '}\n'
  } >"$tmp/big.cdag"
  printf 'num_ranks 2\nrank 0 {\n  send 8b to 1 tag 0 addr 0x0\n}\n' >"$tmp/unmatched.cdag"
  # a small file whose operations span 256 MiB on each rank (a recording's one-sided scratch can)
  printf 'num_ranks 2\nrank 0 {\n  send 268435456b to 1 addr 0x0\n}\nrank 1 {\n  recv 268435456b from 0 addr 0x0\n}\n' >"$tmp/wide.cdag"
  # one 64 MiB buffer sent twice, blocking (MPICH's pt2pt/large_message): the run as written
  # stages the first, which the second waits for
  printf 'num_ranks 2\nrank 0 {\n  send 67108864b to 1 addr 0x0 wait\n  send 67108864b to 1 addr 0x0 wait\n}\nrank 1 {\n  recv 67108864b from 0 addr 0x0\n  recv 67108864b from 0 addr 0x4000000\n}\n' >"$tmp/twice.cdag"
  cases <<T
1 run 2 "$src/examples/graphs/allreduce_ring4.cdag"
  err1 cdag replay: $src/examples/graphs/allreduce_ring4.cdag has 4 ranks, run with mpiexec -n 4 (this run has 2)
1 run 3 "$data/onesided2.cdag"
  err1 onesided2.cdag has 2 ranks, run with mpiexec -n 2 (this run has 3)
1 run 2 "$tmp/bad.cdag"
  err1 cdag replay: malformed graph file: $tmp/bad.cdag:3:3: expected an operation
1 run 2 "$tmp/unmatched.cdag"
  err1 rank 0 op 0 (send, line 3): send of 8 bytes to rank 1 tag 0 has no matching receive
1 run 2 "$tmp/missing.cdag"
  err1 missing.cdag: cannot open
2 run 2
  err1 usage: cdag replay FILE [--iterations N] [--repeat N] [--json]
2 run 1 "$data/local1.cdag" --iterations 0
2 run 1 "$data/local1.cdag" --repeat 0
2 run 1 "$data/local1.cdag" --repeat=2x
2 run 1 "$data/local1.cdag" --repeat
2 run 1 "$data/local1.cdag" --iterations
2 run 1 "$data/local1.cdag" --iterations=3x
2 run 1 "$data/local1.cdag" --goal-buffers=some
2 run 1 "$data/local1.cdag" --compute=some
  err1 usage: cdag replay FILE [--iterations N] [--repeat N] [--json] [--dump DIR] [--compute=recorded|none|skip]
2 run 1 "$data/local1.cdag" --compute
2 run 2 "$data/local1.cdag" --min-group=0
  err1 cdag: --min-group=0: expected an integer from 1 to 2147483647
# a file whose loading on every process would not fit the node's memory: refused, with the figures
1 run 2 "$tmp/big.cdag" --memory=1
  err1 cdag replay: out of memory: $tmp/big.cdag: 0.1 MB of text, which each of the 2 processes on this node loads whole (about 12 times its size: 3 MB in all), and the node has 1 MB available (--memory); replay it on fewer processes per node, or analyse it in one process (cdag analyze)
0 run 2 "$tmp/big.cdag" --memory=64 --iterations 1 --repeat 1
  out 32000 bytes equal
# ... and one whose memory would not fit: refused before any is touched, with the figures
1 run 2 "$tmp/wide.cdag" --memory=1000
  err1 cdag replay: out of memory: $tmp/wide.cdag: the ranks' operations span 537 MB of memory (rank 0's: 268 MB) and their staged sends move 0 MB (rank 0's: 0 MB); a replay holds each rank's three times (the run as written kept to compare, the plan's messages) and two copies of its staged sends (one in each of its two runs): 1611 MB for the 2 processes on this node, which has 1049 MB available (--memory); replay it on fewer processes per node
1 run 2 "$tmp/twice.cdag" --memory=600
  err1 cdag replay: out of memory: $tmp/twice.cdag: the ranks' operations span 201 MB of memory (rank 0's: 67 MB) and their staged sends move 67 MB (rank 0's: 67 MB); a replay holds each rank's three times (the run as written kept to compare, the plan's messages) and two copies of its staged sends (one in each of its two runs): 738 MB for the 2 processes on this node, which has 629 MB available (--memory); replay it on fewer processes per node
2 run 1 "$data/local1.cdag" --memory=0
# standard input reaches rank 0 only
2 run 1 - <"$data/local1.cdag"
T
  ;;
*)
  fail "unknown group '$group'"
  ;;
esac
finish
