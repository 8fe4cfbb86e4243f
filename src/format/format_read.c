/* cdag — src/format/format_read.c: loading graph files (docs/format.md, a superset of GOAL).
 *
 * The whole file is read into memory, then one pass of a hand-written tokenizer (words,
 * numbers, ':', '{', '}', end of line; comments //, #, slash-star) feeds a recursive-descent
 * parser that appends ops with the ir_add_* calls. Tokens point into the buffer, so nothing is
 * allocated per token. Labels live in a hash table of the reader (label_map), emptied when a
 * rank block opens; `requires` statements wait in a list until the block closes (they may name
 * later labels). Cost: O(bytes + ops) expected, then ir_finalize().
 *
 * Statements are line-oriented as in GOAL: `[label:] op fields` | `label requires label` |
 * `scratch ADDR SIZE`, ended by an end of line or the block's '}'. Fields after the fixed part
 * of an op (tag, addr, cpu, nic; in/inout; from/to) come in any order, each at most once.
 * Sizes are `Nb`, `N b` (GOAL allows the space) or a plain `N`; in a hex number `b` is a
 * digit, so `0x1b` is 27 (`0x40 b` is 64 bytes). Every error message is
 * "FILE:LINE:COL: expected X, found 'Y'" or a located sentence quoting the token. */
#include <Judy.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/checked.h"
#include "format/format.h"

typedef enum { T_EOF, T_NL, T_WORD, T_NUM, T_COLON, T_LBRACE, T_RBRACE } tok_kind;

typedef struct {
  tok_kind kind;
  const char *s;        /* text, inside the buffer */
  int64_t len;
  uint32_t line, col;   /* 1-based */
} token;

typedef struct {        /* `after requires before`, resolved when its block closes */
  token after, before;
  int32_t after_id;     /* >= 0: after is this op (a `wait` statement), not a label */
  int start;            /* irequires: after starts once before has started */
} pending_dep;

/* The labels of the open rank block: open addressing with linear probing over the labels
   the graph keeps (ir_label). A block's ops are numbered from the graph's op count when it
   opened, so slots of earlier ops count as free: opening a block empties the table without
   touching it. The table doubles when half full and so ends up sized for the largest block,
   16 to 32 bytes per label. Loading 2 million labelled ops through JudyHS cost a quarter of
   the loader's instructions. */
typedef struct {
  uint32_t hash;
  int32_t op;           /* 1 + the op; 0: never used */
} label_slot;

typedef struct {
  label_slot *slot;     /* NULL before the first label */
  uint64_t mask;        /* slots - 1 (a power of two) */
  uint64_t used;        /* slots of the open block */
  int64_t first_op;     /* the open block's first op */
} label_map;

typedef struct {
  const char *name;               /* file name for messages */
  const char *p, *end;            /* cursor and end of the buffer */
  const char *line_start;
  uint32_t line;
  token tok;                      /* current token */
  token ahead;                    /* one token of lookahead */
  int has_ahead;
  int goal_buffers;   /* IR_GOAL_* */
  int64_t max_ranks;              /* largest num_ranks accepted */
  cdag_graph *g;                  /* created by num_ranks */
  uint32_t num_ranks_line;
  Pvoid_t ranks_seen;             /* JudyL: rank -> line of its block */
  int32_t rank;                   /* rank of the open block */
  label_map labels;               /* label -> op id, of the open block */
  pending_dep *pend;
  int64_t npend, pendcap;
  int32_t *fresh;                 /* send/recv ops without addr (not shared) */
  uint64_t fresh_end;             /* the end of the regions assign_fresh gave them */
  int64_t nfresh, freshcap;
  uint64_t max_end;               /* end of the highest explicit address range */
  struct coll_lists *lists;       /* reading a vector collective: its lists, else NULL */
  uint64_t *lv;                   /* the lists' values, kept across statements */
  int64_t lvcap;
  int64_t *sv;                    /* steps, expanded once their count is checked (steps_ok) */
  int64_t svcap;
  int64_t blocks_left;            /* blocks computations may still expand to (compute_blocks) */
  struct step_lists *steps;       /* reading a copy or computation: its lists of steps, else NULL */
} reader;

/* ---- messages ---- */

/* The token as messages show it: 'text' (escaped, shortened), end of line, end of file. */
static const char *tok_show(const token *t, char *buf, size_t size) {
  if (t->kind == T_EOF) return "end of file";
  if (t->kind == T_NL) return "end of line";
  size_t n = 0;
  buf[n++] = '\'';
  for (int64_t i = 0; i < t->len && n + 8 < size; i++) {
    unsigned char c = (unsigned char)t->s[i];
    if (i == 40) {
      memcpy(buf + n, "...", 3);
      n += 3;
      break;
    }
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') buf[n++] = (char)c;
    else n += (size_t)snprintf(buf + n, size - n, "\\x%02x", c);
  }
  buf[n++] = '\'';
  buf[n] = '\0';
  return buf;
}

/* Records "NAME:LINE:COL: <message>" and returns code. */
static int rd_fail(reader *r, int code, const token *t, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int rd_fail(reader *r, int code, const token *t, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return cdag__error(code, "%s:%u:%u: %s", r->name, t->line, t->col, msg);
}

static int expected(reader *r, const token *t, const char *what) {
  char b[200];
  return rd_fail(r, CDAG_ERR_FORMAT, t, "expected %s, found %s", what, tok_show(t, b, sizeof b));
}

/* Re-raises the IR's message (an ir_add_* refusal) at a file position. */
static int rd_wrap(reader *r, int rc, const token *t) {
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", cdag__error_text());
  return rd_fail(r, rc == CDAG_ERR_NOMEM ? rc : CDAG_ERR_FORMAT, t, "%s", msg);
}

/* ---- tokenizer ---- */

/* Character classes, one table lookup per byte on the hot path. */
enum { C_ALPHA = 1, C_DIGIT = 2, C_BLANK = 4 };
static const uint8_t char_class[256] = {
  [' '] = C_BLANK, ['\t'] = C_BLANK, ['\r'] = C_BLANK, ['\f'] = C_BLANK, ['\v'] = C_BLANK,
  ['0'] = C_DIGIT, ['1'] = C_DIGIT, ['2'] = C_DIGIT, ['3'] = C_DIGIT, ['4'] = C_DIGIT,
  ['5'] = C_DIGIT, ['6'] = C_DIGIT, ['7'] = C_DIGIT, ['8'] = C_DIGIT, ['9'] = C_DIGIT,
  ['_'] = C_ALPHA,
  ['a'] = C_ALPHA, ['b'] = C_ALPHA, ['c'] = C_ALPHA, ['d'] = C_ALPHA, ['e'] = C_ALPHA, ['f'] = C_ALPHA,
  ['g'] = C_ALPHA, ['h'] = C_ALPHA, ['i'] = C_ALPHA, ['j'] = C_ALPHA, ['k'] = C_ALPHA, ['l'] = C_ALPHA,
  ['m'] = C_ALPHA, ['n'] = C_ALPHA, ['o'] = C_ALPHA, ['p'] = C_ALPHA, ['q'] = C_ALPHA, ['r'] = C_ALPHA,
  ['s'] = C_ALPHA, ['t'] = C_ALPHA, ['u'] = C_ALPHA, ['v'] = C_ALPHA, ['w'] = C_ALPHA, ['x'] = C_ALPHA,
  ['y'] = C_ALPHA, ['z'] = C_ALPHA,
  ['A'] = C_ALPHA, ['B'] = C_ALPHA, ['C'] = C_ALPHA, ['D'] = C_ALPHA, ['E'] = C_ALPHA, ['F'] = C_ALPHA,
  ['G'] = C_ALPHA, ['H'] = C_ALPHA, ['I'] = C_ALPHA, ['J'] = C_ALPHA, ['K'] = C_ALPHA, ['L'] = C_ALPHA,
  ['M'] = C_ALPHA, ['N'] = C_ALPHA, ['O'] = C_ALPHA, ['P'] = C_ALPHA, ['Q'] = C_ALPHA, ['R'] = C_ALPHA,
  ['S'] = C_ALPHA, ['T'] = C_ALPHA, ['U'] = C_ALPHA, ['V'] = C_ALPHA, ['W'] = C_ALPHA, ['X'] = C_ALPHA,
  ['Y'] = C_ALPHA, ['Z'] = C_ALPHA,
};
static int is_alpha(char c) { return char_class[(unsigned char)c] & C_ALPHA; }
static int is_digit(char c) { return char_class[(unsigned char)c] & C_DIGIT; }
static int is_alnum(char c) { return char_class[(unsigned char)c] & (C_ALPHA | C_DIGIT); }
static int is_blank(char c) { return char_class[(unsigned char)c] & C_BLANK; }

static uint32_t col_of(const reader *r, const char *p) {
  int64_t c = p - r->line_start + 1;
  return c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
}

/* Skips blanks and comments. A block comment spanning lines counts as one end of line,
   reported in *nl_at (else NULL). */
static int skip_blanks(reader *r, token *nl_at, int *saw_nl) {
  const char *p = r->p, *end = r->end;
  *saw_nl = 0;
  for (;;) {
    while (p < end && is_blank(*p)) p++;
    if (p < end && *p != '#' && *p != '/') break;
    if (p < end && (*p == '#' || (*p == '/' && p + 1 < end && p[1] == '/'))) {
      const char *nl = memchr(p, '\n', (size_t)(end - p));
      p = nl ? nl : end;
      continue;
    }
    if (p < end && *p == '/' && p + 1 < end && p[1] == '*') {
      token open = {T_NL, p, 2, r->line, col_of(r, p)};
      for (p += 2;; p++) {
        if (p + 1 >= end) {
          r->p = end;
          return rd_fail(r, CDAG_ERR_FORMAT, &open, "unterminated comment: '/*' is never closed by '*/'");
        }
        if (p[0] == '*' && p[1] == '/') break;
        if (p[0] == '\n') {
          if (!*saw_nl) *nl_at = open;
          *saw_nl = 1;
          r->line++;
          r->line_start = p + 1;
        }
      }
      p += 2;
      continue;
    }
    break;
  }
  r->p = p;
  return CDAG_OK;
}

/* A byte no token starts with, at t (r->p is past it). */
static int bad_byte(reader *r, const token *t) {
  unsigned char u = (unsigned char)*t->s;
  if (u >= 0x20 && u < 0x7f) return rd_fail(r, CDAG_ERR_FORMAT, t, "unexpected character '%c'", (char)u);
  return rd_fail(r, CDAG_ERR_FORMAT, t, "unexpected byte 0x%02x%s", u,
                 u >= 0x80 ? " (the format is ASCII outside comments)" : "");
}

static int lex(reader *r, token *t);

/* Comments at p, then blanks and more comments, then the token after them; a block comment
   spanning lines is the end of line that ends the statement. Out of line so that lex's hot
   path, which only tail-calls, needs no stack frame (lexing is a third of loading GOAL). */
__attribute__((noinline)) static int lex_comment(reader *r, const char *p, token *t) {
  int saw_nl, rc;
  r->p = p;
  if ((rc = skip_blanks(r, t, &saw_nl))) return rc;
  return saw_nl ? CDAG_OK : lex(r, t);
}

/* The next token: blanks, then a word, a number or one character. */
static int lex(reader *r, token *t) {
  const char *p = r->p, *end = r->end;
  while (p < end && is_blank(*p)) p++;
  if (p < end && (*p == '#' || (*p == '/' && p + 1 < end && (p[1] == '/' || p[1] == '*'))))
    return lex_comment(r, p, t); /* skip_blanks leaves p after them: lex does not come back */
  t->s = p;
  t->line = r->line;
  t->col = col_of(r, p);
  if (p == end) {
    t->kind = T_EOF;
    t->len = 0;
    return CDAG_OK;
  }
  char c = *p;
  if (is_alnum(c) || (c == '-' && p + 1 < end && is_digit(p[1]))) {
    const char *q = p + 1;
    while (q < end && is_alnum(*q)) q++;
    t->kind = is_alpha(c) ? T_WORD : T_NUM;
    t->len = q - p;
    r->p = q;
    return CDAG_OK;
  }
  t->len = 1;
  r->p = p + 1;
  switch (c) {
    case '\n':
      t->kind = T_NL;
      r->line++;
      r->line_start = p + 1;
      return CDAG_OK;
    case ':': t->kind = T_COLON; return CDAG_OK;
    case '{': t->kind = T_LBRACE; return CDAG_OK;
    case '}': t->kind = T_RBRACE; return CDAG_OK;
    default: return bad_byte(r, t);
  }
}

static int next(reader *r) {
  if (r->has_ahead) {
    r->tok = r->ahead;
    r->has_ahead = 0;
    return CDAG_OK;
  }
  return lex(r, &r->tok);
}

static int peek(reader *r, const token **t) {
  if (!r->has_ahead) {
    int rc = lex(r, &r->ahead);
    if (rc) return rc;
    r->has_ahead = 1;
  }
  *t = &r->ahead;
  return CDAG_OK;
}

static int is_word(const token *t, const char *w) {
  size_t n = strlen(w);
  return t->kind == T_WORD && t->len == (int64_t)n && memcmp(t->s, w, n) == 0;
}

/* A type name: a word, or one the tokenizer read as a number since it starts with a digit
   (2int, 2float, 2double: no type name is a valid number, so nothing else changes). */
static int tok_type(const token *t) {
  return t->kind == T_WORD || t->kind == T_NUM ? ir_type_parse(t->s, t->len) : -1;
}

static int is_end(const token *t) { return t->kind == T_NL || t->kind == T_EOF || t->kind == T_RBRACE; }

/* ---- numbers ---- */

enum { NUM_OK, NUM_BAD, NUM_BIG };

/* Decimal or 0x hex, optional '-', optional 'b' size suffix (allow_b) on decimal numbers
   only: `0x1b` is 27, never 1 byte (a hex size takes its suffix after a space: `0x40 b`).
   *suffixed says if the suffix was there. Values beyond 2^63-1 are NUM_BIG. */
static int num_value(const token *t, int allow_b, int64_t *v, int *suffixed) {
  const char *s = t->s, *e = t->s + t->len;
  int neg = 0, base = 10;
  *suffixed = 0;
  if (t->kind != T_NUM) return NUM_BAD;
  if (*s == '-') {
    neg = 1;
    s++;
  }
  if (e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s += 2;
  }
  if (allow_b && base == 10 && e - s > 1 && e[-1] == 'b') {   /* in hex, 'b' is a digit */
    e--;
    *suffixed = 1;
  }
  if (s == e) return NUM_BAD;
  uint64_t x = 0, lim = (uint64_t)INT64_MAX / (uint64_t)base;
  int big = 0, fits = e - s <= (base == 10 ? 18 : 15);   /* 18 decimal, 15 hex digits: below 2^63 */
  for (; s < e; s++) { /* one pass: validate every digit, stop accumulating past 2^63-1 */
    unsigned c = (unsigned char)*s, d;
    if (c - '0' < 10u) d = c - '0';
    else if (base == 16 && (c | 0x20u) - 'a' < 6u) d = (c | 0x20u) - 'a' + 10;
    else return NUM_BAD;
    if (fits) x = x * (uint64_t)base + d;
    else if (big || x > lim || x * (uint64_t)base > (uint64_t)INT64_MAX - d) big = 1;
    else x = x * (uint64_t)base + d;
  }
  if (big) return NUM_BIG;
  *v = neg ? -(int64_t)x : (int64_t)x;
  return NUM_OK;
}

/* Why the token is not a number in lo..hi (k: what num_value said). */
static int num_error(reader *r, const token *t, int k, int64_t lo, int64_t hi, const char *what) {
  char b[200], w[160];
  if (k == NUM_BIG)
    return rd_fail(r, CDAG_ERR_FORMAT, t, "number %s is %s", tok_show(t, b, sizeof b),
                   t->len && t->s[0] == '-' ? "below -(2^63-1)" : "larger than 2^63-1");
  if (hi == INT64_MAX) snprintf(w, sizeof w, "%s", what);
  else snprintf(w, sizeof w, "%s in %lld..%lld", what, (long long)lo, (long long)hi);
  return expected(r, t, w);
}

/* The token as a number in lo..hi; `what` names it in the message. */
static int num_in_sfx(reader *r, const token *t, int allow_b, int64_t lo, int64_t hi, const char *what, int64_t *v,
                      int *suffixed) {
  int k = num_value(t, allow_b, v, suffixed);
  if (k == NUM_OK && *v >= lo && *v <= hi) return CDAG_OK;
  return num_error(r, t, k, lo, hi, what);
}

static int num_in(reader *r, const token *t, int allow_b, int64_t lo, int64_t hi, const char *what, int64_t *v) {
  int suffixed;
  return num_in_sfx(r, t, allow_b, lo, hi, what, v, &suffixed);
}

/* Reads a size: `Nb`, `N b` or `N`. */
static int read_size(reader *r, const char *what, int64_t *v) {
  int rc, suffixed;
  const token *ahead;
  if ((rc = next(r))) return rc;
  if ((rc = num_in_sfx(r, &r->tok, 1, 0, INT64_MAX, what, v, &suffixed))) return rc;
  if (suffixed) return CDAG_OK;
  if ((rc = peek(r, &ahead))) return rc;
  if (is_word(ahead, "b")) return next(r);
  return CDAG_OK;
}

/* A peer rank in 0..nprocs-1; a receive's -1 is a wildcard (unsupported). */
static int read_peer(reader *r, int send, int32_t *peer) {
  int64_t v;
  int rc, suffixed;
  const char *what = send ? "a destination rank" : "a source rank";
  if ((rc = next(r))) return rc;
  if (!send && r->tok.len == 2 && num_value(&r->tok, 0, &v, &suffixed) == NUM_OK && v == -1)
    return rd_fail(r, CDAG_ERR_UNSUPPORTED, &r->tok, "wildcard source '-1' (any source) is not supported");
  if ((rc = num_in(r, &r->tok, 0, 0, r->g->nprocs - 1, what, &v))) return rc;
  *peer = (int32_t)v;
  return CDAG_OK;
}

/* ---- fields after the fixed part of an op ---- */

enum { F_TAG, F_ADDR, F_CPU, F_NIC, F_IN, F_INOUT, F_FROM, F_TO, F_AT, F_SEG, F_OUT, F_ROOT, F_COMM, F_WAIT,
       F_NONBLOCKING, F_BLOCKS, F_FROM_STRIDE, F_TO_STRIDE, F_STRIDE, F_N };
static const char *const field_names[F_N] = {"tag", "addr", "cpu", "nic", "in", "inout", "from", "to", "at", "seg",
                                             "out", "root", "comm", "wait", "nonblocking", "blocks", "from_stride",
                                             "to_stride", "stride"};
#define BIT(f) (1u << (f))

/* The field the word in t names, or F_N. The first letter (and the length) leave one name to
   compare: this runs for every field of every op. */
static int field_of(const token *t) {
  int k;
  if (t->kind != T_WORD) return F_N;
  switch (t->s[0]) {
    case 't': k = t->len == 3 ? F_TAG : t->len == 2 ? F_TO : F_TO_STRIDE; break;
    case 'a': k = t->len == 4 ? F_ADDR : F_AT; break;
    case 'c': k = t->len == 3 ? F_CPU : F_COMM; break;
    case 'i': k = t->len == 2 ? F_IN : F_INOUT; break;
    case 'n': k = t->len == 3 ? F_NIC : F_NONBLOCKING; break;
    case 'f': k = t->len == 4 ? F_FROM : F_FROM_STRIDE; break;
    case 'b': k = F_BLOCKS; break;
    case 's': k = t->len == 3 ? F_SEG : F_STRIDE; break;
    case 'o': k = F_OUT; break;
    case 'r': k = F_ROOT; break;
    case 'w': k = F_WAIT; break;
    default: return F_N;
  }
  /* strncmp stops at the end of the name (a word has no NUL), so the name is long enough to index */
  return strncmp(t->s, field_names[k], (size_t)t->len) == 0 && field_names[k][t->len] == '\0' ? k : F_N;
}

typedef struct {
  int present[F_N];
  int64_t v[F_N];
  token t[F_N];   /* the value's token */
} fields;

/* The lists of a vector collective (`counts c0 c1 ..`; ir_add_collv): values back to back in
   v, list k at first[k] (len[k] values), kept by the reader across statements. */
enum { L_COUNTS, L_DISPLS, L_RECVCOUNTS, L_RECVDISPLS, L_N };
static const char *const list_names[L_N] = {"counts", "displs", "recvcounts", "recvdispls"};
typedef struct coll_lists {
  uint64_t *v;
  int64_t n, cap;
  int64_t first[L_N], len[L_N];
  token t[L_N];   /* the list's name */
} coll_lists;

/* A list named by r->tok, its numbers read; leaves the first token after them ahead (peeked).
   -1: r->tok names no list. */
static int read_list(reader *r) {
  coll_lists *cl = r->lists;
  int k = 0;
  while (k < L_N && !is_word(&r->tok, list_names[k])) k++;
  if (k == L_N) return -1;
  if (cl->len[k] >= 0) return rd_fail(r, CDAG_ERR_FORMAT, &r->tok, "duplicate '%s'", list_names[k]);
  cl->t[k] = r->tok;
  cl->first[k] = cl->n;
  cl->len[k] = 0;
  const token *ahead;
  int rc;
  while (!(rc = peek(r, &ahead)) && ahead->kind == T_NUM) {
    int64_t v;
    if ((rc = next(r)) || (rc = num_in(r, &r->tok, 0, 0, INT64_MAX, "a count or displacement", &v))) return rc;
    BASE_GROW(cl->v, cl->n, cl->cap, 1, "collective counts");
    cl->v[cl->n++] = (uint64_t)v;
    cl->len[k]++;
  }
  return rc;
}

/* The steps between a copy's or a computation's blocks when they are listed (`from_steps
   s1 ..`, `to_steps s1 ..`; a computation's `steps s1 ..`): block i sits s1 + .. + si bytes
   from block 0, either way. As read, side k is runs (v, d, count: count steps v, v + d, ..)
   in r->lv from first[k], nruns[k] of them, len[k] steps in all; once their count is checked
   against the line's blocks (steps_ok), the steps themselves in r->sv from first[k]. So a
   line's size, not what its runs claim, bounds what is stored before the check. */
enum { S_FROM, S_TO, S_N };
typedef struct step_lists {
  int compute;              /* a computation's: `steps` only */
  int64_t first[S_N], len[S_N], nruns[S_N];
  token t[S_N];             /* the list's name */
} step_lists;

/* A decimal up to 2^63-1 at *p (a sign first when signed): its value, *p past it; 0 and *p
   unmoved when there is none (or it is larger). */
static int run_decimal(const char **p, const char *e, int sign, int64_t *v) {
  const char *q = *p;
  int neg = sign && q < e && *q == '-';
  q += neg;
  int64_t x = 0;
  const char *digits = q;
  for (; q < e && is_digit(*q); q++)
    if (ckd_mul(&x, x, 10) || ckd_add(&x, x, *q - '0')) return 0;
  if (q == digits) return 0;
  *v = neg ? -x : x;
  *p = q;
  return 1;
}

/* A step written as a run, right after its number v (r->tok): `v*N`, N steps of v, or
   `v+D*N`, N steps v, v + D, .., v + (N-1)·D (an indexed type's growing displacements); *n 1
   for a plain step. r->tok then spans the run; N is bounded by the blocks left to load. */
static int step_run(reader *r, int64_t v, int64_t left, int64_t *d, int64_t *n) {
  const char *p = r->p, *e = r->end;
  *d = 0, *n = 1;
  if (p >= e || (*p != '*' && *p != '+')) return CDAG_OK;
  int ok = *p == '*' || (p++, run_decimal(&p, e, 1, d) && p < e && *p == '*');
  ok = ok && (p++, run_decimal(&p, e, 0, n)) && (p == e || (!is_alnum(*p) && *p != '*' && *p != '+'));
  r->tok.len = p - r->tok.s;
  r->p = p;
  if (!ok) return rd_fail(r, CDAG_ERR_FORMAT, &r->tok, "a run of steps is 'S*N' or 'S+D*N' (N steps from S, D apart)");
  int64_t last;
  if (*n < 1) return rd_fail(r, CDAG_ERR_FORMAT, &r->tok, "a run of %lld steps: N is at least 1", (long long)*n);
  if (*n > left)
    return rd_fail(r, CDAG_ERR_FORMAT, &r->tok, "a run of %lld steps: more than the %lld blocks the loader may still "
                   "make of this file", (long long)*n, (long long)left);
  if (ckd_mul(&last, *d, *n - 1) || ckd_add(&last, last, v) || last < -INT64_MAX)
    return rd_fail(r, CDAG_ERR_FORMAT, &r->tok, "the run's last step is out of range");
  return CDAG_OK;
}

/* A list of steps named by r->tok, its numbers read (as read_list); -1: r->tok names none. */
static int read_steps(reader *r) {
  step_lists *sl = r->steps;
  int k = sl->compute ? (is_word(&r->tok, "steps") ? S_TO : -1)
                      : is_word(&r->tok, "from_steps") ? S_FROM : is_word(&r->tok, "to_steps") ? S_TO : -1;
  if (k < 0) return -1;
  if (sl->len[k] >= 0) return rd_fail(r, CDAG_ERR_FORMAT, &r->tok, "duplicate '%.*s'", (int)r->tok.len, r->tok.s);
  int64_t n = sl->nruns[S_FROM] > 0 ? sl->first[S_FROM] + 3 * sl->nruns[S_FROM] : 0;
  if (sl->nruns[S_TO] > 0 && sl->first[S_TO] + 3 * sl->nruns[S_TO] > n) n = sl->first[S_TO] + 3 * sl->nruns[S_TO];
  sl->t[k] = r->tok;
  sl->first[k] = n;
  sl->len[k] = 0;
  const token *ahead;
  int rc;
  while (!(rc = peek(r, &ahead)) && ahead->kind == T_NUM) {
    int64_t v, d, count;
    if ((rc = next(r)) || (rc = num_in(r, &r->tok, 0, -INT64_MAX, INT64_MAX, "a step", &v))) return rc;
    if ((rc = step_run(r, v, r->blocks_left - sl->len[k], &d, &count))) return rc;
    BASE_GROW(r->lv, n, r->lvcap, 3, "steps");
    r->lv[n++] = (uint64_t)v, r->lv[n++] = (uint64_t)d, r->lv[n++] = (uint64_t)count;
    sl->len[k] += count;
    sl->nruns[k]++;
  }
  return rc;
}

/* Reads `name value` pairs allowed by mask until the end of the statement, which is left in
   r->tok. expect_text lists what may come (for the message). `wait` (a flag, no value) may
   end any operation: ops pass F_WAIT in mask; `nonblocking` (a flag too) ends native
   collectives. */
static int read_fields(reader *r, unsigned mask, const char *expect_text, fields *f) {
  int rc;
  memset(f->present, 0, sizeof f->present);
  for (;;) {
    if ((rc = next(r))) return rc;
    if (is_end(&r->tok)) return CDAG_OK;
    int k = field_of(&r->tok);
    if (k == F_N && (r->lists || r->steps)) {
      if ((rc = r->lists ? read_list(r) : read_steps(r)) != -1) {
        if (rc) return rc;
        continue;
      }
    }
    if (k == F_N || !(mask & BIT(k))) return expected(r, &r->tok, expect_text);
    if (f->present[k]) return rd_fail(r, CDAG_ERR_FORMAT, &r->tok, "duplicate '%s'", field_names[k]);
    if (k == F_WAIT || k == F_NONBLOCKING) {
      f->present[k] = 1;
      f->t[k] = r->tok;
      continue;
    }
    if ((rc = next(r))) return rc;
    int suffixed, nv = num_value(&r->tok, 0, &f->v[k], &suffixed);
    if (nv == NUM_BIG) return num_in(r, &r->tok, 0, 0, INT64_MAX, "", &f->v[k]);
    if (nv != NUM_OK) {
      char w[64];
      snprintf(w, sizeof w, "a number after '%s'", field_names[k]);
      return expected(r, &r->tok, w);
    }
    f->present[k] = 1;
    f->t[k] = r->tok;
  }
}

/* Checks a field's value against lo..hi (when present); dflt when absent. */
static int field_in(reader *r, const fields *f, int k, int64_t lo, int64_t hi, const char *what, int64_t dflt,
                    int64_t *v) {
  *v = dflt;
  if (!f->present[k]) return CDAG_OK;
  if (k == F_TAG && f->v[k] == -1)
    return rd_fail(r, CDAG_ERR_UNSUPPORTED, &f->t[k], "wildcard tag '-1' (any tag) is not supported");
  if (f->v[k] >= lo && f->v[k] <= hi) { /* read_fields parsed it */
    *v = f->v[k];
    return CDAG_OK;
  }
  return num_in(r, &f->t[k], 0, lo, hi, what, v);   /* the message */
}

static int require_field(reader *r, const fields *f, int k) {
  char w[32];
  if (f->present[k]) return CDAG_OK;
  snprintf(w, sizeof w, "'%s'", field_names[k]);
  return expected(r, &r->tok, w);
}

/* ---- labels of the open block ---- */

static uint32_t label_hash(const char *s, int64_t len) {
  uint64_t h = 0xcbf29ce484222325u;   /* FNV-1a, then a multiply-xorshift: low bits pick the slot */
  for (int64_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3u;
  h ^= h >> 32;
  h *= 0xd6e8feb86659fd93u;
  return (uint32_t)(h ^ (h >> 32));
}

/* A block opens with no labels; its ops are first_op and up. */
static void labels_open_block(label_map *m, int64_t first_op) {
  m->first_op = first_op;
  m->used = 0;
}

/* Is the label the graph keeps for op the word s (len bytes, no NUL)? strncmp stops at the end
   of a shorter label, so l[len] is inside it when the first len bytes agree. */
static int same_label(const cdag_graph *g, int32_t op, const char *s, int64_t len) {
  const char *l = ir_label(g, op);
  return l && strncmp(l, s, (size_t)len) == 0 && l[len] == '\0';
}

/* The slot of the open block holding the label, or the free slot where it would go (at most
   half the slots are taken, so there is one). */
static label_slot *labels_slot(const label_map *m, const cdag_graph *g, const char *s, int64_t len, uint32_t hash) {
  for (uint64_t i = hash & m->mask;; i = (i + 1) & m->mask) {
    label_slot *e = &m->slot[i];
    if (e->op <= m->first_op || (e->hash == hash && same_label(g, e->op - 1, s, len))) return e;
  }
}

/* Doubles the table (the first has 64 slots), keeping the open block's labels. */
static int labels_grow(label_map *m) {
  uint64_t n = m->slot ? 2 * (m->mask + 1) : 64;
  label_map bigger = {calloc(n, sizeof(label_slot)), n - 1, m->used, m->first_op};
  if (!bigger.slot) return CDAG_NOMEM("labels");
  for (uint64_t i = 0; m->slot && i <= m->mask; i++) {
    if (m->slot[i].op <= m->first_op) continue;
    uint64_t j = m->slot[i].hash & bigger.mask;   /* its labels differ: the first free slot */
    while (bigger.slot[j].op) j = (j + 1) & bigger.mask;
    bigger.slot[j] = m->slot[i];
  }
  free(m->slot);
  *m = bigger;
  return CDAG_OK;
}

/* Defines the label t of op id in the open block, before ir_set_label; *first: the op that
   already has it, or -1. */
static int labels_add(label_map *m, const cdag_graph *g, const token *t, int32_t id, int32_t *first) {
  int rc;
  if ((!m->slot || (m->used + 1) * 2 > m->mask + 1) && (rc = labels_grow(m))) return rc;
  uint32_t hash = label_hash(t->s, t->len);
  label_slot *e = labels_slot(m, g, t->s, t->len, hash);
  *first = e->op > m->first_op ? e->op - 1 : -1;
  if (*first < 0) {
    *e = (label_slot){hash, id + 1};
    m->used++;
  }
  return CDAG_OK;
}

static void labels_free(label_map *m) {
  free(m->slot);
  m->slot = NULL;
}

/* The op the label t names in the open block, or -1. */
static int32_t labels_find(const label_map *m, const cdag_graph *g, const token *t) {
  if (!m->slot) return -1;
  const label_slot *e = labels_slot(m, g, t->s, t->len, label_hash(t->s, t->len));
  return e->op > m->first_op ? e->op - 1 : -1;
}

/* ---- ops ---- */

static void note_range(reader *r, uint64_t addr, uint64_t len) {
  if (addr + len > r->max_end) r->max_end = addr + len;
}

static int push_fresh(reader *r, int32_t id) {
  BASE_GROW(r->fresh, r->nfresh, r->freshcap, 1, "fresh buffers");
  r->fresh[r->nfresh++] = id;
  return CDAG_OK;
}

/* After an ir_add_*: line, label (unique in the block), cpu/nic. */
static int finish_op(reader *r, int rc, int32_t id, const token *kw, const token *label, const fields *f) {
  if (rc) return rd_wrap(r, rc, kw);
  cdag_graph *g = r->g;
  if ((rc = ir_set_line(g, id, label ? label->line : kw->line))) return rc;
  if (label) {
    int32_t first;
    if ((rc = labels_add(&r->labels, g, label, id, &first))) return rc;
    if (first >= 0)
      return rd_fail(r, CDAG_ERR_FORMAT, label, "duplicate label '%.*s' in rank %d (first defined at line %u)",
                     (int)(label->len > 64 ? 64 : label->len), label->s, r->rank, g->line[first]);
    if ((rc = ir_set_label(g, id, label->s, label->len))) return rc;
  }
  int64_t cpu, nic;
  if ((rc = field_in(r, f, F_CPU, 0, INT32_MAX, "a cpu number", -1, &cpu))) return rc;
  if ((rc = field_in(r, f, F_NIC, 0, INT32_MAX, "a nic number", -1, &nic))) return rc;
  if (f->present[F_WAIT] && (rc = ir_set_join(g, id, IR_JOIN_AFTER))) return rc;
  if (f->present[F_CPU] || f->present[F_NIC]) return ir_set_goal(g, id, (int32_t)cpu, (int32_t)nic);
  return CDAG_OK;
}

/* send SIZE to PEER [tag T] [addr A] [cpu C] [nic N]   (recv: from PEER) */
static int read_p2p(reader *r, ir_kind kind, const token *kw, const token *label) {
  int64_t bytes, tag, addr;
  int32_t peer = 0, id = -1;
  fields f;
  int rc, send = kind == IR_SEND;
  if ((rc = read_size(r, "a size in bytes (e.g. 64b)", &bytes))) return rc;
  if ((rc = next(r))) return rc;
  if (!is_word(&r->tok, send ? "to" : "from")) return expected(r, &r->tok, send ? "'to'" : "'from'");
  if ((rc = read_peer(r, send, &peer))) return rc;
  if ((rc = read_fields(r, BIT(F_WAIT) | BIT(F_TAG) | BIT(F_ADDR) | BIT(F_CPU) | BIT(F_NIC),
                        "'tag', 'addr', 'cpu', 'nic' or end of line", &f)))
    return rc;
  if ((rc = field_in(r, &f, F_TAG, 0, INT32_MAX, "a tag", 0, &tag))) return rc;
  if ((rc = field_in(r, &f, F_ADDR, 0, INT64_MAX, "an address", 0, &addr))) return rc;
  rc = send ? ir_add_send(r->g, r->rank, (uint64_t)addr, (uint64_t)bytes, peer, (int)tag, &id)
            : ir_add_recv(r->g, r->rank, (uint64_t)addr, (uint64_t)bytes, peer, (int)tag, &id);
  if ((rc = finish_op(r, rc, id, kw, label, &f))) return rc;
  if (f.present[F_ADDR]) note_range(r, (uint64_t)addr, (uint64_t)bytes);
  else if (r->goal_buffers != IR_GOAL_SHARED) return push_fresh(r, id);
  return CDAG_OK;
}

static int add_coll_op(reader *r, int kind, const token *kw, const token *label, fields *f, int64_t count, int type,
                       int rop, struct coll_lists *cl);
static int coll_fields_ok(reader *r, int kind, const fields *f, int is_root);

/* reduce COUNT TYPE OP root R in A [out B] [comm C]: MPI_Reduce, told from the local reduce
   by its root. */
static int native_reduce(reader *r, const token *kw, const token *label, fields *f, int64_t count, int type, int rop) {
  if (f->present[F_INOUT] || f->present[F_CPU] || f->present[F_NIC])
    return rd_fail(r, CDAG_ERR_FORMAT, &f->t[F_ROOT], "a native reduce (with 'root') takes 'in', 'out' and 'comm'");
  return add_coll_op(r, IR_COLL_REDUCE, kw, label, f, count, type, rop, NULL);
}

/* COUNT TYPE OP of a local reduce or an accumulate (`what`): an element count, a type and a
   reduction defined for it, the count's bytes within 2^63-1. */
static int read_count_type_op(reader *r, const char *what, int64_t *count, int *type, int *rop) {
  int rc;
  if ((rc = next(r))) return rc;
  token count_tok = r->tok;
  if ((rc = num_in(r, &count_tok, 0, 0, INT64_MAX, "an element count", count))) return rc;
  if ((rc = next(r))) return rc;
  *type = tok_type(&r->tok);
  if (*type < 0) return expected(r, &r->tok, "a type (int8, ..., double, a pair such as 2int, or complex_float/double)");
  if ((rc = next(r))) return rc;
  *rop = r->tok.kind == T_WORD ? ir_rop_parse(r->tok.s, r->tok.len) : -1;
  if (*rop < 0) return expected(r, &r->tok, "a reduction (sum, prod, min, max, band, bor, bxor, land, lor, lxor)");
  if (!ir_rop_valid_for(*rop, *type))
    return rd_fail(r, CDAG_ERR_FORMAT, &r->tok, "reduction '%s' is not defined for type '%s'", ir_rop_name(*rop),
                   ir_type_name(*type));
  if (*count > INT64_MAX / ir_type_size(*type))
    return rd_fail(r, CDAG_ERR_FORMAT, &count_tok, "%s count %lld of %s is more than 2^63-1 bytes", what,
                   (long long)*count, ir_type_name(*type));
  return CDAG_OK;
}

/* reduce COUNT TYPE OP in A inout B [cpu C] [nic N] */
static int read_reduce(reader *r, const token *kw, const token *label) {
  int64_t count, in, inout;
  int32_t id = -1;
  fields f;
  int rc;
  int type = 0, rop = 0;
  if ((rc = read_count_type_op(r, "reduce", &count, &type, &rop))) return rc;
  if ((rc = read_fields(r, BIT(F_WAIT) | BIT(F_IN) | BIT(F_INOUT) | BIT(F_CPU) | BIT(F_NIC) | BIT(F_ROOT) | BIT(F_OUT) |
                        BIT(F_COMM) | BIT(F_NONBLOCKING), "'in', 'inout', 'root', 'cpu', 'nic' or end of line", &f)))
    return rc;
  if (f.present[F_ROOT]) return native_reduce(r, kw, label, &f, count, type, rop);
  if (f.present[F_OUT] || f.present[F_COMM] || f.present[F_NONBLOCKING]) {
    int k = f.present[F_OUT] ? F_OUT : f.present[F_COMM] ? F_COMM : F_NONBLOCKING;
    return rd_fail(r, CDAG_ERR_FORMAT, &f.t[k], "'out', 'comm' and 'nonblocking' belong to the native reduce, which "
                   "names its 'root'");
  }
  if ((rc = require_field(r, &f, F_IN)) || (rc = require_field(r, &f, F_INOUT))) return rc;
  if ((rc = field_in(r, &f, F_IN, 0, INT64_MAX, "an address", 0, &in))) return rc;
  if ((rc = field_in(r, &f, F_INOUT, 0, INT64_MAX, "an address", 0, &inout))) return rc;
  rc = ir_add_reduce(r->g, r->rank, (uint64_t)in, (uint64_t)inout, (uint64_t)count, type, rop, &id);
  if ((rc = finish_op(r, rc, id, kw, label, &f))) return rc;
  uint64_t bytes = (uint64_t)count * (uint64_t)ir_type_size(type);
  note_range(r, (uint64_t)in, bytes);
  note_range(r, (uint64_t)inout, bytes);
  return CDAG_OK;
}

/* Op id, the k-th of a line loaded as one op per block: the first finished as the line's op
   (label, cpu, nic), the others given its line and its `wait` (each a join, so later ops
   follow every block, not the first alone). */
static int finish_block(reader *r, int rc, int64_t k, int32_t id, const token *kw, const token *label, const fields *f) {
  if (k == 0) return finish_op(r, rc, id, kw, label, f);
  if (rc || (rc = ir_set_line(r->g, id, kw->line))) return rd_wrap(r, rc, kw);
  return f->present[F_WAIT] ? ir_set_join(r->g, id, IR_JOIN_AFTER) : CDAG_OK;
}

/* A stride of a copy's side k (F_FROM_STRIDE, F_TO_STRIDE): at least the block length len
   either way (blocks run backwards from the address under a negative one), default len. */
static int copy_stride(reader *r, const fields *f, int k, int64_t len, int64_t *v) {
  int rc = field_in(r, f, k, -INT64_MAX, INT64_MAX, "a stride", len, v);
  if (rc == CDAG_OK && (*v < 0 ? -*v : *v) < len)
    return rd_fail(r, CDAG_ERR_FORMAT, &f->t[k], "expected a stride (at least the block length %lld, or at most "
                   "minus it), found '%lld'", (long long)len, (long long)*v);
  return rc;
}

/* The blocks of a strided copy of `bytes`: `blocks N` (default 1), `from_stride` and
   `to_stride` (default the block length, bytes / N, which N must divide), either negative. */
static int copy_blocks(reader *r, const fields *f, int64_t bytes, int64_t n_max, int64_t *n, int64_t *len,
                       int64_t *from, int64_t *to) {
  int rc;
  if ((rc = field_in(r, f, F_BLOCKS, 1, INT64_MAX, "a block count (at least 1)", 1, n))) return rc;
  if (bytes % *n)
    return rd_fail(r, CDAG_ERR_FORMAT, &f->t[F_BLOCKS], "%lld blocks do not divide the copy's %lld bytes",
                   (long long)*n, (long long)bytes);
  *len = bytes / *n;
  if (!f->present[F_BLOCKS] && (f->present[F_FROM_STRIDE] || f->present[F_TO_STRIDE]))
    return rd_fail(r, CDAG_ERR_FORMAT, &f->t[f->present[F_FROM_STRIDE] ? F_FROM_STRIDE : F_TO_STRIDE],
                   "a stride needs 'blocks'");
  if ((rc = copy_stride(r, f, F_FROM_STRIDE, *len, from)) || (rc = copy_stride(r, f, F_TO_STRIDE, *len, to))) return rc;
  if ((*from < 0) != (*to < 0) && *n > n_max)
    return rd_fail(r, CDAG_ERR_FORMAT, &f->t[F_BLOCKS], "%lld blocks of a copy with strides of both signs: more "
                   "operations of blocks than the loader makes of one file (%lld left)", (long long)*n, (long long)n_max);
  return CDAG_OK;
}

/* Do len bytes at `at` lie in 0..2^63-1 (the last one at most 2^63-1)? */
static int block_in_range(int64_t at, int64_t len) { return at >= 0 && (uint64_t)at + (uint64_t)len <= (uint64_t)INT64_MAX + 1; }

/* The lowest address of n blocks of len bytes from `at` at `stride` (either sign): at, or
   the last block's when they run backwards; -1 when a block lies outside 0..2^63-1. */
static int64_t lowest_block(int64_t at, int64_t n, int64_t stride, int64_t len) {
  int64_t span, lo = at, hi = at;   /* the lowest block's address, the highest's */
  if (ckd_mul(&span, n - 1, stride < 0 ? -stride : stride) ||
      (stride < 0 ? ckd_sub(&lo, at, span) : ckd_add(&hi, at, span)))
    return -1;
  return lo < 0 || !block_in_range(hi, len) ? -1 : lo;
}

/* The runs of sl's lists as their steps, in r->sv (first[k] then indexes there). */
static int expand_steps(reader *r, step_lists *sl) {
  int64_t at = 0;
  BASE_GROW(r->sv, 0, r->svcap, (sl->len[S_FROM] > 0 ? sl->len[S_FROM] : 0) + (sl->len[S_TO] > 0 ? sl->len[S_TO] : 0),
            "steps");
  for (int k = 0; k < S_N; k++) {
    if (sl->len[k] < 0) continue;
    const uint64_t *run = sl->nruns[k] ? r->lv + sl->first[k] : NULL;   /* no runs: maybe no list at all */
    sl->first[k] = at;
    for (int64_t j = 0; j < sl->nruns[k]; j++, run += 3)
      for (int64_t i = 0; i < (int64_t)run[2]; i++) r->sv[at++] = (int64_t)run[0] + i * (int64_t)run[1];
  }
  return CDAG_OK;
}

/* Checks the lists of steps sl against n blocks and the strides given (field fs, ft, F_N
   none): each n - 1 steps, never with its side's stride, never without `blocks`, n within
   what the file may expand to; then the steps expanded (expand_steps). */
static int steps_ok(reader *r, const fields *f, step_lists *sl, int64_t n, int fs, int ft) {
  const int field[S_N] = {fs, ft};
  for (int k = 0; k < S_N; k++) {
    if (sl->len[k] < 0) continue;
    if (!f->present[F_BLOCKS]) return rd_fail(r, CDAG_ERR_FORMAT, &sl->t[k], "steps need 'blocks'");
    if (field[k] != F_N && f->present[field[k]])
      return rd_fail(r, CDAG_ERR_FORMAT, &sl->t[k], "'%s' and '%.*s' both given", field_names[field[k]],
                     (int)sl->t[k].len, sl->t[k].s);
    if (sl->len[k] != n - 1)
      return rd_fail(r, CDAG_ERR_FORMAT, &sl->t[k], "%lld blocks need %lld steps, found %lld", (long long)n,
                     (long long)(n - 1), (long long)sl->len[k]);
  }
  if (n > r->blocks_left)
    return rd_fail(r, CDAG_ERR_FORMAT, &f->t[F_BLOCKS], "%lld listed blocks: more operations of blocks than the "
                   "loader makes of one file (%lld left)", (long long)n, (long long)r->blocks_left);
  r->blocks_left -= n;
  return expand_steps(r, sl);
}

/* Moves *at to block k (> 0) of side `side`: by its k-th step when listed, else by stride;
   -1 when the block leaves 0..2^63-1. */
static int step_to(const reader *r, const step_lists *sl, int side, int64_t k, int64_t stride, int64_t len, int64_t *at) {
  int64_t d = sl->len[side] >= 0 ? r->sv[sl->first[side] + k - 1] : stride;
  return ckd_add(at, *at, d) || !block_in_range(*at, len) ? -1 : 0;
}

/* Side k's n blocks of len bytes from at (by its listed steps, else by stride) as offsets
   from the lowest into off; *base the lowest. The first block that leaves 0..2^63-1, -1
   none. */
static int64_t side_offsets(const reader *r, const step_lists *sl, int side, int64_t n, int64_t stride, int64_t len,
                            int64_t at, uint64_t *off, int64_t *base) {
  int64_t lo = at;
  if (!block_in_range(at, len)) return 0;
  off[0] = (uint64_t)at;
  for (int64_t k = 1; k < n; k++) {
    if (step_to(r, sl, side, k, stride, len, &at)) return k;
    off[k] = (uint64_t)at;
    if (at < lo) lo = at;
  }
  for (int64_t k = 0; k < n; k++) off[k] -= (uint64_t)lo;
  *base = lo;
  return -1;
}

/* A copy with listed steps as one op of listed blocks (ir_add_copy_listed, which keeps a side
   that is one stride as that stride); -1 when its blocks overlap within a side or across
   (then it loads as a copy per block, in order). A side at a positive stride keeps it. */
static int listed_copy(reader *r, const step_lists *sl, const fields *f, int64_t n, int64_t len, const int64_t at[2],
                       const int64_t stride[2], const token *kw, const token *label) {
  uint64_t *off = malloc((size_t)n * 2 * sizeof *off);
  int64_t base[2];
  int rc = off ? CDAG_OK : CDAG_NOMEM("listed blocks"), keep[2];
  for (int k = 0; k < 2 && rc == CDAG_OK; k++) {
    keep[k] = sl->len[k] < 0 && stride[k] > 0;
    base[k] = at[k];
    int64_t bad = keep[k] ? (lowest_block(at[k], n, stride[k], len) < 0 ? n - 1 : -1)
                          : side_offsets(r, sl, k, n, stride[k], len, at[k], off + k * n, &base[k]);
    if (bad >= 0)
      rc = rd_fail(r, CDAG_ERR_FORMAT, &f->t[F_BLOCKS], "block %lld of the copy lies beyond 0..2^63-1", (long long)bad);
  }
  int32_t id = -1;
  if (rc == CDAG_OK) {
    rc = ir_add_copy_listed(r->g, r->rank, (uint64_t)base[0], (uint64_t)base[1], (uint64_t)n, (uint64_t)len,
                            keep[0] ? NULL : off, (uint64_t)stride[0], keep[1] ? NULL : off + n, (uint64_t)stride[1], &id);
    if (rc == CDAG_ERR_ARG) rc = -1, cdag__error_clear();   /* blocks that overlap: a copy each */
    else rc = finish_op(r, rc, id, kw, label, f);
  }
  if (rc == CDAG_OK) {
    ir_blocks b = ir_copy_blocks(r->g, id);
    note_range(r, (uint64_t)base[0], b.from_last + b.len);
    note_range(r, (uint64_t)base[1], b.to_last + b.len);
  }
  free(off);
  return rc;
}

/* A copy whose blocks run backwards on one side (a negative stride there) as one op, that side
   listed from its lowest block; -1 when its blocks meet (then a copy per block, in order). */
static int backwards_copy(reader *r, const fields *f, int64_t n, int64_t len, int64_t src, int64_t dst, int64_t from,
                          int64_t to, const token *kw, const token *label) {
  int back = from < 0 ? 0 : 1;   /* the side that runs backwards */
  int64_t step = back ? -to : -from, base = (back ? dst : src) - (n - 1) * step;   /* lowest_block checked it */
  uint64_t *off = malloc((size_t)n * sizeof *off);
  if (!off) return CDAG_NOMEM("blocks");
  for (int64_t k = 0; k < n; k++) off[k] = (uint64_t)((n - 1 - k) * step);
  int32_t id = -1;
  int rc = ir_add_copy_listed(r->g, r->rank, (uint64_t)(back ? src : base), (uint64_t)(back ? base : dst), (uint64_t)n,
                              (uint64_t)len, back ? NULL : off, (uint64_t)from, back ? off : NULL, (uint64_t)to, &id);
  free(off);
  if (rc == CDAG_ERR_ARG) {   /* blocks that meet: a copy each */
    cdag__error_clear();
    return -1;
  }
  return finish_op(r, rc, id, kw, label, f);
}

/* copy SIZE from A to B [blocks N [from_stride S] [to_stride T]] [cpu C] [nic N]. The order
   of a copy's blocks is no part of it: strides both negative are loaded as the same blocks
   forwards from the last; a negative stride on one side only lists that side
   (backwards_copy), and blocks at listed steps (`from_steps`, `to_steps`) stay listed
   (listed_copy). Either counts its blocks against the file's length as a computation's
   (compute_blocks), and loads as N copies of a block each (the first with the label, cpu
   and nic) when its blocks meet. */
static int read_copy(reader *r, const token *kw, const token *label) {
  int64_t bytes, src, dst, n = 1, len = 0, from = 0, to = 0;
  int32_t id = -1;
  fields f;
  step_lists sl = {0, {0, 0}, {-1, -1}, {0, 0}, {{0}, {0}}};
  int rc;
  if ((rc = read_size(r, "a size in bytes (e.g. 64b)", &bytes))) return rc;
  r->steps = &sl;
  rc = read_fields(r, BIT(F_WAIT) | BIT(F_FROM) | BIT(F_TO) | BIT(F_CPU) | BIT(F_NIC) | BIT(F_BLOCKS) |
                   BIT(F_FROM_STRIDE) | BIT(F_TO_STRIDE),
                   "'from', 'to', 'blocks', 'from_stride', 'to_stride', 'from_steps', 'to_steps', 'cpu', 'nic' or end "
                   "of line", &f);
  r->steps = NULL;
  if (rc) return rc;
  if ((rc = require_field(r, &f, F_FROM)) || (rc = require_field(r, &f, F_TO))) return rc;
  if ((rc = field_in(r, &f, F_FROM, 0, INT64_MAX, "an address", 0, &src))) return rc;
  if ((rc = field_in(r, &f, F_TO, 0, INT64_MAX, "an address", 0, &dst))) return rc;
  if ((rc = copy_blocks(r, &f, bytes, r->blocks_left, &n, &len, &from, &to))) return rc;
  if (sl.len[S_FROM] >= 0 || sl.len[S_TO] >= 0) {
    if ((rc = steps_ok(r, &f, &sl, n, F_FROM_STRIDE, F_TO_STRIDE))) return rc;
    if ((rc = listed_copy(r, &sl, &f, n, len, (int64_t[2]){src, dst}, (int64_t[2]){from, to}, kw, label)) != -1) return rc;
    for (int64_t k = 0; k < n; k++) {
      if (k && (step_to(r, &sl, S_FROM, k, from, len, &src) || step_to(r, &sl, S_TO, k, to, len, &dst)))
        return rd_fail(r, CDAG_ERR_FORMAT, &f.t[F_BLOCKS], "block %lld of the copy lies beyond 0..2^63-1", (long long)k);
      rc = ir_add_copy(r->g, r->rank, (uint64_t)src, (uint64_t)dst, (uint64_t)len, &id);
      if ((rc = finish_block(r, rc, k, id, kw, label, &f))) return rc;
      note_range(r, (uint64_t)src, (uint64_t)len);
      note_range(r, (uint64_t)dst, (uint64_t)len);
    }
    return CDAG_OK;
  }
  /* one block: any range (the graph refuses one that wraps), as a send's */
  int64_t slo = n > 1 ? lowest_block(src, n, from, len) : src, dlo = n > 1 ? lowest_block(dst, n, to, len) : dst;
  if (slo < 0 || dlo < 0)
    return rd_fail(r, CDAG_ERR_FORMAT, &f.t[F_BLOCKS], "the copy's blocks reach beyond 0..2^63-1");
  if (from < 0 && to < 0) src = slo, dst = dlo, from = -from, to = -to;
  if ((from < 0 || to < 0) && (rc = backwards_copy(r, &f, n, len, src, dst, from, to, kw, label)) != -1) {
    if (rc) return rc;
    r->blocks_left -= n;
  } else if (from < 0 || to < 0) {
    r->blocks_left -= n;
    for (int64_t k = 0; k < n; k++) {
      rc = ir_add_copy(r->g, r->rank, (uint64_t)(src + k * from), (uint64_t)(dst + k * to), (uint64_t)len, &id);
      if ((rc = finish_block(r, rc, k, id, kw, label, &f))) return rc;
    }
  } else {
    rc = ir_add_copy_strided(r->g, r->rank, (uint64_t)src, (uint64_t)dst, (uint64_t)n, (uint64_t)len, (uint64_t)from,
                             (uint64_t)to, &id);
    if ((rc = finish_op(r, rc, id, kw, label, &f))) return rc;
  }
  /* unsigned: the span may be 2^63 exactly (blocks from 0 whose last byte is 2^63-1) */
  note_range(r, (uint64_t)slo, (uint64_t)(n - 1) * (uint64_t)(from < 0 ? -from : from) + (uint64_t)len);
  note_range(r, (uint64_t)dlo, (uint64_t)(n - 1) * (uint64_t)(to < 0 ? -to : to) + (uint64_t)len);
  return CDAG_OK;
}

/* calc COST [cpu C] [nic N] */
static int read_calc(reader *r, const token *kw, const token *label) {
  int64_t cost;
  int32_t id = -1;
  fields f;
  int rc;
  if ((rc = next(r))) return rc;
  if ((rc = num_in(r, &r->tok, 0, 0, INT64_MAX, "a compute cost", &cost))) return rc;
  if ((rc = read_fields(r, BIT(F_WAIT) | BIT(F_CPU) | BIT(F_NIC), "'cpu', 'nic' or end of line", &f))) return rc;
  rc = ir_add_calc(r->g, r->rank, (uint64_t)cost, &id);
  return finish_op(r, rc, id, kw, label, &f);
}

/* `SIZE at A` of a computation's reads or writes. */
static int read_range_at(reader *r, const char *what, int64_t *len, int64_t *addr) {
  int rc;
  if ((rc = read_size(r, "a size in bytes (e.g. 64b)", len))) return rc;
  if ((rc = next(r))) return rc;
  if (!is_word(&r->tok, "at")) return expected(r, &r->tok, "'at'");
  if ((rc = next(r))) return rc;
  return num_in(r, &r->tok, 0, 0, INT64_MAX, what, addr);
}

/* The blocks a computation writes: `blocks N [stride D]` after its `writes S at B`: N blocks
   of S / N bytes (N divides S), block i at B + i * D (D at least the block length, default
   it). The blocks of a file's lines are at most max_blocks (format.h), all lines together,
   whether they stay one op or not. */
static int compute_blocks(reader *r, const fields *f, int64_t wlen, int64_t waddr, ir_blocks *b) {
  int64_t n, d;
  int rc;
  *b = ir_one_block((uint64_t)wlen);
  if (!f->present[F_BLOCKS]) {
    if (f->present[F_STRIDE]) return rd_fail(r, CDAG_ERR_FORMAT, &f->t[F_STRIDE], "a stride needs 'blocks'");
    return CDAG_OK;
  }
  if (!wlen) return rd_fail(r, CDAG_ERR_FORMAT, &f->t[F_BLOCKS], "'blocks' of a computation need bytes it writes ('writes N at A', N > 0)");
  if ((rc = field_in(r, f, F_BLOCKS, 1, INT64_MAX, "a block count (at least 1)", 1, &n))) return rc;
  if (wlen % n)
    return rd_fail(r, CDAG_ERR_FORMAT, &f->t[F_BLOCKS], "%lld blocks do not divide the %lld bytes written", (long long)n,
                   (long long)wlen);
  int64_t len = wlen / n, span;
  if ((rc = field_in(r, f, F_STRIDE, len, INT64_MAX, "a stride (at least the block length)", len, &d))) return rc;
  if (n > r->blocks_left)
    return rd_fail(r, CDAG_ERR_FORMAT, &f->t[F_BLOCKS], "%lld blocks: more operations of blocks than the loader "
                   "makes of one file (%lld left)", (long long)n, (long long)r->blocks_left);
  if (ckd_mul(&span, n - 1, d) || ckd_add(&span, span, waddr) || !block_in_range(span, len))
    return rd_fail(r, CDAG_ERR_FORMAT, &f->t[F_BLOCKS], "the blocks written end beyond address 2^63-1");
  r->blocks_left -= n;
  *b = (ir_blocks){.n = (uint64_t)n, .len = (uint64_t)len, .to = (uint64_t)d};
  return CDAG_OK;
}

/* A computation of blocks b (at listed steps, else at b.to) as one op (ir_set_write_blocks);
   -1 when its blocks overlap (then it loads as a computation per block, in order). */
static int blocks_compute(reader *r, const step_lists *sl, const fields *f, const ir_blocks *b, int64_t cost, uint64_t rlen,
                          int64_t raddr, int64_t waddr, const token *kw, const token *label) {
  int listed = sl->len[S_TO] >= 0;
  uint64_t *off = listed ? malloc((size_t)b->n * sizeof *off) : NULL;
  int64_t base = waddr, bad = 0;
  int32_t id = -1;
  if (listed && !off) return CDAG_NOMEM("blocks");
  if (listed && (bad = side_offsets(r, sl, S_TO, (int64_t)b->n, 0, (int64_t)b->len, waddr, off, &base)) >= 0) {
    free(off);
    return rd_fail(r, CDAG_ERR_FORMAT, &f->t[F_BLOCKS], "block %lld written lies beyond 0..2^63-1", (long long)bad);
  }
  int rc = ir_check_blocks((uint64_t)base, off, b->to, b->n, b->len);
  if (rc) {   /* blocks that overlap: a computation each, in order */
    free(off);
    return rc == CDAG_ERR_ARG ? -1 : rc;
  }
  rc = ir_add_compute(r->g, r->rank, (uint64_t)cost, (uint64_t)raddr, rlen, (uint64_t)base, b->n * b->len, &id);
  if (rc == CDAG_OK) rc = ir_set_write_blocks(r->g, id, b->n, b->to, off);
  free(off);
  if ((rc = finish_op(r, rc, id, kw, label, f))) return rc;
  ir_blocks w = ir_write_blocks(r->g, id);
  note_range(r, (uint64_t)base, w.to_last + w.len);
  return CDAG_OK;
}

/* compute COST [reads SIZE at A | reads all] [writes SIZE at B [blocks N [stride D]]] [cpu C]
   [nic N]. A computation of N blocks is one op writing them (blocks_compute); only blocks
   that overlap load as N computations in a row, each writing one block and reading what the
   whole one reads (the first has the cost, the label, cpu and nic; the others cost 0): what
   they read and write together is the computation's, and nothing comes between them. */
static int read_compute(reader *r, const token *kw, const token *label) {
  int64_t cost, rlen = 0, raddr = 0, wlen = 0, waddr = 0;
  int32_t id = -1;
  int all = 0, seen_reads = 0, seen_writes = 0;
  const token *ahead;
  fields f;
  ir_blocks b;
  int rc;
  if ((rc = next(r))) return rc;
  if ((rc = num_in(r, &r->tok, 0, 0, INT64_MAX, "a compute cost", &cost))) return rc;
  while ((rc = peek(r, &ahead)) == CDAG_OK && (is_word(ahead, "reads") || is_word(ahead, "writes"))) {
    int reads = is_word(ahead, "reads");
    if ((rc = next(r))) return rc;
    if (reads ? seen_reads++ : seen_writes++)
      return rd_fail(r, CDAG_ERR_FORMAT, &r->tok, "duplicate '%s'", reads ? "reads" : "writes");
    if (reads && (rc = peek(r, &ahead)) == CDAG_OK && is_word(ahead, "all")) {
      all = 1;
      rc = next(r);
    } else if (rc == CDAG_OK) {
      rc = read_range_at(r, "an address", reads ? &rlen : &wlen, reads ? &raddr : &waddr);
    }
    if (rc) return rc;
  }
  if (rc) return rc;
  if (!all && !rlen) raddr = 0;   /* reading 0 bytes reads nowhere: the writer leaves it out */
  if (!wlen) waddr = 0;
  step_lists sl = {1, {0, 0}, {-1, -1}, {0, 0}, {{0}, {0}}};
  r->steps = &sl;
  rc = read_fields(r, BIT(F_WAIT) | BIT(F_CPU) | BIT(F_NIC) | BIT(F_BLOCKS) | BIT(F_STRIDE),
                   "'reads', 'writes', 'blocks', 'stride', 'steps', 'cpu', 'nic' or end of line", &f);
  r->steps = NULL;
  if (rc) return rc;
  if (sl.len[S_TO] >= 0) {   /* blocks at listed steps: checked as compute_blocks checks a stride */
    int64_t n;
    if (!wlen) return rd_fail(r, CDAG_ERR_FORMAT, &sl.t[S_TO], "steps of a computation need bytes it writes ('writes N at A', N > 0)");
    if ((rc = field_in(r, &f, F_BLOCKS, 1, INT64_MAX, "a block count (at least 1)", 1, &n)) ||
        (rc = steps_ok(r, &f, &sl, n, F_N, F_STRIDE)))
      return rc;
    if (wlen % n)
      return rd_fail(r, CDAG_ERR_FORMAT, &f.t[F_BLOCKS], "%lld blocks do not divide the %lld bytes written",
                     (long long)n, (long long)wlen);
    b = (ir_blocks){.n = (uint64_t)n, .len = (uint64_t)(wlen / n)};
  } else if ((rc = compute_blocks(r, &f, wlen, waddr, &b))) {
    return rc;
  }
  if (b.n > 1 && (rc = blocks_compute(r, &sl, &f, &b, cost, all ? IR_READS_ALL : (uint64_t)rlen, raddr, waddr, kw,
                                       label)) != -1) {
    if (rc == CDAG_OK && rlen) note_range(r, (uint64_t)raddr, (uint64_t)rlen);
    return rc;
  }
  int64_t at = waddr;
  for (uint64_t k = 0; k < b.n; k++) {
    if (k && sl.len[S_TO] >= 0 && step_to(r, &sl, S_TO, (int64_t)k, 0, (int64_t)b.len, &at))
      return rd_fail(r, CDAG_ERR_FORMAT, &f.t[F_BLOCKS], "block %lld written lies beyond 0..2^63-1", (long long)k);
    if (k && sl.len[S_TO] < 0) at = waddr + (int64_t)(k * b.to);   /* compute_blocks checked the last */
    rc = ir_add_compute(r->g, r->rank, k ? 0 : (uint64_t)cost, (uint64_t)raddr, all ? IR_READS_ALL : (uint64_t)rlen,
                        (uint64_t)at, b.n > 1 ? b.len : (uint64_t)wlen, &id);
    if ((rc = finish_block(r, rc, (int64_t)k, id, kw, label, &f))) return rc;
    if (wlen) note_range(r, (uint64_t)at, b.n > 1 ? b.len : (uint64_t)wlen);
  }
  if (rlen) note_range(r, (uint64_t)raddr, (uint64_t)rlen);
  return CDAG_OK;
}

/* `comm C` of a fence or one-sided access: its communicator (docs/semantics.md). */
static int onesided_comm(reader *r, const fields *f, int32_t id, const token *kw) {
  int64_t comm;
  int rc = field_in(r, f, F_COMM, 1, IR_MAX_COMM, "a communicator", 0, &comm);
  if (!rc && comm && (rc = ir_set_onesided_comm(r->g, id, (int)comm))) return rd_wrap(r, rc, kw);
  return rc;
}

/* `blocks N [stride T]` of a one-sided access op of `bytes`: its target side in N blocks of
   bytes / N, block i at its target address + i * T (T at least the block length; left out,
   the block length). Notes the target's bytes touched (their hull) when they are addresses. */
static int access_blocks(reader *r, const fields *f, int32_t id, int64_t bytes, int64_t at, int seg, const token *kw) {
  int64_t n = 1, stride = 0, len;
  int rc;
  if (!f->present[F_BLOCKS] && f->present[F_STRIDE])
    return rd_fail(r, CDAG_ERR_FORMAT, &f->t[F_STRIDE], "a stride needs 'blocks'");
  if ((rc = field_in(r, f, F_BLOCKS, 1, INT64_MAX, "a block count (at least 1)", 1, &n))) return rc;
  if (bytes % n)
    return rd_fail(r, CDAG_ERR_FORMAT, &f->t[F_BLOCKS], "%lld blocks do not divide the %lld bytes", (long long)n,
                   (long long)bytes);
  len = bytes / n;
  if ((rc = field_in(r, f, F_STRIDE, len ? len : 1, INT64_MAX, "a stride (at least the block length)", len, &stride)))
    return rc;
  if (n > 1 && stride != len && (rc = ir_set_access_blocks(r->g, id, (uint64_t)n, (uint64_t)stride)))
    return rd_wrap(r, rc, kw);
  if (seg < 0) note_range(r, (uint64_t)at, n > 1 ? (uint64_t)((n - 1) * stride + len) : (uint64_t)bytes);
  return CDAG_OK;
}

/* get SIZE from PEER at A [seg K] addr D [blocks N [stride T]] [comm C]  (put: to PEER); with
   seg, A is an offset in the peer's segment K; with blocks, the target's side is N blocks at
   stride T (access_blocks). */
static int read_onesided(reader *r, int get, const token *kw, const token *label) {
  int64_t bytes, at, addr, seg;
  int32_t peer = 0, id = -1;
  fields f;
  int rc;
  if ((rc = read_size(r, "a size in bytes (e.g. 64b)", &bytes))) return rc;
  if ((rc = next(r))) return rc;
  if (!is_word(&r->tok, get ? "from" : "to")) return expected(r, &r->tok, get ? "'from'" : "'to'");
  if ((rc = next(r))) return rc;
  if ((rc = num_in(r, &r->tok, 0, 0, r->g->nprocs - 1, "a target rank", &at))) return rc;
  peer = (int32_t)at;
  if ((rc = read_fields(r, BIT(F_WAIT) | BIT(F_AT) | BIT(F_SEG) | BIT(F_ADDR) | BIT(F_COMM) | BIT(F_BLOCKS) | BIT(F_STRIDE),
                        "'at', 'seg', 'addr', 'blocks', 'stride', 'comm' or end of line", &f)))
    return rc;
  if ((rc = require_field(r, &f, F_AT)) || (rc = require_field(r, &f, F_ADDR))) return rc;
  if ((rc = field_in(r, &f, F_AT, 0, INT64_MAX, "an address", 0, &at))) return rc;
  if ((rc = field_in(r, &f, F_ADDR, 0, INT64_MAX, "an address", 0, &addr))) return rc;
  if ((rc = field_in(r, &f, F_SEG, 0, INT32_MAX, "a segment number", -1, &seg))) return rc;
  rc = get ? ir_add_get(r->g, r->rank, (uint64_t)addr, (uint64_t)bytes, peer, (int)seg, (uint64_t)at, &id)
           : ir_add_put(r->g, r->rank, (uint64_t)addr, (uint64_t)bytes, peer, (int)seg, (uint64_t)at, &id);
  if ((rc = finish_op(r, rc, id, kw, label, &f)) || (rc = onesided_comm(r, &f, id, kw))) return rc;
  note_range(r, (uint64_t)addr, (uint64_t)bytes);
  return access_blocks(r, &f, id, bytes, at, (int)seg, kw);
}

/* accumulate COUNT TYPE OP to PEER at A [seg K] addr D [blocks N [stride T]] [comm C]: COUNT
   elements at D combined with OP into the peer's bytes at A (with seg, an offset in its
   segment K; with blocks, in N blocks at stride T: access_blocks). */
static int read_accumulate(reader *r, const token *kw, const token *label) {
  int64_t count, at, addr, seg;
  int32_t id = -1;
  fields f;
  int rc;
  int type = 0, rop = 0;
  if ((rc = read_count_type_op(r, "accumulate", &count, &type, &rop))) return rc;
  if ((rc = next(r))) return rc;
  if (!is_word(&r->tok, "to")) return expected(r, &r->tok, "'to'");
  if ((rc = next(r))) return rc;
  if ((rc = num_in(r, &r->tok, 0, 0, r->g->nprocs - 1, "a target rank", &at))) return rc;
  int32_t peer = (int32_t)at;
  if ((rc = read_fields(r, BIT(F_WAIT) | BIT(F_AT) | BIT(F_SEG) | BIT(F_ADDR) | BIT(F_COMM) | BIT(F_BLOCKS) | BIT(F_STRIDE),
                        "'at', 'seg', 'addr', 'blocks', 'stride', 'comm' or end of line", &f)))
    return rc;
  if ((rc = require_field(r, &f, F_AT)) || (rc = require_field(r, &f, F_ADDR))) return rc;
  if ((rc = field_in(r, &f, F_AT, 0, INT64_MAX, "an address", 0, &at))) return rc;
  if ((rc = field_in(r, &f, F_ADDR, 0, INT64_MAX, "an address", 0, &addr))) return rc;
  if ((rc = field_in(r, &f, F_SEG, 0, INT32_MAX, "a segment number", -1, &seg))) return rc;
  rc = ir_add_accumulate(r->g, r->rank, (uint64_t)addr, (uint64_t)count, type, rop, peer, (int)seg, (uint64_t)at, &id);
  if ((rc = finish_op(r, rc, id, kw, label, &f)) || (rc = onesided_comm(r, &f, id, kw))) return rc;
  uint64_t bytes = (uint64_t)count * (uint64_t)ir_type_size(type);
  note_range(r, (uint64_t)addr, bytes);
  return access_blocks(r, &f, id, (int64_t)bytes, at, (int)seg, kw);
}

/* fence [comm C] */
static int read_fence(reader *r, const token *kw, const token *label) {
  int32_t id = -1;
  fields f;
  int rc = read_fields(r, BIT(F_WAIT) | BIT(F_COMM), "'comm' or end of line", &f);
  if (rc) return rc;
  rc = ir_add_fence(r->g, r->rank, &id);
  if ((rc = finish_op(r, rc, id, kw, label, &f))) return rc;
  return onesided_comm(r, &f, id, kw);
}

/* scratch ADDR SIZE, or segment ADDR SIZE (the rank's next one-sided segment) */
static int read_region(reader *r, const token *kw, int segment) {
  int64_t addr, bytes;
  fields f;
  int rc;
  if ((rc = next(r))) return rc;
  if ((rc = num_in(r, &r->tok, 0, 0, INT64_MAX, "an address", &addr))) return rc;
  if ((rc = read_size(r, "a size in bytes (e.g. 4096b)", &bytes))) return rc;
  if ((rc = read_fields(r, 0, "end of line", &f))) return rc;
  if (!segment && bytes && (uint64_t)addr < IR_ACC_SCRATCH + IR_ACC_SCRATCH_LEN &&
      (uint64_t)addr + (uint64_t)bytes > IR_ACC_SCRATCH)   /* expansion's own: its plan would take them as its */
    return rd_fail(r, CDAG_ERR_FORMAT, kw, "scratch [0x%llx, 0x%llx) meets the addresses cdag keeps for accumulates' "
                   "target sides, [0x%llx, 0x%llx)", (unsigned long long)addr, (unsigned long long)addr + (unsigned long long)bytes,
                   (unsigned long long)IR_ACC_SCRATCH, (unsigned long long)(IR_ACC_SCRATCH + IR_ACC_SCRATCH_LEN));
  rc = segment ? ir_add_segment(r->g, r->rank, (uint64_t)addr, (uint64_t)bytes, NULL)
               : ir_add_scratch(r->g, r->rank, (uint64_t)addr, (uint64_t)bytes);
  if (rc) return rd_wrap(r, rc, kw);
  note_range(r, (uint64_t)addr, (uint64_t)bytes);
  return CDAG_OK;
}

/* after requires before   (irequires alike): kept until the block closes. */
static int read_requires(reader *r, const token *after) {
  int rc;
  fields f;
  if ((rc = next(r))) return rc; /* requires / irequires */
  int start = is_word(&r->tok, "irequires");
  if ((rc = next(r))) return rc;
  if (r->tok.kind != T_WORD) return expected(r, &r->tok, "a label");
  token before = r->tok;
  if ((rc = read_fields(r, 0, "end of line", &f))) return rc;
  BASE_GROW(r->pend, r->npend, r->pendcap, 1, "dependencies");
  r->pend[r->npend].after = *after;
  r->pend[r->npend].before = before;
  r->pend[r->npend].after_id = -1;
  r->pend[r->npend].start = start;
  r->npend++;
  return CDAG_OK;
}

/* wait L1 [L2 ...]: a zero-cost join that requires the labels (resolved when the block closes). */
static int read_wait(reader *r, const token *kw, const token *label) {
  int32_t id = -1;
  int rc = ir_add_wait(r->g, r->rank, NULL, 0, &id);
  fields none;
  memset(&none, 0, sizeof none);
  if ((rc = finish_op(r, rc, id, kw, label, &none))) return rc;
  int n = 0;
  for (;; n++) {
    if ((rc = next(r))) return rc;
    if (is_end(&r->tok)) break;
    if (r->tok.kind != T_WORD) return expected(r, &r->tok, "a label or end of line");
    BASE_GROW(r->pend, r->npend, r->pendcap, 1, "dependencies");
    r->pend[r->npend++] = (pending_dep){*kw, r->tok, id, 0};
  }
  return n ? CDAG_OK : expected(r, &r->tok, "a label (wait names what completed)");
}

/* The size of a collective: SIZE for block kinds; COUNT TYPE OP for reductions. */
static int read_coll_size(reader *r, int kind, int64_t *count, int *type, int *rop) {
  int rc;
  *type = *rop = 0;
  if (!ir_coll_get(kind)->reduces)
    return read_size(r, "a size in bytes (e.g. 64b)", count);
  if ((rc = next(r))) return rc;
  if ((rc = num_in(r, &r->tok, 0, 0, INT64_MAX / 16, "an element count", count))) return rc;
  if ((rc = next(r))) return rc;
  *type = tok_type(&r->tok);
  if (*type < 0) return expected(r, &r->tok, "a type (int8, ..., double, a pair such as 2int, or complex_float/double)");
  if ((rc = next(r))) return rc;
  *rop = r->tok.kind == T_WORD ? ir_rop_parse(r->tok.s, r->tok.len) : -1;
  if (*rop < 0) return expected(r, &r->tok, "a reduction (sum, prod, min, max, ...)");
  if (!ir_rop_valid_for(*rop, *type))
    return rd_fail(r, CDAG_ERR_FORMAT, &r->tok, "reduction '%s' is not defined for type '%s'", ir_rop_name(*rop),
                   ir_type_name(*type));
  return CDAG_OK;
}

/* Which of in/out/addr/root a collective needs (for this rank: root-only buffers, as the
   kind's slots in coll_kinds.h; bcast's one buffer is `addr`, as MPI_Bcast has one). */
static int coll_fields_ok(reader *r, int kind, const fields *f, int is_root) {
  int rc = CDAG_OK;
  const ir_coll_info *in = ir_coll_get(kind);
  if (in->rooted) rc = require_field(r, f, F_ROOT);
  if (!rc && kind == IR_COLL_BCAST) rc = require_field(r, f, F_ADDR);
  else if (!rc && in->send != IR_SLOTS_NONE) {
    int need_in = !in->send_root || is_root, need_out = !in->recv_root || is_root;
    if (need_in) rc = require_field(r, f, F_IN);
    if (!rc && need_out) rc = require_field(r, f, F_OUT);
  }
  return rc;
}

/* barrier | bcast S root R addr A | gather S root R in A [out B] | ... [comm C] (docs/format.md) */
static int read_coll(reader *r, int kind, const token *kw, const token *label) {
  int64_t count = 0;
  int type, rop, rc;
  fields f;
  int moves = ir_coll_get(kind)->send != IR_SLOTS_NONE;   /* not a barrier */
  if (moves && (rc = read_coll_size(r, kind, &count, &type, &rop))) return rc;
  if (!moves) type = rop = 0;
  coll_lists cl = {.v = r->lv, .cap = r->lvcap, .len = {-1, -1, -1, -1}};
  if (ir_coll_get(kind)->vector) r->lists = &cl;
  rc = read_fields(r, BIT(F_WAIT) | BIT(F_ROOT) | BIT(F_IN) | BIT(F_OUT) | BIT(F_ADDR) | BIT(F_COMM) | BIT(F_NONBLOCKING),
                   r->lists ? "'root', 'in', 'out', 'counts', 'displs', 'recvcounts', 'recvdispls', 'comm', 'nonblocking' "
                              "or end of line"
                            : "'root', 'in', 'out', 'addr', 'comm', 'nonblocking' or end of line", &f);
  r->lists = NULL;
  r->lv = cl.v, r->lvcap = cl.cap;
  if (rc) return rc;
  return add_coll_op(r, kind, kw, label, &f, count, type, rop, ir_coll_get(kind)->vector ? &cl : NULL);
}

/* A vector collective's lists: the ones its kind has at this rank, each a value per member,
   back to back in the order ir_add_collv takes; *v NULL for a kind without. */
static int coll_lists_ok(reader *r, int kind, int64_t comm, int is_root, coll_lists *cl, const uint64_t **v) {
  *v = NULL;
  if (!cl) return CDAG_OK;
  const int32_t *ranks;
  int n = ir_comm_members(r->g, (int)comm, &ranks), want = ir_coll_lists(kind, is_root);
  if (n < 0) return CDAG_OK;   /* ir_add_collv names the undeclared communicator */
  for (int k = 0; k < L_N; k++) {
    if (k >= want && cl->len[k] >= 0)
      return rd_fail(r, CDAG_ERR_FORMAT, &cl->t[k], "'%s' on a %s%s, which has none", list_names[k],
                     ir_coll_name(kind), ir_coll_get(kind)->rooted && !is_root ? " member other than the root" : "");
    if (k < want && cl->len[k] < 0) {
      char w[32];
      snprintf(w, sizeof w, "'%s'", list_names[k]);
      return expected(r, &r->tok, w);
    }
    if (k < want && cl->len[k] != n)
      return rd_fail(r, CDAG_ERR_FORMAT, &cl->t[k], "'%s' has %lld values, communicator %lld has %d members",
                     list_names[k], (long long)cl->len[k], (long long)comm, n);
  }
  if (!want) return CDAG_OK;
  /* back to back in list order: the lists were read in the file's order, so move them */
  BASE_GROW(r->lv, cl->n, r->lvcap, (int64_t)want * n, "collective counts");
  cl->v = r->lv;
  for (int k = 0; k < want; k++) memcpy(r->lv + cl->n + (int64_t)k * n, r->lv + cl->first[k], (size_t)n * sizeof *r->lv);
  *v = r->lv + cl->n;
  return CDAG_OK;
}

/* The fields of a collective read: checked, and the call added. */
static int add_coll_op(reader *r, int kind, const token *kw, const token *label, fields *f, int64_t count, int type,
                       int rop, coll_lists *cl) {
  int64_t root = -1, in = 0, out = 0, addr = 0, comm = 0;
  int32_t id = -1;
  int rc;
  if ((rc = field_in(r, f, F_ROOT, 0, r->g->nprocs - 1, "a root rank", -1, &root))) return rc;
  if ((rc = field_in(r, f, F_COMM, 0, IR_MAX_COMM, "a communicator", 0, &comm))) return rc;
  if ((rc = coll_fields_ok(r, kind, f, root == r->rank))) return rc;
  if ((rc = field_in(r, f, F_ADDR, 0, INT64_MAX, "an address", 0, &addr))) return rc;
  if ((rc = field_in(r, f, F_IN, 0, INT64_MAX, "an address", addr, &in))) return rc;
  if ((rc = field_in(r, f, F_OUT, 0, INT64_MAX, "an address", f->present[F_ADDR] ? addr : in, &out))) return rc;
  if (!f->present[F_IN]) in = out;
  const uint64_t *lists;
  if ((rc = coll_lists_ok(r, kind, comm, root == r->rank, cl, &lists))) return rc;
  if (f->present[F_NONBLOCKING] && f->present[F_WAIT])   /* a `wait` naming the call completes it */
    return rd_fail(r, CDAG_ERR_FORMAT, &f->t[F_WAIT], "a nonblocking collective is completed by a 'wait' line naming "
                   "its label, not by the field 'wait'");
  int64_t first = r->g->nops;
  ir_call c = {.op = -1, .kind = (uint8_t)kind, .comm = (int32_t)comm, .root = (int32_t)root, .type = type, .rop = rop,
               .in = (uint64_t)in, .out = (uint64_t)out, .count = (uint64_t)count,
               .nonblocking = (uint8_t)f->present[F_NONBLOCKING]};
  rc = ir_add_coll_call(r->g, r->rank, &c, lists, &id);
  if ((rc = finish_op(r, rc, id, kw, label, f))) return rc;
  for (int64_t i = first; i < id; i++) {   /* its messages' buffers (not the scratch) */
    cdag_graph *g = r->g;
    if (g->addr[i] < IR_COLL_SCRATCH) note_range(r, g->addr[i], g->bytes[i]);
    if (g->addr2 && (g->kind[i] == IR_COPY || g->kind[i] == IR_REDUCE) && g->addr2[i] < IR_COLL_SCRATCH)
      note_range(r, g->addr2[i], g->bytes[i]);
  }
  return CDAG_OK;
}

/* One statement starting at the word in r->tok; leaves its terminator in r->tok. */
static int read_statement(reader *r) {
  int rc;
  token first = r->tok, kw;
  const token *ahead, *label = NULL;
  if ((rc = peek(r, &ahead))) return rc;
  if (ahead->kind == T_COLON) {
    label = &first;
    if ((rc = next(r)) || (rc = next(r))) return rc;
  } else if (is_word(ahead, "requires") || is_word(ahead, "irequires")) {
    return read_requires(r, &first);
  } else if (is_word(&first, "scratch") || is_word(&first, "segment")) {
    return read_region(r, &first, is_word(&first, "segment"));
  }
  kw = r->tok;
  if (is_word(&kw, "send")) return read_p2p(r, IR_SEND, &kw, label);
  if (is_word(&kw, "recv")) return read_p2p(r, IR_RECV, &kw, label);
  if (is_word(&kw, "reduce")) return read_reduce(r, &kw, label);
  if (is_word(&kw, "copy")) return read_copy(r, &kw, label);
  if (is_word(&kw, "calc")) return read_calc(r, &kw, label);
  if (is_word(&kw, "compute")) return read_compute(r, &kw, label);
  if (is_word(&kw, "get")) return read_onesided(r, 1, &kw, label);
  if (is_word(&kw, "put")) return read_onesided(r, 0, &kw, label);
  if (is_word(&kw, "fence")) return read_fence(r, &kw, label);
  if (is_word(&kw, "accumulate")) return read_accumulate(r, &kw, label);
  if (is_word(&kw, "wait")) return read_wait(r, &kw, label);
  int coll = kw.kind == T_WORD ? ir_coll_kind(kw.s, (size_t)kw.len) : -1;
  if (coll >= 0 && ir_coll_get(coll)->native) return read_coll(r, coll, &kw, label);
  if (label) return expected(r, &kw, "an operation (send, recv, reduce, copy, calc, compute, get, put, accumulate, fence, wait, or a collective)");
  return expected(r, &kw, "an operation, 'scratch', a label or '}'");
}

/* ---- rank blocks ---- */

static int lookup_label(reader *r, const token *t, int32_t *id) {
  if ((*id = labels_find(&r->labels, r->g, t)) >= 0) return CDAG_OK;
  /* error path only: is the label defined in another (earlier) rank block? */
  const cdag_graph *g = r->g;
  int n = (int)(t->len > 64 ? 64 : t->len);
  for (int64_t i = 0; i < g->nops && g->label; i++) {
    const char *l = ir_label(g, (int32_t)i);
    if (l && g->rank[i] != r->rank && (int64_t)strlen(l) == t->len && memcmp(l, t->s, (size_t)t->len) == 0)
      return rd_fail(r, CDAG_ERR_FORMAT, t,
                     "unknown label '%.*s' in rank %d: it is defined in rank %d, and a dependency must join "
                     "ops of one rank",
                     n, t->s, r->rank, g->rank[i]);
  }
  return rd_fail(r, CDAG_ERR_FORMAT, t, "unknown label '%.*s' in rank %d", n, t->s, r->rank);
}

static int resolve_deps(reader *r) {
  int rc;
  for (int64_t i = 0; i < r->npend; i++) {
    const pending_dep *d = &r->pend[i];
    int32_t a = d->after_id, b = -1;
    if ((a < 0 && (rc = lookup_label(r, &d->after, &a))) || (rc = lookup_label(r, &d->before, &b))) return rc;
    if (a == b)
      return rd_fail(r, CDAG_ERR_FORMAT, &d->before, "label '%.*s' requires itself",
                     (int)(d->before.len > 64 ? 64 : d->before.len), d->before.s);
    rc = d->start ? ir_add_start_dep(r->g, b, a) : ir_add_dep(r->g, b, a, 0);
    if (rc) return rd_wrap(r, rc, &d->after);
  }
  r->npend = 0;
  return CDAG_OK;
}

/* Is the word in r->tok a label (followed by ':' or a requires)? Needs the lookahead. */
static int starts_label(const reader *r) {
  const token *ahead = &r->ahead;
  return r->has_ahead && (ahead->kind == T_COLON || is_word(ahead, "requires") || is_word(ahead, "irequires"));
}

static int unclosed(reader *r, const token *open) {
  char w[96];
  snprintf(w, sizeof w, "'}' closing rank %d (opened at line %u)", r->rank, open->line);
  return expected(r, &r->tok, w);
}

/* The statements of `rank N {` up to its '}'. */
static int read_block(reader *r, const token *open) {
  int rc;
  labels_open_block(&r->labels, r->g->nops);
  if ((rc = next(r))) return rc;
  for (;;) {
    switch (r->tok.kind) {
      case T_NL:
        if ((rc = next(r))) return rc;
        break;
      case T_RBRACE: return resolve_deps(r);
      case T_EOF: return unclosed(r, open);
      case T_WORD: {
        const token *ahead;
        if ((rc = peek(r, &ahead))) return rc;
        if ((is_word(&r->tok, "rank") || is_word(&r->tok, "num_ranks")) && !starts_label(r))
          return unclosed(r, open); /* a forgotten '}' */
        if ((rc = read_statement(r))) return rc;
        break;
      }
      default:
        return expected(r, &r->tok, "an operation, 'scratch', a label or '}'");
    }
  }
}

/* rank N { ... } */
static int read_rank(reader *r) {
  int rc;
  token kw = r->tok;
  int64_t v;
  if (!r->g) return rd_fail(r, CDAG_ERR_FORMAT, &kw, "expected 'num_ranks N' before the first rank block, found 'rank'");
  if ((rc = next(r))) return rc;
  if ((rc = num_in(r, &r->tok, 0, 0, r->g->nprocs - 1, "a rank", &v))) return rc;
  PWord_t seen = (PWord_t)JudyLIns(&r->ranks_seen, (Word_t)v, PJE0);
  if (seen == PJERR) return CDAG_NOMEM("rank blocks");
  if (*seen)
    return rd_fail(r, CDAG_ERR_FORMAT, &r->tok, "rank %lld has a second block (the first is at line %lu)",
                   (long long)v, (unsigned long)*seen);
  *seen = kw.line ? kw.line : 1;
  r->rank = (int32_t)v;
  if ((rc = next(r))) return rc;
  if (r->tok.kind != T_LBRACE) return expected(r, &r->tok, "'{'");
  return read_block(r, &kw);
}

/* Room for as many ops as the file has lines left that start with a word (an op takes such
   a line; blank and comment lines are not counted, so a file of them reserves nothing): the
   op arrays are allocated once, not doubled and copied a dozen times on the way to 2
   million. Other lines that start with a word (`requires`, `rank R {`) make it reserve
   more than is used, one op's entries per line. */
static int reserve_lines(reader *r) {
  int64_t lines = 0;
  for (const char *p = r->p; p < r->end;) {
    while (p < r->end && (*p == ' ' || *p == '\t')) p++;
    if (p < r->end && ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'z')) lines++;
    const char *nl = memchr(p, '\n', (size_t)(r->end - p));
    if (!nl) break;
    p = nl + 1;
  }
  if (lines > IR_MAX_OPS / 2) lines = IR_MAX_OPS / 2;
  return ir_reserve(r->g, lines);
}

/* num_ranks N */
static int read_num_ranks(reader *r) {
  int rc;
  token kw = r->tok;
  int64_t n;
  fields f;
  if (r->g)
    return rd_fail(r, CDAG_ERR_FORMAT, &kw, "duplicate 'num_ranks' (first at line %u)", r->num_ranks_line);
  if ((rc = next(r))) return rc;
  if ((rc = num_in(r, &r->tok, 0, 1, r->max_ranks, "a number of ranks", &n))) return rc;
  if ((rc = ir_graph_new((int)n, -1, &r->g))) return rc;
  if ((rc = reserve_lines(r))) return rc;
  r->num_ranks_line = kw.line;
  if ((rc = read_fields(r, 0, "end of line", &f))) return rc;
  if (r->tok.kind == T_RBRACE) return expected(r, &r->tok, "end of line");
  return CDAG_OK;
}

/* bound B: the generator's lower bound on bytes received per process */
static int read_bound(reader *r) {
  int64_t b;
  fields f;
  int rc = read_size(r, "a number of bytes", &b);
  if (!rc) rc = read_fields(r, 0, "end of line", &f);
  if (!rc) r->g->bound = (uint64_t)b;
  return rc;
}

/* comm C ranks R0 R1 ...   (members in communicator-rank order) */
static int read_comm(reader *r) {
  token kw = r->tok;
  int64_t c, v;
  int rc;
  if ((rc = next(r))) return rc;
  if ((rc = num_in(r, &r->tok, 0, 1, IR_MAX_COMM, "a communicator number", &c))) return rc;
  if ((rc = next(r))) return rc;
  if (!is_word(&r->tok, "ranks")) return expected(r, &r->tok, "'ranks'");
  int32_t *ranks = NULL;
  int64_t n = 0, cap = 0;
  for (;;) {
    if ((rc = next(r))) break;
    if (is_end(&r->tok)) break;
    if ((rc = num_in(r, &r->tok, 0, 0, r->g->nprocs - 1, "a rank", &v))) break;
    if (n == cap && (rc = base_grow((void **)&ranks, n, &cap, 1, sizeof *ranks, "communicator"))) break;
    ranks[n++] = (int32_t)v;
  }
  if (!rc && n > r->g->nprocs) rc = rd_fail(r, CDAG_ERR_FORMAT, &kw, "communicator %lld lists more ranks than the graph has", (long long)c);
  if (!rc && !n) rc = expected(r, &r->tok, "a rank");
  if (!rc && (rc = ir_add_comm(r->g, (int)c, ranks, (int)n))) rc = rd_wrap(r, rc, &kw);
  free(ranks);
  return rc;
}

static int read_file_body(reader *r) {
  int rc;
  for (;;) {
    if ((rc = next(r))) return rc;
    switch (r->tok.kind) {
      case T_NL: continue;
      case T_EOF:
        if (!r->g) return expected(r, &r->tok, "'num_ranks'");
        return CDAG_OK;
      default:
        if (is_word(&r->tok, "num_ranks")) rc = read_num_ranks(r);
        else if (is_word(&r->tok, "rank")) rc = read_rank(r);
        else if (is_word(&r->tok, "comm") && r->g) rc = read_comm(r);
        else if (is_word(&r->tok, "bound") && r->g) rc = read_bound(r);
        else rc = expected(r, &r->tok, r->g ? "'rank'" : "'num_ranks'");
        if (rc) return rc;
    }
  }
}

/* Ops without addr get regions above every explicit address (fresh, and follow's first step). */
static int assign_fresh(reader *r) {
  cdag_graph *g = r->g;
  uint64_t cur = (r->max_end + 4095) & ~(uint64_t)4095;
  for (int64_t i = 0; i < r->nfresh; i++) {
    int32_t op = r->fresh[i];
    uint64_t len = g->bytes[op], step = len ? (len + 63) & ~(uint64_t)63 : 64;
    if (cur > (uint64_t)INT64_MAX || step > (uint64_t)INT64_MAX - cur) {
      token t = {T_NL, "", 0, g->line ? g->line[op] : 0, 1};
      return rd_fail(r, CDAG_ERR_FORMAT, &t, "no address space left for a fresh buffer of %llu bytes",
                     (unsigned long long)len);
    }
    g->addr[op] = cur;
    cur += step;
  }
  r->fresh_end = cur;
  return CDAG_OK;
}

/* --goal-buffers=follow, after a fresh assignment and a finalize (so the dependencies are
   the file's requires alone): each send without addr reads the buffer of the latest
   receive it depends on, if that receive is at least as large, else the rank's own bytes
   (a region above the fresh ones, shared by such sends: reads do not order each other). The
   moves add only read-after-write conflicts the requires already imply. O(ops + deps). */
static int follow_dependencies(reader *r) {
  cdag_graph *g = r->g;
  int32_t *from = malloc(((size_t)g->nops + 1) * sizeof *from);   /* latest receive an op follows */
  uint8_t *no_addr = calloc((size_t)g->nops + 1, 1);
  if (!from || !no_addr) {
    free(from);
    free(no_addr);
    return CDAG_NOMEM("goal buffers");
  }
  for (int64_t i = 0; i < r->nfresh; i++) no_addr[r->fresh[i]] = 1;
  uint64_t origin = r->fresh_end;   /* the rank's own bytes: above every fresh region */
  for (int32_t k = 0; k < (int32_t)g->nops; k++) {   /* program order: requires point backwards */
    int32_t op = g->rank_ops[k];
    from[op] = -1;
    if (g->kind[op] == IR_RECV) {
      from[op] = op;
      continue;
    }
    for (int32_t e = g->pred_start[op]; e < g->pred_start[op + 1]; e++) {
      int32_t f = from[g->pred[e]];
      if (f >= 0 && (from[op] < 0 || g->pos[f] > g->pos[from[op]])) from[op] = f;
    }
    if (g->kind[op] != IR_SEND || !no_addr[op]) continue;
    int32_t f = from[op];
    g->addr[op] = f >= 0 && no_addr[f] && g->bytes[f] >= g->bytes[op] ? g->addr[f] : origin;
  }
  free(from);
  free(no_addr);
  ir_drop_derived(g);
  return ir_finalize(g);
}

static void reader_free(reader *r) {
  labels_free(&r->labels);
  JudyLFreeArray(&r->ranks_seen, PJE0);
  free(r->pend);
  free(r->fresh);
  free(r->lv);
  free(r->sv);
}

static int load_text(const char *buf, size_t len, const char *name, const ir_load_opts *o, cdag_graph **g);

/* Does a line start `rank R like` (ranks stored once, folded.c)? One pass over the text. */
static int has_folded(const char *p, const char *end) {
  for (; p && p + 11 < end; p = memchr(p, '\n', (size_t)(end - p)), p = p ? p + 1 : NULL) {
    while (p < end && (*p == ' ' || *p == '\t')) p++;   /* indented by hand */
    if (end - p < 12 || memcmp(p, "rank ", 5)) continue;
    const char *q = p + 5;
    while (q < end && *q >= '0' && *q <= '9') q++;
    if (q > p + 5 && end - q >= 6 && !memcmp(q, " like ", 6)) return 1;
  }
  return 0;
}

/* A file whose ranks are stored once (`rank R like M ...`, folded.c) is read unfolded. */
int ir_load_mem(const char *buf, size_t len, const char *name, const ir_load_opts *o, cdag_graph **g) {
  if (!g) return cdag__error(CDAG_ERR_ARG, "graph pointer is NULL");
  *g = NULL;
  if (!buf && len) return cdag__error(CDAG_ERR_ARG, "buffer is NULL");
  char *unfolded = NULL;
  size_t ulen = 0;
  if (!buf || !has_folded(buf, buf + len)) return load_text(buf, len, name, o, g);
  int rc = ir_ranks_unfold(buf, len, &unfolded, &ulen);
  if (rc) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", cdag_error_message());
    return cdag__error(rc, "%s: %s", name ? name : "<memory>", msg);
  }
  char uname[600];   /* lines of the unfolded text: say so where an error names one */
  snprintf(uname, sizeof uname, "%s (unfolded)", name ? name : "<memory>");
  rc = unfolded ? load_text(unfolded, ulen, uname, o, g) : load_text(buf, len, name, o, g);
  free(unfolded);
  return rc;
}

static int load_text(const char *buf, size_t len, const char *name, const ir_load_opts *o, cdag_graph **g) {
  reader r;
  memset(&r, 0, sizeof r);
  r.name = name ? name : "<memory>";
  r.p = r.line_start = buf ? buf : "";
  r.end = r.p + len;
  r.line = 1;
  r.blocks_left = o && o->max_blocks > 0 && o->max_blocks < IR_LOAD_MAX_BLOCKS ? o->max_blocks : IR_LOAD_MAX_BLOCKS;
  if (len >= 3 && !memcmp(r.p, "\xef\xbb\xbf", 3)) r.p = r.line_start = r.p + 3;  /* UTF-8 byte-order mark */
  r.goal_buffers = o ? o->goal_buffers : IR_GOAL_FOLLOW;
  r.max_ranks = o && o->max_ranks > 0 && o->max_ranks < IR_MAX_RANKS ? o->max_ranks : IR_MAX_RANKS;
  int rc = read_file_body(&r);
  labels_free(&r.labels);   /* before ir_finalize, which needs the most memory */
  if (rc == CDAG_OK) rc = assign_fresh(&r);
  if (rc == CDAG_OK) {
    rc = ir_finalize(r.g);
    if (rc == CDAG_OK && r.goal_buffers == IR_GOAL_FOLLOW && r.nfresh) rc = follow_dependencies(&r);
    if (rc != CDAG_OK) {
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", cdag__error_text());
      cdag__error(rc, "%s: %s", r.name, msg);
    }
  }
  reader_free(&r);
  if (rc) {
    ir_graph_free(r.g);
    return rc;
  }
  *g = r.g;
  return CDAG_OK;
}

/* The located error for a NUL byte at buf[at], as the tokenizer would give it. */
static int nul_error(const char *name, const char *buf, size_t at) {
  long long line = 1, col = 1;
  for (size_t i = 0; i < at; i++) {
    if (buf[i] == '\n') line++, col = 1;
    else col++;
  }
  return cdag__error(CDAG_ERR_FORMAT, "%s:%lld:%lld: unexpected byte 0x00", name, line, col);
}

/* Reads all of f into a malloc'd buffer (sized at once for regular files); a NUL byte ends
   the read with its located error (graph files are text). */
static int read_stream(FILE *f, const char *name, char **out, size_t *len) {
  size_t cap = 1 << 16, n = 0;
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size < SIZE_MAX / 2)
    cap = (size_t)st.st_size + 1; /* +1: the final fread sees end of file without a regrowth */
  char *buf = malloc(cap);
  if (!buf) return CDAG_NOMEM("file buffer");
  for (;;) {
    if (n == cap) {
      char *b = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
      if (!b) {
        free(buf);
        return CDAG_NOMEM("file buffer");
      }
      buf = b;
      cap *= 2;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    const char *nul = got ? memchr(buf + n, 0, got) : NULL;
    n += got;
    if (nul) {   /* text holds none: say so now, not after reading all of /dev/zero */
      int rc = nul_error(name, buf, (size_t)(nul - buf));
      free(buf);
      return rc;
    }
    if (got == 0) break;
  }
  if (ferror(f)) {
    int e = errno;
    free(buf);
    return cdag__error(CDAG_ERR_IO, "%s: cannot read: %s", name, strerror(e));
  }
  *out = buf;
  *len = n;
  return CDAG_OK;
}

int ir_load_file(const char *path, const ir_load_opts *o, cdag_graph **g) {
  if (!g) return cdag__error(CDAG_ERR_ARG, "graph pointer is NULL");
  *g = NULL;
  if (!path) return cdag__error(CDAG_ERR_ARG, "file name is NULL");
  int is_stdin = strcmp(path, "-") == 0;
  const char *name = is_stdin ? "<stdin>" : path;
  FILE *f = is_stdin ? stdin : fopen(path, "rb");
  if (!f && errno == ENOMEM) return cdag__error(CDAG_ERR_NOMEM, "%s: out of memory opening the file", path);
  if (!f) return cdag__error(CDAG_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  char *buf = NULL;
  size_t len = 0;
  int rc = read_stream(f, name, &buf, &len);
  if (!is_stdin) fclose(f);
  if (rc) return rc;
  rc = ir_load_mem(buf, len, name, o, g);
  free(buf);
  return rc;
}

int cdag_graph_load(const char *path, cdag_graph **g) { return ir_load_file(path, NULL, g); }
