#!/usr/bin/env bash
# cdag tests — tests/cli/record_passive.sh CDAG SOURCE_DIR: the merger places passive-target
# epochs at their targets (docs/recording.md, One-sided communication), on part files
# written here (no MPI).
#
# Three ranks: a barrier, a bcast rooted at 0, a reduce rooted at 0, a message from 2 to 0,
# a barrier, MPI_Win_free (`winfree`). Epochs (o -> t):
#   0 -> 1 between the barrier and the bcast rooted at its origin: placed;
#   1 -> 2 before the reduce rooted at 0, which orders it at 0 only: unsupported;
#   2 -> 0 before the message to 0: unsupported;
#   2 -> 1 between the barrier and MPI_Win_free: placed;
#   1 -> 0 never closed: unsupported.
# Then epochs whose targets' fences would make the graph a dependency cycle, the same placed
# where each target was (`tpos`), two origins' epochs in the order of their tickets across a
# send of the target (not under shared locks), and a phase that does not load for another
# reason.
set -u
cdag=$1
src=$2
. "$src/tests/cli/lib/expect.sh"
cd "$tmp" || exit 1

B=805306368   # REC_PASSIVE_BASE (src/record/record.h); the pair (o, t) is B + 3o + t
c() { echo $((B + 3 * $1 + $2)); }
mkdir -p run
{
  printf 'cdag-record-part 1\nrank 0 nprocs 3\ncomm %d 2 0 1\nphase 0\n' "$(c 0 1)"
  echo "0 65536 barrier"
  echo "0 131072 lock comm $(c 0 1)"
  echo "0 196608 put 8b to 1 at 0x5000 addr 0x100 comm $(c 0 1)"
  echo "0 262144 unlock comm $(c 0 1)"
  echo "0 327680 bcast 8b root 0 addr 0x200"
  echo "0 393216 reduce 1 int32 sum root 0 in 0x300 out 0x310"
  echo "0 458752 recv 4b from 2 tag 1 comm 0 addr 0x400 wait"
  echo "0 524288 barrier"
  echo "0 589824 winfree comm 0"
  printf 'end 0\nfinalized\n'
} >run/rank-0.part
{
  printf 'cdag-record-part 1\nrank 1 nprocs 3\ncomm %d 2 1 2\ncomm %d 2 1 0\nphase 0\n' "$(c 1 2)" "$(c 1 0)"
  echo "0 65536 barrier"
  echo "0 131072 bcast 8b root 0 addr 0x200"
  echo "0 196608 lock comm $(c 1 2)"
  echo "0 262144 put 8b to 2 at 0x6000 addr 0x100 comm $(c 1 2)"
  echo "0 327680 unlock comm $(c 1 2)"
  echo "0 393216 reduce 1 int32 sum root 0 in 0x300"
  echo "0 458752 barrier"
  echo "0 524288 winfree comm 0"
  echo "0 589824 lock comm $(c 1 0)"
  echo "0 655360 put 8b to 0 at 0x5100 addr 0x100 comm $(c 1 0)"
  printf 'end 0\nfinalized\n'
} >run/rank-1.part
{
  printf 'cdag-record-part 1\nrank 2 nprocs 3\ncomm %d 2 2 0\ncomm %d 2 2 1\nphase 0\n' "$(c 2 0)" "$(c 2 1)"
  echo "0 65536 barrier"
  echo "0 131072 bcast 8b root 0 addr 0x200"
  echo "0 196608 reduce 1 int32 sum root 0 in 0x300"
  echo "0 262144 lock comm $(c 2 0)"
  echo "0 327680 put 8b to 0 at 0x5200 addr 0x100 comm $(c 2 0)"
  echo "0 393216 unlock comm $(c 2 0)"
  echo "0 458752 send 4b to 0 tag 1 comm 0 addr 0x400 wait"
  echo "0 524288 barrier"
  echo "0 589824 lock comm $(c 2 1)"
  echo "0 655360 put 8b to 1 at 0x5300 addr 0x100 comm $(c 2 1)"
  echo "0 720896 unlock comm $(c 2 1)"
  echo "0 786432 winfree comm 0"
  printf 'end 0\nfinalized\n'
} >run/rank-2.part
# a part whose passive communicator is another origin's
mkdir -p bad
cp run/rank-0.part run/rank-2.part bad/
sed -e "s/$(c 1 2)/$(c 0 2)/g" -e "s/^comm $(c 0 2) 2 1 2/comm $(c 0 2) 2 0 2/" run/rank-1.part >bad/rank-1.part

# fetch_parts DIR TPOS: two ranks each fetching twice from the other between two barriers,
# epoch after epoch, into DIR; with TPOS 1, `tpos` on the markers (below) and tickets on the
# unlocks
tp() { echo $(($1 * 4 + $2)); }
fetch_parts() {
  mkdir -p "$1"
  for r in 0 1; do
    o=$((1 - r)) at=
    {
      printf 'cdag-record-part 1\nrank %d nprocs 2\ncomm %d 2 %d %d\nphase 0\n' $r $((B + 2 * r + o)) $r $o
      echo "0 65536 barrier"
      for k in 0 1; do
        p=$((131072 + 196608 * k)) lock= unlock=
        if [ "$2" = 1 ]; then
          if [ $r = 0 ]; then at=$(tp $((65536 + 196608 * k)) 0); else at=$(tp $((262144 + 196608 * k)) $k); fi
          lock=" tpos $at" unlock=" ticket $((k + 1)) tpos $at"
        fi
        echo "0 $p lock comm $((B + 2 * r + o))$lock"
        echo "0 $((p + 65536)) get 4b from $o at 0x5000 addr $((0x100 + 8 * k)) comm $((B + 2 * r + o)) wait"
        echo "0 $((p + 131072)) unlock comm $((B + 2 * r + o))$unlock"
      done
      echo "0 655360 barrier"
      printf 'end 0\nfinalized\n'
    } >"$1/rank-$r.part"
  done
}
# without `tpos`, the second epochs sit at the closing barrier, after the target's own
# blocking fetches, so each rank's second fetch waits for the other's: a dependency cycle.
# `cdag record` merges again without the epochs and says so.
fetch_parts cyc 0

# the same fetches with where each target was when its origin read it (`tpos`, record.h:
# position << 2 | 0 between calls, | 1 in a call that has taken no position): rank 0's two
# epochs while rank 1 is after its barrier, then after its first epoch; rank 1's while rank 0
# is after its first epoch, then entering the closing barrier (a call that waits: its fence
# goes before it). Placed where the run had them, the fences make no cycle.
fetch_parts tpos 1

# two origins' exclusive epochs on the same bytes of rank 0, which sends to rank 1 meanwhile:
# rank 2 asks for the lock while rank 0 is after its barrier, but MPI grants it second
# (ticket 2), after rank 1's epoch, which ends while rank 0 is in its send. Rank 2's opening
# moves to where rank 1's epoch closes, past the send: its accesses ran after that.
mkdir -p order
{
  printf 'cdag-record-part 1\nrank 0 nprocs 3\nphase 0\n'
  echo "0 65536 barrier"
  echo "0 131072 send 4b to 1 tag 5 comm 0 addr 0x400 wait"
  echo "0 196608 barrier"
  printf 'end 0\nfinalized\n'
} >order/rank-0.part
for r in 1 2; do
  {
    printf 'cdag-record-part 1\nrank %d nprocs 3\ncomm %d 2 %d 0\nphase 0\n' $r "$(c $r 0)" $r
    echo "0 65536 barrier"
    echo "0 131072 lock comm $(c $r 0) tpos $(tp 65536 0)"
    echo "0 196608 put 8b to 0 at 0x5000 addr 0x100 comm $(c $r 0)"
    if [ $r = 1 ]; then
      echo "0 262144 unlock comm $(c $r 0) ticket 1 tpos $(tp 131072 2)"
      echo "0 327680 recv 4b from 0 tag 5 comm 0 addr 0x400 wait"
    else
      echo "0 262144 unlock comm $(c $r 0) ticket 2 tpos $(tp 131072 0)"
    fi
    echo "0 393216 barrier"
    printf 'end 0\nfinalized\n'
  } >order/rank-$r.part
done

# the same under shared locks: both may have held the lock at once, so their tickets order
# nothing, and the epochs are left out
mkdir -p shared
for r in 0 1 2; do sed -E 's/(lock comm [0-9]+)/\1 shared/' order/rank-$r.part >shared/rank-$r.part; done

# the same bytes of rank 0 under shared locks that the recorder cut into pieces (`seen`: the
# ticket counter a lock saw; a flush's ticket): rank 1 puts and flushes (ticket 1), then tells
# rank 2, which flushes (ticket 2) before its put, as the recorder does before an access that
# follows a message. Rank 0 is in its last barrier all along. Rank 2's piece opens after
# ticket 1: the pieces are ordered, nothing is left out. Without rank 2's flush its piece
# runs from its lock (which saw 0) and may have run at once with rank 1's: left out.
shared_parts() {   # DIR REOPEN(0|1)
  mkdir -p "$1"
  {
    printf 'cdag-record-part 1\nrank 0 nprocs 3\nphase 0\n'
    echo "0 65536 barrier"
    echo "0 131072 barrier"
    printf 'end 0\nfinalized\n'
  } >"$1"/rank-0.part
  local in=$(tp 131072 2)
  {
    printf 'cdag-record-part 1\nrank 1 nprocs 3\ncomm %d 2 1 0\nphase 0\n' "$(c 1 0)"
    echo "0 65536 barrier"
    echo "0 131072 lock comm $(c 1 0) shared seen 0 tpos $in"
    echo "0 196608 put 8b to 0 at 0x5000 addr 0x100 comm $(c 1 0)"
    echo "0 262144 flush comm $(c 1 0) ticket 1 tpos $in"
    echo "0 327680 send 4b to 2 tag 5 comm 0 addr 0x400 wait"
    echo "0 393216 unlock comm $(c 1 0) ticket 3 tpos $in"
    echo "0 458752 barrier"
    printf 'end 0\nfinalized\n'
  } >"$1"/rank-1.part
  {
    printf 'cdag-record-part 1\nrank 2 nprocs 3\ncomm %d 2 2 0\nphase 0\n' "$(c 2 0)"
    echo "0 65536 barrier"
    echo "0 131072 lock comm $(c 2 0) shared seen 0 tpos $in"
    echo "0 196608 recv 4b from 1 tag 5 comm 0 addr 0x400 wait"
    [ "$2" = 1 ] && echo "0 262144 flush comm $(c 2 0) ticket 2 tpos $in"
    echo "0 327680 put 8b to 0 at 0x5000 addr 0x200 comm $(c 2 0)"
    echo "0 393216 unlock comm $(c 2 0) ticket 4 tpos $in"
    echo "0 458752 barrier"
    printf 'end 0\nfinalized\n'
  } >"$1"/rank-2.part
}
shared_parts pieces 1
shared_parts atonce 0
# the same, rank 2's epoch reading other bytes of rank 0 too: only the racing puts are left
# out, the get stays (it commutes with rank 1's epoch)
shared_parts apart 0
sed -i 's/^0 327680 put \(.*\)/0 327680 put \1\n0 360448 get 8b from 0 at 0x6000 addr 0x300 comm '"$(c 2 0)"'/' apart/rank-2.part
# the same, rank 1 fetching and adding (Fetch_and_op: a get with wait, then an accumulate)
# where rank 2 adds: the get races with rank 2's accumulate; the two accumulates commute,
# but an atomic's two lines go together
shared_parts fetch 0
sed -i 's/^0 196608 put 8b to 0 at 0x5000 addr 0x100 \(comm [0-9]*\)/0 196608 get 8b from 0 at 0x5000 addr 0x100 \1 wait\n0 229376 accumulate 1 int64 sum to 0 at 0x5000 addr 0x108 \1/' fetch/rank-1.part
sed -i 's/^0 327680 put 8b to 0 at 0x5000 addr 0x200 \(comm [0-9]*\)/0 327680 accumulate 1 int64 sum to 0 at 0x5000 addr 0x200 \1/' fetch/rank-2.part

# rank 0's shared epoch on itself puts into bytes that rank 1's shared epoch puts into while
# rank 0 is in its put (a call that only sends: rank 1's fences go after it); rank 0's put
# lands at its own unlock, after them: the two may have run at once, both are left out
mkdir -p self
{
  printf 'cdag-record-part 1\nrank 0 nprocs 2\ncomm %d 1 0\nphase 0\n' "$B"
  echo "0 65536 barrier"
  echo "0 131072 lock comm $B shared"
  echo "0 196608 put 8b to 0 at 0x5000 addr 0x100 comm $B"
  echo "0 262144 unlock comm $B ticket 2"
  echo "0 327680 barrier"
  printf 'end 0\nfinalized\n'
} >self/rank-0.part
{
  printf 'cdag-record-part 1\nrank 1 nprocs 2\ncomm %d 2 1 0\nphase 0\n' $((B + 2))
  echo "0 65536 barrier"
  echo "0 131072 lock comm $((B + 2)) shared seen 0 tpos $(tp 196608 2)"
  echo "0 196608 put 8b to 0 at 0x5000 addr 0x200 comm $((B + 2))"
  echo "0 262144 unlock comm $((B + 2)) ticket 1 tpos $(tp 196608 2)"
  echo "0 327680 barrier"
  printf 'end 0\nfinalized\n'
} >self/rank-1.part

# two shared epochs putting into the same bytes of rank 0, and a third rank's exclusive epoch
# on other bytes of it: the shared ones are compared whole there, and their tickets, which
# order nothing under shared locks, do not order them either
mkdir -p coarse
{
  printf 'cdag-record-part 1\nrank 0 nprocs 4\nphase 0\n'
  echo "0 65536 barrier"
  echo "0 131072 barrier"
  printf 'end 0\nfinalized\n'
} >coarse/rank-0.part
for r in 1 2 3; do
  cc=$((B + 4 * r))
  {
    printf 'cdag-record-part 1\nrank %d nprocs 4\ncomm %d 2 %d 0\nphase 0\n' $r $cc $r
    echo "0 65536 barrier"
    if [ $r = 3 ]; then
      echo "0 131072 lock comm $cc tpos $(tp 131072 2)"
      echo "0 196608 put 8b to 0 at 0x7000 addr 0x100 comm $cc"
    else
      echo "0 131072 lock comm $cc shared seen 0 tpos $(tp 65536 0)"
      echo "0 196608 put 8b to 0 at 0x5000 addr 0x100 comm $cc"
    fi
    echo "0 262144 unlock comm $cc ticket $r tpos $(tp 131072 2)"
    echo "0 327680 barrier"
    printf 'end 0\nfinalized\n'
  } >coarse/rank-$r.part
done

# a target in its first call while its origin flushes 5,000 times under a shared lock: more
# fences than the positions before that call, which they share (fences with nothing between
# them commute); the epoch placed whole
mkdir -p full
{
  printf 'cdag-record-part 1\nrank 0 nprocs 2\nphase 0\n'
  echo "0 65536 barrier"
  printf 'end 0\nfinalized\n'
} >full/rank-0.part
{
  printf 'cdag-record-part 1\nrank 1 nprocs 2\ncomm %d 2 1 0\nphase 0\n' $((B + 2))
  in=$(tp 65536 2)
  echo "0 65536 lock comm $((B + 2)) shared seen 0 tpos $in"
  for k in $(seq 1 5000); do
    echo "0 $((65536 + 131072 * k)) put 8b to 0 at 0x5000 addr 0x100 comm $((B + 2))"
    echo "0 $((131072 + 131072 * k)) flush comm $((B + 2)) ticket $k tpos $in"
  done
  echo "0 $((65536 + 131072 * 5001)) unlock comm $((B + 2)) ticket 5001 tpos $in"
  echo "0 $((131072 + 131072 * 5001)) barrier"
  printf 'end 0\nfinalized\n'
} >full/rank-1.part

# two origins take turns in exclusive epochs on one int of a target that sits in its first
# call: 5,000 epochs, 10,000 fences in the 4,095 positions before that call, so fences share
# positions; they keep the tickets' order among them (rank 2's odd tickets, rank 1's even,
# the last one rank 1's), so the int ends as rank 1 put it last, not as the origin whose
# fences would come last if fences sharing a position were sorted some other way
mkdir -p full2
{
  printf 'cdag-record-part 1\nrank 0 nprocs 3\nphase 0\n'
  echo "0 65536 barrier"
  printf 'end 0\nfinalized\n'
} >full2/rank-0.part
for o in 1 2; do
  {
    printf 'cdag-record-part 1\nrank %d nprocs 3\ncomm %d 2 %d 0\nphase 0\n' $o "$(c $o 0)" $o
    in=$(tp 65536 2) cm=$(c $o 0)   # (a command substitution forks: none in the loop)
    for k in $(seq 1 2500); do
      t=$((2 * k - (o == 2 ? 1 : 0)))
      echo "0 $((196608 * k)) lock comm $cm tpos $in"
      echo "0 $((196608 * k + 65536)) put 8b to 0 at 0x5000 addr 0x$((100 * o)) comm $cm"
      echo "0 $((196608 * k + 131072)) unlock comm $cm ticket $t tpos $in"
    done
    echo "0 $((196608 * 2501)) barrier"
    printf 'end 0\nfinalized\n'
  } >full2/rank-$o.part
done

# rank 0's epoch on itself closes, and its unlock's completion adds a copy at the next
# position, into the bytes rank 1 reads; rank 1's epoch on them, granted after it (ticket 2),
# opens where rank 0's closes (OpenCoarrays' locks: MPI_Win_lock on the image that holds the
# lock variable, then every other image's): after the copy, the last op of the unlock's call.
# It was left out ("no position free") in about one recording of four, and placed between
# the unlock and the copy it raced with the copy
mkdir -p adjacent
{
  printf 'cdag-record-part 1\nrank 0 nprocs 2\ncomm %d 1 0\nphase 0\n' "$B"
  echo "0 65536 barrier"
  echo "0 131072 lock comm $B"
  echo "0 196608 get 4b from 0 at 0x5000 addr 0x100 comm $B wait"
  echo "0 262144 put 4b to 0 at 0x5000 addr 0x104 comm $B"
  echo "0 327680 unlock comm $B ticket 1"
  echo "0 327681 copy 4b from 0x100 to 0x5000"
  echo "0 393216 barrier"
  printf 'end 0\nfinalized\n'
} >adjacent/rank-0.part
{
  printf 'cdag-record-part 1\nrank 1 nprocs 2\ncomm %d 2 1 0\nphase 0\n' $((B + 2))
  echo "0 65536 barrier"
  echo "0 131072 lock comm $((B + 2)) tpos $(tp 65536 0)"
  echo "0 196608 get 4b from 0 at 0x5000 addr 0x100 comm $((B + 2)) wait"
  echo "0 262144 put 4b to 0 at 0x5000 addr 0x104 comm $((B + 2))"
  echo "0 327680 unlock comm $((B + 2)) ticket 2 tpos $(tp 327680 0)"
  echo "0 393216 barrier"
  printf 'end 0\nfinalized\n'
} >adjacent/rank-1.part
# rank 1's epoch on rank 0 opens where rank 0 was after its barrier's call, whose last op
# (a copy the recording added at +32767) is next to the first of the next call (a
# computation at -32768 of the barrier): the fences share the copy's position, after it
mkdir -p between
{
  printf 'cdag-record-part 1\nrank 0 nprocs 2\nphase 0\n'
  echo "0 65536 barrier"
  echo "0 98303 copy 4b from 0x100 to 0x200"
  echo "0 98304 compute 20000 reads all writes 8 at 0x300"
  echo "0 131072 barrier"
  printf 'end 0\nfinalized\n'
} >between/rank-0.part
{
  printf 'cdag-record-part 1\nrank 1 nprocs 2\ncomm %d 2 1 0\nphase 0\n' $((B + 2))
  echo "0 65536 barrier"
  echo "0 98304 lock comm $((B + 2)) tpos $(tp 65536 0)"
  echo "0 131072 put 4b to 0 at 0x5000 addr 0x104 comm $((B + 2))"
  echo "0 196608 unlock comm $((B + 2)) ticket 1 tpos $(tp 65536 0)"
  echo "0 262144 barrier"
  printf 'end 0\nfinalized\n'
} >between/rank-1.part

# rank 1 reads 8 bytes of rank 0 in two epochs, a barrier apart; each get says what it
# fetched (`got`, a hash). Rank 0 makes no call for them: bytes it computed in between would
# be, to the graph, the first read's. "computed": the two reads fetched different bytes and
# nothing recorded writes them, so rank 0 gets a computation of them just before the second
# read's fence; "same": the same bytes, none; "put": rank 1 put into them in between, none
# (the put explains them); "recv": rank 0 received into them in between, none; "reduce": rank
# 0 gave them to a reduction in between (a native call's input), none
reads_parts() {   # DIR HASH2 BETWEEN(none|put|recv|reduce)
  mkdir -p "$1"
  local at2=131072
  [ "$3" = recv ] || [ "$3" = reduce ] && at2=196608
  {
    printf 'cdag-record-part 1\nrank 0 nprocs 2\nphase 0\n'
    echo "0 65536 barrier"
    echo "0 131072 barrier"
    [ "$3" = recv ] && echo "0 196608 recv 8b from 1 tag 2 comm 0 addr 0x5000 wait"
    [ "$3" = reduce ] && echo "0 196608 reduce 2 int32 sum root 1 in 0x5000"
    echo "0 262144 barrier"
    printf 'end 0\nfinalized\n'
  } >"$1"/rank-0.part
  {
    printf 'cdag-record-part 1\nrank 1 nprocs 2\ncomm %d 2 1 0\nphase 0\n' $((B + 2))
    echo "0 65536 barrier"
    echo "0 131072 lock comm $((B + 2)) tpos $(tp 65536 0)"
    echo "0 196608 get 8b from 0 at 0x5000 addr 0x100 comm $((B + 2))"
    echo "0 262144 unlock comm $((B + 2)) ticket 1 tpos $(tp 65536 0)"
    echo "0 got 196608 111"
    [ "$3" = recv ] && echo "0 327680 send 8b to 0 tag 2 comm 0 addr 0x300 wait"
    echo "0 393216 barrier"
    [ "$3" = reduce ] && echo "0 458752 reduce 2 int32 sum root 1 in 0x300 out 0x310"
    if [ "$3" = put ]; then
      echo "0 458752 lock comm $((B + 2)) tpos $(tp $at2 0)"
      echo "0 524288 put 8b to 0 at 0x5000 addr 0x200 comm $((B + 2))"
      echo "0 589824 unlock comm $((B + 2)) ticket 2 tpos $(tp $at2 0)"
    fi
    echo "0 655360 lock comm $((B + 2)) tpos $(tp $at2 0)"
    echo "0 720896 get 8b from 0 at 0x5000 addr 0x108 comm $((B + 2))"
    echo "0 786432 unlock comm $((B + 2)) ticket 3 tpos $(tp $at2 0)"
    echo "0 got 720896 $2"
    echo "0 851968 barrier"
    printf 'end 0\nfinalized\n'
  } >"$1"/rank-1.part
}
reads_parts computed 222 none
reads_parts same 111 none
reads_parts put 222 put
reads_parts recv 222 recv
reads_parts reduce 222 reduce
mkdir -p badgot   # a `got` naming the position of a barrier
cp computed/rank-0.part badgot/
sed 's/^0 got 720896 222$/0 got 851968 222/' computed/rank-1.part >badgot/rank-1.part

# a phase that does not load for another reason (a message whose sizes disagree): the
# recording stays as it was, epochs placed, and its failure is said
mkdir -p other
{
  printf 'cdag-record-part 1\nrank 0 nprocs 2\ncomm %d 2 0 1\nphase 0\n' $((B + 1))
  echo "0 65536 barrier"
  echo "0 131072 lock comm $((B + 1))"
  echo "0 196608 put 8b to 1 at 0x5000 addr 0x100 comm $((B + 1))"
  echo "0 262144 unlock comm $((B + 1))"
  echo "0 327680 barrier"
  echo "0 393216 send 8b to 1 tag 3 comm 0 addr 0x200 wait"
  printf 'end 0\nfinalized\n'
} >other/rank-0.part
{
  printf 'cdag-record-part 1\nrank 1 nprocs 2\nphase 0\n'
  echo "0 65536 barrier"
  echo "0 131072 barrier"
  echo "0 196608 recv 4b from 0 tag 3 comm 0 addr 0x200 wait"
  printf 'end 0\nfinalized\n'
} >other/rank-1.part

# rank 1's epoch on rank 0 read rank 0 in a call after its barrier that took no position
# (ENTERED: its fence before rank 0's receive, which waits for another), then, at the flush
# and unlock, out of that call at the same position (OUT: after the barrier, the same gap, an
# earlier key). The later reads stay with the lock's fence (they were left out: "ordered
# otherwise", MPICH's rma/fetch_and_op_* with the tickets in shared memory)
mkdir -p gap
{
  printf 'cdag-record-part 1\nrank 0 nprocs 3\nphase 0\n'
  echo "0 65536 barrier"
  echo "0 131072 recv 4b from 1 tag 5 comm 0 addr 0x400 wait"
  printf 'end 0\nfinalized\n'
} >gap/rank-0.part
{
  printf 'cdag-record-part 1\nrank 1 nprocs 3\ncomm %d 2 1 0\nphase 0\n' "$(c 1 0)"
  echo "0 65536 barrier"
  echo "0 131072 lock comm $(c 1 0) tpos $(tp 65536 1)"
  echo "0 196608 put 8b to 0 at 0x5000 addr 0x100 comm $(c 1 0)"
  echo "0 262144 flush comm $(c 1 0) tpos $(tp 65536 0)"
  echo "0 327680 unlock comm $(c 1 0) ticket 1 tpos $(tp 65536 0)"
  echo "0 393216 send 4b to 0 tag 5 comm 0 addr 0x400"
  printf 'end 0\nfinalized\n'
} >gap/rank-1.part
{
  printf 'cdag-record-part 1\nrank 2 nprocs 3\nphase 0\n'
  echo "0 65536 barrier"
  printf 'end 0\nfinalized\n'
} >gap/rank-2.part

# a fence epoch in which rank 1 gets and rank 2 puts the same bytes of rank 0 (MPICH's
# rma/atomic_get_*: MPI decides their order): the put stays, the get's bytes are from outside
# the phase (compute 0 writes), counted "unordered"; their disjoint accesses and accumulates
# of one type and op on the same bytes stay. Lines of blocks count block by block: two
# origins' interleaved columns stay, a put onto a block past the line's first S bytes races
# with the other's put, both left out, counted
mkdir -p fence
for r in 0 1 2; do
  {
    printf 'cdag-record-part 1\nrank %d nprocs 3\ncomm 5 3 0 1 2\nphase 0\n' "$r"
    echo "0 65536 fence comm 5"
    case $r in
      1) echo "0 131072 get 8b from 0 at 0x5000 addr 0x100 comm 5"
         echo "0 196608 get 8b from 0 at 0x6000 addr 0x108 comm 5"
         echo "0 262144 accumulate 1 int64 sum to 0 at 0x8000 addr 0x110 comm 5"
         echo "0 270000 put 16b to 0 at 0xa000 addr 0x400 blocks 4 stride 8 comm 5"
         echo "0 270001 put 16b to 0 at 0xb000 addr 0x410 blocks 2 stride 64 comm 5" ;;
      2) echo "0 131072 put 8b to 0 at 0x5000 addr 0x200 comm 5"
         echo "0 196608 put 8b to 0 at 0x7000 addr 0x208 comm 5"
         echo "0 262144 accumulate 1 int64 sum to 0 at 0x8000 addr 0x210 comm 5"
         echo "0 270000 put 16b to 0 at 0xa004 addr 0x400 blocks 4 stride 8 comm 5"
         echo "0 270001 put 8b to 0 at 0xb040 addr 0x410 comm 5" ;;
    esac
    if [ "$r" != 0 ]; then   # a histogram's 80 sums on one word: past the pairwise check
      for k in $(seq 1 40); do echo "0 $((262144 + 1024 * k)) accumulate 1 int64 sum to 0 at 0x9000 addr 0x300 comm 5"; done
    fi
    echo "0 327680 fence comm 5"
    printf 'end 0\nfinalized\n'
  } >fence/rank-$r.part
done

# every pair of 64 processes declares its communicator of each of the 62 window slots (a
# window per iteration): 249,984 declarations, merged in 0.12 s (1.2 s under the sanitizers;
# the merger once compared each declaration with every communicator numbered before it: 25 s).
# 10 s: a loaded machine slowed the sanitizers' merge past 5 s once
python3 - <<'PY'
import os
P, EXTRA = 64, (1 << 30) + (1 << 29)
os.makedirs("slots", exist_ok=True)
for r in range(P):
    with open(f"slots/rank-{r}.part", "w") as f:
        f.write(f"cdag-record-part 1\nrank {r} nprocs {P}\nphase 0\n")
        for k in range(62):
            for t in range(P):
                if t != r:
                    cid = 805306368 + r * P + t if k == 0 else EXTRA + ((k - 1) * P + r) * P + t
                    f.write(f"comm {cid} 2 {r} {t}\n")
        f.write("0 65536 barrier\nend 0\nfinalized\n")
PY
timeout 10 "$cdag" record --merge slots >slots.out 2>&1 || fail "64 processes' 62 slots of communicators: $(tail -2 slots.out)"
grep -q "recorded 64 processes: 1 phase" slots.out || fail "64 processes' slots: $(tail -2 slots.out)"

cases <<'T'
0 cdag record --merge gap
0 cat gap/index.json
  out "unsupported": {}
  out "check": {"ok": true
0 cat gap/phase-0000.cdag
  count 6 ^fence comm
0 cdag record --merge fence
0 cat fence/index.json
  out "unsupported": {"MPI_Put": 2}
  out "unordered": {"MPI_Get": 1}
  out "MPI_Put: another origin's access to the same bytes of its target in the same fence epoch, in an order MPI decided": 2
  out "check": {"ok": true
0 cat fence/phase-0000.cdag
  count 1 ^get 8b from 0 at 0x6000
  count 1 ^put 8b to 0 at 0x7000
  count 82 ^accumulate
  count 1 at 0x5000
  count 1 ^put 8b to 0 at 0x5000 addr 0x200
  count 1 ^compute 0 writes 8 at 0x100$
  count 2 ^put 16b to 0 at 0xa00[04] addr 0x400 blocks 4 stride 8
  count 0 at 0xb0
0 cdag record --merge adjacent
0 cat adjacent/index.json
  out "unsupported": {}
  out "check": {"ok": true
0 sed -n '/^rank 0/,/^}/p' adjacent/phase-0000.cdag | tr '\n' '|'
  out |put 4b to 0 at 0x5000 addr 0x104 comm 1|fence comm 1|copy 4b from 0x100 to 0x5000|fence comm 2|fence comm 2|barrier|
0 cdag record --merge between
0 cat between/index.json
  out "unsupported": {}
  out "check": {"ok": true
0 sed -n '/^rank 0/,/^}/p' between/phase-0000.cdag | tr '\n' '|'
  out |barrier|copy 4b from 0x100 to 0x200|fence comm 1|fence comm 1|compute 20000 reads all writes 8 at 0x300|barrier|
0 cdag record --merge computed
  out bytes a target computed between two passive-target reads of them (computations added there): 1
0 cat computed/index.json
  out "target_computes": 1,
  out "unsupported": {}
  out "check": {"ok": true
0 sed -n '/^rank 0/,/^}/p' computed/phase-0000.cdag | tr '\n' '|'
  out |barrier|fence comm 1|fence comm 1|barrier|compute 0 reads all writes 8 at 0x5000|fence comm 1|fence comm 1|barrier|
0 cdag verify computed/phase-0000.cdag
0 cdag record --merge same
  out! bytes a target computed
0 cat same/index.json
  out "target_computes": 0,
0 cdag record --merge put
0 cat put/index.json
  out "target_computes": 0,
  out "check": {"ok": true
0 cdag record --merge recv
0 cat recv/index.json
  out "target_computes": 0,
  out "check": {"ok": true
0 cdag record --merge reduce
0 cat reduce/index.json
  out "target_computes": 0,
  out "unsupported": {}
  out "check": {"ok": true
1 cdag record --merge badgot
  err got 851968: not the position of a get of its phase told once
1 cdag record --merge other
  err does not load
0 grep -c '^fence comm' other/phase-0000.cdag
  out 4
0 cat other/index.json
  out "unsupported": {}
0 cdag record --merge cyc
  err merged again without them
  err would deadlock
0 cat cyc/index.json
  out "unsupported": {"MPI_Get": 4}
  out "MPI_Get: with its target's fences the phase did not load (a dependency cycle or a race: cdag record said which)": 4
  out "check": {"ok": true
0 cdag record --merge tpos 2>&1
  out! merged again
0 cat tpos/index.json
  out "unsupported": {}
  out "check": {"ok": true
0 cat tpos/phase-0000.cdag
  count 16 ^fence comm
0 cdag record --merge order 2>&1
  out! merged again
0 cat order/index.json
  out "unsupported": {}
  out "check": {"ok": true
0 cdag record --merge shared
0 cat shared/index.json
  out "MPI_Put: another origin's epoch on its target touches the same bytes, in an order the lock decides": 2
0 cdag record --merge pieces 2>&1
  out! merged again
0 cat pieces/index.json
  out "unsupported": {}
  out "check": {"ok": true
0 cdag record --merge atonce
0 cat atonce/index.json
  out "MPI_Put: another origin's access to the same bytes of its target may have run at the same time, both under shared locks, in an order MPI decided": 2
0 cdag record --merge apart
0 cat apart/index.json
  out "unsupported": {"MPI_Put": 2}
  out "check": {"ok": true
0 cat apart/phase-0000.cdag
  count 1 ^get
  count 0 ^put
0 cdag record --merge fetch
0 cat fetch/index.json
  out "MPI_Accumulate": 2
  out "MPI_Get": 1
  out "check": {"ok": true
0 cat fetch/phase-0000.cdag
  count 0 ^get
  count 0 ^accumulate
0 cdag record --merge self
0 cat self/index.json
  out "unsupported": {"MPI_Put": 2}
0 cdag record --merge coarse
0 cat coarse/index.json
  out "unsupported": {"MPI_Put": 2}
  out "MPI_Put: another origin's epoch on its target touches the same bytes, in an order the lock decides": 2
0 cdag record --merge full
0 cat full/index.json
  out "unsupported": {}
  out "check": {"ok": true
0 cat full/phase-0000.cdag
  count 10004 ^fence comm
  count 5000 ^put
0 cdag record --merge full2
0 cat full2/index.json
  out "unsupported": {}
  out "check": {"ok": true
0 cdag sst full2/phase-0000.cdag
  out 0x5000 <- rank 1 0x100 (8 B)
# the target's fences: each epoch's two in a row, the origins in turn
0 awk '/^rank 0 \{/ { on = 1; next } /^\}/ { on = 0 } on && /^fence/ { n++; c[n] = $3 } END { for (i = 1; i < n; i += 2) if (c[i] != c[i + 1] || (i > 1 && c[i] == c[i - 1])) bad++; print n " fences, " bad + 0 " out of turn" }' full2/phase-0000.cdag
  out 10000 fences, 0 out of turn
0 cdag record --merge --flat run
  out recorded 3 processes: 1 phase
0 cdag check run/phase-0000.cdag
  out ok: 3 ranks
# the two placed epochs' fences: origin and target, two each; Win_free is not written
0 cat run/phase-0000.cdag
  count 8 ^fence comm
  count 2 ^put
  out!~ winfree|lock comm
0 cat run/index.json
  out "unsupported": {"MPI_Put": 3}
  out "MPI_Put: the rooted collective that orders the epoch does not order it at its target": 1
  out "MPI_Put: the epoch is ordered at its target by messages or calls other than a collective of both": 1
  out "MPI_Put: its epoch is not closed in the phase": 1
1 cdag record --merge bad
  err rank-1.part:8: a passive-target epoch of communicator 805306370, which is not one of rank 1's
T
# rank 1's fences of the epoch from 0: after its barrier, before its bcast; of the epoch
# from 2: after its barrier, before nothing else (Win_free is where the closing goes)
awk '/^rank 1 /,/^}/' run/phase-0000.cdag | grep -v compute | tr '\n' '|' >r1
grep -q '^rank 1 {|barrier|fence comm [0-9]*|fence comm [0-9]*|bcast' r1 || fail "rank 1: $(cat r1)"
grep -q '|barrier|fence comm [0-9]*|fence comm [0-9]*|}|$' r1 || fail "rank 1: $(cat r1)"
finish
