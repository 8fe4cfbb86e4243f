/* cdag tests — tests/base/test_settings.c: the options table and the CDAG_* variables, read and
 * validated in one place (src/base/settings.h).
 *
 * The table is the struct: its rows name cdag_options' fields in include/cdag.h's order, and
 * module cdag's Fortran type mirrors them (names, order, C kinds), both read from the sources.
 * cdag_options_init takes its defaults from the table; a zeroed struct means the defaults; a
 * struct_size smaller than the library's (an older program) gets defaults for the fields
 * beyond it; every bad field is CDAG_ERR_ARG naming it and its value; an explicit field wins
 * over its variable; the command line parses with the same ranges as the API. Each
 * variable's good values are read as documented, unset and empty mean "not set", each bad
 * value is named. The version macros and cdag_version() agree. */
#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "cdag.h"
#include "exec/pipeline.h"
#include "base/settings.h"

static const char *const vars[] = {"CDAG_DETECT", "CDAG_REPORT", "CDAG_KERNEL", "CDAG_MEASURE", "CDAG_ALPHA",
                                   "CDAG_BETA", "CDAG_BLOCKS", "CDAG_REPLAY_CORRUPT", "CDAG_OVERHEAD", "CDAG_GAMMA"};

static void clear_all(void) {
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) unsetenv(vars[i]);
}

#define SET(field) (1u << CDAG_OPT_##field)

START_TEST(unset_and_empty_mean_defaults) {
  clear_all();
  cdag_settings s;
  ck_assert_int_eq(cdag__settings_read(&s), CDAG_OK);
  ck_assert_uint_eq(s.opt_set, 0);
  ck_assert_ptr_null(s.report);
  ck_assert_int_eq(s.replay_corrupt, -1);
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) setenv(vars[i], "", 1);
  ck_assert_int_eq(cdag__settings_read(&s), CDAG_OK);
  ck_assert_uint_eq(s.opt_set, 0);
  ck_assert_ptr_null(s.report);
  clear_all();
}
END_TEST

START_TEST(good_values_are_read) {
  clear_all();
  setenv("CDAG_DETECT", "0", 1);
  setenv("CDAG_REPORT", "out.json", 1);
  setenv("CDAG_KERNEL", "cdag", 1);
  setenv("CDAG_MEASURE", "1", 1);
  setenv("CDAG_ALPHA", "2.5e-6", 1);
  setenv("CDAG_BETA", "1e-10", 1);
  setenv("CDAG_BLOCKS", "12", 1);
  setenv("CDAG_REPLAY_CORRUPT", "0", 1);
  cdag_settings s;
  ck_assert_int_eq(cdag__settings_read(&s), CDAG_OK);
  ck_assert_uint_eq(s.opt_set, SET(detect) | SET(kernel) | SET(measure) | SET(alpha) | SET(beta) | SET(blocks));
  ck_assert_int_eq(s.opt.detect, 0);
  ck_assert_str_eq(s.report, "out.json");
  ck_assert_int_eq(s.opt.kernel, CDAG_KERNEL_CDAG);
  ck_assert_int_eq(s.opt.measure, 1);
  ck_assert_double_eq(s.opt.alpha, 2.5e-6);
  ck_assert_double_eq(s.opt.beta, 1e-10);
  ck_assert_int_eq(s.opt.blocks, 12);
  ck_assert_int_eq(s.replay_corrupt, 0);
  setenv("CDAG_KERNEL", "mpi", 1);
  ck_assert_int_eq(cdag__settings_read(&s), CDAG_OK);
  ck_assert_int_eq(s.opt.kernel, CDAG_KERNEL_MPI);
  setenv("CDAG_KERNEL", "auto", 1);   /* set, to the default value */
  ck_assert_int_eq(cdag__settings_read(&s), CDAG_OK);
  ck_assert_int_eq(s.opt.kernel, CDAG_KERNEL_AUTO);
  ck_assert(s.opt_set & SET(kernel));
  clear_all();
}
END_TEST

/* The settings walk the environment once for its CDAG_ entries: a name that only starts like
   a variable's is another variable, and past 64 CDAG_ entries every variable is still read. */
START_TEST(prefixes_and_many_variables) {
  clear_all();
  setenv("CDAG_DETECTX", "0", 1);
  setenv("CDAG_REPORTS", "no.json", 1);
  setenv("XCDAG_KERNEL", "mpi", 1);
  cdag_settings s;
  ck_assert_int_eq(cdag__settings_read(&s), CDAG_OK);
  ck_assert_uint_eq(s.opt_set, 0);
  ck_assert_ptr_null(s.report);
  char name[32];
  for (int k = 0; k < 70; k++) {
    snprintf(name, sizeof name, "CDAG_UNUSED_%d", k);
    setenv(name, "1", 1);
  }
  setenv("CDAG_DETECT", "0", 1);
  setenv("CDAG_REPORT", "out.json", 1);
  ck_assert_int_eq(cdag__settings_read(&s), CDAG_OK);
  ck_assert_uint_eq(s.opt_set, SET(detect));
  ck_assert_int_eq(s.opt.detect, 0);
  ck_assert_str_eq(s.report, "out.json");
  for (int k = 0; k < 70; k++) {
    snprintf(name, sizeof name, "CDAG_UNUSED_%d", k);
    unsetenv(name);
  }
  unsetenv("CDAG_DETECTX");
  unsetenv("CDAG_REPORTS");
  unsetenv("XCDAG_KERNEL");
  clear_all();
}
END_TEST

START_TEST(each_bad_value_is_named) {
  static const char *const bad[][2] = {
      {"CDAG_DETECT", "2"},      {"CDAG_DETECT", "no"},  {"CDAG_KERNEL", "fast"},
      {"CDAG_MEASURE", "yes"},   {"CDAG_ALPHA", "abc"},  {"CDAG_ALPHA", "0"},
      {"CDAG_ALPHA", "nan"},     {"CDAG_BETA", "-1e-9"}, {"CDAG_BETA", "1e-9s"},
      {"CDAG_BLOCKS", "0"},      {"CDAG_BLOCKS", "3x"},  {"CDAG_BLOCKS", "99999999999"},
      {"CDAG_GAMMA", "2000"},    {"CDAG_OVERHEAD", "inf"},
      {"CDAG_REPLAY_CORRUPT", "-1"}, {"CDAG_REPLAY_CORRUPT", "r1"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    clear_all();
    setenv(bad[i][0], bad[i][1], 1);
    cdag_settings s;
    ck_assert_int_eq(cdag__settings_read(&s), CDAG_ERR_ARG);
    char want[64];
    snprintf(want, sizeof want, "%s=%s: expected", bad[i][0], bad[i][1]);
    ck_assert_msg(strstr(cdag_error_message(), want), "message '%s' lacks '%s'", cdag_error_message(), want);
  }
  clear_all();
}
END_TEST

/* ---- the table is the struct ---- */

/* The whole file at path (NUL-terminated; freed by the caller). */
static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

/* Removes C comments (/ * ... * /) and Fortran ones (! to the end of the line) in place. */
static void strip_comments(char *s, int fortran) {
  char *w = s;
  for (char *r = s; *r;) {
    if (!fortran && r[0] == '/' && r[1] == '*') {
      char *e = strstr(r + 2, "*/");
      r = e ? e + 2 : r + strlen(r);
    } else if (fortran && *r == '!') {
      while (*r && *r != '\n') r++;
    } else {
      *w++ = *r++;
    }
  }
  *w = '\0';
}

/* The fields of the block between begin and end of a source, as "type name" pairs in order:
   C declarations "type a, b;" or Fortran "type :: a, b" lines. */
static int fields_of(const char *path, const char *begin, const char *end, int fortran, char names[][64],
                     char types[][64], int max) {
  char *text = slurp(path);
  char *a = strstr(text, begin);
  ck_assert_msg(a != NULL, "%s: no '%s'", path, begin);
  a += strlen(begin);
  char *b = strstr(a, end);
  ck_assert_msg(b != NULL, "%s: no '%s'", path, end);
  *b = '\0';
  strip_comments(a, fortran);
  int n = 0;
  for (char *decl = strtok(a, fortran ? "\n" : ";"); decl; decl = strtok(NULL, fortran ? "\n" : ";")) {
    while (isspace((unsigned char)*decl)) decl++;
    if (!*decl) continue;
    char type[64] = "", *list;
    if (fortran) {
      char *sep = strstr(decl, "::");
      ck_assert_msg(sep != NULL, "%s: '%s' is not a declaration", path, decl);
      snprintf(type, sizeof type, "%.*s", (int)(sep - decl), decl);
      list = sep + 2;
    } else {
      int k = 0;
      while (decl[k] && !isspace((unsigned char)decl[k])) k++;
      snprintf(type, sizeof type, "%.*s", k, decl);
      list = decl + k;
    }
    for (char *t = type + strlen(type); t > type && isspace((unsigned char)t[-1]);) *--t = '\0';
    for (char *name = list; *name;) {
      while (*name == ',' || isspace((unsigned char)*name)) name++;
      int k = 0;
      while (name[k] && name[k] != ',' && !isspace((unsigned char)name[k])) k++;
      if (!k) break;
      ck_assert_int_lt(n, max);
      snprintf(names[n], 64, "%.*s", k, name);
      snprintf(types[n], 64, "%s", type);
      n++;
      name += k;
    }
  }
  free(text);
  return n;
}

/* cdag.h's cdag_options and module cdag's type hold the table's fields, in its order, with
   matching kinds: nothing added on one side only. */
START_TEST(table_matches_header_and_fortran) {
  char names[64][64], types[64][64];
  int n = fields_of(CDAG_SOURCE_DIR "/include/cdag.h", "typedef struct {\n  size_t struct_size;", "} cdag_options;",
                    0, names, types, 64);
  ck_assert_int_eq(n, CDAG_NOPTS);
  for (int id = 0; id < CDAG_NOPTS; id++) {
    const cdag_opt_row *r = &cdag__opt_rows[id];
    ck_assert_str_eq(names[id], r->field);
    int dbl = r->kind == CDAG_OPT_FRAC || r->kind == CDAG_OPT_SEC;
    const char *want = dbl ? "double" : r->kind == CDAG_OPT_KERNEL ? "cdag_kernel_policy" : "int";
    ck_assert_str_eq(types[id], want);
  }
  n = fields_of(CDAG_SOURCE_DIR "/fortran/cdag.f90", "type, bind(c), public :: cdag_options", "end type cdag_options",
                1, names, types, 64);
  ck_assert_int_eq(n, CDAG_NOPTS + 1);
  ck_assert_str_eq(names[0], "struct_size");
  ck_assert_str_eq(types[0], "integer(c_size_t)");
  for (int id = 0; id < CDAG_NOPTS; id++) {
    const cdag_opt_row *r = &cdag__opt_rows[id];
    ck_assert_str_eq(names[id + 1], r->field);
    int dbl = r->kind == CDAG_OPT_FRAC || r->kind == CDAG_OPT_SEC;
    ck_assert_str_eq(types[id + 1], dbl ? "real(c_double)" : "integer(c_int)");
  }
  /* the rows' offsets and sizes are the struct's, in order, and cover it */
  size_t end = sizeof(size_t);
  for (int id = 0; id < CDAG_NOPTS; id++) {
    const cdag_opt_row *r = &cdag__opt_rows[id];
    ck_assert_uint_ge(r->offset, end);
    ck_assert_uint_lt(r->offset - end, r->size);   /* at most alignment padding between */
    end = r->offset + r->size;
  }
  ck_assert_uint_eq(end, cdag__options_known_size());
  ck_assert_uint_lt(sizeof(cdag_options) - end, sizeof(double));
}
END_TEST

static void expect_defaults(const cdag_options *o) {
  ck_assert_int_eq(o->detect, 1);
  ck_assert(o->density == 1.0);
  ck_assert_int_eq(o->exact_float, 0);
  ck_assert_int_eq(o->root, 0);
  ck_assert_int_eq(o->min_group, 4);
  ck_assert_int_eq(o->kernel, CDAG_KERNEL_AUTO);
  ck_assert(o->alpha == 0 && o->beta == 0 && o->overhead == 0 && o->gamma == 0);
  ck_assert_int_eq(o->blocks, 0);
  ck_assert_int_eq(o->measure, 0);
}

START_TEST(init_sets_size_and_defaults) {
  cdag_options o;
  memset(&o, 0x5a, sizeof o);
  cdag_options_init(&o);
  ck_assert_uint_eq(o.struct_size, sizeof o);
  expect_defaults(&o);
  memset(&o, 0x5a, sizeof o);
  (cdag_options_init)(&o);   /* the function, for callers that cannot use the macro */
  ck_assert_uint_eq(o.struct_size, sizeof o);
  expect_defaults(&o);
  /* an older program's smaller struct: only its bytes are written */
  unsigned char buf[sizeof(cdag_options) + 16];
  memset(buf, 0x5a, sizeof buf);
  size_t old = offsetof(cdag_options, kernel);
  cdag_options_init_size((cdag_options *)buf, old);
  ck_assert_uint_eq(((cdag_options *)buf)->struct_size, old);
  ck_assert_int_eq(((cdag_options *)buf)->min_group, 4);
  for (size_t b = old; b < sizeof buf; b++) ck_assert_uint_eq(buf[b], 0x5a);
  /* a newer program's larger struct: the bytes beyond ours are zeroed */
  memset(buf, 0x5a, sizeof buf);
  cdag_options_init_size((cdag_options *)buf, sizeof buf);
  ck_assert_uint_eq(((cdag_options *)buf)->struct_size, sizeof buf);
  for (size_t b = sizeof(cdag_options); b < sizeof buf; b++) ck_assert_uint_eq(buf[b], 0);
  cdag_options taken;
  ck_assert_int_eq(cdag__options_take((cdag_options *)buf, &taken, NULL), CDAG_OK);
  expect_defaults(&taken);
  buf[sizeof buf - 1] = 1;   /* a field this library does not know, set */
  ck_assert_int_eq(cdag__options_take((cdag_options *)buf, &taken, "rank 1: "), CDAG_ERR_ARG);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "rank 1: options.struct_size"));
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "newer cdag.h"));
  /* a struct never initialised: its struct_size is garbage, read no further than the struct */
  cdag_options junk;
  memset(&junk, 0x5a, sizeof junk);
  ck_assert_int_eq(cdag__options_take(&junk, &taken, NULL), CDAG_ERR_ARG);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "is not the size of a cdag_options: call cdag_options_init first"));
}
END_TEST

/* A 4-rank ring allgather: found with the defaults. */
static cdag_graph *ring4(void) {
  cdag_graph *g;
  CK_OK(cdag_graph_create_global(4, &g));
  for (int r = 0; r < 4; r++)
    for (int q = 0; q < 4; q++)
      if (q != r) {
        CK_OK(cdag_rank_send(g, r, 0x1000 + 8 * (uint64_t)r, 8, q, 0, NULL));
        CK_OK(cdag_rank_recv(g, q, 0x1000 + 8 * (uint64_t)r, 8, r, 0, NULL));
      }
  return g;
}

static int64_t ncolls(const cdag_options *o, int expect_rc) {
  cdag_graph *g = ring4();
  cdag_plan *p = NULL;
  ck_assert_int_eq(cdag_analyze(g, o, &p), expect_rc);
  int64_t n = -1;
  if (p) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cdag_plan_report(p, f, 0);
    fclose(f);
    n = strstr(text, "allgather") != NULL;
    free(text);
  }
  cdag_plan_free(&p);
  cdag_graph_free(&g);
  return n;
}

START_TEST(zeroed_struct_means_defaults) {
  cdag_options z;
  memset(&z, 0, sizeof z);
  cdag_options t;
  ck_assert_int_eq(cdag__options_take(&z, &t, NULL), CDAG_OK);
  expect_defaults(&t);
  ck_assert_int_eq(ncolls(&z, CDAG_OK), 1);     /* detect = 1, density 1, min_group 4 */
  ck_assert_int_eq(ncolls(NULL, CDAG_OK), 1);
  z.min_group = 3;   /* a field set, but the struct was never initialised */
  ck_assert_int_eq(ncolls(&z, CDAG_ERR_ARG), -1);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "options.struct_size 0 with options.min_group set"));
}
END_TEST

START_TEST(older_size_gets_defaults_for_newer_fields) {
  cdag_options o;
  cdag_options_init(&o);
  o.detect = 0;                          /* inside the old size: read */
  o.struct_size = offsetof(cdag_options, kernel);
  o.kernel = (cdag_kernel_policy)77;     /* beyond it: never read (garbage in an old program) */
  o.alpha = -5;
  o.blocks = -1;
  cdag_options t;
  ck_assert_int_eq(cdag__options_take(&o, &t, NULL), CDAG_OK);
  ck_assert_int_eq(t.detect, 0);
  ck_assert_int_eq(t.kernel, CDAG_KERNEL_AUTO);
  ck_assert(t.alpha == 0);
  ck_assert_int_eq(t.blocks, 0);
  ck_assert_int_eq(ncolls(&o, CDAG_OK), 0);   /* detect 0 taken: nothing rewritten */
  o.detect = 1;
  ck_assert_int_eq(ncolls(&o, CDAG_OK), 1);
  o.struct_size = 3;   /* not even struct_size fits */
  ck_assert_int_eq(ncolls(&o, CDAG_ERR_ARG), -1);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "options.struct_size 3: expected 0 or at least"));
}
END_TEST

/* Every field: a bad value is CDAG_ERR_ARG naming the field and the value, once. */
START_TEST(each_bad_option_is_named) {
  for (int id = 0; id < CDAG_NOPTS; id++) {
    const cdag_opt_row *r = &cdag__opt_rows[id];
    double bad = 0;
    switch (r->kind) {
    case CDAG_OPT_FLAG: bad = 2; break;
    case CDAG_OPT_INT: bad = r->lo - 1; break;
    case CDAG_OPT_RANK: bad = 4; break;   /* with 4 ranks */
    case CDAG_OPT_INT0: bad = -1; break;
    case CDAG_OPT_FRAC: bad = 1.5; break;
    case CDAG_OPT_SEC: bad = 2000; break;
    case CDAG_OPT_KERNEL: bad = 7; break;
    }
    cdag_options o;
    cdag_options_init(&o);
    ck_assert_int_eq(pipeline_check_options(&o, 4, 2), CDAG_OK);
    cdag__opt_set(&o, id, bad);
    ck_assert_int_eq(pipeline_check_options(&o, 4, 2), CDAG_ERR_ARG);
    char want[96];
    snprintf(want, sizeof want, "rank 2: options.%s %g: expected ", r->field, bad);
    ck_assert_msg(strstr(cdag_error_message(), want), "'%s' lacks '%s'", cdag_error_message(), want);
    ck_assert_int_eq(ncolls(&o, r->kind == CDAG_OPT_RANK ? CDAG_OK : CDAG_ERR_ARG),   /* root: offline, ignored */
                     r->kind == CDAG_OPT_RANK ? 1 : -1);
  }
}
END_TEST

/* The flags of the `cdag` tool parse with the API's ranges: what one accepts, so does the
   other (the tool refused --min-group=1, which the API took). */
START_TEST(command_line_and_api_agree) {
  static const struct { const char *flag, *text; int ok; } cases[] = {
      {"min-group", "1", 1},  {"min-group", "0", 0},   {"min-group", "2147483647", 1}, {"min-group", "x", 0},
      {"density", "1", 1},    {"density", "0", 0},     {"density", "0.25", 1},         {"density", "1.5", 0},
      {"kernel", "cdag", 1},  {"kernel", "fast", 0},   {"alpha", "0", 1},              {"alpha", "-1", 0},
      {"blocks", "0", 1},     {"blocks", "1073741824", 1}, {"blocks", "1073741825", 0}, {"detect", "0", 1},
      {"detect", "2", 0},     {"exact-float", "1", 1}, {"gamma", "1001", 0}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int id = -1;
    for (int k = 0; k < CDAG_NOPTS; k++)
      if (cdag__opt_rows[k].flag && !strcmp(cdag__opt_rows[k].flag, cases[i].flag)) id = k;
    ck_assert_int_ge(id, 0);
    cdag_options o;
    cdag_options_init(&o);
    char label[64];
    snprintf(label, sizeof label, "--%s", cases[i].flag);
    int rc = cdag__opt_parse(id, cases[i].text, 0, label, &o);
    ck_assert_msg((rc == CDAG_OK) == cases[i].ok, "--%s=%s: %s", cases[i].flag, cases[i].text, cdag_error_message());
    if (rc) {
      char want[96];
      snprintf(want, sizeof want, "--%s=%s: expected ", cases[i].flag, cases[i].text);
      ck_assert_ptr_nonnull(strstr(cdag_error_message(), want));
    } else {
      ck_assert_int_eq(pipeline_check_options(&o, 4, -1), CDAG_OK);   /* the API takes it too */
    }
  }
}
END_TEST

/* A field that differs from its default wins over its variable; a field at its default takes it. */
START_TEST(explicit_fields_win_over_environment) {
  clear_all();
  setenv("CDAG_DETECT", "0", 1);
  setenv("CDAG_KERNEL", "mpi", 1);
  setenv("CDAG_ALPHA", "5e-6", 1);
  setenv("CDAG_BLOCKS", "3", 1);
  cdag_settings s;
  ck_assert_int_eq(cdag__settings_read(&s), CDAG_OK);
  cdag_options o;
  cdag_options_init(&o);
  cdag__options_env(&o, &s);
  ck_assert_int_eq(o.detect, 0);
  ck_assert_int_eq(o.kernel, CDAG_KERNEL_MPI);
  ck_assert(o.alpha == 5e-6);
  ck_assert_int_eq(o.blocks, 3);
  cdag_options_init(&o);
  o.kernel = CDAG_KERNEL_CDAG;
  o.alpha = 2e-6;
  o.blocks = 7;
  cdag__options_env(&o, &s);
  ck_assert_int_eq(o.kernel, CDAG_KERNEL_CDAG);
  ck_assert(o.alpha == 2e-6);
  ck_assert_int_eq(o.blocks, 7);
  ck_assert_int_eq(o.detect, 0);   /* left at its default: the variable's */
  pipeline_tune t;
  ck_assert_int_eq(pipeline_tuning(&o, NULL, &t), CDAG_OK);
  ck_assert_int_eq(t.policy, KERN_POLICY_CDAG);
  ck_assert(t.model.alpha == 2e-6);
  ck_assert_int_eq(t.model.blocks, 7);
  clear_all();
}
END_TEST

START_TEST(version_macros_and_function) {
  char want[32];
  snprintf(want, sizeof want, "%d.%d.%d", CDAG_VERSION_MAJOR, CDAG_VERSION_MINOR, CDAG_VERSION_PATCH);
  ck_assert_str_eq(CDAG_VERSION, want);
  ck_assert_str_eq(cdag_version(), CDAG_VERSION);
  ck_assert_int_eq(cdag_version_number(), CDAG_VERSION_NUMBER);
  ck_assert_int_eq(CDAG_VERSION_NUMBER, CDAG_VERSION_MAJOR * 10000 + CDAG_VERSION_MINOR * 100 + CDAG_VERSION_PATCH);
  /* the project's version (CMakeLists.txt) is the header's */
  char *cm = slurp(CDAG_SOURCE_DIR "/CMakeLists.txt");
  char proj[64];
  snprintf(proj, sizeof proj, "project(cdag VERSION %s ", CDAG_VERSION);
  ck_assert_msg(strstr(cm, proj) != NULL, "CMakeLists.txt lacks '%s'", proj);
  free(cm);
}
END_TEST

Suite *cdag_settings_suite(void) {
  Suite *s = suite_create("settings");
  TCase *t = tcase_create("env");
  tcase_add_test(t, unset_and_empty_mean_defaults);
  tcase_add_test(t, good_values_are_read);
  tcase_add_test(t, prefixes_and_many_variables);
  tcase_add_test(t, each_bad_value_is_named);
  suite_add_tcase(s, t);
  TCase *o = tcase_create("options");
  tcase_add_test(o, table_matches_header_and_fortran);
  tcase_add_test(o, init_sets_size_and_defaults);
  tcase_add_test(o, zeroed_struct_means_defaults);
  tcase_add_test(o, older_size_gets_defaults_for_newer_fields);
  tcase_add_test(o, each_bad_option_is_named);
  tcase_add_test(o, command_line_and_api_agree);
  tcase_add_test(o, explicit_fields_win_over_environment);
  tcase_add_test(o, version_macros_and_function);
  suite_add_tcase(s, o);
  return s;
}

CDAG_CHECK_MAIN(cdag_settings_suite)
