#!/usr/bin/env bash
# cdag — runs every unit test program of a build directory under valgrind memcheck
# (no fork, so leaks of the tests themselves count). Usage: scripts/valgrind.sh BUILD_DIR
set -euo pipefail
dir=${1:-build}
fail=0
for t in "$dir"/test_*; do
  [ -x "$t" ] || continue
  if ! CDAG_TEST_SCALE=0.02 CK_FORK=no valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
       "$t" > "$t.valgrind.log" 2>&1; then
    echo "valgrind: $(basename "$t") FAILED (see $t.valgrind.log)"; tail -40 "$t.valgrind.log"; fail=1
  else
    echo "valgrind: $(basename "$t") clean"
  fi
done
exit $fail
