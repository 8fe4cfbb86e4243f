/* cdag MPI test — native collectives in a distributed graph (run with mpiexec -n 1..8).
 *
 * What `cdag replay` does with a recording: each process adds its part of MPI collective
 * calls (ir_add_coll, with a communicator of the even ranks too) to its own graph, on real
 * buffers. Compiled with detection on and off, three runs with fresh inputs must leave what
 * MPI's own calls leave on copies of the same inputs: bcast, gather, scatter, allgather,
 * alltoall, reduce, allreduce, reduce_scatter_block, in place and not, and a barrier. Exit 0
 * on success. */
#include <stdio.h>
#include <string.h>

#include "exec/mpi/schedule.h"
#include "mpi_test.h"

enum { K = 3, MAXP = 8 };   /* int32 elements per block */

typedef struct {
  int32_t in[8][MAXP * K], out[8][MAXP * K];
} bufs;

static void fill(bufs *b, int R, int it) {
  for (int c = 0; c < 8; c++)
    for (int i = 0; i < MAXP * K; i++) {
      b->in[c][i] = 100000 * it + 1000 * R + 10 * c + i;
      b->out[c][i] = -1 - i;
    }
}

static uint64_t A(const void *p) { return (uint64_t)(uintptr_t)p; }

/* The calls, added to g on buffers b (g == NULL: made with MPI on b instead). */
static void calls(cdag_graph *g, bufs *b, int R, int P, MPI_Comm even, int E, int nE) {
  int root = P - 1, bytes = K * 4;
  if (!g) {
    MPI_Bcast(b->out[0], K, MPI_INT32_T, root, MPI_COMM_WORLD);
    MPI_Gather(b->in[1], K, MPI_INT32_T, b->out[1], K, MPI_INT32_T, root, MPI_COMM_WORLD);
    MPI_Scatter(b->in[2], K, MPI_INT32_T, b->out[2], K, MPI_INT32_T, 0, MPI_COMM_WORLD);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b->out[3], K, MPI_INT32_T, MPI_COMM_WORLD);
    MPI_Alltoall(b->in[4], K, MPI_INT32_T, b->out[4], K, MPI_INT32_T, MPI_COMM_WORLD);
    MPI_Reduce(R == root ? MPI_IN_PLACE : b->out[5], b->out[5], K, MPI_INT32_T, MPI_SUM, root, MPI_COMM_WORLD);
    MPI_Allreduce(b->in[6], b->out[6], K, MPI_INT32_T, MPI_MAX, MPI_COMM_WORLD);
    MPI_Reduce_scatter_block(b->in[7], b->out[7], K, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (even != MPI_COMM_NULL) MPI_Bcast(b->in[0], K, MPI_INT32_T, nE - 1, even);
    return;
  }
  MT_OK(ir_add_coll(g, R, IR_COLL_BCAST, 0, root, A(b->out[0]), A(b->out[0]), bytes, 0, 0, NULL));
  MT_OK(ir_add_coll(g, R, IR_COLL_GATHER, 0, root, A(b->in[1]), A(b->out[1]), bytes, 0, 0, NULL));
  MT_OK(ir_add_coll(g, R, IR_COLL_SCATTER, 0, 0, A(b->in[2]), A(b->out[2]), bytes, 0, 0, NULL));
  MT_OK(ir_add_coll(g, R, IR_COLL_ALLGATHER, 0, -1, A(b->out[3] + R * K), A(b->out[3]), bytes, 0, 0, NULL));
  MT_OK(ir_add_coll(g, R, IR_COLL_ALLTOALL, 0, -1, A(b->in[4]), A(b->out[4]), bytes, 0, 0, NULL));
  MT_OK(ir_add_coll(g, R, IR_COLL_REDUCE, 0, root, A(b->out[5]), A(b->out[5]), K, CDAG_INT32, CDAG_SUM, NULL));
  MT_OK(ir_add_coll(g, R, IR_COLL_ALLREDUCE, 0, -1, A(b->in[6]), A(b->out[6]), K, CDAG_INT32, CDAG_MAX, NULL));
  MT_OK(ir_add_coll(g, R, IR_COLL_REDUCE_SCATTER_BLOCK, 0, -1, A(b->in[7]), A(b->out[7]), K, CDAG_INT32, CDAG_SUM,
                     NULL));
  MT_OK(ir_add_coll(g, R, IR_COLL_BARRIER, 0, -1, 0, 0, 0, 0, 0, NULL));
  if (E >= 0) MT_OK(ir_add_coll(g, R, IR_COLL_BCAST, 1, 2 * (nE - 1), A(b->in[0]), A(b->in[0]), bytes, 0, 0, NULL));
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int P, R, E = -1, nE = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  if (P > MAXP) {
    if (R == 0) printf("mpi_native: at most %d ranks\n", MAXP);
    MPI_Finalize();
    return 0;
  }
  MPI_Comm even;
  MPI_Comm_split(MPI_COMM_WORLD, R % 2 ? MPI_UNDEFINED : 0, R, &even);
  if (even != MPI_COMM_NULL) {
    MPI_Comm_rank(even, &E);
    MPI_Comm_size(even, &nE);
  } else {
    nE = (P + 1) / 2;
  }
  int32_t evens[MAXP];
  for (int i = 0; i < (P + 1) / 2; i++) evens[i] = 2 * i;
  static bufs mine, ref;
  for (int detect = 0; detect < 2; detect++) {
    cdag_graph *g = NULL;
    cdag_schedule *s = NULL;
    MT_OK(cdag_graph_create(MPI_COMM_WORLD, &g));
    MT_OK(ir_add_comm(g, 1, evens, (P + 1) / 2));
    calls(g, &mine, R, P, even, E, nE);
    cdag_options o;
    cdag_options_init(&o);
    o.detect = detect;
    MT_OK(cdag_compile(g, &o, &s));
    cdag_graph_free(&g);
    for (int it = 0; it < 3 && s; it++) {
      fill(&mine, R, it);
      fill(&ref, R, it);
      MT_OK(cdag_run(s));
      calls(NULL, &ref, R, P, even, E, nE);
      for (int c = 0; c < 8; c++) {
        int bad = memcmp(mine.out[c], ref.out[c], sizeof ref.out[c]) || memcmp(mine.in[c], ref.in[c], sizeof ref.in[c]);
        MT_EXPECT_MSG(!bad, "detect %d, run %d: call %d differs from MPI's", detect, it, c);
      }
    }
    cdag_schedule_free(&s);
  }
  if (even != MPI_COMM_NULL) MPI_Comm_free(&even);
  return mt_finish("mpi_native");
}
