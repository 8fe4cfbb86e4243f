#!/usr/bin/env bash
# cdag tests — tests/cli/output_errors.sh CDAG SOURCE_DIR: a command whose output cannot be
# written (standard output on /dev/full) says so and exits 1; every command exited 0 there,
# and `dot` exited 1 without a word.
set -u
cdag=$1
src=$2
. "$src/tests/cli/lib/expect.sh"
f=$src/examples/graphs/bcast_binomial8.cdag
[ -w /dev/full ] || { echo "output_errors.sh: no /dev/full here"; exit 1; }

cases <<'T'
1 cdag check "$f" >/dev/full
  err~ cdag check: (cannot write standard output|input/output error)
1 cdag analyze "$f" >/dev/full
  err~ cdag analyze: (cannot write standard output|input/output error)
1 cdag analyze --json "$f" >/dev/full
  err~ cdag analyze: (cannot write standard output|input/output error)
1 cdag sst --json "$f" >/dev/full
  err~ cdag sst: (cannot write standard output|input/output error)
1 cdag verify "$f" >/dev/full
  err~ cdag verify: (cannot write standard output|input/output error)
1 cdag model "$f" >/dev/full
  err~ cdag model: (cannot write standard output|input/output error)
1 cdag dot "$f" >/dev/full
  err~ cdag dot: (cannot write standard output|input/output error)
1 cdag dot --plan "$f" >/dev/full
  err~ cdag dot: (cannot write standard output|input/output error)
1 cdag goal "$f" >/dev/full
  err~ cdag goal: (cannot write standard output|input/output error)
1 cdag --help >/dev/full
# the same commands succeed on a writable output
0 cdag analyze "$f"
T
finish
