#!/usr/bin/env bash
# cdag tests — tests/cli/kernel_choice.sh CDAG SOURCE_DIR: `cdag analyze` says how every
# collective would run (MPI's collective or a cdag kernel) and why, as the executor decides:
# CDAG_KERNEL=mpi|cdag|auto (auto: the default model, CDAG_ALPHA/CDAG_BETA); a bad value is
# an error with exit 1.
set -u
cdag=$1
src=$2
. "$src/tests/cli/lib/expect.sh"
ex=$src/examples/graphs
unset CDAG_KERNEL CDAG_ALPHA CDAG_BETA

# auto: a small int32 sum allreduce on 4 ranks runs as the census kernel (the model's numbers)
expect_status 0 "$cdag" analyze "$ex/allreduce_ring4.cdag"
expect_out "  algorithm: census (allreduce: census "
expect_out " < MPI "
expect_status 0 "$cdag" analyze --json "$ex/allreduce_ring4.cdag"
expect_out '"type": "int32", "op": "sum", "algorithm": "census", "why": "allreduce: census '
# auto: a 64 B bcast on 8 ranks stays MPI's (the kernel is no clear gain)
expect_status 0 "$cdag" analyze "$ex/bcast_binomial8.cdag"
expect_out "  algorithm: mpi (bcast: circulant "
expect_out ">=0.9x MPI binomial"
# kinds without a kernel say so
expect_status 0 "$cdag" analyze --json "$ex/alltoall_butterfly4.cdag"
expect_out '"algorithm": "mpi", "why": "alltoall: MPI (no cdag kernel for this kind)"'

# CDAG_KERNEL=mpi and =cdag force the side
CDAG_KERNEL=mpi expect_status 0 "$cdag" analyze "$ex/allreduce_ring4.cdag"
expect_out "  algorithm: mpi (allreduce: MPI (kernel policy mpi))"
CDAG_KERNEL=cdag expect_status 0 "$cdag" analyze --json "$ex/bcast_binomial8.cdag"
expect_out '"algorithm": "circulant", "why": "bcast: circulant '
expect_out 'circulant forced (kernel policy cdag)"'
CDAG_KERNEL=cdag expect_status 0 "$cdag" analyze --json "$src/tests/data/detect/allgather_bruck6.cdag"
expect_out '"kind": "allgather", "root": null, "ranks": "all", "bytes": 32, "transfers": 36, "algorithm": "circulant"'
CDAG_KERNEL=auto expect_status 0 "$cdag" analyze "$ex/allreduce_ring4.cdag"
expect_out "  algorithm: census"
# --kernel= sets the policy (options.kernel); an explicit --kernel wins over CDAG_KERNEL,
# which applies where the option keeps its default
expect_status 0 "$cdag" analyze --kernel=mpi "$ex/allreduce_ring4.cdag"
expect_out "  algorithm: mpi (allreduce: MPI (kernel policy mpi))"
CDAG_KERNEL=cdag expect_status 0 "$cdag" analyze --kernel=mpi --json "$ex/bcast_binomial8.cdag"
expect_out '"algorithm": "mpi", "why": "bcast: MPI (kernel policy mpi)"'
CDAG_KERNEL=mpi expect_status 0 "$cdag" analyze --kernel=cdag --json "$ex/bcast_binomial8.cdag"
expect_out 'circulant forced (kernel policy cdag)"'
expect_status 0 "$cdag" goal --plan --kernel=cdag "$ex/bcast_binomial8.cdag"
expect_status 2 "$cdag" analyze --kernel=fast "$ex/allreduce_ring4.cdag"
expect_err "cdag: --kernel=fast: expected mpi, cdag or auto"

# the model's parameters move the choice: costly bytes favour the n-block kernel, costly
# latency MPI's binomial tree
CDAG_BETA=1e-6 expect_status 0 "$cdag" analyze "$ex/bcast_binomial8.cdag"
expect_out "  algorithm: circulant (bcast: circulant "
CDAG_ALPHA=1e-4 expect_status 0 "$cdag" analyze "$ex/bcast_binomial8.cdag"
expect_out "  algorithm: mpi (bcast: circulant 300 us >=0.9x MPI binomial 300 us (p=8, 64 B))"

# a bad policy is an error naming it, exit 1, nothing on stdout
CDAG_KERNEL=bogus expect_status 1 "$cdag" analyze "$ex/bcast_binomial8.cdag"
expect_err "CDAG_KERNEL=bogus: expected mpi, cdag or auto"
[ -s "$tmp/out" ] && fail "CDAG_KERNEL=bogus printed a report"
# every CDAG_* variable is validated, for every command, and named when bad
for bad in CDAG_ALPHA=abc CDAG_BETA=-1 CDAG_BLOCKS=0 CDAG_BLOCKS=3x CDAG_DETECT=2 CDAG_MEASURE=yes; do
  env "$bad" "$cdag" check "$ex/bcast_binomial8.cdag" >"$tmp/out" 2>"$tmp/err"
  [ $? -eq 1 ] || fail "$bad: cdag check did not fail"
  expect_err "$bad: expected"
done
CDAG_ALPHA=2e-6 CDAG_BLOCKS=4 expect_status 0 "$cdag" analyze "$ex/bcast_binomial8.cdag"
finish
