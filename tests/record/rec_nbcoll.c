/* cdag tests — tests/record/rec_nbcoll.c: nonblocking collectives overlapped with work.
 *
 * Every nonblocking collective of a kind cdag knows: an Iallreduce overlapped with a
 * computation and a ring exchange of point-to-point messages, an Ibcast of a strided
 * (derived) datatype completed by polling MPI_Test while messages flow, an Ialltoall
 * completed in one Waitall with point-to-point requests, then Igather, Iscatter,
 * Iallgather (Testany, Waitany, then Testall), Ireduce, Ireduce_scatter_block and Ibarrier
 * (Waitsome, then Testsome). Each result is checked against the blocking call, and is sent on
 * after its completion, so the recording must hold it from the completion on. */
#include <string.h>

#include "rec_test.h"

enum { N = 8, B = 16, SPIN_NS = 200000 };

/* Computation the recorder sees as time between calls (and as the bytes it writes). */
static void compute(double *w, int n) {
  double t0 = MPI_Wtime();
  do
    for (int i = 0; i < n; i++) w[i] = w[i] * 0.5 + i;
  while ((MPI_Wtime() - t0) * 1e9 < SPIN_NS);
}

/* A ring exchange: 8 bytes to the right, from the left. */
static void ring(uint8_t *out, uint8_t *in) {
  int n = rt_size, me = rt_rank;
  MPI_Sendrecv(out, 8, MPI_BYTE, (me + 1) % n, 40, in, 8, MPI_BYTE, (me + n - 1) % n, 40, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
}

/* MPI_Request_free on a collective's request, refused, then the request waited for. */
static int free_early(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int x = 1, y = 0, size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Request rq;
  MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq);
  if (MPI_Request_free(&rq) != MPI_SUCCESS) MPI_Wait(&rq, MPI_STATUS_IGNORE);
  else MPI_Barrier(MPI_COMM_WORLD);   /* an MPI that frees it: the result is there after any later synchronisation */
  MT_REQUIRE(y == size);
  MPI_Finalize();
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "free")) return free_early(argc, argv);
  rt_init(&argc, &argv);
  int n = rt_size, me = rt_rank;
  int32_t *ain = malloc(N * sizeof *ain), *aout = malloc(N * sizeof *aout), *acheck = malloc(N * sizeof *acheck);
  double *work = malloc(64 * sizeof *work);
  uint8_t *ringo = malloc(64), *ringi = malloc(64), *fwd = malloc(64);
  int32_t *bc = malloc(2 * N * sizeof *bc), *bcheck = malloc(2 * N * sizeof *bcheck);
  uint8_t *tin = malloc((size_t)n * B), *tout = malloc((size_t)n * B), *tcheck = malloc((size_t)n * B);
  uint8_t *gout = malloc((size_t)n * B), *sin_ = malloc((size_t)n * B), *sout = malloc(B), *agout = malloc((size_t)n * B);
  int32_t *rout = malloc(N * sizeof *rout), *rsin = malloc((size_t)n * N * sizeof *rsin), *rsout = malloc(N * sizeof *rsout);
  MT_REQUIRE(ain && aout && acheck && work && ringo && ringi && fwd && bc && bcheck && tin && tout && tcheck && gout &&
             sin_ && sout && agout && rout && rsin && rsout);
  rt_fill(ain, N * sizeof *ain); rt_fill(aout, N * sizeof *aout); rt_fill(work, 64 * sizeof *work);
  rt_fill(ringo, 64); rt_fill(ringi, 64); rt_fill(fwd, 64); rt_fill(bc, 2 * N * sizeof *bc);
  rt_fill(tin, (size_t)n * B); rt_fill(tout, (size_t)n * B); rt_fill(gout, (size_t)n * B);
  rt_fill(sin_, (size_t)n * B); rt_fill(sout, B); rt_fill(agout, (size_t)n * B); rt_fill(rout, N * sizeof *rout);
  rt_fill(rsin, (size_t)n * N * sizeof *rsin); rt_fill(rsout, N * sizeof *rsout);
  MPI_Request rq[8];

  /* 1. Iallreduce overlapped with computation and a ring exchange */
  MPI_Iallreduce(ain, aout, N, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD, &rq[0]);
  compute(work, 64);
  ring(ringo, ringi);
  MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
  MPI_Allreduce(ain, acheck, N, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
  MT_REQUIRE(memcmp(aout, acheck, N * sizeof *aout) == 0);
  ring((uint8_t *)aout, fwd);   /* the result travels on: the recording holds it */
  ring((uint8_t *)work, ringi + 8);   /* what the computation wrote, too */

  /* 2. Ibcast of every second int32 (a strided type: packed), completed by polling */
  MPI_Datatype every2;
  MPI_Type_vector(N, 1, 2, MPI_INT32_T, &every2);
  MPI_Type_commit(&every2);
  memcpy(bcheck, bc, 2 * N * sizeof *bc);
  MPI_Ibcast(bc, 1, every2, 0, MPI_COMM_WORLD, &rq[0]);
  int flag = 0;
  for (int i = 0; i < 3; i++) {   /* as many exchanges on every rank, the first tests among them */
    ring(ringo + 16 + 8 * (i % 2), ringi + 16 + 8 * (i % 2));
    if (!flag) MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE);
  }
  while (!flag) MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE);
  MPI_Bcast(bcheck, 1, every2, 0, MPI_COMM_WORLD);
  MT_REQUIRE(memcmp(bc, bcheck, 2 * N * sizeof *bc) == 0);
  MPI_Type_free(&every2);
  ring((uint8_t *)bc, fwd + 8);

  /* 3. Ialltoall, completed in one Waitall with point-to-point requests */
  MPI_Ialltoall(tin, B, MPI_BYTE, tout, B, MPI_BYTE, MPI_COMM_WORLD, &rq[0]);
  MPI_Irecv(ringi + 32, 8, MPI_BYTE, (me + n - 1) % n, 41, MPI_COMM_WORLD, &rq[1]);
  MPI_Isend(ringo + 32, 8, MPI_BYTE, (me + 1) % n, 41, MPI_COMM_WORLD, &rq[2]);
  compute(work + 8, 8);
  MPI_Waitall(3, rq, MPI_STATUSES_IGNORE);
  MPI_Alltoall(tin, B, MPI_BYTE, tcheck, B, MPI_BYTE, MPI_COMM_WORLD);
  MT_REQUIRE(memcmp(tout, tcheck, (size_t)n * B) == 0);
  ring(tout, fwd + 16);

  /* 4. the other kinds, started together, completed by Waitany, Waitsome, Testall, Testsome */
  MPI_Igather(sin_ + me * B, B, MPI_BYTE, gout, B, MPI_BYTE, 0, MPI_COMM_WORLD, &rq[0]);
  MPI_Iscatter(sin_, B, MPI_BYTE, sout, B, MPI_BYTE, n - 1, MPI_COMM_WORLD, &rq[1]);
  MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, agout, B, MPI_BYTE, MPI_COMM_WORLD, &rq[2]);
  MPI_Ireduce(ain, rout, N, MPI_INT32_T, MPI_MAX, n - 1, MPI_COMM_WORLD, &rq[3]);
  MPI_Ireduce_scatter_block(rsin, rsout, N, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD, &rq[4]);
  MPI_Ibarrier(MPI_COMM_WORLD, &rq[5]);
  int idx[8], k, left = 3;
  for (flag = 0; !flag;) MPI_Testany(3, rq, &idx[0], &flag, MPI_STATUS_IGNORE);   /* gather, scatter, allgather */
  MPI_Waitany(3, rq, &idx[0], MPI_STATUS_IGNORE);
  for (flag = 0; !flag;) MPI_Testall(3, rq, &flag, MPI_STATUSES_IGNORE);
  MPI_Waitsome(3, rq + 3, &k, idx, MPI_STATUSES_IGNORE);   /* reduce, reduce_scatter_block, barrier */
  for (left -= k; left > 0;) {
    MPI_Testsome(3, rq + 3, &k, idx, MPI_STATUSES_IGNORE);
    if (k == MPI_UNDEFINED) break;
    left -= k;
  }
  int32_t rcheck[N], rscheck[N];
  uint8_t *gcheck = malloc((size_t)n * B), scheck[B];
  MT_REQUIRE(gcheck != NULL);
  MPI_Gather(sin_ + me * B, B, MPI_BYTE, gcheck, B, MPI_BYTE, 0, MPI_COMM_WORLD);
  if (me == 0) MT_REQUIRE(memcmp(gout, gcheck, (size_t)n * B) == 0);
  MPI_Scatter(sin_, B, MPI_BYTE, scheck, B, MPI_BYTE, n - 1, MPI_COMM_WORLD);
  MT_REQUIRE(memcmp(sout, scheck, B) == 0);
  MPI_Reduce(ain, rcheck, N, MPI_INT32_T, MPI_MAX, n - 1, MPI_COMM_WORLD);
  if (me == n - 1) MT_REQUIRE(memcmp(rout, rcheck, sizeof rcheck) == 0);
  MPI_Reduce_scatter_block(rsin, rscheck, N, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
  MT_REQUIRE(memcmp(rsout, rscheck, sizeof rscheck) == 0);
  ring(sout, fwd + 24);
  ring((uint8_t *)rsout, fwd + 32);

  rt_keep(aout, N * sizeof *aout);
  rt_keep(bc, 2 * N * sizeof *bc);
  rt_keep(tout, (size_t)n * B);
  rt_keep(agout, (size_t)n * B);
  rt_keep(sout, B);
  rt_keep(rsout, N * sizeof *rsout);
  if (me == 0) rt_keep(gout, (size_t)n * B);
  if (me == n - 1) rt_keep(rout, N * sizeof *rout);
  rt_keep(fwd, 40);
  free(ain); free(aout); free(acheck); free(work); free(ringo); free(ringi); free(fwd); free(bc); free(bcheck);
  free(tin); free(tout); free(tcheck); free(gout); free(sin_); free(sout); free(agout); free(rout); free(rsin);
  free(rsout); free(gcheck);
  return rt_finish();
}
