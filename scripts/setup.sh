#!/usr/bin/env bash
# cdag — set up a fresh Debian machine: install dependencies, build, and run the main job
# (`cdag analyze`) on a built-in example graph.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
command -v ninja >/dev/null && export CMAKE_GENERATOR=${CMAKE_GENERATOR:-Ninja}   # as scripts/test.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
echo "== cdag analyze examples/graphs/alltoall_butterfly4.cdag"
./build/cdag analyze examples/graphs/alltoall_butterfly4.cdag
