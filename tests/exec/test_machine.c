/* cdag tests — machine files (src/exec/machine.c) and where pipeline_tuning finds its parameters.
 *
 * A good file loads with its values and the alpha-beta model they imply; a file at the
 * default path that does not exist means the built-in parameters, one CDAG_MACHINE names
 * must exist; every malformed file is CDAG_ERR_ARG naming the file and the line; the
 * default path follows XDG_CONFIG_HOME, then HOME; an explicit option or variable wins over
 * the file (the source is then "options"); the report names the source. The tests set
 * CDAG_MACHINE themselves (check forks each test, so the environment is the test's). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "exec/pipeline.h"

static const char good[] = "cdag-machine 1\n# measured somewhere\n\nL 0.5\no 0.1   # send overhead\ng 0.15\n"
                           "G 0.0002\nS 8192\ncopy 0.00003\n";

/* text written to a fresh file; its path in path[64]. */
static void put(const char *text, char *path) {
  snprintf(path, 64, "/tmp/cdag_machine_XXXXXX");
  int fd = mkstemp(path);
  ck_assert(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs(text, f);
  fclose(f);
}

/* machine_load of text as a named file: its code; the message must name the file and `line`. */
static int load_text(const char *text, const char *line, machine_params *m) {
  char path[64];
  put(text, path);
  int rc = machine_load(path, 1, m);
  if (rc) {
    ck_assert_msg(strstr(cdag_error_message(), path), "no path in: %s", cdag_error_message());
    if (line) ck_assert_msg(strstr(cdag_error_message(), line), "no '%s' in: %s", line, cdag_error_message());
  }
  remove(path);
  return rc;
}

START_TEST(good_file_loads) {
  machine_params m;
  char path[64];
  put(good, path);
  CK_OK(machine_load(path, 1, &m));
  ck_assert_int_eq(m.kind, MACHINE_FILE);
  ck_assert_double_eq(m.lp.L, 0.5);
  ck_assert_double_eq(m.lp.o, 0.1);
  ck_assert_double_eq(m.lp.g, 0.15);
  ck_assert_double_eq(m.lp.G, 0.0002);
  ck_assert_double_eq(m.lp.O, 0);   /* optional: its default */
  ck_assert_uint_eq(m.lp.S, 8192);
  ck_assert_double_eq(m.lp.copy, 0.00003);
  ck_assert_double_eq_tol(m.model.alpha, 0.7e-6, 1e-15);     /* L + 2o */
  ck_assert_double_eq_tol(m.model.beta, 0.0002e-6, 1e-18);   /* G */
  ck_assert_double_eq_tol(m.model.overhead, 0.15e-6, 1e-15); /* max(o, g) */
  ck_assert_double_eq_tol(m.model.gamma, 0.00003e-6, 1e-18); /* copy */
  char want[128];
  snprintf(want, sizeof want, "machine file %s", path);
  ck_assert_str_eq(m.source, want);
  remove(path);
}
END_TEST

START_TEST(written_file_reads_back) {
  loggp_params lp = {.L = 0.35, .o = 0.12, .g = 0.1, .G = 0.000217, .S = 8192, .copy = 2.4e-05, .rcopy = 6e-05, .queue = 0.0006,
                     .ntab = 3, .tab_size = {8, 8192, 8193}, .tab_pair = {0.27, 1.07, 4.85},
                     .tab_round = {0.6, 1.4, 5.6}},
               back;
  char path[64];
  put("", path);
  FILE *f = fopen(path, "w");
  CK_OK(machine_write(f, &lp, "first line\nMPI: some library"));
  fclose(f);
  f = fopen(path, "r");
  CK_OK(machine_read(f, path, &back));
  fclose(f);
  remove(path);
  ck_assert_double_eq_tol(back.L, lp.L, 1e-9);
  ck_assert_double_eq_tol(back.G, lp.G, 1e-12);
  ck_assert_uint_eq(back.S, lp.S);
  ck_assert_double_eq_tol(back.copy, lp.copy, 1e-12);
  ck_assert_double_eq_tol(back.queue, lp.queue, 1e-12);
  ck_assert_double_eq_tol(back.rcopy, lp.rcopy, 1e-12);
  ck_assert_int_eq(back.ntab, 3);
  for (int i = 0; i < 3; i++) {   /* the sizes exactly: 8192 and 8193 stay apart */
    ck_assert_double_eq(back.tab_size[i], lp.tab_size[i]);
    ck_assert_double_eq_tol(back.tab_pair[i], lp.tab_pair[i], 1e-9);
    ck_assert_double_eq_tol(back.tab_round[i], lp.tab_round[i], 1e-9);
  }
}
END_TEST

START_TEST(missing_file) {
  machine_params m;
  CK_OK(machine_load("/tmp/cdag_no_such_machine_file", 0, &m));   /* the default path: built in */
  ck_assert_int_eq(m.kind, MACHINE_BUILTIN);
  ck_assert_str_eq(m.source, "built in");
  machine_params b = machine_builtin();
  ck_assert_double_eq(m.lp.L, b.lp.L);
  ck_assert_int_eq(machine_load("/tmp/cdag_no_such_machine_file", 1, &m), CDAG_ERR_ARG);   /* named: must exist */
  ck_assert(strstr(cdag_error_message(), "/tmp/cdag_no_such_machine_file"));
  CK_OK(machine_load("", 1, &m));   /* CDAG_MACHINE=none */
  ck_assert_int_eq(m.kind, MACHINE_BUILTIN);
}
END_TEST

START_TEST(malformed_lines) {
  machine_params m;
  ck_assert_int_eq(load_text("cdag-machine 1\nL 0.5\nq 3\n", "line 3", &m), CDAG_ERR_ARG);
  ck_assert(strstr(cdag_error_message(), "'q'"));
  ck_assert_int_eq(load_text("cdag-machine 1\nL 0.5\no -1\n", "line 3", &m), CDAG_ERR_ARG);
  ck_assert_int_eq(load_text("cdag-machine 1\nL 0.5\no 1x\n", "line 3", &m), CDAG_ERR_ARG);
  ck_assert_int_eq(load_text("cdag-machine 1\nL 0.5\nL 0.6\n", "line 3", &m), CDAG_ERR_ARG);
  ck_assert_int_eq(load_text("cdag-machine 1\nL\n", "line 2", &m), CDAG_ERR_ARG);
  ck_assert_int_eq(load_text("cdag-machine 1\nL 1 2\n", "line 2", &m), CDAG_ERR_ARG);
  ck_assert_int_eq(load_text("cdag-machine 1\nS 1.5\n", "line 2", &m), CDAG_ERR_ARG);
  ck_assert_int_eq(load_text("# c\ncdag-machine 2\n", "line 2", &m), CDAG_ERR_ARG);
  ck_assert_int_eq(load_text("L 0.5\n", "line 1", &m), CDAG_ERR_ARG);
  ck_assert_int_eq(load_text("", "empty", &m), CDAG_ERR_ARG);
  ck_assert_int_eq(load_text("cdag-machine 1\nL 0.5\no 0.1\ng 0.1\nG 0.1\n", "no copy", &m), CDAG_ERR_ARG);
  /* the table of costs by size: three numbers, a whole size from 1 byte, sizes rising */
  ck_assert_int_eq(load_text("cdag-machine 1\nsize 8 0.3\n", "line 2", &m), CDAG_ERR_ARG);
  ck_assert_int_eq(load_text("cdag-machine 1\nsize 8 0.3 0.1 4\n", "line 2", &m), CDAG_ERR_ARG);
  ck_assert_int_eq(load_text("cdag-machine 1\nsize 0 0.3 0.6\n", "line 2", &m), CDAG_ERR_ARG);
  ck_assert_int_eq(load_text("cdag-machine 1\nsize 8.5 0.3 0.6\n", "line 2", &m), CDAG_ERR_ARG);
  ck_assert_int_eq(load_text("cdag-machine 1\nsize 8 -0.3 0.6\n", "line 2", &m), CDAG_ERR_ARG);
  ck_assert_int_eq(load_text("cdag-machine 1\nsize 64 0.3 0.6\nsize 64 0.4 0.6\n", "line 3", &m), CDAG_ERR_ARG);
  ck_assert(strstr(cdag_error_message(), "sizes must rise"));
  char many[2048] = "cdag-machine 1\n";
  for (int i = 1; i <= LOGGP_TAB_MAX + 1; i++) snprintf(many + strlen(many), sizeof many - strlen(many), "size %d 1 1\n", i);
  ck_assert_int_eq(load_text(many, "line 34", &m), CDAG_ERR_ARG);
}
END_TEST

START_TEST(default_path) {
  cdag_settings s = {0};
  char path[256];
  int named;
  s.home = "/home/u";
  CK_OK(machine_path(&s, path, sizeof path, &named));
  ck_assert_str_eq(path, "/home/u/.config/cdag/machine");
  ck_assert_int_eq(named, 0);
  s.config_home = "/xdg";
  CK_OK(machine_path(&s, path, sizeof path, &named));
  ck_assert_str_eq(path, "/xdg/cdag/machine");
  s.machine = "/m/file";
  CK_OK(machine_path(&s, path, sizeof path, &named));
  ck_assert_str_eq(path, "/m/file");
  ck_assert_int_eq(named, 1);
  s.machine = "none";
  CK_OK(machine_path(&s, path, sizeof path, &named));
  ck_assert_str_eq(path, "");
  s.machine = NULL, s.config_home = NULL, s.home = NULL;
  CK_OK(machine_path(&s, path, sizeof path, &named));
  ck_assert_str_eq(path, "");
  s.home = "/a-home-path-longer-than-the-buffer-given-to-machine_path";
  ck_assert_int_eq(machine_path(&s, path, 16, &named), CDAG_ERR_ARG);
}
END_TEST

/* pipeline_tuning finds the file through CDAG_MACHINE, and an explicit option or variable
   wins: the source then says "options". A bad file is its error. */
START_TEST(tuning_reads_the_file) {
  char path[64];
  put(good, path);
  setenv("CDAG_MACHINE", path, 1);
  cdag_options o;
  cdag_options_init(&o);
  pipeline_tune t;
  CK_OK(pipeline_tuning(&o, NULL, &t));
  ck_assert_double_eq(t.lp.L, 0.5);
  ck_assert_double_eq(t.lp.g, 0.15);
  ck_assert_uint_eq(t.lp.S, 8192);
  ck_assert_double_eq_tol(t.model.alpha, 0.7e-6, 1e-15);
  ck_assert(strncmp(t.source, "machine file /tmp/cdag_machine_", 31) == 0);
  o.alpha = 2e-6;   /* explicit wins */
  CK_OK(pipeline_tuning(&o, NULL, &t));
  ck_assert_str_eq(t.source, "options");
  ck_assert_double_eq_tol(t.model.alpha, 2e-6, 1e-15);
  ck_assert_double_eq_tol(t.lp.L, 2 - 2 * 0.15, 1e-9);   /* kern_model_loggp: o = g = overhead */
  ck_assert_uint_eq(t.lp.S, 8192);                       /* what options do not say stays the file's */
  cdag_options_init(&o);
  setenv("CDAG_GAMMA", "1e-9", 1);   /* so does a variable */
  CK_OK(pipeline_tuning(&o, NULL, &t));
  ck_assert_str_eq(t.source, "options");
  ck_assert_double_eq_tol(t.lp.copy, 0.001, 1e-12);
  unsetenv("CDAG_GAMMA");
  kern_model measured = kern_model_builtin();   /* a measured model wins over the file */
  CK_OK(pipeline_tuning(&o, &measured, &t));
  ck_assert_str_eq(t.source, "measured");
  remove(path);
  put("cdag-machine 1\nL x\n", path);
  setenv("CDAG_MACHINE", path, 1);
  ck_assert_int_eq(pipeline_tuning(&o, NULL, &t), CDAG_ERR_ARG);
  ck_assert_msg(strstr(cdag_error_message(), "line 2"), "%s", cdag_error_message());
  remove(path);
  setenv("CDAG_MACHINE", "none", 1);
  CK_OK(pipeline_tuning(&o, NULL, &t));
  ck_assert_str_eq(t.source, "built in");
}
END_TEST

/* The report of a plan priced with the file names it, in text and JSON. */
START_TEST(report_names_the_source) {
  char path[64];
  put(good, path);
  setenv("CDAG_MACHINE", path, 1);
  pipeline_tune t;
  cdag_options o;
  cdag_options_init(&o);
  CK_OK(pipeline_tuning(&o, NULL, &t));
  for (int json = 0; json < 2; json++) {
    cdag_graph *g;
    CK_OK(cdag_graph_create_global(3, &g));
    for (int r = 0; r < 3; r++) {
      CK_OK(cdag_rank_send(g, r, 0x100, 64, (r + 1) % 3, 0, NULL));
      CK_OK(cdag_rank_recv(g, r, 0x200, 64, (r + 2) % 3, 0, NULL));
    }
    cdag_plan *p = NULL;
    CK_OK(pipeline_plan(g, NULL, &t, &p));
    char *out = NULL, want[128];
    size_t len = 0;
    FILE *m = open_memstream(&out, &len);
    CK_OK(cdag_plan_report(p, m, json));
    fclose(m);
    snprintf(want, sizeof want, json ? "\"source\": \"machine file %s\"" : "us/B; machine file %s): plan", path);
    ck_assert_msg(strstr(out, want), "no '%s' in:\n%s", want, out);
    free(out);
    cdag_plan_free(&p);
    cdag_graph_free(&g);
  }
  remove(path);
}
END_TEST

Suite *cdag_machine_suite(void) {
  Suite *s = suite_create("machine");
  TCase *t = tcase_create("machine");
  tcase_add_test(t, good_file_loads);
  tcase_add_test(t, written_file_reads_back);
  tcase_add_test(t, missing_file);
  tcase_add_test(t, malformed_lines);
  tcase_add_test(t, default_path);
  tcase_add_test(t, tuning_reads_the_file);
  tcase_add_test(t, report_names_the_source);
  suite_add_tcase(s, t);
  return s;
}

CDAG_CHECK_MAIN(cdag_machine_suite)
