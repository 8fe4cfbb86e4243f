/* cdag — src/record/expand.c: a recording's index read back, and its flat form written.
 *
 * index.json's "sequence" (distinct.c) says which distinct phase each stretch of the run
 * repeats and what each repeat changes. rec_index_read gives the sequence to the tools
 * (`cdag analyze DIR`); rec_expand writes the flat recording, one file per phase of the
 * run, byte for byte what `cdag record --merge --flat` writes. The index is read by a small
 * JSON reader (objects, arrays, strings, integers, true, false, null: what the merger
 * writes; numbers with a fraction or exponent are read but not used). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/error.h"
#include "format/format.h"
#include "record/record.h"

/* ---- JSON ---- */

enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };
typedef struct {
  int type;
  int64_t num; int integer;   /* J_NUM: its value when an integer */
  const char *s; size_t slen; /* J_STR: raw, escapes kept; an object member's name too */
  int64_t child, next;        /* first child, next sibling (-1 none) */
  const char *key; size_t klen;
} jnode;

typedef struct {
  const char *p, *end;
  jnode *n; int64_t nn, cap;
  int depth;
} jparser;

static void skip_ws(jparser *j) {
  while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r')) j->p++;
}

static int jstring(jparser *j, const char **s, size_t *len) {
  if (j->p >= j->end || *j->p != '"') return -1;
  const char *a = ++j->p;
  while (j->p < j->end && *j->p != '"') j->p += *j->p == '\\' ? 2 : 1;
  if (j->p >= j->end) return -1;
  *s = a;
  *len = (size_t)(j->p++ - a);
  return 0;
}

/* Parses one value; its node's index, or -1 (malformed, or out of memory with *nomem). */
static int64_t jvalue(jparser *j, int *nomem) {
  skip_ws(j);
  if (j->p >= j->end || ++j->depth > 64) return -1;
  if (base_grow((void **)&j->n, j->nn, &j->cap, 1, sizeof *j->n, "index.json")) return *nomem = 1, -1;
  int64_t me = j->nn++;
  j->n[me] = (jnode){.child = -1, .next = -1};
  char c = *j->p;
  if (c == '{' || c == '[') {
    j->n[me].type = c == '{' ? J_OBJ : J_ARR;
    j->p++;
    int64_t last = -1;
    for (skip_ws(j); j->p < j->end && *j->p != (c == '{' ? '}' : ']');) {
      const char *k = NULL;
      size_t kl = 0;
      if (c == '{') {
        if (jstring(j, &k, &kl)) return -1;
        skip_ws(j);
        if (j->p >= j->end || *j->p++ != ':') return -1;
      }
      int64_t v = jvalue(j, nomem);
      if (v < 0) return -1;
      j->n[v].key = k, j->n[v].klen = kl;
      if (last < 0) j->n[me].child = v;
      else j->n[last].next = v;
      last = v;
      skip_ws(j);
      if (j->p < j->end && *j->p == ',') j->p++, skip_ws(j);
    }
    if (j->p >= j->end) return -1;
    j->p++;
  } else if (c == '"') {
    j->n[me].type = J_STR;
    if (jstring(j, &j->n[me].s, &j->n[me].slen)) return -1;
  } else if (!strncmp(j->p, "true", 4) || !strncmp(j->p, "false", 5) || !strncmp(j->p, "null", 4)) {
    j->n[me].type = *j->p == 'n' ? J_NULL : J_BOOL;
    j->n[me].num = *j->p == 't';
    j->p += *j->p == 'f' ? 5 : 4;
  } else {
    char *e;
    errno = 0;
    long long v = strtoll(j->p, &e, 10);
    if (e == j->p) return -1;
    j->n[me].type = J_NUM;
    j->n[me].integer = !errno && (e >= j->end || (*e != '.' && *e != 'e' && *e != 'E'));
    j->n[me].num = v;
    strtod(j->p, &e);
    j->p = e;
  }
  j->depth--;
  return me;
}

static int64_t jget(const jparser *j, int64_t obj, const char *key) {
  if (obj < 0 || j->n[obj].type != J_OBJ) return -1;
  for (int64_t c = j->n[obj].child; c >= 0; c = j->n[c].next)
    if (j->n[c].klen == strlen(key) && !memcmp(j->n[c].key, key, j->n[c].klen)) return c;
  return -1;
}

static int jint(const jparser *j, int64_t v, int64_t *out) {
  if (v < 0 || j->n[v].type != J_NUM || !j->n[v].integer) return 0;
  *out = j->n[v].num;
  return 1;
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *b = malloc(cap + 1);
  while (b) {
    n += fread(b + n, 1, cap - n, f);
    if (n < cap) break;
    char *nb = realloc(b, 2 * cap + 1);
    if (!nb) { free(b); b = NULL; errno = ENOMEM; break; }
    b = nb;
    cap *= 2;
  }
  fclose(f);
  if (b) b[n] = 0, *len = n;
  return b;
}

/* ---- the index ---- */

struct rec_index_json { char *text; jparser j; int64_t root; };

static void index_close(struct rec_index_json *x) {
  free(x->text);
  free(x->j.n);
}

/* Reads DIR/index.json; the error names the file. */
static int index_open(const char *dir, struct rec_index_json *x) {
  char path[4096];
  size_t len = 0;
  memset(x, 0, sizeof *x);
  snprintf(path, sizeof path, "%s/index.json", dir);
  if (!(x->text = read_file(path, &len)))
    return cdag__error(errno == ENOMEM ? CDAG_ERR_NOMEM : CDAG_ERR_IO, "%s: %s", path, strerror(errno));
  x->j = (jparser){.p = x->text, .end = x->text + len};
  int nomem = 0;
  x->root = jvalue(&x->j, &nomem);
  if (nomem) return CDAG_NOMEM("index.json");
  if (x->root < 0 || x->j.n[x->root].type != J_OBJ)
    return cdag__error(CDAG_ERR_FORMAT, "%s: not the JSON object cdag record writes (near byte %lld)", path,
                       (long long)(x->j.p - x->text));
  if (jget(&x->j, x->root, "sequence") < 0)
    return cdag__error(CDAG_ERR_FORMAT, "%s: no \"sequence\": a recording of an older cdag record, flat already", path);
  return CDAG_OK;
}

/* A JSON string's text [s, s + n) (escapes kept) decoded: as ir_json_string writes them
   (\" \\ \u00XX) and the other short escapes; NULL for what it cannot decode. */
static char *json_unescape(const char *s, size_t n) {
  static const char keys[] = "\"\\/bfnrt", vals[] = "\"\\/\b\f\n\r\t";
  char *out = malloc(n + 1), *w = out;
  for (size_t i = 0; out && i < n; i++) {
    if (s[i] != '\\') {
      *w++ = s[i];
      continue;
    }
    if (++i == n) break;
    const char *esc = s[i] ? strchr(keys, s[i]) : NULL;
    unsigned v = 0;
    if (esc) *w++ = vals[esc - keys];
    else if (s[i] == 'u' && i + 4 < n && sscanf(s + i + 1, "%4x", &v) == 1 && v && v < 0x80) *w++ = (char)v, i += 4;
    else {
      free(out);
      return NULL;
    }
  }
  if (out) *w = 0;
  return out;
}

char *rec_index_command(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/index.json", dir);
  if (access(path, F_OK)) return NULL;
  struct rec_index_json x;
  char *command = NULL;
  if (index_open(dir, &x) == CDAG_OK) {
    int64_t c = jget(&x.j, x.root, "command");
    if (c >= 0 && x.j.n[c].type == J_STR) command = json_unescape(x.j.n[c].s, x.j.n[c].slen);
  }
  cdag__error_clear();
  index_close(&x);
  return command;
}

void rec_index_free(rec_index *ix) {
  if (!ix) return;
  free(ix->files), free(ix->phase), free(ix->repeats), free(ix->ns);
  free(ix->names);
  memset(ix, 0, sizeof *ix);
}

int rec_index_read(const char *dir, rec_index *ix) {
  memset(ix, 0, sizeof *ix);
  struct rec_index_json x;
  int rc = index_open(dir, &x);
  const jparser *j = &x.j;
  int64_t ph = rc ? -1 : jget(j, x.root, "phases"), seq = rc ? -1 : jget(j, x.root, "sequence");
  if (!rc && (ph < 0 || j->n[ph].type != J_ARR || j->n[seq].type != J_ARR))
    rc = cdag__error(CDAG_ERR_FORMAT, "%s/index.json: \"phases\" and \"sequence\" must be arrays", dir);
  int64_t nd = 0, nr = 0, namelen = 0;
  for (int64_t c = rc ? -1 : j->n[ph].child; c >= 0; c = j->n[c].next) {
    int64_t f = jget(j, c, "file");
    if (f < 0 || j->n[f].type != J_STR) {
      rc = cdag__error(CDAG_ERR_FORMAT, "%s/index.json: phase %lld has no \"file\"", dir, (long long)nd);
      break;
    }
    namelen += (int64_t)j->n[f].slen + 1;
    nd++;
  }
  for (int64_t c = rc ? -1 : j->n[seq].child; c >= 0; c = j->n[c].next) nr++;
  if (!rc) {
    ix->files = calloc((size_t)nd + 1, sizeof *ix->files);
    ix->ns = calloc((size_t)nd + 1, sizeof *ix->ns);
    ix->names = malloc((size_t)namelen + 1);
    ix->phase = calloc((size_t)nr + 1, sizeof *ix->phase);
    ix->repeats = calloc((size_t)nr + 1, sizeof *ix->repeats);
    if (!ix->files || !ix->ns || !ix->names || !ix->phase || !ix->repeats) rc = CDAG_NOMEM("index.json");
  }
  char *w = ix->names;
  for (int64_t c = rc ? -1 : j->n[ph].child; c >= 0; c = j->n[c].next) {
    int64_t f = jget(j, c, "file"), ns = 0;
    memcpy(w, j->n[f].s, j->n[f].slen);
    w[j->n[f].slen] = 0;
    ix->files[ix->nphases] = w;
    w += j->n[f].slen + 1;
    int64_t tot = jget(j, c, "total");   /* over its repeats; a flat index has its own only */
    jint(j, tot >= 0 ? jget(j, tot, "compute_ns") : jget(j, c, "compute_ns"), &ns);
    ix->ns[ix->nphases++] = ns;
  }
  for (int64_t c = rc ? -1 : j->n[seq].child; c >= 0; c = j->n[c].next) {
    int64_t k, n;
    if (!jint(j, jget(j, c, "phase"), &k) || !jint(j, jget(j, c, "repeats"), &n) || k < 0 || k >= nd || n < 1) {
      rc = cdag__error(CDAG_ERR_FORMAT, "%s/index.json: sequence entry %lld: no phase of the index, or no repeats", dir,
                       (long long)ix->nruns);
      break;
    }
    ix->phase[ix->nruns] = k;
    ix->repeats[ix->nruns++] = n;
  }
  index_close(&x);
  if (rc) rec_index_free(ix);
  return rc;
}

/* ---- expansion ---- */

/* A stored phase file: its lines, which are time-only, where its variable tokens are. */
typedef struct {
  char *text; size_t len;
  size_t body;                 /* the first body line */
  int64_t *tok; int64_t ntok, tokcap;   /* (offset, length, value) triples */
} stored;

/* The variable tokens of a stored file, in the order distinct.c numbers them (`tags`: an
   index of version 2 on, whose tags vary). */
static int scan_stored(stored *s, int tags) {
  char *nl = memchr(s->text, '\n', s->len);
  if (!nl) return cdag__error(CDAG_ERR_FORMAT, "a stored phase file without a header line");
  s->body = (size_t)(nl - s->text) + 1;
  for (const char *p = s->text + s->body, *end = s->text + s->len, *e; p < end; p = e + 1) {
    if (!(e = memchr(p, '\n', (size_t)(end - p)))) e = end;
    uint64_t cost;
    if (rec_time_only_line(p, e, &cost)) continue;
    const char *w = ir_line_words(p, e), *pw = NULL;
    size_t pl = 0;
    for (const char *q = p, *qe; q < e; pw = q, pl = (size_t)(qe - q), q = qe + 1) {
      if (!(qe = memchr(q, ' ', (size_t)(e - q)))) qe = e;
      uint64_t v;
      if (ir_variable_token(q, qe, ir_number_word(w, e, q, pw, pl, tags), &v)) {
        if (base_grow((void **)&s->tok, s->ntok, &s->tokcap, 3, sizeof *s->tok, "expansion")) return CDAG_NOMEM("expansion");
        s->tok[s->ntok++] = q - s->text;
        s->tok[s->ntok++] = qe - q;
        s->tok[s->ntok++] = (int64_t)v;
      }
      if (qe == e) break;
    }
  }
  s->ntok /= 3;
  return CDAG_OK;
}

/* What one sequence entry changes: per token its first difference and step, or its list. */
typedef struct {
  int64_t *first, *step;
  int64_t *list;               /* per token: the node of its values list, -1 none */
} change;

static int read_change(const jparser *j, int64_t run, int64_t V, int64_t n, change *c, const char *where) {
  for (int64_t t = 0; t < V; t++) c->first[t] = c->step[t] = 0, c->list[t] = -1;
  int64_t sh = jget(j, run, "shift"), va = jget(j, run, "values");
  for (int64_t e = sh >= 0 ? j->n[sh].child : -1; e >= 0; e = j->n[e].next) {
    int64_t a[4], k = 0;
    for (int64_t v = j->n[e].child; v >= 0 && k < 4; v = j->n[v].next) k += jint(j, v, &a[k]);
    if (k != 4 || a[0] < 0 || a[1] < a[0] || a[1] >= V)
      return cdag__error(CDAG_ERR_FORMAT, "%s: a shift is not [first token, last token, first, step] of the phase's %lld", where, (long long)V);
    for (int64_t t = a[0]; t <= a[1]; t++) c->first[t] = a[2], c->step[t] = a[3];
  }
  for (int64_t e = va >= 0 ? j->n[va].child : -1; e >= 0; e = j->n[e].next) {
    int64_t t, cnt = 0, first = j->n[e].child;
    if (!jint(j, first, &t) || t < 0 || t >= V)
      return cdag__error(CDAG_ERR_FORMAT, "%s: values of a token the phase has not", where);
    for (int64_t v = j->n[first].next; v >= 0; v = j->n[v].next) cnt++;
    if (cnt != n) return cdag__error(CDAG_ERR_FORMAT, "%s: %lld values of token %lld for %lld repeats", where, (long long)cnt, (long long)t, (long long)n);
    c->list[t] = j->n[first].next;
  }
  return CDAG_OK;
}

/* Writes repeat r of a stored file as phase `occ` of the flat recording. */
static int write_repeat(const jparser *j, const stored *s, change *c, int64_t r, int64_t occ, int64_t *tcur,
                        const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) return cdag__error(errno == ENOMEM ? CDAG_ERR_NOMEM : CDAG_ERR_IO, "%s: %s", path, strerror(errno));
  static const char head[] = "// recorded by cdag record: phase ";
  const char *rest = s->text + sizeof head - 1;
  while (*rest >= '0' && *rest <= '9') rest++;
  fprintf(f, "%s%" PRId64, head, occ);
  fwrite(rest, 1, s->body - (size_t)(rest - s->text), f);
  int64_t line = 0, t = 0, rc = CDAG_OK;
  for (const char *p = s->text + s->body, *end = s->text + s->len, *e; p < end; p = e + 1) {
    if (!(e = memchr(p, '\n', (size_t)(end - p)))) e = end;
    uint64_t cost;
    if (rec_time_only_line(p, e, &cost)) continue;
    for (;;) {   /* this repeat's time-only computations before the line */
      int64_t tr[3], k = 0;
      if (*tcur < 0) break;
      for (int64_t v = j->n[*tcur].child; v >= 0 && k < 3; v = j->n[v].next) k += jint(j, v, &tr[k]);
      if (k != 3 || tr[0] > r || (tr[0] == r && tr[1] > line)) break;
      if (tr[0] < r || tr[1] < line || tr[2] < 0) {   /* passed by: not in order */
        rc = CDAG_ERR_FORMAT;
        break;
      }
      fprintf(f, "compute %" PRIu64 " reads all\n", (uint64_t)tr[2]);
      *tcur = j->n[*tcur].next;
    }
    const char *q = p;
    for (; t < s->ntok && s->tok[3 * t] < e - s->text; t++) {
      const char *at = s->text + s->tok[3 * t];
      fwrite(q, 1, (size_t)(at - q), f);
      uint64_t d = (uint64_t)c->first[t] + (uint64_t)r * (uint64_t)c->step[t];
      if (c->list[t] >= 0) {   /* its value for this repeat; the next repeat's next */
        int64_t x = 0;
        if (!jint(j, c->list[t], &x)) rc = CDAG_ERR_FORMAT;
        c->list[t] = j->n[c->list[t]].next;
        d = (uint64_t)x;
      }
      uint64_t val = (uint64_t)s->tok[3 * t + 2] + d;
      if (at[0] == '0' && at[1] == 'x') fprintf(f, "0x%" PRIx64, val);
      else if (at[s->tok[3 * t + 1] - 1] == 'b') fprintf(f, "%" PRIu64 "b", val);
      else fprintf(f, "%" PRIu64, val);
      q = at + s->tok[3 * t + 1];
    }
    fwrite(q, 1, (size_t)(e - q), f);
    fputc('\n', f);
    line++;
  }
  if (fclose(f) && !rc) rc = cdag__error(CDAG_ERR_IO, "%s: %s", path, strerror(errno));
  if (rc == CDAG_ERR_FORMAT)
    rc = cdag__error(CDAG_ERR_FORMAT, "%s: a value of the index is not an integer, or its times are not in order of repeat and line", path);
  return (int)rc;
}

int rec_expand(const char *dir, const char *out, int64_t *nwritten) {
  struct rec_index_json x;
  *nwritten = 0;
  int rc = index_open(dir, &x);
  const jparser *j = &x.j;
  int64_t ph = rc ? -1 : jget(j, x.root, "phases"), seq = rc ? -1 : jget(j, x.root, "sequence"), nd = 0;
  if (!rc && (ph < 0 || j->n[ph].type != J_ARR || j->n[seq].type != J_ARR))
    rc = cdag__error(CDAG_ERR_FORMAT, "%s/index.json: \"phases\" and \"sequence\" must be arrays", dir);
  int64_t version = 0;
  if (!rc && (!jint(j, jget(j, x.root, "cdag_recording"), &version) || version < 1 || version > REC_INDEX_VERSION))
    rc = cdag__error(CDAG_ERR_FORMAT, "%s/index.json: \"cdag_recording\" is not a version this cdag reads (1 to %d)", dir,
                     REC_INDEX_VERSION);
  for (int64_t c = rc ? -1 : j->n[ph].child; c >= 0; c = j->n[c].next) nd++;
  stored *st = rc ? NULL : calloc((size_t)nd + 1, sizeof *st);
  if (!rc && !st) rc = CDAG_NOMEM("expansion");
  int64_t k = 0;
  for (int64_t c = rc ? -1 : j->n[ph].child; c >= 0 && !rc; c = j->n[c].next, k++) {
    int64_t f = jget(j, c, "file");
    char path[4096];
    if (f < 0 || j->n[f].type != J_STR || memchr(j->n[f].s, '/', j->n[f].slen) || memchr(j->n[f].s, '\\', j->n[f].slen)) {
      rc = cdag__error(CDAG_ERR_FORMAT, "%s/index.json: phase %lld: \"file\" is not a file name", dir, (long long)k);
      break;
    }
    snprintf(path, sizeof path, "%s/%.*s", dir, (int)j->n[f].slen, j->n[f].s);
    char *unfolded = NULL;
    size_t ulen = 0;
    if (!(st[k].text = read_file(path, &st[k].len)))
      rc = cdag__error(errno == ENOMEM ? CDAG_ERR_NOMEM : CDAG_ERR_IO, "%s: %s", path, strerror(errno));
    else if ((rc = ir_ranks_unfold(st[k].text, st[k].len, &unfolded, &ulen))) {
      char msg[512];
      snprintf(msg, sizeof msg, "%s", cdag_error_message());
      rc = cdag__error(rc, "%s: %s", path, msg);
    }
    if (unfolded) free(st[k].text), st[k].text = unfolded, st[k].len = ulen;
    if (!rc) rc = scan_stored(&st[k], version >= 2);
  }
  int64_t occ = 0, e = 0;
  for (int64_t run = rc ? -1 : j->n[seq].child; run >= 0 && !rc; run = j->n[run].next, e++) {
    int64_t kk, n;
    char where[4200], path[4200];
    snprintf(where, sizeof where, "%s/index.json: sequence entry %lld", dir, (long long)e);
    if (!jint(j, jget(j, run, "phase"), &kk) || !jint(j, jget(j, run, "repeats"), &n) || kk < 0 || kk >= nd || n < 1) {
      rc = cdag__error(CDAG_ERR_FORMAT, "%s: no phase of the index, or no repeats", where);
      break;
    }
    const stored *s = &st[kk];
    change ch = {malloc(((size_t)s->ntok + 1) * sizeof *ch.first), malloc(((size_t)s->ntok + 1) * sizeof *ch.step),
                 malloc(((size_t)s->ntok + 1) * sizeof *ch.list)};
    if (!ch.first || !ch.step || !ch.list) rc = CDAG_NOMEM("expansion");
    if (!rc) rc = read_change(j, run, s->ntok, n, &ch, where);
    int64_t tm = jget(j, run, "times"), tcur = tm >= 0 ? j->n[tm].child : -1;
    for (int64_t r = 0; r < n && !rc; r++, occ++) {
      snprintf(path, sizeof path, "%s/phase-%04lld.cdag", out, (long long)occ);
      rc = write_repeat(j, s, &ch, r, occ, &tcur, path);
    }
    if (!rc && tcur >= 0) rc = cdag__error(CDAG_ERR_FORMAT, "%s: times past its repeats or lines", where);
    free(ch.first), free(ch.step), free(ch.list);
  }
  for (int64_t i = 0; st && i < nd; i++) free(st[i].text), free(st[i].tok);
  free(st);
  index_close(&x);
  *nwritten = occ;
  return rc;
}
