#!/usr/bin/env python3
"""cdag tests — tests/exec/mpi/acc_epochs_oracle.py DUMP_DIR: the memory tests/data/replay/
acc_epochs2.cdag must leave, from the bytes `cdag replay` fills memory with (replay.c,
replay_fill_byte), against the dump of `cdag replay --dump DUMP_DIR`. Exits 1 on a difference."""
import struct
import sys

M = (1 << 64) - 1


def fill(rank, addr):
    z = (addr * 0x9E3779B97F4A7C15 ^ (rank + 1) * 0xBF58476D1CE4E5B9) & M
    z ^= z >> 31
    z = (z * 0x94D049BB133111EB) & M
    z ^= z >> 29
    return 0x38 + (z & 15)


def init(rank, addr, n):
    return bytes(fill(rank, addr + i) for i in range(n))


def read(path):
    mem = {}
    for line in open(path):
        a, n, data = line.split()
        for i, b in enumerate(bytes.fromhex(data)):
            mem[int(a, 16) + i] = b
    return mem


def main():
    d = sys.argv[1]
    seg = 0x1000
    old = struct.unpack("<4i", init(0, seg, 16))
    add = struct.unpack("<4i", init(1, 0x3000, 16))
    acc = bytearray(struct.pack("<4i", *[((x + y + 2**31) % 2**32) - 2**31 for x, y in zip(old, add)]))
    acc[12:16] = init(1, 0x3400, 4)      # the same origin's put, after the accumulate
    want0 = bytes(acc)
    want0 = want0[:4] + init(1, 0x3100, 8) + want0[12:]   # the next epoch's put
    want = {0: {seg + i: b for i, b in enumerate(want0)}, 1: {0x3200 + i: want0[i] for i in range(4)}}
    bad = 0
    for r, exp in want.items():
        got = read(f"{d}/replay-{r}.mem")
        for a, b in sorted(exp.items()):
            if got.get(a) != b:
                bad += 1
                print(f"rank {r} address {a:#x}: expected {b:#04x}, replay {got.get(a)}")
    print(f"acc_epochs2: {sum(len(e) for e in want.values())} bytes checked, {bad} differ")
    return 1 if bad else 0


sys.exit(main())
