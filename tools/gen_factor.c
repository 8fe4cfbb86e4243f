/* cdag — tools/gen_factor.c: `cdag gen lu25d` and `cdag gen cholesky25d` (src/workload/factor.h
 * builds the graph): options, then the graph file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "workload/factor.h"

/* A whole number >= 1 that fits int64 (no silent clamping of out-of-range values). */
static int arg_num(const char *v, int64_t *out) { return cmd_num_i64(v, 1, INT64_MAX, out); }

int gen_factor(const char *name, int cholesky, int argc, char **argv) {
  struct { int64_t n, p, c, v; } x = {0};
  const char *out = "-";
  for (int i = 0; i < argc; i += 2) {   /* every option takes a value */
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int bad = 0;
    if (strcmp(a, "--n") == 0) bad = arg_num(v, &x.n);
    else if (strcmp(a, "--p") == 0) bad = arg_num(v, &x.p);
    else if (strcmp(a, "--c") == 0) bad = arg_num(v, &x.c);
    else if (strcmp(a, "--v") == 0) bad = arg_num(v, &x.v);
    else if (strcmp(a, "-o") == 0 && v) out = v;
    else bad = -1;
    if (bad) {
      fprintf(stderr, "usage: cdag gen %s --n N --p P [--c C] [--v V] [-o FILE]\n", name);
      return 2;
    }
  }
  cdag_graph *g = NULL;
  int rc = wl_factor25d(cholesky, x.n, x.p, x.c, x.v, &g);
  if (!rc) rc = cdag_graph_save(g, out);
  ir_graph_free(g);
  if (rc) {
    char cmd[32];
    snprintf(cmd, sizeof cmd, "gen %s", name);
    return cmd_fail(cmd, rc);
  }
  return 0;
}
