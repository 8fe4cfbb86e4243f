#!/usr/bin/env python3
# cdag tests — tests/record/check_nbcoll.py REC LIVE CDAG [nbv]: the recording of
# tests/record/rec_nbcoll.c (rec_nbvcoll.c with `nbv`) holds its nonblocking collectives as
# such.
#
# In REC/phase-0000.cdag every rank has as many `nonblocking` lines of each kind as the
# program starts (rec_nbcoll.c: each of nine kinds once; rec_nbvcoll.c: each v- and w-kind
# once, each neighbourhood kind twice), each labelled, and one later `wait` line names each
# label; the calls the program overlapped with messages have a send and a receive between
# the call and its wait (rec_nbcoll.c: the Iallreduce and the Ibcast polled with MPI_Test;
# rec_nbvcoll.c: the Igatherv, the Ialltoallv and the neighbourhood calls). `cdag sst` of the
# phase must succeed too.
import re, subprocess, sys

from phase_blocks import rank_blocks

rec, live, cdag = sys.argv[1:4]
phase = f"{rec}/phase-0000.cdag"
if sys.argv[4:] == ["nbv"]:
    neighbour = ["neighbor_allgather", "neighbor_allgatherv", "neighbor_alltoall", "neighbor_alltoallv",
                 "neighbor_alltoallw"]
    kinds = {k: 1 for k in ["gatherv", "scatterv", "allgatherv", "alltoallv", "alltoallw"]}
    kinds.update({k: 2 for k in neighbour})
    overlapped = {"gatherv", "alltoallv", *neighbour}
else:
    kinds = {k: 1 for k in ["barrier", "bcast", "gather", "scatter", "allgather", "alltoall", "reduce", "allreduce",
                            "reduce_scatter_block"]}
    overlapped = {"allreduce", "bcast"}

blocks = rank_blocks(phase)
assert blocks, f"{phase}: no rank blocks"

for r, ops in blocks.items():
    started = []   # (kind, label, position)
    for pos, op in enumerate(ops):
        if not op.endswith(" nonblocking"):
            continue
        m = re.match(r"(\w+): (\w+) ", op + " ")
        assert m, f"rank {r}: a nonblocking call without a label: {op}"
        label, kind = m.group(1), m.group(2)
        assert kind in kinds, f"rank {r}: unexpected {kind}: {op}"
        started.append((kind, label, pos))
    got = {k: sum(1 for s in started if s[0] == k) for k in kinds}
    assert got == kinds, f"rank {r}: nonblocking calls {got}, expected {kinds}"
    for kind, label, pos in started:
        waits = [p for p, op in enumerate(ops) if p > pos and op.startswith("wait ") and label in op.split()[1:]]
        assert len(waits) == 1, f"rank {r}: {kind} ({label}) is completed by {len(waits)} waits"
        between = ops[pos + 1:waits[0]]
        if kind in overlapped:
            assert any(" send " in f" {o} " for o in between) and any(" recv " in f" {o} " for o in between), \
                f"rank {r}: no messages between the {kind} and its wait: {between}"
print(f"{len(blocks)} ranks: every kind started nonblocking, each completed by one wait")
subprocess.run([cdag, "sst", phase], check=True, stdout=subprocess.DEVNULL)
