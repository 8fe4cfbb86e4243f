/* cdag tests — tests/base/test_settings.c: the CDAG_* variables, read and validated in one place.
 *
 * Each variable's good values are read as documented in settings.h, unset and empty mean
 * "not set", and each bad value is CDAG_ERR_ARG with a message naming the variable and the
 * value. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "cdag.h"
#include "base/settings.h"

static const char *const vars[] = {"CDAG_DETECT", "CDAG_REPORT", "CDAG_KERNEL", "CDAG_MEASURE",
                                   "CDAG_ALPHA", "CDAG_BETA", "CDAG_BLOCKS", "CDAG_REPLAY_CORRUPT"};

static void clear_all(void) {
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) unsetenv(vars[i]);
}

START_TEST(unset_and_empty_mean_defaults) {
  clear_all();
  cdag_settings s;
  ck_assert_int_eq(cdag__settings_read(&s), CDAG_OK);
  ck_assert_int_eq(s.detect, -1);
  ck_assert_ptr_null(s.report);
  ck_assert_int_eq(s.kernel, CDAG_SET_UNSET);
  ck_assert_int_eq(s.measure, -1);
  ck_assert(s.alpha == 0 && s.beta == 0);
  ck_assert_int_eq(s.blocks, 0);
  ck_assert_int_eq(s.replay_corrupt, -1);
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) setenv(vars[i], "", 1);
  ck_assert_int_eq(cdag__settings_read(&s), CDAG_OK);
  ck_assert_int_eq(s.detect, -1);
  ck_assert_int_eq(s.kernel, CDAG_SET_UNSET);
  ck_assert_int_eq(s.measure, -1);
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
  ck_assert_int_eq(s.detect, 0);
  ck_assert_str_eq(s.report, "out.json");
  ck_assert_int_eq(s.kernel, CDAG_SET_KERNEL_CDAG);
  ck_assert_int_eq(s.measure, 1);
  ck_assert_double_eq(s.alpha, 2.5e-6);
  ck_assert_double_eq(s.beta, 1e-10);
  ck_assert_int_eq(s.blocks, 12);
  ck_assert_int_eq(s.replay_corrupt, 0);
  setenv("CDAG_KERNEL", "mpi", 1);
  ck_assert_int_eq(cdag__settings_read(&s), CDAG_OK);
  ck_assert_int_eq(s.kernel, CDAG_SET_KERNEL_MPI);
  setenv("CDAG_KERNEL", "auto", 1);   /* set: it overrides options.kernel */
  ck_assert_int_eq(cdag__settings_read(&s), CDAG_OK);
  ck_assert_int_eq(s.kernel, CDAG_SET_KERNEL_AUTO);
  clear_all();
}
END_TEST

START_TEST(each_bad_value_is_named) {
  static const char *const bad[][2] = {
      {"CDAG_DETECT", "2"},      {"CDAG_DETECT", "no"},  {"CDAG_KERNEL", "fast"},
      {"CDAG_MEASURE", "yes"},   {"CDAG_ALPHA", "abc"},  {"CDAG_ALPHA", "0"},
      {"CDAG_ALPHA", "nan"},     {"CDAG_BETA", "-1e-9"}, {"CDAG_BETA", "1e-9s"},
      {"CDAG_BLOCKS", "0"},      {"CDAG_BLOCKS", "3x"},  {"CDAG_BLOCKS", "99999999999"},
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

Suite *cdag_settings_suite(void) {
  Suite *s = suite_create("settings");
  TCase *t = tcase_create("env");
  tcase_add_test(t, unset_and_empty_mean_defaults);
  tcase_add_test(t, good_values_are_read);
  tcase_add_test(t, each_bad_value_is_named);
  suite_add_tcase(s, t);
  return s;
}

CDAG_CHECK_MAIN(cdag_settings_suite)
