/* cdag tests — report JSON has one writer (src/exec/report.c).
 *
 * The analysed plan's report and the report of a graph run as written (what a schedule
 * compiled with detect = 0 or with user ops says) start with the same head, written by the
 * same code; the as-written report escapes its reason as a JSON string and parses (python3's
 * json module is the judge, as docs/format.md's readers are). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "exec/pipeline.h"

static cdag_graph *ring(void) {
  cdag_graph *g;
  CK_OK(cdag_graph_create_global(3, &g));
  for (int r = 0; r < 3; r++) {
    CK_OK(cdag_rank_send(g, r, 0x100, 64, (r + 1) % 3, 0, NULL));
    CK_OK(cdag_rank_recv(g, r, 0x200, 64, (r + 2) % 3, 0, NULL));
  }
  return g;
}

static char *report(int plan, const char *why) {
  cdag_graph *g = ring();
  char *out = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&out, &len);
  if (plan) {
    cdag_plan *p = NULL;
    CK_OK(cdag_analyze(g, NULL, &p));
    CK_OK(cdag_plan_report(p, m, 1));
    cdag_plan_free(&p);
  } else {
    CK_OK(det_report_as_written(g, why, m, 1));
  }
  fclose(m);
  cdag_graph_free(&g);
  return out;
}

/* 1 if python3 reads s as one JSON object with the given key. */
static int parses(const char *s, const char *key) {
  char path[] = "/tmp/cdag_report_XXXXXX", cmd[256];
  int fd = mkstemp(path);
  ck_assert(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs(s, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "python3 -c 'import json,sys; sys.exit(0 if \"%s\" in json.load(open(\"%s\")) else 1)'", key,
           path);
  int rc = system(cmd);
  remove(path);
  return rc == 0;
}

START_TEST(as_written_shares_the_head) {
  char *a = report(1, NULL), *b = report(0, "detect = 0");
  const char *end_a = strstr(a, "},\n"), *end_b = strstr(b, "},\n");   /* through "ops" */
  ck_assert_ptr_nonnull(end_a);
  ck_assert_ptr_nonnull(end_b);
  ck_assert_int_eq((int)(end_a - a), (int)(end_b - b));
  ck_assert(!memcmp(a, b, (size_t)(end_a - a)));
  ck_assert(parses(a, "collectives") && parses(b, "runs_as_written"));
  free(a);
  free(b);
}
END_TEST

START_TEST(reason_is_escaped) {
  char *b = report(0, "rank 3 said \"no\"\\");
  ck_assert_ptr_nonnull(strstr(b, "\"runs_as_written\": \"rank 3 said \\\"no\\\"\\\\\""));
  ck_assert(parses(b, "runs_as_written"));
  free(b);
}
END_TEST

Suite *cdag_report_suite(void) {
  Suite *s = suite_create("report");
  TCase *t = tcase_create("json");
  tcase_add_test(t, as_written_shares_the_head);
  tcase_add_test(t, reason_is_escaped);
  suite_add_tcase(s, t);
  return s;
}

CDAG_CHECK_MAIN(cdag_report_suite)
