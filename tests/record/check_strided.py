#!/usr/bin/env python3
# cdag tests — tests/record/check_strided.py REC LIVE CDAG: the recording of
# tests/record/rec_strided.c packs the indexed type's bytes once for the two sends that find
# them unchanged: each rank's second send of them is from the first one's packing area, with
# no copies of its own, and the rank has two copies at listed steps into a packing area (that
# first send, and the send after the refill), not three.
import re, sys

from phase_blocks import rank_blocks

blocks = rank_blocks(f"{sys.argv[1]}/phase-0000.cdag")
for r, lines in blocks.items():
    sends = [m.group(1) for m in (re.match(r"(?:\w+: )?send \d+b .*addr (0x[0-9a-f]+)", l) for l in lines) if m]
    again = [a for i, a in enumerate(sends) if a in sends[:i]]
    packs = [l for l in lines if " from_steps " in l and " to 0x7ffd" in l]
    assert len(again) == 1, f"rank {r}: sends from a packing area used before: {again}, expected one"
    assert len(packs) == 2, f"rank {r}: {len(packs)} copies at listed steps into packing areas, expected 2"
print("check_strided: ok")
