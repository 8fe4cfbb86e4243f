/* cdag — src/base/settings.c: reading the CDAG_* environment variables (settings.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/settings.h"

static const char *var(const char *name) {
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

static int bad(const char *name, const char *value, const char *expected) {
  return cdag__error(CDAG_ERR_ARG, "%s=%s: expected %s", name, value, expected);
}

/* 0 or 1 into *out (untouched when unset). */
static int read_flag(const char *name, int *out) {
  const char *v = var(name);
  if (!v) return CDAG_OK;
  if (strcmp(v, "0") && strcmp(v, "1")) return bad(name, v, "0 or 1");
  *out = v[0] == '1';
  return CDAG_OK;
}

static int read_seconds(const char *name, double *out) {
  const char *v = var(name);
  if (!v) return CDAG_OK;
  char *end;
  errno = 0;
  double d = strtod(v, &end);
  if (*end || errno || !isfinite(d) || d <= 0 || d > 1e3) return bad(name, v, "seconds, a number in (0, 1000]");
  *out = d;
  return CDAG_OK;
}

/* An integer in [min, max] into *out (untouched when unset). */
static int read_int(const char *name, long min, long max, const char *expected, int *out) {
  const char *v = var(name);
  if (!v) return CDAG_OK;
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (*end || errno || n < min || n > max) return bad(name, v, expected);
  *out = (int)n;
  return CDAG_OK;
}

static int read_kernel(cdag_set_kernel *out) {
  const char *v = var("CDAG_KERNEL");
  if (!v) return CDAG_OK;
  if (!strcmp(v, "auto")) *out = CDAG_SET_KERNEL_AUTO;
  else if (!strcmp(v, "mpi")) *out = CDAG_SET_KERNEL_MPI;
  else if (!strcmp(v, "cdag")) *out = CDAG_SET_KERNEL_CDAG;
  else return bad("CDAG_KERNEL", v, "mpi, cdag or auto");
  return CDAG_OK;
}

int cdag__settings_read(cdag_settings *s) {
  *s = (cdag_settings){.detect = -1, .kernel = CDAG_SET_UNSET, .measure = -1, .replay_corrupt = -1,
                       .record_memory = -1};
  s->report = var("CDAG_REPORT");
  int rc = read_flag("CDAG_DETECT", &s->detect);
  if (!rc) rc = read_kernel(&s->kernel);
  if (!rc) rc = read_flag("CDAG_MEASURE", &s->measure);
  if (!rc) rc = read_seconds("CDAG_ALPHA", &s->alpha);
  if (!rc) rc = read_seconds("CDAG_BETA", &s->beta);
  if (!rc) rc = read_seconds("CDAG_OVERHEAD", &s->overhead);
  if (!rc) rc = read_seconds("CDAG_GAMMA", &s->gamma);
  if (!rc) rc = read_int("CDAG_BLOCKS", 1, 1L << 30, "an integer from 1 to 2^30", &s->blocks);
  if (!rc) rc = read_int("CDAG_REPLAY_CORRUPT", 0, (1L << 30) - 1, "a rank, 0 to 2^30-1", &s->replay_corrupt);
  s->record_dir = var("CDAG_RECORD_DIR");
  s->record_lib = var("CDAG_RECORD_LIB");
  if (!rc) rc = read_int("CDAG_RECORD_MEMORY", 0, 1L << 30, "MiB, 0 to 2^30", &s->record_memory);
  return rc;
}
