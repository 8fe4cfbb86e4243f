#!/usr/bin/env bash
# cdag tests — tests/record/record_interrupt.sh CDAG SOURCE_DIR MPIEXEC PROGRAM SIGNAL: Ctrl-C
# (SIGINT) or a time limit (SIGTERM) sent to `cdag record` alone stops the recorded program
# and still merges what it wrote: phase files that load, index.json with the command, and
# cdag record's exit status 128 + the signal, as a shell reports it.
set -u
cdag=$1; src=$2; mpiexec=$3; prog=$4; sig=$5
. "$src/tests/cli/lib/expect.sh"
rec=$tmp/rec
"$cdag" record -o "$rec" -- "$mpiexec" -n 2 "$prog" "$tmp" >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 300); do   # until the program has exchanged (at most 30 s)
  grep -q exchanged "$tmp/out" 2>/dev/null && break
  sleep 0.1
done
grep -q exchanged "$tmp/out" || fail "the program did not start: $(cat "$tmp/err")"
kill -s "$sig" "$pid"
start=$(date +%s)
wait "$pid"
got=$?
[ $(( $(date +%s) - start )) -lt 30 ] || fail "cdag record took more than 30 s to stop"
case $sig in INT) want=130 ;; TERM) want=143 ;; *) want=-1 ;; esac
[ "$got" -eq "$want" ] || fail "cdag record exited $got after SIG$sig, expected $want: $(cat "$tmp/err")"
expect_err "stopped by signal"
[ -f "$rec/index.json" ] || fail "no index.json after SIG$sig"
python3 - "$rec/index.json" <<'PY' || fail "index.json lacks the command or is not JSON"
import json, sys
i = json.load(open(sys.argv[1]))
assert i["command"] and "mpiexec" in i["command"], i["command"]
assert i["complete"] is False
PY
for f in "$rec"/phase-*.cdag; do
  expect_status 0 "$cdag" check "$f"
done
[ -e "$rec/phase-0000.cdag" ] || fail "no phase file after SIG$sig"
finish
