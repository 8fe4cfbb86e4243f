#!/usr/bin/env bash
# cdag tests — tests/cli/record_hpl.sh CDAG SOURCE_DIR: HPL's panel loop found as phases with
# repeat counts (docs/recording.md, Phases found), from the part files of a real HPL run
# (tests/data/real/hpl_1x4_n800_nb16.parts.tar.xz: `scripts/real-programs.sh --only hpl
# --hpl-n 800`'s run, 1x4 grid, NB=16, 50 panels, 1-ring-modified broadcast, look-ahead 1).
# No two panels are alike (each message shorter, tags counting panels); the loop is one
# phase of 4 panels (one turn of the panel's owner around the grid) repeated 12 times,
# its sizes and tags a constant step (a shift of the index) each repeat. The distinct
# recording expands back to exactly the flat one, and `cdag analyze` reports the repeats.
set -u
cdag=$1
src=$2
. "$src/tests/cli/lib/expect.sh"
. "$src/tests/record/expand_check.sh"
cd "$tmp" || exit 1
mkdir rec && tar -xJf "$src/tests/data/real/hpl_1x4_n800_nb16.parts.tar.xz" -C rec || { fail "cannot unpack the parts"; finish; }
expand_check rec
cases <<'T'
0 ls xc/flat
  out phase-0013.cdag
0 ls xc/dist
  out phase-0002.cdag
  out! phase-0003.cdag
0 cdag analyze xc/dist
  first recording xc/dist: 14 phases, 3 distinct; the run as phase x repeats: 0x1 1x12 2x1
  out == phase 1 (phase-0001.cdag), 12 repeats ==
# each repeat's panels 4 x 16 columns of 8 B shorter, their tags 4 further
0 python3 -c "import json; s = json.load(open('xc/dist/index.json'))['sequence'][1]['shift']; print(any(x[3] == -8192 for x in s), any(x[3] == 4 for x in s))"
  out True True
T
finish
