/* cdag tests — tests/dataflow/test_sst.c: Static Single Transfer form and wait sets.
 *
 * Hand-written graphs with known SST: the paper's butterfly alltoall (Figures 1-5), a
 * binomial broadcast, forwarding, a split send, scratch and overwritten data, self copies;
 * reductions: five allreduce patterns (recursive doubling, linear, chain, binomial, ring)
 * give the same reduction tuples; mixed ops and partial elements are reported; wait sets. */
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "dataflow/dataflow.h"

typedef struct {
  cdag_graph *g;
  match_result m;
  df_sst *s;
} fixture;

static int analyse(fixture *f) {
  ck_assert_int_eq(ir_finalize(f->g), CDAG_OK);
  int rc = match_run(f->g, &f->m);
  ck_assert_msg(rc == CDAG_OK, "match: %s", cdag_error_message());
  return dataflow_run(f->g, &f->m, &f->s);
}

static void analyse_ok(fixture *f) {
  int rc = analyse(f);
  ck_assert_msg(rc == CDAG_OK, "dataflow: %s", cdag_error_message());
}

static void done(fixture *f) {
  dataflow_free(f->s);
  match_free(&f->m);
  cdag_graph_free(&f->g);
}

static int has_xfer(const df_sst *s, int src, uint64_t sa, uint64_t len, int dst, uint64_t da) {
  for (int64_t i = 0; i < s->nxfers; i++) {
    const df_xfer *x = &s->xfers[i];
    if (x->src == src && x->src_addr == sa && x->len == len && x->dst == dst && x->dst_addr == da) return 1;
  }
  return 0;
}

static int64_t xfers_to(const df_sst *s, int dst) {
  int64_t n = 0;
  for (int64_t i = 0; i < s->nxfers; i++) n += s->xfers[i].dst == dst;
  return n;
}

/* Butterfly alltoall, p = 4, as in the paper: rank r keeps the block for rank r^j at
   location j; round k exchanges the locations with bit k set with rank r^2^k through a
   scratch buffer, then copies them in place. */
static void butterfly(fixture *f, int p) {
  ck_assert_int_eq(cdag_graph_create_global(p, &f->g), CDAG_OK);
  const uint64_t scr = 0x100;
  for (int r = 0; r < p; r++) {
    CK_OK(cdag_rank_scratch(f->g, r, scr, (uint64_t)p));
    for (int k = 1; k < p; k <<= 1) {
      int peer = r ^ k;
      for (int j = 0; j < p; j++) /* one message per run of contiguous locations */
        if ((j & k) && (j == 0 || !((j - 1) & k))) {
          int n = 0;
          while (j + n < p && ((j + n) & k)) n++;
          CK_OK(cdag_rank_send(f->g, r, (uint64_t)j, (uint64_t)n, peer, j, NULL));
          CK_OK(cdag_rank_recv(f->g, r, scr + (uint64_t)j, (uint64_t)n, peer, j, NULL));
        }
      for (int j = 0; j < p; j++)
        if (j & k) CK_OK(cdag_rank_copy_local(f->g, r, scr + (uint64_t)j, (uint64_t)j, 1, NULL));
    }
  }
}

START_TEST(paper_butterfly_alltoall) {
  fixture f = {0};
  butterfly(&f, 4);
  analyse_ok(&f);
  /* Paper: rank 0 ends with {(0,0,1,0,0), (0,1,1,1,1), (0,2,1,2,2), (0,3,1,3,3)}: location i
     of rank 0 holds location i of rank i. (0,0,1,0,0) is rank 0's own, never written byte:
     not a transfer here. */
  ck_assert_int_eq(xfers_to(f.s, 0), 3);
  for (int i = 1; i < 4; i++) ck_assert(has_xfer(f.s, i, (uint64_t)i, 1, 0, (uint64_t)i));
  for (int r = 0; r < 4; r++)
    for (int i = 1; i < 4; i++) ck_assert(has_xfer(f.s, r ^ i, (uint64_t)i, 1, r, (uint64_t)i));
  ck_assert_int_eq(f.s->nxfers, 12);
  ck_assert_int_eq(f.s->nreds, 0);
  ck_assert_int_ge(f.s->splits, 1); /* round 2 sends original and received data together */
  for (int r = 0; r < 4; r++)
    for (int j = 0; j < 4; j++) ck_assert(dataflow_waits_for(f.s, r, j));
  done(&f);
}
END_TEST

START_TEST(butterfly_eight) {
  fixture f = {0};
  butterfly(&f, 8);
  analyse_ok(&f);
  ck_assert_int_eq(f.s->nxfers, 56);
  for (int r = 0; r < 8; r++)
    for (int i = 1; i < 8; i++) ck_assert(has_xfer(f.s, r ^ i, (uint64_t)i, 1, r, (uint64_t)i));
  done(&f);
}
END_TEST

START_TEST(binomial_broadcast) {
  fixture f = {0};
  int p = 13;
  ck_assert_int_eq(cdag_graph_create_global(p, &f.g), CDAG_OK);
  for (int r = 0; r < p; r++) {
    int k = 1;
    if (r) {
      int msb = 1 << (31 - __builtin_clz((unsigned)r));
      CK_OK(cdag_rank_recv(f.g, r, 0x1000, 64, r - msb, 0, NULL));
      k = msb << 1;
    }
    for (; r + k < p; k <<= 1) CK_OK(cdag_rank_send(f.g, r, 0x1000, 64, r + k, 0, NULL));
  }
  analyse_ok(&f);
  ck_assert_int_eq(f.s->nxfers, p - 1);
  for (int r = 1; r < p; r++) ck_assert(has_xfer(f.s, 0, 0x1000, 64, r, 0x1000));
  ck_assert_int_eq(f.s->splits, 0);
  ck_assert(dataflow_waits_for(f.s, 12, 4));  /* 0 -> 4 -> 12 */
  ck_assert(dataflow_waits_for(f.s, 12, 0));
  ck_assert(!dataflow_waits_for(f.s, 12, 8));
  ck_assert(!dataflow_waits_for(f.s, 0, 1));
  done(&f);
}
END_TEST

START_TEST(forward_split_and_overwrite) {
  fixture f = {0};
  ck_assert_int_eq(cdag_graph_create_global(3, &f.g), CDAG_OK);
  /* rank 0 sends 16 bytes to rank 1 at 0x110; rank 1 forwards 0x108..0x118 (8 original,
     8 received) to rank 2, which then overwrites its last 4 bytes from rank 0 directly. */
  CK_OK(cdag_rank_send(f.g, 0, 0x500, 16, 1, 0, NULL));
  CK_OK(cdag_rank_recv(f.g, 1, 0x110, 16, 0, 0, NULL));
  CK_OK(cdag_rank_send(f.g, 1, 0x108, 16, 2, 0, NULL));
  CK_OK(cdag_rank_recv(f.g, 2, 0x900, 16, 1, 0, NULL));
  CK_OK(cdag_rank_send(f.g, 0, 0x700, 4, 2, 1, NULL));
  CK_OK(cdag_rank_recv(f.g, 2, 0x90c, 4, 0, 1, NULL));
  analyse_ok(&f);
  ck_assert(has_xfer(f.s, 0, 0x500, 16, 1, 0x110));
  ck_assert(has_xfer(f.s, 1, 0x108, 8, 2, 0x900));   /* rank 1's original part */
  ck_assert(has_xfer(f.s, 0, 0x500, 4, 2, 0x908));   /* passed through rank 1 */
  ck_assert(has_xfer(f.s, 0, 0x700, 4, 2, 0x90c));   /* the overwrite wins */
  ck_assert_int_eq(f.s->nxfers, 4);
  ck_assert_int_eq(f.s->splits, 1);
  ck_assert(dataflow_waits_for(f.s, 2, 1));
  ck_assert(dataflow_waits_for(f.s, 2, 0));
  done(&f);
}
END_TEST

START_TEST(scratch_is_not_final) {
  fixture f = {0};
  ck_assert_int_eq(cdag_graph_create_global(3, &f.g), CDAG_OK);
  CK_OK(cdag_rank_scratch(f.g, 1, 0x4000, 64));
  CK_OK(cdag_rank_send(f.g, 0, 0, 32, 1, 0, NULL));
  CK_OK(cdag_rank_recv(f.g, 1, 0x4000, 32, 0, 0, NULL));   /* only passes through scratch */
  CK_OK(cdag_rank_send(f.g, 1, 0x4008, 8, 2, 0, NULL));
  CK_OK(cdag_rank_recv(f.g, 2, 0x10, 8, 1, 0, NULL));
  analyse_ok(&f);
  ck_assert_int_eq(f.s->nxfers, 1);
  ck_assert(has_xfer(f.s, 0, 8, 8, 2, 0x10));
  done(&f);
}
END_TEST

/* 100,000 pieces between 100,000 scratch intervals: each transfer leaves the scratch out.
   The scratch of a piece is found by bisection; a scan from the rank's first interval made
   this test take some 10^10 steps (a recording of MPICH's rma/manyrma2 spent minutes there). */
START_TEST(many_pieces_between_scratch) {
  enum { N = 100000 };
  fixture f = {0};
  ck_assert_int_eq(cdag_graph_create_global(2, &f.g), CDAG_OK);
  for (uint64_t i = 0; i < N; i++) {
    CK_OK(cdag_rank_scratch(f.g, 1, 0x100008 + 16 * i, 8));
    CK_OK(cdag_rank_send(f.g, 0, 32 * i, 16, 1, 0, NULL));
    CK_OK(cdag_rank_recv(f.g, 1, 0x100000 + 16 * i, 16, 0, 0, NULL));   /* its second half is scratch */
  }
  analyse_ok(&f);
  ck_assert_int_eq(f.s->nxfers, N);
  ck_assert(has_xfer(f.s, 0, 0, 8, 1, 0x100000));
  ck_assert(has_xfer(f.s, 0, 32 * (N - 1), 8, 1, 0x100000 + 16 * (N - 1)));
  done(&f);
}
END_TEST

START_TEST(self_copies_and_identity) {
  fixture f = {0};
  ck_assert_int_eq(cdag_graph_create_global(2, &f.g), CDAG_OK);
  CK_OK(cdag_rank_copy_local(f.g, 0, 0x100, 0x200, 8, NULL));      /* a self-copy */
  CK_OK(cdag_rank_send(f.g, 1, 0x300, 8, 1, 0, NULL));             /* send to self */
  CK_OK(cdag_rank_recv(f.g, 1, 0x400, 8, 1, 0, NULL));
  CK_OK(cdag_rank_send(f.g, 0, 0x10, 4, 1, 1, NULL));              /* away and back home */
  CK_OK(cdag_rank_recv(f.g, 1, 0x20, 4, 0, 1, NULL));
  CK_OK(cdag_rank_send(f.g, 1, 0x20, 4, 0, 2, NULL));
  CK_OK(cdag_rank_recv(f.g, 0, 0x10, 4, 1, 2, NULL));
  analyse_ok(&f);
  ck_assert(has_xfer(f.s, 0, 0x100, 8, 0, 0x200));
  ck_assert(has_xfer(f.s, 1, 0x300, 8, 1, 0x400));
  ck_assert(has_xfer(f.s, 0, 0x10, 4, 1, 0x20));
  ck_assert_int_eq(f.s->nxfers, 3);  /* rank 0's 0x10 holds its own value again: no tuple */
  done(&f);
}
END_TEST

/* Rank 0's map grows past the pieces its slot holds (three pieces from rank 2), then every
   piece returns to rank 0's own value (its bytes come back from rank 1) and the map empties;
   a later piece lands in the emptied map. The final map is that one piece, nothing older. */
START_TEST(map_outgrows_its_slot_and_empties) {
  fixture f = {0};
  ck_assert_int_eq(cdag_graph_create_global(3, &f.g), CDAG_OK);
  for (int k = 0; k < 3; k++) { /* 0's A, B, C to 1's X, Y, Z and back */
    ck_assert_int_eq(cdag_rank_send(f.g, 0, 0x100 * k, 16, 1, k, NULL), CDAG_OK);
    ck_assert_int_eq(cdag_rank_recv(f.g, 1, 0x1000 + 0x100 * k, 16, 0, k, NULL), CDAG_OK);
  }
  for (int k = 0; k < 3; k++) {
    ck_assert_int_eq(cdag_rank_send(f.g, 2, 0x100 * k, 16, 0, 10 + k, NULL), CDAG_OK);
    ck_assert_int_eq(cdag_rank_recv(f.g, 0, 0x100 * k, 16, 2, 10 + k, NULL), CDAG_OK);
  }
  for (int k = 0; k < 3; k++) {
    ck_assert_int_eq(cdag_rank_send(f.g, 1, 0x1000 + 0x100 * k, 16, 0, 20 + k, NULL), CDAG_OK);
    ck_assert_int_eq(cdag_rank_recv(f.g, 0, 0x100 * k, 16, 1, 20 + k, NULL), CDAG_OK);
  }
  ck_assert_int_eq(cdag_rank_send(f.g, 2, 0x800, 8, 0, 30, NULL), CDAG_OK);
  ck_assert_int_eq(cdag_rank_recv(f.g, 0, 0x800, 8, 2, 30, NULL), CDAG_OK);
  analyse_ok(&f);
  ck_assert_int_eq(xfers_to(f.s, 0), 1);
  ck_assert(has_xfer(f.s, 2, 0x800, 8, 0, 0x800));
  ck_assert_int_eq(xfers_to(f.s, 1), 3);
  done(&f);
}
END_TEST

START_TEST(adjacent_tuples_merge) {
  fixture f = {0};
  ck_assert_int_eq(cdag_graph_create_global(2, &f.g), CDAG_OK);
  for (int i = 0; i < 8; i++) {
    CK_OK(cdag_rank_send(f.g, 0, 0x100 + 4 * (uint64_t)i, 4, 1, 0, NULL));
    CK_OK(cdag_rank_recv(f.g, 1, 0x800 + 4 * (uint64_t)i, 4, 0, 0, NULL));
  }
  analyse_ok(&f);
  ck_assert_int_eq(f.s->nxfers, 1);
  ck_assert(has_xfer(f.s, 0, 0x100, 32, 1, 0x800));
  done(&f);
}
END_TEST

/* ---- reductions ---- */

/* Allreduce of n int32 elements at VAL into RES (TMP: scratch), written four ways. */
enum { VAL = 0x0, RES = 0x100, TMP = 0x200 };

static void allreduce_recursive_doubling(cdag_graph *g, int p, uint64_t n) {
  for (int r = 0; r < p; r++) {
    CK_OK(cdag_rank_scratch(g, r, TMP, 4 * n));
    CK_OK(cdag_rank_copy_local(g, r, VAL, RES, 4 * n, NULL));
    for (int k = 1; k < p; k <<= 1) {
      CK_OK(cdag_rank_send(g, r, RES, 4 * n, r ^ k, k, NULL));
      CK_OK(cdag_rank_recv(g, r, TMP, 4 * n, r ^ k, k, NULL));
      CK_OK(cdag_rank_reduce_local(g, r, TMP, RES, n, CDAG_INT32, CDAG_SUM, NULL));
    }
  }
}

static void allreduce_linear(cdag_graph *g, int p, uint64_t n) {
  CK_OK(cdag_rank_copy_local(g, 0, VAL, RES, 4 * n, NULL));
  for (int r = 1; r < p; r++) {
    uint64_t tmp = TMP + 4 * n * (uint64_t)r;
    CK_OK(cdag_rank_send(g, r, VAL, 4 * n, 0, 0, NULL));
    CK_OK(cdag_rank_scratch(g, 0, tmp, 4 * n));
    CK_OK(cdag_rank_recv(g, 0, tmp, 4 * n, r, 0, NULL));
    CK_OK(cdag_rank_reduce_local(g, 0, tmp, RES, n, CDAG_INT32, CDAG_SUM, NULL));
  }
  for (int r = 1; r < p; r++) {
    CK_OK(cdag_rank_send(g, 0, RES, 4 * n, r, 1, NULL));
    CK_OK(cdag_rank_recv(g, r, RES, 4 * n, 0, 1, NULL));
  }
}

static void allreduce_chain(cdag_graph *g, int p, uint64_t n) {
  for (int r = 0; r < p; r++) {
    CK_OK(cdag_rank_scratch(g, r, TMP, 4 * n));
    CK_OK(cdag_rank_copy_local(g, r, VAL, RES, 4 * n, NULL));
    if (r > 0) {
      CK_OK(cdag_rank_recv(g, r, TMP, 4 * n, r - 1, 0, NULL));
      CK_OK(cdag_rank_reduce_local(g, r, TMP, RES, n, CDAG_INT32, CDAG_SUM, NULL));
    }
    if (r < p - 1) {
      CK_OK(cdag_rank_send(g, r, RES, 4 * n, r + 1, 0, NULL));
      CK_OK(cdag_rank_recv(g, r, RES, 4 * n, r + 1, 1, NULL));
    }
    if (r > 0) CK_OK(cdag_rank_send(g, r, RES, 4 * n, r - 1, 1, NULL));
  }
}

static void allreduce_binomial(cdag_graph *g, int p, uint64_t n) {
  for (int r = 0; r < p; r++) {
    CK_OK(cdag_rank_scratch(g, r, TMP, 4 * n));
    CK_OK(cdag_rank_copy_local(g, r, VAL, RES, 4 * n, NULL));
    int k = 1;
    for (; k < p && !(r & k); k <<= 1)
      if (r + k < p) {
        CK_OK(cdag_rank_recv(g, r, TMP, 4 * n, r + k, 0, NULL));
        CK_OK(cdag_rank_reduce_local(g, r, TMP, RES, n, CDAG_INT32, CDAG_SUM, NULL));
      }
    if (r) {
      CK_OK(cdag_rank_send(g, r, RES, 4 * n, r - k, 0, NULL));
      CK_OK(cdag_rank_recv(g, r, RES, 4 * n, r - k, 1, NULL));
    }
    for (k >>= 1; k >= 1; k >>= 1)
      if (r + k < p) CK_OK(cdag_rank_send(g, r, RES, 4 * n, r + k, 1, NULL));
  }
}

/* Ring: reduce-scatter then allgather of p blocks of n/p elements (n a multiple of p);
   every rank holds the sum in blocks, reduced in a different order for each block. */
static void allreduce_ring(cdag_graph *g, int p, uint64_t n) {
  uint64_t blk = 4 * (n / (uint64_t)p);
  for (int r = 0; r < p; r++) {
    int next = (r + 1) % p, prev = (r + p - 1) % p;
    CK_OK(cdag_rank_scratch(g, r, TMP, blk));
    CK_OK(cdag_rank_copy_local(g, r, VAL, RES, 4 * n, NULL));
    for (int st = 0; st < p - 1; st++) {
      uint64_t out = (uint64_t)((r - st + 2 * p) % p), in = (uint64_t)((r - st - 1 + 2 * p) % p);
      CK_OK(cdag_rank_send(g, r, RES + out * blk, blk, next, 0, NULL));
      CK_OK(cdag_rank_recv(g, r, TMP, blk, prev, 0, NULL));
      CK_OK(cdag_rank_reduce_local(g, r, TMP, RES + in * blk, blk / 4, CDAG_INT32, CDAG_SUM, NULL));
    }
    for (int st = 0; st < p - 1; st++) {
      uint64_t out = (uint64_t)((r + 1 - st + 2 * p) % p), in = (uint64_t)((r - st + 2 * p) % p);
      CK_OK(cdag_rank_send(g, r, RES + out * blk, blk, next, 1, NULL));
      CK_OK(cdag_rank_recv(g, r, RES + in * blk, blk, prev, 1, NULL));
    }
  }
}

/* Every rank must end with one reduction tuple: int32 sum of n elements of VAL over all
   ranks, at RES; the same interned set whatever the pattern. Returns that set. */
static int32_t check_allreduce(void (*build)(cdag_graph *, int, uint64_t), int p, uint64_t n) {
  fixture f = {0};
  ck_assert_int_eq(cdag_graph_create_global(p, &f.g), CDAG_OK);
  build(f.g, p, n);
  analyse_ok(&f);
  ck_assert_int_eq(f.s->nxfers, 0);
  ck_assert_int_eq(f.s->nreds, p);
  int32_t set = f.s->reds[0].set;
  for (int r = 0; r < p; r++) {
    const df_red *d = &f.s->reds[r];
    ck_assert_int_eq(d->dst, r);
    ck_assert_uint_eq(d->dst_addr, RES);
    ck_assert_uint_eq(d->count, n);
    ck_assert_int_eq(d->type, CDAG_INT32);
    ck_assert_int_eq(d->op, CDAG_SUM);
    ck_assert_int_eq(d->set, set);
  }
  const df_set *e = &f.s->sets[set];
  ck_assert_int_eq(e->nruns, 1);
  ck_assert_int_eq(e->ncontrib, p);
  const df_run *run = &f.s->runs[e->first];
  ck_assert_int_eq(run->lo, 0);
  ck_assert_int_eq(run->hi, p - 1);
  ck_assert_uint_eq(run->mult, 1);
  ck_assert_uint_eq(run->addr, VAL);
  for (int r = 0; r < p; r++)
    for (int j = 0; j < p; j++) ck_assert(dataflow_waits_for(f.s, r, j));
  done(&f);
  return set;
}

START_TEST(allreduce_patterns_agree) {
  check_allreduce(allreduce_recursive_doubling, 4, 1);
  check_allreduce(allreduce_recursive_doubling, 4, 4);
  check_allreduce(allreduce_recursive_doubling, 8, 8);
  int ps[] = {2, 4, 5, 8};
  for (int i = 0; i < 4; i++) {
    uint64_t n = (uint64_t)ps[i];
    check_allreduce(allreduce_linear, ps[i], 1);
    check_allreduce(allreduce_linear, ps[i], n);
    check_allreduce(allreduce_chain, ps[i], n);
    check_allreduce(allreduce_binomial, ps[i], n);
    check_allreduce(allreduce_ring, ps[i], n);      /* p tuples of one element, merged */
    check_allreduce(allreduce_ring, ps[i], 2 * n);
  }
}
END_TEST

START_TEST(vector_reduce_and_repeats) {
  fixture f = {0};
  ck_assert_int_eq(cdag_graph_create_global(2, &f.g), CDAG_OK);
  CK_OK(cdag_rank_send(f.g, 1, 0x100, 16, 0, 0, NULL));
  CK_OK(cdag_rank_recv(f.g, 0, 0x200, 16, 1, 0, NULL));
  CK_OK(cdag_rank_reduce_local(f.g, 0, 0x200, 0x100, 4, CDAG_INT32, CDAG_SUM, NULL));
  CK_OK(cdag_rank_reduce_local(f.g, 0, 0x200, 0x100, 4, CDAG_INT32, CDAG_SUM, NULL)); /* rank 1 counts twice */
  analyse_ok(&f);
  ck_assert_int_eq(f.s->nreds, 1);
  const df_red *d = &f.s->reds[0];
  ck_assert_uint_eq(d->count, 4);
  const df_set *e = &f.s->sets[d->set];
  ck_assert_int_eq(e->nruns, 2);
  ck_assert_int_eq(e->ncontrib, 3);
  /* runs sorted by (addr, lo): rank 0 at 0x100 once, rank 1 at 0x100 twice */
  ck_assert_int_eq(f.s->runs[e->first].lo, 0);
  ck_assert_uint_eq(f.s->runs[e->first].mult, 1);
  ck_assert_int_eq(f.s->runs[e->first + 1].lo, 1);
  ck_assert_uint_eq(f.s->runs[e->first + 1].mult, 2);
  ck_assert(has_xfer(f.s, 1, 0x100, 16, 0, 0x200));
  done(&f);
}
END_TEST

/* Rank 1's value received, then reduced onto itself (a copy, then the reduce) 40 times: it
   counts 2^40 times. MPICH's rma/rma_contig does that with an exclusive or, and the count
   wrapped to 0 in 32 bits (the value dropped, verify failed) or looped 2^31 times. Repeats
   collapse where the op allows (max: twice, as x max x is not always x's bytes; xor: its
   parity, kept as two), and a sum fails
   clearly, or, listed as mixed for stages (as recordings are), combines its own values. */
static int doubled(fixture *f, int rop, int flags) {
  ck_assert_int_eq(cdag_graph_create_global(2, &f->g), CDAG_OK);
  CK_OK(cdag_rank_send(f->g, 1, 0x100, 8, 0, 0, NULL));
  CK_OK(cdag_rank_recv(f->g, 0, 0x100, 8, 1, 0, NULL));
  for (int i = 0; i < 40; i++) {
    CK_OK(cdag_rank_copy_local(f->g, 0, 0x100, 0x200, 8, NULL));
    CK_OK(cdag_rank_reduce_local(f->g, 0, 0x200, 0x100, 2, CDAG_INT32, rop, NULL));
  }
  ck_assert_int_eq(ir_finalize(f->g), CDAG_OK);
  CK_OK(match_run(f->g, &f->m));
  return dataflow_run_opt(f->g, &f->m, flags, &f->s);
}

START_TEST(repeats_collapse_or_fail) {
  const int ops[2] = {CDAG_MAX, CDAG_BXOR};
  for (int k = 0; k < 2; k++) {
    fixture f = {0};
    ck_assert_msg(doubled(&f, ops[k], 0) == CDAG_OK, "%s", cdag_error_message());
    ck_assert_int_eq(f.s->nreds, 2);   /* at 0x100 and its copy at 0x200, one set */
    ck_assert_int_eq(f.s->reds[0].set, f.s->reds[1].set);
    const df_set *e = &f.s->sets[f.s->reds[0].set];
    ck_assert_int_eq(e->nruns, 1);
    ck_assert_int_eq(f.s->runs[e->first].lo, 1);
    ck_assert_uint_eq(f.s->runs[e->first].mult, 2);
    done(&f);
  }
  fixture f = {0};
  ck_assert_int_eq(doubled(&f, CDAG_SUM, 0), CDAG_ERR_UNSUPPORTED);
  ck_assert_msg(strstr(cdag_error_message(), "more than 65536 times"), "%s", cdag_error_message());
  done(&f);
  fixture g = {0};
  ck_assert_msg(doubled(&g, CDAG_SUM, DF_COLLECT_MIXED) == CDAG_OK, "%s", cdag_error_message());
  ck_assert_int_ge(g.s->nmixed, 1);
  done(&g);
}
END_TEST

START_TEST(mixed_ops_are_reported) {
  fixture f = {0};
  ck_assert_int_eq(cdag_graph_create_global(2, &f.g), CDAG_OK);
  CK_OK(cdag_rank_send(f.g, 1, 0, 4, 0, 0, NULL));
  CK_OK(cdag_rank_recv(f.g, 0, 0x20, 4, 1, 0, NULL));
  CK_OK(cdag_rank_reduce_local(f.g, 0, 0x20, 0, 1, CDAG_INT32, CDAG_SUM, NULL));
  CK_OK(cdag_rank_reduce_local(f.g, 0, 0x40, 0, 1, CDAG_INT32, CDAG_MAX, NULL));
  ck_assert_int_eq(analyse(&f), CDAG_ERR_UNSUPPORTED);
  ck_assert_msg(strstr(cdag_error_message(), "mixed ops") && strstr(cdag_error_message(), "rank 0 op 2"),
                "message: %s", cdag_error_message());
  done(&f);
}
END_TEST

START_TEST(partial_element_is_reported) {
  fixture f = {0};
  ck_assert_int_eq(cdag_graph_create_global(2, &f.g), CDAG_OK);
  CK_OK(cdag_rank_send(f.g, 1, 0, 2, 0, 0, NULL));
  CK_OK(cdag_rank_recv(f.g, 0, 0x22, 2, 1, 0, NULL));   /* half of an int32 */
  CK_OK(cdag_rank_reduce_local(f.g, 0, 0x20, 0, 1, CDAG_INT32, CDAG_SUM, NULL));
  ck_assert_int_eq(analyse(&f), CDAG_ERR_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "partial-element"));
  done(&f);
}
END_TEST

/* A strided pack of two 6-byte blocks over four summed int32: block by block, the first
   block's end (0x1006) cuts the second element, which DF_COLLECT_MIXED lists as a cut; the
   pack written whole must see that inner edge too, not only its ends (which align). */
START_TEST(strided_pack_cuts_element_at_inner_edge) {
  fixture f[2] = {{0}};
  for (int blocks = 0; blocks < 2; blocks++) {
    CK_OK(cdag_graph_create_global(1, &f[blocks].g));
    CK_OK(cdag_rank_reduce_local(f[blocks].g, 0, 0x5000, 0x1000, 4, CDAG_INT32, CDAG_SUM, NULL));
    if (blocks) CK_OK(cdag_rank_copy_local(f[1].g, 0, 0x3000, 0x1000, 6, NULL));
    if (blocks) CK_OK(cdag_rank_copy_local(f[1].g, 0, 0x3010, 0x1006, 6, NULL));
    else CK_OK(ir_add_copy_strided(f[0].g, 0, 0x3000, 0x1000, 2, 6, 16, 6, NULL));
    ck_assert_int_eq(ir_finalize(f[blocks].g), CDAG_OK);
    CK_OK(match_run(f[blocks].g, &f[blocks].m));
    CK_OK(dataflow_run_opt(f[blocks].g, &f[blocks].m, DF_COLLECT_MIXED, &f[blocks].s));
  }
  ck_assert_int_eq(f[1].s->nmixed, 1);
  ck_assert_int_eq(f[0].s->nmixed, 1);
  ck_assert_int_eq(f[0].s->strided_whole, 0);
  ck_assert_int_eq(f[0].s->nxfers, f[1].s->nxfers);
  ck_assert_int_eq(f[0].s->nreds, f[1].s->nreds);
  done(&f[0]);
  done(&f[1]);
}
END_TEST

/* A chain 0 -> 1 -> ... -> p-1: rank i waits for exactly 0..i, one interval. */
START_TEST(chain_waits_for_prefix) {
  fixture f = {0};
  int p = 9;
  ck_assert_int_eq(cdag_graph_create_global(p, &f.g), CDAG_OK);
  for (int r = p - 1; r >= 0; r--) { /* added backwards: ids against dependencies */
    if (r > 0) CK_OK(cdag_rank_recv(f.g, r, 0, 8, r - 1, 0, NULL));
    if (r < p - 1) CK_OK(cdag_rank_send(f.g, r, 0, 8, r + 1, 0, NULL));
  }
  analyse_ok(&f);
  for (int r = 0; r < p; r++) {
    ck_assert_int_eq(f.s->wait_start[r + 1] - f.s->wait_start[r], 1);
    ck_assert_int_eq(f.s->wait_lo[f.s->wait_start[r]], 0);
    ck_assert_int_eq(f.s->wait_hi[f.s->wait_start[r]], r);
  }
  done(&f);
}
END_TEST

/* Binomial tree from 0 (rank r receives from r minus its highest bit): rank r waits for
   exactly its ancestors r & (2^k - 1). */
START_TEST(binomial_tree_waits_for_ancestors) {
  fixture f = {0};
  int p = 37;
  ck_assert_int_eq(cdag_graph_create_global(p, &f.g), CDAG_OK);
  for (int r = 0; r < p; r++) {
    int k = 1;
    if (r) {
      int msb = 1 << (31 - __builtin_clz((unsigned)r));
      CK_OK(cdag_rank_recv(f.g, r, 0, 8, r - msb, 0, NULL));
      k = msb << 1;
    }
    for (; r + k < p; k <<= 1) CK_OK(cdag_rank_send(f.g, r, 0, 8, r + k, 0, NULL));
  }
  analyse_ok(&f);
  for (int r = 0; r < p; r++) {
    int64_t n = 0;
    for (int j = 0; j < p; j++) {
      int anc = 0;
      for (int k = 0; k < 7; k++) anc |= (r & ((1 << k) - 1)) == j || r == j;
      ck_assert_int_eq(dataflow_waits_for(f.s, r, j), anc);
      n += anc && (j == 0 || !dataflow_waits_for(f.s, r, j - 1)); /* intervals expected */
    }
    ck_assert_int_eq(f.s->wait_start[r + 1] - f.s->wait_start[r], n);
  }
  done(&f);
}
END_TEST

/* Bytes 2..5 of a reduced int32 vector sent away: not whole elements, reported; and the
   same bytes used as an operand of a further reduce. */
START_TEST(reduced_bytes_off_element_boundaries) {
  for (int further = 0; further < 2; further++) {
    fixture f = {0};
    ck_assert_int_eq(cdag_graph_create_global(2, &f.g), CDAG_OK);
    CK_OK(cdag_rank_send(f.g, 1, 0x100, 8, 0, 0, NULL));
    CK_OK(cdag_rank_recv(f.g, 0, 0x200, 8, 1, 0, NULL));
    CK_OK(cdag_rank_reduce_local(f.g, 0, 0x200, 0x100, 2, CDAG_INT32, CDAG_SUM, NULL));
    CK_OK(cdag_rank_send(f.g, 0, 0x102, 4, 1, 1, NULL));
    CK_OK(cdag_rank_recv(f.g, 1, 0x300, 4, 0, 1, NULL));
    if (further) CK_OK(cdag_rank_reduce_local(f.g, 1, 0x300, 0x400, 1, CDAG_INT32, CDAG_SUM, NULL));
    ck_assert_int_eq(analyse(&f), CDAG_ERR_UNSUPPORTED);
    ck_assert_msg(strstr(cdag_error_message(), "partial-element") &&
                      strstr(cdag_error_message(), further ? "rank 1 op 2" : "rank 1: bytes [0x300, 0x304)"),
                  "message: %s", cdag_error_message());
    done(&f);
  }
}
END_TEST

START_TEST(dissemination_barrier_waits_for_all) {
  fixture f = {0};
  int p = 6;
  ck_assert_int_eq(cdag_graph_create_global(p, &f.g), CDAG_OK);
  for (int r = 0; r < p; r++) {
    /* rounds run one after another (like MPI_Sendrecv): a round's send and receive both
       depend on the previous round's send and receive */
    cdag_op ps = -1, pr = -1;
    for (int k = 1; k < p; k <<= 1) {
      cdag_op s, rv;
      CK_OK(cdag_rank_send(f.g, r, 0, 0, (r + k) % p, k, &s));
      CK_OK(cdag_rank_recv(f.g, r, 0, 0, (r - k + p) % p, k, &rv));
      if (ps >= 0) {
        CK_OK(cdag_depend(f.g, ps, s)); CK_OK(cdag_depend(f.g, pr, s));
        CK_OK(cdag_depend(f.g, ps, rv)); CK_OK(cdag_depend(f.g, pr, rv));
      }
      ps = s, pr = rv;
    }
  }
  analyse_ok(&f);
  ck_assert_int_eq(f.s->nxfers, 0);
  for (int r = 0; r < p; r++)
    for (int j = 0; j < p; j++) ck_assert(dataflow_waits_for(f.s, r, j));
  done(&f);
}
END_TEST

/* Two dissemination rounds of 8 ranks (distances 1, 2): rank r waits for r-3..r, modulo
   8; ranks 0..2 wrap, so their sets are two intervals (0..r and r+5..7). */
START_TEST(partial_dissemination_waits_wrap_around) {
  fixture f = {0};
  int p = 8;
  ck_assert_int_eq(cdag_graph_create_global(p, &f.g), CDAG_OK);
  for (int r = 0; r < p; r++) {
    cdag_op s1, r1, s2, r2;
    CK_OK(cdag_rank_send(f.g, r, 0, 0, (r + 1) % p, 1, &s1));
    CK_OK(cdag_rank_recv(f.g, r, 0, 0, (r + p - 1) % p, 1, &r1));
    CK_OK(cdag_rank_send(f.g, r, 0, 0, (r + 2) % p, 2, &s2));
    CK_OK(cdag_rank_recv(f.g, r, 0, 0, (r + p - 2) % p, 2, &r2));
    CK_OK(cdag_depend(f.g, r1, s2)); CK_OK(cdag_depend(f.g, r1, r2));
  }
  analyse_ok(&f);
  for (int r = 0; r < p; r++) {
    for (int j = 0; j < p; j++) ck_assert_int_eq(dataflow_waits_for(f.s, r, j), (r - j + p) % p <= 3);
    int32_t k = f.s->wait_start[r];
    ck_assert_int_eq(f.s->wait_start[r + 1] - k, r < 3 ? 2 : 1);
    ck_assert_int_eq(f.s->wait_lo[k], r < 3 ? 0 : r - 3);
    ck_assert_int_eq(f.s->wait_hi[f.s->wait_start[r + 1] - 1], r < 3 ? p - 1 : r);
  }
  done(&f);
}
END_TEST
/* A buffer accumulating values from 200 addresses: each step's set is the last one's plus a
   run, so the sets hold 1 + 2 + ... + 201 runs in all; DF_CAP_SETS folds a set of more than
   DF_SET_CAP runs into one opaque run that keeps the count of values (the replay's tolerance
   needs no more), so no set holds more than DF_SET_CAP runs. */
static void sum_chain(fixture *f, int flags) {
  CK_OK(cdag_graph_create_global(1, &f->g));
  for (int i = 0; i < 200; i++)
    CK_OK(cdag_rank_reduce_local(f->g, 0, 0x1000 + 8 * (uint64_t)i, RES, 1, CDAG_DOUBLE, CDAG_SUM, NULL));
  ck_assert_int_eq(ir_finalize(f->g), CDAG_OK);
  CK_OK(match_run(f->g, &f->m));
  CK_OK(dataflow_run_opt(f->g, &f->m, flags, &f->s));
}

START_TEST(capped_sets_keep_counts) {
  for (int cap = 0; cap < 2; cap++) {
    fixture f = {0};
    sum_chain(&f, cap ? DF_CAP_SETS : 0);
    ck_assert_int_eq(f.s->nreds, 1);
    const df_set *e = &f.s->sets[f.s->reds[0].set];
    ck_assert_int_eq(e->ncontrib, 201);
    if (cap) {   /* an opaque run (rank -1) and the runs added since it was made */
      ck_assert_int_le(e->nruns, DF_SET_CAP);
      ck_assert_int_eq(f.s->runs[e->first].lo, -1);
      ck_assert_int_le(f.s->nruns, 200 * DF_SET_CAP / 2 + 4 * DF_SET_CAP);
    } else {
      ck_assert_int_eq(e->nruns, 201);
      ck_assert_int_ge(f.s->nruns, 200 * 201 / 2);
    }
    done(&f);
  }
}
END_TEST

/* The same chain with stages allowed (DF_COLLECT_MIXED, as the pipeline runs): once the
   sets outgrow 4 runs per op, a reduce with an operand of more than DF_SET_CAP runs starts a
   stage, so the runs stay linear in the chain (they were 200 * 201 / 2). */
START_TEST(outgrown_sets_start_stages) {
  fixture f = {0};
  sum_chain(&f, DF_COLLECT_MIXED);
  ck_assert_int_ge(f.s->nmixed, 1);
  ck_assert_int_le(f.s->nruns, 4 * 201 + 200 * (DF_SET_CAP + 2));
  ck_assert_int_lt(f.s->nruns, 200 * 201 / 4);
  done(&f);
}
END_TEST

/* A halo of columns at 2 ranks, twice: each packs its boundary column (N blocks of 8 bytes
   at the row stride) into a scratch buffer, sends it, receives the other's into scratch and
   unpacks it into its ghost column. The pieces move whole (pack, message, unpack: 3 per rank
   and round) and end whole: one strided transfer per ghost column. */
START_TEST(strided_halo_moves_whole) {
  enum { N = 4096, ROW = 8 * 10, PK = 0x100000, UN = 0x200000 };
  fixture f = {0};
  CK_OK(cdag_graph_create_global(2, &f.g));
  for (int r = 0; r < 2; r++) {
    CK_OK(cdag_rank_scratch(f.g, r, PK, 8 * N));
    CK_OK(cdag_rank_scratch(f.g, r, UN, 8 * N));
    uint64_t own = r ? 8 : 8 * 8, ghost = r ? 0 : 9 * 8;   /* rank 0's last column, rank 1's first */
    for (int round = 0; round < 2; round++) {
      CK_OK(ir_add_copy_strided(f.g, r, own, PK, N, 8, ROW, 8, NULL));
      CK_OK(ir_add_send(f.g, r, PK, 8 * N, 1 - r, round, NULL));
      CK_OK(ir_add_recv(f.g, r, UN, 8 * N, 1 - r, round, NULL));
      CK_OK(ir_add_copy_strided(f.g, r, UN, ghost, N, 8, 8, ROW, NULL));
    }
  }
  analyse_ok(&f);
  ck_assert_int_eq(f.s->strided_whole, 2 * 2 * 3);
  ck_assert_int_eq(f.s->strided_expanded, 0);
  ck_assert_int_eq(f.s->nxfers, 2);
  for (int r = 0; r < 2; r++) {
    const df_xfer *x = &f.s->xfers[r];
    ck_assert(x->dst == r && x->src == 1 - r && x->blocks == N && x->len == 8 && x->src_stride == ROW && x->dst_stride == ROW);
    ck_assert(x->src_addr == (r ? 8 * 8 : 8) && x->dst_addr == (r ? 0 : 9 * 8));
  }
  done(&f);
}
END_TEST

/* A column packed and unpacked onto itself at another stride: block 0 lands where it came
   from, its own value, which is no transfer; the others are (a reviewer's case: the piece
   was kept whole, block 0 with it, and ran as a copy of 16 bytes too many). And neighbouring
   bytes of a strided transfer and another are one tuple in the block listing. */
START_TEST(strided_own_block_is_no_transfer) {
  fixture f = {0};
  CK_OK(cdag_graph_create_global(2, &f.g));
  CK_OK(cdag_rank_scratch(f.g, 0, 0x2000, 64));
  CK_OK(ir_add_copy_strided(f.g, 0, 0x1000, 0x2000, 4, 16, 32, 16, NULL));
  CK_OK(ir_add_copy_strided(f.g, 0, 0x2000, 0x1000, 4, 16, 16, 48, NULL));
  analyse_ok(&f);
  uint64_t bytes = 0;
  for (int64_t i = 0; i < f.s->nxfers; i++) {
    const df_xfer *x = &f.s->xfers[i];
    ck_assert(!(x->src == x->dst && x->src_addr == x->dst_addr));
    bytes += df_xfer_bytes(x);
  }
  ck_assert_int_eq(bytes, 48);
  done(&f);
  CK_OK(cdag_graph_create_global(2, &f.g));
  CK_OK(cdag_rank_scratch(f.g, 0, 0x2000, 64));
  CK_OK(ir_add_copy_strided(f.g, 0, 0x1000, 0x2000, 8, 8, 32, 8, NULL));
  CK_OK(ir_add_send(f.g, 0, 0x2000, 64, 1, 1, NULL));
  CK_OK(ir_add_send(f.g, 0, 0x10e8, 8, 1, 2, NULL));
  CK_OK(ir_add_recv(f.g, 1, 0x3000, 64, 0, 1, NULL));
  CK_OK(ir_add_recv(f.g, 1, 0x3040, 8, 0, 2, NULL));
  analyse_ok(&f);
  ck_assert_int_eq(f.s->nxfers, 2);   /* the column whole, and the word after it */
  df_xfer *v;
  int64_t n;
  CK_OK(dataflow_block_xfers(f.s, &v, &n));
  ck_assert_int_eq(n, 8);   /* 7 blocks, then the last with the word: 16 bytes from 0x10e0 */
  ck_assert(v[7].src_addr == 0x10e0 && v[7].len == 16 && v[7].dst_addr == 0x3038);
  free(v);
  done(&f);
}
END_TEST

Suite *cdag_sst_suite(void) {
  Suite *s = suite_create("sst");
  TCase *t = tcase_create("transfers");
  tcase_add_test(t, paper_butterfly_alltoall);
  tcase_add_test(t, butterfly_eight);
  tcase_add_test(t, binomial_broadcast);
  tcase_add_test(t, forward_split_and_overwrite);
  tcase_add_test(t, scratch_is_not_final);
  tcase_add_test(t, many_pieces_between_scratch);
  tcase_add_test(t, self_copies_and_identity);
  tcase_add_test(t, adjacent_tuples_merge);
  tcase_add_test(t, map_outgrows_its_slot_and_empties);
  tcase_add_test(t, strided_halo_moves_whole);
  tcase_add_test(t, strided_own_block_is_no_transfer);
  suite_add_tcase(s, t);
  TCase *r = tcase_create("reductions");
  tcase_add_test(r, allreduce_patterns_agree);
  tcase_add_test(r, vector_reduce_and_repeats);
  tcase_add_test(r, repeats_collapse_or_fail);
  tcase_add_test(r, mixed_ops_are_reported);
  tcase_add_test(r, partial_element_is_reported);
  tcase_add_test(r, strided_pack_cuts_element_at_inner_edge);
  tcase_add_test(r, reduced_bytes_off_element_boundaries);
  tcase_add_test(r, capped_sets_keep_counts);
  tcase_add_test(r, outgrown_sets_start_stages);
  suite_add_tcase(s, r);
  TCase *w = tcase_create("waitsets");
  tcase_add_test(w, chain_waits_for_prefix);
  tcase_add_test(w, binomial_tree_waits_for_ancestors);
  tcase_add_test(w, dissemination_barrier_waits_for_all);
  tcase_add_test(w, partial_dissemination_waits_wrap_around);
  suite_add_tcase(s, w);
  return s;
}

CDAG_CHECK_MAIN(cdag_sst_suite)
