/* cdag tests — tests/exec/sim/test_strided.c: a strided or listed copy is its expansion.
 *
 * Random rounds on a ring of ranks: each rank packs a random pattern of its region into a
 * buffer (a strided copy), sends it on, receives its neighbour's and unpacks it with another
 * pattern, and copies strided within its region (either side or both strided). The same
 * rounds with every strided copy written as its blocks' ordinary copies leave the same
 * memory in the simulator, and so do they with every strided copy written as listed blocks
 * (its blocks in a shuffled order, a side at its stride now and then); the strided and the
 * listed graph's SST applied to the initial memory gives the simulator's bytes. */
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

Suite *cdag_strided_suite(void) {
  Suite *s = suite_create("strided");
  TCase *t = tcase_create("strided copies");
  tcase_add_test(t, strided_is_its_expansion);
  suite_add_tcase(s, t);
  return s;
}

CDAG_CHECK_MAIN(cdag_strided_suite)
