#!/usr/bin/env bash
# cdag tests — tests/cli/kernel_choice.sh CDAG SOURCE_DIR: `cdag analyze` says how every
# collective would run (MPI's collective or a cdag kernel) and why, as the executor decides:
# CDAG_KERNEL=mpi|cdag|auto (auto: the default model, CDAG_ALPHA/CDAG_BETA); a bad value is
# an error with exit 1.
set -u
cdag=$1
src=$2
. "$src/tests/cli/lib/expect.sh"
# These cases test what detection finds and how each collective would run; the price
# (tests/cli/price.sh) would leave small candidates as the messages they were.
export CDAG_PRICE=0
ex=$src/examples/graphs
unset CDAG_KERNEL CDAG_ALPHA CDAG_BETA

# auto: a small int32 sum allreduce on 4 ranks runs as the census kernel (the model's numbers)
cases <<'T'
0 cdag analyze "$ex/allreduce_ring4.cdag"
  out~   algorithm: census \(allreduce: census[ ]
  out~  < MPI[ ]
0 cdag analyze --json "$ex/allreduce_ring4.cdag"
  out~ "type": "int32", "op": "sum", "algorithm": "census", "why": "allreduce: census[ ]
# auto: a 64 B bcast on 8 ranks stays MPI's (the kernel is no clear gain)
0 cdag analyze "$ex/bcast_binomial8.cdag"
  out~   algorithm: mpi \(bcast: circulant[ ]
  out >=0.9x MPI binomial
# kinds without a kernel say so
0 cdag analyze --json "$ex/alltoall_butterfly4.cdag"
  out "algorithm": "mpi", "why": "alltoall: MPI (no cdag kernel for this kind)"

# CDAG_KERNEL=mpi and =cdag force the side
0 CDAG_KERNEL=mpi cdag analyze "$ex/allreduce_ring4.cdag"
  out   algorithm: mpi (allreduce: MPI (kernel policy mpi))
0 CDAG_KERNEL=cdag cdag analyze --json "$ex/bcast_binomial8.cdag"
  out~ "algorithm": "circulant", "why": "bcast: circulant[ ]
  out circulant forced (kernel policy cdag)"
0 CDAG_KERNEL=cdag cdag analyze --json "$src/tests/data/detect/allgather_bruck6.cdag"
  out "kind": "allgather", "root": null, "ranks": "all", "bytes": 32, "transfers": 36, "algorithm": "circulant"
0 CDAG_KERNEL=auto cdag analyze "$ex/allreduce_ring4.cdag"
  out   algorithm: census
# --kernel= sets the policy (options.kernel); an explicit --kernel wins over CDAG_KERNEL,
# which applies where the option keeps its default
0 cdag analyze --kernel=mpi "$ex/allreduce_ring4.cdag"
  out   algorithm: mpi (allreduce: MPI (kernel policy mpi))
0 CDAG_KERNEL=cdag cdag analyze --kernel=mpi --json "$ex/bcast_binomial8.cdag"
  out "algorithm": "mpi", "why": "bcast: MPI (kernel policy mpi)"
0 CDAG_KERNEL=mpi cdag analyze --kernel=cdag --json "$ex/bcast_binomial8.cdag"
  out circulant forced (kernel policy cdag)"
0 cdag goal --plan --kernel=cdag "$ex/bcast_binomial8.cdag"
2 cdag analyze --kernel=fast "$ex/allreduce_ring4.cdag"
  err cdag: --kernel=fast: expected mpi, cdag or auto

# the model's parameters move the choice: costly bytes favour the n-block kernel, costly
# latency MPI's binomial tree
0 CDAG_BETA=1e-6 cdag analyze "$ex/bcast_binomial8.cdag"
  out~   algorithm: circulant \(bcast: circulant[ ]
0 CDAG_ALPHA=1e-4 cdag analyze "$ex/bcast_binomial8.cdag"
  out   algorithm: mpi (bcast: circulant 300 us >=0.9x MPI binomial 300 us (p=8, 64 B))

# a bad policy is an error naming it, exit 1, nothing on stdout
1 CDAG_KERNEL=bogus cdag analyze "$ex/bcast_binomial8.cdag"
  err CDAG_KERNEL=bogus: expected mpi, cdag or auto
  empty
0 CDAG_ALPHA=2e-6 CDAG_BLOCKS=4 cdag analyze "$ex/bcast_binomial8.cdag"
T
# every CDAG_* variable is validated, for every command, and named when bad
for bad in CDAG_ALPHA=abc CDAG_BETA=-1 CDAG_BLOCKS=0 CDAG_BLOCKS=3x CDAG_DETECT=2 CDAG_MEASURE=yes; do
  cases <<T
1 $bad cdag check "\$ex/bcast_binomial8.cdag"
  err $bad: expected
T
done
finish
