/* cdag tests — tests/record/rec_rma_columns.c: one-sided accesses whose target datatype is a
 * matrix's columns (MPICH's rma/transpose1, 5 and 7 in small).
 *
 * Every rank holds a window of three K x K matrices of ints and a row. In one fence epoch it
 * puts its own matrix transposed into its right neighbour's first matrix (the target
 * datatype: K columns side by side, an hvector of a column vector), accumulates it
 * transposed into the second (MPI_SUM), and gets its left neighbour's third matrix
 * transposed. The target's
 * side of each call is K runs of K blocks at one stride: the recording writes one line per
 * column (`blocks K stride 4K`), not one per element, and lists nothing unsupported. The
 * program checks what MPI did (its data are the bytes replay starts from: all of it is sent
 * before anything is received, so none of it counts as computed); the replay must leave
 * every matrix as MPI did. In the same epoch one put fills every other element of the row
 * (a run of blocks again) and another the gaps: they must not race. */
#include <string.h>

#include "rec_test.h"

enum { K = 24, W = 3 * K * K + K };

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int right = (rt_rank + 1) % rt_size, left = (rt_rank + rt_size - 1) % rt_size;
  int *w = malloc(W * sizeof *w), a[K * K], got[K * K], row[K];
  MT_REQUIRE(w != NULL);
  rt_fill(w, W * sizeof *w); rt_fill(a, sizeof a); rt_fill(got, sizeof got); rt_fill(row, sizeof row);
  MPI_Datatype column, xpose, every_other;
  MPI_Type_vector(K, 1, K, MPI_INT, &column);
  MPI_Type_create_hvector(K, 1, sizeof(int), column, &xpose);
  MPI_Type_vector(K / 2, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&xpose);
  MPI_Type_commit(&every_other);
  MPI_Win win;
  MPI_Win_create(w, W * sizeof *w, sizeof *w, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  int before[K * K];   /* my second matrix before the left neighbour's sum */
  for (int i = 0; i < K * K; i++) before[i] = w[K * K + i];
  MPI_Win_fence(0, win);
  MPI_Put(a, K * K, MPI_INT, right, 0, 1, xpose, win);
  MPI_Accumulate(a, K * K, MPI_INT, right, K * K, 1, xpose, MPI_SUM, win);
  MPI_Get(got, K * K, MPI_INT, left, 2 * K * K, 1, xpose, win);
  MPI_Put(row, K / 2, MPI_INT, right, 3 * K * K, 1, every_other, win);   /* even elements of the last row */
  MPI_Put(row + K / 2, K / 2, MPI_INT, right, 3 * K * K + 1, 1, every_other, win);   /* and the odd ones */
  MPI_Win_fence(0, win);
  int la[K * K], lw[K * K];   /* the left neighbour's matrix and third matrix, as it filled them */
  MPI_Sendrecv(a, K * K, MPI_INT, right, 0, la, K * K, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Sendrecv(&w[2 * K * K], K * K, MPI_INT, right, 1, lw, K * K, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  for (int i = 0; i < K; i++)
    for (int j = 0; j < K; j++) {
      MT_REQUIRE(w[j * K + i] == la[i * K + j]);
      MT_REQUIRE(w[K * K + j * K + i] == (int)((unsigned)before[j * K + i] + (unsigned)la[i * K + j]));
      MT_REQUIRE(got[i * K + j] == lw[j * K + i]);
    }
  int lrow[K];
  MPI_Sendrecv(row, K, MPI_INT, right, 2, lrow, K, MPI_INT, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  for (int i = 0; i < K / 2; i++)
    MT_REQUIRE(w[3 * K * K + 2 * i] == lrow[i] && w[3 * K * K + 2 * i + 1] == lrow[K / 2 + i]);
  MPI_Win_free(&win);
  MPI_Type_free(&every_other);
  MPI_Type_free(&xpose);
  MPI_Type_free(&column);
  rt_keep(w, W * sizeof *w);
  rt_keep(got, sizeof got);
  free(w);
  return rt_finish();
}
