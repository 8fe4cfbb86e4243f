/* cdag MPI test — the plan executor on a hand-made plan (run with mpiexec -n 1..8).
 *
 * A test hook replaces the analysis: the compiling rank gets a plan written here from a
 * table of every rank's buffer addresses, with one of each thing a plan holds:
 *   an alltoall (Alltoallw path), a broadcast from rank 1 % p (MPI_Bcast path), an int64
 *   sum allreduce, an allgather on the even ranks with own blocks in place (MPI_Allgatherv;
 *   a sub-communicator unless that is every rank), an allgather whose blocks land in two
 *   pieces (Alltoallw path), an allreduce in place (MPI_IN_PLACE) whose input another
 *   transfer reads, a reduce_scatter_block, a residual ring transfer, a residual reduction at rank 0
 *   with a contribution counted twice, one computed in place into an input others read, a zero-byte synchronisation, and a residual transfer
 *   that overwrites bytes the alltoall reads (the snapshot must send the origin).
 * Each run resets the inputs and poisons the outputs; every output element is checked
 * against its direct value, over three runs of each of two compilations of the same graph
 * (the second must come from the cache: exec_compile_stats). Exit 0 on success. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/mpi/schedule.h"
#include "mpi_test.h"

#define K 3                         /* int64 elements per block */
#define BLK (K * sizeof(int64_t))

static int P, R, NA;                /* ranks, this rank, blocks of A: max(P, 3) */
static uint64_t *addr_a, *addr_b;  /* every rank's A and B */

/* B sections (in blocks): alltoall p, bcast 1, allreduce 1, allgather p, ring 1, red 1, rsb 1,
   allgather in two pieces p, allreduce in place 1, ring reading it 1 */
static size_t sec(int s) {
  size_t off[10];
  off[0] = 0;
  off[1] = off[0] + (size_t)P;
  off[2] = off[1] + 1;
  off[3] = off[2] + 1;
  off[4] = off[3] + (size_t)P;
  off[5] = off[4] + 1;
  off[6] = off[5] + 1;
  off[7] = off[6] + 1;
  off[8] = off[7] + (size_t)P;  /* an in-place allreduce */
  off[9] = off[8] + 1;          /* a ring transfer reading what the in-place allreduce writes */
  return off[s] * BLK;
}
static uint64_t A(int r, int blk) { return addr_a[r] + (uint64_t)blk * BLK; }
static uint64_t B(int r, int s, int blk) { return addr_b[r] + sec(s) + (uint64_t)blk * BLK; }
static int64_t aval(int r, int blk, int k) { return (int64_t)r * 1000000 + blk * 1000 + k; }

/* ---- building the plan ---- */

typedef struct { cdag_plan *p; int64_t cap; } pbuild;

static void slot(cdag_plan *p, int64_t c, int m, int send, int s, uint64_t addr, uint64_t len) {
  det_coll *co = &p->colls[c];
  det_iov *v = &p->iovs[(send ? co->send_first + (int64_t)m * co->nsend_slots : co->recv_first + (int64_t)m * co->nrecv_slots) + s];
  v->first = p->npieces;
  v->n = 1;
  v->bytes = len;
  p->pieces[p->npieces++] = (det_piece){addr, len};
}

static int64_t coll(cdag_plan *p, det_kind kind, int root, const int32_t *mem, int n, int nsend, int nrecv) {
  int64_t c = p->ncolls++;
  det_coll *co = &p->colls[c];
  memset(co, 0, sizeof *co);
  co->kind = kind;
  co->root = root;
  co->nranks = n;
  co->ranks_first = p->nranks;
  memcpy(p->ranks + p->nranks, mem, (size_t)n * sizeof *mem);
  p->nranks += n;
  co->nsend_slots = nsend;
  co->nrecv_slots = nrecv;
  co->send_first = p->niovs;
  p->niovs += (int64_t)n * nsend;
  co->recv_first = p->niovs;
  p->niovs += (int64_t)n * nrecv;
  co->type = CDAG_INT64;
  co->op = CDAG_SUM;
  co->bytes = BLK;
  return c;
}

static void hand_free(cdag_plan *p) {
  if (!p) return;
  free(p->colls); free(p->ranks); free(p->iovs); free(p->pieces); free(p->xfers); free(p->reds);
  free(p->syncs);
  if (p->sst) { free(p->sst->sets); free(p->sst->runs); free(p->sst); }
  free(p);
}

static void add_colls(cdag_plan *p, const int32_t *all) {
  int64_t c = coll(p, DET_ALLTOALL, -1, all, P, P, P);
  for (int i = 0; i < P; i++)
    for (int j = 0; j < P; j++) {
      slot(p, c, i, 1, j, A(i, j), BLK);
      slot(p, c, j, 0, i, B(j, 0, i), BLK);
    }
  int root = 1 % P;
  c = coll(p, DET_BCAST, root, all, P, 1, 1);
  slot(p, c, root, 1, 0, A(root, 0), BLK);
  for (int i = 0; i < P; i++)
    if (i != root) slot(p, c, i, 0, 0, B(i, 1, 0), BLK);
  c = coll(p, DET_ALLREDUCE, -1, all, P, 1, 1);
  for (int i = 0; i < P; i++) {
    slot(p, c, i, 1, 0, A(i, 0), BLK);
    slot(p, c, i, 0, 0, B(i, 2, 0), BLK);
  }
  int32_t even[64];
  int ne = 0;
  for (int i = 0; i < P; i += 2) even[ne++] = i;
  c = coll(p, DET_ALLGATHER, -1, even, ne, 1, ne);
  for (int m = 0; m < ne; m++) {  /* own block empty: MPI_Allgatherv in place */
    slot(p, c, m, 1, 0, A(even[m], 1), BLK);
    for (int q = 0; q < ne; q++)
      if (q != m) slot(p, c, m, 0, q, B(even[m], 3, q), BLK);
  }
  c = coll(p, DET_ALLGATHER, -1, all, P, 1, P);  /* blocks in two pieces: the Alltoallw path */
  for (int i = 0; i < P; i++) {
    slot(p, c, i, 1, 0, A(i, 2), BLK);
    for (int q = 0; q < P; q++) {
      det_iov *v = &p->iovs[p->colls[c].recv_first + (int64_t)i * P + q];
      slot(p, c, i, 0, q, B(i, 7, q), 8);
      p->pieces[p->npieces++] = (det_piece){B(i, 7, q) + 8, BLK - 8};
      v->n = 2;
      v->bytes = BLK;
    }
  }
  c = coll(p, DET_ALLREDUCE, -1, all, P, 1, 1);  /* in place */
  for (int i = 0; i < P; i++) {
    slot(p, c, i, 1, 0, B(i, 8, 0), BLK);
    slot(p, c, i, 0, 0, B(i, 8, 0), BLK);
  }
  c = coll(p, DET_REDUCE_SCATTER_BLOCK, -1, all, P, P, 1);
  for (int i = 0; i < P; i++) {
    for (int j = 0; j < P; j++) slot(p, c, i, 1, j, A(i, j), BLK);
    slot(p, c, i, 0, 0, B(i, 6, 0), BLK);
  }
}

static void add_residual(cdag_plan *p) {
  for (int r = 0; r < P; r++)  /* reads the origin of what the in-place allreduce writes */
    p->xfers[p->nxfers++] = (df_xfer){r, (r + 1) % P, B(r, 8, 0), B((r + 1) % P, 9, 0), BLK, 0, 0, 0};
  for (int r = 0; r < P; r++) {  /* ring, and the write over bytes the alltoall reads */
    p->xfers[p->nxfers++] = (df_xfer){r, (r + 1) % P, A(r, 2), B((r + 1) % P, 4, 0), BLK, 0, 0, 0};
    p->xfers[p->nxfers++] = (df_xfer){(r + 1) % P, r, A((r + 1) % P, 0), A(r, NA - 1), BLK, 0, 0, 0};
  }
  df_sst *sst = calloc(1, sizeof *sst);
  sst->sets = calloc(2, sizeof *sst->sets);
  sst->runs = calloc(2 * (size_t)P, sizeof *sst->runs);
  for (int r = 0; r < P; r++) {
    sst->runs[r] = (df_run){r, r, r == 0 ? 2 : 1, A(r, 1)};
    sst->runs[P + r] = (df_run){r, r, 1, A(r, 1)};
  }
  sst->sets[0] = (df_set){0, P, P + 1, 0};
  sst->sets[1] = (df_set){P, P, P, 1};
  sst->nsets = 2;
  sst->nruns = 2 * P;
  p->sst = sst;
  p->reds[p->nreds++] = (df_red){0, 0, B(0, 5, 0), K, CDAG_INT64, CDAG_SUM};
  p->reds[p->nreds++] = (df_red){0, 1, A(0, 1), K, CDAG_INT64, CDAG_SUM};  /* in place at rank 0 */
  p->syncs[0] = 0;
  p->syncs[1] = P - 1;
  p->nsyncs = 1;
}

static int hand_plan(cdag_graph *gg, const cdag_options *o, cdag_plan **out) {
  cdag_plan *p = calloc(1, sizeof *p);
  int64_t big = 8 * (int64_t)P * P + 64;
  p->nprocs = P;
  p->opts = *o;
  p->colls = calloc(16, sizeof *p->colls);
  p->ranks = calloc((size_t)big, sizeof *p->ranks);
  p->iovs = calloc((size_t)big, sizeof *p->iovs);
  p->pieces = calloc((size_t)big, sizeof *p->pieces);
  p->xfers = calloc((size_t)big, sizeof *p->xfers);
  p->reds = calloc(4, sizeof *p->reds);
  p->syncs = calloc(4, sizeof *p->syncs);
  int32_t all[64];
  for (int i = 0; i < P; i++) all[i] = i;
  add_colls(p, all);
  add_residual(p);
  *out = p;
  return CDAG_OK;
}

/* ---- checking ---- */

static int64_t *a, *b;
static size_t nb;

static int64_t *bsec(int s, int blk);

static void reset(void) {
  for (int j = 0; j < NA; j++)
    for (int k = 0; k < K; k++) a[j * K + k] = aval(R, j, k);
  for (size_t k = 0; k < nb; k++) b[k] = -7;
  for (int k = 0; k < K; k++) bsec(8, 0)[k] = aval(R, 8, k);
}

static int64_t *bsec(int s, int blk) { return (int64_t *)((char *)b + sec(s) + (size_t)blk * BLK); }

static int check(void) {
  int bad = 0, root = 1 % P;
  int64_t tri = (int64_t)P * (P - 1) / 2;
  for (int k = 0; k < K; k++) {
    for (int i = 0; i < P; i++) bad += bsec(0, i)[k] != aval(i, R, k);  /* origins, snapshot or not */
    bad += bsec(1, 0)[k] != (R == root ? -7 : aval(root, 0, k));
    bad += bsec(2, 0)[k] != tri * 1000000 + (int64_t)P * k;
    for (int m = 0; m < P; m++) {
      int64_t want = R % 2 == 0 && 2 * m < P && 2 * m != R ? aval(2 * m, 1, k) : -7;
      bad += bsec(3, m)[k] != want;
      bad += bsec(7, m)[k] != aval(m, 2, k);
    }
    bad += bsec(4, 0)[k] != aval((R - 1 + P) % P, 2, k);
    int64_t red = tri * 1000000 + (int64_t)P * (1000 + k) + aval(0, 1, k);
    bad += bsec(5, 0)[k] != (R == 0 ? red : -7);
    bad += bsec(6, 0)[k] != tri * 1000000 + (int64_t)P * (R * 1000 + k);
    bad += bsec(8, 0)[k] != tri * 1000000 + (int64_t)P * (8000 + k);
    bad += bsec(9, 0)[k] != aval((R - 1 + P) % P, 8, k);
    bad += a[(NA - 1) * K + k] != aval((R + 1) % P, 0, k);
    if (NA - 1 != 1) bad += a[K + k] != (R == 0 ? tri * 1000000 + (int64_t)P * (1000 + k) : aval(R, 1, k));
  }
  return bad;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  NA = P < 3 ? 3 : P;
  a = calloc((size_t)NA, BLK);
  nb = sec(9) / sizeof(int64_t) + K;
  b = calloc(nb, sizeof *b);
  addr_a = calloc((size_t)P, sizeof *addr_a);
  addr_b = calloc((size_t)P, sizeof *addr_b);
  uint64_t mine[2] = {(uint64_t)(uintptr_t)a, (uint64_t)(uintptr_t)b}, *both = calloc(2 * (size_t)P, sizeof *both);
  MPI_Allgather(mine, 2, MPI_UINT64_T, both, 2, MPI_UINT64_T, MPI_COMM_WORLD);
  for (int r = 0; r < P; r++) {
    addr_a[r] = both[2 * r];
    addr_b[r] = both[2 * r + 1];
  }
  exec_set_analyzer(hand_plan, hand_free);
  int bad = 0, rc = CDAG_OK;
  int64_t dummy[K];
  for (int round = 0; round < 2 && !rc; round++) {
    cdag_graph *g = NULL;
    cdag_schedule *s = NULL;
    rc = cdag_graph_create(MPI_COMM_WORLD, &g);  /* the graph only has to be valid */
    if (!rc) rc = cdag_send(g, a, BLK, (R + 1) % P, 0, NULL);
    if (!rc) rc = cdag_recv(g, dummy, BLK, (R - 1 + P) % P, 0, NULL);
    if (!rc) rc = cdag_compile(g, NULL, &s);
    for (int run = 0; run < 3 && !rc; run++) {
      reset();
      rc = run == 1 ? cdag_start(s) : cdag_run(s);
      if (!rc && run == 1) rc = cdag_wait(s);
      bad += check();
    }
    cdag_schedule_free(&s);
    cdag_graph_free(&g);
  }
  MT_OK(rc);
  int64_t compiles = 0, hits = 0;
  exec_compile_stats(&compiles, &hits);
  MT_EXPECT_INT(compiles, ==, 1);
  MT_EXPECT_INT(hits, ==, 1);
  MT_EXPECT_INT(bad, ==, 0);   /* wrong values */
  free(a); free(b); free(addr_a); free(addr_b); free(both);
  return mt_finish("mpi_plan_exec");
}
