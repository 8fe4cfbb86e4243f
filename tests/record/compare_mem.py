#!/usr/bin/env python3
"""cdag tests — tests/record/compare_mem.py LIVE_DIR REPLAY_DIR NP [MIN_BYTES]

Every byte a test program listed in LIVE_DIR/live-R.mem (its buffers after the recorded
phase) that the recording's replay holds (REPLAY_DIR/replay-R.mem, `cdag replay --dump`)
must be equal; at least MIN_BYTES (default 1) bytes must be compared in all. Prints the
first differences (rank, address, live, replay) and exits 1 on any."""
import sys


def read(path):
    mem = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 3:
                continue
            addr, n, data = int(parts[0], 16), int(parts[1]), bytes.fromhex(parts[2])
            assert len(data) == n, path
            for i, b in enumerate(data):
                mem[addr + i] = b
    return mem


def main():
    live_dir, rep_dir, np_ = sys.argv[1], sys.argv[2], int(sys.argv[3])
    need = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    compared = bad = 0
    for r in range(np_):
        live = read(f"{live_dir}/live-{r}.mem")
        rep = read(f"{rep_dir}/replay-{r}.mem")
        for a, b in sorted(live.items()):
            if a not in rep:
                continue
            compared += 1
            if rep[a] != b:
                bad += 1
                if bad <= 10:
                    print(f"rank {r} address {a:#x}: live {b:#04x}, replay {rep[a]:#04x}")
    print(f"compared {compared} bytes, {bad} differ")
    if bad or compared < need:
        if compared < need:
            print(f"expected at least {need} bytes compared")
        sys.exit(1)


main()
