#!/usr/bin/env bash
# cdag tests — tests/cli/record_phases.sh CDAG SOURCE_DIR: phases found without MPI_Pcontrol,
# each distinct phase stored once, the flat recording expanded back (docs/recording.md,
# Phases), on part files written here (no MPI).
#
# Two ranks: a first message (tag 5), then ITER iterations of a ping-pong whose reply lands
# 8 bytes further each time (a history buffer) and, now and then, 15 us of computation
# before the ping (a time-only computation: no structure). The run is cut at each
# iteration, the iterations are stored once, the moving address is a shift of the index,
# the computations are the index's times; `--expand` writes exactly what `--merge --flat`
# writes. Phases the program declared (MPI_Pcontrol) are kept as they are, and two equal ones
# stored once. A part the recorder folded merges as the part it folds. An index of version 1
# (tags fixed) expands as it did. Expanding a flat recording, or one whose index is damaged
# or of a version to come, and a bad fold line are clear errors.
set -u
cdag=$1
src=$2
. "$src/tests/cli/lib/expect.sh"
cd "$tmp" || exit 1

# parts DIR ITER [pcontrol]: the recording of the ping-pong; with pcontrol, each iteration is
# a phase the program declared.
parts() {
  local dir=$1 iter=$2 pc=${3:-}
  mkdir -p "$dir"
  for r in 0 1; do
    {
      printf 'cdag-record-part 1\nrank %d nprocs 2\nphase 0\n' $r
      [ -n "$pc" ] || { [ $r = 0 ] && echo "0 65536 send 8b to 1 tag 5 comm 0 addr 0x900 wait" || echo "0 65536 recv 8b from 0 tag 5 comm 0 addr 0x900 wait"; }
      for ((i = 0; i < iter; i++)); do
        local k=$((2 * i + 2)) p=0
        if [ -n "$pc" ]; then p=$i; [ $i = 0 ] || printf 'end %d\nphase %d\n' $((i - 1)) $i; fi
        [ $((i % 7)) != 3 ] || echo "$p $((k * 65536 - 32768)) compute $((15000 + i)) reads all"
        if [ $r = 0 ]; then
          echo "$p $((k * 65536)) send 8b to 1 tag 0 comm 0 addr 0x1000 wait"
          printf '%d %d recv 8b from 1 tag 1 comm 0 addr 0x%x wait\n' $p $(((k + 1) * 65536)) $((0x2000 + 8 * i))
        else
          echo "$p $((k * 65536)) recv 8b from 0 tag 0 comm 0 addr 0x1000 wait"
          echo "$p $(((k + 1) * 65536)) send 8b to 0 tag 1 comm 0 addr 0x3000 wait"
        fi
      done
      printf 'end %d\nfinalized\n' $p
    } >"$dir/rank-$r.part"
  done
}
parts found 20
# rank 1 as the recorder folds it (src/record/fold.c): iteration 1 written, iterations 2 to 19
# one `fold` line of it (positions 2 * 65536 further each), their time-only computations kept
mkdir -p folded
cp found/rank-0.part folded/
{
  printf 'cdag-record-part 1\nrank 1 nprocs 2\nphase 0\n0 65536 recv 8b from 0 tag 5 comm 0 addr 0x900 wait\n'
  for i in 0 1; do
    k=$((2 * i + 2))
    echo "0 $((k * 65536)) recv 8b from 0 tag 0 comm 0 addr 0x1000 wait"
    echo "0 $(((k + 1) * 65536)) send 8b to 0 tag 1 comm 0 addr 0x3000 wait"
  done
} >folded/rank-1.part
off2=$(wc -c <folded/rank-1.part)
off1=$((off2 - $(tail -n 2 folded/rank-1.part | wc -c)))
{
  echo "0 fold $off1 $off2 131072 00000000000000000018"
  for i in 3 10 17; do echo "0 $(((2 * i + 2) * 65536 - 32768)) compute $((15000 + i)) reads all"; done
  printf 'end 0\nfinalized\n'
} >>folded/rank-1.part
parts flat 20
parts declared 6 pcontrol
parts few 3
mkdir found2
cases <<'T'
0 cdag record --merge found
  out recorded 2 processes: 2 phases, 88 operations, 6 computations
  out the run is 21 phases, repeats of these 2
  out found/phase-0001.cdag
  out! found/phase-0002.cdag
0 cdag record --merge --flat flat
  out recorded 2 processes: 21 phases, 88 operations
  out flat/phase-0020.cdag
# merged again after the flat merge: the flat files beyond the distinct ones go
0 cp flat/rank-0.part flat/rank-1.part found2/ && cdag record --merge --flat found2 >/dev/null && cdag record --merge found2 >/dev/null && ls found2
  out phase-0001.cdag
  out! phase-0002.cdag
# a folded part merges as the part it folds
0 cdag record --merge --flat folded >/dev/null && diff -r -x index.json -x 'rank-*' flat folded
  empty
0 cdag record --expand found -o expanded
  out expanded found: 21 phases in expanded/
0 diff -r -x index.json -x 'rank-*' flat expanded
  empty
# the sequence: the first message, then the iteration 20 times; its reply's address a shift
0 cat found/index.json
  out "flat_phases": 21,
  out {"phase": 0, "repeats": 1}
  out {"phase": 1, "repeats": 20, "shift": [[4, 4, 0, 8]], "times": [[3, 2, 15003], [3, 6, 15003], [10, 2, 15010], [10, 6, 15010], [17, 2, 15017], [17, 6, 15017]]}
  out "ops": 4, "computes": 0, "compute_ns": 0, "repeats": 20, "total": {"ops": 86, "computes": 6, "compute_ns": 90060}
# a run of three iterations is kept whole
0 cdag record --merge few
  out recorded 2 processes: 1 phase,
  out! the run is
# declared phases stay: six, stored once
0 cdag record --merge declared
  out recorded 2 processes: 1 phase, 26 operations
  out the run is 6 phases, repeats of these 1
0 cdag analyze found
  out recording found: 21 phases, 2 distinct; the run as phase x repeats: 0x1 1x20
  out == phase 1 (phase-0001.cdag), 20 repeats ==
  out~ ^  phase 1 x 20: [0-9.]+ us as written each, [0-9.]+ % of the run's modelled time; 0.090 ms recorded computation in all \(100.0 %\)
1 cdag record --expand flat -o x
  err no "sequence": a recording of an older cdag record, flat already
2 cdag record --expand
  err usage: cdag record
T
# an index of version 1 numbers no tag (nor a single digit): its reply's address is token 3
mkdir v1 && cp found/phase-*.cdag v1/
sed 's/"cdag_recording": 2/"cdag_recording": 1/; s/"shift": \[\[4, 4, 0, 8\]\]/"shift": [[3, 3, 0, 8]]/' found/index.json >v1/index.json
sed 's/"cdag_recording": 2/"cdag_recording": 3/' found/index.json >found/i && mv found/i found/index.json
cases <<'T'
0 grep -c '"cdag_recording": 1, .*\|"shift": \[\[3, 3, 0, 8\]\]' v1/index.json
  out 2
0 cdag record --expand v1 -o expanded1 >/dev/null && diff -r -x index.json -x 'rank-*' flat expanded1
  empty
1 cdag record --expand found -o x
  err "cdag_recording" is not a version this cdag reads (1 to 2)
T
sed 's/"cdag_recording": 3/"cdag_recording": 2/' found/index.json >found/i && mv found/i found/index.json
sed 's/"repeats": 20, "shift"/"repeats": 2, "shift"/' found/index.json >found/i && mv found/i found/index.json
cases <<'T'
1 cdag record --expand found -o x
  err times past its repeats or lines
T
# a fold whose template is not before it, or that repeats nothing
sed 's/^0 fold [0-9]* /0 fold 999999 /' folded/rank-1.part >folded/r && mv folded/r folded/rank-1.part
cases <<'T'
1 cdag record --merge folded
  err rank-1.part:9: fold 999999
T
# merged again, a recording keeps the command its index names (escapes decoded)
mkdir again && cp flat/rank-*.part again/ && cdag record --merge again >/dev/null
sed 's|"command": null|"command": "mpiexec -n 2 ./a \\"b c\\" \\\\d"|' again/index.json >again/i && mv again/i again/index.json
cases <<'T'
0 cdag record --merge again >/dev/null && grep '"command"' again/index.json
  out "command": "mpiexec -n 2 ./a \"b c\" \\d",
0 head -n 1 again/phase-0000.cdag
  out // recorded by cdag record: phase 0 of 2 processes running: mpiexec -n 2 ./a "b c" \d
0 cdag record --merge --flat again >/dev/null && head -n 1 again/phase-0003.cdag
  out running: mpiexec -n 2 ./a "b c" \d
T
sed 's/"repeats": 2, "shift"/"repeats": 0, "shift"/' found/index.json >found/i && mv found/i found/index.json
cases <<'T'
1 cdag record --expand found -o x
  err sequence entry 1: no phase of the index, or no repeats
1 cdag analyze found
  err sequence entry 1: no phase of the index, or no repeats
T
finish
