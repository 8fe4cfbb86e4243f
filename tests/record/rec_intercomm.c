/* cdag tests — tests/record/rec_intercomm.c: intercommunicators.
 *
 * The ranks form two halves (even and odd) and an intercommunicator between them
 * (Intercomm_create). Each rank exchanges a message with the rank of the same number in
 * the other half, ranks named as the remote group's: the recording must give world ranks
 * and keep the intercommunicator's messages apart from MPI_COMM_WORLD's of the same tag.
 * Then the halves merged (Intercomm_merge) carry a ring, and collectives on the
 * intercommunicator (a bcast from rank 0 of the even half, a gather and a scatter at rank 0 of
 * the odd one, an allgather, an alltoall, a barrier; their v- and w-forms, with a strided
 * datatype; nonblocking ones around other traffic) are recorded as the messages they move,
 * replayed and compared. Reductions across the groups (reduce, allreduce, reduce_scatter_block,
 * reduce_scatter, iallreduce) are recorded as their inputs moved and a computation: the
 * program checks their values, the recording must list nothing unsupported. The ranks of
 * the root's group that MPI ignores pass no buffer and MPI_DATATYPE_NULL; an allgather
 * receives into MPI_BOTTOM with absolute addresses.
 * Built with LATE (rec_intercomm_late): an Ibcast started in a phase (MPI_Pcontrol) and
 * completed after it ended keeps its messages in that phase. */
#include <string.h>

#include "rec_test.h"

enum { B = 16, MAXH = 8 };

#ifdef LATE
int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int me = rt_rank;
  MT_REQUIRE(rt_size >= 2);
  MPI_Comm half, inter;
  MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
  int hr;
  MPI_Comm_rank(half, &hr);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me % 2 ? 0 : 1, 7, &inter);
  static uint8_t buf[B];
  rt_fill(buf, B);
  int root = me % 2 ? 0 : (hr == 0 ? MPI_ROOT : MPI_PROC_NULL);   /* rank 0 of the even half sends */
  MPI_Request rq;
  MPI_Pcontrol(1);
  MPI_Ibcast(buf, B, MPI_BYTE, root, inter, &rq);
  MPI_Pcontrol(0);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
  if (me % 2) rt_keep(buf, B);
  return rt_finish();
}
#else
int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int n = rt_size, me = rt_rank;
  MT_REQUIRE(n >= 2);
  MPI_Comm half, inter, merged;
  MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
  int hr, hn, rn;
  MPI_Comm_rank(half, &hr);
  MPI_Comm_size(half, &hn);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me % 2 ? 0 : 1, 7, &inter);
  MPI_Comm_remote_size(inter, &rn);
  uint8_t a[B], ra[B], w[B], rw[B], m[B], rm[B];
  rt_fill(a, B); rt_fill(ra, B); rt_fill(w, B); rt_fill(rw, B); rt_fill(m, B); rt_fill(rm, B);
  MPI_Request rq[4];
  int nq = 0;
  if (hr < rn) {   /* the partner of the same number in the other half */
    MPI_Irecv(ra, B, MPI_BYTE, hr, 0, inter, &rq[nq++]);
    MPI_Isend(a, B, MPI_BYTE, hr, 0, inter, &rq[nq++]);
  }
  MPI_Irecv(rw, B, MPI_BYTE, (me + n - 1) % n, 0, MPI_COMM_WORLD, &rq[nq++]);
  MPI_Isend(w, B, MPI_BYTE, (me + 1) % n, 0, MPI_COMM_WORLD, &rq[nq++]);
  MPI_Waitall(nq, rq, MPI_STATUSES_IGNORE);

  MPI_Intercomm_merge(inter, me % 2, &merged);
  int mr;
  MPI_Comm_rank(merged, &mr);
  MPI_Sendrecv(m, B, MPI_BYTE, (mr + 1) % n, 0, rm, B, MPI_BYTE, (mr + n - 1) % n, 0, merged, MPI_STATUS_IGNORE);

  int root = me % 2 ? 0 : (hr == 0 ? MPI_ROOT : MPI_PROC_NULL);   /* rank 0 of the even half sends */
  MPI_Bcast(w, 4, MPI_BYTE, root, inter);
  /* rank 0 of the odd half gathers 2 bytes from each even rank and scatters 3 to each; every
     rank gathers 2 bytes from each rank of the other half, and exchanges 1 byte with each */
  int oroot = me % 2 ? (hr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  uint8_t g[2 * MAXH], sc[3 * MAXH], r3[3], ag[2 * MAXH], at[MAXH], rat[MAXH];
  rt_fill(g, sizeof g); rt_fill(sc, sizeof sc); rt_fill(r3, sizeof r3); rt_fill(ag, sizeof ag);
  rt_fill(at, sizeof at); rt_fill(rat, sizeof rat);
  MT_REQUIRE(rn <= MAXH);
  MPI_Gather(a, 2, MPI_BYTE, g, 2, MPI_BYTE, oroot, inter);
  MPI_Scatter(sc, 3, MPI_BYTE, r3, 3, MPI_BYTE, oroot, inter);
  MPI_Allgather(a + 2, 2, MPI_BYTE, ag, 2, MPI_BYTE, inter);
  MPI_Alltoall(at, 1, MPI_BYTE, rat, 1, MPI_BYTE, inter);
  MPI_Barrier(inter);

  /* v- and w-forms: rank r of a half sends r % 3 + 1 bytes (gatherv, scatterv), one block of
     every other byte (allgatherv's receive type), r % 2 + 1 bytes to each (alltoallv), a
     short each (alltoallw, displacements in bytes) */
  int cnt[MAXH], dsp[MAXH], two[MAXH], d2[MAXH], one[MAXH], db[MAXH];
  MPI_Datatype shorts[MAXH], every_other;
  for (int r = 0; r < rn; r++)
    cnt[r] = r % 3 + 1, dsp[r] = 4 * r, two[r] = hr % 2 + 1, d2[r] = 2 * r, one[r] = 1, db[r] = 2 * r, shorts[r] = MPI_SHORT;
  int sendv[MAXH];
  for (int r = 0; r < rn; r++) sendv[r] = r % 2 + 1;
  MPI_Type_vector(2, 1, 2, MPI_BYTE, &every_other);
  MPI_Type_commit(&every_other);
  uint8_t gv[4 * MAXH], sv[4 * MAXH], rv[4], agv[12 * MAXH], av[2 * MAXH], rav[2 * MAXH], aw[2 * MAXH], raw[2 * MAXH];
  rt_fill(gv, sizeof gv); rt_fill(sv, sizeof sv); rt_fill(rv, sizeof rv); rt_fill(agv, sizeof agv);
  rt_fill(av, sizeof av); rt_fill(rav, sizeof rav); rt_fill(aw, sizeof aw); rt_fill(raw, sizeof raw);
  MPI_Gatherv(a, hr % 3 + 1, MPI_BYTE, gv, cnt, dsp, MPI_BYTE, oroot, inter);
  MPI_Scatterv(sv, cnt, dsp, MPI_BYTE, rv, hr % 3 + 1, MPI_BYTE, oroot, inter);
  MPI_Allgatherv(a + 4, 2, MPI_BYTE, agv, one, dsp, every_other, inter);   /* block r at 12 r */
  MPI_Alltoallv(av, sendv, d2, MPI_BYTE, rav, two, d2, MPI_BYTE, inter);
  MPI_Alltoallw(aw, one, db, shorts, raw, one, db, shorts, inter);
  MPI_Type_free(&every_other);

  /* nonblocking: a bcast from the odd half and a gatherv at the even half's rank 0, a ring on
     MPI_COMM_WORLD between their start and their completion */
  uint8_t nb[4], ngv[4 * MAXH], nr[B], ns[B];
  rt_fill(nb, sizeof nb); rt_fill(ngv, sizeof ngv);
  int nroot = me % 2 ? (hr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, groot = me % 2 ? 0 : (hr == 0 ? MPI_ROOT : MPI_PROC_NULL);
  MPI_Request nreq[2];
  MPI_Ibcast(nb, 4, MPI_BYTE, nroot, inter, &nreq[0]);
  MPI_Igatherv(a + 8, hr % 3 + 1, MPI_BYTE, ngv, cnt, dsp, MPI_BYTE, groot, inter, &nreq[1]);
  rt_ring(ns, nr, B);
  MPI_Waitall(2, nreq, MPI_STATUSES_IGNORE);

  /* reductions across the halves: each rank contributes its world rank's values */
  int v = me + 1, sum = -1, mx = -1, other = 0, top = 0, rsb[MAXH], rs[MAXH * MAXH], in[MAXH * MAXH];
  for (int o = 0; o < n; o++)
    if (o % 2 != me % 2) other += o + 1, top = o + 1;
  MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, inter);
  MT_REQUIRE(sum == other);
  MPI_Reduce(&v, &mx, 1, MPI_INT, MPI_MAX, me % 2 ? (hr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, inter);
  MT_REQUIRE(!(me % 2 && hr == 0) || mx == top);
  /* inputs of hn * rn ints (both halves alike), element i of rank o's is 100 o + i; this rank's
     block of the other half's sums: rn of them (reduce_scatter_block), or the counts below */
  for (int i = 0; i < hn * rn; i++) in[i] = 100 * me + i;
  MPI_Reduce_scatter_block(in, rsb, rn, MPI_INT, MPI_SUM, inter);
  int rcounts[MAXH], first = 0;
  for (int i = 0; i < hn; i++) rcounts[i] = i == 0 ? hn * rn - (hn - 1) : 1;
  for (int i = 0; i < hr; i++) first += rcounts[i];
  MPI_Reduce_scatter(in, rs, rcounts, MPI_INT, MPI_SUM, inter);
  for (int e = 0; e < rn; e++) {
    int want = 0;
    for (int o = 0; o < n; o++) want += o % 2 != me % 2 ? 100 * o + hr * rn + e : 0;
    MT_REQUIRE(rsb[e] == want);
  }
  for (int e = 0; e < rcounts[hr]; e++) {
    int want = 0;
    for (int o = 0; o < n; o++) want += o % 2 != me % 2 ? 100 * o + first + e : 0;
    MT_REQUIRE(rs[e] == want);
  }
  double dv = me, dmin = -1;
  MPI_Request rq1;
  MPI_Iallreduce(&dv, &dmin, 1, MPI_DOUBLE, MPI_MIN, inter, &rq1);
  MPI_Wait(&rq1, MPI_STATUS_IGNORE);
  MT_REQUIRE(dmin == (me % 2 ? 0.0 : 1.0));
  /* the even half reduces to rank 0 of the odd one; the odd half's other ranks pass nothing */
  int top2 = -1;
  if (me % 2 == 0) MPI_Reduce(&v, NULL, 1, MPI_INT, MPI_MAX, 0, inter);
  else if (hr == 0) MPI_Reduce(&v, &top2, 1, MPI_INT, MPI_MAX, MPI_ROOT, inter);   /* MPICH checks the root's sendbuf */
  else MPI_Reduce(NULL, NULL, 0, MPI_DATATYPE_NULL, MPI_MAX, MPI_PROC_NULL, inter);
  MT_REQUIRE(!(me % 2 && hr == 0) || top2 == top);
  /* an allgatherv into MPI_BOTTOM: the receive type is one int at bot's absolute address,
     resized to one int, so block r lands at bot + its displacement */
  static int bot[MAXH + 1];   /* receives bytes rm received (forwarded: the replay must put them alike) */
  rt_fill(bot, sizeof bot);
  MPI_Aint a0;
  int one1 = 1;
  MPI_Get_address(bot, &a0);
  MPI_Datatype h, at_bot;
  MPI_Type_create_hindexed(1, &one1, &a0, MPI_INT, &h);
  MPI_Type_create_resized(h, a0, sizeof(int), &at_bot);
  MPI_Type_commit(&at_bot);
  int after[MAXH];   /* block r at bot + r + 1: an offset from MPI_BOTTOM even at 2 processes */
  for (int r = 0; r < rn; r++) after[r] = r + 1;
  MPI_Allgatherv(rm, 4, MPI_BYTE, MPI_BOTTOM, one, after, at_bot, inter);
  static int botr[MAXH + 1];   /* bot sent on whole: the replay holds every byte of it */
  MPI_Sendrecv(bot, (rn + 1) * 4, MPI_BYTE, (me + 1) % n, 5, botr, (MAXH + 1) * 4, MPI_BYTE, (me + n - 1) % n, 5,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Type_free(&at_bot);
  MPI_Type_free(&h);

  MPI_Comm_free(&merged);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
  if (hr < rn) rt_keep(ra, B);
  rt_keep(rw, B);
  rt_keep(rm, B);
  if (me % 2) rt_keep(w, 4);   /* the broadcast's */
  if (oroot == MPI_ROOT) rt_keep(g, 2 * (size_t)rn);
  if (me % 2 == 0) rt_keep(r3, 3);
  rt_keep(ag, 2 * (size_t)rn);
  rt_keep(rat, (size_t)rn);
  for (int r = 0; oroot == MPI_ROOT && r < rn; r++) rt_keep(gv + 4 * r, (size_t)cnt[r]);
  if (me % 2 == 0) rt_keep(rv, (size_t)(hr % 3 + 1));
  for (int r = 0; r < rn; r++) {
    rt_keep(agv + 12 * r, 1);
    rt_keep(agv + 12 * r + 2, 1);
    rt_keep(rav + 2 * r, (size_t)(hr % 2 + 1));
    rt_keep(raw + 2 * r, 2);
  }
  if (me % 2 == 0) rt_keep(nb, 4);
  for (int r = 0; groot == MPI_ROOT && r < rn; r++) rt_keep(ngv + 4 * r, (size_t)cnt[r]);
  rt_keep(nr, B);
  rt_keep(bot + 1, (size_t)rn * sizeof *bot);
  int lrn = 0;   /* the left neighbour's other half's size: the ints it sent */
  MPI_Sendrecv(&rn, 1, MPI_INT, (me + 1) % n, 6, &lrn, 1, MPI_INT, (me + n - 1) % n, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  rt_keep(botr, (size_t)(lrn + 1) * sizeof *botr);
  return rt_finish();
}
#endif
