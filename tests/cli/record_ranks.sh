#!/usr/bin/env bash
# cdag tests — tests/cli/record_ranks.sh CDAG SOURCE_DIR: the ranks of a stored phase folded
# where they differ only by rank-relative peers (docs/recording.md, Ranks stored once), on
# part files written here (no MPI).
#
# Sixteen ranks on a ring, twenty iterations: each computes 8 bytes (a cost of its own), sends
# them to the next rank and receives from the one before into a history slot 8 bytes further
# each iteration, its buffers at an address of its own (its heap at 0x10000 * (R + 1), its
# stack at 0x7f0000 - 0x100 * R). Rank 5 sends a second message to rank 6 each iteration,
# so ranks 5 and 6 differ from the others by more than their peers. The stored iteration
# (phase 2, 19 repeats) holds ranks 0, 5 and 6 in full and one line per other rank; `--expand` gives back exactly
# the flat recording; check, analyze and model read the folded file as the graph it stands
# for. A folded line whose model is not written in full, whose ranges are out of order, or
# that changes a token the model has not, is a clear error. Fewer than 16 ranks, or
# --no-fold-ranks: not folded. Folding is the default.
set -u
cdag=$1
src=$2
. "$src/tests/cli/lib/expect.sh"
cd "$tmp" || exit 1

# parts DIR NP: the recording of the ring
parts() {
  local dir=$1 np=$2
  mkdir -p "$dir"
  for ((r = 0; r < np; r++)); do
    local next=$(((r + 1) % np)) prev=$(((r + np - 1) % np)) heap=$((0x10000 * (r + 1))) stack=$((0x7f0000 - 0x100 * r))
    {
      printf 'cdag-record-part 1\nrank %d nprocs %d\nphase 0\n' $r $np
      printf '0 65536 send 8b to %d tag 5 comm 0 addr 0x%x wait\n' $next $stack
      printf '0 131072 recv 8b from %d tag 5 comm 0 addr 0x%x wait\n' $prev $stack
      for ((i = 0; i < 20; i++)); do
        local k=$((4 * i + 4))
        printf '0 %d compute %d reads all writes 8b at 0x%x\n' $((k * 65536 - 1)) $((1000 + 37 * r + i)) $heap
        printf '0 %d send 8b to %d tag 0 comm 0 addr 0x%x wait\n' $((k * 65536)) $next $heap
        printf '0 %d recv 8b from %d tag 0 comm 0 addr 0x%x wait\n' $(((k + 1) * 65536)) $prev $((heap + 0x100 + 8 * i))
        [ $r != 5 ] || printf '0 %d send 16b to 6 tag 1 comm 0 addr 0x%x wait\n' $(((k + 2) * 65536)) $stack
        [ $r != 6 ] || printf '0 %d recv 16b from 5 tag 1 comm 0 addr 0x%x wait\n' $(((k + 2) * 65536)) $((stack - 0x40))
      done
      printf 'end 0\nfinalized\n'
    } >"$dir/rank-$r.part"
  done
}
parts ring 16
parts flat 16
parts few 15
parts plain 16
cases <<'T'
0 cdag record --merge ring
  out recorded 16 processes: 4 phases
  out the run is 22 phases, repeats of these 4
0 cat ring/phase-0002.cdag
  count 3 ^rank [0-9]+ \{$
  count 13 ^rank [0-9]+ like
  out rank 0 {
  out rank 5 {
  out rank 6 {
  out rank 1 like 0 a 0x10000 0x10108 65536 t 0 37
  out rank 7 like 0 a 0x10000 0x10108 458752 t 0 259
  out rank 15 like 0 a 0x10000 0x10108 983040 t 0 555
# before the loop, the stack's buffers: a range of their own
0 cat ring/phase-0000.cdag
  out rank 3 like 0 a 0x7f0000 0x7f0000 -768
0 cdag record --merge --flat flat
  out recorded 16 processes: 22 phases
0 cdag record --expand ring -o expanded
  out expanded ring: 22 phases in expanded/
0 diff -r -x index.json -x 'rank-*' flat expanded
  empty
# every command reads a folded file as the graph it stands for
0 cdag check ring/phase-0002.cdag
  out ok: 16 ranks, 50 ops (17 send, 17 recv, 0 reduce, 0 copy, 16 calc)
0 diff <(cdag model ring/phase-0002.cdag) <(cdag model flat/phase-0002.cdag)
  empty
0 cdag analyze ring
  out recording ring: 22 phases, 4 distinct; the run as phase x repeats: 0x1 1x1 2x19 3x1
# --no-fold-ranks: every rank in full, for programs that read phase files as text
0 cdag record --merge --no-fold-ranks plain
  out recorded 16 processes: 4 phases
!0 grep -c like plain/phase-0002.cdag
  out 0
# fewer than 16 ranks: every rank in full
0 cdag record --merge --fold-ranks few
  out recorded 15 processes: 4 phases
!0 grep -c like few/phase-0002.cdag
  out 0
T
sed -i 's/^rank 7 like 0 /rank 7 like 8 /' ring/phase-0002.cdag
cases <<'T'
1 cdag check ring/phase-0002.cdag
  err line 24: `rank R like M` of no rank written in full before it
T
sed -i 's/^rank 7 like 8 a 0x10000 0x10108 458752/rank 7 like 0 a 0x10000 0x10108 458752 a 0x10000 0x10000 1/' ring/phase-0002.cdag
cases <<'T'
1 cdag record --expand ring -o x
  err not ` a LO HI D` ranges in order, then ` t T D` tokens in order
T
sed -i 's/^rank 7 like 0 a 0x10000 0x10108 458752 a 0x10000 0x10000 1 t 0 259/rank 7 like 0 t 0 259 t 99 1/' ring/phase-0002.cdag
cases <<'T'
1 cdag check ring/phase-0002.cdag
  err `rank 7 like 0` changes token 99, of 7
T
finish
