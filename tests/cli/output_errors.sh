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

full() {   # full NAME ARGS...: runs cdag ARGS with stdout on /dev/full
  local name=$1; shift
  "$cdag" "$@" >/dev/full 2>"$tmp/err"
  local got=$?
  [ "$got" -eq 1 ] || fail "'cdag $*' > /dev/full exited $got, expected 1"
  grep -qE "cdag $name: (cannot write standard output|input/output error)" "$tmp/err" ||
    fail "'cdag $*' > /dev/full: no message ($(cat "$tmp/err"))"
}
full check check "$f"
full analyze analyze "$f"
full analyze analyze --json "$f"
full sst sst --json "$f"
full verify verify "$f"
full model model "$f"
full dot dot "$f"
full dot dot --plan "$f"
full goal goal "$f"
"$cdag" --help >/dev/full 2>"$tmp/err"
[ $? -eq 1 ] || fail "cdag --help > /dev/full did not fail"
# the same commands succeed on a writable output
expect_status 0 "$cdag" analyze "$f"
finish
