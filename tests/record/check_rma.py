#!/usr/bin/env python3
# cdag tests — tests/record/check_rma.py REC LIVE CDAG: the recording of tests/record/rec_rma.c
# says that each rank computed the block of its window its right neighbour gets in the last
# epoch, before the fence that opens that epoch (the origin's recorder told the target at
# the closing fence): in REC/phase-0000.cdag, rank R's block has `compute COST reads all
# writes BYTES at ADDR` (ADDR BYTES from LIVE/window-R.txt) between its 3rd and 4th fence.
import json, re, sys

from phase_blocks import rank_blocks

rec, live, cdag = sys.argv[1:4]
nprocs = json.load(open(f"{rec}/index.json"))["nprocs"]
blocks = rank_blocks(f"{rec}/phase-0000.cdag")
bad = 0
for r in range(nprocs):
    addr, n = (int(x, 0) for x in open(f"{live}/window-{r}.txt").read().split())
    fences = [i for i, l in enumerate(blocks[r]) if l == "fence"]
    want = re.compile(rf"compute \d+ reads all writes {n}b at {addr:#x}$")
    hits = [i for i, l in enumerate(blocks[r]) if want.match(l)]
    if len(fences) != 5 or not any(fences[2] < i < fences[3] for i in hits):
        print(f"rank {r}: no computation of {n} B at {addr:#x} between its 3rd and 4th fence: {blocks[r]}")
        bad += 1
sys.exit(1 if bad else 0)
