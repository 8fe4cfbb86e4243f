#!/usr/bin/env bash
# cdag — the whole test suite: what CI runs (.ci/run calls this).
#  0. the layout rules a grep can check (scripts/check-layout.sh);
#  1. release build with -Werror, every test (unit, CLI, MPI under mpiexec at 1, 2, 3 and 8
#     processes, API and type programs at 8 only with CDAG_FULL=1; CDAG_FULL=1 adds 4 and 5)
#     with ctest, randomized and exhaustive tests at
#     half their iterations (all with CDAG_FULL=1);
#  2. the same tests built by clang with AddressSanitizer + UBSan (MPI runs at 3..8 processes
#     only with CDAG_FULL=1: the release step runs them, and on 2 cores each runs alone, the
#     slow half of this step; randomized tests run a quarter of their iterations);
#     CDAG_FULL=1 runs them all and repeats the step with gcc (the two catch different
#     things: clang's UBSan reports the int promotions gcc's optimises away);
#  3. the unit tests under valgrind (memcheck, leaks are errors);
#  4. a short libFuzzer run of the graph loader, of `cdag check` and of the compiler checked by
#     simulation (CDAG_FUZZ_SECONDS, default 15; CDAG_FULL=1: 300).
# Set CDAG_QUICK=1 to run step 1 only.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
jobs=$(nproc)
export CK_DEFAULT_TIMEOUT=300

step() { echo; echo "=== $* (at ${SECONDS} s)"; }   # the time: which step grew

step "layout rules (scripts/check-layout.sh)"
bash scripts/check-layout.sh

step "build (release, -Werror) and test"
full=OFF
[ "${CDAG_FULL:-0}" = 1 ] && full=ON
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCDAG_WERROR=ON -DCDAG_FULL_TESTS=$full >/dev/null
cmake --build build -j"$jobs"
release_scale=0.5
[ "${CDAG_FULL:-0}" = 1 ] && release_scale=1
(cd build && CDAG_TEST_SCALE=$release_scale ctest -j"$jobs" --output-on-failure --timeout 600)
[ "${CDAG_QUICK:-0}" = 1 ] && exit 0

asan_skip="-E _np[3-8]\$"
compilers=clang
asan_scale=0.25   # the exhaustive ranges of randomized tests ran in step 1; memory errors need less
[ "${CDAG_FULL:-0}" = 1 ] && asan_skip="" && compilers="clang gcc" && asan_scale=1
for cc in $compilers; do
  step "build with $cc, AddressSanitizer + UBSan, and test"
  CC=$cc cmake -S . -B "build-asan-$cc" -DCMAKE_BUILD_TYPE=Debug -DCDAG_WERROR=ON -DCDAG_SANITIZE=ON -DCDAG_FULL_TESTS=$full -DCDAG_BENCH=OFF >/dev/null
  cmake --build "build-asan-$cc" -j"$jobs"
  # MPI's own allocations are not ours: leak checking stays on for everything else.
  (cd "build-asan-$cc" && CDAG_TEST_SCALE=$asan_scale ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 LSAN_OPTIONS=suppressions=$PWD/../scripts/lsan.supp \
     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest -j"$jobs" --output-on-failure --timeout 900 $asan_skip)
done

step "unit tests under valgrind"
bash scripts/valgrind.sh build

fuzz_default=15 fuzz_build=Debug   # 15 s: an unoptimised build, 16 s instead of 47 s
[ "${CDAG_FULL:-0}" = 1 ] && fuzz_default=300 fuzz_build=RelWithDebInfo
step "fuzzing (${CDAG_FUZZ_SECONDS:-$fuzz_default} s)"
CDAG_FUZZ_BUILD=${CDAG_FUZZ_BUILD:-$fuzz_build} bash scripts/fuzz.sh "${CDAG_FUZZ_SECONDS:-$fuzz_default}"

step "all test steps passed"
