#!/usr/bin/env python3
"""cdag — scripts/check-includes.py: the include graph of src/ is a DAG in the layer order.

Each directory of src/ is one layer; LAYERS lists them bottom up (docs/layout.md draws the
same order). A file may include headers of its own layer and of layers below it, never above,
and the graph of files including files has no cycle (within a layer too). A directory that is
not listed fails the check, so a new stage must be placed in the order on purpose.
Run by scripts/check-layout.sh; exits 1 naming every offending include.
"""
import os
import re
import sys

# Bottom up. A layer may include only what comes before it (and itself).
LAYERS = [
    "base",          # errors, settings, checked arithmetic: no knowledge of graphs
    "ir",            # operations, dependencies, program order, collective kinds
    "format",        # the text format (read, write)
    "wire",          # the byte encoding that moves graphs and schedules between ranks
    "mpi_glue",      # MPI datatypes and ops <-> cdag's (libcdag and the recorder)
    "workload",      # builders of known workloads (redistribution)
    "match",         # pairing sends with receives
    "stage",         # graphs that compute, cut into stages of pure communication
    "dataflow",      # SST, wait sets
    "detect",        # collectives in the SST, the plan
    "circulant",     # round-optimal circulant schedules (kernels and model)
    "choose",        # each collective's algorithm, by the cost model
    "exec/sim",      # the in-process simulator, verify
    "model",         # analysis library: LogGOPS model, lowering, GOAL
    "exec/kernels",  # cdag's collective kernels over MPI
    "exec",          # the pipeline driver
    "exec/mpi",      # distributed graphs, compile, run, replay
    "record",        # the recorder (libcdag-record) and the merger
]
RANK = {name: i for i, name in enumerate(LAYERS)}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path):
    """The layer of src-relative path: its directory, or None."""
    d = os.path.dirname(path)
    return d if d in RANK else None


def main(src):
    files = {}
    for root, _, names in os.walk(src):
        for n in names:
            if n.endswith((".c", ".h", ".def")):
                full = os.path.join(root, n)
                files[os.path.relpath(full, src)] = full
    bad = []
    edges = {f: [] for f in files}
    for f, full in sorted(files.items()):
        lf = layer_of(f)
        if lf is None:
            bad.append(f"{f}: directory {os.path.dirname(f)!r} is not a layer (scripts/check-includes.py)")
            continue
        with open(full, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for inc in INCLUDE.findall(text):
            target = inc if inc in files else os.path.join(os.path.dirname(f), inc)
            if target not in files:
                continue  # include/cdag.h, system or generated headers
            edges[f].append(target)
            lt = layer_of(target)
            if lt is not None and RANK[lt] > RANK[lf]:
                bad.append(f"{f} (layer {lf}) includes {inc} of the higher layer {lt}")
    bad += cycles(edges)
    for b in bad:
        print(f"check-includes: {b}", file=sys.stderr)
    return 1 if bad else 0


def cycles(edges):
    """Cycles of the include graph, one message each (iterative DFS, white/grey/black)."""
    state, found = {}, []
    for start in sorted(edges):
        if state.get(start):
            continue
        stack = [(start, iter(edges[start]))]
        state[start], path = 1, [start]
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
                path.pop()
            elif state.get(nxt) == 1:
                found.append("include cycle: " + " -> ".join(path[path.index(nxt):] + [nxt]))
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append((nxt, iter(edges[nxt])))
    return found


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "src")))
