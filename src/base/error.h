/* cdag — the one error path (shared by every stage).
 *
 * Every internal function that can fail returns CDAG_OK or a CDAG_ERR_* code and, on failure,
 * records a message with cdag__error(); the public cdag_error_message() returns it. Messages
 * name rank, operation and file line where those apply ("rank 3 op 17 (line 42): ..."). The
 * message buffer is per thread. No assert() on user input: assert() is for invariants only. */
#ifndef CDAG_BASE_ERROR_H
#define CDAG_BASE_ERROR_H

#include "cdag.h"

/* Records the message (printf format) for the calling thread and returns code. */
int cdag__error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Clears the thread's message (a successful public call may leave an old message; tools
 * that print messages call this first). */
void cdag__error_clear(void);
/* The thread's current message, "" if none. */
const char *cdag__error_text(void);
/* code, its message prefixed "rank R: fn: " unless it names a rank already (an API call on a
   distributed graph whose message came from a layer that serves global graphs too). */
int cdag__error_named(int code, int rank, const char *fn);

/* Out of memory: record a message naming what was being allocated. */
#define CDAG_NOMEM(what) cdag__error(CDAG_ERR_NOMEM, "out of memory (%s)", (what))

/* Evaluate a call; on failure jump to the label `fail` with rc set. */
#define CDAG_CHECK(call)          \
  do {                            \
    rc = (call);                  \
    if (rc != CDAG_OK) goto fail; \
  } while (0)

/* Evaluate a call; on failure return its code. */
#define CDAG_TRY(call)                \
  do {                                \
    int try_rc_ = (call);             \
    if (try_rc_ != CDAG_OK) return try_rc_; \
  } while (0)

#endif
