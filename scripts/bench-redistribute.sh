#!/usr/bin/env bash
# cdag — scripts/bench-redistribute.sh: M:N block-cyclic redistribution (a benchmark, never
# part of the tests). Prints two tables from bench/redistribute_bench.c:
#  1. the intersection work per producing process on the seed's 10^4 x 10^4 cases: the
#     classical and FALLS operation counts against the chunks cdag's builder examines;
#  2. seconds per redistribution of an N x N matrix of doubles at 2 and 4 processes: the
#     graph as written, compiled (default options, and density 0.01: one alltoallv), and
#     ScaLAPACK's pdgemr2d, whose result is compared with cdag's.
# ScaLAPACK for MPICH is fetched with `apt-get download libscalapack-mpich2.2` and unpacked
# with dpkg -x into a temporary directory (installing it would switch mpicc to Open MPI);
# set CDAG_SCALAPACK to a libscalapack-mpich .so to skip that, or to "none" to leave it out.
# Usage: scripts/bench-redistribute.sh [N (default 2048)] [process counts (default "2 4")]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD:-$here/build-bench}"
n="${1:-2048}"
nps="${2:-2 4}"
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCDAG_TESTS=OFF >/dev/null
cmake --build "$build" --target redistribute_bench -j2 >/dev/null
lib="${CDAG_SCALAPACK:-}"
if [ -z "$lib" ]; then
  dir="$(mktemp -d)"
  trap 'rm -rf "$dir"' EXIT
  if (cd "$dir" && apt-get download libscalapack-mpich2.2 >/dev/null 2>&1 && dpkg -x libscalapack-mpich2.2_*.deb root); then
    lib="$(find "$dir/root" -name 'libscalapack-mpich.so.*' | head -1)"
  else
    echo "(libscalapack-mpich2.2 could not be downloaded: no pdgemr2d column)" >&2
  fi
fi
[ "$lib" = none ] && lib=""
echo "## Intersection work per producing process (10^4 x 10^4)"
"$build/bench/redistribute_bench" cost
echo
echo "## Seconds per redistribution (best of 7 batches of 10, max over ranks)"
for np in $nps; do
  CDAG_SCALAPACK="$lib" mpiexec -n "$np" "$build/bench/redistribute_bench" time "$n" | { [ "$np" = "${nps%% *}" ] && cat || tail -n +3; }
done
