/* cdag tests — tests/record/rec_pcoll.c: MPI-4's persistent collectives, started again and
 * again.
 *
 * Requests made once with MPI_Allreduce_init, MPI_Bcast_init (of a strided vector type),
 * MPI_Alltoallv_init, MPI_Reduce_scatter_block_init, MPI_Barrier_init and
 * MPI_Neighbor_alltoall_init (on a periodic ring), each started ITERS times: by MPI_Start and
 * MPI_Wait, by MPI_Startall beside a persistent send and receive and then MPI_Waitall, and by
 * MPI_Start completed by polling MPI_Test, and the allreduce and the barrier started in one
 * order on even ranks and in the other on odd ones (MPI-4 matches them by their inits: the
 * recording must too, or it does not load). Each result is checked against the blocking call
 * and sent on to the next rank into the call's own input after its completion, so the next
 * start reads new bytes that only messages moved (the replay starts from the same bytes and
 * must end with the same), and the recording must hold every start as its collective,
 * completed where the program saw it complete. */
#include <string.h>

#include "rec_test.h"

enum { N = 6, ITERS = 3 };

/* The result r (n bytes) sent to the right, received from the left into in. */
static void pass_on(const void *r, void *in, int n) {
  MPI_Sendrecv(r, n, MPI_BYTE, (rt_rank + 1) % rt_size, 50, in, n, MPI_BYTE, (rt_rank + rt_size - 1) % rt_size, 50,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int n = rt_size, me = rt_rank;
  size_t vb = (size_t)n * N * sizeof(int32_t);
  int32_t *ain = malloc(N * sizeof *ain), *aout = malloc(N * sizeof *aout), *acheck = malloc(N * sizeof *acheck);
  double *bc = malloc(2 * N * sizeof *bc), *bsrc = malloc(N * sizeof *bsrc);
  int32_t *vin = malloc(vb), *vout = malloc(vb), *vcheck = malloc(vb), *rin = malloc(vb);
  int32_t *rout = malloc(N * sizeof *rout), *rcheck = malloc(N * sizeof *rcheck);
  int32_t *nin = malloc(2 * sizeof *nin), *nout = malloc(2 * sizeof *nout);
  uint8_t *p2po = malloc(8), *p2pi = malloc(8);
  int *cnt = malloc((size_t)n * sizeof *cnt), *dis = malloc((size_t)n * sizeof *dis);
  MT_REQUIRE(ain && aout && acheck && bc && bsrc && vin && vout && vcheck && rin && rout && rcheck && nin && nout &&
             p2po && p2pi && cnt && dis);
  rt_fill(ain, N * sizeof *ain), rt_fill(aout, N * sizeof *aout), rt_fill(bc, 2 * N * sizeof *bc);
  rt_fill(bsrc, N * sizeof *bsrc), rt_fill(vin, vb), rt_fill(vout, vb), rt_fill(rin, vb), rt_fill(rout, N * sizeof *rout);
  rt_fill(nin, 2 * sizeof *nin), rt_fill(nout, 2 * sizeof *nout), rt_fill(p2po, 8), rt_fill(p2pi, 8);
  for (int j = 0; j < n; j++) cnt[j] = 1 + (me + j) % 3, dis[j] = j * N;

  MPI_Datatype every_other;   /* N doubles, one apart */
  MPI_Type_vector(N, 1, 2, MPI_DOUBLE, &every_other);
  MPI_Type_commit(&every_other);
  MPI_Comm ring;
  int dims[1] = {n}, periods[1] = {1};
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);

  MPI_Request ar, bq, av, rs, br, nb, ps[2];
  MPI_Allreduce_init(ain, aout, N, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &ar);
  MPI_Bcast_init(bc, 1, every_other, n - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &bq);
  MPI_Alltoallv_init(vin, cnt, dis, MPI_INT32_T, vout, cnt, dis, MPI_INT32_T, MPI_COMM_WORLD, MPI_INFO_NULL, &av);
  MPI_Reduce_scatter_block_init(rin, rout, N, MPI_INT32_T, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &rs);
  MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &br);
  MPI_Neighbor_alltoall_init(nin, 1, MPI_INT32_T, nout, 1, MPI_INT32_T, ring, MPI_INFO_NULL, &nb);
  MPI_Send_init(p2po, 8, MPI_BYTE, (me + 1) % n, 51, MPI_COMM_WORLD, &ps[0]);
  MPI_Recv_init(p2pi, 8, MPI_BYTE, (me + n - 1) % n, 51, MPI_COMM_WORLD, &ps[1]);

  for (int it = 0; it < ITERS; it++) {
    MPI_Start(&ar);
    MPI_Wait(&ar, MPI_STATUS_IGNORE);
    MPI_Allreduce(ain, acheck, N, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
    MT_REQUIRE(!memcmp(aout, acheck, N * sizeof *aout));
    pass_on(aout, ain, N * sizeof *aout);

    MPI_Request all[3] = {bq, ps[0], ps[1]};
    MPI_Startall(3, all);
    MPI_Start(&av);
    MPI_Waitall(3, all, MPI_STATUSES_IGNORE);
    MPI_Wait(&av, MPI_STATUS_IGNORE);
    MPI_Alltoallv(vin, cnt, dis, MPI_INT32_T, vcheck, cnt, dis, MPI_INT32_T, MPI_COMM_WORLD);
    for (int j = 0; j < n; j++) MT_REQUIRE(!memcmp(vout + j * N, vcheck + j * N, (size_t)cnt[j] * sizeof *vout));
    pass_on(vout, vin, (int)vb);
    pass_on(p2pi, p2po, 8);
    /* the root's vector gets new doubles, one apart, from the left */
    MPI_Sendrecv(bsrc, N, MPI_DOUBLE, (me + 1) % n, 52, bc, 1, every_other, (me + n - 1) % n, 52, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);

    MPI_Start(&rs);
    int done = 0;
    while (!done) MPI_Test(&rs, &done, MPI_STATUS_IGNORE);
    MPI_Reduce_scatter_block(rin, rcheck, N, MPI_INT32_T, MPI_MAX, MPI_COMM_WORLD);
    MT_REQUIRE(!memcmp(rout, rcheck, N * sizeof *rout));
    pass_on(vout, rin, (int)vb);
    MPI_Start(&nb);
    MPI_Start(&br);
    MPI_Wait(&nb, MPI_STATUS_IGNORE);
    MPI_Wait(&br, MPI_STATUS_IGNORE);
    pass_on(nout, nin, 2 * sizeof *nout);
    /* MPI-4 matches persistent collectives by their inits: odd ranks start these two the
       other way round (MPICH's coll/p_order) */
    MPI_Request two[2] = {ar, br};
    MPI_Start(&two[me % 2]);
    MPI_Start(&two[1 - me % 2]);
    MPI_Waitall(2, two, MPI_STATUSES_IGNORE);
    pass_on(aout, ain, N * sizeof *aout);
  }
  MPI_Request free_them[8] = {ar, bq, av, rs, br, nb, ps[0], ps[1]};
  for (int k = 0; k < 8; k++) MPI_Request_free(&free_them[k]);
  MPI_Type_free(&every_other);
  MPI_Comm_free(&ring);

  rt_keep(ain, N * sizeof *ain), rt_keep(aout, N * sizeof *aout), rt_keep(bc, 2 * N * sizeof *bc);
  rt_keep(vin, vb), rt_keep(vout, vb), rt_keep(rin, vb), rt_keep(rout, N * sizeof *rout);
  rt_keep(nin, 2 * sizeof *nin), rt_keep(nout, 2 * sizeof *nout), rt_keep(p2po, 8), rt_keep(p2pi, 8);
  free(ain), free(aout), free(acheck), free(bc), free(bsrc), free(vin), free(vout), free(vcheck), free(rin);
  free(rout), free(rcheck), free(nin), free(nout), free(p2po), free(p2pi), free(cnt), free(dis);
  return rt_finish();
}
