/* cdag tests — tests/record/rec_intercomm.c: intercommunicators.
 *
 * The ranks form two halves (even and odd) and an intercommunicator between them
 * (Intercomm_create). Each rank exchanges a message with the rank of the same number in
 * the other half, ranks named as the remote group's: the recording must give world ranks
 * and keep the intercommunicator's messages apart from MPI_COMM_WORLD's of the same tag.
 * Then the halves merged (Intercomm_merge) carry a ring, and collectives on the
 * intercommunicator (a bcast from rank 0 of the even half, a gather and a scatter at rank 0 of
 * the odd one, an allgather, an alltoall, a barrier) are recorded as the messages they move,
 * replayed and compared. */
#include <string.h>

#include "rec_test.h"

enum { B = 16, MAXH = 8 };

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
  return rt_finish();
}
