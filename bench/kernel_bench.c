/* cdag — bench/kernel_bench.c: cdag's collective kernels against MPI's collectives.
 *
 * Part 1 (measured, any number of processes, meant for 2): microseconds per call of each
 * kernel of src/exec/kernels/kernel.h, built once and run with kern_run, next to the MPI collective
 * on the same buffers (MPI_Bcast, MPI_Allgather, MPI_Allgatherv, MPI_Reduce, MPI_Allreduce on
 * int32 sums), for a few message sizes; best of several batches, the two variants taking
 * turns. Part 2 (the model, printed by rank 0): the alpha-beta model measured at start-up
 * predicts the broadcast time for p = 2^4 .. 2^16 with the n-block circulant schedule, a
 * binomial tree and scatter + allgather, and the choice kern_model_choose makes; the same
 * for allreduce (circulant reduce + bcast, census, binomial, Rabenseifner).
 * Run: scripts/bench-kernels.sh [nprocs] [max bytes]. Timings only: no correctness checks
 * here (tests/exec/kernels does those). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/kernels/kernel.h"

enum { BATCHES = 7 };

static int rank, size;

/* Seconds per call of either the kernel (op) or the MPI collective (which), best batch. */
typedef struct {
  int kind;
  kern_op *op;
  void *send, *recv;
  int count;            /* bytes (int32 elements for reductions) */
  int *counts, *displs; /* allgatherv */
} bench_case;

static void mpi_call(const bench_case *c) {
  switch (c->kind) {
  case IR_COLL_BCAST: MPI_Bcast(c->recv, c->count, MPI_BYTE, 0, MPI_COMM_WORLD); break;
  case IR_COLL_ALLGATHER: MPI_Allgather(c->send, c->count, MPI_BYTE, c->recv, c->count, MPI_BYTE, MPI_COMM_WORLD); break;
  case IR_COLL_ALLGATHERV:
    MPI_Allgatherv(c->send, c->count, MPI_BYTE, c->recv, c->counts, c->displs, MPI_BYTE, MPI_COMM_WORLD);
    break;
  case IR_COLL_REDUCE: MPI_Reduce(c->send, c->recv, c->count, MPI_INT32_T, MPI_SUM, 0, MPI_COMM_WORLD); break;
  default: MPI_Allreduce(c->send, c->recv, c->count, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD); break;
  }
}

static double batch(const bench_case *c, int use_kernel, int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; i++) {
    if (use_kernel)
      kern_run(c->op);
    else
      mpi_call(c);
  }
  double t = (MPI_Wtime() - t0) / iters, tmax = 0;
  MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return tmax;
}

static int build(bench_case *c, const kern_group *g, size_t bytes) {
  uint64_t sa = (uint64_t)(uintptr_t)c->send, ra = (uint64_t)(uintptr_t)c->recv;
  uint64_t sl = bytes, rl = bytes * (uint64_t)size, cnt[1024];
  kern_iov s = {&sa, &sl, 1}, r = {&ra, &rl, 1}, one = {&ra, &sl, 1};
  c->count = (int)bytes;
  switch (c->kind) {
  case IR_COLL_BCAST: return kern_bcast_init(g, 0, one, &c->op);
  case IR_COLL_ALLGATHER: return kern_allgather_init(g, s, r, &c->op);
  case IR_COLL_ALLGATHERV:
    for (int j = 0; j < size; j++) {
      cnt[j] = bytes;
      c->counts[j] = (int)bytes;
      c->displs[j] = (int)(bytes * (size_t)j);
    }
    return kern_allgatherv_init(g, s, r, cnt, &c->op);
  default:
    c->count = (int)(bytes / 4);
    sl = (uint64_t)c->count * 4;
    if (c->kind == IR_COLL_REDUCE) return kern_reduce_init(g, 0, s, one, (uint64_t)c->count, CDAG_INT32, CDAG_SUM, &c->op);
    return kern_allreduce_init(g, s, one, (uint64_t)c->count, CDAG_INT32, CDAG_SUM, &c->op);
  }
}

static void measured(size_t maxbytes, const kern_model *m) {
  kern_group g = {MPI_COMM_NULL, NULL, 0, m, 0, KERN_ALG_AUTO};
  MPI_Comm_dup(MPI_COMM_WORLD, &g.comm);
  unsigned char *send = calloc(1, maxbytes), *recv = calloc((size_t)size, maxbytes);
  int *counts = calloc((size_t)size, sizeof *counts), *displs = calloc((size_t)size, sizeof *displs);
  if (rank == 0) {
    printf("# measured: microseconds per call, %d processes (best of %d batches)\n", size, BATCHES);
    printf("%-11s %10s %12s %12s %8s  %s\n", "kernel", "bytes", "MPI", "cdag", "cdag/MPI", "cdag kernel");
  }
  for (int kind = 0; kind < IR_COLL_NKINDS; kind++)   /* the kinds cdag has kernels for */
    for (size_t bytes = 8; bytes <= maxbytes && ir_coll_get(kind)->kernel; bytes *= 16) {
      bench_case c = {kind, NULL, send, recv, 0, counts, displs};
      if (build(&c, &g, bytes) != CDAG_OK) {
        if (rank == 0) printf("%-11s %10zu build failed: %s\n", ir_coll_name(kind), bytes, cdag_error_message());
        continue;
      }
      int iters = bytes >= (1 << 20) ? 20 : bytes >= (1 << 16) ? 200 : 2000;
      double best_mpi = 1e30, best_k = 1e30;
      batch(&c, 0, iters / 10 + 1);
      batch(&c, 1, iters / 10 + 1);
      for (int b = 0; b < BATCHES; b++) {
        double tm = batch(&c, 0, iters), tk = batch(&c, 1, iters);
        if (tm < best_mpi) best_mpi = tm;
        if (tk < best_k) best_k = tk;
      }
      if (rank == 0)
        printf("%-11s %10zu %12.2f %12.2f %8.2f  %s\n", ir_coll_name(kind), bytes, best_mpi * 1e6, best_k * 1e6,
               best_k / best_mpi, kern_describe(c.op));
      kern_free(&c.op);
    }
  MPI_Comm_free(&g.comm);
  free(send);
  free(recv);
  free(counts);
  free(displs);
}

static void predicted(const kern_model *m) {
  static const uint64_t sizes[] = {1 << 10, 1 << 16, 1 << 20, 1 << 24};
  printf("\n# model: alpha %.3g s, beta %.3g s/B; predicted bcast time in microseconds\n", m->alpha, m->beta);
  printf("%7s %10s %6s %12s %12s %12s %8s  %s\n", "p", "bytes", "n", "circulant", "binomial", "scat+allg",
         "best/circ", "kern_model_choose");
  for (int lg = 4; lg <= 16; lg += 2)
    for (int s = 0; s < 4; s++) {
      int p = 1 << lg;
      uint64_t bytes = sizes[s];
      double circ = kern_model_circulant(m, IR_COLL_BCAST, p, bytes), bin = kern_model_binomial(m, IR_COLL_BCAST, p, bytes);
      double sag = kern_model_scatter_allgather(m, IR_COLL_BCAST, p, bytes), best = bin < sag ? bin : sag;
      char why[160];
      kern_model_choose(m, IR_COLL_BCAST, p, bytes, why, sizeof why);
      printf("%7d %10llu %6d %12.1f %12.1f %12.1f %8.2f  %s\n", p, (unsigned long long)bytes,
             kern_model_blocks(m, p, bytes, 1), circ * 1e6, bin * 1e6, sag * 1e6, best / circ, why);
    }
}

/* Allreduce: circulant reduce + bcast, census, binomial reduce + bcast, Rabenseifner. */
static void predicted_allreduce(const kern_model *m) {
  static const uint64_t sizes[] = {8, 1 << 10, 1 << 16, 1 << 20, 1 << 24};
  printf("\n# model: predicted allreduce time in microseconds\n");
  printf("%7s %10s %12s %12s %12s %12s  %s\n", "p", "bytes", "circ r+b", "census", "binomial", "rabenseif.",
         "kern_model_choose");
  for (int lg = 4; lg <= 16; lg += 4)
    for (int s = 0; s < 5; s++) {
      int p = 1 << lg;
      uint64_t b = sizes[s];
      char why[160];
      kern_model_choose(m, IR_COLL_ALLREDUCE, p, b, why, sizeof why);
      printf("%7d %10llu %12.1f %12.1f %12.1f %12.1f  %s\n", p, (unsigned long long)b,
             kern_model_circulant(m, IR_COLL_ALLREDUCE, p, b) * 1e6, kern_model_census(m, p, b) * 1e6,
             kern_model_binomial(m, IR_COLL_ALLREDUCE, p, b) * 1e6,
             kern_model_scatter_allgather(m, IR_COLL_ALLREDUCE, p, b) * 1e6, why);
    }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  size_t maxbytes = argc > 1 ? (size_t)atol(argv[1]) : (size_t)1 << 20;
  if (size > 1024 || maxbytes < 8 || maxbytes > ((size_t)1 << 28) / (size_t)size) {
    if (rank == 0) fprintf(stderr, "kernel_bench: at most 1024 processes and 256 MiB in all\n");
    MPI_Finalize();
    return 2;
  }
  kern_model m;
  kern_model_measure(MPI_COMM_WORLD, &m);
  measured(maxbytes, &m);
  if (rank == 0) {
    predicted(&m);
    predicted_allreduce(&m);
  }
  MPI_Finalize();
  return 0;
}
