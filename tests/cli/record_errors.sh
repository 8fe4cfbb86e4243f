#!/usr/bin/env bash
# cdag tests — tests/cli/record_errors.sh CDAG SOURCE_DIR: `cdag record` on wrong use.
# Usage errors exit 2; a command that starts no MPI process, or none at all, is named and
# exits non-zero; a part file that is not one, a run that left no part, and a bad
# CDAG_RECORD_MEMORY or CDAG_RECORD_MIN_GAP are clear errors; index.json names unfinished and missing processes; a recording directory is cleared of an earlier
# recording's files before a run (phases of two runs never mix). Part files that cannot be
# trusted (each field out of its bounds, below) are reported as FILE:LINE: reason, counted in
# index.json, and fail the merge before it allocates what they ask for.
set -u
cdag=$1
src=$2
. "$src/tests/cli/lib/expect.sh"
cd "$tmp" || exit 1

cases <<'T'
2 cdag record
  err usage: cdag record
2 cdag record -o rec
# a command that ran no MPI program is no recording (a sanitizer build's library cannot be
# preloaded into `true`, which then fails: any failing status; without --strict the status
# is the command's, tests/record/record_status.sh)
!0 cdag record --strict -o rec -- true
  err no process was recorded: did the command run an MPI program that calls MPI_Init or MPI_Init_thread?
127 cdag record -o rec -- ./does-not-exist
  err cannot run ./does-not-exist
T
mkdir -p bad
printf 'not a part file\n' >bad/rank-0.part
cases <<'T'
1 cdag record --merge bad
  err not a part file of cdag record
1 cdag record --merge nowhere
  err nowhere/rank-0.part
!0 CDAG_RECORD_MEMORY=lots cdag record -o rec -- true
  err CDAG_RECORD_MEMORY=lots
!0 CDAG_RECORD_MIN_GAP=0 cdag record -o rec -- true
  err CDAG_RECORD_MIN_GAP=0: expected microseconds, 1 to 2^30
T
# A good recording of 2 processes (one message), then one damage per directory.
good() {
  mkdir -p "$1"
  printf 'cdag-record-part 1\nrank 0 nprocs 2\nphase 0\n0 65536 send 8b to 1 tag 0 comm 0 addr 0x1000 wait\nend 0\ncall MPI_Send 1\nfinalized\n' >"$1/rank-0.part"
  printf 'cdag-record-part 1\nrank 1 nprocs 2\nphase 0\n0 65536 recv 8b from 0 tag 0 comm 0 addr 0x1000 wait\nend 0\ncall MPI_Recv 1\nfinalized\n' >"$1/rank-1.part"
}
damage() {   # damage DIR RANK SED: a good recording, rank RANK's part edited by SED
  good "$1" && sed -i "$3" "$1/rank-$2.part"
}
good ok
damage comm 1 '3a comm 5 2000000000'
damage members 1 '3a comm 5 2 0 7'
damage nprocs 0 's/nprocs 2/nprocs 10000000/'
damage version 1 's/part 1$/part 7/'
damage header 1 '1,2d'
damage rank 1 's/rank 1 nprocs 2/rank 0 nprocs 2/'
damage size 1 's/rank 1 nprocs 2/rank 1 nprocs 3/'
damage count 1 's/MPI_Recv 1/MPI_Recv -5/'
damage wait 1 '4a 0 131072 wait 999'
damage dup 1 '4a 0 65536 recv 8b from 0 tag 0 comm 0 addr 0x2000 wait'
damage peer 1 's/from 0/from 9/'
damage phase 1 's/^0 65536/3 65536/'
damage cost 1 '4a 0 32768 compute -5 reads all'
damage probed 1 '4a 0 probed 65536 70000'
damage probedsend 0 '4a 0 probed 65536 32768'
damage probedtaken 1 '4a 0 32768 compute 0 reads all\n0 probed 65536 32768'
damage timing 1 '2a timing 4 -2 10000'
good timed && sed -i '2a timing 2 8 10000' timed/rank-0.part && sed -i '2a timing 3 1 20000' timed/rank-1.part
cases <<'T'
0 cdag record --merge ok
  out recorded 2 processes: 1 phase, 2 operations
1 cdag record --merge comm
  err comm/rank-1.part:4: comm 5 2000000000: the id must be a positive number and the size 1 to 2
1 cdag record --merge members
  err members/rank-1.part:4: communicator 5: member 1 of 2 is missing or not a rank of the 2 processes
1 cdag record --merge nprocs
  err nprocs/rank-0.part:2: nprocs 10000000: more processes than cdag record merges (65536)
1 cdag record --merge version
  err version/rank-1.part:1: part file format version 7, this merger reads version 1
1 cdag record --merge header
  err header/rank-1.part:1: no header: not a part file of cdag record
1 cdag record --merge rank
  err rank/rank-1.part:2: rank 0 of 2 processes in the part of rank 1 of 2
1 cdag record --merge size
  err size/rank-1.part:2: rank 1 of 3 processes in the part of rank 1 of 2
1 cdag record --merge count
  err count/rank-1.part:6: call MPI_Recv -5: not a name and a count (digits, no sign)
1 cdag record --merge wait
  err wait/rank-1.part:5: wait names sequence number 999, which no operation has
1 cdag record --merge dup
  err dup/rank-1.part:5: sequence number 65536 again (line 4 has it)
1 cdag record --merge peer
  err peer/rank-1.part:4: recv 8b from 9 tag 0 comm 0 addr 0x1000 wait: the peer is not a rank of the 2 processes
1 cdag record --merge phase
  err phase/rank-1.part:4: an operation of phase 3, which the part never started
1 cdag record --merge cost
  err cost/rank-1.part:5: compute -5 reads all: the cost is not a number of ns (digits, at most 2^63 - 1)
1 cdag record --merge probed
  err probed/rank-1.part:5: probed 65536 70000: not a receive's position and an earlier probe's
1 cdag record --merge probedsend
  err probedsend/rank-0.part:5: probed 65536 32768: not a receive probed once at a position of its own
1 cdag record --merge probedtaken
  err probedtaken/rank-1.part:6: probed 65536 32768: not a receive probed once at a position of its own
1 cdag record --merge timing
  err timing/rank-1.part:3: not a line of a part file: "timing 4 -2 10000"
# the node with the most processes per CPU, the largest least gap, and the note on it
0 cdag record --merge timed
  out note: a node ran 3 processes on 1 CPU: a process that waited 20 us or more for a CPU
T
grep -q '"timing": {"min_gap_ns": 20000, "node_procs": 3, "node_cpus": 1}' timed/index.json ||
  fail "index.json's timing: $(cat timed/index.json)"
grep -q '"timing": {"min_gap_ns": 0, "node_procs": 0, "node_cpus": 0}' ok/index.json ||
  fail "parts without timing lines: $(cat ok/index.json)"
! grep -q "note: a node" <(cd "$tmp" && "$cdag" record --merge ok 2>&1) || fail "a note on parts without timing lines"
# the index says what was malformed, and no phase was written from an untrusted part
grep -q '"malformed": {"lines": 1, "first": \["rank-1.part:5: wait names sequence number 999' wait/index.json ||
  fail "index.json does not list the malformed line: $(cat wait/index.json)"
[ ! -e wait/phase-0000.cdag ] || fail "a phase file was written from a part that cannot be trusted"
grep -q '"malformed": {"lines": 0, "first": \[\]}' ok/index.json || fail "a good recording's index: $(cat ok/index.json)"
# computations: the recorder's (time only, and one that writes what rank 0 sends; rank 0
# left no `fixes` line, so the index counts its lines) and a receive whose send is outside
# the phase (bytes from outside: a computation that reads nothing)
good comp
printf 'cdag-record-part 1\nrank 0 nprocs 2\nphase 0\n0 32768 compute 5000 reads all\n0 32769 compute 0 reads all writes 8b at 0x1000\n0 65536 send 8b to 1 tag 0 comm 0 addr 0x1000 wait\nend 0\nfinalized\n' >comp/rank-0.part
sed -i '4a 0 131072 recv 8b from 0 tag 5 comm 0 addr 0x2000 wait' comp/rank-1.part
cases <<'T'
0 cdag record --merge comp
  out 5 operations, 3 computations (0.005 ms computed)
  out receives whose send is outside the phase (computations that write what arrived): 1
T
grep -qx "compute 0 writes 8b at 0x2000 wait" comp/phase-0000.cdag ||
  fail "the receive from outside the phase is not a computation that writes: $(cat comp/phase-0000.cdag)"
grep -q '"compute": {"ops": 3, "ns": 5000}' comp/index.json && grep -q '"local": {"compute": 1, ' comp/index.json &&
  grep -q '"computes": 3, "compute_ns": 5000' comp/index.json || fail "computations in index.json: $(cat comp/index.json)"
# processes that did not finish: a part without `finalized` (its count line as the recorder
# keeps it current in place, 20 digits) is named unfinished, a part that is not there
# missing; either makes the counts partial
grep -q '"unfinished": \[\],' ok/index.json && grep -q '"missing": \[\], "counts_partial": false' ok/index.json ||
  fail "a finished recording's index: $(cat ok/index.json)"
good partial
sed -i '/^finalized$/d; s/^call MPI_Recv 1$/call MPI_Recv 00000000000000000017/' partial/rank-1.part
good gone
rm gone/rank-1.part
cases <<'T'
0 cdag record --merge partial
0 cdag record --merge gone
T
grep -q '"unfinished": \[1\],' partial/index.json && grep -q '"missing": \[\], "counts_partial": true' partial/index.json &&
  grep -q '"MPI_Recv": 17' partial/index.json || fail "an unfinished process in index.json: $(cat partial/index.json)"
grep -q '"unfinished": \[\],' gone/index.json && grep -q '"missing": \[1\], "counts_partial": true' gone/index.json ||
  fail "a missing process in index.json: $(cat gone/index.json)"
mkdir -p old && touch old/phase-0007.cdag old/rank-3.part old/index.json old/mine.txt
"$cdag" record -o old -- true >/dev/null 2>&1
[ ! -e old/phase-0007.cdag ] && [ ! -e old/rank-3.part ] && [ ! -e old/index.json ] ||
  fail "an earlier recording's files were left in the directory"
[ -e old/mine.txt ] || fail "a file that is not the recorder's was removed"
# The tool's heap is advised for huge pages past its first 8 MiB (tools/cdag.c, huge_heap): the
# recorded command's parent is cdag, whose heap then has a range flagged `hg`. Not in the
# sanitizers' build (their allocator is not glibc's heap).
if [ -r /proc/self/smaps ] && ! grep -q __asan_init "$cdag"; then
  CDAG_RECORD_LIB=/dev/null "$cdag" record -o envrec -- sh -c 'grep -q "^VmFlags:.* hg" /proc/$PPID/smaps && echo advised' 2>/dev/null |
    grep -q advised || fail "cdag's heap is not advised for huge pages"
fi
finish
