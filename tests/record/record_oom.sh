#!/usr/bin/env bash
# cdag tests — tests/record/record_oom.sh CDAG SOURCE_DIR MPIEXEC FAILMALLOC_SO FAULT_INJECT PROGRAM...
#
# The recorder out of memory: each PROGRAM (tests/record/rec_*.c) is recorded at 2 processes
# with failmalloc.so failing, in every process, the N-th allocation libcdag-record makes
# (N = 1, 1 + STRIDE, ... up to the count of an unfailed run; STRIDE 13, 1 with CDAG_FULL=1).
# Whenever an allocation failed, the program must still finish (exit 0: the recorder never
# stops it), nothing may crash, and the loss must be said: index.json's out_of_memory is not
# empty, or (a failure in MPI_Init) a process said on stderr that it is not recorded; or
# nothing was lost (the shadow writes a computation at once when it cannot gather it): the
# recording passes its check, names the calls the unfailed one names (how often a program
# polls varies) and counts what is unsupported as it does.
# Then the merge: `cdag record --merge` of the first program's unfailed recording under
# fault_inject --run (every second allocation of cdag's merge in turn, each with CDAG_FULL=1: an out-of-memory error or the
# same summary; a part it cannot read for lack of memory is an error, not a process that
# "left no recording").
set -u
cdag=$1; src=$2; mpiexec=$3; shim=$4; sweep=$5; shift 5
. "$src/tests/cli/lib/expect.sh"
stride=13
[ "${CDAG_FULL:-0}" = 1 ] && stride=1
export CDAG_FAILMALLOC_CALLER=libcdag-record CDAG_FAILMALLOC_REPORT=$tmp/report.%p

record() {   # record N PROGRAM: one recording, the shim failing allocation N (0: none)
  rm -rf "$tmp/rec" "$tmp"/report.* && mkdir -p "$tmp/live"
  CDAG_FAILMALLOC_N=$1 LD_PRELOAD=$shim timeout 120 "$cdag" record -o "$tmp/rec" -- "$mpiexec" -n 2 "$2" "$tmp/live" \
    >"$tmp/out" 2>"$tmp/err"
}

for prog in "$@"; do
  name=$(basename "$prog")
  record 0 "$prog" || { fail "$name: the unfailed recording exited $?: $(cat "$tmp/err")"; continue; }
  counts() { python3 -c 'import json, sys; i = json.load(open(sys.argv[1])); print(i["check"]["ok"], sorted(i["calls"]), i["unsupported"])' "$1"; }
  whole=$(counts "$tmp/rec/index.json")
  [ -d "$tmp/merge" ] || cp -r "$tmp/rec" "$tmp/merge"
  count=$(cat "$tmp"/report.* | awk '$2 > m { m = $2 } END { print m + 0 }')
  [ "$count" -gt 0 ] || fail "$name: the shim counted no allocation of libcdag-record"
  tried=0 said=0 absorbed=0
  for ((n = 1; n <= count; n += stride)); do
    record "$n" "$prog"
    rc=$?
    grep -qs "failed 1" "$tmp"/report.* || continue
    tried=$((tried + 1))
    if [ $rc -ge 124 ]; then
      fail "$name, allocation $n failed: cdag record exited $rc: $(head -c 400 "$tmp/err")"
    elif grep -q "out of memory at MPI_Init; this process is not recorded" "$tmp/err"; then
      said=$((said + 1))
    elif [ $rc -ne 0 ]; then
      fail "$name, allocation $n failed: cdag record exited $rc: $(head -c 400 "$tmp/err")"
    elif python3 -c 'import json, sys; sys.exit(not json.load(open(sys.argv[1]))["out_of_memory"])' "$tmp/rec/index.json"; then
      said=$((said + 1))
      grep -q "out of memory while recording" "$tmp/err" || fail "$name, allocation $n: cdag record did not say so"
    elif [ "$(counts "$tmp/rec/index.json")" = "$whole" ]; then
      absorbed=$((absorbed + 1))
    else
      fail "$name, allocation $n failed and index.json says nothing (counts $(counts "$tmp/rec/index.json"), unfailed $whole): $(cat "$tmp/rec/index.json")"
    fi
  done
  echo "$name: $count allocations of libcdag-record, $tried failed in turn (every ${stride}th), $said reported, $absorbed lost nothing"
done
if [ -d "$tmp/merge" ]; then
  CDAG_FAULT_STRIDE=${CDAG_FAULT_STRIDE:-2} env -u CDAG_FAILMALLOC_CALLER -u CDAG_FAILMALLOC_REPORT "$sweep" --run "$shim" "$cdag" record --merge "$tmp/merge" \
    >"$tmp/sweep" 2>&1 || fail "cdag record --merge out of memory: $(grep -v '^cdag' "$tmp/sweep" | head -c 1500)"
  tail -2 "$tmp/sweep"
fi
finish
