#!/usr/bin/env python3
# cdag tests — tests/record/check_pipeline.py REC LIVE CDAG [sst]: the recording of
# tests/record/rec_pipeline.c says what the program computed, and when.
#
# LIVE/panels-R.txt lists `K ADDR BYTES SPUN_NS` for each panel rank R computed. In
# REC/phase-0000.cdag, every panel after the first must be written on its owner by a
# `compute COST reads all writes BYTES at ADDR` before the owner's first send of it, with a
# cost at least the time spun (the recorder's gap holds the spin); panel 0 was computed
# before any receive and stays rank 0's initial data (no computation writes it); the other
# ranks compute nothing they send. All costs together (index.json's compute ns) are at
# least the time spun and at most the ranks' lives between their MPI calls
# (LIVE/elapsed-R.txt, plus 5 ms each for the calls at either end): a machine that
# deschedules ranks between calls adds any amount of time (12 to 45 times the spin with 4
# ranks beside 4 busy processes on 2 cores).
# With `sst`: in `cdag sst`, every panel travels in a later stage than the panel it was
# computed from (computed bytes are not data that existed at the start: a stage's SST
# starts from what the computations before it left).
import json, re, subprocess, sys

from phase_blocks import rank_blocks

rec, live, cdag = sys.argv[1:4]
want_sst = len(sys.argv) > 4 and sys.argv[4] == "sst"
phase = f"{rec}/phase-0000.cdag"
index = json.load(open(f"{rec}/index.json"))
nprocs = index["nprocs"]

panels = {}   # rank -> [(k, addr, bytes, spun)]
for r in range(nprocs):
    with open(f"{live}/panels-{r}.txt") as f:
        panels[r] = [tuple(int(x, 0) for x in line.split()) for line in f if line.strip()]

ops = {r: [re.sub(r"^\w+: ", "", l) for l in b] for r, b in rank_blocks(phase).items()}   # rank -> lines in order

errors = []
compute_re = re.compile(r"compute (\d+) reads all writes (\d+)b at (0x[0-9a-f]+)")
for r in range(nprocs):
    writes = [(i, compute_re.match(op)) for i, op in enumerate(ops.get(r, []))]
    writes = [(i, int(m.group(1)), int(m.group(2)), int(m.group(3), 16)) for i, m in writes if m]
    mine = {addr: (k, n, spun) for k, addr, n, spun in panels[r]}
    for i, cost, n, addr in writes:
        if addr not in mine or mine[addr][0] == 0:
            errors.append(f"rank {r}: a computation writes {n} B at {addr:#x}, no panel it computed after a receive")
    for addr, (k, n, spun) in mine.items():
        sends = [i for i, op in enumerate(ops[r]) if op.startswith("send ") and f"addr {addr:#x}" in op]
        if not sends:
            errors.append(f"rank {r}: panel {k} at {addr:#x} is never sent")
            continue
        before = [w for w in writes if w[3] == addr and w[0] < sends[0]]
        if k == 0:
            continue   # computed before any receive: initial data, checked above
        if len(before) != 1 or before[0][2] != n:
            errors.append(f"rank {r}: panel {k} at {addr:#x} ({n} B) has {len(before)} computations writing it before its first send")
        elif before[0][1] < spun:
            errors.append(f"rank {r}: panel {k}'s computation costs {before[0][1]} ns, less than the {spun} ns spun before it")

spun_total = sum(p[3] for r in panels for p in panels[r])
lives = sum(int(open(f"{live}/elapsed-{r}.txt").read()) + 5_000_000 for r in range(nprocs))
ns = index["compute"]["ns"]
if not spun_total <= ns <= lives:
    errors.append(f"index.json: {ns} ns of computation recorded for {spun_total} ns spun, {lives} ns lived")
if index["phases"][0]["compute_ns"] != ns or index["phases"][0]["computes"] != index["compute"]["ops"]:
    errors.append(f"index.json: the phase's computations differ from the total: {index}")
costs = sum(int(m.group(1)) for r in ops for op in ops[r] for m in [re.match(r"compute (\d+)", op)] if m)
if costs != ns:
    errors.append(f"the phase file's costs sum to {costs} ns, index.json says {ns}")

if want_sst:
    # each stage's SST starts from the memory the computations before it left: a panel
    # computed from the one before must travel in a later stage than that one
    out = subprocess.run([cdag, "sst", phase], capture_output=True, text=True, check=True).stdout
    owner = {(r, addr): (k, n) for r in panels for k, addr, n, _ in panels[r]}
    stages, stage = {}, 0   # panel -> stages its transfers are in
    for line in out.splitlines():
        m = re.match(r"stage (\d+):", line)
        if m:
            stage = int(m.group(1))
        m = re.match(r"\s+0x[0-9a-f]+ <- rank (\d+) (0x[0-9a-f]+) \((\d+) B\)", line)
        if not m:
            continue
        src, a = int(m.group(1)), int(m.group(2), 16)
        for (r, addr), (k, n) in owner.items():
            if r == src and addr <= a < addr + n:
                stages.setdefault(k, set()).add(stage)
    K = max(stages) + 1 if stages else 0
    if K != sum(len(panels[r]) for r in panels):
        errors.append(f"cdag sst: transfers of {K} panels, expected every panel's: {out}")
    for k in range(1, K):
        if k in stages and k - 1 in stages and min(stages[k]) <= max(stages[k - 1]):
            errors.append(f"cdag sst: panel {k} travels in stages {sorted(stages[k])}, not after panel {k - 1} "
                          f"(stages {sorted(stages[k - 1])}) from which it was computed")

for e in errors:
    print("FAIL:", e)
sys.exit(1 if errors else 0)
