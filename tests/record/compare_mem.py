#!/usr/bin/env python3
"""cdag tests — tests/record/compare_mem.py LIVE_DIR REPLAY_DIR NP [MIN_BYTES]

Every byte a test program listed in LIVE_DIR/live-R.mem (its buffers after the recorded
phase) that the recording's replay holds (REPLAY_DIR/replay-R.mem, `cdag replay --dump`)
must be equal; at least MIN_BYTES (default 1) bytes must be compared in all. Prints the
first differences (rank, address, live, replay) and exits 1 on any.

Both files are lists of ranges; they are compared range against range (a dictionary of
single bytes cost most recorder tests half a second). Where a file's ranges overlap, the
later line's bytes win, as they would written one after another."""
import bisect
import sys


def read(path):
    """The file's ranges as sorted, disjoint (address, bytes) pairs; later lines win."""
    ranges = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 3:
                continue
            addr, n, data = int(parts[0], 16), int(parts[1]), bytes.fromhex(parts[2])
            assert len(data) == n, path
            if n:
                ranges.append((addr, data))
    if all(ranges[i][0] + len(ranges[i][1]) <= ranges[i + 1][0] for i in range(len(ranges) - 1)):
        return ranges
    flat = {}
    for addr, data in ranges:   # overlapping: byte by byte, in the file's order
        for i, b in enumerate(data):
            flat[addr + i] = b
    out = []
    for a in sorted(flat):
        if out and out[-1][0] + len(out[-1][1]) == a:
            out[-1][1].append(flat[a])
        else:
            out.append((a, bytearray([flat[a]])))
    return [(a, bytes(d)) for a, d in out]


def compare(r, live, rep, bad):
    """Bytes compared and the differences found (printing the first ten of all)."""
    starts = [a for a, _ in rep]
    compared = 0
    for addr, data in live:
        end = addr + len(data)
        i = max(bisect.bisect_right(starts, addr) - 1, 0)
        while i < len(rep) and rep[i][0] < end:
            ra, rd = rep[i]
            lo, hi = max(addr, ra), min(end, ra + len(rd))
            i += 1
            if lo >= hi:
                continue
            compared += hi - lo
            x, y = data[lo - addr:hi - addr], rd[lo - ra:hi - ra]
            if x == y:
                continue
            for k in range(hi - lo):
                if x[k] != y[k]:
                    bad += 1
                    if bad <= 10:
                        print(f"rank {r} address {lo + k:#x}: live {x[k]:#04x}, replay {y[k]:#04x}")
    return compared, bad


def main():
    live_dir, rep_dir, np_ = sys.argv[1], sys.argv[2], int(sys.argv[3])
    need = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    compared = bad = 0
    for r in range(np_):
        live = read(f"{live_dir}/live-{r}.mem")
        rep = read(f"{rep_dir}/replay-{r}.mem")
        n, bad = compare(r, live, rep, bad)
        compared += n
    print(f"compared {compared} bytes, {bad} differ")
    if bad or compared < need:
        if compared < need:
            print(f"expected at least {need} bytes compared")
        sys.exit(1)


main()
