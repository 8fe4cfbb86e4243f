/* cdag tests — tests/support/graphs.h: the graphs a check test starts from.
 *
 * An empty global graph of p ranks, and a graph loaded from a text literal in the file
 * format (docs/format.md), either one that must load (a failure names cdag's message and
 * stops the test) or its return code for a test that expects an error, and a graph saved
 * to a string. Header-only and
 * built on check's assertions, so it serves the check tests and not bench/, which links
 * the rest of tests/support. */
#ifndef CDAG_TESTS_SUPPORT_GRAPHS_H
#define CDAG_TESTS_SUPPORT_GRAPHS_H
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "cdag.h"
#include "format/format.h"

/* An empty global graph of p ranks. */
static inline cdag_graph *cdag_test_graph(int p) {
  cdag_graph *g = NULL;
  ck_assert_msg(cdag_graph_create_global(p, &g) == CDAG_OK, "graph of %d ranks: %s", p, cdag_error_message());
  return g;
}

/* The graph a text in the file format describes; it must load. */
static inline cdag_graph *cdag_test_text_graph(const char *text) {
  cdag_graph *g = NULL;
  ck_assert_msg(ir_load_mem(text, strlen(text), "t", NULL, &g) == CDAG_OK, "%s\n%s", cdag_error_message(), text);
  return g;
}

/* What loading the text returns (the graph, if any, freed). */
static inline int cdag_test_load_rc(const char *text) {
  cdag_graph *g = NULL;
  int rc = ir_load_mem(text, strlen(text), "t", NULL, &g);
  cdag_graph_free(&g);
  return rc;
}

/* g in the file format, as a malloc'd string (the saver must succeed). */
static inline char *cdag_test_save_str(const cdag_graph *g) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ck_assert_ptr_nonnull(f);
  ck_assert_msg(ir_save_file(g, f) == CDAG_OK, "save: %s", cdag_error_message());
  fclose(f);
  return buf;
}

#endif
