#!/usr/bin/env python3
# cdag tests — tests/record/check_userop.py REC LIVE CDAG: the recording of
# tests/record/rec_userop.c holds each reduction cdag cannot combine as its data movement
# and a computation.
#
# In REC/phase-0000.cdag each output of a reduction is a `compute 0 reads S at A writes ...`
# whose A is the scratch area (0x7ffd...) that the rank's latest collective into such an
# area wrote (`out A`: a gather, allgather, alltoall or alltoallv), and reads no more than
# it holds. Rank r of n computes 8 outputs (Allreduce, Iallreduce, Scan, Reduce_scatter_block,
# Reduce_scatter, Iscan, Ireduce_scatter, the Allreduce of MPI_LXOR on floats), Reduce's at rank 0, Ireduce's at rank n-1 and
# Exscan's and Iexscan's at every rank but 0; the native Iscan is a `scan ... nonblocking`.
import re, sys

from phase_blocks import rank_blocks

rec = sys.argv[1]
phase = f"{rec}/phase-0000.cdag"
blocks = rank_blocks(phase)
n = max(blocks) + 1
coll = re.compile(r"(?:\w+: )?(gather|allgather|alltoall|alltoallv) (\d+)b .*out (0x7ffd[0-9a-f]+)")
calc = re.compile(r"compute 0 reads (\d+)b at (0x7ffd[0-9a-f]+) writes (\d+)b at 0x[0-9a-f]+$")
scratch = {}
for r in range(n):
    for line in blocks.get(r, []):
        m = re.match(r"scratch (0x[0-9a-f]+) (\d+)", line)
        if m:
            scratch[(r, int(m.group(1), 16))] = int(m.group(2))
for r in range(n):
    areas, found = set(), 0
    for line in blocks.get(r, []):
        m = coll.match(line)
        if m:
            areas.add(int(m.group(3), 16))
            continue
        m = calc.match(line)
        if m:
            at, size = int(m.group(2), 16), int(m.group(1))
            assert at in areas, f"rank {r}: {line!r} reads an area no collective before it filled"
            assert size <= scratch[(r, at)], f"rank {r}: {line!r} reads beyond its area"
            found += 1
    want = 8 + (r == 0) + (r == n - 1) + 2 * (r > 0)
    assert sum(1 for l in blocks[r] if re.match(r"\w+: scan \d+ int32 bxor .* nonblocking$", l)) == 1, f"rank {r}: no native Iscan"
    assert found == want, f"rank {r}: {found} computed reductions, expected {want}"
print(f"{n} ranks: computed reductions as expected")
