#!/usr/bin/env bash
# cdag — scripts/bench-record.sh: what recording costs (a benchmark, not a test).
# Usage: scripts/bench-record.sh [nprocs (default 2)] [max bytes (default 1024)]
# Runs the MPI benchmark (bench/mpi_bench.c, alltoall) plainly and under `cdag record`, and
# prints per message size the microseconds per run of its hand-written loop (Irecv and
# Isend to every rank, one Waitall: 2P+1 intercepted calls per run) and of MPI_Alltoall (one
# call) both ways, the time recording adds per intercepted call, and the recording's size
# on disk per operation. Build directory: $BUILD (default build-bench).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD:-$here/build-bench}"
np="${1:-2}"
maxb="${2:-1024}"
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCDAG_TESTS=OFF >/dev/null
cmake --build "$build" --target mpi_bench cdag_tool cdag_record -j2 >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mpiexec -n "$np" "$build/bench/mpi_bench" "$maxb" alltoall >"$out/plain.txt"
"$build/cdag" record -o "$out/rec" -- mpiexec -n "$np" "$build/bench/mpi_bench" "$maxb" alltoall >"$out/rec.txt"
python3 - "$out" "$np" <<'PY'
import json, os, sys
out, np_ = sys.argv[1], int(sys.argv[2])
def table(path):
    rows = {}
    for line in open(path):
        f = line.split()
        if len(f) >= 5 and f[0] == "alltoall":
            rows[int(f[1])] = (float(f[2]), float(f[3]))
    return rows
plain, rec = table(f"{out}/plain.txt"), table(f"{out}/rec.txt")
calls = 2 * np_ + 1
print(f"recording cost at {np_} processes (bench/mpi_bench alltoall; us per run, best of 9 batches)")
print(f"{'bytes':>9} {'p2p':>9} {'p2p rec':>9} {'us/call':>8} {'mpi':>9} {'mpi rec':>9} {'us/call':>8}")
for n in sorted(plain):
    p, m = plain[n]
    pr, mr = rec.get(n, (float('nan'), float('nan')))
    print(f"{n:>9} {p:>9.2f} {pr:>9.2f} {(pr - p) / calls:>8.3f} {m:>9.2f} {mr:>9.2f} {mr - m:>8.3f}")
idx = json.load(open(f"{out}/rec/index.json"))
ops = sum(p["ops"] for p in idx["phases"])
size = sum(os.path.getsize(f"{out}/rec/{p['file']}") for p in idx["phases"])
print(f"recording: {ops} operations in {size} bytes: {size / max(ops, 1):.1f} bytes per operation on disk")
print(f"intercepted calls: {sum(idx['calls'].values())}; local operations added: {idx['local']}")
PY
