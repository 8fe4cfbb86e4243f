/* cdag tests — the shared main() of every check test program.
 *
 * Each tests/<stage>/test_<feature>.c is its own executable (CMake globs them and adds each
 * to ctest), defines `Suite *cdag_<feature>_suite(void)` and ends with
 * CDAG_CHECK_MAIN(cdag_<feature>_suite). check's fork mode isolates each test. */
#ifndef CDAG_TESTS_CHECK_MAIN_H
#define CDAG_TESTS_CHECK_MAIN_H
#include <check.h>
#include <stdlib.h>

#include "cdag.h"

/* Iteration count for randomized tests: n, scaled by CDAG_TEST_SCALE (valgrind runs use a
 * small scale so the whole suite stays within CI's time), at least 1. */
static inline long cdag_test_iterations(long n) {
  const char *s = getenv("CDAG_TEST_SCALE");
  double f = s ? atof(s) : 1.0;
  long k = (long)(n * f);
  return k < 1 ? 1 : k;
}

/* Whether fixed cases too costly for the memory checkers run: CDAG_TEST_SCALE at least 0.5
   (the release step of CI and above; valgrind and the sanitizers run smaller scales). */
static inline int cdag_test_thorough(void) { return cdag_test_iterations(4) >= 2; }

/* An assertion for loops over every op: check's own ck_assert_* record their location with a
   write(2) on each call (700,000 of them made test_match take 80 s under valgrind); this one
   costs nothing until it fails. */
#define CK_HOT(cond)                                                                 \
  do {                                                                               \
    if (!(cond)) ck_abort_msg("%s:%d: assertion '%s' failed", __FILE__, __LINE__, #cond); \
  } while (0)

/* A graph-builder call that must succeed: a test that ignored a failed call would test
   another graph than the one its comment describes. Cheap as CK_HOT (builders run in loops). */
#define CK_OK(call)                                                                          \
  do {                                                                                       \
    int ck_rc_ = (call);                                                                     \
    if (ck_rc_ != 0 /* CDAG_OK */)                                                           \
      ck_abort_msg("%s:%d: %s returned %d, not CDAG_OK", __FILE__, __LINE__, #call, ck_rc_);   \
  } while (0)

/* cdag_analyze of g with options o (NULL: the defaults), the plan checked against the graph
   in the simulator (cdag_plan_verify): a detection test then asserts on a plan that is right. */
static inline cdag_plan *cdag_test_analyse(cdag_graph *g, const cdag_options *o) {
  cdag_plan *p = NULL;
  int rc = cdag_analyze(g, o, &p);
  ck_assert_msg(rc == CDAG_OK, "analyze: %s", cdag_error_message());
  rc = cdag_plan_verify(g, p);
  ck_assert_msg(rc == CDAG_OK, "verify: %s", cdag_error_message());
  return p;
}

#define CDAG_CHECK_MAIN(suite_fn)                                   \
  int main(void) {                                                  \
    SRunner *sr = srunner_create(suite_fn());                       \
    srunner_run_all(sr, CK_NORMAL);                                 \
    int failed = srunner_ntests_failed(sr);                         \
    srunner_free(sr);                                               \
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;               \
  }

#endif
