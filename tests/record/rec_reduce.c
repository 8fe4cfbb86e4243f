/* cdag tests — tests/record/rec_reduce.c: a library's hand-written allreduce, recorded.
 *
 * Recursive doubling on the largest power of two of ranks (the others fold in first and
 * get the result last), with int32 sums in one vector and float maxima in another,
 * exchanged with Sendrecv, the sums done in the program where PMPI cannot see them. The
 * recording must infer every local reduction from content, so that analysis finds an
 * allreduce; then a received vector computed on must be recorded as a computation.
 * Floats, not doubles: the contents (rt_fill) span 2^-15..2^16 as floats but 2^-124..2^118 as
 * doubles, where a + b rounds to the larger so often that a sum explains all 12 maxima about
 * once in 80 runs, and the recording, refusing two explanations, writes a computation. */
#include <string.h>

#include "rec_test.h"

enum { N = 12 };

static void combine(int32_t *s, const int32_t *ts, float *m, const float *tm) {
  for (int i = 0; i < N; i++) {
    s[i] = (int32_t)((uint32_t)s[i] + (uint32_t)ts[i]);   /* wraps, as MPI_SUM does */
    m[i] = m[i] > tm[i] ? m[i] : tm[i];
  }
}

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int n = rt_size, me = rt_rank, p2 = 1;
  while (2 * p2 <= n) p2 *= 2;
  int32_t s[N], ts[N];
  float m[N], tm[N], scaled[N], got[N];
  rt_fill(s, sizeof s); rt_fill(ts, sizeof ts); rt_fill(m, sizeof m); rt_fill(tm, sizeof tm);
  rt_fill(scaled, sizeof scaled); rt_fill(got, sizeof got);
  MPI_Status st;
  if (me >= p2) {   /* fold into a partner, then wait for the result */
    MPI_Send(s, N, MPI_INT32_T, me - p2, 0, MPI_COMM_WORLD);
    MPI_Send(m, N, MPI_FLOAT, me - p2, 1, MPI_COMM_WORLD);
    MPI_Recv(s, N, MPI_INT32_T, me - p2, 2, MPI_COMM_WORLD, &st);
    MPI_Recv(m, N, MPI_FLOAT, me - p2, 3, MPI_COMM_WORLD, &st);
  } else {
    /* send first: the recording sees what s and m held before any sum */
    if (me + p2 < n) {   /* the folded rank's part comes in first */
      /* to itself: the recording sees what s and m held before they are summed into */
      MPI_Sendrecv(s, N, MPI_INT32_T, me, 8, ts, N, MPI_INT32_T, me, 8, MPI_COMM_WORLD, &st);
      MPI_Sendrecv(m, N, MPI_FLOAT, me, 9, tm, N, MPI_FLOAT, me, 9, MPI_COMM_WORLD, &st);
      MPI_Recv(ts, N, MPI_INT32_T, me + p2, 0, MPI_COMM_WORLD, &st);
      MPI_Recv(tm, N, MPI_FLOAT, me + p2, 1, MPI_COMM_WORLD, &st);
      combine(s, ts, m, tm);
    }
    for (int d = 1; d < p2; d <<= 1) {
      MPI_Sendrecv(s, N, MPI_INT32_T, me ^ d, 4, ts, N, MPI_INT32_T, me ^ d, 4, MPI_COMM_WORLD, &st);
      MPI_Sendrecv(m, N, MPI_FLOAT, me ^ d, 5, tm, N, MPI_FLOAT, me ^ d, 5, MPI_COMM_WORLD, &st);
      combine(s, ts, m, tm);
    }
    if (me + p2 < n) {
      MPI_Send(s, N, MPI_INT32_T, me + p2, 2, MPI_COMM_WORLD);
      MPI_Send(m, N, MPI_FLOAT, me + p2, 3, MPI_COMM_WORLD);
    }
  }
  /* every rank holds the same result: each checks its left neighbour's */
  int32_t o[N];
  MPI_Sendrecv(s, N, MPI_INT32_T, (me + 1) % n, 6, o, N, MPI_INT32_T, (me + n - 1) % n, 6, MPI_COMM_WORLD, &st);
  MT_REQUIRE(memcmp(o, s, sizeof o) == 0);
  MPI_Sendrecv(m, N, MPI_FLOAT, (me + 1) % n, 6, got, N, MPI_FLOAT, (me + n - 1) % n, 6, MPI_COMM_WORLD, &st);
  MT_REQUIRE(memcmp(got, m, sizeof got) == 0);
  /* tm, which a receive wrote, computed on: a computation */
  for (int i = 0; i < N; i++) tm[i] = 3 * m[i];
  MPI_Sendrecv(tm, N, MPI_FLOAT, (me + 1) % n, 7, scaled, N, MPI_FLOAT, (me + n - 1) % n, 7, MPI_COMM_WORLD, &st);
  rt_keep(s, sizeof s);
  rt_keep(m, sizeof m);
  return rt_finish();
}
