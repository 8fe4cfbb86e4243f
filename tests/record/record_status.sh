#!/usr/bin/env bash
# cdag tests — tests/record/record_status.sh CDAG SOURCE_DIR MPIEXEC PROGRAM: `cdag record`
# exits with the command's status, so that recording changes nothing a harness sees; a
# recording that fails is said beside it (stderr, index.json's "check"), and --strict makes
# it exit 1 when the command succeeded. MPICH's mpiexec passes the preload on to what it
# starts without loading it itself.
set -u
cdag=$1; src=$2; mpiexec=$3; prog=$4
. "$src/tests/cli/lib/expect.sh"
cd "$tmp" || exit 1

# a command that succeeds without recording anything: its status, and the failure said
expect_status 0 "$cdag" record -o rec -- true
expect_err "no process was recorded"
expect_err "the command succeeded; its recording in rec did not"
expect_status 1 "$cdag" record --strict -o rec -- true
expect_err "no process was recorded"
# a failing command: its status, recorded or not
expect_status 3 "$cdag" record -o rec -- sh -c 'exit 3'
mkdir -p live
expect_status 3 "$cdag" record --strict -o rec -- "$mpiexec" -n 1 sh -c "$prog $tmp/live >/dev/null && exit 3"
# a good recording: 0, and index.json says its check passed
expect_status 0 "$cdag" record --strict -o rec -- "$mpiexec" -n 2 "$prog" "$tmp/live"
python3 -c "import json,sys; c=json.load(open('rec/index.json'))['check']; sys.exit(not (c['ok'] and c['phases_failed'] == 0))" ||
  fail "index.json's check: $(grep check rec/index.json)"
expect_status 2 "$cdag" record --bogus -o rec -- true

# MPICH's launcher gets the preload as `-genv`: the process it starts maps the recorder, its
# proxy and mpiexec itself do not (loading it, and MPI with it, cost them 12 ms a run)
maps='grep -c cdag-record /proc/$$/maps /proc/$PPID/maps /proc/$(cut -d" " -f4 /proc/$PPID/stat)/maps'
expect_status 0 "$cdag" record --strict -o rec -- "$mpiexec" -n 1 sh -c "$maps; exec $prog $tmp/live >/dev/null"
[ "$(cut -d: -f2 "$tmp/out" | sed 's/^[1-9][0-9]*$/N/' | tr '\n' ' ')" = "N 0 0 " ] || fail "maps of the rank, hydra_pmi_proxy, mpiexec: $(cat "$tmp/out")"
# a command that is not the launcher gets it in its environment
expect_status 0 "$cdag" record --strict -o rec -- sh -c "exec $mpiexec -n 1 sh -c '$maps; exec $prog $tmp/live >/dev/null'"
[ "$(cut -d: -f2 "$tmp/out" | grep -c '^0')" = 0 ] || fail "a launcher given the preload in its environment: $(cat "$tmp/out")"
finish
