/* cdag — tools/gen_redistribute.c: `cdag gen redistribute`, one M:N block-cyclic
 * redistribution as a global graph.
 *
 * The matrix (--shape MxN, --elem bytes per element) moves from one ScaLAPACK layout to
 * another (--from / --to MBxNB@PRxPC[+FIRST]: blocks, process grid, rank of grid process
 * (0, 0), default 0). The graph has the fewest ranks that hold both grids; on each rank the
 * source local array starts at address 0 and the destination array at 2^40, and every rank
 * adds its part with the library's own builder (cdag_rank_redistribute), so the file is the
 * graph a program calling cdag_redistribute on every process would describe. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "base/error.h"

#define GEN_DST_BASE (UINT64_C(1) << 40)

/* A whole number >= 0 from s up to the first byte not a digit (*end): -1 if there is none or
   it does not fit int64. 0 passes: the builder says what is wrong. */
static int leading_num(const char *s, int64_t *v, const char **end) {
  char digits[24];
  size_t n = strspn(s, "0123456789");
  if (!n || n >= sizeof digits) return -1;
  memcpy(digits, s, n);
  digits[n] = 0;
  *end = s + n;
  return cmd_num_i64(digits, 0, INT64_MAX, v);
}

static int parse_pair(const char *s, char sep, int64_t *a, int64_t *b, const char **end) {
  const char *e;
  if (leading_num(s, a, &e) || *e != sep) return -1;
  return leading_num(e + 1, b, end);
}

/* MBxNB@PRxPC[+FIRST] */
static int parse_layout(const char *v, cdag_layout *l) {
  int64_t pr, pc;
  const char *e;
  if (!v || parse_pair(v, 'x', &l->mb, &l->nb, &e) || *e != '@' || parse_pair(e + 1, 'x', &pr, &pc, &e)) return -1;
  if (pr > INT32_MAX || pc > INT32_MAX) return -1;
  l->pr = (int)pr;
  l->pc = (int)pc;
  l->first = 0;
  if (*e == '+') {
    int64_t first;
    if (cmd_num_i64(e + 1, 0, INT32_MAX, &first)) return -1;
    l->first = (int)first;
  } else if (*e) {
    return -1;
  }
  return 0;
}

static int parse_shape(const char *v, int64_t *m, int64_t *n) {
  const char *e;
  return !v || parse_pair(v, 'x', m, n, &e) || *e ? -1 : 0;
}

static int parse_elem(const char *v, int64_t *elem) {
  return cmd_num_i64(v, 0, INT64_MAX, elem);   /* 0 passes: the builder says what is wrong */
}

static int usage(void) {
  fprintf(stderr, "usage: cdag gen redistribute --shape MxN --elem BYTES --from MBxNB@PRxPC[+FIRST] "
                  "--to MBxNB@PRxPC[+FIRST] [-o FILE]\n");
  return 2;
}

static int64_t grid_end(const cdag_layout *l) { return (int64_t)l->first + (int64_t)l->pr * l->pc; }

int gen_redistribute(int argc, char **argv) {
  cdag_layout from = {0}, to = {0};
  int64_t m = 0, n = 0, elem = -1;
  int have_from = 0, have_to = 0, have_shape = 0;
  const char *out = "-";
  for (int i = 0; i < argc; i += 2) {   /* every option takes a value */
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int bad = 0;
    if (strcmp(a, "--shape") == 0) bad = parse_shape(v, &m, &n), have_shape = 1;
    else if (strcmp(a, "--elem") == 0) bad = parse_elem(v, &elem);
    else if (strcmp(a, "--from") == 0) bad = parse_layout(v, &from), have_from = 1;
    else if (strcmp(a, "--to") == 0) bad = parse_layout(v, &to), have_to = 1;
    else if (strcmp(a, "-o") == 0 && v) out = v;
    else bad = -1;
    if (bad) return usage();
  }
  if (elem < 0 || !have_from || !have_to || !have_shape) return usage();
  from.m = to.m = m;
  from.n = to.n = n;
  int64_t p = grid_end(&from) > grid_end(&to) ? grid_end(&from) : grid_end(&to);
  cdag_graph *g = NULL;
  int rc = p > (1 << 20) ? cdag__error(CDAG_ERR_ARG, "the grids need %lld ranks (at most 2^20)", (long long)p)
                         : cdag_graph_create_global((int)p, &g);
  for (int r = 0; r < p && !rc; r++) rc = cdag_rank_redistribute(g, r, &from, 0, &to, GEN_DST_BASE, (size_t)elem);
  if (!rc) rc = cdag_graph_save(g, out);
  cdag_graph_free(&g);
  return rc ? cmd_fail("gen redistribute", rc) : 0;
}
