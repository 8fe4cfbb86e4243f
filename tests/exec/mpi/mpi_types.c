/* cdag MPI test — cdag_send_type / cdag_recv_type with derived datatypes (mpiexec -n 1..8).
 *
 * Each case sends along a ring (rank r to r+1) with a pair of datatypes of one signature,
 * through a graph compiled with detection and one run as written, twice each, and compares
 * the receive buffer byte for byte with MPI_Sendrecv of the same datatypes. Cases: vector,
 * indexed out of order, a resized struct with padding, a 2-D subarray, a vector sent and
 * received as another shape, a contiguous type (one range: no packing), blocks of one length
 * at irregular places (listed copies). Then a transpose
 * written as typed sends to every rank (a strided column block each), which detection must
 * see as an alltoall at 3 or more ranks, against MPI_Alltoall with the same types, and a
 * column broadcast as vectors, in which detection must find the bcast; and the
 * errors: a receive type that writes a byte twice, a negative count, MPI_DATATYPE_NULL,
 * MPI_PROC_NULL. And the graph's size: a column of 256 rows (a vector) and 1000 resized
 * ints are one strided copy each way, 256 scattered doubles one listed copy, so a send and a
 * receive are 4 operations, and they
 * still arrive as MPI_Sendrecv delivers them. Run as written, each typed message is one MPI
 * message of a vector datatype (the strided copies fused into it: 2 messages and 2 copies
 * fused per rank), and where the program overwrites the column after the send, the pack
 * stays a copy and the send still carries the old column. MPI_BOTTOM with a struct of
 * absolute addresses travels as MPI moves it. Exit 0 on success. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cdag.h>
#include <mpi.h>

#include "exec/mpi/schedule.h"
#include "mpi_test.h"

enum { BUF = 4096, NCASES = 7 };

static int R, P;

/* The default options but detect. */
static cdag_options with_detect(int detect) {
  cdag_options o;
  cdag_options_init(&o);
  o.detect = detect;
  return o;
}

static void fill(uint8_t *b, int seed) {
  for (int k = 0; k < BUF; k++) b[k] = (uint8_t)(k * 13 + seed * 71 + 5);
}

/* Case c: the send and receive datatypes (committed) and counts. */
static void make_case(int c, MPI_Datatype *st, int *sc, MPI_Datatype *rt, int *rc) {
  MPI_Datatype s = MPI_DATATYPE_NULL, r = MPI_DATATYPE_NULL;
  *sc = *rc = 1;
  switch (c) {
  case 0:
    MPI_Type_vector(4, 2, 5, MPI_INT, &s);
    MPI_Type_dup(s, &r);
    *sc = *rc = 3;
    break;
  case 1: {
    int bl[3] = {1, 3, 2}, dp[3] = {7, 0, 12};
    MPI_Type_indexed(3, bl, dp, MPI_DOUBLE, &s);
    MPI_Type_dup(s, &r);
    *sc = *rc = 2;
    break;
  }
  case 2: {
    int bl[3] = {1, 1, 1};
    MPI_Aint dp[3] = {0, 8, 16};
    MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, st0;
    MPI_Type_create_struct(3, bl, dp, ty, &st0);
    MPI_Type_create_resized(st0, 0, 32, &s);
    MPI_Type_free(&st0);
    MPI_Type_dup(s, &r);
    *sc = *rc = 4;
    break;
  }
  case 3: {
    int sizes[2] = {8, 10}, sub[2] = {3, 4}, start[2] = {2, 5};
    MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_INT, &s);
    MPI_Type_dup(s, &r);
    break;
  }
  case 4:   /* 12 ints: a vector at the sender, 3 blocks of 4 at other places at the receiver */
    MPI_Type_vector(6, 2, 3, MPI_INT, &s);
    MPI_Type_vector(3, 4, 9, MPI_INT, &r);
    break;
  case 6: {   /* blocks of one length at no one stride, out of order: one copy of listed blocks each way */
    int ds[5] = {9, 0, 20, 5, 14}, dr[5] = {30, 2, 11, 24, 17};
    MPI_Type_create_indexed_block(5, 2, ds, MPI_DOUBLE, &s);
    MPI_Type_create_indexed_block(5, 2, dr, MPI_DOUBLE, &r);
    *sc = *rc = 3;
    break;
  }
  default:
    MPI_Type_contiguous(40, MPI_INT, &s);
    MPI_Type_dup(s, &r);
    break;
  }
  MPI_Type_commit(&s);
  MPI_Type_commit(&r);
  *st = s;
  *rt = r;
}

/* One ring exchange of case c, compiled with `detect`, run twice, against MPI. */
static void ring_case(int c, int detect) {
  MPI_Datatype st, rt;
  int sc, rc;
  make_case(c, &st, &sc, &rt, &rc);
  uint8_t *src = malloc(BUF), *want = malloc(BUF), *got = malloc(BUF);
  int next = (R + 1) % P, prev = (R - 1 + P) % P;
  fill(src, R);
  memset(want, 0xee, BUF);
  MPI_Sendrecv(src, sc, st, next, 7, want, rc, rt, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  cdag_graph *g;
  cdag_schedule *s = NULL;
  cdag_options o = with_detect(detect);
  int err = cdag_graph_create(MPI_COMM_WORLD, &g);
  if (!err) err = cdag_send_type(g, src, sc, st, next, 7, NULL);
  if (!err) err = cdag_recv_type(g, got, rc, rt, prev, 7, NULL);
  if (!err) err = cdag_compile(g, &o, &s);
  cdag_graph_free(&g);   /* the schedule keeps what it needs */
  for (int run = 0; run < 2 && !err; run++) {
    memset(got, 0xee, BUF);
    err = cdag_run(s);
    MT_EXPECT_MSG(err || memcmp(got, want, BUF) == 0, "case %d detect %d run %d: received bytes differ from MPI's", c, detect, run);
  }
  MT_EXPECT_MSG(!err, "case %d detect %d: %s", c, detect, cdag_error_message());
  cdag_schedule_free(&s);
  MPI_Type_free(&st);
  MPI_Type_free(&rt);
  free(src);
  free(want);
  free(got);
}

/* The text report of s names what (a collective detection must have found). */
static void expect_in_report(const cdag_schedule *s, const char *what, const char *test) {
  char text[4096] = "";
  FILE *f = fmemopen(text, sizeof text - 1, "w");
  cdag_schedule_report(s, f, 0);
  fclose(f);
  MT_EXPECT_MSG(strstr(text, what) != NULL, "%s: no %s in the report:\n%s", test, what, text);
}

/* A transpose of a P x P matrix of 8-double blocks, distributed by block rows: rank r
   sends block column j of its rows as a strided vector to rank j, which stores it as its
   row block r (contiguous). With 3 or more ranks detection finds an alltoall. */
static void transpose(void) {
  enum { B = 8 };
  int n = P * B;
  double *a = malloc((size_t)B * n * sizeof *a), *want = malloc((size_t)B * n * sizeof *a),
         *got = malloc((size_t)B * n * sizeof *a);
  for (int k = 0; k < B * n; k++) a[k] = R * 1000 + k;
  MPI_Datatype col, colr;
  MPI_Type_vector(B, B, n, MPI_DOUBLE, &col);        /* B rows of a B-wide column block */
  MPI_Type_create_resized(col, 0, B * sizeof(double), &colr);
  MPI_Type_commit(&colr);
  MPI_Alltoall(a, 1, colr, want, B * B, MPI_DOUBLE, MPI_COMM_WORLD);
  cdag_graph *g;
  cdag_schedule *s = NULL;
  int err = cdag_graph_create(MPI_COMM_WORLD, &g);
  for (int j = 0; j < P && !err; j++) {
    err = cdag_send_type(g, a + j * B, 1, colr, j, 3, NULL);
    if (!err) err = cdag_recv_type(g, got + j * B * B, B * B, MPI_DOUBLE, j, 3, NULL);
  }
  if (!err) err = cdag_compile(g, NULL, &s);
  for (int run = 0; run < 2 && !err; run++) {
    memset(got, 0, (size_t)B * n * sizeof *got);
    err = cdag_run(s);
    MT_EXPECT_MSG(err || memcmp(got, want, (size_t)B * n * sizeof *got) == 0, "transpose run %d differs from MPI_Alltoall", run);
  }
  MT_EXPECT_MSG(!err, "transpose: %s", cdag_error_message());
  if (!err && P >= 3) expect_in_report(s, "alltoall over all", "transpose");
  cdag_schedule_free(&s);
  cdag_graph_free(&g);
  MPI_Type_free(&col);
  MPI_Type_free(&colr);
  free(a);
  free(want);
  free(got);
}

static void errors(void) {
  uint8_t buf[64];
  cdag_graph *g;
  cdag_op op = 5;
  cdag_graph_create(MPI_COMM_WORLD, &g);
  MPI_Aint dp[2] = {0, 4};
  int bl[2] = {8, 8};
  MPI_Datatype twice;
  MPI_Type_create_hindexed(2, bl, dp, MPI_BYTE, &twice);
  MPI_Type_commit(&twice);
  MT_EXPECT_MSG(cdag_recv_type(g, buf, 1, twice, 0, 0, NULL) == CDAG_ERR_ARG &&
            strstr(cdag_error_message(), "writes the byte at offset 4 more than once"),
        "overlapping receive type: %s", cdag_error_message());
  MT_EXPECT_RC(cdag_send_type(g, buf, -1, MPI_INT, 0, 0, NULL), CDAG_ERR_ARG);   /* a negative count */
  MT_EXPECT_RC(cdag_send_type(g, buf, 1, MPI_DATATYPE_NULL, 0, 0, NULL), CDAG_ERR_ARG);
  MT_EXPECT_MSG(cdag_send_type(g, buf, 1, twice, MPI_PROC_NULL, 0, &op) == CDAG_OK && op == CDAG_OP_NULL, "PROC_NULL send");
  op = 5;
  MT_EXPECT_MSG(cdag_recv_type(g, buf, 1, MPI_INT, MPI_PROC_NULL, 0, &op) == CDAG_OK && op == CDAG_OP_NULL, "PROC_NULL recv");
  MT_EXPECT_RC(cdag_send_type(NULL, buf, 1, MPI_INT, 0, 0, NULL), CDAG_ERR_ARG);
  MPI_Type_free(&twice);
  cdag_graph_free(&g);
}

/* MPI_BOTTOM with a struct of absolute addresses (MPI_Get_address), as older codes send
   several variables in one message: a ring, compiled and as written, against MPI_Sendrecv;
   NULL with a datatype of relative displacements is refused, naming MPI_BOTTOM. */
static void bottom(void) {
  static double x[3], xr[3], xm[3];
  static int n[2], nr[2], nm[2];
  MPI_Aint a[2];
  int bl[2] = {3, 2};
  MPI_Datatype types[2] = {MPI_DOUBLE, MPI_INT}, ts, tr, tm;
  MPI_Get_address(x, &a[0]), MPI_Get_address(n, &a[1]);
  MPI_Type_create_struct(2, bl, a, types, &ts);
  MPI_Get_address(xr, &a[0]), MPI_Get_address(nr, &a[1]);
  MPI_Type_create_struct(2, bl, a, types, &tr);
  MPI_Get_address(xm, &a[0]), MPI_Get_address(nm, &a[1]);
  MPI_Type_create_struct(2, bl, a, types, &tm);
  MPI_Type_commit(&ts), MPI_Type_commit(&tr), MPI_Type_commit(&tm);
  for (int k = 0; k < 3; k++) x[k] = R * 10.5 + k;
  n[0] = R, n[1] = -R;
  MPI_Sendrecv(MPI_BOTTOM, 1, ts, (R + 1) % P, 3, MPI_BOTTOM, 1, tm, (R + P - 1) % P, 3, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  for (int detect = 1; detect >= 0; detect--) {
    cdag_graph *g;
    cdag_schedule *s = NULL;
    cdag_options o = with_detect(detect);
    memset(xr, 0, sizeof xr), memset(nr, 0, sizeof nr);
    MT_EXPECT(cdag_graph_create(MPI_COMM_WORLD, &g) == CDAG_OK);
    MT_EXPECT_MSG(cdag_send_type(g, MPI_BOTTOM, 1, ts, (R + 1) % P, 3, NULL) == CDAG_OK, "%s", cdag_error_message());
    MT_EXPECT_MSG(cdag_recv_type(g, MPI_BOTTOM, 1, tr, (R + P - 1) % P, 3, NULL) == CDAG_OK, "%s", cdag_error_message());
    MT_EXPECT(cdag_compile(g, &o, &s) == CDAG_OK && cdag_run(s) == CDAG_OK);
    MT_EXPECT(!memcmp(xr, xm, sizeof xr) && !memcmp(nr, nm, sizeof nr));
    cdag_schedule_free(&s);
    cdag_graph_free(&g);
  }
  cdag_graph *g;
  cdag_graph_create(MPI_COMM_WORLD, &g);
  MT_EXPECT_MSG(cdag_send_type(g, NULL, 2, MPI_INT, 0, 0, NULL) == CDAG_ERR_ARG &&
                    strstr(cdag_error_message(), "MPI_BOTTOM"),
                "NULL with relative displacements: %s", cdag_error_message());
  cdag_graph_free(&g);
  MPI_Type_free(&ts), MPI_Type_free(&tr), MPI_Type_free(&tm);
}

/* Column c of a rows x 4 matrix of doubles (a vector), 1000 ints each resized to 8 bytes,
   256 doubles at scattered places (an indexed block type), or every other row of 1024 doubles
   (8 KiB blocks, a vector): a send and a receive of it make 4 operations (pack, send,
   receive, unpack). Run as written, a message of blocks at one stride takes the blocks
   itself (an hvector, the copies fused into it) only when they are long (sched_vector_pays:
   8 KiB) and go to another rank (to itself: a local copy); short ones are packed, which MPICH does several times slower itself, and so are
   they compiled: residual messages, and from 3 ranks the slots of a collective (no MPI
   datatype then). */
enum { COLUMN, RESIZED, SCATTERED, LONG_ROWS };
static void strided_ops(int kind) {
  enum { ROWS = 256, COLS = 4, LONG = 1024 };
  static const char *const name[] = {"a column", "resized ints", "scattered doubles", "long rows"};
  MPI_Datatype t;
  int count = 1, fused = kind == LONG_ROWS && P > 1 ? 4 : 0;   /* alone, its messages go to itself: local copies */
  if (kind == LONG_ROWS) {
    MPI_Type_vector(4, LONG, 2 * LONG, MPI_DOUBLE, &t);
  } else if (kind == RESIZED) {
    MPI_Type_create_resized(MPI_INT, 0, 8, &t);
    count = 1000;
  } else if (kind == SCATTERED) {
    int dp[ROWS];
    for (int k = 0; k < ROWS; k++) dp[k] = k * 389 % 1000;   /* distinct, at no one stride */
    MPI_Type_create_indexed_block(ROWS, 1, dp, MPI_DOUBLE, &t);
  } else {
    MPI_Type_vector(ROWS, 1, COLS, MPI_DOUBLE, &t);
  }
  MPI_Type_commit(&t);
  size_t bytes = (kind == LONG_ROWS ? 8 * LONG : ROWS * COLS) * sizeof(double);
  uint8_t *src = malloc(bytes), *want = malloc(bytes), *got = malloc(bytes);
  int next = (R + 1) % P, prev = (R - 1 + P) % P;
  for (size_t k = 0; k < bytes; k++) src[k] = (uint8_t)(k * 7 + (size_t)R * 29 + 1);
  memset(want, 0xee, bytes);
  MPI_Sendrecv(src + 8, count, t, next, 9, want + 16, count, t, prev, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  for (int detect = 1; detect >= 0; detect--) {
    cdag_graph *g;
    cdag_schedule *s = NULL;
    cdag_options o = with_detect(detect);
    int64_t nops = -1;
    int err = cdag_graph_create(MPI_COMM_WORLD, &g);
    if (!err) err = cdag_send_type(g, src + 8, count, t, next, 9, NULL);
    if (!err) err = cdag_recv_type(g, got + 16, count, t, prev, 9, NULL);
    if (!err) err = cdag_graph_info(g, NULL, &nops);
    MT_EXPECT_MSG(err || nops == 4, "%s: %lld operations, not 4", name[kind], (long long)nops);
    if (!err) err = cdag_compile(g, &o, &s);
    cdag_graph_free(&g);
    if (!err && !detect && s->mode == PART_GRAPH) {
      int nfused = 0;
      for (int64_t k = 0; s->eng.fused && k < s->eng.nops; k++) nfused += s->eng.fused[k] >= 0;
      MT_EXPECT_MSG(nfused == fused, "%s as written: %d ops fused into vector messages, not %d", name[kind], nfused,
                    fused);   /* listed blocks are no vector: copied */
    }
    if (!err && !fused)   /* short blocks packed, as written and compiled (residual messages and collectives alike) */
      MT_EXPECT_MSG(s->ntypes == 0, "%s detect %d: %lld MPI datatypes", name[kind], detect, (long long)s->ntypes);
    for (int run = 0; run < 2 && !err; run++) {
      memset(got, 0xee, bytes);
      err = cdag_run(s);
      MT_EXPECT_MSG(err || memcmp(got, want, bytes) == 0, "%s detect %d run %d: received bytes differ from MPI's",
                    name[kind], detect, run);
    }
    MT_EXPECT_MSG(!err, "%s detect %d: %s", name[kind], detect, cdag_error_message());
    cdag_schedule_free(&s);
  }
  MPI_Type_free(&t);
  free(src);
  free(want);
  free(got);
}

/* A column sent and then overwritten by a local copy: the pack must stay a copy (the send
   would otherwise read the new values while in flight), as written and compiled. */
static void overwritten_column(void) {
  enum { ROWS = 64, COLS = 4 };
  MPI_Datatype t;
  MPI_Type_vector(ROWS, 1, COLS, MPI_DOUBLE, &t);
  MPI_Type_commit(&t);
  size_t bytes = ROWS * COLS * sizeof(double);
  uint8_t *src = malloc(bytes), *want = malloc(bytes), *got = malloc(bytes), *fresh = malloc(bytes);
  int next = (R + 1) % P, prev = (R - 1 + P) % P;
  for (size_t k = 0; k < bytes; k++) src[k] = (uint8_t)(k * 5 + (size_t)R * 31 + 3), fresh[k] = (uint8_t)(k ^ 0x5a);
  memset(want, 0xee, bytes);
  MPI_Sendrecv(src, 1, t, next, 4, want, 1, t, prev, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  uint8_t *orig = malloc(bytes);
  memcpy(orig, src, bytes);
  for (int detect = 1; detect >= 0; detect--) {
    cdag_graph *g;
    cdag_schedule *s = NULL;
    cdag_options o = with_detect(detect);
    int err = cdag_graph_create(MPI_COMM_WORLD, &g);
    if (!err) err = cdag_send_type(g, src, 1, t, next, 4, NULL);
    if (!err) err = cdag_copy_local(g, fresh, src, bytes, NULL);
    if (!err) err = cdag_recv_type(g, got, 1, t, prev, 4, NULL);
    if (!err) err = cdag_compile(g, &o, &s);
    cdag_graph_free(&g);
    if (!err && !detect && s->mode == PART_GRAPH && s->eng.fused)
      for (int64_t k = 0; k < s->eng.nops; k++)
        MT_EXPECT_MSG(s->eng.kind[k] != IR_SEND || s->eng.fused[k] < 0, "the send of an overwritten column was fused");
    memcpy(src, orig, bytes);
    memset(got, 0xee, bytes);
    if (!err) err = cdag_run(s);
    MT_EXPECT_MSG(err || memcmp(got, want, bytes) == 0, "overwritten column detect %d: received bytes differ from MPI's", detect);
    MT_EXPECT_MSG(err || memcmp(src, fresh, bytes) == 0, "overwritten column detect %d: the copy did not land", detect);
    MT_EXPECT_MSG(!err, "overwritten column detect %d: %s", detect, cdag_error_message());
    cdag_schedule_free(&s);
  }
  MPI_Type_free(&t);
  free(src); free(want); free(got); free(fresh); free(orig);
}

/* Column 3 of rank 0's N x N row-major matrix, sent as a vector to every other rank's
   column 5: the same bytes as MPI_Bcast with those types. Its transfers are strided blocks,
   and detection must still see the broadcast among them (whether the price then keeps it or
   leaves the messages, the report names it). */
static void column_bcast(void) {
  enum { N = 40 };
  double *a = malloc(N * N * sizeof *a), *want = malloc(N * N * sizeof *a);
  for (int k = 0; k < N * N; k++) a[k] = want[k] = R * 10000 + k;
  MPI_Datatype col;
  MPI_Type_vector(N, 1, N, MPI_DOUBLE, &col);
  MPI_Type_commit(&col);
  MPI_Bcast(R ? want + 5 : want + 3, 1, col, 0, MPI_COMM_WORLD);
  cdag_graph *g;
  cdag_schedule *s = NULL;
  int err = cdag_graph_create(MPI_COMM_WORLD, &g);
  for (int j = 1; j < P && !err && R == 0; j++) err = cdag_send_type(g, a + 3, 1, col, j, 4, NULL);
  if (!err && R) err = cdag_recv_type(g, a + 5, 1, col, 0, 4, NULL);
  if (!err) err = cdag_compile(g, NULL, &s);
  if (!err) err = cdag_run(s);
  MT_EXPECT_MSG(err || memcmp(a, want, N * N * sizeof *a) == 0, "column bcast differs from MPI_Bcast");
  MT_EXPECT_MSG(!err, "column bcast: %s", cdag_error_message());
  if (!err && P >= 3 && R == 0) expect_in_report(s, "bcast", "column bcast");
  cdag_schedule_free(&s);
  cdag_graph_free(&g);
  MPI_Type_free(&col);
  free(a);
  free(want);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  for (int c = 0; c < NCASES; c++)
    for (int detect = 1; detect >= 0; detect--) ring_case(c, detect);
  transpose();
  column_bcast();
  strided_ops(COLUMN);
  strided_ops(RESIZED);
  strided_ops(SCATTERED);
  strided_ops(LONG_ROWS);
  overwritten_column();
  bottom();
  errors();
  return mt_finish("mpi_types");
}
