/* cdag — src/base/settings.c: the options table and the CDAG_* environment variables
 * (settings.h): defaults, reading a caller's cdag_options of any size, validation, parsing a
 * value from a variable or a command-line flag. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/settings.h"

_Static_assert(sizeof(cdag_kernel_policy) == sizeof(int), "options.kernel is stored as an int");
_Static_assert(CDAG_NOPTS <= 32, "cdag_settings.opt_set has a bit per option");

#define CDAG_OPT_ROW_(f, k, d, l, h, v, fl) \
  {#f, k, d, l, h, v, fl, offsetof(cdag_options, f), sizeof(((cdag_options *)0)->f)},
const cdag_opt_row cdag__opt_rows[CDAG_NOPTS] = {CDAG_OPTIONS(CDAG_OPT_ROW_)};
#undef CDAG_OPT_ROW_

size_t cdag__options_known_size(void) {
  const cdag_opt_row *last = &cdag__opt_rows[CDAG_NOPTS - 1];
  return last->offset + last->size;
}

static int is_double(cdag_opt_kind k) { return k == CDAG_OPT_FRAC || k == CDAG_OPT_SEC; }

double cdag__opt_get(const cdag_options *o, int id) {
  const cdag_opt_row *r = &cdag__opt_rows[id];
  const char *p = (const char *)o + r->offset;
  if (is_double(r->kind)) {
    double d;
    memcpy(&d, p, sizeof d);
    return d;
  }
  int i;
  memcpy(&i, p, sizeof i);
  return i;
}

void cdag__opt_set(cdag_options *o, int id, double v) {
  const cdag_opt_row *r = &cdag__opt_rows[id];
  char *p = (char *)o + r->offset;
  if (is_double(r->kind)) {
    memcpy(p, &v, sizeof v);
  } else {
    int i = (int)v;
    memcpy(p, &i, sizeof i);
  }
}

void cdag__options_defaults(cdag_options *o) {
  memset(o, 0, sizeof *o);
  o->struct_size = sizeof *o;
  for (int id = 0; id < CDAG_NOPTS; id++) cdag__opt_set(o, id, cdag__opt_rows[id].def);
}

int cdag__options_take(const cdag_options *in, cdag_options *out, const char *who) {
  if (!who) who = "";
  cdag__options_defaults(out);
  if (!in) return CDAG_OK;
  enum { CDAG_OPTIONS_MAX_SIZE = 4096 };   /* cdag_options grows by fields at its end: never near this */
  size_t n = in->struct_size, known = cdag__options_known_size();
  if (n == 0) {   /* a zeroed struct: every field 0 means "all defaults" */
    for (int id = 0; id < CDAG_NOPTS; id++)
      if (cdag__opt_get(in, id) != 0)
        return cdag__error(CDAG_ERR_ARG, "%soptions.struct_size 0 with options.%s set: call cdag_options_init "
                           "first (or zero the whole struct for the defaults)", who, cdag__opt_rows[id].field);
    return CDAG_OK;
  }
  if (n > CDAG_OPTIONS_MAX_SIZE)   /* garbage: the struct was never initialised (and reading n bytes could fault) */
    return cdag__error(CDAG_ERR_ARG, "%soptions.struct_size %zu is not the size of a cdag_options: call "
                       "cdag_options_init first", who, n);
  if (n < cdag__opt_rows[0].offset)
    return cdag__error(CDAG_ERR_ARG, "%soptions.struct_size %zu: expected 0 or at least %zu (cdag_options_init "
                       "sets it)", who, n, cdag__opt_rows[0].offset);
  for (size_t b = sizeof *in; b < n; b++)   /* a newer program's fields: only if all unset */
    if (((const unsigned char *)in)[b])
      return cdag__error(CDAG_ERR_ARG, "%soptions.struct_size %zu: this cdag knows %zu bytes of cdag_options and "
                         "the program set a field beyond them (it was built against a newer cdag.h)", who, n, known);
  for (int id = 0; id < CDAG_NOPTS; id++) {
    const cdag_opt_row *r = &cdag__opt_rows[id];
    if (r->offset + r->size <= n) memcpy((char *)out + r->offset, (const char *)in + r->offset, r->size);
  }
  return CDAG_OK;
}

void cdag__opt_describe(int id, int env, int nprocs, char *buf, size_t len) {
  const cdag_opt_row *r = &cdag__opt_rows[id];
  switch (r->kind) {
  case CDAG_OPT_FLAG: snprintf(buf, len, "0 or 1"); break;
  case CDAG_OPT_INT: snprintf(buf, len, "an integer from %.0f to %.0f", r->lo, r->hi); break;
  case CDAG_OPT_RANK:
    if (nprocs > 0) snprintf(buf, len, "a rank from 0 to %d", nprocs - 1);
    else snprintf(buf, len, "a rank, 0 or more");
    break;
  case CDAG_OPT_INT0:
    snprintf(buf, len, "%san integer from %.0f to %.0f", env ? "" : "0 (not set) or ", r->lo, r->hi);
    break;
  case CDAG_OPT_FRAC: snprintf(buf, len, "a number in (%g, %g]", r->lo, r->hi); break;
  case CDAG_OPT_SEC: snprintf(buf, len, "%sseconds, a number in (%g, %g]", env ? "" : "0 (not set) or ", r->lo, r->hi); break;
  case CDAG_OPT_KERNEL: snprintf(buf, len, env ? "mpi, cdag or auto" : "mpi, cdag or auto (CDAG_KERNEL_MPI, _CDAG, _AUTO)"); break;
  }
}

/* Does v fit field id (env: its variable's range, where 0 means "not set" and is refused)? */
static int fits(int id, double v, int env, int nprocs) {
  const cdag_opt_row *r = &cdag__opt_rows[id];
  int whole = v == floor(v);
  switch (r->kind) {
  case CDAG_OPT_FLAG: return v == 0 || v == 1;
  case CDAG_OPT_INT: return whole && v >= r->lo && v <= r->hi;
  case CDAG_OPT_RANK: return whole && v >= 0 && v <= r->hi && (nprocs < 1 || v < nprocs);
  case CDAG_OPT_INT0: return whole && ((v == 0 && !env) || (v >= r->lo && v <= r->hi));
  case CDAG_OPT_FRAC: return v > r->lo && v <= r->hi;
  case CDAG_OPT_SEC: return (v == 0 && !env) || (v > r->lo && v <= r->hi);
  case CDAG_OPT_KERNEL: return v == CDAG_KERNEL_AUTO || v == CDAG_KERNEL_MPI || v == CDAG_KERNEL_CDAG;
  }
  return 0;
}

int cdag__options_check(const cdag_options *o, int nprocs, const char *who) {
  for (int id = 0; id < CDAG_NOPTS; id++) {
    double v = cdag__opt_get(o, id);
    if (fits(id, v, 0, nprocs)) continue;
    char want[96], got[32];
    cdag__opt_describe(id, 0, nprocs, want, sizeof want);
    snprintf(got, sizeof got, is_double(cdag__opt_rows[id].kind) ? "%g" : "%.0f", v);
    return cdag__error(CDAG_ERR_ARG, "%soptions.%s %s: expected %s", who ? who : "", cdag__opt_rows[id].field, got, want);
  }
  return CDAG_OK;
}

int cdag__opt_parse(int id, const char *text, int env, const char *label, cdag_options *o) {
  const cdag_opt_row *r = &cdag__opt_rows[id];
  double v = NAN;
  char *end = NULL;
  errno = 0;
  if (r->kind == CDAG_OPT_KERNEL) {
    v = !strcmp(text, "auto") ? CDAG_KERNEL_AUTO : !strcmp(text, "mpi") ? CDAG_KERNEL_MPI
      : !strcmp(text, "cdag") ? CDAG_KERNEL_CDAG : NAN;
  } else if (r->kind == CDAG_OPT_FLAG) {
    v = !strcmp(text, "0") ? 0 : !strcmp(text, "1") ? 1 : NAN;
  } else if (is_double(r->kind)) {
    v = strtod(text, &end);
    if (*end || errno || end == text || !isfinite(v)) v = NAN;
  } else {
    long n = strtol(text, &end, 10);
    v = *end || errno || end == text ? NAN : (double)n;
  }
  if (isnan(v) || !fits(id, v, env, 0)) {
    char want[96];
    cdag__opt_describe(id, env, 0, want, sizeof want);
    return cdag__error(CDAG_ERR_ARG, "%s=%s: expected %s", label, text, want);
  }
  cdag__opt_set(o, id, v);
  return CDAG_OK;
}

void cdag__options_env(cdag_options *o, const cdag_settings *s) {
  for (int id = 0; id < CDAG_NOPTS; id++)
    if ((s->opt_set >> id & 1u) && cdag__opt_get(o, id) == cdag__opt_rows[id].def)
      cdag__opt_set(o, id, cdag__opt_get(&s->opt, id));
}

/* ---- the environment ---- */

extern char **environ;

/* The CDAG_* entries of the environment, found in one pass over it (cdag_compile reads the
   settings at every call, so a program that compiles every iteration pays one walk of the
   environment, not one getenv per variable). More than 64 of them: getenv for each. */
typedef struct {
  const char *entry[64];
  int n, overflow;
} env_view;

static void env_scan(env_view *e) {
  e->n = e->overflow = 0;
  for (char **p = environ; p && *p; p++) {
    if ((*p)[0] != 'C' || strncmp(*p, "CDAG_", 5) != 0) continue;
    if (e->n == 64) {
      e->overflow = 1;
      return;
    }
    e->entry[e->n++] = *p;
  }
}

long cdag__settings_env_text(char *buf, size_t cap) {
  env_view e;
  env_scan(&e);
  if (e.overflow) return -1;
  size_t n = 0;
  for (int k = 0; k < e.n; k++) {
    size_t len = strlen(e.entry[k]) + 1;
    if (len > cap - n) return -1;
    memcpy(buf + n, e.entry[k], len);
    n += len;
  }
  return (long)n;
}

/* name's value, as getenv gives it (the first entry of that name); NULL if unset or empty. */
static const char *var(const env_view *e, const char *name) {
  const char *v = NULL;
  if (e->overflow) v = getenv(name);
  size_t n = strlen(name);
  for (int k = 0; !e->overflow && k < e->n && !v; k++)
    if (strncmp(e->entry[k], name, n) == 0 && e->entry[k][n] == '=') v = e->entry[k] + n + 1;
  return v && *v ? v : NULL;
}

/* An integer in [min, max] into *out (untouched when unset). */
static int read_int(const env_view *e, const char *name, long min, long max, const char *expect, int *out) {
  const char *v = var(e, name);
  if (!v) return CDAG_OK;
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (*end || errno || n < min || n > max) return cdag__error(CDAG_ERR_ARG, "%s=%s: expected %s", name, v, expect);
  *out = (int)n;
  return CDAG_OK;
}

int cdag__settings_read(cdag_settings *s) {
  *s = (cdag_settings){.replay_corrupt = -1, .record_memory = -1, .record_min_gap = -1};
  cdag__options_defaults(&s->opt);
  int rc = CDAG_OK;
  env_view e;
  env_scan(&e);
  for (int id = 0; id < CDAG_NOPTS && !rc; id++) {
    const char *name = cdag__opt_rows[id].var, *v = name ? var(&e, name) : NULL;
    if (!v) continue;
    if (!(rc = cdag__opt_parse(id, v, 1, name, &s->opt))) s->opt_set |= 1u << id;
  }
  s->report = var(&e, "CDAG_REPORT");
  if (!rc) rc = read_int(&e, "CDAG_REPLAY_CORRUPT", 0, (1L << 30) - 1, "a rank, 0 to 2^30-1", &s->replay_corrupt);
  s->record_dir = var(&e, "CDAG_RECORD_DIR");
  s->record_lib = var(&e, "CDAG_RECORD_LIB");
  if (!rc) rc = read_int(&e, "CDAG_RECORD_MEMORY", 0, 1L << 30, "MiB, 0 to 2^30", &s->record_memory);
  if (!rc) rc = read_int(&e, "CDAG_RECORD_MIN_GAP", 1, 1L << 30, "microseconds, 1 to 2^30", &s->record_min_gap);
  s->machine = var(&e, "CDAG_MACHINE");
  return rc;
}

void cdag__settings_home(cdag_settings *s) {
  const char *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");
  s->config_home = x && *x ? x : NULL;
  s->home = h && *h ? h : NULL;
}
