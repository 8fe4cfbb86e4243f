/* cdag tests — tests/ir/test_onesided.c: one-sided gets and puts, fences, races.
 *
 * Hand cases: the UPC FT transpose written with gets is an alltoall; the co_sum of Coarray
 * Fortran (reflog: gets, local sums, fences between the steps) is an allreduce; every race
 * rule, segment bounds, fence counts, access to one's own memory, save and load;
 * accumulates (a receive into scratch and a reduce at the target) and their races; fences
 * and accesses of a communicator (epochs of its members only).
 * Random one-sided graphs (gets, puts with a target side in blocks or not, copies, fences on
 * 1..4 ranks) against an oracle
 * written apart from src/ir/onesided.c: it decides races by comparing every pair of
 * accesses (paths by a closure over program order), and for race-free graphs computes the
 * final memory epoch by epoch (gets from a snapshot taken at the epoch's start, puts applied
 * at its end). The simulator's run of the expanded graph must leave those bytes, and the
 * compiled plan must equal the graph (exec_verify). Random epochs with accumulates and
 * waits against the library's own pair-by-pair check (cdag_graph.race_pairs), which its
 * race sweep must agree with. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>

#include "check_main.h"
#include "support/graphs.h"
#include "exec/sim/sim.h"
#include "format/format.h"
#include "support/support.h"

static uint64_t test_rand(uint64_t *s) {   /* splitmix64 */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static void expect_collective(cdag_graph *g, det_kind kind) {
  cdag_plan *p = NULL;
  CK_OK(cdag_analyze(g, NULL, &p));
  ck_assert_int_eq(p->ncolls, 1);
  ck_assert_int_eq(p->colls[0].kind, kind);
  CK_OK(exec_verify(g, p, 7, 3));
  cdag_plan_free(&p);
}

/* upc_barrier; for i: upc_memget(dst[me].cell[chunk*i], src[i].cell[chunk*me]); upc_barrier */
START_TEST(upc_ft_is_an_alltoall) {
  char text[4096];
  int n = snprintf(text, sizeof text, "num_ranks 4\n");
  for (int r = 0; r < 4; r++) {
    n += snprintf(text + n, sizeof text - (size_t)n, "rank %d {\n  segment 0x1000 256b\n  fence\n", r);
    for (int i = 0; i < 4; i++)
      n += snprintf(text + n, sizeof text - (size_t)n, "  get 64b from %d seg 0 at %d addr 0x%x\n", i, 64 * r,
                    0x8000 + 64 * i);
    n += snprintf(text + n, sizeof text - (size_t)n, "  fence\n}\n");
  }
  cdag_graph *g = cdag_test_text_graph(text);
  expect_collective(g, DET_ALLTOALL);
  cdag_plan *p = NULL;   /* the report names what was written */
  CK_OK(cdag_analyze(g, NULL, &p));
  ck_assert(p->nonesided[0] == 16 && p->nonesided[1] == 0 && p->nonesided[2] == 8);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CK_OK(cdag_plan_report(p, f, 1));
  fclose(f);
  ck_assert_msg(strstr(buf, "\"onesided\": {\"get\": 16, \"put\": 0, \"fence\": 8}"), "%s", buf);
  free(buf);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

/* reflog co_sum on 4 images: step k gets the partner's partial sum (me xor 2^k), then, an
   epoch later, adds it: the get must not race with the sum that overwrites what it reads. */
START_TEST(caf_co_sum_is_an_allreduce) {
  char text[8192];
  int n = snprintf(text, sizeof text, "num_ranks 4\n");
  for (int r = 0; r < 4; r++) {
    n += snprintf(text + n, sizeof text - (size_t)n, "rank %d {\n  fence\n", r);
    for (int k = 1; k < 4; k <<= 1)
      n += snprintf(text + n, sizeof text - (size_t)n,
                    "  get 32b from %d at 0x100 addr 0x200\n  fence\n  reduce 4 int64 sum in 0x200 inout 0x100\n  fence\n",
                    r ^ k);
    n += snprintf(text + n, sizeof text - (size_t)n, "}\n");
  }
  cdag_graph *g = cdag_test_text_graph(text);
  expect_collective(g, DET_ALLREDUCE);
  cdag_graph_free(&g);
}
END_TEST

/* Each rule, as a two-rank file; rank 1 owns the bytes 0x100.. that the accesses meet. */
START_TEST(races_are_errors) {
  static const struct { const char *r0, *r1; int rc; } cases[] = {
      {"put 8b to 1 at 0x100 addr 0x10", "", CDAG_OK},
      {"put 8b to 1 at 0x100 addr 0x10", "put 8b to 1 at 0x104 addr 0x20", CDAG_ERR_RACE},    /* two origins */
      {"put 8b to 1 at 0x100 addr 0x10", "get 8b from 1 at 0x100 addr 0x20", CDAG_ERR_RACE},  /* put and get */
      {"get 8b from 1 at 0x100 addr 0x10", "get 8b from 1 at 0x100 addr 0x20", CDAG_OK},      /* two reads */
      {"get 8b from 1 at 0x100 addr 0x10", "copy 8b from 0x20 to 0x100", CDAG_ERR_RACE},      /* target writes */
      {"get 8b from 1 at 0x100 addr 0x10", "copy 8b from 0x100 to 0x20", CDAG_OK},            /* target reads */
      {"put 8b to 1 at 0x100 addr 0x10", "send 8b to 0 addr 0x100", CDAG_ERR_RACE},           /* target reads */
      {"put 8b to 1 at 0x100 addr 0x10\nput 8b to 1 at 0x100 addr 0x18", "", CDAG_ERR_RACE},  /* unordered */
      {"put 8b to 1 at 0x100 addr 0x10\ncopy 8b from 0x30 to 0x10\nput 8b to 1 at 0x100 addr 0x10", "", CDAG_OK},
      {"put 8b to 1 at 0x100 addr 0x10\nfence\nput 8b to 1 at 0x100 addr 0x18", "fence", CDAG_OK},
      {"get 8b from 1 at 0x100 addr 0x10\nfence", "fence\ncopy 8b from 0x20 to 0x100", CDAG_OK},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    char text[512];
    int r0_recv = strstr(cases[k].r1, "send") != NULL;
    snprintf(text, sizeof text, "num_ranks 2\nrank 0 {\n%s\n%s}\nrank 1 {\n%s\n}\n", cases[k].r0,
             r0_recv ? "recv 8b from 1 addr 0x40\n" : "", cases[k].r1);
    int rc = cdag_test_load_rc(text);
    ck_assert_msg(rc == cases[k].rc, "case %zu: %d (%s)", k, rc, cdag_error_message());
    if (rc == CDAG_ERR_RACE) ck_assert_ptr_nonnull(strstr(cdag_error_message(), "rank 0 op"));
  }
}
END_TEST

/* A race inside a segment names the segment and the offsets the user wrote. */
START_TEST(race_names_segment_offsets) {
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 2\nrank 0 {\nput 8b to 1 seg 0 at 16 addr 0x10\n"
                                     "put 8b to 1 seg 0 at 20 addr 0x20\n}\n"
                                     "rank 1 {\nsegment 0x1000 64b\n}\n"), CDAG_ERR_RACE);
  ck_assert_msg(strstr(cdag_error_message(), "rank 1 segment 0 offsets [20, 24)"), "%s", cdag_error_message());
}
END_TEST

START_TEST(bounds_and_fences) {
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 2\nrank 0 {\nget 8b from 1 seg 0 at 60 addr 0\n}\nrank 1 {\nsegment 0x100 64b\n}\n"),
                   CDAG_ERR_ARG);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "offset 60 of rank 1 segment 0"));
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 2\nrank 0 {\nget 8b from 1 seg 1 at 0 addr 0\n}\nrank 1 {\nsegment 0x100 64b\n}\n"),
                   CDAG_ERR_ARG);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "never registered"));
  CK_OK(cdag_test_load_rc("num_ranks 2\nrank 0 {\nget 8b from 1 seg 0 at 56 addr 0\n}\nrank 1 {\nsegment 0x100 64b\n}\n"));
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 2\nrank 0 {\nfence\n}\nrank 1 {\nsend 1b to 0\n}\n"), CDAG_ERR_ARG);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "fences 1 times but rank 1 0 times"));
  /* one's own segment */
  cdag_graph *g = cdag_test_text_graph("num_ranks 1\nrank 0 {\nput 8b to 0 at 0x100 addr 0x10\nfence\nget 8b from 0 at 0x100 addr 0x20\n}\n");
  sim_mem *m;
  CK_OK(sim_mem_create(g, &m));
  sim_mem_fill_random(m, 3);
  CK_OK(sim_run_graph(g, m, 0));
  ck_assert_int_eq(memcmp(sim_mem_at(m, 0, 0x10, 8), sim_mem_at(m, 0, 0x20, 8), 8), 0);
  sim_mem_free(m);
  cdag_graph_free(&g);
}
END_TEST

/* Fences that no transfer needs cost nothing: a get and two fences after it keep one
   message, and no sync for the fences. */
START_TEST(fences_alone_cost_nothing) {
  cdag_graph *g = cdag_test_text_graph("num_ranks 3\nrank 0 {\nget 8b from 1 at 0x100 addr 0x10\nfence\nfence\n}\n"
                                       "rank 1 {\nfence\nfence\n}\nrank 2 {\nfence\nfence\n}\n");
  cdag_plan *p = NULL;
  CK_OK(cdag_analyze(g, NULL, &p));
  ck_assert(p->ncolls == 0 && p->nxfers == 1 && p->nsyncs == 0 && !p->barrier);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

/* Accumulates: two origins add into rank 2's bytes in one epoch; rank 2 sends the sum on.
   The target's side is a receive into the accumulate scratch and a reduce from there, so the
   SST names the three contributions; the plan verifies; the report counts them. */
START_TEST(accumulates_are_remote_reductions) {
  const char *text = "num_ranks 3\nrank 0 {\nfence\naccumulate 4 int32 sum to 2 at 0x1000 addr 0x100\nfence\n"
                     "recv 16b from 2 addr 0x2000\n}\nrank 1 {\nfence\naccumulate 4 int32 sum to 2 at 0x1000 addr 0x100\n"
                     "fence\n}\nrank 2 {\nfence\nfence\nsend 16b to 0 addr 0x1000\n}\n";
  cdag_graph *g = cdag_test_text_graph(text);
  int64_t reduces = 0, scratch = 0;
  for (int64_t i = 0; i < g->nops; i++) {
    if (g->kind[i] != IR_REDUCE) continue;
    reduces++;
    ck_assert_int_eq(g->rank[i], 2);
    ck_assert(g->addr[i] == 0x1000 && g->addr2[i] >= IR_ACC_SCRATCH && g->peer[i] == CDAG_INT32 && g->tag[i] == CDAG_SUM);
  }
  for (int64_t k = 0; k < g->nscratch; k++) scratch += g->scr_rank[k] == 2 && g->scr_addr[k] >= IR_ACC_SCRATCH;
  ck_assert(reduces == 2 && scratch == 2);
  cdag_plan *p = NULL;
  CK_OK(cdag_analyze(g, NULL, &p));
  CK_OK(exec_verify(g, p, 7, 3));
  ck_assert(p->nonesided[3] == 2 && p->nonesided[2] == 6);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CK_OK(cdag_plan_report(p, f, 0));
  fclose(f);
  ck_assert_msg(strstr(buf, "one-sided: 0 gets, 0 puts, 2 accumulates, 6 fences"), "%s", buf);
  free(buf);
  cdag_plan_free(&p);
  /* the bytes rank 0 receives: rank 2's own plus both origins' */
  sim_mem *m;
  CK_OK(sim_mem_create(g, &m));
  sim_mem_fill_random(m, 5);
  int32_t want[4], got[4], a[4], b[4];
  memcpy(want, sim_mem_at(m, 2, 0x1000, 16), 16);
  memcpy(a, sim_mem_at(m, 0, 0x100, 16), 16);
  memcpy(b, sim_mem_at(m, 1, 0x100, 16), 16);
  for (int k = 0; k < 4; k++) want[k] = (int32_t)((uint32_t)want[k] + (uint32_t)a[k] + (uint32_t)b[k]);
  CK_OK(sim_run_graph(g, m, 0));
  memcpy(got, sim_mem_at(m, 0, 0x2000, 16), 16);
  ck_assert_int_eq(memcmp(want, got, 16), 0);
  sim_mem_free(m);
  cdag_graph_free(&g);
}
END_TEST

/* Accumulates of one op and type may overlap (MPI makes them atomic per element); of
   different ops, or against a put or the target's own access, they race; against a get
   they do not (the get reads the epoch's start, as a fetch). */
START_TEST(accumulate_races) {
  static const struct { const char *r0, *r1; int rc; } cases[] = {
      {"accumulate 2 int32 sum to 1 at 0x100 addr 0x10", "", CDAG_OK},
      {"accumulate 2 int32 sum to 1 at 0x100 addr 0x10\naccumulate 2 int32 sum to 1 at 0x104 addr 0x20", "", CDAG_OK},
      {"accumulate 2 int32 sum to 1 at 0x100 addr 0x10", "accumulate 2 int32 sum to 1 at 0x100 addr 0x20", CDAG_OK},
      {"accumulate 2 int32 sum to 1 at 0x100 addr 0x10", "accumulate 2 int32 max to 1 at 0x100 addr 0x20", CDAG_ERR_RACE},
      {"accumulate 2 int32 sum to 1 at 0x100 addr 0x10", "accumulate 2 float sum to 1 at 0x100 addr 0x20", CDAG_ERR_RACE},
      {"accumulate 2 int32 sum to 1 at 0x100 addr 0x10", "put 8b to 1 at 0x104 addr 0x20", CDAG_ERR_RACE},
      {"accumulate 2 int32 sum to 1 at 0x100 addr 0x10", "copy 8b from 0x20 to 0x100", CDAG_ERR_RACE},
      {"accumulate 2 int32 sum to 1 at 0x100 addr 0x10", "send 8b to 0 addr 0x100", CDAG_ERR_RACE},
      {"accumulate 2 int32 sum to 1 at 0x100 addr 0x10", "get 8b from 1 at 0x100 addr 0x20", CDAG_OK},
      {"get 8b from 1 at 0x100 addr 0x30 wait\nput 8b to 1 at 0x100 addr 0x10", "", CDAG_OK},   /* fetch, then replace */
      {"accumulate 2 int32 sum to 1 at 0x100 addr 0x10\nfence", "fence\naccumulate 2 int32 max to 1 at 0x100 addr 0x20",
       CDAG_OK},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    char text[512];
    int r0_recv = strstr(cases[k].r1, "send") != NULL;
    snprintf(text, sizeof text, "num_ranks 2\nrank 0 {\n%s\n%s}\nrank 1 {\n%s\n}\n", cases[k].r0,
             r0_recv ? "recv 8b from 1 addr 0x40\n" : "", cases[k].r1);
    int rc = cdag_test_load_rc(text);
    ck_assert_msg(rc == cases[k].rc, "case %zu: %d (%s)", k, rc, cdag_error_message());
    if (rc == CDAG_ERR_RACE) ck_assert_ptr_nonnull(strstr(cdag_error_message(), "accumulates into"));
  }
  /* bounds of a segment, and an op the type does not have */
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 2\nrank 0 {\naccumulate 4 int32 sum to 1 seg 0 at 56 addr 0\n}\n"
                                     "rank 1 {\nsegment 0x100 64b\n}\n"), CDAG_ERR_ARG);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "accumulate of 16 bytes at offset 56 of rank 1 segment 0"));
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 2\nrank 0 {\naccumulate 4 float band to 1 at 0x100 addr 0\n}\n"),
                   CDAG_ERR_FORMAT);
  /* the target sides' scratch is cdag's: a receive there would lose its transfer, a copy from
     there would read an accumulate's data; both are refused, naming the op and its line */
  static const char *const trespass[] = {"recv 8b from 0 addr 0x7ffc000000000000", "copy 8b from 0x7ffcfffffffffffc to 0x40",
                                         "copy 16b from 0x40 to 0x7ffbfffffffffff8 blocks 2 to_stride 0x10",
                                         "compute 5 reads 8b at 0x7ffc000000000040 writes 8b at 0x40"};
  for (size_t k = 0; k < sizeof trespass / sizeof *trespass; k++) {
    char text[512];
    snprintf(text, sizeof text, "num_ranks 2\nrank 0 {\naccumulate 2 int32 sum to 1 at 0x10 addr 0x20\n"
             "send 8b to 1 addr 0x30\nfence\n}\nrank 1 {\n%s\nfence\n}\n", trespass[k]);
    if (k > 0) *strstr(text, "send 8b to 1 addr 0x30\n") = '#';
    int rc = cdag_test_load_rc(text);
    ck_assert_msg(rc == CDAG_ERR_ARG, "case %zu: %d (%s)", k, rc, cdag_error_message());
    ck_assert_ptr_nonnull(strstr(cdag_error_message(), "line 8) touches [0x7ffc000000000000, 0x7ffd000000000000)"));
  }
  CK_OK(cdag_test_load_rc("num_ranks 1\nrank 0 {\nrecv 8b from 0 addr 0x7ffc000000000000\nsend 8b to 0 addr 0x40\n}\n"));
}
END_TEST

/* Fences of a communicator cut only its members' ops: two pairs of ranks fence apart (a
   window on each half), each pair's accesses belong to its own epochs; counts are checked per
   communicator, accesses only reach members; races name the communicator. */
START_TEST(fences_of_a_communicator) {
  const char *text = "num_ranks 4\ncomm 1 ranks 0 1\ncomm 2 ranks 2 3\n"
                     "rank 0 {\nfence comm 1\nput 8b to 1 at 0x100 addr 0x10 comm 1\nfence\nfence comm 1\n}\n"
                     "rank 1 {\nfence comm 1\nfence\nfence comm 1\nsend 8b to 2 addr 0x100\n}\n"
                     "rank 2 {\nfence comm 2\nget 8b from 3 at 0x200 addr 0x20 comm 2\nfence\nrecv 8b from 1 addr 0x300\n"
                     "fence comm 2\n}\nrank 3 {\nfence comm 2\nfence\nfence comm 2\n}\n";
  cdag_graph *g = cdag_test_text_graph(text);
  cdag_plan *p = NULL;
  CK_OK(cdag_analyze(g, NULL, &p));
  CK_OK(exec_verify(g, p, 7, 3));
  cdag_plan_free(&p);
  sim_mem *m;   /* rank 2 receives what rank 0 put into rank 1 before rank 1's closing fence */
  CK_OK(sim_mem_create(g, &m));
  sim_mem_fill_random(m, 9);
  uint8_t want[8], got[8];
  memcpy(want, sim_mem_at(m, 0, 0x10, 8), 8);
  CK_OK(sim_run_graph(g, m, 0));
  memcpy(got, sim_mem_at(m, 2, 0x300, 8), 8);
  ck_assert_int_eq(memcmp(want, got, 8), 0);
  sim_mem_free(m);
  char *buf = NULL;   /* written back with the communicators */
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CK_OK(ir_save_file(g, f));
  fclose(f);
  ck_assert_msg(strstr(buf, "put 8b to 1 at 0x100 addr 0x10 comm 1\n") && strstr(buf, "fence comm 2\n"), "%s", buf);
  cdag_graph *h = NULL;
  ck_assert_msg(ir_load_mem(buf, len, "saved", NULL, &h) == CDAG_OK, "%s\n%s", cdag_error_message(), buf);
  ck_assert_int_eq(h->nops, g->nops);
  free(buf);
  cdag_graph_free(&h);
  cdag_graph_free(&g);
  static const struct { const char *from, *to, *msg; int rc; } bad[] = {
      {"rank 3 {\nfence comm 2\nfence\nfence comm 2\n}", "rank 3 {\nfence comm 2\nfence\n}",
       "on communicator 2, rank 2 fences 2 times but rank 3 1 times", CDAG_ERR_ARG},
      {"put 8b to 1 at 0x100 addr 0x10 comm 1", "put 8b to 2 at 0x100 addr 0x10 comm 1",
       "an access to rank 2, which is not a member of communicator 1", CDAG_ERR_ARG},
      {"rank 3 {\nfence comm 2", "rank 3 {\nfence comm 1", "a fence on communicator 1, of which rank 3 is not a member",
       CDAG_ERR_ARG},
      {"comm 2 ranks 2 3\n", "", "a fence on communicator 2, which the graph never declared", CDAG_ERR_ARG},
      {"get 8b from 3 at 0x200 addr 0x20 comm 2", "get 8b from 3 at 0x200 addr 0x20 comm 2\nput 8b to 3 at 0x200 addr 0x30 comm 2",
       "race in epoch 1 of communicator 2 on rank 3", CDAG_ERR_RACE},
  };
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
    char t[2048];
    const char *at = strstr(text, bad[k].from);
    ck_assert_ptr_nonnull(at);
    snprintf(t, sizeof t, "%.*s%s%s", (int)(at - text), text, bad[k].to, at + strlen(bad[k].from));
    ck_assert_int_eq(cdag_test_load_rc(t), bad[k].rc);
    ck_assert_msg(strstr(cdag_error_message(), bad[k].msg), "case %zu: %s", k, cdag_error_message());
  }
}
END_TEST

START_TEST(save_and_load_again) {
  const char *text = "num_ranks 2\nrank 0 {\n  segment 0x100 64b\n  a: put 8b to 1 seg 0 at 8 addr 0x10\n  fence\n"
                     "  b: get 8b from 1 at 0x108 addr 0x20\n  b requires a\n}\nrank 1 {\n  segment 0x100 64b\n  fence\n}\n";
  cdag_graph *g = cdag_test_text_graph(text), *h = NULL;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CK_OK(ir_save_file(g, f));
  fclose(f);
  ck_assert_msg(strstr(buf, "put 8b to 1 at 0x108 addr 0x10") && strstr(buf, "fence") && !strstr(buf, "tag -"), "%s", buf);
  ck_assert_msg(ir_load_mem(buf, len, "saved", NULL, &h) == CDAG_OK, "%s\n%s", cdag_error_message(), buf);
  ck_assert_int_eq(h->nops, g->nops);
  free(buf);
  cdag_graph_free(&g);
  cdag_graph_free(&h);
  /* an accumulate and a fetch with `wait` come back as written; the scratch expansion adds
     is not written (loading adds it again) */
  g = cdag_test_text_graph("num_ranks 2\nrank 0 {\n  segment 0x100 64b\n  get 8b from 1 seg 0 at 8 addr 0x30 wait\n"
                           "  accumulate 2 double max to 1 seg 0 at 8 addr 0x10\n  fence\n}\n"
                           "rank 1 {\n  segment 0x100 64b\n  fence\n}\n");
  f = open_memstream(&buf, &len);
  CK_OK(ir_save_file(g, f));
  fclose(f);
  ck_assert_msg(strstr(buf, "get 8b from 1 at 0x108 addr 0x30 wait\n") &&
                strstr(buf, "accumulate 2 double max to 1 at 0x108 addr 0x10\n") && !strstr(buf, "scratch"), "%s", buf);
  ck_assert_msg(ir_load_mem(buf, len, "saved", NULL, &h) == CDAG_OK, "%s\n%s", cdag_error_message(), buf);
  ck_assert_int_eq(h->nops, g->nops);
  ck_assert_int_eq(h->nscratch, g->nscratch);
  free(buf);
  cdag_graph_free(&g);
  cdag_graph_free(&h);
  cdag_graph *a;   /* adding after expansion is refused, not half done */
  CK_OK(cdag_graph_create_global(1, &a));
  CK_OK(cdag_rank_fence(a, 0));
  CK_OK(ir_finalize(a));
  ck_assert_int_eq(cdag_rank_fence(a, 0), CDAG_ERR_STATE);
  cdag_graph_free(&a);
}
END_TEST

/* The text report of p, malloc'd. */
static char *report_text(const cdag_plan *p) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CK_OK(cdag_plan_report(p, f, 0));
  fclose(f);
  return buf;
}

/* A target side in blocks (an MPI target datatype's strided run): a put, a get and an
   accumulate, each one op however many blocks. The target's side passes through scratch with
   one strided copy (around the reduce for the accumulate); the SST names every block, the
   plan verifies, the file comes back as written (races and errors:
   target_blocks_races_and_errors). */
START_TEST(target_sides_in_blocks) {
  const char *text = "num_ranks 2\nrank 0 {\n  put 64b to 1 at 0x2000 addr 0x1000 blocks 8 stride 32\n  fence\n"
                     "  get 32b from 1 at 0x3000 addr 0x1100 blocks 4 stride 16\n"
                     "  accumulate 8 int32 sum to 1 at 0x4000 addr 0x1200 blocks 2 stride 64\n  fence\n}\n"
                     "rank 1 {\n  put 8b to 0 at 0x1300 addr 0x2008\n  fence\n  fence\n}\n";
  cdag_graph *g = cdag_test_text_graph(text);
  int64_t copies = 0;
  for (int64_t i = 0; i < g->nops; i++) copies += g->kind[i] == IR_COPY && ir_is_strided(g, i);
  ck_assert_int_eq(copies, 4);   /* put: 1, get: 1, accumulate: 2 */
  sim_mem *m, *want;
  CK_OK(sim_mem_create(g, &m));
  sim_mem_fill_random(m, 11);
  CK_OK(sim_mem_clone(m, &want));
  for (int b = 0; b < 8; b++) memcpy(sim_mem_at(want, 1, 0x2000 + 32 * b, 8), sim_mem_at(m, 0, 0x1000 + 8 * b, 8), 8);
  for (int b = 0; b < 4; b++) memcpy(sim_mem_at(want, 0, 0x1100 + 8 * b, 8), sim_mem_at(m, 1, 0x3000 + 16 * b, 8), 8);
  for (int b = 0; b < 2; b++)
    for (int e = 0; e < 4; e++) {
      uint32_t x, y;
      memcpy(&x, sim_mem_at(m, 1, 0x4000 + 64 * b + 4 * e, 4), 4);
      memcpy(&y, sim_mem_at(m, 0, 0x1200 + 16 * b + 4 * e, 4), 4);
      x += y;
      memcpy(sim_mem_at(want, 1, 0x4000 + 64 * b + 4 * e, 4), &x, 4);
    }
  memcpy(sim_mem_at(want, 0, 0x1300, 8), sim_mem_at(m, 1, 0x2008, 8), 8);   /* the epoch's start: before rank 0's put */
  CK_OK(sim_run_graph(g, m, 1));
  ck_assert_msg(sim_mem_compare(m, want, g, 1) == CDAG_OK, "%s", cdag_error_message());
  sim_mem_free(m);
  sim_mem_free(want);
  cdag_plan *p = NULL;
  CK_OK(cdag_analyze(g, NULL, &p));
  CK_OK(exec_verify(g, p, 5, 3));
  cdag_plan_free(&p);
  char *buf = cdag_test_save_str(g);
  size_t len = strlen(buf);
  ck_assert_msg(strstr(buf, "put 64b to 1 at 0x2000 addr 0x1000 blocks 8 stride 32\n") &&
                strstr(buf, "get 32b from 1 at 0x3000 addr 0x1100 blocks 4 stride 16\n") &&
                strstr(buf, "accumulate 8 int32 sum to 1 at 0x4000 addr 0x1200 blocks 2 stride 64\n") && !strstr(buf, "scratch"),
                "%s", buf);
  cdag_graph *h = NULL;
  ck_assert_msg(ir_load_mem(buf, len, "saved", NULL, &h) == CDAG_OK, "%s\n%s", cdag_error_message(), buf);
  ck_assert_int_eq(h->nops, g->nops);
  free(buf);
  cdag_graph_free(&g);
  cdag_graph_free(&h);
}
END_TEST

/* The target's scratch of an access in blocks is cdag's own: a saved graph does not name it,
   a computation after the phase does not read it, and a stage that touches it last holds it
   as scratch. */
START_TEST(target_blocks_scratch) {
  /* a graph of a strided get alone saves without the expansion's scratch (loading adds it) */
  cdag_graph *g = cdag_test_text_graph("num_ranks 2\nrank 0 {\nget 32b from 1 at 0x3000 addr 0x1100 blocks 4 stride "
                                       "16\n}\nrank 1 {\n}\n");
  char *buf = cdag_test_save_str(g);
  ck_assert_msg(!strstr(buf, "scratch"), "%s", buf);
  free(buf);
  cdag_graph_free(&g);
  /* a computation after the last fence reads all but never the target's scratch: the get's
     four blocks are the only transfer, one strided one (the scratch's blocks too, when it
     counted as memory) */
  g = cdag_test_text_graph("num_ranks 2\nrank 0 {\nfence\nget 32b from 1 at 0x3000 addr 0x1100 blocks 4 stride 16\n"
                           "fence\ncompute 5 reads all\n}\nrank 1 {\nfence\nfence\ncompute 5 reads all\n}\n");
  cdag_plan *p = NULL;
  CK_OK(cdag_analyze(g, NULL, &p));
  buf = report_text(p);
  ck_assert_msg(strstr(buf, "residual: 1 transfers (32 B; 1 strided, of 4 blocks) in 1 messages,"), "%s", buf);
  ck_assert_int_eq(p->nxfers, 1);
  ck_assert_int_eq(p->xfers[0].blocks, 4);
  free(buf);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
  /* a stage ends after the accumulate (a computation reads its bytes): its scratch areas are
     scratch in that stage, so the stage holds the two reductions, not the scratch's bytes too */
  g = cdag_test_text_graph("num_ranks 2\nrank 0 {\nfence\naccumulate 4 int32 sum to 1 at 0x100 addr 0x10 blocks 2 "
                           "stride 16\nfence\nrecv 16b from 1 addr 0x300\n}\nrank 1 {\nfence\nfence\ncompute 50 reads "
                           "32b at 0x100 writes 16b at 0x200\nsend 16b to 0 addr 0x200\n}\n");
  CK_OK(cdag_analyze(g, NULL, &p));
  CK_OK(exec_verify(g, p, 3, 2));
  buf = report_text(p);
  ck_assert_msg(strstr(buf, "stage 0:\nno collectives found\nresidual: 0 transfers (0 B) in 0 messages, 2 reductions,"), "%s", buf);
  free(buf);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

/* Accesses in blocks race block by block, a segment must hold their hull, and bad blocks are
   errors naming the line. */
START_TEST(target_blocks_races_and_errors) {
  /* races: rank 1 puts into the gaps between rank 0's blocks, then onto block 3 */
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 2\nrank 0 {\nput 32b to 1 at 0x100 addr 0 blocks 4 stride 16\n}\n"
                                     "rank 1 {\nput 8b to 1 at 0x108 addr 0x800\nput 8b to 1 at 0x138 addr 0x808\n}\n"),
                   CDAG_OK);
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 2\nrank 0 {\nput 32b to 1 at 0x100 addr 0 blocks 4 stride 16\n}\n"
                                     "rank 1 {\nput 8b to 1 at 0x134 addr 0x800\n}\n"),
                   CDAG_ERR_RACE);
  /* a segment holds the blocks' hull, or the access is out of bounds */
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 2\nrank 0 {\nput 16b to 1 seg 0 at 0 addr 0 blocks 2 stride 56\n}\n"
                                     "rank 1 {\nsegment 0x100 64b\n}\n"), CDAG_OK);
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 2\nrank 0 {\nput 16b to 1 seg 0 at 0 addr 0 blocks 2 stride 57\n}\n"
                                     "rank 1 {\nsegment 0x100 64b\n}\n"), CDAG_ERR_ARG);
  /* a segment reaching past 2^63: an access into it would be saved at an address the loader
     refuses; one ending at 2^63 saves and loads again */
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 2\nrank 0 {\nget 8b from 1 seg 0 at 0x100 addr 0\n}\n"
                                     "rank 1 {\nsegment 0x7fffffffffffff00 0x1000\n}\n"), CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "reaches past 2^63"));
  cdag_graph *hi = cdag_test_text_graph("num_ranks 2\nrank 0 {\nget 8b from 1 seg 0 at 0xf8 addr 0\n}\n"
                                        "rank 1 {\nsegment 0x7fffffffffffff00 0x100\n}\n");
  char *saved = cdag_test_save_str(hi);
  ck_assert_int_eq(cdag_test_load_rc(saved), CDAG_OK);
  free(saved);
  cdag_graph_free(&hi);
  static const char *const bad[][2] = {
      {"put 30b to 1 at 0x100 addr 0 blocks 4", "4 blocks do not divide the 30 bytes"},
      {"get 32b from 1 at 0x100 addr 0 blocks 4 stride 4", "a stride (at least the block length)"},
      {"get 32b from 1 at 0x100 addr 0 stride 16", "a stride needs 'blocks'"},
      {"accumulate 4 int32 sum to 1 at 0x100 addr 0 blocks 8 stride 4", "split its int32 elements"},
      /* 2^62 blocks: the count's word holds the listed flags, so it once loaded as one range */
      {"get 4611686018427387904b from 1 at 0x1000 addr 0x3000 blocks 4611686018427387904 stride 2", "at most 2^62 - 1"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
    char t[256];
    snprintf(t, sizeof t, "num_ranks 2\nrank 0 {\n%s\n}\n", bad[k][0]);
    ck_assert_int_ne(cdag_test_load_rc(t), CDAG_OK);
    ck_assert_msg(strstr(cdag_error_message(), bad[k][1]) && strstr(cdag_error_message(), ":3"), "%zu: %s", k,
                  cdag_error_message());
  }
}
END_TEST

/* ---- random graphs against the oracle ---- */

enum { O_GET, O_PUT, O_COPY, O_FENCE };
typedef struct {
  int kind, rank, target, epoch;
  uint64_t local, remote, len;   /* copy: local = dst, remote = src (both on rank) */
  uint64_t nb, stride;           /* get, put: the target's side in nb blocks of len at stride,
                                    the local side nb * len bytes (nb 1: one range) */
} oop;

typedef struct {
  int p, n;
  oop op[160];
} oracle;

static int overlap(uint64_t a, uint64_t b, uint64_t len_a, uint64_t len_b) { return a < b + len_b && b < a + len_a; }

/* Local effects of op k on its rank: up to two (addr, len, write). */
static int local_effects(const oop *o, uint64_t *addr, uint64_t *len, int *write) {
  switch (o->kind) {
  case O_GET: addr[0] = o->local, len[0] = o->nb * o->len, write[0] = 1; return 1;
  case O_PUT: addr[0] = o->local, len[0] = o->nb * o->len, write[0] = 0; return 1;
  case O_COPY:
    addr[0] = o->remote, len[0] = o->len, write[0] = 0;
    addr[1] = o->local, len[1] = o->len, write[1] = 1;
    return 2;
  default: return 0;
  }
}

static int conflict(const oop *a, const oop *b) {
  uint64_t aa[2], al[2], ba[2], bl[2];
  int aw[2], bw[2], na = local_effects(a, aa, al, aw), nb = local_effects(b, ba, bl, bw);
  for (int i = 0; i < na; i++)
    for (int j = 0; j < nb; j++)
      if ((aw[i] || bw[j]) && overlap(aa[i], ba[j], al[i], bl[j])) return 1;
  return 0;
}

/* A path from op a to op b (a before b, one rank) through memory conflicts. */
static int path(const oracle *o, int a, int b) {
  int reach[160] = {0};
  reach[a] = 1;
  for (int c = a + 1; c <= b; c++) {
    if (o->op[c].rank != o->op[a].rank) continue;
    for (int d = a; d < c && !reach[c]; d++)
      if (reach[d] && o->op[d].rank == o->op[a].rank && conflict(&o->op[d], &o->op[c])) reach[c] = 1;
  }
  return reach[b];
}

typedef struct { int target, epoch, op, type; uint64_t addr, len; } acc;   /* type: 0 get 1 put 2 read 3 write */

static int oracle_race(const oracle *o) {
  acc a[800];
  int na = 0;
  for (int k = 0; k < o->n; k++) {
    const oop *x = &o->op[k];
    uint64_t ad[2], ln[2];
    int w[2], ne = local_effects(x, ad, ln, w);
    for (int e = 0; e < ne; e++) a[na++] = (acc){x->rank, x->epoch, k, w[e] ? 3 : 2, ad[e], ln[e]};
    for (uint64_t b = 0; (x->kind == O_GET || x->kind == O_PUT) && b < x->nb; b++)
      a[na++] = (acc){x->target, x->epoch, k, x->kind == O_PUT, x->remote + b * x->stride, x->len};
  }
  for (int i = 0; i < na; i++)
    for (int j = i + 1; j < na; j++) {
      const acc *p = &a[i], *q = &a[j];
      if (p->target != q->target || p->epoch != q->epoch || !overlap(p->addr, q->addr, p->len, q->len)) continue;
      int puts = (p->type == 1) + (q->type == 1), remote = (p->type < 2) + (q->type < 2);
      if (!puts) {
        if ((p->type == 0 && q->type == 3) || (p->type == 3 && q->type == 0)) return 1;
        continue;
      }
      if (remote < 2) return 1;
      if (o->op[p->op].rank != o->op[q->op].rank) return 1;
      if (p->op != q->op && !path(o, p->op < q->op ? p->op : q->op, p->op < q->op ? q->op : p->op)) return 1;
    }
  return 0;
}

/* Final memory of a race-free graph, epoch by epoch, ops in the order written. */
static void oracle_run(const oracle *o, sim_mem *m, int nepochs) {
  for (int e = 0; e < nepochs; e++) {
    sim_mem *snap;
    CK_OK(sim_mem_clone(m, &snap));
    uint8_t held[160][24];
    for (int k = 0; k < o->n; k++) {
      const oop *x = &o->op[k];
      if (x->epoch != e) continue;
      for (uint64_t b = 0; x->kind == O_GET && b < x->nb; b++)
        memcpy(sim_mem_at(m, x->rank, x->local + b * x->len, x->len),
               sim_mem_at(snap, x->target, x->remote + b * x->stride, x->len), x->len);
      if (x->kind == O_PUT) memcpy(held[k], sim_mem_at(m, x->rank, x->local, x->nb * x->len), x->nb * x->len);
      if (x->kind == O_COPY) memmove(sim_mem_at(m, x->rank, x->local, x->len), sim_mem_at(m, x->rank, x->remote, x->len), x->len);
    }
    for (int k = 0; k < o->n; k++)
      for (uint64_t b = 0; o->op[k].epoch == e && o->op[k].kind == O_PUT && b < o->op[k].nb; b++)
        memcpy(sim_mem_at(m, o->op[k].target, o->op[k].remote + b * o->op[k].stride, o->op[k].len),
               held[k] + b * o->op[k].len, o->op[k].len);
    sim_mem_free(snap);
  }
}

/* A rank in many communicators (a window per coarray, as OpenCoarrays makes them) whose own
   operations meet no one-sided access: the race check records each of its accesses only in
   epochs an access touches, not once per communicator (400 communicators and 20,000 copies
   made 16 million records, 0.6 GB; a recording of 183 windows took 3.7 GB and 4 minutes).
   And a race in the one epoch that holds an access is still found. */
static char *many_comms(int ncomm, int ncopy, int race) {
  size_t cap = (size_t)ncomm * 64 + (size_t)ncopy * 64 + 4096, n = 0;
  char *t = malloc(cap);
  n += (size_t)snprintf(t + n, cap - n, "num_ranks 2\n");
  for (int c = 1; c <= ncomm; c++) n += (size_t)snprintf(t + n, cap - n, "comm %d ranks 0 1\n", c);
  n += (size_t)snprintf(t + n, cap - n, "rank 0 {\nget 8b from 1 at 0x100 addr 0x10 comm 1\n");
  for (int c = 1; c <= ncomm; c++) n += (size_t)snprintf(t + n, cap - n, "fence comm %d\n", c);
  n += (size_t)snprintf(t + n, cap - n, "}\nrank 1 {\n");
  if (race) n += (size_t)snprintf(t + n, cap - n, "copy 8b from 0x20 to 0x100\n");
  for (int k = 0; k < ncopy; k++)
    n += (size_t)snprintf(t + n, cap - n, "copy 8b from 0x%x to 0x%x\n", 0x100000 + 16 * k, 0x900000 + 16 * k);
  for (int c = 1; c <= ncomm; c++) n += (size_t)snprintf(t + n, cap - n, "fence comm %d\n", c);
  snprintf(t + n, cap - n, "}\n");
  return t;
}

START_TEST(many_communicators_cost_their_accesses) {
  struct rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  char *text = many_comms(400, 20000, 0);
  cdag_graph *g = cdag_test_text_graph(text);
  getrusage(RUSAGE_SELF, &after);
  ck_assert_msg(after.ru_maxrss - before.ru_maxrss < 300 * 1024, "the race check grew the process by %ld KB",
                after.ru_maxrss - before.ru_maxrss);
  cdag_graph_free(&g);
  free(text);
  text = many_comms(400, 200, 1);
  ck_assert_int_eq(cdag_test_load_rc(text), CDAG_ERR_RACE);
  free(text);
}
END_TEST

/* 100,000 communicators, each fenced twice by both ranks: looked up by a map and a binary
   search (a scan of the communicators per lookup and of a rank's memberships per fence took
   14 s at 32,000, minutes at 100,000; this test's case has a timeout of its own). */
START_TEST(communicators_are_looked_up_not_scanned) {
  char *text = many_comms(cdag_test_thorough() ? 100000 : 5000, 0, 0);
  ck_assert_int_eq(cdag_test_load_rc(text), CDAG_OK);
  free(text);
}
END_TEST

/* Rank 1 puts n times to rank 0's word at 0x100, each put waited for before the next (as the
   recorder writes one origin's replacing accumulates), rank 2 gets the word beside it; then
   `tail` on rank 2. */
static char *ordered_puts(int n, const char *tail) {
  size_t cap = (size_t)n * 64 + 256, k = 0;
  char *t = malloc(cap);
  ck_assert_ptr_nonnull(t);
  k += (size_t)snprintf(t + k, cap - k, "num_ranks 3\nrank 0 {\nsegment 0x100 16b\n}\nrank 1 {\n");
  for (int i = 0; i < n; i++) k += (size_t)snprintf(t + k, cap - k, "p%d: put 4b to 0 at 0x100 addr 0x10\nwait p%d\n", i, i);
  snprintf(t + k, cap - k, "}\nrank 2 {\nget 4b from 0 at 0x104 addr 0x10\n%s\n}\n", tail);
  return t;
}

/* One origin's ordered accesses to one word are one entry of the race sweep: 20,000 of them
   check at once (every pair was a path search: cubic, hours), and a race with any of them,
   or an unordered pair among them, is still found and named. The unordered pair in the
   middle of 20,000 is found at once too (the sweep compared each put with every earlier one,
   a path search each: 0.7 s at 2,000, minutes at 20,000). */
START_TEST(ordered_accesses_to_one_word) {
  int n = cdag_test_thorough() ? 20000 : 2000;   /* 2,000 under the sanitizers */
  char *text = ordered_puts(n, "");
  ck_assert_int_eq(cdag_test_load_rc(text), CDAG_OK);
  free(text);
  text = ordered_puts(2000, "put 2b to 0 at 0x102 addr 0x20");
  ck_assert_int_eq(cdag_test_load_rc(text), CDAG_ERR_RACE);
  ck_assert_msg(strstr(cdag_error_message(), "rank 1 op 0") && strstr(cdag_error_message(), "rank 2 op 1") &&
                    strstr(cdag_error_message(), "[0x102, 0x104)"),
                "%s", cdag_error_message());
  free(text);
  text = ordered_puts(n, "");
  char wait[32], first[32], second[32];
  snprintf(wait, sizeof wait, "wait p%d\n", n / 2);   /* p[n/2] and p[n/2 + 1] both in flight */
  char *w = strstr(text, wait);
  memset(w, ' ', strlen(wait) - 1);
  ck_assert_int_eq(cdag_test_load_rc(text), CDAG_ERR_RACE);
  snprintf(first, sizeof first, "rank 1 op %d ", n);
  snprintf(second, sizeof second, "rank 1 op %d ", n + 1);
  ck_assert_msg(strstr(cdag_error_message(), first) && strstr(cdag_error_message(), second), "%s", cdag_error_message());
  free(text);
}
END_TEST

/* One origin's two unordered neighbours on the same bytes race as the sweep says (the check
   of neighbours said at once that a get and an accumulate race, which the rules allow). */
START_TEST(unordered_neighbours_race_by_the_rules) {
  static const char *second[] = {"accumulate 1 int32 sum to 0 at 0x100 addr 0x20", "put 4b to 0 at 0x100 addr 0x20",
                                 "get 4b from 0 at 0x100 addr 0x20"};
  static const int want[] = {CDAG_OK, CDAG_ERR_RACE, CDAG_OK};
  for (int k = 0; k < 3; k++) {
    char text[512];
    snprintf(text, sizeof text,
             "num_ranks 2\nrank 0 {\nsegment 0x100 16b\n}\nrank 1 {\na: get 4b from 0 at 0x100 addr 0x10\nb: %s\n"
             "wait a\nwait b\n}\n", second[k]);
    ck_assert_msg(cdag_test_load_rc(text) == want[k], "%s: %s", second[k], cdag_error_message());
  }
  /* Unordered sums are one entry of the sweep, whose first (lowest) is b here: a put after
     b is not after a, a race; after both, none. */
  static const char *const waits[] = {"wait b", "wait a b"};
  for (int k = 0; k < 2; k++) {
    char text[512];
    snprintf(text, sizeof text,
             "num_ranks 2\nrank 0 {\nsegment 0x100 16b\n}\nrank 1 {\na: accumulate 1 int32 sum to 0 at 0x104 addr 0x10\n"
             "b: accumulate 2 int32 sum to 0 at 0x100 addr 0x20\n%s\nput 4b to 0 at 0x104 addr 0x30\n}\n", waits[k]);
    int rc = cdag_test_load_rc(text);
    ck_assert_msg(rc == (k ? CDAG_OK : CDAG_ERR_RACE), "%s: %s", waits[k], cdag_error_message());
    ck_assert_msg(k || strstr(cdag_error_message(), "label a) accumulates into them"), "%s", cdag_error_message());
  }
  /* The last put is after q, which was found after each sum it overlaps, but not after m: m
     comes after q (the sweep keeps q for later puts only when each sum was before it), or
     joins the sums' entry after q was checked (only while the entry is as it was). The get
     between m and the put hides them from the check of neighbours. */
  static const char *const after_q[] = {
      "s1: accumulate 1 int32 sum to 0 at 0x100 addr 0x10\nq: put 4b to 0 at 0x104 addr 0x20\nwait q\n"
      "m: accumulate 2 int32 sum to 0 at 0x100 addr 0x30",
      "s1: accumulate 1 int32 sum to 0 at 0x104 addr 0x10\ns2: accumulate 1 int32 sum to 0 at 0x104 addr 0x14\n"
      "wait s1 s2\nq: put 4b to 0 at 0x104 addr 0x20\nwait q\nm: accumulate 1 int32 sum to 0 at 0x104 addr 0x30",
      /* s1 before q by a search, m after it by the join: m is after q all the same */
      "s1: accumulate 2 int32 sum to 0 at 0x100 addr 0x10\nq: put 4b to 0 at 0x104 addr 0x20\nq requires s1\nwait q\n"
      "m: accumulate 2 int32 sum to 0 at 0x100 addr 0x30"};
  for (int k = 0; k < 3; k++) {
    char text[512];
    snprintf(text, sizeof text,
             "num_ranks 2\nrank 0 {\nsegment 0x100 16b\n}\nrank 1 {\n%s\ng: get 4b from 0 at 0x104 addr 0x50\n"
             "put 4b to 0 at 0x104 addr 0x50\n}\n", after_q[k]);
    ck_assert_int_eq(cdag_test_load_rc(text), CDAG_ERR_RACE);
    ck_assert_msg(strstr(cdag_error_message(), "label m) accumulates into them"), "%s", cdag_error_message());
  }
  /* q is before s1 by `requires` (s1 below q in the tree of latest predecessors), not before
     s2, which the tree numbers after q's subtree: the sums' entry is not all below q. */
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 2\nrank 0 {\nsegment 0x100 16b\n}\nrank 1 {\n"
                                 "q: put 4b to 0 at 0x104 addr 0x20\ns1: accumulate 2 int32 sum to 0 at 0x100 addr 0x30\n"
                                 "s1 requires q\ns2: accumulate 2 int32 sum to 0 at 0x100 addr 0x40\n}\n"),
               CDAG_ERR_RACE);
  ck_assert_msg(strstr(cdag_error_message(), "label s2)"), "%s", cdag_error_message());
  /* Two ordered puts are one entry; a sum after the get after them, but not after them,
     races with them whatever its type: int8's sum has the code 0, as a put has (an outside
     reader's case: the entry was taken for sums of one op, and the race missed). */
  static const char *const types[] = {"int8", "int16"};
  for (int k = 0; k < 2; k++) {
    char text[512];
    snprintf(text, sizeof text,
             "num_ranks 2\nrank 0 {\nsegment 0x100 16b\n}\nrank 1 {\np1: put 4b to 0 at 0x100 addr 0x20\n"
             "p2: put 4b to 0 at 0x100 addr 0x24\np2 requires p1\ng: get 4b from 0 at 0x100 addr 0x50\n"
             "g requires p2\na: accumulate 1 %s sum to 0 at 0x100 addr 0x60\n}\n", types[k]);
    ck_assert_int_eq(cdag_test_load_rc(text), CDAG_ERR_RACE);
    ck_assert_msg(strstr(cdag_error_message(), ") puts them") && strstr(cdag_error_message(), "label a)"), "%s",
                  cdag_error_message());
  }
}
END_TEST

/* n accesses (line, of the word at 0x100 + word) by `origins` origins, two words in turn; the
   last origin adds tail. */
static char *many_origins(int n, int origins, const char *line, const char *tail) {
  size_t cap = (size_t)n * 64 + (size_t)origins * 32 + strlen(tail) + 256, k = 0;
  char *t = malloc(cap);
  ck_assert_ptr_nonnull(t);
  k += (size_t)snprintf(t + k, cap - k, "num_ranks %d\nrank 0 {\nsegment 0x100 16b\n}\n", origins + 1);
  for (int o = 1; o <= origins; o++) {
    k += (size_t)snprintf(t + k, cap - k, "rank %d {\n", o);
    for (int i = 0; i < n / origins; i++) {
      k += (size_t)snprintf(t + k, cap - k, line, 4 * (i % 2));
      t[k++] = '\n';
    }
    k += (size_t)snprintf(t + k, cap - k, "%s\n}\n", o == origins ? tail : "");
  }
  return t;
}

static const char sum_line[] = "accumulate 1 int32 sum to 0 at 0x10%d addr 0x20";

/* One origin's unordered accumulates of one op to one word are one entry of the race sweep:
   200,000 check at once (each was compared with every earlier one: 64,000 took 3.9 s,
   quadratic), spread over 7 origins too; a put of their origin ordered after all of them (it
   sends a buffer the origin rewrote after they read it) is checked with one search each
   way, not one per accumulate, and 50,000 such puts each waited for, from the one before
   (4,000 sums and 4,000 puts took 82 s, cubic); a put not ordered after them races. */
START_TEST(unordered_accumulates_to_one_word) {
  int n = cdag_test_thorough() ? 200000 : 5000;
  char *text = many_origins(n, 1, sum_line, "");
  CK_OK(cdag_test_load_rc(text));
  free(text);
  text = many_origins(n, 7, sum_line, "");
  CK_OK(cdag_test_load_rc(text));
  free(text);
  text = many_origins(n, 1, sum_line, "copy 4b from 0x40 to 0x20\nput 4b to 0 at 0x104 addr 0x20");
  CK_OK(cdag_test_load_rc(text));
  free(text);
  int m = n / 4;   /* then m puts, each waited for: one entry, each checked from the one before */
  size_t cap = 40 * (size_t)m + 64, len = 0;
  char *tail = malloc(cap);
  ck_assert_ptr_nonnull(tail);
  len += (size_t)snprintf(tail + len, cap - len, "copy 4b from 0x40 to 0x20\n");
  for (int i = 0; i < m; i++) len += (size_t)snprintf(tail + len, cap - len, "put 4b to 0 at 0x104 addr 0x20 wait\n");
  text = many_origins(n, 1, sum_line, tail);
  free(tail);
  CK_OK(cdag_test_load_rc(text));
  free(text);
  text = many_origins(n, 1, sum_line, "put 4b to 0 at 0x104 addr 0x30");
  ck_assert_int_eq(cdag_test_load_rc(text), CDAG_ERR_RACE);
  ck_assert_msg(strstr(cdag_error_message(), "accumulates into") && strstr(cdag_error_message(), "puts"), "%s",
                cdag_error_message());
  free(text);
}
END_TEST


/* Gets, or sums of one op, of many origins never race with each other: one entry of the
   sweep holds them all (an entry per origin, each met by every later access, took 35 s for
   the sums below, and the gets 38 s). A put among them races, and is found. */
START_TEST(many_origins_access_one_word) {
  int thorough = cdag_test_thorough(), n = thorough ? 128000 : 4000, origins = n / 2;
  char *text = many_origins(n, origins, sum_line, "");
  CK_OK(cdag_test_load_rc(text));
  free(text);
  text = many_origins(2 * n, 2 * origins, "get 4b from 0 at 0x10%d addr 0x20", "");
  CK_OK(cdag_test_load_rc(text));
  free(text);
  text = many_origins(n, origins, "get 4b from 0 at 0x10%d addr 0x20", "put 4b to 0 at 0x104 addr 0x40");
  ck_assert_int_eq(cdag_test_load_rc(text), CDAG_ERR_RACE);
  ck_assert_msg(strstr(cdag_error_message(), "gets") && strstr(cdag_error_message(), "puts"), "%s", cdag_error_message());
  free(text);
}
END_TEST

/* Waits order what the race check would otherwise search for, one access at a time, back
   through every wait before it (an outside reader's three shapes, each 1 to 2 s at 32,000
   accesses and quadratic): puts each waited for, then sums after them all; sums of sliding
   pairs of words, one wait for all, then puts each waited for; two rounds of puts, each
   waited for, over the same words. Joins prove the order in O(1) (each over 10 s at the
   sizes here before, 0.1 to 0.5 s after). The last two are ordered by `requires` alone: puts
   each requiring the one before, then sums each requiring the last put, which the tree of
   latest predecessors proves (2.8 s at 32,000 accesses before, 0.2 s after); sums of sliding
   pairs, one computation requiring them all, then puts each requiring the one before and it,
   which the tree proves from each sum's successor (0.9 s before, 0.16 s after). The sixth
   (an outside reader's) has one other origin's sum in the waited sums' entry, below every
   put: once passed, it must not keep the proofs from the rest (5.3 s at 32,000 accesses
   while it did, 0.27 s after). */
static char *waited_shape(int shape, int n) {
  size_t cap = (size_t)n * 96 + 256, k = 0;
  char *t = malloc(cap);
  ck_assert_ptr_nonnull(t);
  int m = n / 2;
  k += (size_t)snprintf(t + k, cap - k, "num_ranks 3\nrank 0 {\nsegment 0x1000 %db\n}\nrank 1 {\n", 4 * m + 16);
  for (int i = 0; shape == 0 && i < m; i++) k += (size_t)snprintf(t + k, cap - k, "put 4b to 0 at 0x1004 addr 0x100 wait\n");
  for (int i = 0; shape == 0 && i < m; i++)
    k += (size_t)snprintf(t + k, cap - k, "accumulate 2 int32 sum to 0 at 0x1000 addr 0x200\n");
  for (int i = 0; shape == 1 && i < m; i++)
    k += (size_t)snprintf(t + k, cap - k, "s%d: accumulate 2 int32 sum to 0 at 0x%x addr 0x100\n", i, 0x1000 + 4 * i);
  for (int i = 0; shape == 1 && i <= m; i++) k += (size_t)snprintf(t + k, cap - k, i ? " s%d" : "wait", i - 1);
  for (int i = 0; shape == 1 && i < m; i++)
    k += (size_t)snprintf(t + k, cap - k, "%sput 4b to 0 at 0x%x addr 0x200 wait\n", i ? "" : "\n", 0x1004 + 4 * i);
  for (int i = 0; shape == 2 && i < n; i++)
    k += (size_t)snprintf(t + k, cap - k, "put 4b to 0 at 0x%x addr 0x100 wait\n", 0x1000 + 4 * (i % m));
  for (int i = 0; shape == 3 && i < m; i++)
    k += (size_t)snprintf(t + k, cap - k, i ? "p%d: put 4b to 0 at 0x1004 addr 0x100\np%d requires p%d\n" :
                          "p%d: put 4b to 0 at 0x1004 addr 0x100\n", i, i, i - 1);
  for (int i = 0; shape == 3 && i < m; i++)
    k += (size_t)snprintf(t + k, cap - k, "s%d: accumulate 2 int32 sum to 0 at 0x1000 addr 0x200\ns%d requires p%d\n", i, i, m - 1);
  for (int i = 0; shape == 4 && i < m; i++)
    k += (size_t)snprintf(t + k, cap - k, "s%d: accumulate 2 int32 sum to 0 at 0x%x addr 0x100\n", i, 0x1000 + 4 * i);
  if (shape == 4) k += (size_t)snprintf(t + k, cap - k, "x: calc 1\n");
  for (int i = 0; shape == 4 && i < m; i++) k += (size_t)snprintf(t + k, cap - k, "x requires s%d\n", i);
  for (int i = 0; shape == 4 && i < m; i++)
    k += (size_t)snprintf(t + k, cap - k, "p%d: put 4b to 0 at 0x%x addr 0x200\np%d requires x\n", i, 0x1004 + 4 * i, i);
  for (int i = 1; shape == 4 && i < m; i++) k += (size_t)snprintf(t + k, cap - k, "p%d requires p%d\n", i, i - 1);
  for (int i = 0; shape == 5 && i < m; i++)
    k += (size_t)snprintf(t + k, cap - k, "accumulate %d int8 sum to 0 at 0x1000 addr 0x100000 wait\n", 4 + m);
  for (int i = 0; shape == 5 && i < m; i++)
    k += (size_t)snprintf(t + k, cap - k, "put 1b to 0 at 0x%x addr 0x%x\n", 0x1004 + i, 0x200000 + i);
  snprintf(t + k, cap - k, shape == 5 ? "}\nrank 2 {\naccumulate 4 int8 sum to 0 at 0x1000 addr 0x50\n}\n" : "}\nrank 2 {\n}\n");
  return t;
}

START_TEST(waits_order_without_searching) {
  int n = cdag_test_thorough() ? 128000 : 3000;
  for (int shape = 0; shape < 6; shape++) {
    char *text = waited_shape(shape, n);
    ck_assert_msg(cdag_test_load_rc(text) == CDAG_OK, "shape %d: %s", shape, cdag_error_message());
    free(text);
  }
}
END_TEST

/* One origin's n ordered puts to one word, then n gets of it that nothing orders among
   themselves: the gets are one entry, each checked against the puts' run by one short
   search from its last put (cubic before: 5,000 of each did not finish in 120 s). */
START_TEST(ordered_puts_then_unordered_gets) {
  int n = cdag_test_thorough() ? 20000 : 2000;
  size_t cap = (size_t)n * 80 + 256, k = 0;
  char *t = malloc(cap);
  ck_assert_ptr_nonnull(t);
  k += (size_t)snprintf(t + k, cap - k, "num_ranks 2\nrank 0 {\nsegment 0x100 16b\n}\nrank 1 {\n");
  for (int i = 0; i < n; i++) k += (size_t)snprintf(t + k, cap - k, "put 4b to 0 at 0x104 addr 0x20 wait\n");
  for (int i = 0; i < n; i++) k += (size_t)snprintf(t + k, cap - k, "get 4b from 0 at 0x104 addr 0x%x\n", 0x1000 + 8 * i);
  snprintf(t + k, cap - k, "}\n");
  CK_OK(cdag_test_load_rc(t));
  free(t);
}
END_TEST

/* One origin's n ordered puts to 64 bytes, each followed by a get of the 4 bytes after them
   that nothing orders with the next put, a first get bridging both ranges (an outside
   reader's case): the gets do not cut the puts' run, one entry (a get between each pair of
   puts made every put an entry of its own, and each put a path search per earlier put,
   cubic: 8,000 ops took 45 s). */
START_TEST(puts_with_gets_between) {
  int n = cdag_test_thorough() ? 20000 : 2000;
  size_t cap = (size_t)n * 100 + 256, k = 0;
  char *t = malloc(cap);
  ck_assert_ptr_nonnull(t);
  k += (size_t)snprintf(t + k, cap - k, "num_ranks 2\nrank 0 {\nsegment 0x1000 80b\n}\nrank 1 {\n"
                        "get 8b from 0 at 0x103c addr 0x10 wait\n");
  for (int i = 0; i < n; i++)
    k += (size_t)snprintf(t + k, cap - k, "put 64b to 0 at 0x1000 addr 0x100 wait\nget 4b from 0 at 0x1040 addr 0x%x\n",
                          0x1000 + 8 * i);
  snprintf(t + k, cap - k, "}\n");
  CK_OK(cdag_test_load_rc(t));
  free(t);
}
END_TEST

/* The race sweep against the rules pair by pair (cdag_graph.race_pairs), on random epochs of
   gets, puts, accumulates of two types (int8's sum has the code 0, as a put has), one
   origin's bursts (the sweep's shared entries), copies of the target, waits on random
   earlier ops, and target sides in blocks. */
/* The kinds of the random epochs' ops, weighted in two families: spread (every kind, any
   target) and focused (sums, puts and waits of one or two origins into four words of rank
   0: the sweep's shared entries, and their own origin's order against them). */
enum { R_GET, R_PUT, R_SUM, R_SUM8, R_COPY, R_WAIT, R_KINDS };   /* int32 sums, int8 sums (code 0, as a put's) */
/* Weights: anywhere on any rank; focused on few words of rank 0; and many origins' sums of
   one op there (one entry of the sweep holds several origins' accesses). */
static const int race_weights[3][R_KINDS] = {{3, 3, 3, 2, 2, 3}, {3, 4, 6, 3, 0, 6}, {2, 2, 9, 0, 0, 5}};

static int pick_kind(uint64_t *s, const int *w) {
  int total = 0, k = 0;
  for (int i = 0; i < R_KINDS; i++) total += w[i];
  for (int x = (int)(test_rand(s) % (uint64_t)total); x >= w[k]; k++) x -= w[k];
  return k;
}

/* One random op of rank r; ids: the rank's accesses and copies so far, for waits. */
static int add_random_op(cdag_graph *g, uint64_t *s, int r, int p, int32_t *ids, int *nids, int focused) {
  int kind = pick_kind(s, race_weights[focused]), rc = CDAG_OK;
  int t = focused || test_rand(s) % 2 ? 0 : (int)(test_rand(s) % (uint64_t)p);
  uint64_t remote = 4 * (test_rand(s) % (focused ? 4 : 10)), local = 0x1000 + 8 * (test_rand(s) % 6);
  uint64_t count = 1 + test_rand(s) % 2;
  cdag_op id = -1;
  int32_t i32 = -1;
  if (kind == R_WAIT) {
    if (!*nids) return CDAG_OK;
    int32_t w[3];
    int nw = 1 + (int)(test_rand(s) % 3), recent = *nids < 4 ? *nids : 4;
    for (int k = 0; k < nw; k++) w[k] = ids[*nids - 1 - (int)(test_rand(s) % (uint64_t)recent)];
    return ir_add_wait(g, r, w, nw, NULL);
  }
  if (kind == R_GET) rc = cdag_rank_get(g, r, local, 4 * count, t, remote, &id);
  if (kind == R_PUT) rc = cdag_rank_put(g, r, local, 4 * count, t, remote, &id);
  if (kind == R_SUM || kind == R_SUM8)   /* of 4 * count bytes either way */
    rc = ir_add_accumulate(g, r, local, kind == R_SUM ? count : 4 * count, kind == R_SUM ? CDAG_INT32 : CDAG_INT8, CDAG_SUM,
                           t, -1, remote, &i32);
  if (kind == R_COPY) rc = cdag_rank_copy_local(g, r, local, remote, 4 * count, &id);
  if (kind != R_SUM && kind != R_SUM8) i32 = (int32_t)id;
  if (!rc && kind != R_COPY && count == 2 && test_rand(s) % 3 == 0)
    rc = ir_set_access_blocks(g, i32, 2, 4 + 4 * (test_rand(s) % 3));
  if (!rc && *nids && test_rand(s) % 3 == 0)   /* after one recent op alone, not all before it */
    rc = ir_add_dep(g, ids[*nids - 1 - (int)(test_rand(s) % (uint64_t)(*nids < 3 ? *nids : 3))], i32, 1);
  if (!rc) ids[(*nids)++] = i32;
  return rc;
}

/* Ranks 2..4 (focused: rank 0 and one or two origins), one or two epochs of random ops. */
static cdag_graph *race_graph(uint64_t seed, int pairs) {
  uint64_t s = seed;
  int focused = (int)(test_rand(&s) % 3), fences = (int)(test_rand(&s) % 2);
  int p = focused == 2 ? 4 + (int)(test_rand(&s) % 2) : 2 + (int)(test_rand(&s) % (focused ? 2 : 3));
  cdag_graph *g = cdag_test_graph(p);
  g->race_pairs = (uint8_t)pairs;
  for (int r = 0; r < p; r++) {
    int32_t ids[32];
    int nids = 0;
    for (int e = 0; e <= fences; e++) {
      int k = focused && !r ? 0 : (int)(test_rand(&s) % (focused ? 13 : 5));
      for (int i = 0; i < k; i++) CK_OK(add_random_op(g, &s, r, p, ids, &nids, focused));
      if (e < fences) CK_OK(cdag_rank_fence(g, r));
    }
    CK_OK(cdag_rank_scratch(g, r, 0x2000, 1));
  }
  return g;
}

START_TEST(sweep_agrees_with_every_pair) {
  int racy = 0, clean = 0, trials = (int)cdag_test_iterations(4000);
  for (int t = 0; t < trials; t++) {
    cdag_graph *g = race_graph(0xacc0000 + (uint64_t)t, 0), *h = race_graph(0xacc0000 + (uint64_t)t, 1);
    int rc = ir_finalize(g);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", cdag_error_message());
    int want = ir_finalize(h);
    ck_assert_msg(rc == want && (rc == CDAG_OK || rc == CDAG_ERR_RACE), "trial %d: sweep %d (%s), pairs %d (%s)", t, rc,
                  msg, want, cdag_error_message());
    racy += rc == CDAG_ERR_RACE;
    clean += rc == CDAG_OK;
    cdag_graph_free(&g);
    cdag_graph_free(&h);
  }
  ck_assert_msg(racy > trials / 10 && clean > trials / 10, "%d racy, %d clean", racy, clean);
}
END_TEST

/* Ops are written rank by rank; addresses fall in [0, 96) so accesses often meet. */
static void random_oracle(oracle *o, uint64_t *seed, int *nepochs) {
  o->p = 1 + (int)(test_rand(seed) % 4);
  int fences = (int)(test_rand(seed) % 3);
  *nepochs = fences + 1;
  o->n = 0;
  for (int r = 0; r < o->p; r++)
    for (int e = 0; e <= fences; e++) {
      int k = (int)(test_rand(seed) % 4);
      for (int i = 0; i < k; i++) {
        oop x = {(int)(test_rand(seed) % 3), r, (int)(test_rand(seed) % (uint64_t)o->p), e, 0, 0, 1 + test_rand(seed) % 8,
                 1, 0};
        x.local = test_rand(seed) % 88;
        x.remote = test_rand(seed) % 88;
        if (x.kind != O_COPY && test_rand(seed) % 3 == 0) {   /* a strided target side */
          x.nb = 2 + test_rand(seed) % 2;
          x.stride = x.len + test_rand(seed) % 6;
        }
        x.stride = x.nb > 1 ? x.stride : x.len;
        if (x.kind == O_COPY && overlap(x.local, x.remote, x.len, x.len)) continue;
        o->op[o->n++] = x;
      }
      if (e < fences) o->op[o->n++] = (oop){O_FENCE, r, 0, e, 0, 0, 0, 0, 0};
    }
}

static cdag_graph *oracle_graph(const oracle *o) {
  cdag_graph *g;
  CK_OK(cdag_graph_create_global(o->p, &g));
  for (int k = 0; k < o->n; k++) {
    const oop *x = &o->op[k];
    cdag_op id = -1;
    if (x->kind == O_GET) CK_OK(cdag_rank_get(g, x->rank, x->local, x->nb * x->len, x->target, x->remote, &id));
    if (x->kind == O_PUT) CK_OK(cdag_rank_put(g, x->rank, x->local, x->nb * x->len, x->target, x->remote, &id));
    if (x->nb > 1) CK_OK(ir_set_access_blocks(g, (int32_t)id, x->nb, x->stride));
    if (x->kind == O_COPY) CK_OK(cdag_rank_copy_local(g, x->rank, x->remote, x->local, x->len, NULL));
    if (x->kind == O_FENCE) CK_OK(cdag_rank_fence(g, x->rank));
  }
  for (int r = 0; r < o->p; r++) CK_OK(cdag_rank_scratch(g, r, 200, 1));   /* every rank has memory */
  return g;
}

START_TEST(random_graphs_agree_with_the_oracle) {
  uint64_t seed = 0x05e1f00d;
  int clean = 0, racy = 0, trials = (int)cdag_test_iterations(3000);
  for (int t = 0; t < trials; t++) {
    oracle o;
    int nepochs;
    random_oracle(&o, &seed, &nepochs);
    cdag_graph *g = oracle_graph(&o);
    int rc = ir_finalize(g), race = oracle_race(&o);
    ck_assert_msg(rc == (race ? CDAG_ERR_RACE : CDAG_OK), "trial %d: cdag %d, oracle race %d (%s)", t, rc, race,
                  cdag_error_message());
    if (!race) {
      sim_mem *m, *want;
      CK_OK(sim_mem_create(g, &m));
      sim_mem_fill_random(m, (uint64_t)t);
      CK_OK(sim_mem_clone(m, &want));
      CK_OK(sim_run_graph(g, m, (uint64_t)t + 1));
      oracle_run(&o, want, nepochs);
      ck_assert_msg(sim_mem_compare(m, want, g, 1) == CDAG_OK, "trial %d: %s", t, cdag_error_message());
      cdag_plan *p = NULL;
      CK_OK(cdag_analyze(g, NULL, &p));
      ck_assert_msg(exec_verify(g, p, (uint64_t)t, 2) == CDAG_OK, "trial %d: %s", t, cdag_error_message());
      cdag_plan_free(&p);
      sim_mem_free(m);
      sim_mem_free(want);
      clean++;
    } else {
      racy++;
    }
    cdag_graph_free(&g);
  }
  ck_assert_int_gt(clean, trials / 5);
  ck_assert_int_gt(racy, trials / 5);
}
END_TEST

Suite *cdag_onesided_suite(void) {
  Suite *s = suite_create("onesided");
  TCase *t = tcase_create("onesided");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, upc_ft_is_an_alltoall);
  tcase_add_test(t, caf_co_sum_is_an_allreduce);
  tcase_add_test(t, races_are_errors);
  tcase_add_test(t, accumulates_are_remote_reductions);
  tcase_add_test(t, accumulate_races);
  tcase_add_test(t, fences_of_a_communicator);
  tcase_add_test(t, race_names_segment_offsets);
  tcase_add_test(t, bounds_and_fences);
  tcase_add_test(t, fences_alone_cost_nothing);
  tcase_add_test(t, save_and_load_again);
  tcase_add_test(t, target_sides_in_blocks);
  tcase_add_test(t, target_blocks_scratch);
  tcase_add_test(t, target_blocks_races_and_errors);
  tcase_add_test(t, many_communicators_cost_their_accesses);
  tcase_add_test(t, ordered_accesses_to_one_word);
  tcase_add_test(t, unordered_neighbours_race_by_the_rules);
  tcase_add_test(t, random_graphs_agree_with_the_oracle);
  tcase_add_test(t, sweep_agrees_with_every_pair);
  suite_add_tcase(s, t);
  TCase *scale = tcase_create("scale");
  tcase_set_timeout(scale, 30);   /* seconds, where the scans took minutes */
  tcase_add_test(scale, communicators_are_looked_up_not_scanned);
  tcase_add_test(scale, unordered_accumulates_to_one_word);
  tcase_add_test(scale, ordered_puts_then_unordered_gets);
  tcase_add_test(scale, puts_with_gets_between);
  tcase_add_test(scale, many_origins_access_one_word);
  suite_add_tcase(s, scale);
  TCase *joins = tcase_create("joins");
  tcase_set_timeout(joins, 10);   /* seconds, where the searches took 16 to 32 */
  tcase_add_test(joins, waits_order_without_searching);
  suite_add_tcase(s, joins);
  return s;
}

CDAG_CHECK_MAIN(cdag_onesided_suite)
