#!/usr/bin/env bash
# cdag — runs every unit test program of a build directory under valgrind memcheck
# (no fork, so leaks of the tests themselves count), as many at once as there are cores
# (CDAG_JOBS overrides), then reports them in order. Usage: scripts/valgrind.sh BUILD_DIR
set -euo pipefail
dir=${1:-build}
jobs=${CDAG_JOBS:-$(nproc)}
run_one() {
  CDAG_TEST_SCALE=0.02 CK_FORK=no valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
    "$1" > "$1.valgrind.log" 2>&1
  echo $? > "$1.valgrind.rc"
}
export -f run_one
tests=()
for t in "$dir"/test_*; do
  [ -x "$t" ] && [ -f "$t" ] && tests+=("$t")
done
printf '%s\0' "${tests[@]}" | xargs -0 -P "$jobs" -n 1 bash -c 'run_one "$0"'
fail=0
for t in "${tests[@]}"; do
  if [ "$(cat "$t.valgrind.rc")" != 0 ]; then
    echo "valgrind: $(basename "$t") FAILED (see $t.valgrind.log)"; tail -40 "$t.valgrind.log"; fail=1
  else
    echo "valgrind: $(basename "$t") clean"
  fi
done
exit $fail
