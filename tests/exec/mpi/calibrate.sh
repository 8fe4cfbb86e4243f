#!/usr/bin/env bash
# cdag tests — tests/exec/mpi/calibrate.sh CDAG SOURCE_DIR MPIEXEC: `cdag calibrate` under mpiexec.
#
# At 2 processes, --quick (a fraction of a second): the machine file it writes loads (cdag
# analyze names it as the price's source; cdag model uses it), its parameters are positive and
# sane (L, G, copy, o, g below bounds no MPI on one node exceeds; S a byte count; queue; a
# table of 16 sizes rising, its times positive; cdag model names them), its comments
# carry the date and the MPI library; cdag_compile (through cdag replay) prices with it; CDAG_MACHINE is where it writes without -o, the default
# path under XDG_CONFIG_HOME without either. Errors: one process, CDAG_MACHINE=none without -o,
# bad arguments: one message from rank 0, exit 1 (2 for usage) on every rank. Every mpiexec
# runs under `timeout`, so a hang fails the test instead of stopping the suite.
set -u
cdag=$1
src=$2
mpiexec=$3
. "$src/tests/cli/lib/expect.sh"
ex=$src/examples/graphs
unset CDAG_ALPHA CDAG_BETA CDAG_OVERHEAD CDAG_GAMMA
mpi() { timeout 60 "$mpiexec" "$@"; }

cases <<T
0 mpi -n 2 "$cdag" calibrate --quick -o "$tmp/m"
  out calibrate: 2 processes, ranks 0 and 1 measured
  out~ ^L [0-9.e+-]+ us, o [0-9.e+-]+ us, g [0-9.e+-]+ us, G [0-9.e+-]+ us/B, O [0-9.e+-]+ us/B, S [0-9]+ B
  out~ ^queue [0-9.e+-]+ us
  out~ ^rcopy [0-9.e+-]+ us/B
  out~ ^ +1048576 B +[0-9.]+ us +[0-9.]+ us$
  out~ ^a stream of 16 exchanges of 8 B: [0-9.]+ us at the start of the table, [0-9.]+ us at its end$
  out written: $tmp/m
  count 1 ^written:
0 CDAG_MACHINE="$tmp/m" cdag analyze "$ex/halo1d8.cdag"
  out~ ^price \(LogGOPS .*; machine file $tmp/m\): plan
0 CDAG_MACHINE="$tmp/m" cdag model "$ex/halo1d8.cdag"
  out~ ^LogGOPS: .* queue=[0-9.e+-]+ us, costs of 16 sizes, p=8 \(machine file $tmp/m\)$
# cdag_compile reads it too (once per process): the compiled schedule's report names it
0 CDAG_MACHINE="$tmp/m" mpi -n 2 "$cdag" replay --iterations 2 --repeat 1 "$ex/shapes/halo2d_p2.cdag"
  out~ ^price \(LogGOPS .*; machine file $tmp/m\): plan
T
# the values: positive where they must be, and below what one node's MPI takes; a machine
# whose cores other jobs keep busy can stall a --quick run's few messages for hundreds of
# microseconds, so an implausible file is measured again, up to twice, before it fails
plausible() {
  awk '
    /^#/ || NR == 1 { next }
    $1 == "L" { ok += ($2 >= 0 && $2 < 50) }
    $1 == "o" || $1 == "g" { ok += ($2 > 0 && $2 < 50) }
    $1 == "G" { ok += ($2 > 0 && $2 < 0.1); G = $2 }
    $1 == "O" { ok += ($2 >= 0); O = $2 }
    $1 == "S" { ok += ($2 ~ /^[0-9]+$/) }
    $1 == "copy" { ok += ($2 > 0 && $2 < 0.1); C = $2 }
    $1 == "queue" { ok += ($2 >= 0 && $2 < 1) }
    $1 == "rcopy" { ok += ($2 > 0 && $2 < 0.1); R = $2 }
    $1 == "size" { n++; bad += !($2 > last && $3 >= 0 && $3 < 1e4 && $4 > 0 && $4 < 1e4); last = $2 }
    END { exit ok == 9 && O <= G && n == 16 && !bad && R >= C ? 0 : 1 }' "$1"
}
for again in 1 2; do
  plausible "$tmp/m" && break
  echo "implausible parameters (a busy machine?), measured again: $(grep -v '^#' "$tmp/m" | tr '\n' ' ')"
  mpi -n 2 "$cdag" calibrate --quick -o "$tmp/m" >/dev/null
done
plausible "$tmp/m" || fail "implausible parameters: $(cat "$tmp/m")"
head -1 "$tmp/m" | grep -qx 'cdag-machine 1' || fail "no header: $(head -1 "$tmp/m")"
grep -q '^# measured by cdag calibrate .* at 2 processes, 20[0-9-]* [0-9:]* UTC$' "$tmp/m" || fail "no date: $(cat "$tmp/m")"
grep -q '^# MPI: ..*' "$tmp/m" || fail "no MPI library: $(cat "$tmp/m")"

mkdir -p "$tmp/xdg"
cases <<T
0 CDAG_MACHINE="$tmp/env" mpi -n 2 "$cdag" calibrate --quick
  out written: $tmp/env
0 CDAG_MACHINE= XDG_CONFIG_HOME="$tmp/xdg" mpi -n 2 "$cdag" calibrate --quick
  out written: $tmp/xdg/cdag/machine
0 CDAG_MACHINE= XDG_CONFIG_HOME="$tmp/xdg" cdag analyze "$ex/halo1d8.cdag"
  out machine file $tmp/xdg/cdag/machine): plan
1 mpi -n 1 "$cdag" calibrate --quick -o "$tmp/one"
  err needs 2 processes or more
1 CDAG_MACHINE=none mpi -n 2 "$cdag" calibrate --quick
  err1 CDAG_MACHINE=none names no file to write: give -o FILE
2 mpi -n 2 "$cdag" calibrate --fast
  err usage: cdag calibrate
T
[ -e "$tmp/one" ] && fail "one process wrote $tmp/one"
finish
