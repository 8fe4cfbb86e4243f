/* cdag — src/base/runs.h: items of a listing printed in runs of alike ones.
 *
 * A plan of 100,001 stages printed stage by stage is half a million lines that say one thing
 * 100,000 times. Items are given in order with their numbers; consecutive items whose text is
 * the same but for their label ("stage 7") are printed once, under a label naming the run
 * ("stages 1 to 100000 (100000 alike)"). Each item is rendered once into memory to be compared
 * (with a label of its own), and once more, to the output, when its run ends: O(text). Each
 * item's text is compared with the run's first and replaces it when it starts a new run. */
#ifndef CDAG_BASE_RUNS_H
#define CDAG_BASE_RUNS_H

#include <stdint.h>
#include <stdio.h>

/* Writes item's text to f, naming it `label` wherever its number would go. */
typedef void (*base_runs_render)(FILE *f, const void *item, const char *label, void *ctx);

typedef struct {
  FILE *out;
  base_runs_render render;
  void *ctx;
  const char *noun, *nouns;   /* "stage", "stages" */
  const void *item;           /* the first item of the run so far, NULL none */
  int64_t first, last;
  char *text;                 /* its text, rendered with a neutral label */
  size_t len, cap;
  FILE *mem;                  /* where each item is rendered to be compared, reused: a
                                 memory stream opened per item zeroed 8 KiB each time */
  char *membuf;
  size_t memlen;
} base_runs;

void base_runs_begin(base_runs *r, FILE *out, const char *noun, const char *nouns, base_runs_render render, void *ctx);
/* Item number n (n = the last one's + 1 joins its run when alike). Out of memory prints the
   item alone: the listing is longer, never wrong. */
void base_runs_add(base_runs *r, const void *item, int64_t n);
/* Prints the last run. */
void base_runs_end(base_runs *r);

#endif
