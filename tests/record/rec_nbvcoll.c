/* cdag tests — tests/record/rec_nbvcoll.c: the nonblocking v-, w- and neighbourhood collectives.
 *
 * MPI_Igatherv (blocks of unequal sizes at displacements with gaps, out of order) overlapped
 * with computation and a ring exchange; Iscatterv, in place at its root, completed by polling
 * MPI_Test; Iallgatherv in place and Ialltoallv completed by one Waitall with point-to-point
 * requests; Ialltoallw with a strided datatype that the
 * program frees before the call completes (MPI lets it). Then each neighbourhood collective,
 * MPI_Ineighbor_allgather, _allgatherv, _alltoall, _alltoallv and _alltoallw, on a periodic
 * Cartesian ring (at 2 processes both neighbours are the other rank) and on a distributed graph
 * (the ring both ways, its neighbours listed in another order), completed by Waitsome and
 * Testany. The counts, displacements and datatypes live in arrays of their own per call.
 * Each result is checked against the blocking call's and sent on after its completion, so
 * the recording must hold it from the completion on; none may be counted unsupported. */
#include <string.h>

#include "rec_test.h"

enum { MAXP = 8, CAP = 256, NB = 64, SPIN_NS = 100000 };

static int32_t in[CAP], gv[CAP], sv[CAP], agv[CAP], av[CAP], aw[CAP], chk[CAP], fwd[CAP], ringo[64], ringi[64];
static int32_t nbo[2][5][NB], nbchk[NB];
static double work[32];

/* Computation the recorder sees as time between calls (and as the bytes it writes). */
static void compute(void) {
  double t0 = MPI_Wtime();
  do
    for (int i = 0; i < 32; i++) work[i] = work[i] * 0.5 + i;
  while ((MPI_Wtime() - t0) * 1e9 < SPIN_NS);
}

/* 8 bytes to the right, from the left. */
static void ring(const void *out, void *into) {
  int n = rt_size, me = rt_rank;
  MPI_Sendrecv(out, 8, MPI_BYTE, (me + 1) % n, 40, into, 8, MPI_BYTE, (me + n - 1) % n, 40, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
}

static void same(const void *a, const void *b, size_t n) { MT_REQUIRE(memcmp(a, b, n) == 0); }

/* The five neighbourhood collectives on comm, whose sources and destinations are src[0]
   and src[1] (the ranks on either side), into out[0..4]. Blocks of one call are alike in
   size each way (at 2 processes both blocks to a peer go to the one rank), at
   displacements of their own. */
static void neighbours(MPI_Comm comm, const int src[2], int32_t out[5][NB], MPI_Datatype every2, int32_t *sent) {
  enum { deg = 2 };
  MPI_Request rq[5];
  int rc[deg], rd[deg], sc[deg] = {2, 2}, sd[deg] = {3, 0}, vc[deg] = {2, 2}, vd[deg] = {0, 4}, swc[deg], rwc[deg];
  MPI_Aint wsd[deg], wrd[deg];
  MPI_Datatype wst[deg], wrt[deg];
  int sendv = 1 + rt_rank % 2;   /* the allgatherv: what each source sends */
  for (int j = 0; j < deg; j++) {
    rc[j] = 1 + src[j] % 2, rd[j] = 4 * (deg - 1 - j) + 1;   /* its blocks in reverse, with gaps */
    wst[j] = j ? every2 : MPI_INT32_T, wrt[j] = j ? MPI_INT32_T : every2;   /* 2 int32 each way */
    swc[j] = j ? 1 : 2, rwc[j] = j ? 2 : 1;
    wsd[j] = (MPI_Aint)(16 * j), wrd[j] = (MPI_Aint)(32 * (deg - 1 - j));
  }
  MPI_Ineighbor_allgather(in, 3, MPI_INT32_T, out[0], 3, MPI_INT32_T, comm, &rq[0]);
  MPI_Ineighbor_allgatherv(in + 1, sendv, MPI_INT32_T, out[1], rc, rd, MPI_INT32_T, comm, &rq[1]);
  MPI_Ineighbor_alltoall(in, 2, MPI_INT32_T, out[2], 2, MPI_INT32_T, comm, &rq[2]);
  MPI_Ineighbor_alltoallv(in, sc, sd, MPI_INT32_T, out[3], vc, vd, MPI_INT32_T, comm, &rq[3]);
  MPI_Ineighbor_alltoallw(in, swc, wsd, wst, out[4], rwc, wrd, wrt, comm, &rq[4]);
  ring(ringo, ringi + 8);
  int left = 5, done[5], k;
  while (left > 0) {   /* Waitsome, then Testany until none is left */
    if (left > 3) {
      MPI_Waitsome(5, rq, &k, done, MPI_STATUSES_IGNORE);
    } else {
      int flag = 0, i;
      MPI_Testany(5, rq, &i, &flag, MPI_STATUS_IGNORE);
      k = flag && i != MPI_UNDEFINED;
    }
    left -= k;
  }
  MPI_Neighbor_allgather(in, 3, MPI_INT32_T, nbchk, 3, MPI_INT32_T, comm);
  same(out[0], nbchk, 3 * deg * sizeof *nbchk);
  memcpy(nbchk, out[1], sizeof nbchk);
  MPI_Neighbor_allgatherv(in + 1, sendv, MPI_INT32_T, nbchk, rc, rd, MPI_INT32_T, comm);
  same(out[1], nbchk, sizeof nbchk);
  MPI_Neighbor_alltoall(in, 2, MPI_INT32_T, nbchk, 2, MPI_INT32_T, comm);
  same(out[2], nbchk, 2 * deg * sizeof *nbchk);
  memcpy(nbchk, out[3], sizeof nbchk);
  MPI_Neighbor_alltoallv(in, sc, sd, MPI_INT32_T, nbchk, vc, vd, MPI_INT32_T, comm);
  same(out[3], nbchk, sizeof nbchk);
  memcpy(nbchk, out[4], sizeof nbchk);
  MPI_Neighbor_alltoallw(in, swc, wsd, wst, nbchk, rwc, wrd, wrt, comm);
  same(out[4], nbchk, sizeof nbchk);
  for (int i = 0; i < 5; i++) ring(out[i], sent + 2 * i);
}

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int n = rt_size, me = rt_rank;
  MT_REQUIRE(n <= MAXP);
  rt_fill(in, sizeof in); rt_fill(gv, sizeof gv); rt_fill(sv, sizeof sv); rt_fill(agv, sizeof agv);
  rt_fill(av, sizeof av); rt_fill(aw, sizeof aw); rt_fill(fwd, sizeof fwd); rt_fill(ringo, sizeof ringo);
  rt_fill(ringi, sizeof ringi); rt_fill(nbo, sizeof nbo); rt_fill(work, sizeof work);
  int cnt[MAXP], dsp[MAXP];
  for (int i = 0, at = 0; i < n; i++) {   /* member i: i + 1 elements, in reverse order, one gap between */
    cnt[n - 1 - i] = n - i;
    dsp[n - 1 - i] = at;
    at += n - i + 1;
  }
  MPI_Request rq[4];

  /* 1. Igatherv to the last rank, overlapped with computation and a ring exchange */
  MPI_Igatherv(in, me + 1, MPI_INT32_T, gv, cnt, dsp, MPI_INT32_T, n - 1, MPI_COMM_WORLD, &rq[0]);
  compute();
  ring(ringo, ringi);
  MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
  memcpy(chk, gv, sizeof chk);
  MPI_Gatherv(in, me + 1, MPI_INT32_T, chk, cnt, dsp, MPI_INT32_T, n - 1, MPI_COMM_WORLD);
  same(gv, chk, sizeof chk);
  ring(gv + dsp[0], fwd);   /* the result travels on */

  /* 2. Iscatterv from rank 0, in place there, completed by polling */
  int flag = 0;
  if (me == 0) MPI_Iscatterv(in, cnt, dsp, MPI_INT32_T, MPI_IN_PLACE, 0, MPI_INT32_T, 0, MPI_COMM_WORLD, &rq[0]);
  else MPI_Iscatterv(NULL, NULL, NULL, MPI_INT32_T, sv, me + 1, MPI_INT32_T, 0, MPI_COMM_WORLD, &rq[0]);
  while (!flag) MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE);
  if (me > 0) {
    MPI_Scatterv(NULL, NULL, NULL, MPI_INT32_T, chk, me + 1, MPI_INT32_T, 0, MPI_COMM_WORLD);
    same(sv, chk, (size_t)(me + 1) * sizeof *chk);
  } else {
    MPI_Scatterv(in, cnt, dsp, MPI_INT32_T, MPI_IN_PLACE, 0, MPI_INT32_T, 0, MPI_COMM_WORLD);
  }
  ring(sv, fwd + 2);

  /* 3. Iallgatherv in place and Ialltoallv, one Waitall with messages, completed in reverse */
  int ac[MAXP], ad[MAXP], bc[MAXP], bd[MAXP];
  for (int j = 0; j < n; j++) {   /* member j gets j + 1 elements from each, sent from overlapping blocks */
    ac[j] = j + 1, ad[j] = j;
    bc[j] = me + 1, bd[j] = (n - 1 - j) * (me + 2);
  }
  MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, agv, cnt, dsp, MPI_INT32_T, MPI_COMM_WORLD, &rq[3]);
  MPI_Ialltoallv(in, ac, ad, MPI_INT32_T, av, bc, bd, MPI_INT32_T, MPI_COMM_WORLD, &rq[2]);
  MPI_Irecv(ringi + 16, 8, MPI_BYTE, (me + n - 1) % n, 41, MPI_COMM_WORLD, &rq[0]);
  MPI_Isend(ringo + 16, 8, MPI_BYTE, (me + 1) % n, 41, MPI_COMM_WORLD, &rq[1]);
  MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
  memcpy(chk, agv, sizeof chk);
  MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, chk, cnt, dsp, MPI_INT32_T, MPI_COMM_WORLD);
  same(agv, chk, sizeof chk);
  memcpy(chk, av, sizeof chk);
  MPI_Alltoallv(in, ac, ad, MPI_INT32_T, chk, bc, bd, MPI_INT32_T, MPI_COMM_WORLD);
  same(av, chk, sizeof chk);
  ring(agv, fwd + 4);
  ring(av, fwd + 6);

  /* 4. Ialltoallw: 2 int32 to even members, 2 every other int32 to odd ones; the strided
     type freed before the call completes */
  MPI_Datatype every2, st[MAXP], rt[MAXP];
  MPI_Type_vector(2, 1, 2, MPI_INT32_T, &every2);
  MPI_Type_commit(&every2);
  int wsc[MAXP], wsd[MAXP], wrc[MAXP], wrd[MAXP];
  for (int j = 0; j < n; j++) {
    wsc[j] = 1 + j % 2, wsd[j] = j * 5 * (int)sizeof(int32_t), st[j] = j % 2 ? MPI_INT32_T : every2;
    wrc[j] = 1 + me % 2, wrd[j] = (n - 1 - j) * 4 * (int)sizeof(int32_t), rt[j] = me % 2 ? MPI_INT32_T : every2;
  }
  MPI_Datatype freed = every2;
  MPI_Type_dup(every2, &every2);   /* kept for the check and the neighbours; the call's own is freed */
  MPI_Ialltoallw(in, wsc, wsd, st, aw, wrc, wrd, rt, MPI_COMM_WORLD, &rq[0]);
  MPI_Type_free(&freed);
  compute();
  MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
  for (int j = 0; j < n; j++) {
    st[j] = j % 2 ? MPI_INT32_T : every2;
    rt[j] = me % 2 ? MPI_INT32_T : every2;
  }
  memcpy(chk, aw, sizeof chk);
  MPI_Alltoallw(in, wsc, wsd, st, chk, wrc, wrd, rt, MPI_COMM_WORLD);
  same(aw, chk, sizeof chk);
  ring(aw, fwd + 8);

  /* 5. the neighbourhood collectives: a periodic Cartesian ring (below, then above), and a
     distributed graph of the ring both ways, its neighbours above, then below */
  MPI_Comm cart, dist;
  int dims[1] = {n}, periods[1] = {1}, up = (me + 1) % n, down = (me + n - 1) % n;
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
  int below[2] = {down, up}, above[2] = {up, down};
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, above, MPI_UNWEIGHTED, 2, above, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                 &dist);
  neighbours(cart, below, nbo[0], every2, fwd + 10);
  neighbours(dist, above, nbo[1], every2, fwd + 20);
  MPI_Comm_free(&cart);
  MPI_Comm_free(&dist);
  MPI_Type_free(&every2);

  if (me == n - 1) rt_keep(gv, sizeof gv);
  if (me > 0) rt_keep(sv, sizeof sv);
  rt_keep(agv, sizeof agv);
  rt_keep(av, sizeof av);
  rt_keep(aw, sizeof aw);
  rt_keep(nbo, sizeof nbo);
  rt_keep(fwd, 30 * sizeof *fwd);
  rt_keep(ringi, 24 * sizeof *ringi);
  return rt_finish();
}
