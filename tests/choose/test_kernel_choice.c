/* cdag tests — tests/choose/test_kernel_choice.c: the choice of MPI's collective or a cdag
 * kernel per plan collective (kernel_choice.c), without MPI.
 *
 * CDAG_KERNEL parsing (unset, auto, mpi, cdag, a bad value); the options' policy and model
 * and the environment over them (pipeline_tuning); kern_choose_plan on hand-made
 * plans: kinds without a kernel stay MPI's, policies force a side, one-member collectives
 * stay MPI's, census only for order-free reductions, and where a kernel cannot take the
 * plan's slots (an op the kernels lack, a block landing in a slot of another size) the
 * collective runs as MPI's and the reason says why (no silent fallback); the report prints
 * "algorithm" and "why" in text and JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "circulant/circulant.h"
#include "detect/detect.h"
#include "exec/kernels/kernel.h"
#include "exec/pipeline.h"

/* A plan of one collective of kind k over n ranks, every slot one piece of b bytes (recv
   slots of a rooted kind empty where the kind says so). */
static cdag_plan *one_coll(det_kind k, int n, uint64_t b, int type, int op) {
  cdag_plan *p = calloc(1, sizeof *p);
  int many = k == DET_ALLGATHER || k == DET_ALLGATHERV || k == DET_ALLTOALL;
  int nsend = k == DET_ALLTOALL ? n : 1, nrecv = many ? n : 1;
  p->nprocs = n;
  p->ncolls = 1;
  p->colls = calloc(1, sizeof *p->colls);
  p->ranks = calloc((size_t)n, sizeof *p->ranks);
  p->iovs = calloc((size_t)n * (size_t)(nsend + nrecv), sizeof *p->iovs);
  p->pieces = calloc((size_t)n * (size_t)(nsend + nrecv), sizeof *p->pieces);
  for (int i = 0; i < n; i++) p->ranks[i] = i;
  p->nranks = n;
  p->colls[0] = (det_coll){.kind = k, .root = k == DET_BCAST || k == DET_REDUCE ? 0 : -1, .nranks = n,
                           .nsend_slots = nsend, .nrecv_slots = nrecv, .send_first = 0,
                           .recv_first = (int64_t)n * nsend, .bytes = b, .type = type, .op = op};
  for (int64_t v = 0; v < (int64_t)n * (nsend + nrecv); v++) {
    int recv = v >= (int64_t)n * nsend, m = (int)(recv ? (v - (int64_t)n * nsend) / nrecv : v / nsend);
    uint64_t len = b;
    if (k == DET_BCAST && (recv ? m == 0 : m != 0)) len = 0;
    if (k == DET_REDUCE && recv && m != 0) len = 0;
    p->iovs[v] = (det_iov){p->npieces, len ? 1 : 0, len};
    if (len) p->pieces[p->npieces++] = (det_piece){4096 + (uint64_t)v * 4096, len};
  }
  p->niovs = (int64_t)n * (nsend + nrecv);
  return p;
}

static void plan_free(cdag_plan *p) {
  free(p->colls); free(p->ranks); free(p->iovs); free(p->pieces); kern_choices_free(p); free(p);
}

static pipeline_tune tuning(const cdag_options *o, int rc_expected) {
  pipeline_tune t;
  ck_assert_int_eq(pipeline_tuning(o, NULL, &t), rc_expected);
  return t;
}

START_TEST(policy_from_environment) {
  cdag_options o;
  cdag_options_init(&o);
  unsetenv("CDAG_KERNEL");
  ck_assert_int_eq(tuning(&o, CDAG_OK).policy, KERN_POLICY_AUTO);
  setenv("CDAG_KERNEL", "mpi", 1);
  ck_assert_int_eq(tuning(&o, CDAG_OK).policy, KERN_POLICY_MPI);
  setenv("CDAG_KERNEL", "cdag", 1);
  ck_assert_int_eq(tuning(&o, CDAG_OK).policy, KERN_POLICY_CDAG);
  setenv("CDAG_KERNEL", "auto", 1);
  ck_assert_int_eq(tuning(&o, CDAG_OK).policy, KERN_POLICY_AUTO);
  setenv("CDAG_KERNEL", "MPI ", 1);
  tuning(&o, CDAG_ERR_ARG);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "CDAG_KERNEL=MPI : expected mpi, cdag or auto"));
  unsetenv("CDAG_KERNEL");
}
END_TEST

/* The options set policy and model; a CDAG_* variable that is set applies where its field
   holds the default (an explicit field wins). */
START_TEST(options_then_environment) {
  cdag_options o;
  cdag_options_init(&o);
  unsetenv("CDAG_KERNEL"); unsetenv("CDAG_ALPHA"); unsetenv("CDAG_BETA"); unsetenv("CDAG_BLOCKS"); unsetenv("CDAG_MEASURE");
  pipeline_tune t = tuning(&o, CDAG_OK);
  kern_model b = kern_model_builtin();
  ck_assert(t.model.alpha == b.alpha && t.model.beta == b.beta && t.model.blocks == 0 && t.measure == 0);
  o.kernel = CDAG_KERNEL_CDAG;
  o.alpha = 3e-6;
  o.beta = 1e-9;
  o.blocks = 5;
  o.measure = 1;
  t = tuning(&o, CDAG_OK);
  ck_assert(t.policy == KERN_POLICY_CDAG && t.model.alpha == 3e-6 && t.model.beta == 1e-9 && t.model.blocks == 5);
  ck_assert_int_eq(t.measure, 1);
  kern_model measured = {7e-6, 4e-10, 0, 2e-7, 3e-11};   /* options override the measured model too */
  ck_assert_int_eq(pipeline_tuning(&o, &measured, &t), CDAG_OK);
  ck_assert(t.model.alpha == 3e-6 && t.model.beta == 1e-9);
  o.alpha = 0;
  ck_assert_int_eq(pipeline_tuning(&o, &measured, &t), CDAG_OK);
  ck_assert(t.model.alpha == 7e-6);
  setenv("CDAG_KERNEL", "mpi", 1);
  setenv("CDAG_BETA", "2e-9", 1);
  setenv("CDAG_BLOCKS", "2", 1);
  setenv("CDAG_MEASURE", "0", 1);
  setenv("CDAG_ALPHA", "4e-6", 1);
  t = tuning(&o, CDAG_OK);   /* explicit fields win over the variables; alpha (0) takes its variable */
  ck_assert(t.policy == KERN_POLICY_CDAG && t.model.beta == 1e-9 && t.model.blocks == 5 && t.measure == 1);
  ck_assert(t.model.alpha == 4e-6);
  cdag_options_init(&o);     /* fields at their defaults: the variables decide */
  t = tuning(&o, CDAG_OK);
  ck_assert(t.policy == KERN_POLICY_MPI && t.model.beta == 2e-9 && t.model.blocks == 2 && t.measure == 0);
  unsetenv("CDAG_ALPHA");
  unsetenv("CDAG_KERNEL"); unsetenv("CDAG_BETA"); unsetenv("CDAG_BLOCKS"); unsetenv("CDAG_MEASURE");
  /* the options are checked with the others */
  o.kernel = (cdag_kernel_policy)7;
  ck_assert_int_eq(pipeline_check_options(&o, 4, 2), CDAG_ERR_ARG);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "rank 2: options.kernel 7"));
  o.kernel = CDAG_KERNEL_AUTO;
  o.beta = -1;
  ck_assert_int_eq(pipeline_check_options(&o, 4, -1), CDAG_ERR_ARG);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "options.beta -1"));
  o.beta = 0;
  o.blocks = -3;
  ck_assert_int_eq(pipeline_check_options(&o, 4, -1), CDAG_ERR_ARG);
  o.blocks = 0;
  o.measure = 2;
  ck_assert_int_eq(pipeline_check_options(&o, 4, -1), CDAG_ERR_ARG);
  o.measure = 0;
  ck_assert_int_eq(pipeline_check_options(&o, 4, -1), CDAG_OK);
  o.gamma = 2000;
  ck_assert_int_eq(pipeline_check_options(&o, 4, -1), CDAG_ERR_ARG);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "options.gamma 2000"));
  o.gamma = 0;
  cdag_options zeroed = {0};   /* the seven model fields: zero is "not set" */
  zeroed.density = 1;
  zeroed.min_group = 4;
  ck_assert_int_eq(pipeline_check_options(&zeroed, 4, -1), CDAG_OK);
}
END_TEST

/* Residual pieces of at most overhead / (2 gamma) bytes are packed; the overhead and gamma
   come from the built-in model, the measured one, the environment, the options, in order. */
START_TEST(pack_limit_follows_the_model) {
  cdag_options o;
  cdag_options_init(&o);
  unsetenv("CDAG_OVERHEAD"); unsetenv("CDAG_GAMMA");
  pipeline_tune t = tuning(&o, CDAG_OK);
  kern_model b = kern_model_builtin();
  ck_assert(t.model.overhead == b.overhead && t.model.gamma == b.gamma);
  ck_assert_uint_eq(kern_model_pack_limit(&b), 1000);
  kern_model measured = {2e-7, 2e-10, 0, 1e-7, 2.5e-11};
  ck_assert_int_eq(pipeline_tuning(&o, &measured, &t), CDAG_OK);
  ck_assert_uint_eq(kern_model_pack_limit(&t.model), 2000);
  o.overhead = 4e-7;
  o.gamma = 1e-10;
  ck_assert_int_eq(pipeline_tuning(&o, &measured, &t), CDAG_OK);
  ck_assert_uint_eq(kern_model_pack_limit(&t.model), 2000);
  setenv("CDAG_GAMMA", "1e-9", 1);
  t = tuning(&o, CDAG_OK);   /* options.gamma is explicit: it wins */
  ck_assert_uint_eq(kern_model_pack_limit(&t.model), 2000);
  o.gamma = 0;               /* not set: the variable's */
  t = tuning(&o, CDAG_OK);
  ck_assert_uint_eq(kern_model_pack_limit(&t.model), 200);
  setenv("CDAG_OVERHEAD", "-1", 1);
  tuning(&o, CDAG_ERR_ARG);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "CDAG_OVERHEAD=-1"));
  unsetenv("CDAG_OVERHEAD"); unsetenv("CDAG_GAMMA");
  kern_model huge = {1e-6, 2e-10, 0, 1000, 1e-300};   /* no overflow: capped */
  ck_assert_uint_eq(kern_model_pack_limit(&huge), (uint64_t)1 << 62);
}
END_TEST

/* A forced block count is the model's: kern_model_nblocks uses it, capped to the units. The
   model's own count is at most KERN_BLOCKS_MAX: n* of a 2^62-byte broadcast is some 2^28, and
   2^24 blocks lowered to 64 M messages (`cdag goal --plan` ran for ever); 1 GiB keeps n*. */
START_TEST(blocks_travel_with_the_model) {
  kern_model m = {1e-6, 2e-10, 3, 1.5e-7, 5e-11};
  ck_assert_int_eq(kern_model_nblocks(&m, 0, 8, 100, 4), 3);
  ck_assert_int_eq(kern_model_nblocks(&m, 5, 8, 100, 4), 5);
  ck_assert_int_eq(kern_model_nblocks(&m, 0, 8, 2, 4), 2);
  m.blocks = 0;
  ck_assert_int_eq(kern_model_nblocks(&m, 0, 8, 100, 4), kern_model_blocks(&m, 8, 100, 4) > 100 ? 100 : kern_model_blocks(&m, 8, 100, 4));
  ck_assert_int_eq(kern_model_blocks(&m, 4, 1ull << 62, 1), KERN_BLOCKS_MAX);
  ck_assert_int_eq(kern_model_nblocks(&m, 0, 4, 1ull << 62, 1), KERN_BLOCKS_MAX);
  ck_assert_int_eq(kern_model_blocks(&m, 4, 1ull << 30, 1), circ_blocks_for(m.alpha, m.beta, 1ull << 30, 2));
}
END_TEST

START_TEST(policies_force_a_side) {
  kern_model m = {1e-6, 2e-10, 0, 1.5e-7, 5e-11};
  cdag_plan *p = one_coll(DET_BCAST, 8, 64, -1, -1);
  ck_assert_int_eq(kern_choose_plan(p, &m, KERN_POLICY_MPI), CDAG_OK);
  ck_assert_str_eq(p->chosen->coll[0].name, "mpi");
  ck_assert_str_eq(p->chosen->coll[0].why, "bcast: MPI (kernel policy mpi)");
  ck_assert_int_eq(kern_choose_plan(p, &m, KERN_POLICY_CDAG), CDAG_OK);
  ck_assert_str_eq(p->chosen->coll[0].name, "circulant");
  ck_assert_int_eq(p->chosen->coll[0].alg, KERN_ALG_CIRCULANT);
  ck_assert_ptr_nonnull(strstr(p->chosen->coll[0].why, "circulant forced (kernel policy cdag)"));
  ck_assert_int_eq(kern_choose_plan(p, &m, KERN_POLICY_AUTO), CDAG_OK);
  ck_assert_str_eq(p->chosen->coll[0].name, "mpi");  /* 64 B: no clear gain */
  m.beta = 1e-6;  /* costly bytes: the n-block kernel wins */
  ck_assert_int_eq(kern_choose_plan(p, &m, KERN_POLICY_AUTO), CDAG_OK);
  ck_assert_str_eq(p->chosen->coll[0].name, "circulant");
  plan_free(p);
}
END_TEST

START_TEST(kinds_without_kernel_and_single_members) {
  cdag_plan *p = one_coll(DET_ALLTOALL, 4, 16, -1, -1);
  ck_assert_int_eq(kern_choose_plan(p, NULL, KERN_POLICY_CDAG), CDAG_OK);
  ck_assert_str_eq(p->chosen->coll[0].name, "mpi");
  ck_assert_str_eq(p->chosen->coll[0].why, "alltoall: MPI (no cdag kernel for this kind)");
  plan_free(p);
  p = one_coll(DET_ALLREDUCE, 1, 16, CDAG_INT32, CDAG_SUM);
  ck_assert_int_eq(kern_choose_plan(p, NULL, KERN_POLICY_CDAG), CDAG_OK);
  ck_assert_str_eq(p->chosen->coll[0].why, "allreduce: MPI (one member)");
  plan_free(p);
}
END_TEST

START_TEST(census_only_when_order_free) {
  kern_model m = {1e-6, 2e-10, 0, 1.5e-7, 5e-11};
  cdag_plan *p = one_coll(DET_ALLREDUCE, 4, 64, CDAG_INT32, CDAG_SUM);
  ck_assert_int_eq(kern_choose_plan(p, &m, KERN_POLICY_AUTO), CDAG_OK);
  ck_assert_str_eq(p->chosen->coll[0].name, "census");
  p->colls[0].type = CDAG_DOUBLE;
  ck_assert_int_eq(kern_choose_plan(p, &m, KERN_POLICY_CDAG), CDAG_OK);
  ck_assert_str_eq(p->chosen->coll[0].name, "circulant");
  ck_assert_ptr_nonnull(strstr(p->chosen->coll[0].why, "census would reorder a floating-point sum"));
  p->colls[0].op = CDAG_MAX;
  ck_assert_int_eq(kern_choose_plan(p, &m, KERN_POLICY_AUTO), CDAG_OK);
  ck_assert_str_eq(p->chosen->coll[0].name, "census");
  plan_free(p);
}
END_TEST

START_TEST(misfits_run_as_mpi_and_say_why) {
  cdag_plan *p = one_coll(DET_ALLREDUCE, 4, 64, CDAG_DOUBLE, CDAG_BXOR);
  ck_assert_int_eq(kern_choose_plan(p, NULL, KERN_POLICY_CDAG), CDAG_OK);
  ck_assert_str_eq(p->chosen->coll[0].name, "mpi");
  ck_assert_int_eq(p->chosen->coll[0].alg, KERN_ALG_MPI);
  ck_assert_ptr_nonnull(strstr(p->chosen->coll[0].why, "runs as MPI: "));
  ck_assert_ptr_nonnull(strstr(p->chosen->coll[0].why, "cannot (no kernel for this type and op)"));
  plan_free(p);
  p = one_coll(DET_ALLGATHER, 4, 32, -1, -1);
  p->iovs[p->colls[0].recv_first + 5].bytes = 16;  /* member 1's slot of block 1: another size */
  ck_assert_int_eq(kern_choose_plan(p, NULL, KERN_POLICY_CDAG), CDAG_OK);
  ck_assert_str_eq(p->chosen->coll[0].name, "mpi");
  ck_assert_ptr_nonnull(strstr(p->chosen->coll[0].why, "cannot (a block lands in a slot of another size)"));
  p->iovs[p->colls[0].recv_first + 5] = (det_iov){0, 0, 0};  /* empty: not kept, the kernel still runs */
  ck_assert_int_eq(kern_choose_plan(p, NULL, KERN_POLICY_CDAG), CDAG_OK);
  ck_assert_str_eq(p->chosen->coll[0].name, "circulant");
  plan_free(p);
  p = one_coll(DET_BCAST, 4, 32, -1, -1);
  p->iovs[p->colls[0].recv_first + 2].bytes = 8;
  ck_assert_int_eq(kern_choose_plan(p, NULL, KERN_POLICY_CDAG), CDAG_OK);
  ck_assert_str_eq(p->chosen->coll[0].name, "mpi");
  ck_assert_ptr_nonnull(strstr(p->chosen->coll[0].why, "cannot (a member receives another size)"));
  plan_free(p);
}
END_TEST

START_TEST(report_prints_the_choice) {
  kern_model m = {1e-6, 2e-10, 0, 1.5e-7, 5e-11};
  cdag_plan *p = one_coll(DET_ALLREDUCE, 4, 64, CDAG_INT32, CDAG_SUM);
  df_sst sst = {0};
  p->sst = &sst;
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  ck_assert_int_eq(cdag_plan_report(p, f, 0), CDAG_OK);  /* not chosen yet: nothing said */
  fflush(f);
  ck_assert_ptr_null(strstr(text, "algorithm"));
  ck_assert_int_eq(kern_choose_plan(p, &m, KERN_POLICY_AUTO), CDAG_OK);
  ck_assert_int_eq(cdag_plan_report(p, f, 0), CDAG_OK);
  ck_assert_int_eq(cdag_plan_report(p, f, 1), CDAG_OK);
  fclose(f);
  ck_assert_ptr_nonnull(strstr(text, "allreduce over all 4 ranks, 64 B of int32 sum (0 reductions)\n"
                                     "  algorithm: census (allreduce: census 2.03 us < MPI scatter+allgather 4.02 us (p=4, 64 B))\n"));
  ck_assert_ptr_nonnull(strstr(text, "\"op\": \"sum\", \"algorithm\": \"census\", \"why\": \"allreduce: census 2.03 us"));
  free(text);
  p->sst = NULL;
  plan_free(p);
}
END_TEST

Suite *cdag_kernel_choice_suite(void) {
  Suite *s = suite_create("kernel_choice");
  TCase *t = tcase_create("choice");
  tcase_add_test(t, policy_from_environment);
  tcase_add_test(t, options_then_environment);
  tcase_add_test(t, blocks_travel_with_the_model);
  tcase_add_test(t, pack_limit_follows_the_model);
  tcase_add_test(t, policies_force_a_side);
  tcase_add_test(t, kinds_without_kernel_and_single_members);
  tcase_add_test(t, census_only_when_order_free);
  tcase_add_test(t, misfits_run_as_mpi_and_say_why);
  tcase_add_test(t, report_prints_the_choice);
  suite_add_tcase(s, t);
  return s;
}

CDAG_CHECK_MAIN(cdag_kernel_choice_suite)
