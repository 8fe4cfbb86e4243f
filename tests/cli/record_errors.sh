#!/usr/bin/env bash
# cdag tests — tests/cli/record_errors.sh CDAG SOURCE_DIR: `cdag record` on wrong use.
# Usage errors exit 2; a command that starts no MPI process, or none at all, is named and
# exits non-zero; a part file that is not one, a run that left no part, and a bad
# CDAG_RECORD_MEMORY are clear errors; a recording directory is cleared of an earlier
# recording's files before a run (phases of two runs never mix).
set -u
cdag=$1
src=$2
. "$src/tests/cli/lib/expect.sh"
cd "$tmp" || exit 1

expect_status 2 "$cdag" record
expect_err "usage: cdag record"
expect_status 2 "$cdag" record -o rec
# (a sanitizer build's library cannot be preloaded into `true`, which then fails: any status)
"$cdag" record -o rec -- true >"$tmp/out" 2>"$tmp/err"
[ $? -ne 0 ] || fail "a command that ran no MPI program was taken for a recording"
expect_err "no process was recorded: did the command run an MPI program?"
expect_status 127 "$cdag" record -o rec -- ./does-not-exist
expect_err "cannot run ./does-not-exist"
mkdir -p bad
printf 'not a part file\n' >bad/rank-0.part
expect_status 1 "$cdag" record --merge bad
expect_err "not a part file of cdag record"
expect_status 1 "$cdag" record --merge nowhere
expect_err "nowhere/rank-0.part"
CDAG_RECORD_MEMORY=lots "$cdag" record -o rec -- true >"$tmp/out" 2>"$tmp/err"
[ $? -ne 0 ] || fail "a bad CDAG_RECORD_MEMORY was accepted"
expect_err "CDAG_RECORD_MEMORY=lots"
mkdir -p old && touch old/phase-0007.cdag old/rank-3.part old/index.json old/mine.txt
"$cdag" record -o old -- true >/dev/null 2>&1
[ ! -e old/phase-0007.cdag ] && [ ! -e old/rank-3.part ] && [ ! -e old/index.json ] ||
  fail "an earlier recording's files were left in the directory"
[ -e old/mine.txt ] || fail "a file that is not the recorder's was removed"
finish
