/* cdag tests — tests/model/goal_grammar.h: a strict checker of LogGOPSim's GOAL grammar.
 *
 * LogGOPSim cannot be installed here, so the GOAL that `cdag goal` writes is checked
 * against the grammar of LogGOPSim's own parser, read from spcl/LogGOPSim,
 * src/LogGOPSim/txt2bin.re (an re2c scanner with states s_0 .. s_24; written anew here, not
 * copied). Tokens are separated by blanks (space, tab); newlines end items; `//` to the end of
 * a line and `/` `*` ... `*` `/` are comments (no `#`). Accepted, line by line:
 *   num_ranks INT
 *   rank INT {                       ... }     (blocks of ranks 0 .. N-1; txt2bin stops after N-1)
 *   [LABEL :] send INT b to INT   [tag INT|-1] [cpu INT] [nic INT]
 *   [LABEL :] recv INT b from INT|-1 [tag INT|-1] [cpu INT] [nic INT]
 *   [LABEL :] calc INT [cpu INT]
 *   LABEL requires|irequires LABEL             (both labels defined earlier in the block)
 * LABEL = [a-zA-Z][a-zA-Z0-9_]*. Stricter than txt2bin where txt2bin would produce a broken
 * schedule: num_ranks before any rank block, blocks in rank order and closed, items only
 * inside blocks, peers below num_ranks, labels unique per block, nothing but comments after
 * the last block. goal_check returns 0, or -1 with "line N: ..." in err. */
#ifndef CDAG_TESTS_GOAL_GRAMMAR_H
#define CDAG_TESTS_GOAL_GRAMMAR_H

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GT_EOF, GT_NL, GT_INT, GT_M1, GT_ID, GT_COLON, GT_OPEN, GT_CLOSE, GT_BAD };

typedef struct {
  const char *s, *end;
  int line;
  int kind;
  const char *tok;
  size_t len;
  unsigned long long num;
  char *err;
  size_t errlen;
} gg_lex;

static int gg_fail(gg_lex *x, const char *fmt, ...) {
  va_list ap;
  int n = snprintf(x->err, x->errlen, "line %d: ", x->line);
  va_start(ap, fmt);
  if (n >= 0 && (size_t)n < x->errlen) vsnprintf(x->err + n, x->errlen - (size_t)n, fmt, ap);
  va_end(ap);
  return -1;
}

static void gg_next(gg_lex *x) {
  for (;;) {
    while (x->s < x->end && (*x->s == ' ' || *x->s == '\t' || (*x->s == '\r' && x->s + 1 < x->end && x->s[1] == '\n'))) x->s++;
    if (x->s + 1 < x->end && x->s[0] == '/' && x->s[1] == '/') {
      while (x->s < x->end && *x->s != '\n') x->s++;
      continue;
    }
    if (x->s + 1 < x->end && x->s[0] == '/' && x->s[1] == '*') {
      x->s += 2;
      while (x->s + 1 < x->end && !(x->s[0] == '*' && x->s[1] == '/')) x->line += *x->s++ == '\n';
      x->s = x->s + 1 < x->end ? x->s + 2 : x->end;
      continue;
    }
    break;
  }
  x->tok = x->s;
  if (x->s >= x->end) { x->kind = GT_EOF; return; }
  char c = *x->s;
  if (c == '\n') { x->s++; x->kind = GT_NL; return; }
  if (c == ':') { x->s++; x->kind = GT_COLON; return; }
  if (c == '{') { x->s++; x->kind = GT_OPEN; return; }
  if (c == '}') { x->s++; x->kind = GT_CLOSE; return; }
  if (c == '-' && x->s + 1 < x->end && x->s[1] == '1' && !(x->s + 2 < x->end && isdigit((unsigned char)x->s[2]))) {
    x->s += 2; x->kind = GT_M1; return;
  }
  if (isdigit((unsigned char)c)) {
    x->num = 0;
    while (x->s < x->end && isdigit((unsigned char)*x->s)) x->num = x->num * 10 + (unsigned)(*x->s++ - '0');
    x->kind = GT_INT; x->len = (size_t)(x->s - x->tok); return;
  }
  if (isalpha((unsigned char)c)) {
    while (x->s < x->end && (isalnum((unsigned char)*x->s) || *x->s == '_')) x->s++;
    x->kind = GT_ID; x->len = (size_t)(x->s - x->tok); return;
  }
  x->s++;
  x->kind = GT_BAD;
}

static int gg_is(const gg_lex *x, const char *word) {
  return x->kind == GT_ID && x->len == strlen(word) && memcmp(x->tok, word, x->len) == 0;
}

/* Labels of the current block: a simple list (test files are small). */
typedef struct { char **v; int n, cap; } gg_labels;

static int gg_label_find(const gg_labels *l, const char *s, size_t len) {
  for (int i = 0; i < l->n; i++)
    if (strlen(l->v[i]) == len && memcmp(l->v[i], s, len) == 0) return i;
  return -1;
}

static void gg_label_add(gg_labels *l, const char *s, size_t len) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 64;
    l->v = realloc(l->v, sizeof *l->v * (size_t)l->cap);
  }
  char *c = malloc(len + 1);
  memcpy(c, s, len);
  c[len] = 0;
  l->v[l->n++] = c;
}

static void gg_labels_clear(gg_labels *l) {
  for (int i = 0; i < l->n; i++) free(l->v[i]);
  l->n = 0;
}

/* One op after its optional label: send/recv/calc ... NL. */
static int gg_op(gg_lex *x, long long nranks) {
  int send = gg_is(x, "send"), recv = gg_is(x, "recv");
  if (!send && !recv && !gg_is(x, "calc")) return gg_fail(x, "expected send, recv or calc");
  gg_next(x);
  if (x->kind != GT_INT) return gg_fail(x, "expected an integer");
  gg_next(x);
  if (send || recv) {
    if (!gg_is(x, "b")) return gg_fail(x, "expected \"b\" after the size");
    gg_next(x);
    if (!gg_is(x, send ? "to" : "from")) return gg_fail(x, send ? "expected \"to\"" : "expected \"from\"");
    gg_next(x);
    if (!(x->kind == GT_INT || (recv && x->kind == GT_M1))) return gg_fail(x, "expected a rank");
    if (x->kind == GT_INT && (long long)x->num >= nranks) return gg_fail(x, "peer %llu is not below num_ranks", x->num);
    gg_next(x);
    if (gg_is(x, "tag")) {
      gg_next(x);
      if (x->kind != GT_INT && x->kind != GT_M1) return gg_fail(x, "expected a tag");
      if (x->kind == GT_INT && x->num > 0xffffffffULL) return gg_fail(x, "tag out of range");
      gg_next(x);
    }
  }
  if (gg_is(x, "cpu")) {
    gg_next(x);
    if (x->kind != GT_INT) return gg_fail(x, "expected an integer after cpu");
    gg_next(x);
  }
  if ((send || recv) && gg_is(x, "nic")) {
    gg_next(x);
    if (x->kind != GT_INT) return gg_fail(x, "expected an integer after nic");
    gg_next(x);
  }
  if (x->kind != GT_NL) return gg_fail(x, "expected the end of the line");
  return 0;
}

static int goal_check(const char *text, size_t len, char *err, size_t errlen) {
  gg_lex x = {.s = text, .end = text + len, .line = 1, .err = err, .errlen = errlen};
  gg_labels labels = {0};
  long long nranks = -1, next_rank = 0;
  int in_block = 0, rc = 0;
  err[0] = 0;
  for (gg_next(&x); rc == 0; gg_next(&x)) {
    if (x.kind == GT_EOF) break;
    if (x.kind == GT_NL) { x.line++; continue; }
    if (!in_block) {
      if (next_rank == nranks && nranks > 0) { rc = gg_fail(&x, "text after the block of the last rank"); break; }
      if (gg_is(&x, "num_ranks")) {
        gg_next(&x);
        if (x.kind != GT_INT || x.num < 1 || nranks >= 0) { rc = gg_fail(&x, "expected one num_ranks N >= 1"); break; }
        nranks = (long long)x.num;
        continue;
      }
      if (!gg_is(&x, "rank")) { rc = gg_fail(&x, "expected rank or num_ranks"); break; }
      if (nranks < 0) { rc = gg_fail(&x, "rank before num_ranks"); break; }
      gg_next(&x);
      if (x.kind != GT_INT || (long long)x.num != next_rank) { rc = gg_fail(&x, "expected rank %lld", next_rank); break; }
      gg_next(&x);
      if (x.kind != GT_OPEN) { rc = gg_fail(&x, "expected {"); break; }
      in_block = 1;
      continue;
    }
    if (x.kind == GT_CLOSE) {
      in_block = 0;
      next_rank++;
      gg_labels_clear(&labels);
      continue;
    }
    if (x.kind != GT_ID) { rc = gg_fail(&x, "expected an op, a label or }"); break; }
    if (gg_is(&x, "send") || gg_is(&x, "recv") || gg_is(&x, "calc")) {
      if ((rc = gg_op(&x, nranks)) == 0) x.line++;
      continue;
    }
    const char *l1 = x.tok;
    size_t n1 = x.len;
    gg_next(&x);
    if (x.kind == GT_COLON) {
      if (gg_label_find(&labels, l1, n1) >= 0) { rc = gg_fail(&x, "label %.*s defined twice", (int)n1, l1); break; }
      gg_label_add(&labels, l1, n1);
      gg_next(&x);
      if ((rc = gg_op(&x, nranks)) == 0) x.line++;
      continue;
    }
    if (!gg_is(&x, "requires") && !gg_is(&x, "irequires")) { rc = gg_fail(&x, "expected :, requires or irequires"); break; }
    gg_next(&x);
    if (x.kind != GT_ID) { rc = gg_fail(&x, "expected a label"); break; }
    if (gg_label_find(&labels, l1, n1) < 0 || gg_label_find(&labels, x.tok, x.len) < 0) {
      rc = gg_fail(&x, "a dependency names a label not defined before it");
      break;
    }
    gg_next(&x);
    if (x.kind != GT_NL) { rc = gg_fail(&x, "expected the end of the line"); break; }
    x.line++;
  }
  if (rc == 0 && in_block) rc = gg_fail(&x, "the block of rank %lld is not closed", next_rank);
  if (rc == 0 && (nranks < 0 || next_rank != nranks)) rc = gg_fail(&x, "%lld rank blocks for num_ranks %lld", next_rank, nranks);
  gg_labels_clear(&labels);
  free(labels.v);
  return rc;
}

#endif
