#!/usr/bin/env python3
# cdag tests — tests/record/check_nbcoll.py REC LIVE CDAG: the recording of
# tests/record/rec_nbcoll.c holds its nonblocking collectives as such.
#
# In REC/phase-0000.cdag every rank has one `nonblocking` line of each of the nine kinds
# (the program starts each once), labelled, and a later `wait` line names the label; the
# Iallreduce's wait comes after the messages and computation the program overlapped with
# it (a send and a receive between the call and its wait), and the Ibcast's after the
# exchanges polled with MPI_Test. `cdag sst` of the phase must succeed too.
import re, subprocess, sys

from phase_blocks import rank_blocks

rec, live, cdag = sys.argv[1:4]
phase = f"{rec}/phase-0000.cdag"
kinds = {"barrier", "bcast", "gather", "scatter", "allgather", "alltoall", "reduce", "allreduce",
         "reduce_scatter_block"}

blocks = rank_blocks(phase)
assert blocks, f"{phase}: no rank blocks"

for r, ops in blocks.items():
    started = {}   # kind -> (label, position)
    for pos, op in enumerate(ops):
        if not op.endswith(" nonblocking"):
            continue
        m = re.match(r"(\w+): (\w+) ", op + " ")
        assert m, f"rank {r}: a nonblocking call without a label: {op}"
        label, kind = m.group(1), m.group(2)
        assert kind in kinds and kind not in started, f"rank {r}: unexpected or repeated {kind}: {op}"
        started[kind] = (label, pos)
    assert set(started) == kinds, f"rank {r}: nonblocking calls {sorted(started)}, expected {sorted(kinds)}"
    for kind, (label, pos) in started.items():
        waits = [p for p, op in enumerate(ops) if p > pos and op.startswith("wait ") and label in op.split()[1:]]
        assert len(waits) == 1, f"rank {r}: {kind} ({label}) is completed by {len(waits)} waits"
        between = ops[pos + 1:waits[0]]
        if kind in ("allreduce", "bcast"):
            assert any(" send " in f" {o} " for o in between) and any(" recv " in f" {o} " for o in between), \
                f"rank {r}: no messages between the {kind} and its wait: {between}"
print(f"{len(blocks)} ranks: every kind started nonblocking, each completed by one wait")
subprocess.run([cdag, "sst", phase], check=True, stdout=subprocess.DEVNULL)
