/* cdag — error codes, their names and the per-thread last-error message.
 *
 * One table (CDAG_ERROR_MAP) gives the text of every code of cdag.h; cdag_strerror() reads it
 * and answers "unknown error code" for anything else. The message is formatted into a
 * thread-local buffer so different handles can be used from different threads. */
#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define CDAG_ERROR_MAP(X)                                                             \
  X(CDAG_OK, "success")                                                               \
  X(CDAG_ERR_ARG, "bad argument")                                                     \
  X(CDAG_ERR_NOMEM, "out of memory")                                                  \
  X(CDAG_ERR_UNMATCHED, "unmatched operation: a send or receive has no partner")      \
  X(CDAG_ERR_CYCLE, "dependency cycle: the graph would deadlock")                     \
  X(CDAG_ERR_TRUNCATE, "truncation: a receive is smaller than the send it matches")   \
  X(CDAG_ERR_FORMAT, "malformed graph file")                                          \
  X(CDAG_ERR_IO, "input/output error")                                                \
  X(CDAG_ERR_MPI, "MPI error")                                                        \
  X(CDAG_ERR_STATE, "call not allowed in this state")                                 \
  X(CDAG_ERR_UNSUPPORTED, "unsupported")                                              \
  X(CDAG_ERR_MISMATCH, "verification failed: the plan and the graph leave different bytes") \
  X(CDAG_ERR_PLAN, "inconsistent plan (an internal error)")                          \
  X(CDAG_ERR_RACE, "race: one-sided accesses conflict inside one epoch")

static _Thread_local char err_text[1024];

const char *cdag_strerror(int code) {
  switch (code) {
#define X(c, s) \
  case c:       \
    return s;
    CDAG_ERROR_MAP(X)
#undef X
  }
  return "unknown error code";   /* static: two results never share a buffer */
}

const char *cdag_error_message(void) { return err_text; }
const char *cdag__error_text(void) { return err_text; }
void cdag__error_clear(void) { err_text[0] = '\0'; }

int cdag__error(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err_text, sizeof err_text, fmt, ap);
  va_end(ap);
  return code;
}

int cdag__error_named(int code, int rank, const char *fn) {
  if (code == CDAG_OK || !strncmp(err_text, "rank ", 5)) return code;
  char copy[sizeof err_text];
  snprintf(copy, sizeof copy, "%s", err_text);
  return cdag__error(code, "rank %d: %s: %s", rank, fn, copy);
}
