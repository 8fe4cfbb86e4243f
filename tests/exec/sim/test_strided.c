/* cdag tests — tests/exec/sim/test_strided.c: a strided or listed copy is its expansion.
 *
 * Random rounds on a ring of ranks: each rank packs a random pattern of its region into a
 * buffer (a strided copy), sends it on, receives its neighbour's and unpacks it with another
 * pattern, and copies strided within its region (either side or both strided). The same
 * rounds with every strided copy written as its blocks' ordinary copies leave the same
 * memory in the simulator, and so do they with every strided copy written as listed blocks
 * (its blocks in a shuffled order, a side at its stride now and then); the strided and the
 * listed graph's SST applied to the initial memory gives the simulator's bytes. The SST
 * keeps strided pieces whole where it can and follows them block by block where it must;
 * either way its transfers and reductions are those of the graph written block by block. */
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "dataflow/dataflow.h"
#include "exec/sim/sim.h"
#include "match/match.h"

enum { P = 3, ROUNDS = 8, REGION = 4096, PACK = 0x10000, FAR = 0x40000 };

typedef struct { uint64_t x; } rng;
static uint64_t next(rng *r) {
  r->x = r->x * 6364136223846793005ULL + 1442695040888963407ULL;
  return r->x >> 33;
}

enum { STRIDED, EXPANDED, LISTED };

/* The blocks of a strided copy listed in a shuffled order, block j's pair kept together. */
static int add_listed(cdag_graph *g, int rank, uint64_t src, uint64_t dst, uint64_t n, uint64_t len, uint64_t from,
                      uint64_t to) {
  uint64_t fo[16], to_[16], mix = src * 0x9e3779b97f4a7c15ull ^ dst;
  for (uint64_t j = 0; j < n; j++) fo[j] = j * from, to_[j] = j * to;
  for (uint64_t j = n - 1; j > 0 && n <= 16; j--) {
    uint64_t k = (mix >> (j % 48)) % (j + 1), t = fo[j];
    fo[j] = fo[k], fo[k] = t;
    t = to_[j], to_[j] = to_[k], to_[k] = t;
  }
  int keep_from = n <= 16 && mix % 3 == 0;   /* in order still: that side at its stride */
  for (uint64_t j = 0; j < n && keep_from; j++) keep_from = fo[j] == j * from;
  return ir_add_copy_listed(g, rank, src, dst, n, len, keep_from ? NULL : fo, from, to_, to, NULL);
}

/* A strided copy, its blocks one by one (EXPANDED), or listed. */
static int add_copy(cdag_graph *g, int expand, int rank, uint64_t src, uint64_t dst, uint64_t n, uint64_t len,
                    uint64_t from, uint64_t to) {
  if (expand == STRIDED || (expand == LISTED && n < 2)) return ir_add_copy_strided(g, rank, src, dst, n, len, from, to, NULL);
  if (expand == LISTED) return add_listed(g, rank, src, dst, n, len, from, to);
  if (from == len && to == len) return ir_add_copy(g, rank, src, dst, n * len, NULL); /* what the strided form is */
  for (uint64_t b = 0; b < n; b++) {
    int rc = ir_add_copy(g, rank, src + b * from, dst + b * to, len, NULL);
    if (rc) return rc;
  }
  return CDAG_OK;
}

/* The graph of `seed`; every rank first sends its whole region away (both forms then
   have the same memory image: the region whole, gaps included). */
static cdag_graph *build(uint64_t seed, int expand) {
  rng r = {seed};
  cdag_graph *g;
  CK_OK(cdag_graph_create_global(P, &g));
  for (int k = 0; k < P; k++) {
    CK_OK(ir_add_send(g, k, 0, REGION, (k + 1) % P, 1000, NULL));
    CK_OK(ir_add_recv(g, (k + 1) % P, FAR, REGION, k, 1000, NULL));
  }
  for (int round = 0; round < ROUNDS; round++) {
    uint64_t n = 1 + next(&r) % 12, len = 1 + next(&r) % 24;
    for (int k = 0; k < P; k++) {
      uint64_t sf = len + next(&r) % 40, st = len + next(&r) % 40;
      uint64_t a = next(&r) % (REGION - n * sf), b = next(&r) % (REGION - n * st);
      uint64_t pk = PACK + 0x1000 * (uint64_t)(2 * round), un = pk + 0x1000;
      CK_OK(add_copy(g, expand, k, a, pk, n, len, sf, len));
      CK_OK(ir_add_send(g, k, pk, n * len, (k + 1) % P, round, NULL));
      CK_OK(ir_add_recv(g, k, un, n * len, (k + P - 1) % P, round, NULL));
      CK_OK(add_copy(g, expand, k, un, b, n, len, len, st));
      uint64_t m = 1 + next(&r) % 6, l = 1 + next(&r) % 16, f = l + next(&r) % 24, t = l + next(&r) % 24;
      uint64_t c = next(&r) % (REGION - m * f), d = next(&r) % (REGION - m * t);
      cdag_graph *probe;   /* blocks that meet are refused alike in both forms: only add what the strided form takes */
      CK_OK(cdag_graph_create_global(P, &probe));
      if (ir_add_copy_strided(probe, k, c, d, m, l, f, t, NULL) == CDAG_OK) CK_OK(add_copy(g, expand, k, c, d, m, l, f, t));
      cdag_graph_free(&probe);
    }
  }
  CK_OK(ir_finalize(g));
  return g;
}

START_TEST(strided_is_its_expansion) {
  long iters = cdag_test_iterations(300);
  int strided_seen = 0, listed_seen = 0;
  for (long i = 0; i < 2 * iters; i++) {
    uint64_t seed = 0x5eed0000u + (uint64_t)(i / 2);
    int form = i % 2 ? LISTED : STRIDED;
    cdag_graph *g = build(seed, form), *h = build(seed, EXPANDED);
    for (int64_t op = 0; op < g->nops; op++) strided_seen |= ir_is_strided(g, op), listed_seen |= ir_is_listed(g, op);
    ck_assert_int_le(g->nops, h->nops);
    sim_mem *mg, *mh, *init, *applied;
    CK_OK(sim_mem_create(g, &mg));
    CK_OK(sim_mem_create(h, &mh));
    sim_mem_fill_random(mg, seed);
    sim_mem_fill_random(mh, seed);
    CK_OK(sim_mem_clone(mg, &init));
    ck_assert_int_eq(sim_run_graph(g, mg, 0), CDAG_OK);
    ck_assert_int_eq(sim_run_graph(h, mh, seed), CDAG_OK);
    for (int k = 0; k < P; k++) {
      const uint8_t *x = sim_mem_at(mg, k, 0, REGION), *y = sim_mem_at(mh, k, 0, REGION);
      ck_assert_ptr_nonnull(x);
      ck_assert_ptr_nonnull(y);
      ck_assert_msg(memcmp(x, y, REGION) == 0, "seed %llu rank %d: %s and expanded differ", (unsigned long long)seed, k,
                    form == LISTED ? "listed" : "strided");
    }
    match_result m;
    df_sst *s;
    CK_OK(match_run(g, &m));
    CK_OK(dataflow_run(g, &m, &s));
    CK_OK(sim_mem_clone(init, &applied));
    CK_OK(sim_apply_sst(s, applied));
    ck_assert_msg(sim_mem_compare(mg, applied, g, 1) == CDAG_OK, "seed %llu: SST differs: %s", (unsigned long long)seed,
                  cdag_error_message());
    dataflow_free(s);
    match_free(&m);
    sim_mem_free(mg); sim_mem_free(mh); sim_mem_free(init); sim_mem_free(applied);
    cdag_graph_free(&g);
    cdag_graph_free(&h);
  }
  ck_assert(strided_seen && listed_seen);
}
END_TEST

/* Rounds that keep strided pieces whole and then take them apart: a buffer packed, sent
   (whole or half), received, copied on (or not) and unpacked, in buffers used again every
   round or fresh ones, scratch or not; strided copies within the region, and sums of int32
   over it that meet what the rounds moved. */
static cdag_graph *build_moves(uint64_t seed, int expand) {
  rng r = {seed};
  int reuse = seed % 2, scratch = seed % 3 == 0;
  cdag_graph *g;
  CK_OK(cdag_graph_create_global(P, &g));
  for (int k = 0; k < P && scratch; k++) CK_OK(ir_add_scratch(g, k, PACK, 0x1000));
  for (int round = 0; round < ROUNDS; round++) {
    uint64_t n = 2 + next(&r) % 12, len = 4 * (1 + next(&r) % 6), half = next(&r) % 5 == 0;
    for (int k = 0; k < P; k++) {
      uint64_t sf = len + 4 * (next(&r) % 10), st = len + 4 * (next(&r) % 10);
      uint64_t a = 4 * (next(&r) % ((REGION - n * sf) / 4)), b = 4 * (next(&r) % ((REGION - n * st) / 4));
      uint64_t pk = PACK + (reuse ? 0 : 0x3000 * (uint64_t)round), un = pk + 0x1000, on = pk + 0x2000;
      int copy_on = next(&r) % 3 == 0;
      if (next(&r) % 3 == 0) {   /* int64 elements at 4-byte offsets: the pack's inner block edges may cut them */
        uint64_t c = pk + 4 * (next(&r) % (n * len / 4)), cnt = 1 + next(&r) % 3;
        CK_OK(ir_add_reduce(g, k, FAR + 0x8000, c, cnt, CDAG_INT64, CDAG_SUM, NULL));
      }
      CK_OK(add_copy(g, expand, k, a, pk, n, len, sf, len));
      CK_OK(ir_add_send(g, k, pk, half ? n * len / 2 : n * len, (k + 1) % P, round, NULL));
      CK_OK(ir_add_recv(g, k, un, n * len, (k + P - 1) % P, round, NULL));
      if (copy_on) CK_OK(ir_add_copy(g, k, un, on, n * len, NULL));
      CK_OK(add_copy(g, expand, k, copy_on ? on : un, b, n, len, len, st));
      if (next(&r) % 4 == 0) {
        uint64_t c = 4 * (next(&r) % (REGION / 4 - 8)), cnt = 1 + next(&r) % 8;
        CK_OK(ir_add_reduce(g, k, FAR + 0x8000, c, cnt, CDAG_INT32, CDAG_SUM, NULL));
      }
      if (next(&r) % 3 == 0) {
        uint64_t m = 2 + next(&r) % 6, l = 4, f = l + 4 * (next(&r) % 6), t = l + 4 * (next(&r) % 6);
        uint64_t c = 4 * (next(&r) % ((REGION - m * f) / 4)), d = 4 * (next(&r) % ((REGION - m * t) / 4));
        cdag_graph *probe;
        CK_OK(cdag_graph_create_global(P, &probe));
        if (ir_add_copy_strided(probe, k, c, d, m, l, f, t, NULL) == CDAG_OK) CK_OK(add_copy(g, expand, k, c, d, m, l, f, t));
        cdag_graph_free(&probe);
      }
    }
  }
  CK_OK(ir_finalize(g));
  return g;
}

static int same_set(const df_sst *a, int32_t x, const df_sst *b, int32_t y) {
  const df_set *p = &a->sets[x], *q = &b->sets[y];
  if (p->nruns != q->nruns || p->ncontrib != q->ncontrib) return 0;
  for (int32_t i = 0; i < p->nruns; i++) {
    const df_run *u = &a->runs[p->first + i], *v = &b->runs[q->first + i];
    if (u->lo != v->lo || u->hi != v->hi || u->mult != v->mult || u->addr != v->addr) return 0;
  }
  return 1;
}

/* The SST of a graph with strided copies, which keeps them whole where it can (and may end
   with strided transfers), is the SST of the same graph with every block its own copy: the
   same bytes from the same origins, and the same reductions tuple for tuple. */
START_TEST(strided_sst_is_block_by_block) {
  long iters = cdag_test_iterations(300);
  int64_t whole = 0, expanded = 0, strided = 0;
  for (long i = 0; i < iters; i++) {
    uint64_t seed = 0x57d00000u + (uint64_t)i;
    cdag_graph *g = build_moves(seed, STRIDED), *h = build_moves(seed, EXPANDED);
    match_result mg, mh;
    df_sst *sg = NULL, *sh = NULL;
    CK_OK(match_run(g, &mg));
    CK_OK(match_run(h, &mh));
    CK_OK(dataflow_run_opt(g, &mg, DF_COLLECT_MIXED, &sg));
    CK_OK(dataflow_run_opt(h, &mh, DF_COLLECT_MIXED, &sh));
    int64_t ng, nh;
    df_xfer *xg, *xh;
    CK_OK(dataflow_block_xfers(sg, &xg, &ng));
    CK_OK(dataflow_block_xfers(sh, &xh, &nh));
    ck_assert_int_eq(ng, nh);
    ck_assert_int_eq(nh, sh->nxfers);   /* written block by block: no strided transfer */
    ck_assert_msg(memcmp(xg, xh, (size_t)ng * sizeof *xg) == 0, "seed %llu: transfers differ", (unsigned long long)seed);
    for (int64_t t = 0; t < sg->nxfers; t++) strided += sg->xfers[t].blocks > 1;
    free(xg);
    free(xh);
    ck_assert_int_eq(sg->nreds, sh->nreds);
    for (int64_t t = 0; t < sg->nreds; t++) {
      const df_red *x = &sg->reds[t], *y = &sh->reds[t];
      ck_assert(x->dst == y->dst && x->dst_addr == y->dst_addr && x->count == y->count && x->type == y->type && x->op == y->op);
      ck_assert(same_set(sg, x->set, sh, y->set));
    }
    ck_assert_int_eq(sg->splits, sh->splits);
    ck_assert_int_eq(sg->nmixed, sh->nmixed);
    ck_assert_int_eq(sh->strided_whole, 0);
    whole += sg->strided_whole, expanded += sg->strided_expanded;
    dataflow_free(sg); dataflow_free(sh);
    match_free(&mg); match_free(&mh);
    cdag_graph_free(&g); cdag_graph_free(&h);
  }
  ck_assert_int_gt(whole, 0);      /* the rounds did keep pieces whole ... */
  ck_assert_int_gt(expanded, 0);   /* ... and took some apart */
  ck_assert_int_gt(strided, 0);    /* ... and ended some whole */
}
END_TEST

Suite *cdag_strided_suite(void) {
  Suite *s = suite_create("strided");
  TCase *t = tcase_create("strided copies");
  tcase_add_test(t, strided_is_its_expansion);
  tcase_add_test(t, strided_sst_is_block_by_block);
  suite_add_tcase(s, t);
  return s;
}

CDAG_CHECK_MAIN(cdag_strided_suite)
