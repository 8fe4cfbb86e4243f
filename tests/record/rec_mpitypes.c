/* cdag tests — tests/record/rec_mpitypes.c: MPI's pair types, an op the format refuses, and
 * a datatype holding MPI_LONG_DOUBLE.
 *
 * MPI_Allreduce with MPI_MINLOC and MPI_MAXLOC on MPI_2INT and MPI_DOUBLE_INT (MPICH's
 * coll/opminloc, opmaxloc and allred: recorded as type 2int and double_int, which the loader
 * must read); MPI_LXOR on MPI_FLOAT (MPICH computes it, the format does not define it: the
 * recorder writes its data movement and a computation, and the program's result is still
 * MPI's); a struct of a long double and an int sent to the right
 * neighbour (MPICH's datatype/sendrecvt2 crashed the recorder, which probed offsets by
 * packing bytes that MPICH packs as x87 values). The replay must leave the pairs' values and
 * indices and the received struct's int fields as MPI did (a pair's padding is cdag's
 * element's, so only value and index are compared; a long double's bytes are MPI's to pack).
 * An MPI_Allreduce of MPI_LONG_DOUBLE (max) is a native allreduce of cdag's long_double.
 * Last, one MPI_Waitall over 80 requests: its wait line names more labels than the merger's
 * first array of them holds; and an MPI_Ialltoallv, recorded as a nonblocking alltoallv
 * completed at its wait (its input is computed, so its output is not compared;
 * rec_nbvcoll.c compares them). */
#include <stddef.h>
#include <string.h>

#include "rec_test.h"

enum { N = 4 };

typedef struct { double v; int i; } dbl_int;
typedef struct { long double v; int i; } ld_int;

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int me = rt_rank, n = rt_size, right = (me + 1) % n, left = (me + n - 1) % n;
  int pin[N][2], pmin[N][2], pmax[N][2];
  dbl_int din[N], dmax[N];
  float fin[N], fx[N];
  ld_int lsend[3], lrecv[3];
  rt_fill(pin, sizeof pin); rt_fill(pmin, sizeof pmin); rt_fill(pmax, sizeof pmax);
  rt_fill(din, sizeof din); rt_fill(dmax, sizeof dmax); rt_fill(fin, sizeof fin); rt_fill(fx, sizeof fx);
  rt_fill(lsend, sizeof lsend); rt_fill(lrecv, sizeof lrecv);

  /* pairs: the filled bytes are the values, the program only reads MPI's answer */
  MPI_Allreduce(pin, pmin, N, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
  MPI_Allreduce(pin, pmax, N, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD);
  MPI_Allreduce(din, dmax, N, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
  for (int k = 0; k < N; k++) MT_EXPECT(pmin[k][0] <= pin[k][0] && pmax[k][0] >= pin[k][0]);

  /* lxor on float: computed by MPI, by a computation in the recording */
  MPI_Allreduce(fin, fx, N, MPI_FLOAT, MPI_LXOR, MPI_COMM_WORLD);
  if (n > 1)   /* (one process: a copy) */
    for (int k = 0; k < N; k++) MT_EXPECT(fx[k] == 0 || fx[k] == 1);

  /* a struct of a long double and an int, resized to C's layout */
  MPI_Datatype pair, ld;
  int bl[2] = {1, 1};
  MPI_Aint dis[2] = {offsetof(ld_int, v), offsetof(ld_int, i)};
  MPI_Datatype types[2] = {MPI_LONG_DOUBLE, MPI_INT};
  MPI_Type_create_struct(2, bl, dis, types, &pair);
  MPI_Type_create_resized(pair, 0, sizeof(ld_int), &ld);
  MPI_Type_commit(&ld);
  MPI_Sendrecv(lsend, 3, ld, right, 0, lrecv, 3, ld, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Type_free(&ld);
  MPI_Type_free(&pair);

  /* long double: a native allreduce of cdag's long_double (its inputs are computed, so its
     output is not compared) */
  long double lin[N], lmax[N];
  for (int k = 0; k < N; k++) lin[k] = me + 0.25L * k;
  MPI_Allreduce(lin, lmax, N, MPI_LONG_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  for (int k = 0; k < N; k++) MT_REQUIRE(lmax[k] == n - 1 + 0.25L * k);

  enum { M = 40 };
  int32_t ring_out[M], ring_in[M];
  MPI_Request rq[2 * M];
  rt_fill(ring_out, sizeof ring_out);
  rt_fill(ring_in, sizeof ring_in);
  for (int k = 0; k < M; k++) {
    MPI_Irecv(&ring_in[k], 1, MPI_INT32_T, left, 10 + k, MPI_COMM_WORLD, &rq[2 * k]);
    MPI_Isend(&ring_out[k], 1, MPI_INT32_T, right, 10 + k, MPI_COMM_WORLD, &rq[2 * k + 1]);
  }
  MPI_Waitall(2 * M, rq, MPI_STATUSES_IGNORE);

  int one[64], got[64], cnt[64], dsp[64];
  for (int k = 0; k < rt_size && k < 64; k++) one[k] = rt_rank, cnt[k] = 1, dsp[k] = k;
  MPI_Request iv;
  MPI_Ialltoallv(one, cnt, dsp, MPI_INT, got, cnt, dsp, MPI_INT, MPI_COMM_WORLD, &iv);
  MPI_Wait(&iv, MPI_STATUS_IGNORE);
  for (int k = 0; k < rt_size && k < 64; k++) MT_REQUIRE(got[k] == k);
  for (int k = 0; k < N; k++) rt_keep(&dmax[k], offsetof(dbl_int, i) + sizeof(int));
  rt_keep(ring_in, sizeof ring_in);
  rt_keep(pmin, sizeof pmin);
  rt_keep(pmax, sizeof pmax);
  for (int k = 0; k < 3; k++) rt_keep(&lrecv[k].i, sizeof(int));
  return rt_finish();
}
