#!/usr/bin/env bash
# cdag — the layout's rules that a grep can check (run by scripts/test.sh):
#  1. only src/exec/mpi, src/exec/kernels, the MPI glue module (src/mpi_glue: MPI's types,
#     ops and datatypes in cdag's terms, shared by libcdag and the recorder) and the
#     recorder's PMPI layer (src/record/pmpi.c) include mpi.h or call MPI functions; the other
#     stages, the simulator, the model and the rest of the recorder are plain C (cdag.h
#     brings MPI's types along, since the public header declares MPI_Comm arguments);
#  2. no stage includes a header of a stage above it (ir < match < dataflow < detect < exec;
#     the recorder may use ir and match, mpi_glue only ir);
#  3. no file of the project cites the team's private notes.
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0
say() { echo "check-layout: $*" >&2; fail=1; }

mpi_files=$(grep -rlE '#include[[:space:]]*<mpi\.h>|\bP?MPI_[A-Z][a-z_]+[[:space:]]*\(' src tools \
              --include=*.c --include=*.h | grep -vE '^src/exec/(mpi|kernels)/|^src/mpi_glue/|^src/record/pmpi\.c$' || true)
[ -z "$mpi_files" ] || say "MPI used outside src/exec/mpi, src/exec/kernels, src/mpi_glue and src/record/pmpi.c: $mpi_files"

check_up() {  # dir, then the directories it must not include
  local dir=$1; shift
  for up in "$@"; do
    hits=$(grep -rn "#include \"$up/" "src/$dir" || true)
    [ -z "$hits" ] || say "src/$dir includes a higher stage ($up): $hits"
  done
}
check_up ir match dataflow detect exec mpi_glue
check_up mpi_glue match dataflow detect exec record
check_up match dataflow detect exec mpi_glue
check_up dataflow detect exec mpi_glue
check_up detect exec mpi_glue
check_up record exec detect dataflow   # merge.c applies match's rule (match_pair_ends)
check_up exec/sim exec/mpi exec/kernels/kernel exec/pipeline mpi_glue
check_up exec/model exec/mpi exec/kernels/kernel exec/sim exec/pipeline mpi_glue

cites=$(grep -rnE '\.\./shared|SEEDS-NOTES|\b(FORMAT|API|DESIGN)\.md' src include tools tests examples bench docs README.md \
          scripts fuzz cmake CMakeLists.txt --exclude=check-layout.sh || true)
[ -z "$cites" ] || say "cites documents the project does not ship: $cites"

[ $fail = 0 ] && echo "check-layout: ok"
exit $fail
