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
  free(r->text);
  r->text = NULL, r->item = NULL;
}

/* item's text under the neutral label, or NULL (out of memory). */
static char *rendered(const base_runs *r, const void *item, size_t *len) {
  char *text = NULL;
  FILE *f = open_memstream(&text, len);
  if (!f) return NULL;
  r->render(f, item, NEUTRAL, r->ctx);
  if (fclose(f) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

void base_runs_add(base_runs *r, const void *item, int64_t n) {
  size_t len = 0;
  char *text = rendered(r, item, &len);
  if (text && r->item && r->text && n == r->last + 1 && len == r->len && memcmp(text, r->text, len) == 0) {
    r->last = n;
    free(text);
    return;
  }
  flush(r);
  r->item = item, r->first = r->last = n, r->text = text, r->len = len;
}

void base_runs_end(base_runs *r) { flush(r); }
