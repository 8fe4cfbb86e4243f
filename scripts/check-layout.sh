#!/usr/bin/env bash
# cdag — the layout's rules that a grep can check (run by scripts/test.sh):
#  1. only src/exec/mpi, src/exec/kernels, the MPI glue module (src/mpi_glue: MPI's types,
#     ops and datatypes in cdag's terms, shared by libcdag and the recorder) and the
#     recorder's PMPI layer (src/record/pmpi*.[ch]) include mpi.h or call MPI functions; the other
#     stages, the simulator, the model and the rest of the recorder are plain C (cdag.h
#     brings MPI's types along, since the public header declares MPI_Comm arguments);
#  2. the include graph of src/ is a DAG in the documented layer order (scripts/check-includes.py:
#     a file includes only its own layer and those below it; no cycle);
#  3. no file of the project cites the team's private notes (by file name, or as DESIGN);
#  4. every path of the repository a file cites exists: paths under src/, tests/, docs/ and the
#     other top directories named in src, include, tools, tests, docs, scripts, examples,
#     bench, fuzz and README.md (a glob such as scripts/bench-*.sh must match a file; a
#     stem such as tools/cmd_<name>.c must begin one), and every document a doc names
#     (format.md, kernel-choice.md, ...) is in docs/. Paths of other projects are listed in
#     `external` below.
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0
say() { echo "check-layout: $*" >&2; fail=1; }

mpi_files=$(grep -rlE '#include[[:space:]]*<mpi\.h>|\bP?MPI_[A-Z][a-z_]+[[:space:]]*\(' src tools \
              --include=*.c --include=*.h | grep -vE '^src/exec/(mpi|kernels)/|^src/mpi_glue/|^src/record/pmpi[^/]*\.[ch]$' || true)
[ -z "$mpi_files" ] || say "MPI used outside src/exec/mpi, src/exec/kernels, src/mpi_glue and src/record/pmpi*: $mpi_files"

python3 scripts/check-includes.py src || say "the include graph of src/ is not a DAG in the layer order (above)"

cites=$(grep -rnE '\.\./shared|SEEDS-NOTES|\b(FORMAT|API|DESIGN)\.md|\bDESIGN\b' src include tools tests examples bench docs README.md \
          scripts fuzz cmake CMakeLists.txt --exclude=check-layout.sh || true)
[ -z "$cites" ] || say "cites documents the project does not ship: $cites"

roots='src|include|tools|tests|docs|scripts|examples|bench|fuzz|fortran|cmake'
external='src/LogGOPSim/'   # LogGOPSim's own tree (its txt2bin grammar is cited)
missing=$(grep -rnoE "(^|[^A-Za-z0-9_./\$-])($roots)/[A-Za-z0-9_./*+-]*[A-Za-z0-9_*]" src include tools tests docs \
            README.md scripts examples bench fuzz --exclude-dir=data --exclude-dir=corpus --exclude=check-layout.sh |
          sed -E 's/^([^:]*:[0-9]+:)[^A-Za-z]*/\1/' |
          while IFS= read -r hit; do
            path=${hit#*:*:}
            case $path in "$external"*) continue ;; esac
            [ -e "$path" ] || compgen -G "$path*" >/dev/null || echo "$hit"
          done)
missing+=$(grep -noE '(^|[^A-Za-z0-9_./-])[a-z][a-z_-]*\.md\b' docs/*.md | sed -E 's/^([^:]*:[0-9]+:)[^a-z]*/\1/' |
           while IFS= read -r hit; do [ -e "docs/${hit#*:*:}" ] || echo "$hit"; done)
[ -z "$missing" ] || say "cites paths that do not exist: $missing"

[ $fail = 0 ] && echo "check-layout: ok"
exit $fail
