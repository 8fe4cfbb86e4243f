/* cdag MPI test — cdag_graph_dump writes one global file at rank 0 (mpiexec -n 1..8).
 *
 * Every rank describes an FT-style alltoall plus a local copy and a scratch region; the dump
 * is loaded back with cdag_graph_load at rank 0, which checks the number of ranks and
 * operations and that a save of the loaded graph reads back the same. A NULL path is
 * CDAG_ERR_ARG on every rank. Exit 0 on success. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "mpi_test.h"

static int R, P;

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  int pid = (int)getpid();
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  char path[128], path2[140];
  snprintf(path, sizeof path, "cdag_dump_%d.cdag", pid);
  snprintf(path2, sizeof path2, "%s.again", path);
  char *src = calloc((size_t)P, 16), *dst = calloc((size_t)P, 16), *scr = calloc(1, 64);
  cdag_graph *g = NULL;
  MT_OK(cdag_graph_create(MPI_COMM_WORLD, &g));
  for (int i = 0; i < P; i++) {
    MT_OK(cdag_send(g, src + 16 * i, 16, i, i, NULL));
    MT_OK(cdag_recv(g, dst + 16 * i, 16, i, R, NULL));
  }
  MT_OK(cdag_copy_local(g, dst, scr, 16, NULL));
  MT_OK(cdag_scratch(g, scr, 64));
  MT_EXPECT_RC(cdag_graph_dump(g, NULL), CDAG_ERR_ARG);
  MT_OK(cdag_graph_dump(g, path));
  if (R == 0) {
    cdag_graph *l = NULL, *l2 = NULL;
    int np = 0;
    int64_t nops = 0, nops2 = 0;
    MT_OK(cdag_graph_load(path, &l));
    MT_OK(cdag_graph_info(l, &np, &nops));
    MT_EXPECT_INT(np, ==, P);
    MT_EXPECT_INT(nops, ==, (int64_t)P * (2 * P + 1));
    MT_OK(cdag_graph_save(l, path2));
    MT_OK(cdag_graph_load(path2, &l2));
    MT_OK(cdag_graph_info(l2, NULL, &nops2));
    MT_EXPECT_INT(nops2, ==, nops);
    cdag_graph_free(&l);
    cdag_graph_free(&l2);
    remove(path);
    remove(path2);
  }
  cdag_graph_free(&g);
  free(src); free(dst); free(scr);
  return mt_finish("mpi_dump");
}
