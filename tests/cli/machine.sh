#!/usr/bin/env bash
# cdag tests — tests/cli/machine.sh CDAG SOURCE_DIR: machine files (src/exec/machine.h) in the tool.
# The price is computed with the file CDAG_MACHINE names, or the one at the default path
# (XDG_CONFIG_HOME, else HOME), and the report says which (text and JSON); an explicit option
# or CDAG_* variable wins and the source is "options"; CDAG_MACHINE=none is the built-in
# parameters; `cdag model` takes the file unless a LogGOPS flag is given. A malformed file is
# an error naming the file and the line; a file CDAG_MACHINE names must exist.
set -u
cdag=$1
src=$2
. "$src/tests/cli/lib/expect.sh"
ex=$src/examples/graphs
unset CDAG_PRICE CDAG_KERNEL CDAG_ALPHA CDAG_BETA CDAG_OVERHEAD CDAG_GAMMA
printf 'cdag-machine 1\n# a test machine\nL 0.5\no 0.1\ng 0.15\nG 0.0001\nS 8192\ncopy 0.00005\n' >"$tmp/m"
printf 'cdag-machine 1\nL 0.5\no 0.1\nbandwidth 3\n' >"$tmp/bad"
# a calibrated machine's rcopy, queue and costs by size: named in the report, the JSON and cdag model
{ cat "$tmp/m"; printf 'rcopy 0.00006\nqueue 0.0005\nsize 8 0.3 0.6\nsize 1024 0.6 0.9\n'; } >"$tmp/t"
mkdir -p "$tmp/xdg/cdag" "$tmp/home"
cp "$tmp/m" "$tmp/xdg/cdag/machine"

cases <<T
0 CDAG_MACHINE="$tmp/m" cdag analyze "$ex/halo1d8.cdag"
  out price (LogGOPS L=0.5 o=0.1 g=0.15 us, G=0.0001 us/B, copy 5e-05 us/B; machine file $tmp/m): plan
0 CDAG_MACHINE="$tmp/m" cdag analyze --json "$ex/halo1d8.cdag"
  out "params": {"L": 0.5, "o": 0.1, "g": 0.15, "G": 0.0001, "O": 0, "S": 8192, "copy": 5e-05, "rcopy": 0, "queue": 0, "sizes": []}, "source": "machine file $tmp/m"}
0 CDAG_MACHINE="$tmp/t" cdag analyze "$ex/halo1d8.cdag"
  out copy 5e-05 us/B, costs of 2 sizes, rcopy 6e-05 us/B, queue 0.0005 us; machine file $tmp/t): plan
0 CDAG_MACHINE="$tmp/t" cdag analyze --json "$ex/halo1d8.cdag"
  out "rcopy": 6e-05, "queue": 0.0005, "sizes": [{"bytes": 8, "pair_us": 0.3, "round_us": 0.6}, {"bytes": 1024, "pair_us": 0.6, "round_us": 0.9}]}
0 CDAG_MACHINE="$tmp/t" cdag model "$ex/halo1d8.cdag"
  first LogGOPS: L=0.5 us o=0.1 us g=0.15 us G=0.0001 us/B O=0 us/B S=8192 B copy=5e-05 us/B rcopy=6e-05 us/B, queue=0.0005 us, costs of 2 sizes, p=8 (machine file $tmp/t)
0 CDAG_MACHINE="$tmp/m" cdag analyze --alpha=2e-6 "$ex/halo1d8.cdag"
  out copy 5e-05 us/B; options): plan
0 CDAG_MACHINE="$tmp/m" CDAG_BETA=1e-9 cdag analyze "$ex/halo1d8.cdag"
  out us/B; options): plan
0 CDAG_MACHINE=none XDG_CONFIG_HOME="$tmp/xdg" cdag analyze "$ex/halo1d8.cdag"
  out copy 0.0001 us/B; built in): plan
0 CDAG_MACHINE= XDG_CONFIG_HOME="$tmp/xdg" cdag analyze "$ex/halo1d8.cdag"
  out machine file $tmp/xdg/cdag/machine): plan
0 CDAG_MACHINE= XDG_CONFIG_HOME= HOME="$tmp/home" cdag analyze "$ex/halo1d8.cdag"
  out us/B; built in): plan
0 CDAG_MACHINE="$tmp/m" cdag model "$ex/halo1d8.cdag"
  first LogGOPS: L=0.5 us o=0.1 us g=0.15 us G=0.0001 us/B O=0 us/B S=8192 B copy=5e-05 us/B, p=8 (machine file $tmp/m)
0 CDAG_MACHINE="$tmp/m" cdag model -L 2 "$ex/halo1d8.cdag"
  first LogGOPS: L=2 us o=0.2 us g=0.2 us G=0.0002 us/B O=0 us/B S=65535 B copy=0.0001 us/B, p=8 (options)
0 cdag model "$ex/halo1d8.cdag"
  first (cdag model's defaults)
1 CDAG_MACHINE="$tmp/bad" cdag analyze "$ex/halo1d8.cdag"
  err machine file $tmp/bad line 4: unknown parameter 'bandwidth'
1 CDAG_MACHINE="$tmp/bad" cdag model "$ex/halo1d8.cdag"
  err machine file $tmp/bad line 4
1 CDAG_MACHINE="$tmp/absent" cdag analyze "$ex/halo1d8.cdag"
  err machine file $tmp/absent: No such file or directory
T
finish
