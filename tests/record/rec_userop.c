/* cdag tests — tests/record/rec_userop.c: reductions cdag cannot combine, recorded.
 *
 * Reductions with an MPI_Op_create op (a wrapping int32 sum MPI cannot know is one) and on a
 * derived datatype (a vector of int64 with gaps, combined by a user op that walks it):
 * Reduce, Allreduce (in place), Ireduce, Iallreduce, Scan, Exscan, Reduce_scatter_block,
 * Reduce_scatter, Iscan, Iexscan and Ireduce_scatter (and a native Iscan of MPI_BXOR), and an
 * Allreduce of MPI_LXOR on floats (MPICH's, which MPI does not define). The recorder writes
 * each as its data movement (the inputs gathered,
 * allgathered or exchanged into a scratch area) and a computation of the output from it, so
 * nothing is unsupported. Each result is checked here against the inputs allgathered.
 * What the replay is compared with: the inputs only (replay's starting bytes, moved by the
 * graph unchanged); every output is written by a computation, where replay writes a hash
 * of its own, so no output byte can match and none is listed. */
#include <string.h>

#include "rec_test.h"

enum { N = 6, VB = 3, VS = 2 };   /* elements; the vector's blocks of one int64 at stride 2 */

static void isum(void *in, void *inout, int *len, MPI_Datatype *t) {
  (void)t;
  const int32_t *a = in;
  int32_t *b = inout;
  for (int i = 0; i < *len; i++) b[i] = (int32_t)((uint32_t)a[i] + (uint32_t)b[i]);
}

/* The vector's elements only: the gaps are not part of the datatype. */
static void vsum(void *in, void *inout, int *len, MPI_Datatype *t) {
  (void)t;
  const int64_t *a = in;
  int64_t *b = inout;
  int ext = (VB - 1) * VS + 1;
  for (int k = 0; k < *len; k++)
    for (int j = 0; j < VB; j++) {
      int i = k * ext + j * VS;
      b[i] = (int64_t)((uint64_t)a[i] + (uint64_t)b[i]);
    }
}

/* The sum of members [lo, hi)'s element i of the allgathered all (n blocks of N). */
static int32_t want(const int32_t *all, int lo, int hi, int i) {
  uint32_t s = 0;
  for (int m = lo; m < hi; m++) s += (uint32_t)all[m * N + i];
  return (int32_t)s;
}

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int n = rt_size, me = rt_rank;
  MPI_Op op, vop;
  MPI_Op_create(isum, 1, &op);
  MPI_Op_create(vsum, 1, &vop);
  MPI_Datatype vec;
  MPI_Type_vector(VB, 1, VS, MPI_INT64_T, &vec);
  MPI_Type_commit(&vec);

  int32_t x[N], *all = malloc(sizeof(int32_t) * N * (size_t)n), *big = malloc(sizeof(int32_t) * N * (size_t)n);
  int32_t r1[N], r2[N], r3[N], r4[N], r5[N], r6[N];
  enum { VE = (VB - 1) * VS + 1 };
  int64_t v[2 * VE], vr[2 * VE];
  MT_REQUIRE(all && big);
  rt_fill(x, sizeof x);
  rt_fill(big, sizeof(int32_t) * N * (size_t)n);
  rt_fill(v, sizeof v);
  memset(vr, 0, sizeof vr);
  /* the expected results' inputs, every send started before any receive completes: so the
     recording holds the inputs as replay starts (a rank's bytes never sent before it first
     received count as computed) */
  int32_t *bigall = malloc(sizeof(int32_t) * N * (size_t)n * (size_t)n);
  int64_t *vall = malloc(sizeof v * (size_t)n);
  MT_REQUIRE(bigall && vall);
  MPI_Request g[3];
  MPI_Iallgather(x, N, MPI_INT32_T, all, N, MPI_INT32_T, MPI_COMM_WORLD, &g[0]);
  MPI_Iallgather(big, N * n, MPI_INT32_T, bigall, N * n, MPI_INT32_T, MPI_COMM_WORLD, &g[1]);
  MPI_Iallgather(v, 2 * VE, MPI_INT64_T, vall, 2 * VE, MPI_INT64_T, MPI_COMM_WORLD, &g[2]);
  MPI_Waitall(3, g, MPI_STATUSES_IGNORE);

  MPI_Reduce(x, r1, N, MPI_INT32_T, op, 0, MPI_COMM_WORLD);
  memcpy(r2, x, sizeof r2);
  MPI_Allreduce(MPI_IN_PLACE, r2, N, MPI_INT32_T, op, MPI_COMM_WORLD);
  MPI_Request rq[2];
  MPI_Ireduce(x, r3, N, MPI_INT32_T, op, n - 1, MPI_COMM_WORLD, &rq[0]);
  MPI_Iallreduce(v, vr, 2, vec, vop, MPI_COMM_WORLD, &rq[1]);
  MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
  MPI_Scan(x, r4, N, MPI_INT32_T, op, MPI_COMM_WORLD);
  MPI_Exscan(x, r5, N, MPI_INT32_T, op, MPI_COMM_WORLD);
  MPI_Reduce_scatter_block(big, r6, N, MPI_INT32_T, op, MPI_COMM_WORLD);
  int *counts = malloc(sizeof(int) * (size_t)n);
  MT_REQUIRE(counts);
  for (int m = 0; m < n; m++) counts[m] = 1 + m % N;
  int32_t r7[N], r8[N], r9[N], r10[N], r11[N];
  MPI_Reduce_scatter(big, r7, counts, MPI_INT32_T, op, MPI_COMM_WORLD);
  /* the nonblocking forms of these three, and a native Iscan (a predefined op) beside them */
  MPI_Request sq[4];
  MPI_Iscan(x, r8, N, MPI_INT32_T, op, MPI_COMM_WORLD, &sq[0]);
  MPI_Iexscan(x, r9, N, MPI_INT32_T, op, MPI_COMM_WORLD, &sq[1]);
  MPI_Ireduce_scatter(big, r10, counts, MPI_INT32_T, op, MPI_COMM_WORLD, &sq[2]);
  MPI_Iscan(x, r11, N, MPI_INT32_T, MPI_BXOR, MPI_COMM_WORLD, &sq[3]);
  MPI_Waitall(4, sq, MPI_STATUSES_IGNORE);
  /* MPI_LXOR of floats: MPI does not define it, MPICH computes it (nonzero is true) */
  float f[2] = {me % 2 ? 0.0f : 1.5f, 2.0f}, fr[2];
  MPI_Allreduce(f, fr, 2, MPI_FLOAT, MPI_LXOR, MPI_COMM_WORLD);
  if (n == 1)   /* a reduction over one process applies no op: MPICH copies the values */
    MT_REQUIRE(fr[0] == f[0] && fr[1] == f[1]);
  else
    MT_REQUIRE(fr[0] == (float)((n + 1) / 2 % 2) && fr[1] == (float)(n % 2));

  for (int i = 0; i < N; i++) {
    int32_t s = want(all, 0, n, i);
    if (me == 0) MT_REQUIRE(r1[i] == s);
    MT_REQUIRE(r2[i] == s);
    if (me == n - 1) MT_REQUIRE(r3[i] == s);
    MT_REQUIRE(r4[i] == want(all, 0, me + 1, i));
    if (me > 0) MT_REQUIRE(r5[i] == want(all, 0, me, i));
    MT_REQUIRE(r8[i] == r4[i]);
    if (me > 0) MT_REQUIRE(r9[i] == r5[i]);
    int32_t b = 0;
    for (int m = 0; m <= me; m++) b ^= all[m * N + i];
    MT_REQUIRE(r11[i] == b);
  }
  /* the blocked inputs: every member's block me, and, for r7, its counts' blocks */
  int at = 0;
  for (int m = 0; m < me; m++) at += counts[m];
  for (int i = 0; i < N; i++) {
    uint32_t s = 0, s7 = 0;
    for (int m = 0; m < n; m++) {
      s += (uint32_t)bigall[(size_t)m * N * (size_t)n + (size_t)me * N + (size_t)i];
      if (i < counts[me]) s7 += (uint32_t)bigall[(size_t)m * N * (size_t)n + (size_t)at + (size_t)i];
    }
    MT_REQUIRE(r6[i] == (int32_t)s);
    if (i < counts[me]) MT_REQUIRE(r7[i] == (int32_t)s7 && r10[i] == r7[i]);
  }
  for (int k = 0; k < 2; k++)
    for (int j = 0; j < VB; j++) {
      int i = k * VE + j * VS;
      uint64_t s = 0;
      for (int m = 0; m < n; m++) s += (uint64_t)vall[m * 2 * VE + i];
      MT_REQUIRE(vr[i] == (int64_t)s);
      if (j < VB - 1) MT_REQUIRE(vr[i + 1] == 0);   /* a gap: untouched */
    }
  rt_keep(x, sizeof x);   /* inputs only: see the comment at the top */
  rt_keep(v, sizeof v);
  rt_keep(big, sizeof(int32_t) * N * (size_t)n);
  free(all); free(big); free(bigall); free(vall); free(counts);
  MPI_Op_free(&op);
  MPI_Op_free(&vop);
  MPI_Type_free(&vec);
  return rt_finish();
}
