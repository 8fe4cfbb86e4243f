#!/usr/bin/env bash
# cdag tests — tests/record/record.sh CDAG SOURCE_DIR MPIEXEC MODE NP PROGRAM [EXPECT...]
#
# Records PROGRAM (one of tests/record/rec_*.c) at NP processes and checks the recording:
#   MODE preload: `cdag record -o DIR -- mpiexec -n NP PROGRAM LIVE` (LD_PRELOAD);
#   MODE linked:  PROGRAM was linked with libcdag-record: run it under mpiexec with
#                 CDAG_RECORD_DIR=DIR, then `cdag record --merge DIR`.
# Then every phase file must pass `cdag check` and (at an even NP) run through `cdag model`,
# `cdag goal --plan` and `cdag dot --plan`, index.json must be the documented object,
# the recording must expand to exactly its flat form (expand_check.sh),
# phase 0 is replayed with `mpiexec -n NP cdag replay --dump` and every byte the program
# listed as explained (LIVE/live-R.mem) must equal the replay's (compare_mem.py).
# EXPECT: analyze:TEXT (the report of phase 0 contains TEXT), noanalyze:TEXT (it does not),
# index:EXPR (a Python expression on the index `i` holds), phases:N (the run's phases, repeats of
# a distinct phase counted), min:N (bytes compared,
# default 1), status:N (cdag record's exit status, default 0; `failure`: any but 0),
# noreplay (no replay), nolive (replay without the comparison: the program leaves no live
# memory), args:A (the program's argument instead of LIVE), verify (every phase passes
# `cdag verify`: its plan leaves the graph's bytes in the simulator), check:SCRIPT[:ARG]
# (python3 SCRIPT REC LIVE CDAG [ARG], SCRIPT a file of this directory, must succeed: a
# program's own checks), err:TEXT (cdag record's stderr, or the merge's output, contains TEXT),
# onecpu (the run confined to one CPU with `taskset`: its processes oversubscribe it).
# Every mpiexec runs under `timeout`, so a hang fails the test instead of stopping the suite.
set -u
cdag=$1; src=$2; mpiexec=$3; mode=$4; np=$5; prog=$6; shift 6
. "$src/tests/cli/lib/expect.sh"
. "$src/tests/record/expand_check.sh"
rec=$tmp/rec live=$tmp/live rep=$tmp/rep
mkdir -p "$live" "$rep"
want_status=0 min=1 replay=1 compare=1 phases="" args="" verify=0 pin=()
analyze=() noanalyze=() index=() checks=() errs=()
for e in "$@"; do
  case $e in
  analyze:*) analyze+=("${e#analyze:}") ;;
  noanalyze:*) noanalyze+=("${e#noanalyze:}") ;;
  index:*) index+=("${e#index:}") ;;
  phases:*) phases=${e#phases:} ;;
  min:*) min=${e#min:} ;;
  status:*) want_status=${e#status:} ;;
  noreplay) replay=0 ;;
  nolive) compare=0 ;;
  args:*) args=${e#args:} ;;
  verify) verify=1 ;;
  check:*) checks+=("${e#check:}") ;;
  err:*) errs+=("${e#err:}") ;;
  onecpu) pin=(taskset -c "$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')") ;;
  *) fail "unknown expectation $e" ;;
  esac
done

[ -n "$args" ] || args=$live
if [ "$mode" = preload ]; then
  timeout 120 "${pin[@]}" "$cdag" record -o "$rec" -- "$mpiexec" -n "$np" "$prog" "$args" >"$tmp/out" 2>"$tmp/err"
  got=$?
  if [ "$want_status" = failure ]; then
    [ $got -ne 0 ] && [ $got -ne 124 ] || fail "cdag record exited $got, expected the program's failure: $(cat "$tmp/err")"
    expect_err "did not reach MPI_Finalize"
  else
    [ $got -eq "$want_status" ] || fail "cdag record exited $got, expected $want_status: $(cat "$tmp/err")"
  fi
else
  mkdir -p "$rec"
  CDAG_RECORD_DIR=$rec timeout 120 "${pin[@]}" "$mpiexec" -n "$np" "$prog" "$args" >"$tmp/prog.out" 2>&1 ||
    [ "$want_status" != 0 ] || fail "$prog failed: $(cat "$tmp/prog.out")"
  expect_status 0 "$cdag" record --merge "$rec"
fi
# the summary: on stderr after a program (its stdout stays its own), on stdout from --merge
if [ "$mode" = preload ]; then
  expect_err "recorded $np processes"
  grep -q "recorded $np processes" "$tmp/out" && fail "cdag record wrote its summary into the program's stdout"
else
  expect_out "recorded $np processes"
fi
for t in "${errs[@]}"; do grep -qF -- "$t" "$tmp/err" "$tmp/out" 2>/dev/null || fail "cdag record did not say '$t'"; done

python3 - "$rec/index.json" "$np" "$phases" "${index[@]}" <<'PY' || fail "index.json: see above"
import json, sys
i = json.load(open(sys.argv[1]))
np_, phases, exprs = int(sys.argv[2]), sys.argv[3], sys.argv[4:]
for key in ("cdag_recording", "nprocs", "phases", "calls", "unsupported", "unreceived"):
    assert key in i, f"index.json has no {key}"
assert i["cdag_recording"] == 2 and i["nprocs"] == np_, i
assert all(set(p) >= {"file", "ops"} for p in i["phases"]), i["phases"]
if phases:   # the run's phases: repeats of a distinct phase count
    n = i.get("flat_phases", len(i["phases"]))
    assert n == int(phases), f'{n} phases, expected {phases}'
for e in exprs:
    assert eval(e, {"i": i}), f"index.json: not {e}: {i}"
PY

for f in "$rec"/phase-*.cdag; do
  [ -e "$f" ] || continue
  "$cdag" check "$f" >"$tmp/check" 2>&1 || fail "$f does not pass cdag check: $(cat "$tmp/check")"
  [ $verify = 0 ] || "$cdag" verify "$f" >"$tmp/verify" 2>&1 || fail "$f does not pass cdag verify: $(cat "$tmp/verify")"
  # every recording models, and writes as GOAL and DOT with its plan (opaque writes and
  # packing areas near 0x7ffe... included): at an even number of processes, one size per
  # program (the suite's time)
  [ $((np % 2)) = 0 ] || continue
  "$cdag" model "$f" >"$tmp/model" 2>&1 || fail "cdag model $f failed: $(cat "$tmp/model")"
  # ... and its plan takes no less than the recorded computation of any one rank (a rank runs
  # its computations one after another). Not the graph's critical path of computation: a
  # recorded chain may run through a receive that waits only because a computation read its
  # buffer first, which the plan rightly drops (tests/model/test_lower_stages.c,
  # returned_bytes_are_no_causality: rec_nbvcoll meets it when a preempted rank stretches
  # such a computation)
  awk '/^rank [0-9]+ \{/ {r = $2} /^compute [0-9]+/ {s[r] += $2} END {for (r in s) if (s[r] > c) c = s[r]; printf "%.3f\n", c / 1000}' \
    "$f" >"$tmp/chain"
  awk -v c="$(cat "$tmp/chain")" '/^plan:/ {t = $2 + 0} END {exit !(t + 1e-3 >= c)}' "$tmp/model" ||
    fail "cdag model $f: the plan models below one rank's recorded computation ($(cat "$tmp/chain") us): $(cat "$tmp/model")"
  "$cdag" goal --plan "$f" -o "$tmp/plan.goal" >"$tmp/goal" 2>&1 || fail "cdag goal --plan $f failed: $(cat "$tmp/goal")"
  "$cdag" dot --plan "$f" >"$tmp/dot" 2>&1 || fail "cdag dot --plan $f failed: $(tail -c 300 "$tmp/dot")"
done
expand_check "$rec"   # stored as distinct phases, it expands to exactly its flat form
phase0=$rec/phase-0000.cdag
if [ ${#analyze[@]} -gt 0 ] || [ ${#noanalyze[@]} -gt 0 ]; then
  # what detection finds (the price may leave a small candidate as messages, and says so)
  CDAG_PRICE=0 "$cdag" analyze "$phase0" >"$tmp/report" 2>&1 || fail "cdag analyze failed: $(cat "$tmp/report")"
  for t in "${analyze[@]}"; do grep -qF -- "$t" "$tmp/report" || fail "the report lacks '$t': $(cat "$tmp/report")"; done
  for t in "${noanalyze[@]}"; do ! grep -qF -- "$t" "$tmp/report" || fail "the report has '$t': $(cat "$tmp/report")"; done
fi
for c in "${checks[@]}"; do
  script=${c%%:*} arg=""
  [ "$script" = "$c" ] || arg=${c#*:}
  python3 "$src/tests/record/$script" "$rec" "$live" "$cdag" $arg >"$tmp/check" 2>&1 ||
    fail "$script $arg: $(cat "$tmp/check")"
done
if [ $replay = 1 ]; then
  # computations left out: the live run's bytes that only messages moved are compared
  timeout 120 "$mpiexec" -n "$np" "$cdag" replay "$phase0" --iterations 1 --compute=skip --dump "$rep" >"$tmp/replay" 2>&1 ||
    fail "cdag replay failed: $(cat "$tmp/replay")"
  [ $compare = 0 ] || python3 "$src/tests/record/compare_mem.py" "$live" "$rep" "$np" "$min" >"$tmp/cmp" 2>&1 ||
    fail "the replay differs from the live run: $(cat "$tmp/cmp")"
fi
finish
