/* cdag MPI test — MPI_PROC_NULL as a peer (run with mpiexec -n 1..8).
 *
 * A non-periodic 1-D halo exchange written the usual way, around MPI_Cart_shift: the ranks at
 * the ends get MPI_PROC_NULL as a neighbour, and their sends and receives to it add nothing
 * and return CDAG_OP_NULL; cdag_depend on such an op is a no-op. Compiled with detection on
 * and off, each run fills the ghost cells from the neighbours and leaves the outer ghosts of
 * the end ranks untouched. Exit 0 on success. */
#include <stdio.h>
#include <string.h>

#include "exec/mpi/schedule.h"
#include "mpi_test.h"

enum { N = 8 };

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int P, R, dims[1] = {0}, periods[1] = {0}, left, right;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Dims_create(P, 1, dims);
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
  MPI_Comm_rank(cart, &R);
  MPI_Cart_shift(cart, 0, 1, &left, &right);
  for (int detect = 0; detect < 2; detect++) {
    double u[N + 2];
    cdag_graph *g = NULL;
    cdag_schedule *s = NULL;
    cdag_op sl = -5, sr = -5, rl = -5, rr = -5;
    MT_OK(cdag_graph_create(cart, &g));
    MT_OK(cdag_send(g, &u[1], sizeof *u, left, 0, &sl));
    MT_OK(cdag_send(g, &u[N], sizeof *u, right, 1, &sr));
    MT_OK(cdag_recv(g, &u[0], sizeof *u, left, 1, &rl));
    MT_OK(cdag_recv(g, &u[N + 1], sizeof *u, right, 0, &rr));
    MT_EXPECT_INT(left == MPI_PROC_NULL, ==, sl == CDAG_OP_NULL && rl == CDAG_OP_NULL);
    MT_EXPECT_INT(right == MPI_PROC_NULL, ==, sr == CDAG_OP_NULL && rr == CDAG_OP_NULL);
    MT_EXPECT(cdag_depend(g, sl, rr) == CDAG_OK || sl > rr);   /* NULL on either side: nothing */
    MT_OK(cdag_depend(g, CDAG_OP_NULL, CDAG_OP_NULL));
    cdag_options o;
    cdag_options_init(&o);
    o.detect = detect;
    MT_OK(cdag_compile(g, &o, &s));
    cdag_graph_free(&g);
    for (int it = 0; it < 3 && s; it++) {
      for (int i = 0; i < N + 2; i++) u[i] = 1000.0 * it + 10.0 * R + i;
      u[0] = u[N + 1] = -1;
      MT_OK(cdag_run(s));
      MT_EXPECT_DBL(u[0], ==, left == MPI_PROC_NULL ? -1 : 1000.0 * it + 10.0 * left + N);
      MT_EXPECT_DBL(u[N + 1], ==, right == MPI_PROC_NULL ? -1 : 1000.0 * it + 10.0 * right + 1);
    }
    cdag_schedule_free(&s);
  }
  MPI_Comm_free(&cart);
  return mt_finish("mpi_proc_null");
}
