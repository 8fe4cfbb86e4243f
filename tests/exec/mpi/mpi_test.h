/* cdag tests — tests/exec/mpi/mpi_test.h: the checks every MPI test program uses.
 *
 * A failed check prints where it is (file:line), the rank, the expression and, for a
 * comparison, both values (a cdag return code by name, and cdag's last message), counts a
 * failure and lets the program go on: the other ranks are inside the same collective calls,
 * so one rank that stopped would leave them waiting. mt_finish() sums the failures over
 * every rank, and every rank exits 1 if any rank failed: all ranks fail together. A check
 * after which a rank cannot go on (MT_REQUIRE) calls MPI_Abort, which ends every rank at
 * once, so nothing hangs either way. The failure count is atomic: threads may check too. */
#ifndef CDAG_TESTS_MPI_TEST_H
#define CDAG_TESTS_MPI_TEST_H

#include <mpi.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cdag.h"

static atomic_int mt_failures;   /* failed checks on this rank */

static inline int mt_rank(void) {
  int init = 0, fin = 0, r = -1;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (init && !fin) MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

/* Prints one failure as a single line (threads may fail at once): where, which rank, what
   (expr; NULL: no expression) and the details printf(fmt, ...) gives; counts it. */
static inline void mt_failf(const char *file, int line, const char *expr, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline void mt_failf(const char *file, int line, const char *expr, const char *fmt, ...) {
  char msg[2048];
  int n = expr ? snprintf(msg, sizeof msg, "%s:%d: rank %d: check failed: %s", file, line, mt_rank(), expr)
               : snprintf(msg, sizeof msg, "%s:%d: rank %d: failed", file, line, mt_rank());
  if (n > 0 && (size_t)n < sizeof msg) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);
  }
  atomic_fetch_add(&mt_failures, 1);
  fprintf(stderr, "%s\n", msg);
}

static inline void mt_fail(const char *file, int line, const char *expr) { mt_failf(file, line, expr, "%s", ""); }

static inline void mt_fail_int(const char *file, int line, const char *expr, intmax_t a, intmax_t b) {
  mt_failf(file, line, expr, " (%jd vs %jd)", a, b);
}

static inline void mt_fail_dbl(const char *file, int line, const char *expr, double a, double b) {
  mt_failf(file, line, expr, " (%.17g vs %.17g)", a, b);
}

static inline void mt_fail_rc(const char *file, int line, const char *expr, int got, int want) {
  mt_failf(file, line, expr, ": returned %d (%s), expected %d (%s); cdag's last message: %s", got, cdag_strerror(got),
           want, cdag_strerror(want), cdag_error_message());
}

/* First differing byte of two n-byte regions, as offset and both values. */
static inline void mt_fail_mem(const char *file, int line, const char *expr, const void *a, const void *b, size_t n) {
  const unsigned char *x = a, *y = b;
  size_t k = 0;
  while (k < n && x[k] == y[k]) k++;
  if (k < n) mt_failf(file, line, expr, " (first difference at byte %zu of %zu: 0x%02x vs 0x%02x)", k, n, x[k], y[k]);
  else mt_fail(file, line, expr);
}

/* cond holds. */
#define MT_EXPECT(cond) \
  do { if (!(cond)) mt_fail(__FILE__, __LINE__, #cond); } while (0)

/* cond holds; otherwise also prints printf(...) as the explanation. */
#define MT_EXPECT_MSG(cond, ...) \
  do { if (!(cond)) mt_failf(__FILE__, __LINE__, #cond, ": " __VA_ARGS__); } while (0)

/* Integers a OP b (each evaluated once), e.g. MT_EXPECT_INT(np, ==, P). */
#define MT_EXPECT_INT(a, op, b)                                                  \
  do {                                                                           \
    intmax_t mt_a_ = (intmax_t)(a), mt_b_ = (intmax_t)(b);                       \
    if (!(mt_a_ op mt_b_)) mt_fail_int(__FILE__, __LINE__, #a " " #op " (" #b ")", mt_a_, mt_b_); \
  } while (0)

/* Doubles a OP b (each evaluated once). */
#define MT_EXPECT_DBL(a, op, b)                                                  \
  do {                                                                           \
    double mt_a_ = (a), mt_b_ = (b);                                             \
    if (!(mt_a_ op mt_b_)) mt_fail_dbl(__FILE__, __LINE__, #a " " #op " (" #b ")", mt_a_, mt_b_); \
  } while (0)

/* A cdag call returns want (a CDAG_* code). */
#define MT_EXPECT_RC(call, want)                                                 \
  do {                                                                           \
    int mt_got_ = (call), mt_want_ = (want);                                     \
    if (mt_got_ != mt_want_) mt_fail_rc(__FILE__, __LINE__, #call, mt_got_, mt_want_); \
  } while (0)

/* A cdag call succeeds. */
#define MT_OK(call) MT_EXPECT_RC(call, CDAG_OK)

/* The string s (NULL counts as not containing) contains sub. */
#define MT_EXPECT_STR(s, sub)                                                    \
  do {                                                                           \
    const char *mt_s_ = (s), *mt_sub_ = (sub);                                   \
    if (!mt_s_ || !strstr(mt_s_, mt_sub_))                                       \
      mt_failf(__FILE__, __LINE__, #s " contains " #sub, " (\"%s\" lacks \"%s\")", mt_s_ ? mt_s_ : "(null)", mt_sub_); \
  } while (0)

/* n bytes at a equal n bytes at b. */
#define MT_EXPECT_MEM(a, b, n)                                                   \
  do {                                                                           \
    const void *mt_pa_ = (a), *mt_pb_ = (b);                                     \
    size_t mt_n_ = (n);                                                          \
    if (memcmp(mt_pa_, mt_pb_, mt_n_))                                           \
      mt_fail_mem(__FILE__, __LINE__, "memcmp(" #a ", " #b ", " #n ") == 0", mt_pa_, mt_pb_, mt_n_); \
  } while (0)

/* cond holds, or this rank cannot go on: every rank ends now (MPI_Abort), none hangs. */
#define MT_REQUIRE(cond)                                                         \
  do {                                                                           \
    if (!(cond)) {                                                               \
      mt_fail(__FILE__, __LINE__, #cond);                                        \
      MPI_Abort(MPI_COMM_WORLD, 1);                                              \
    }                                                                            \
  } while (0)

/* A failure the program's own logic found (a loop over bytes, a helper that checks for its
   caller); printf(...) says what. */
#define MT_FAIL(...) mt_failf(__FILE__, __LINE__, NULL, ": " __VA_ARGS__)

/* The agreed end: every rank's failures summed; rank 0 prints "NAME on P ranks: OK" or
   FAILED; MPI_Finalize; the exit code for main (1 on every rank if any rank failed). */
static inline int mt_finish(const char *name) {
  int mine = atomic_load(&mt_failures), all = 0, r = 0, p = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (r == 0) printf("%s on %d ranks: %s\n", name, p, all ? "FAILED" : "OK");
  MPI_Finalize();
  return all ? 1 : 0;
}

#endif
