/* cdag tests — tests/model/test_price.c: the price never makes a phase slower than written.
 *
 * The guarantee of src/model/price.c, checked from outside: for every graph of every corpus
 * in the source tree (the team's examples and detection cases, LogGOPSim's Schedgen output,
 * recordings of real programs, replays, the fuzzers' seeds, the shapes a new user writes) and
 * for random graphs with and without computations, under the built-in parameters and under a
 * calibrated machine's costs by size, the plan pipeline_plan chooses models no
 * slower than the graph as written: its own lowering is run again here, from a graph loaded
 * afresh, and compared with the graph's LogGOPS time; a plan that runs is strictly faster; the
 * plan is right in the simulator (verify); graphs with native collective calls (recordings)
 * included, whose calls as written are their flat messages. And the parts: a candidate the model prices higher
 * than its messages is left as messages with both prices in a note (a 64 B binomial bcast on
 * 8 ranks); one that pays keeps its prices (an alltoall written as a butterfly); a halo set
 * aside for the graph; options.price = 0 turns both off. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "exec/pipeline.h"
#include "format/format.h"
#include "match/match.h"
#include "model/lower.h"
#include "support/graphs.h"
#include "support/support.h"

/* The modelled time of what runs for plan p of g: the graph itself, or the plan lowered with
   the graph's plain calcs (as price.c does it, redone here). */
static double chosen_time(const cdag_graph *g, const cdag_plan *p, const pipeline_tune *t, double written) {
  if (p->as_written) return written;
  cdag_graph *low = NULL;
  int32_t *pairs = NULL;
  double us = 0;
  CK_OK(exec_lower_plan_modelled(p, g, &t->model, t->policy, &low));   /* as the price lowers it */
  CK_OK(exec_lower_pairs(low, &pairs));
  CK_OK(exec_loggp_paired(low, pairs, &t->lp, &us, NULL));
  free(pairs);
  ir_graph_free(low);
  return us;
}

/* g priced and checked; what = its name for messages. Returns 1 when the plan (not the graph)
   runs, -1 for a graph cdag does not analyse (the corpora hold such inputs: the error names
   what is not supported). */
static int check_guarantee_on(cdag_graph *g, const char *what, pipeline_tune t) {
  double written = 0;
  CK_OK(ir_finalize(g));
  int modelled = exec_loggp(g, &t.lp, &written, NULL) == CDAG_OK;
  cdag_plan *p = NULL;
  int rc = pipeline_plan(g, NULL, &t, &p);
  if (rc == CDAG_ERR_UNSUPPORTED) return -1;
  if (!modelled) {   /* beyond the model (its clock, say): the plan runs unweighed, and says why */
    ck_assert_msg(rc == CDAG_OK && !p->chosen->price->priced && strstr(p->chosen->price->why, "not priced"),
                  "%s: %s", what, rc ? cdag_error_message() : p->chosen->price->why);
    cdag_plan_free(&p);
    return -1;
  }
  ck_assert_msg(rc == CDAG_OK, "%s: plan: %s", what, cdag_error_message());
  const kern_price *pr = p->chosen->price;
  double chosen = chosen_time(g, p, &t, written);
  ck_assert_msg(chosen <= written, "%s: the chosen plan models %.6f us, the graph as written %.6f us", what, chosen,
                written);
  if (!p->as_written) {
    ck_assert_msg(pr->priced && pr->plan_us < pr->written_us, "%s: a plan runs that is not faster (%.6f >= %.6f)",
                  what, pr->plan_us, pr->written_us);
    ck_assert_msg(chosen == pr->plan_us, "%s: price says %.6f us, the lowering %.6f us", what, pr->plan_us, chosen);
  }
  ck_assert_msg(cdag_plan_verify(g, p) == CDAG_OK, "%s: verify: %s", what, cdag_error_message());
  int runs = !p->as_written;
  cdag_plan_free(&p);
  return runs;
}

/* Under the built-in parameters, and under a calibrated machine's costs by size and queue
   (this machine's, `cdag calibrate` 2026-11-30), where messages to self are local copies and
   the bytes of a message cost what the table says. */
static pipeline_tune tune_of(int table) {
  pipeline_tune t = pipeline_tune_of(NULL, KERN_POLICY_AUTO);
  if (!table) return t;
  static const double size[] = {8, 64, 128, 1024, 4096, 8192, 16384, 65536, 262144, 1048576};
  static const double pair[] = {0.31, 0.35, 0.46, 0.63, 0.80, 1.10, 5.2, 9.3, 22.6, 85.7};
  static const double round[] = {0.59, 0.60, 0.77, 0.95, 1.14, 1.42, 6.1, 7.8, 13.9, 68.1};
  t.lp.o = 0.19, t.lp.g = 0.19, t.lp.L = 0.2, t.lp.G = 8.4e-5, t.lp.O = 8.4e-5, t.lp.S = 8192, t.lp.copy = 9.5e-6;
  t.lp.queue = 0.00055, t.lp.rcopy = 8.6e-5;
  t.lp.ntab = (int)(sizeof size / sizeof *size);
  for (int i = 0; i < t.lp.ntab; i++) t.lp.tab_size[i] = size[i], t.lp.tab_pair[i] = pair[i], t.lp.tab_round[i] = round[i];
  return t;
}

static int check_guarantee(cdag_graph *g, const char *what) {
  int runs = check_guarantee_on(g, what, tune_of(0));
  char with[1100];
  snprintf(with, sizeof with, "%s, with a table of costs by size", what);
  check_guarantee_on(g, with, tune_of(1));
  return runs;
}

/* Every graph file under dir (not recursive) that loads, matches and is not too large for a
   unit test, every stride-th of them checked; *n counts those checked, *planned those whose
   plan runs. */
static void check_dir(const char *dir, long stride, long *seen, int *n, int *planned) {
  DIR *d = opendir(dir);
  ck_assert_msg(d != NULL, "cannot open %s", dir);
  for (struct dirent *e; (e = readdir(d));) {
    size_t len = strlen(e->d_name);
    int cdag = len > 5 && strcmp(e->d_name + len - 5, ".cdag") == 0, goal = len > 5 && strcmp(e->d_name + len - 5, ".goal") == 0;
    if (!cdag && !goal && !strstr(dir, "corpus")) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    ir_load_opts o = {.goal_buffers = IR_GOAL_FRESH};
    cdag_graph *g = NULL;
    if (ir_load_file(path, &o, &g) != CDAG_OK) continue;   /* the corpora hold bad inputs too */
    match_result m = {0};
    int ok = g->nops <= 200000 && ir_finalize(g) == CDAG_OK && match_run(g, &m) == CDAG_OK;
    match_free(&m);
    int runs = ok && (*seen)++ % stride == 0 ? check_guarantee(g, path) : -1;
    if (runs >= 0) *planned += runs, ++*n;
    ir_graph_free(g);
  }
  closedir(d);
}

START_TEST(every_corpus) {
  static const char *dirs[] = {"examples/graphs", "examples/graphs/shapes", "tests/data", "tests/data/detect",
                               "tests/data/goal", "tests/data/goal/schedgen", "tests/data/replay",
                               "tests/data/compute", "tests/data/fault", "tests/data/real", "fuzz/corpus",
                               "fuzz/corpus_api"};
  int n = 0, planned = 0;
  long seen = 0, k = cdag_test_iterations(100), stride = k >= 50 ? 1 : 50 / k;   /* all from CDAG_TEST_SCALE 0.5 */
  for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/%s", CDAG_SOURCE_DIR, dirs[i]);
    check_dir(dir, stride, &seen, &n, &planned);
  }
  if (getenv("CDAG_TEST_VERBOSE")) printf("price: %d graphs of the corpora, the plan runs for %d\n", n, planned);
  /* the corpora are not empty, and the price neither keeps every plan nor drops them all */
  ck_assert_int_ge(seen, 100);
  ck_assert_int_ge(n, 1);
  if (stride == 1) {
    ck_assert_int_gt(planned, 10);
    ck_assert_int_lt(planned, n);
  }
}
END_TEST

START_TEST(random_graphs) {
  long iters = cdag_test_iterations(60);
  for (long i = 0; i < iters; i++) {
    gen_random_opts o = {.reduce_mode = -1, .computes = (int)(i & 1)};
    cdag_graph *g = NULL;
    CK_OK(gen_random_graph((uint64_t)i * 7919 + 3, &o, &g));
    char what[64];
    snprintf(what, sizeof what, "random graph %ld", i);
    check_guarantee(g, what);
    ir_graph_free(g);
  }
}
END_TEST

static cdag_graph *load(const char *rel) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", CDAG_SOURCE_DIR, rel);
  ir_load_opts o = {0};
  cdag_graph *g = NULL;
  ck_assert_msg(ir_load_file(path, &o, &g) == CDAG_OK, "%s: %s", rel, cdag_error_message());
  return g;
}

static cdag_plan *priced(cdag_graph *g, int price) {
  cdag_options o;
  cdag_options_init(&o);
  o.price = price;
  pipeline_tune t = pipeline_tune_of(NULL, KERN_POLICY_AUTO);
  cdag_plan *p = NULL;
  ck_assert_msg(pipeline_plan(g, &o, &t, &p) == CDAG_OK, "%s", cdag_error_message());
  return p;
}

/* A 64 B binomial bcast on 8 ranks: three rounds of latency against seven sends from the root. */
START_TEST(candidate_left_as_messages) {
  cdag_graph *g = load("examples/graphs/bcast_binomial8.cdag");
  cdag_plan *p = priced(g, 1);
  ck_assert_int_eq(p->ncolls, 0);
  ck_assert_int_eq(p->nleft, 1);
  ck_assert_int_eq(p->nxfers, 7);
  ck_assert(cdag_test_noted(p, "left as messages: bcast over all"));
  ck_assert_int_eq(cdag_plan_verify(g, p), CDAG_OK);
  cdag_plan_free(&p);
  p = priced(g, 0);   /* unpriced: the rules take it */
  ck_assert_int_eq(p->ncolls, 1);
  ck_assert_int_eq(p->nleft, 0);
  ck_assert(!p->chosen->price->priced);
  ck_assert_ptr_nonnull(strstr(p->chosen->price->why, "options.price = 0"));
  cdag_plan_free(&p);
  ir_graph_free(g);
}
END_TEST

/* A bcast the program called, recorded as its flat messages: weighed like a hand-written one.
   Small on 8 ranks, the messages win and the graph runs as written; 1 MiB on 64 ranks, MPI's
   algorithm (or cdag's) pays and the plan keeps the call. */
static char *native_bcast_text(int ranks, int bytes) {
  size_t cap = (size_t)ranks * 64 + 64, n = 0;
  char *t = malloc(cap);
  ck_assert_ptr_nonnull(t);
  n += (size_t)snprintf(t + n, cap - n, "num_ranks %d\n", ranks);
  for (int r = 0; r < ranks; r++) n += (size_t)snprintf(t + n, cap - n, "rank %d {\n bcast %d root 0 addr 0x1000\n}\n", r, bytes);
  return t;
}

START_TEST(native_calls_are_weighed) {
  cdag_graph *g = load("tests/data/replay/native_bcast8.cdag");
  cdag_plan *p = priced(g, 1);
  ck_assert_int_eq(p->ncolls, 0);
  ck_assert_int_eq(p->nleft, 1);
  ck_assert(cdag_test_noted(p, "left as messages: bcast over all 8 ranks"));
  ck_assert_int_eq(p->as_written, DET_WRITTEN_COST);
  ck_assert(p->chosen->price->plan_us >= p->chosen->price->written_us);
  ck_assert_int_eq(p->native_residual, 7);
  cdag_plan_free(&p);
  ir_graph_free(g);
  g = load("tests/data/replay/native_allreduce3.cdag");   /* left as residual reductions: native data too */
  p = priced(g, 1);
  ck_assert_int_eq(p->ncolls, 0);
  ck_assert_int_eq(p->native_residual_reds, 3);
  cdag_plan_free(&p);
  ir_graph_free(g);
  char *text = native_bcast_text(64, 1 << 20);
  g = cdag_test_text_graph(text);
  free(text);
  p = priced(g, 1);
  ck_assert_int_eq(p->ncolls, 1);
  ck_assert(p->native && p->native[0]);
  ck_assert(!p->as_written && p->chosen->price->plan_us < p->chosen->price->written_us);
  cdag_plan_free(&p);
  ir_graph_free(g);
}
END_TEST

/* A candidate priced alone against its messages can be left where the whole plan then loses:
   a native gather whose 36 transfers cost 1.905 us as messages, 2.905 us as the call, but whose
   plan without it models 3.031 us against the graph's 3.012. The graph is planned again with
   every candidate kept, and that plan runs. */
START_TEST(candidates_left_are_tried_kept) {
  cdag_graph *g = load("tests/data/replay/native_gather4.cdag");
  cdag_plan *p = priced(g, 1);
  ck_assert_int_eq(p->ncolls, 1);
  ck_assert_int_eq(p->nleft, 0);
  ck_assert(cdag_test_noted(p, "the 1 collective the price set aside, kept: 2.905 us, against 3.012 us otherwise"));
  ck_assert(!p->as_written && p->chosen->price->plan_us < p->chosen->price->written_us);
  ck_assert_int_eq(cdag_plan_verify(g, p), CDAG_OK);
  cdag_plan_free(&p);
  ir_graph_free(g);
  g = load("tests/data/replay/native_bcast8.cdag");   /* kept, the bcast loses: the note says so */
  p = priced(g, 1);
  ck_assert_int_eq(p->nleft, 1);
  ck_assert(cdag_test_noted(p, "kept, would make a plan of 4.244 us, against 2.695 us with it left"));
  cdag_plan_free(&p);
  ir_graph_free(g);
}
END_TEST

START_TEST(candidate_that_pays) {
  cdag_graph *g = load("examples/graphs/alltoall_butterfly4.cdag");
  cdag_plan *p = priced(g, 1);
  ck_assert_int_eq(p->ncolls, 1);
  const det_coll *c = &p->colls[0];
  ck_assert(c->price_coll_us > 0 && c->price_coll_us < c->price_msgs_us);
  ck_assert(!p->as_written && p->chosen->price->priced);
  cdag_plan_free(&p);
  ir_graph_free(g);
}
END_TEST

START_TEST(halo_runs_as_written) {
  cdag_graph *g = load("examples/graphs/halo1d8.cdag");
  cdag_plan *p = priced(g, 1);
  ck_assert_int_eq(p->as_written, DET_WRITTEN_COST);
  ck_assert(p->chosen->price->plan_us >= p->chosen->price->written_us);
  cdag_plan_free(&p);
  p = priced(g, 0);
  ck_assert_int_eq(p->as_written, DET_WRITTEN_NO);
  cdag_plan_free(&p);
  ir_graph_free(g);
}
END_TEST

Suite *cdag_price_suite(void) {
  Suite *s = suite_create("price");
  TCase *t = tcase_create("price");
  tcase_set_timeout(t, 300);
  tcase_add_test(t, every_corpus);
  tcase_add_test(t, random_graphs);
  tcase_add_test(t, candidate_left_as_messages);
  tcase_add_test(t, candidate_that_pays);
  tcase_add_test(t, native_calls_are_weighed);
  tcase_add_test(t, candidates_left_are_tried_kept);
  tcase_add_test(t, halo_runs_as_written);
  suite_add_tcase(s, t);
  return s;
}

CDAG_CHECK_MAIN(cdag_price_suite)
