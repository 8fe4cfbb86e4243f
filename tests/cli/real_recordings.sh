#!/usr/bin/env bash
# cdag tests — tests/cli/real_recordings.sh CDAG SOURCE_DIR: the recordings of HPL and
# ScaLAPACK's xdlu in tests/data/real (made by scripts/real-programs.sh, before recordings
# held computations) load; HPL's analyses and verifies, and so does xdlu's at N=200, whose
# reduces reuse a buffer across types (a stage starts there; it was refused before).
set -u
cdag=$1
src=$2
. "$src/tests/cli/lib/expect.sh"
real=$src/tests/data/real

cases <<'T'
0 cdag check "$real/hpl_1x4_n200_nb16.cdag"
  out ok: 4 ranks, 691 ops (123 send, 123 recv, 0 reduce, 445 copy
0 cdag analyze --json "$real/hpl_1x4_n200_nb16.cdag"
  out "nprocs": 4,
0 cdag verify "$real/hpl_1x4_n200_nb16.cdag"
  out matches the graph on all 4 ranks
0 xz -dc "$real/xdlu_2x2_n320_nb32.cdag.xz" >"$tmp/xdlu320.cdag" && cdag check "$tmp/xdlu320.cdag"
  out ok: 4 ranks, 156091 ops (2855 send, 2855 recv, 36 reduce, 146909 copy
0 xz -dc "$real/xdlu_2x2_n200_nb16.cdag.xz" >"$tmp/xdlu200.cdag" && cdag check "$tmp/xdlu200.cdag"
  out ok: 4 ranks, 62900 ops (1874 send, 1874 recv, 32 reduce, 56897 copy
0 xz -dc "$real/xdlu_2x2_n200_nb16.cdag.xz" >"$tmp/xdlu200.cdag" && cdag verify "$tmp/xdlu200.cdag"
  out matches the graph on all 4 ranks
T
finish
