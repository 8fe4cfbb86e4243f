#!/usr/bin/env python3
# cdag tests — tests/record/check_phase_has.py REC LIVE CDAG REGEX: every rank of
# REC/phase-0000.cdag has an operation line matching REGEX (Python's re.search): how a call
# was recorded (rec_mpitypes: `^allreduce.4.long_double.max.`, a native collective of cdag's
# long double).
import re, sys

from phase_blocks import rank_blocks

rec, pattern = sys.argv[1], sys.argv[4]
blocks = rank_blocks(f"{rec}/phase-0000.cdag")
for r in sorted(blocks):
    assert any(re.search(pattern, line) for line in blocks[r]), f"rank {r}: no line matches {pattern!r}"
print(f"{len(blocks)} ranks: each has {pattern!r}")
