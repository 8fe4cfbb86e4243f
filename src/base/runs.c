/* cdag — src/base/runs.c: items of a listing printed in runs of alike ones (runs.h). */
#include <stdlib.h>
#include <string.h>

#include "base/runs.h"

/* The label of a rendering kept for comparison: no item text holds it. */
static const char NEUTRAL[] = "\x01";

void base_runs_begin(base_runs *r, FILE *out, const char *noun, const char *nouns, base_runs_render render, void *ctx) {
  *r = (base_runs){.out = out, .render = render, .ctx = ctx, .noun = noun, .nouns = nouns};
}

static void flush(base_runs *r) {
  if (!r->item) return;
  char label[96];
  if (r->first == r->last) snprintf(label, sizeof label, "%s %lld", r->noun, (long long)r->first);
  else
    snprintf(label, sizeof label, "%s %lld to %lld (%lld alike)", r->nouns, (long long)r->first, (long long)r->last,
             (long long)(r->last - r->first + 1));
  r->render(r->out, r->item, label, r->ctx);
  r->item = NULL;
}

/* item's text under the neutral label, in r->membuf[0 .. r->memlen); 0: out of memory. A
   memory stream's size is its position at each flush, so rewinding it starts a new text. */
static int rendered(base_runs *r, const void *item) {
  if (!r->mem && !(r->mem = open_memstream(&r->membuf, &r->memlen))) return 0;
  if (fseeko(r->mem, 0, SEEK_SET) != 0) return 0;
  r->render(r->mem, item, NEUTRAL, r->ctx);
  return fflush(r->mem) == 0 && !ferror(r->mem);
}

/* Keeps the rendered text as the run's (0: out of memory, none kept). */
static int keep_text(base_runs *r) {
  if (r->memlen > r->cap) {
    char *t = realloc(r->text, r->memlen);
    if (!t) return 0;
    r->text = t, r->cap = r->memlen;
  }
  if (r->memlen) memcpy(r->text, r->membuf, r->memlen);
  r->len = r->memlen;
  return 1;
}

void base_runs_add(base_runs *r, const void *item, int64_t n) {
  int ok = rendered(r, item);
  if (ok && r->item && r->len != (size_t)-1 && n == r->last + 1 && r->memlen == r->len &&
      memcmp(r->membuf, r->text, r->len) == 0) {
    r->last = n;
    return;
  }
  flush(r);
  r->item = item, r->first = r->last = n;
  if (!ok || !keep_text(r)) r->len = (size_t)-1;   /* no text: the next item starts its own run */
}

void base_runs_end(base_runs *r) {
  flush(r);
  if (r->mem) fclose(r->mem);
  free(r->membuf);
  free(r->text);
  r->mem = NULL, r->membuf = NULL, r->text = NULL;
  r->len = r->cap = r->memlen = 0;
}
