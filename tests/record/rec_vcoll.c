/* cdag tests — tests/record/rec_vcoll.c: the v- and w-collectives, Reduce_scatter, Scan, Exscan.
 *
 * Blocks of unequal sizes (member i: i + 1 elements) at displacements with gaps and out of
 * order, on the world and in place: gatherv, scatterv, allgatherv, alltoallv, alltoallw
 * (a datatype per peer: int32 to even members, a strided vector to odd ones),
 * reduce_scatter, scan and exscan, the neighbourhood collectives on Cartesian, graph and
 * distributed-graph communicators; a gatherv whose root receives a strided vector (a packing area). The
 * recording must hold each as a native call whose bytes replay as the program's did. */
#include <string.h>

#include "rec_test.h"

enum { MAXP = 8, CAP = 256 };

static int32_t sbuf[CAP], rbuf[CAP], ibuf[CAP], tbuf[CAP], wbuf[CAP], zbuf[CAP], red[CAP], rin[CAP];

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int n = rt_size, me = rt_rank;
  MT_REQUIRE(n <= MAXP);
  rt_fill(sbuf, sizeof sbuf); rt_fill(rbuf, sizeof rbuf); rt_fill(ibuf, sizeof ibuf); rt_fill(tbuf, sizeof tbuf);
  rt_fill(wbuf, sizeof wbuf); rt_fill(zbuf, sizeof zbuf); rt_fill(red, sizeof red); rt_fill(rin, sizeof rin);
  int cnt[MAXP], dsp[MAXP], sc[MAXP], sd[MAXP], rc[MAXP], rd[MAXP];
  for (int i = 0, at = 0; i < n; i++) {   /* member i: i + 1 elements, in reverse order, one gap between */
    cnt[n - 1 - i] = n - i;
    dsp[n - 1 - i] = at;
    at += n - i + 1;
  }
  /* gatherv to the last rank, then scatterv back from it */
  MPI_Gatherv(sbuf, me + 1, MPI_INT32_T, rbuf, cnt, dsp, MPI_INT32_T, n - 1, MPI_COMM_WORLD);
  if (me == n - 1)
    for (int i = 0; i < n; i++) MT_REQUIRE(cnt[i] == i + 1);
  MPI_Scatterv(rbuf, cnt, dsp, MPI_INT32_T, tbuf + 1, me + 1, MPI_INT32_T, n - 1, MPI_COMM_WORLD);
  if (me != n - 1) MT_REQUIRE(memcmp(tbuf + 1, sbuf, (size_t)(me + 1) * sizeof *sbuf) == 0);
  /* allgatherv, then in place */
  MPI_Allgatherv(sbuf, me + 1, MPI_INT32_T, ibuf, cnt, dsp, MPI_INT32_T, MPI_COMM_WORLD);
  MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, cnt, dsp, MPI_INT32_T, MPI_COMM_WORLD);
  /* gatherv in place at rank 0, the root's blocks a strided vector (every other int32) */
  MPI_Datatype one, every2;
  MPI_Type_vector(1, 1, 2, MPI_INT32_T, &one);
  MPI_Type_create_resized(one, 0, 2 * sizeof(int32_t), &every2);
  MPI_Type_free(&one);
  MPI_Type_commit(&every2);
  if (me == 0) MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, zbuf, cnt, dsp, every2, 0, MPI_COMM_WORLD);
  else MPI_Gatherv(sbuf + 3, me + 1, MPI_INT32_T, NULL, NULL, NULL, MPI_INT32_T, 0, MPI_COMM_WORLD);
  /* alltoallv: member j gets j + 1 elements from each, sent from overlapping blocks */
  for (int j = 0; j < n; j++) {
    sc[j] = j + 1, sd[j] = j;
    rc[j] = me + 1, rd[j] = (n - 1 - j) * (me + 2);
  }
  MPI_Alltoallv(sbuf, sc, sd, MPI_INT32_T, wbuf, rc, rd, MPI_INT32_T, MPI_COMM_WORLD);
  for (int j = 0; j < n; j++) rc[j] = 2, rd[j] = 3 * (n - 1 - j);   /* in place: as much each way, gaps */
  MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, ibuf, rc, rd, MPI_INT32_T, MPI_COMM_WORLD);
  /* alltoallw: to even members 2 int32, to odd ones 2 every other int32; displacements in bytes */
  MPI_Datatype st[MAXP], rt[MAXP];
  int wsc[MAXP], wsd[MAXP], wrc[MAXP], wrd[MAXP];
  for (int j = 0; j < n; j++) {
    wsc[j] = 2, wsd[j] = j * 5 * (int)sizeof(int32_t), st[j] = j % 2 ? every2 : MPI_INT32_T;
    wrc[j] = 2, wrd[j] = (n - 1 - j) * 4 * (int)sizeof(int32_t), rt[j] = me % 2 ? every2 : MPI_INT32_T;
  }
  MPI_Alltoallw(sbuf, wsc, wsd, st, zbuf + 128, wrc, wrd, rt, MPI_COMM_WORLD);
  /* reduce_scatter of int32 sums: member i gets i + 1 elements; then in place */
  for (int j = 0; j < n; j++) rc[j] = j + 1;
  MPI_Reduce_scatter(rin, red, rc, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
  if (n == 1) MT_REQUIRE(red[0] == rin[0]);
  MPI_Reduce_scatter(MPI_IN_PLACE, rin, rc, MPI_INT32_T, MPI_MAX, MPI_COMM_WORLD);
  /* prefix reductions: scan of uint16 maxima, exscan of int64 sums, then both in place */
  static uint16_t dv[4], ds[4];
  static int64_t lv[4], ls[4];
  rt_fill(dv, sizeof dv); rt_fill(ds, sizeof ds); rt_fill(lv, sizeof lv); rt_fill(ls, sizeof ls);
  MPI_Scan(dv, ds, 4, MPI_UINT16_T, MPI_MAX, MPI_COMM_WORLD);
  MPI_Exscan(lv, ls, 4, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Scan(MPI_IN_PLACE, lv, 2, MPI_INT64_T, MPI_BXOR, MPI_COMM_WORLD);
  MPI_Exscan(MPI_IN_PLACE, red, 1, MPI_INT32_T, MPI_MIN, MPI_COMM_WORLD);
  /* neighbourhood collectives: a periodic grid (Cartesian: per dimension below, then above;
     the second dimension of 1 process: itself twice), a directed
     ring one way (distributed graph, adjacent), the ring both ways (graph) */
  MPI_Comm cart, dist, graph;
  int dims[2] = {n, 1}, periods[2] = {1, 1}, fwd = (me + 1) % n, back = (me + n - 1) % n;
  if (n % 2 == 0 && n >= 4) dims[0] = 2, dims[1] = n / 2;   /* 2 x n/2: a neighbour twice in dimension 0 */
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &back, MPI_UNWEIGHTED, 1, &fwd, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                 &dist);
  int index[MAXP], edges[2 * MAXP];
  for (int i = 0; i < n; i++) {
    index[i] = 2 * (i + 1);
    edges[2 * i] = (i + n - 1) % n, edges[2 * i + 1] = (i + 1) % n;
  }
  MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &graph);
  static int32_t nb_in[64], nb_out[5][64];
  rt_fill(nb_in, sizeof nb_in); rt_fill(nb_out, sizeof nb_out);
  MPI_Neighbor_allgather(nb_in, 3, MPI_INT32_T, nb_out[0], 3, MPI_INT32_T, cart);
  int ncnt[1] = {back % 2 ? 1 : 2}, ndsp[1] = {5};   /* what the rank behind sends */
  MPI_Neighbor_allgatherv(nb_in + 1, me % 2 ? 1 : 2, MPI_INT32_T, nb_out[1], ncnt, ndsp, MPI_INT32_T, dist);
  MPI_Neighbor_alltoall(nb_in, 2, MPI_INT32_T, nb_out[2], 2, MPI_INT32_T, graph);   /* 2 ranks: one neighbour twice */
  int vsc[4] = {2, 2, 3, 3}, vsd[4] = {6, 0, 9, 12}, vrc[4] = {2, 2, 3, 3}, vrd[4] = {0, 8, 3, 12};   /* alike per dimension */
  MPI_Neighbor_alltoallv(nb_in, vsc, vsd, MPI_INT32_T, nb_out[3], vrc, vrd, MPI_INT32_T, cart);
  int wc[2] = {2, 2};
  MPI_Aint wsd2[2] = {0, 16}, wrd2[2] = {32, 0};
  MPI_Datatype wst[2] = {every2, MPI_INT32_T}, wrt[2] = {MPI_INT32_T, every2};
  MPI_Neighbor_alltoallw(nb_in, wc, wsd2, wst, nb_out[4], wc, wrd2, wrt, graph);
  MPI_Comm_free(&cart);
  MPI_Comm_free(&dist);
  MPI_Comm_free(&graph);
  MPI_Type_free(&every2);
  rt_keep(rbuf, sizeof rbuf);
  rt_keep(ibuf, sizeof ibuf);
  rt_keep(tbuf, sizeof tbuf);
  rt_keep(wbuf, sizeof wbuf);
  rt_keep(zbuf, sizeof zbuf);
  rt_keep(red, (size_t)(me + 1) * sizeof *red);
  rt_keep(rin, (size_t)(me + 1) * sizeof *rin);
  rt_keep(ds, sizeof ds);
  rt_keep(nb_out, sizeof nb_out);
  rt_keep(lv, sizeof lv);
  if (me > 0) rt_keep(ls, sizeof ls);   /* rank 0's exscan result is undefined */
  return rt_finish();
}
