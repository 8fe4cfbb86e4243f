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

cases <<'T'
2 cdag record
  err usage: cdag record
2 cdag record -o rec
# a command that ran no MPI program is no recording (a sanitizer build's library cannot be
# preloaded into `true`, which then fails: any failing status)
!0 cdag record -o rec -- true
  err no process was recorded: did the command run an MPI program?
127 cdag record -o rec -- ./does-not-exist
  err cannot run ./does-not-exist
T
mkdir -p bad
printf 'not a part file\n' >bad/rank-0.part
cases <<'T'
1 cdag record --merge bad
  err not a part file of cdag record
1 cdag record --merge nowhere
  err nowhere/rank-0.part
!0 CDAG_RECORD_MEMORY=lots cdag record -o rec -- true
  err CDAG_RECORD_MEMORY=lots
T
mkdir -p old && touch old/phase-0007.cdag old/rank-3.part old/index.json old/mine.txt
"$cdag" record -o old -- true >/dev/null 2>&1
[ ! -e old/phase-0007.cdag ] && [ ! -e old/rank-3.part ] && [ ! -e old/index.json ] ||
  fail "an earlier recording's files were left in the directory"
[ -e old/mine.txt ] || fail "a file that is not the recorder's was removed"
finish
