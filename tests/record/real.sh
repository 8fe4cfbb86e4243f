#!/usr/bin/env bash
# cdag tests — tests/record/real.sh CDAG SOURCE_DIR MPIEXEC PROGRAM: real MPI programs from
# Debian's MPICH builds, written by nobody on this team, recorded at 3 processes.
#   tachyon  the Tachyon ray tracer (tachyon-nox on libtachyon-mpich): persistent requests,
#            Testsome, a native allgather and barrier; its rows reach rank 0 by hand, which
#            the report must find as a gather;
#   mpy      Message Passing Yorick (mpy.mpich2) running tests/data/real/mpy_ring.i: every
#            receive and probe with MPI_ANY_SOURCE and MPI_ANY_TAG; its fan-out is a
#            point-to-point tree the report must find as a broadcast.
# Each recording must load and match, expand to exactly its flat form, and replay with the
# same memory compiled and as written. scripts/deps.sh installs both programs.
set -u
cdag=$1; src=$2; mpiexec=$3; prog=$4
. "$src/tests/cli/lib/expect.sh"
. "$src/tests/record/expand_check.sh"
data=$src/tests/data/real
cd "$tmp" || exit 1
case $prog in
tachyon)
  command -v tachyon-nox >/dev/null || { fail "tachyon-nox is not installed (bash scripts/deps.sh)"; finish; }
  run=(tachyon-nox "$data/tachyon_scene.dat" -numthreads 1 -format PPM -o "$tmp/image.ppm")
  want=("gather rooted at 0 over all 3 ranks" "native collective calls:")
  ;;
mpy)
  command -v mpy >/dev/null || { fail "mpy is not installed (bash scripts/deps.sh)"; finish; }
  cp "$data/mpy_ring.i" "$data/mpy_main.i" "$tmp/"
  run=(mpy -j mpy_ring.i -i mpy_main.i)
  want=("bcast rooted at 0 over all 3 ranks")
  ;;
*) fail "unknown program $prog"; finish ;;
esac
expect_status 0 timeout 120 "$cdag" record -o "$tmp/rec" -- "$mpiexec" -n 3 "${run[@]}"
expect_err "recorded 3 processes: "
python3 -c "import json; i = json.load(open('$tmp/rec/index.json')); assert i['complete'] and i['nprocs'] == 3, i" ||
  fail "index.json: $(cat "$tmp/rec/index.json")"
expand_check "$tmp/rec"   # stored as distinct phases, it expands to exactly its flat form
# what detection finds, in any phase the run was cut into (each distinct phase analysed once)
expect_status 0 env CDAG_PRICE=0 "$cdag" analyze "$tmp/rec"
expect_out "distinct; the run as phase x repeats:"
for w in "${want[@]}"; do expect_out "$w"; done
expect_status 0 timeout 120 "$mpiexec" -n 3 "$cdag" replay "$tmp/rec/phase-0000.cdag" --iterations 2
expect_out "same memory as written and compiled on every rank"
finish
