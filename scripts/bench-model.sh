#!/usr/bin/env bash
# cdag — scripts/bench-model.sh: the LogGOPS model's speed on a linear alltoall written in
# GOAL (every rank sends to and receives from every other, 64 B, no dependencies: each
# rank's sends wait for its CPU and NIC, the case LogGOPSim retries quadratically).
# Usage: scripts/bench-model.sh [P (default 1024: 2.1 million ops)]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD:-$here/build-bench}"
p="${1:-1024}"
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCDAG_TESTS=OFF >/dev/null
cmake --build "$build" --target model_bench cdag_tool -j2 >/dev/null
file="$(mktemp --suffix=.goal)"
trap 'rm -f "$file"' EXIT
python3 - "$p" > "$file" <<'PY'
import sys
p = int(sys.argv[1])
out = ["num_ranks %d" % p]
for r in range(p):
    out.append("rank %d {" % r)
    for k in range(1, p):
        out.append("l%d: send 64b to %d tag 0" % (2 * k, (r + k) % p))
        out.append("l%d: recv 64b from %d tag 0" % (2 * k + 1, (r - k) % p))
    out.append("}")
print("\n".join(out))
PY
"$build/bench/model_bench" "$file"
/usr/bin/env time -f "cdag model (load, analysis, lowering, graph and plan modelled): %e s, %M KB" \
  "$build/cdag" model "$file" --goal-buffers=fresh >/dev/null
