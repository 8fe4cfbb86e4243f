/* cdag — src/exec/machine.c: machine files, read and written (no MPI).
 *
 * The format and where the file is looked for are in machine.h. Reading is one pass over
 * the lines, each a name and a number; every error names the file and the line, and a
 * file that misses a required parameter is refused, never completed with defaults. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/machine.h"
#include "model/lower.h"

kern_model machine_model_of(const loggp_params *lp) {
  double over = lp->o > lp->g ? lp->o : lp->g;
  return (kern_model){(lp->L + 2 * lp->o) * 1e-6, lp->G * 1e-6, 0, over * 1e-6, lp->copy * 1e-6};
}

machine_params machine_builtin(void) {
  machine_params m = {.kind = MACHINE_BUILTIN, .model = kern_model_builtin()};
  m.lp = loggp_defaults();   /* LogGOPSim's, as `cdag model` without flags: one answer from both */
  snprintf(m.source, sizeof m.source, "built in");
  return m;
}

machine_params machine_measured(const kern_model *km) {
  machine_params m = {.kind = MACHINE_MEASURED, .model = *km};
  m.lp = kern_model_loggp(&m.model);
  snprintf(m.source, sizeof m.source, "measured");
  return m;
}

int machine_path(const cdag_settings *s, char *path, size_t len, int *named) {
  int n = 0;
  *named = s->machine != NULL;
  if (s->machine) n = strcmp(s->machine, "none") ? snprintf(path, len, "%s", s->machine) : snprintf(path, len, "%s", "");
  else if (s->config_home) n = snprintf(path, len, "%s/cdag/machine", s->config_home);
  else if (s->home) n = snprintf(path, len, "%s/.config/cdag/machine", s->home);
  else n = snprintf(path, len, "%s", "");
  if (n < 0 || (size_t)n >= len)
    return cdag__error(CDAG_ERR_ARG, "the machine file's path is longer than %zu bytes", len - 1);
  return CDAG_OK;
}

/* The parameters a file names, in the order the writer writes them. */
enum { P_L, P_o, P_g, P_G, P_O, P_S, P_copy, P_rcopy, P_queue, NPARAMS };
static const char *const names[NPARAMS] = {"L", "o", "g", "G", "O", "S", "copy", "rcopy", "queue"};

static double *field(loggp_params *lp, int k) {
  double *f[NPARAMS] = {&lp->L, &lp->o, &lp->g, &lp->G, &lp->O, NULL, &lp->copy, &lp->rcopy, &lp->queue};
  return f[k];
}

/* A number >= 0 and at most max from word w, or -1. */
static double number(const char *w, double max) {
  char *end;
  errno = 0;
  double v = w ? strtod(w, &end) : -1;
  return w && !*end && !errno && isfinite(v) && v >= 0 && v <= max ? v : -1;
}

/* One "size BYTES PAIR ROUND" line after its name (the table's next row) into lp. */
static int read_size(char *save, const char *path, long no, loggp_params *lp) {
  char *w[4];
  for (int i = 0; i < 4; i++) w[i] = strtok_r(NULL, " \t", &save);
  double b = number(w[0], 0x1p62), pair = number(w[1], 1e9), round = number(w[2], 1e9);
  if (w[3] || b < 1 || b != floor(b) || pair < 0 || round < 0)
    return cdag__error(CDAG_ERR_ARG, "machine file %s line %ld: expected 'size BYTES PAIR ROUND' (a byte count from 1 "
                       "to 2^62, two times from 0 to 1e9 us)", path, no);
  if (lp->ntab == LOGGP_TAB_MAX)
    return cdag__error(CDAG_ERR_ARG, "machine file %s line %ld: more than %d size lines", path, no, LOGGP_TAB_MAX);
  if (lp->ntab && b <= lp->tab_size[lp->ntab - 1])
    return cdag__error(CDAG_ERR_ARG, "machine file %s line %ld: size %.0f after size %.0f (sizes must rise)", path, no, b,
                       lp->tab_size[lp->ntab - 1]);
  lp->tab_size[lp->ntab] = b, lp->tab_pair[lp->ntab] = pair, lp->tab_round[lp->ntab++] = round;
  return CDAG_OK;
}

/* One "name value" line (trailing comment and spaces gone) into lp; seen marks names. */
static int read_param(char *line, const char *path, long no, loggp_params *lp, unsigned *seen) {
  char *save = NULL, *name = strtok_r(line, " \t", &save);
  if (!strcmp(name, "size")) return read_size(save, path, no, lp);
  char *val = strtok_r(NULL, " \t", &save), *extra = strtok_r(NULL, " \t", &save);
  int k = 0;
  while (k < NPARAMS && strcmp(names[k], name)) k++;
  if (k == NPARAMS)
    return cdag__error(CDAG_ERR_ARG, "machine file %s line %ld: unknown parameter '%s' (expected L, o, g, G, O, S, copy, rcopy, queue or size)",
                       path, no, name);
  if (!val || extra) return cdag__error(CDAG_ERR_ARG, "machine file %s line %ld: expected '%s VALUE'", path, no, name);
  if (*seen & 1u << k) return cdag__error(CDAG_ERR_ARG, "machine file %s line %ld: %s given twice", path, no, name);
  double v = number(val, k == P_S ? 0x1p63 : 1e9);
  if (v < 0 || (k == P_S && v != floor(v)))
    return cdag__error(CDAG_ERR_ARG, "machine file %s line %ld: %s '%s': expected %s", path, no, name, val,
                       k == P_S ? "a byte count from 0 to 2^63" : "a number from 0 to 1e9 (us or us/B)");
  if (k == P_S) lp->S = (uint64_t)v;
  else *field(lp, k) = v;
  *seen |= 1u << k;
  return CDAG_OK;
}

int machine_read(FILE *f, const char *path, loggp_params *lp) {
  char line[512];
  long no = 0;
  unsigned seen = 0;
  int header = 0, rc = CDAG_OK;
  *lp = (loggp_params){.S = 65535};
  while (rc == CDAG_OK && fgets(line, sizeof line, f)) {
    no++;
    size_t n = strlen(line);
    if (n == sizeof line - 1 && line[n - 1] != '\n' && !feof(f))
      return cdag__error(CDAG_ERR_ARG, "machine file %s line %ld: longer than %zu bytes", path, no, sizeof line - 2);
    line[strcspn(line, "#\r\n")] = '\0';
    if (line[strspn(line, " \t")] == '\0') continue;
    if (!header) {
      char *save = NULL, *word = strtok_r(line, " \t", &save), *ver = strtok_r(NULL, " \t", &save);
      if (strcmp(word, "cdag-machine") || !ver || strcmp(ver, "1") || strtok_r(NULL, " \t", &save))
        return cdag__error(CDAG_ERR_ARG, "machine file %s line %ld: expected the header 'cdag-machine 1'", path, no);
      header = 1;
      continue;
    }
    rc = read_param(line, path, no, lp, &seen);
  }
  if (rc) return rc;
  if (ferror(f)) return cdag__error(CDAG_ERR_ARG, "machine file %s: read error", path);
  if (!header) return cdag__error(CDAG_ERR_ARG, "machine file %s: empty (expected the header 'cdag-machine 1')", path);
  for (int k = 0; k < NPARAMS; k++)
    if (k != P_O && k != P_S && k != P_rcopy && k != P_queue && !(seen & 1u << k))
      return cdag__error(CDAG_ERR_ARG, "machine file %s: no %s (L, o, g, G and copy are required)", path, names[k]);
  return CDAG_OK;
}

int machine_load(const char *path, int named, machine_params *m) {
  *m = machine_builtin();
  if (!path[0]) return CDAG_OK;
  FILE *f = fopen(path, "r");
  if (!f && errno == ENOENT && !named) return CDAG_OK;   /* no file at the default path: built in */
  if (!f && errno == ENOMEM) return CDAG_NOMEM("opening the machine file");
  if (!f) return cdag__error(CDAG_ERR_ARG, "machine file %s: %s", path, strerror(errno));
  loggp_params lp;
  int rc = machine_read(f, path, &lp);
  fclose(f);
  if (rc) return rc;
  m->kind = MACHINE_FILE;
  m->lp = lp;
  m->model = machine_model_of(&lp);
  snprintf(m->source, sizeof m->source, "machine file %s", path);
  return CDAG_OK;
}

int machine_find(const cdag_settings *s, machine_params *m) {
  char path[4096];
  cdag_settings h = *s;
  cdag__settings_home(&h);   /* the default path's variables, read only now */
  int named, rc = machine_path(&h, path, sizeof path, &named);
  if (rc) {
    *m = machine_builtin();
    return rc;
  }
  return machine_load(path, named, m);
}

int machine_write(FILE *f, const loggp_params *lp, const char *comment) {
  fprintf(f, "cdag-machine 1\n");
  for (const char *c = comment; c && *c;) {
    size_t n = strcspn(c, "\n");
    fprintf(f, "# %.*s\n", (int)n, c);
    c += n + (c[n] == '\n');
  }
  fprintf(f, "L %.6g\no %.6g\ng %.6g\nG %.6g\nO %.6g\nS %llu\ncopy %.6g\n", lp->L, lp->o, lp->g, lp->G, lp->O,
          (unsigned long long)lp->S, lp->copy);
  if (lp->rcopy > 0) fprintf(f, "rcopy %.6g\n", lp->rcopy);
  if (lp->queue > 0) fprintf(f, "queue %.6g\n", lp->queue);
  for (int i = 0; i < lp->ntab; i++)
    fprintf(f, "size %.0f %.6g %.6g\n", lp->tab_size[i], lp->tab_pair[i], lp->tab_round[i]);
  if (fflush(f) || ferror(f)) return cdag__error(CDAG_ERR_ARG, "cannot write the machine file: %s", strerror(errno));
  return CDAG_OK;
}
