#!/usr/bin/env bash
# cdag — the whole test suite: what CI runs (.ci/run calls this).
#  0. the layout rules a grep can check (scripts/check-layout.sh);
#  1. release build with -Werror and its tests with ctest (unit tests at half the iterations of
#     their randomized and exhaustive ranges; MPI programs at 3 and 8 processes, the recorder
#     at 2 and 3, the examples, fault injection and the installed package);
#  2. the same built by clang with AddressSanitizer + UBSan: the unit tests (a tenth of the
#     iterations), the tool's tests, and the MPI programs at 1 and 2 processes, the recorder at 1;
#  3. a short libFuzzer run of the graph loader, of `cdag check`, of the compiler checked by
#     simulation, of the merger and of graphs built through the API (CDAG_FUZZ_SECONDS,
#     default 15).
# CDAG_FULL=1 is the exhaustive form: every test in both builds and at 4 and 5 processes too,
# every iteration, every allocation of the fault-injection sweeps, the sample of MPICH's own
# test suite, the sanitizers again with gcc, the unit tests under valgrind, 300 s of fuzzing.
# Set CDAG_QUICK=1 to run step 1 only (then with every test).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
jobs=$(nproc)
# Ninja (scripts/deps.sh installs it) builds in two thirds of the time of CMake's Makefiles;
# a build directory made before keeps its generator.
command -v ninja >/dev/null && export CMAKE_GENERATOR=${CMAKE_GENERATOR:-Ninja}
# python3 by its own path: a version manager's shim (pyenv's) costs 0.4 s a start, and the
# recorder's tests start Python two or three times each.
py=$(python3 -c 'import sys; print(sys.executable)') && export PATH="$(dirname "$py"):$PATH"
export CK_DEFAULT_TIMEOUT=300

step() { echo; echo "=== $* (at ${SECONDS} s)"; }   # the time: which step grew

step "layout rules (scripts/check-layout.sh)"
bash scripts/check-layout.sh

full=OFF
[ "${CDAG_FULL:-0}" = 1 ] && full=ON
# The sanitizers' build directory for compiler $1 (configured only).
configure_asan() {
  CC=$1 cmake -S . -B "build-asan-$1" -DCMAKE_BUILD_TYPE=Debug -DCDAG_WERROR=ON -DCDAG_SANITIZE=ON \
    -DCDAG_FULL_TESTS=$full -DCDAG_BENCH=OFF >/dev/null
}
test_names() { (cd "$1" && ctest -N) | awk '/Test +#/ {print $3}'; }

# The default tier runs each test once, in one of the two builds (CDAG_FULL=1 runs every test in
# both, and valgrind): the sanitizers take the tool's tests, the MPI programs at 1 and 2
# processes and the recorder at 1; the release build the rest (3 processes and more, the
# recorder beyond 1) and what the sanitizers' build does not have (fault injection, Fortran,
# installing). Both run the unit tests, the release build at the scale of their exhaustive
# ranges.
sanitized='^(cli_.*|(mpi|kernels)_.*_np[12]|record_.*_np1|replay_(np1|errors))$'
tiered=1
[ "${CDAG_FULL:-0}" = 1 ] || [ "${CDAG_QUICK:-0}" = 1 ] && tiered=0

step "build (release, -Werror) and test"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCDAG_WERROR=ON -DCDAG_FULL_TESTS=$full >/dev/null
cmake --build build -j"$jobs"
release_scale=0.5
[ "${CDAG_FULL:-0}" = 1 ] && release_scale=1
# MPI processes that wait yield their core (tests/support/yield_progress.c): the tests at 3
# processes and more ran 2 to 4 times longer without.
release_ctest() {
  (cd build && LD_PRELOAD=$PWD/yield_progress.so CDAG_TEST_SCALE=$release_scale \
     ctest -j"$jobs" --output-on-failure --timeout 600 "$@")
}
fuzz_default=15 fuzz_build=Debug   # 15 s: an unoptimised build, 16 s instead of 47 s
[ "${CDAG_FULL:-0}" = 1 ] && fuzz_default=300 fuzz_build=RelWithDebInfo
export CDAG_FUZZ_BUILD=${CDAG_FUZZ_BUILD:-$fuzz_build}
if [ $tiered = 1 ]; then
  configure_asan clang
  # The release tests leave about half the CPU idle (MPI programs waiting, tests reserving
  # processors): the sanitizers' and the fuzzer's builds take it, at the lowest priority. Their
  # steps below build again, which reports any error (and is then nothing to do).
  # Each in a process group of its own (job control), so that a failing step stops it
  # whole; in this session, not a new one (setsid): the kernel's autogroups weigh sessions
  # alike, and a build in a session of its own took its full share from the tests.
  bg=()
  set -m
  nice -n 19 cmake --build build-asan-clang -j"$jobs" >/dev/null 2>&1 & bg+=($!)
  nice -n 19 bash scripts/fuzz.sh --build >/dev/null 2>&1 & bg+=($!)
  set +m
  trap 'for p in "${bg[@]}"; do kill -- "-$p" 2>/dev/null || true; done' EXIT
  # one run (its long tests start first, CMakeLists.txt's COST): all but what the sanitizers run
  elsewhere=$(test_names build-asan-clang | grep -E "$sanitized" | paste -sd'|' -)
  release_ctest -E "^(${elsewhere:-none})\$"
  wait "${bg[@]}" || true
  trap - EXIT
else
  release_ctest
fi
[ "${CDAG_QUICK:-0}" = 1 ] && exit 0

asan_pick=(-R "^test_|$sanitized")
compilers=clang
asan_scale=0.1   # the exhaustive ranges of randomized tests ran in step 1; memory errors need less
[ "${CDAG_FULL:-0}" = 1 ] && asan_pick=() && compilers="clang gcc" && asan_scale=1
for cc in $compilers; do
  step "build with $cc, AddressSanitizer + UBSan, and test"
  configure_asan "$cc"
  cmake --build "build-asan-$cc" -j"$jobs"
  # MPI's own allocations are not ours: leak checking stays on for everything else. The unit
  # tests run unforked (CK_FORK=no, as under valgrind): a fork of an instrumented process cost
  # them half their time. hwloc's plugins (libhwloc-plugins, which Open MPI's and ScaLAPACK's
  # packages bring) are loaded and unloaded inside MPI_Init: the leak report cannot name the
  # module of their allocations then, and the suppressions miss them; none is loaded here.
  (cd "build-asan-$cc" && CK_FORK=no CDAG_TEST_SCALE=$asan_scale HWLOC_PLUGINS_PATH=/nonexistent \
     ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 LSAN_OPTIONS=suppressions=$PWD/../scripts/lsan.supp \
     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest -j"$jobs" --output-on-failure --timeout 900 "${asan_pick[@]}")
done

if [ "${CDAG_FULL:-0}" = 1 ]; then
  step "unit tests under valgrind"
  bash scripts/valgrind.sh build
fi

step "fuzzing (${CDAG_FUZZ_SECONDS:-$fuzz_default} s)"
bash scripts/fuzz.sh "${CDAG_FUZZ_SECONDS:-$fuzz_default}"

step "all test steps passed"
