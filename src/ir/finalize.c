/* cdag — src/ir/finalize.c: program order, dependencies and scratch intervals.
 *
 * ir_finalize() turns the ops as added into the view every later stage reads:
 *  1. program order per rank: a stable counting sort by rank (O(n)); a rank whose explicit
 *     dependencies point backwards (files may say `l1 requires l5`) is reordered by a stable
 *     topological sort (Kahn with a min-heap on the written position, O(k log k));
 *  2. memory-conflict dependencies: each rank's ops walk address-interval maps (piece start
 *     to piece) whose pieces remember their last writer and the readers since. A read
 *     depends on the last writer; a write on the readers since the last write, or on the
 *     last writer if there were none. Reader lists are immutable shared lists, so a split
 *     copies no list. The rank's op sides (what an op reads, what it writes; a strided
 *     side by its hull) are first sorted and swept into clusters of overlapping sides,
 *     each with its own map (a small sorted array, an fmap once a cluster has many
 *     pieces); a side alone in its cluster is not looked up, a cluster of one pattern
 *     (a datatype's buffer used again and again) takes each side as one range, not block
 *     by block, a cluster whose strided sides share one stride takes each side as a range
 *     of rows per column of a lattice, and elsewhere a block no other side's hull reaches
 *     is not looked up. A rank whose ranges ascend in program order skips it all. A graph whose
 *     builder promises conflict scopes (g->scope: a lowered plan's stages, which its
 *     dependencies already order) is walked scope by scope, each with maps of its own.
 *     Each op costs O((1 + pieces it overlaps) log n), per column of a lattice, per block
 *     (that other hulls reach) where its cluster is taken block by block;
 *  3. CSR arrays pred/succ, each (before, after) pair once (a stamp array dedupes): the list
 *     lengths are counted by step 2 as it finds the edges, then one pass places them, in
 *     blocks of 64 ranks, position by position across a block when its ranks' ops are
 *     interleaved in id (graphs built round by round), so that the pass stays local;
 *  4. scratch regions sorted and merged per rank. */
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/fmap.h"
#include "base/imap.h"
#include "ir/ir.h"

/* Growable array of the edges' before ops, made rank by rank: rank r's are
   e[rank_edges[r] ..], grouped by the after op in program order. Each op's count is in
   the CSR's lengths, so the after ops need not be stored. */
typedef struct {
  int32_t *e;
  int64_t n, cap;
  int64_t *rank_edges;  /* nprocs + 1 offsets */
} edge_buf;

static void edge_buf_free(edge_buf *b) {
  free(b->e);
  free(b->rank_edges);
  *b = (edge_buf){0};
}

/* The rank offsets, and room for the edges most graphs make (an op depends on one or two
   earlier ops of its rank), so that they are not copied while doubling: capacity never
   touched costs address space, not memory, and a big graph's doublings would each fault in
   fresh pages. */
static int edge_buf_init(edge_buf *b, const cdag_graph *g) {
  b->cap = 2 * g->nops + g->ndeps + 16;
  b->e = base_malloc((size_t)b->cap * sizeof *b->e);
  b->rank_edges = malloc(((size_t)g->nprocs + 1) * sizeof *b->rank_edges);
  return b->e && b->rank_edges ? CDAG_OK : CDAG_NOMEM("dependencies");
}

static int edge_push(edge_buf *b, int32_t before) {
  if (b->n == INT32_MAX) /* the CSR's offsets are int32 */
    return cdag__error(CDAG_ERR_UNSUPPORTED, "more than %d dependencies (ops each overlapping many earlier "
                       "pieces of memory)", INT32_MAX);
  if (b->n == b->cap) {
    int64_t cap = b->cap * 2;
    int32_t *e = base_realloc(b->e, (size_t)b->n * sizeof *e, (size_t)cap * sizeof *e);
    if (!e) return CDAG_NOMEM("dependencies");
    b->e = e;
    b->cap = cap;
  }
  b->e[b->n++] = before;
  return CDAG_OK;
}

/* ---- 1. program order ---- */

static int key_cmp(const void *pa, const void *pb, void *ctx) {
  const int64_t *key = ctx;
  int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
  if (key[a] != key[b]) return key[a] < key[b] ? -1 : 1;
  return (a > b) - (a < b);
}

/* One-sided expansion added ops whose place is at an epoch's edge (os_key, onesided.c):
   the ranks that got such ops are sorted by key. */
static int order_by_key(cdag_graph *g) {
  for (int r = 0; r < g->nprocs; r++) {
    int32_t lo = g->rank_start[r], hi = g->rank_start[r + 1];
    if (hi == lo || g->rank_ops[hi - 1] < g->nwritten) continue;   /* added ops come last by id */
    base_sort_r(g->rank_ops + lo, hi - lo, sizeof *g->rank_ops, key_cmp, g->os_key);
    for (int32_t k = lo; k < hi; k++) g->pos[g->rank_ops[k]] = k - lo;
  }
  return CDAG_OK;
}

static int order_by_rank(cdag_graph *g) {
  int64_t n = g->nops;
  g->rank_start = calloc((size_t)g->nprocs + 1, sizeof *g->rank_start);
  g->rank_ops = base_malloc((size_t)n * sizeof *g->rank_ops);
  g->pos = base_malloc((size_t)n * sizeof *g->pos);
  if (!g->rank_start || !g->rank_ops || !g->pos) return CDAG_NOMEM("program order");
  for (int64_t i = 0; i < n; i++) g->rank_start[g->rank[i] + 1]++;
  for (int r = 0; r < g->nprocs; r++) g->rank_start[r + 1] += g->rank_start[r];
  int32_t *fill = malloc((size_t)g->nprocs * sizeof *fill);
  if (!fill) return CDAG_NOMEM("program order");
  memcpy(fill, g->rank_start, (size_t)g->nprocs * sizeof *fill);
  for (int64_t i = 0; i < n; i++) {
    int32_t r = g->rank[i];
    if (i + 4 * IR_AHEAD < n) IR_PREFETCH_W(&g->rank_ops[fill[g->rank[i + 4 * IR_AHEAD]]]); /* little work per op */
    g->pos[i] = fill[r] - g->rank_start[r];
    g->rank_ops[fill[r]++] = (int32_t)i;
  }
  free(fill);
  return g->os_key ? order_by_key(g) : CDAG_OK;
}

/* Min-heap of program positions (for the stable topological sort). */
static void heap_push(int32_t *h, int32_t *n, int32_t v) {
  int32_t i = (*n)++;
  while (i > 0 && h[(i - 1) / 2] > v) {
    h[i] = h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h[i] = v;
}

static int32_t heap_pop(int32_t *h, int32_t *n) {
  int32_t top = h[0], v = h[--(*n)], i = 0;
  for (;;) {
    int32_t c = 2 * i + 1;
    if (c >= *n) break;
    if (c + 1 < *n && h[c + 1] < h[c]) c++;
    if (h[c] >= v) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = v;
  return top;
}

/* Reorders rank r so explicit dependencies go forward; ties keep the written order. */
static int topo_rank(cdag_graph *g, int r, const int32_t *ex_start, const int32_t *ex_to, int32_t *indeg,
                     int32_t *heap, int32_t *out) {
  int32_t lo = g->rank_start[r], m = g->rank_start[r + 1] - lo, nh = 0, nout = 0;
  int32_t *ops = g->rank_ops + lo;
  for (int32_t i = 0; i < m; i++)
    if (indeg[ops[i]] == 0) heap_push(heap, &nh, i);
  while (nh > 0) {
    int32_t op = ops[heap_pop(heap, &nh)];
    out[nout++] = op;
    for (int32_t k = ex_start[op]; k < ex_start[op + 1]; k++)
      if (--indeg[ex_to[k]] == 0) heap_push(heap, &nh, g->pos[ex_to[k]]);
  }
  if (nout < m) {
    char d[160];
    int32_t stuck = -1;
    for (int32_t i = 0; i < m && stuck < 0; i++)
      if (indeg[ops[i]] > 0) stuck = ops[i];
    return cdag__error(CDAG_ERR_CYCLE, "explicit dependencies of rank %d form a cycle through %s (%d ops involved)",
                       r, ir_describe(g, stuck, d, sizeof d), m - nout);
  }
  memcpy(ops, out, (size_t)m * sizeof *ops);
  for (int32_t i = 0; i < m; i++) g->pos[ops[i]] = i;
  return CDAG_OK;
}

/* Dependencies (pairs before, after) as CSR keyed by one end: by = 0 lists each op's
   dependents (before -> after), by = 1 each op's prerequisites (after -> before). */
static int explicit_csr(const cdag_graph *g, const int32_t *dep, int64_t ndeps, int by, int32_t **start,
                        int32_t **other) {
  *start = calloc((size_t)g->nops + 1, sizeof **start);
  *other = malloc((size_t)(ndeps ? ndeps : 1) * sizeof **other);
  if (!*start || !*other) return CDAG_NOMEM("dependencies");
  int32_t *st = *start;
  for (int64_t i = 0; i < ndeps; i++) st[dep[2 * i + by] + 1]++;
  for (int64_t i = 0; i < g->nops; i++) st[i + 1] += st[i];
  for (int64_t i = 0; i < ndeps; i++) (*other)[st[dep[2 * i + by]]++] = dep[2 * i + 1 - by];
  for (int64_t i = g->nops; i > 0; i--) st[i] = st[i - 1];
  st[0] = 0;
  return CDAG_OK;
}

/* Requires and irequires both order issue: program order puts the earlier op first. */
static int order_pairs(const cdag_graph *g, int32_t **pairs, int64_t *n) {
  *n = g->ndeps + g->nsdeps;
  *pairs = malloc((size_t)(2 * *n + 2) * sizeof **pairs);
  if (!*pairs) return CDAG_NOMEM("program order");
  if (g->ndeps) memcpy(*pairs, g->dep, (size_t)(2 * g->ndeps) * sizeof **pairs);
  if (g->nsdeps) memcpy(*pairs + 2 * g->ndeps, g->sdep, (size_t)(2 * g->nsdeps) * sizeof **pairs);
  return CDAG_OK;
}

/* Applies topo_rank to every rank with a backward explicit dependency (requires or
   irequires): a cycle of them is CDAG_ERR_CYCLE. */
static int order_explicit(cdag_graph *g) {
  int64_t n = g->nops, np = 0;
  int32_t *pairs = NULL;
  int rc = order_pairs(g, &pairs, &np), any = 0;
  for (int64_t i = 0; !rc && i < np && !any; i++) any = g->pos[pairs[2 * i]] >= g->pos[pairs[2 * i + 1]];
  if (rc || !any) {
    free(pairs);
    return rc;
  }
  int32_t *ex_start = NULL, *ex_to = NULL;
  int32_t *indeg = calloc((size_t)n, sizeof *indeg), *heap = malloc((size_t)n * sizeof *heap);
  int32_t *out = malloc((size_t)n * sizeof *out);
  uint8_t *bad = calloc((size_t)g->nprocs, 1);
  if (!indeg || !heap || !out || !bad) rc = CDAG_NOMEM("program order");
  if (rc == CDAG_OK) rc = explicit_csr(g, pairs, np, 0, &ex_start, &ex_to);
  if (rc) goto done;
  for (int64_t i = 0; i < np; i++) {
    int32_t b = pairs[2 * i], a = pairs[2 * i + 1];
    indeg[a]++;
    if (g->pos[b] >= g->pos[a]) bad[g->rank[a]] = 1;
  }
  for (int r = 0; r < g->nprocs && rc == CDAG_OK; r++)
    if (bad[r]) rc = topo_rank(g, r, ex_start, ex_to, indeg, heap, out);
done:
  free(pairs); free(ex_start); free(ex_to); free(indeg); free(heap); free(out); free(bad);
  return rc;
}

/* ---- 2. memory-conflict dependencies ---- */

/* Blocks a rank's walk may take one by one, in clusters taken block by block and again for
   computations that read all: at about 100 ns and 50 bytes each, 2^28 are half a minute and
   some 13 GB (a file's two copies of 2^58 blocks at two strides over one buffer would never
   end). Beyond them the graph is refused, naming the op. */
#define BLOCKS_WALKED_MAX (1ull << 28)

/* Piece starts -> piece index, for one cluster of a rank's ranges (below). A cluster's
   ranges are few (a staging buffer written by a receive and read back by a copy), so the
   index is a small sorted array searched linearly, a handful of compares in one or two
   cache lines; a cluster that outgrows it (a root receiving p pieces into one buffer that
   is then read whole) moves to an fmap (fmap.h): a datatype's blocks are looked up one
   after the other, each in the chunk of 64 keys the last one found, where a JudyL look-up
   starts from its root every time (a chain of dependent loads, and an op makes five or
   six). */
enum { SMALL_PIECES = 16 };
typedef struct {
  int n;                /* entries in lo/idx; -1: `big` holds the index */
  int cap;              /* room in lo/idx: at most SMALL_PIECES */
  uint64_t *lo;         /* slices of the map's pools */
  int64_t *idx;
  base_fmap big;        /* the index when n < 0 (its finger: a walk looks near its last look-up) */
  int32_t lat;          /* the cluster's lattice (clusters.lat) when it is taken as one */
  int64_t seg0, nseg;   /* block by block: where two sides' hulls meet, clusters.seg[seg0 ..] */
} piece_index;

/* An address range an op touches: [lo, hi), its slot (a side's or a block's, find_clusters). */
typedef struct {
  uint64_t lo, hi;
  int32_t slot;
} op_range;

/* Ranges that overlap, directly or through others, form a cluster: no op touches two
   clusters' addresses with one range, so pieces and conflicts never cross clusters and each
   cluster keeps its own index. The edges found, and their order, are those of one index
   for the whole rank; a rank's thousands of pieces (an alltoall's 1023 staging buffers)
   make one big index, its clusters make small arrays, and a range alone in its cluster (most
   origin reads and final writes) conflicts with nothing and is not looked up at all.
   A side of an op (what it reads, what it writes) counts as its hull here, so that the
   sort is of sides, not of a datatype's thousands of blocks. A cluster whose sides all have
   one pattern (a datatype's buffer packed or unpacked again and again) takes each side as
   one range, its first block: every byte of such a side meets the same sides in the same
   order, so the first block finds every edge the side has, in the order its blocks would,
   and the others would find them again. A cluster whose strided sides share one stride S
   (a datatype's column packed with 8,128 blocks and unpacked with 8,192; one block copied
   alone) is a lattice: rows of S bytes, split into columns at every side's first and last
   byte modulo S, so that each side covers whole cells (row, column). Its index is of cells,
   numbered column by column, and a side takes one range per column: the same pieces meet
   the same sides as bytes would, in O(columns) look-ups, not O(blocks). Other clusters take
   each block of their strided sides in turn, but for blocks where no other side's hull
   lies (a datatype's buffer of 8,144 blocks of which a 960-byte copy meets 60): such a
   block meets no other side, so it finds no edge and leaves nothing another would find. */
enum { LATTICE_CELLS = 16 };
typedef struct {
  uint64_t base, stride, rows;      /* the cluster's lowest byte, its sides' one stride, rows of it */
  uint64_t cell[LATTICE_CELLS + 1]; /* column boundaries: cell c is [cell[c], cell[c + 1]) */
  int ncells;
} lattice;

enum { SIDE_WHOLE, SIDE_BLOCKS, SIDE_LATTICE };   /* how a cluster takes its sides */
typedef struct {
  op_range *rg, *rg_tmp;    /* the scope's sides' hulls (slot: the side, 2i reads and 2i + 1 writes of position i) */
  uint8_t *pile;            /* per range: its pile (deal_piles) */
  int32_t *side_cl;         /* per side: its cluster, -1 alone */
  uint8_t *each;            /* per side: SIDE_WHOLE, SIDE_BLOCKS or SIDE_LATTICE, its cluster's way */
  lattice *lat;             /* the lattices of clusters taken by SIDE_LATTICE */
  int64_t nlat, latcap;
  op_range *seg;            /* clusters taken block by block: where hulls meet, disjoint, ascending */
  int64_t nseg, segcap;
  piece_index *cidx;        /* per cluster of two sides or more */
  uint64_t *pool_lo;        /* the small indexes' arrays */
  int64_t *pool_idx;
  int32_t ncl;
} clusters;

typedef struct {
  piece_index *map;     /* the cluster of the range being touched */
  clusters c;
  uint64_t *hi;         /* piece end (exclusive) */
  int32_t *writer;      /* last writer (position in ops), -1 none */
  int32_t *readers;     /* head of reader list since the last write, -1 none */
  int64_t npieces, pcap;
  int64_t free_piece;   /* pieces a write replaced, chained through hi; -1 none */
  int64_t lookups;      /* ranges looked up (cdag_graph.dep_lookups) */
  int32_t *rd_op, *rd_next; /* immutable reader lists (positions) */
  int64_t nrd, rdcap;
  int32_t *stamp;       /* stamp[before] == after: edge already recorded */
  const int32_t *ops;   /* the rank's ops: the map records positions in this list */
  int32_t c_base;       /* position of the first op of the scope the clusters describe */
  edge_buf *edges;
  int32_t *npred, *nsucc; /* g->pred_start/succ_start, holding until build_csr each op's
                             list length at op + 1, counted as edges are found */
} conflict_map;

/* The same for the whole index: the piece starting at or below *k (last) or at or above
   it (first). */
static int64_t index_last(piece_index *x, uint64_t *k) {
  if (x->n < 0) return base_fmap_find(&x->big, k, BASE_IMAP_AT_OR_BELOW);
  int i = x->n - 1;
  while (i >= 0 && x->lo[i] > *k) i--;
  if (i < 0) return -1;
  *k = x->lo[i];
  return x->idx[i];
}

static int64_t index_first(piece_index *x, uint64_t *k) {
  if (x->n < 0) return base_fmap_find(&x->big, k, BASE_IMAP_AT_OR_ABOVE);
  int i = 0;
  while (i < x->n && x->lo[i] < *k) i++;
  if (i == x->n) return -1;
  *k = x->lo[i];
  return x->idx[i];
}

/* Adds a piece start that is not in the index. */
static int index_insert(piece_index *x, uint64_t lo, int64_t idx) {
  if (x->n == x->cap) {
    for (int i = 0; i < x->cap; i++) {
      int rc = base_fmap_put(&x->big, x->lo[i], x->idx[i]);
      if (rc) return rc;
    }
    x->n = -1;
  }
  if (x->n < 0) return base_fmap_put(&x->big, lo, idx);
  int i = x->n++;
  for (; i > 0 && x->lo[i - 1] > lo; i--) {
    x->lo[i] = x->lo[i - 1];
    x->idx[i] = x->idx[i - 1];
  }
  x->lo[i] = lo;
  x->idx[i] = idx;
  return CDAG_OK;
}

/* CDAG_OK, or CDAG_ERR_NOMEM from the big index (a delete may allocate). */
static int index_delete(piece_index *x, uint64_t lo) {
  if (x->n < 0) return base_fmap_del(&x->big, lo);
  int i = 0;
  while (i < x->n && x->lo[i] != lo) i++;
  if (i == x->n) return CDAG_OK;
  for (x->n--; i < x->n; i++) {
    x->lo[i] = x->lo[i + 1];
    x->idx[i] = x->idx[i + 1];
  }
  return CDAG_OK;
}

static void index_clear(piece_index *x) { base_fmap_clear(&x->big); }

/* Positions within the rank, not op ids, so the stamps and the map stay in a small array
   (ids of one rank lie far apart when graphs are built round by round). */
static int add_edge(conflict_map *m, int32_t before, int32_t after) {
  if (before == after || m->stamp[before] == after) return CDAG_OK;
  m->stamp[before] = after;
  int32_t b = m->ops[before], a = m->ops[after];
  m->nsucc[b + 1]++; /* both ops of this rank, their lines fresh from its walk */
  m->npred[a + 1]++;
  return edge_push(m->edges, b);
}

/* A piece [lo, hi), its index in *at (a replaced one's, or a new one). */
static int new_piece(conflict_map *m, uint64_t lo, uint64_t hi, int32_t writer, int32_t readers, int64_t *at) {
  int64_t i = m->free_piece;
  if (i >= 0) m->free_piece = (int64_t)m->hi[i];
  else if (m->npieces == m->pcap) {
    int64_t cap = base_grown_cap(m->pcap, 1), n = m->npieces;
    if (base_resize((void **)&m->hi, n, cap, sizeof *m->hi, "interval map") ||
        base_resize((void **)&m->writer, n, cap, sizeof *m->writer, "interval map") ||
        base_resize((void **)&m->readers, n, cap, sizeof *m->readers, "interval map"))
      return CDAG_ERR_NOMEM;
    m->pcap = cap;
  }
  if (i < 0) i = m->npieces++;
  m->hi[i] = hi;
  m->writer[i] = writer;
  m->readers[i] = readers;
  *at = i;
  return index_insert(m->map, lo, i);
}

static int push_reader(conflict_map *m, int64_t piece, int32_t op) {
  if (m->nrd == m->rdcap) {
    int64_t cap = base_grown_cap(m->rdcap, 1);
    if (base_resize((void **)&m->rd_op, m->nrd, cap, sizeof *m->rd_op, "interval map") ||
        base_resize((void **)&m->rd_next, m->nrd, cap, sizeof *m->rd_next, "interval map"))
      return CDAG_ERR_NOMEM;
    m->rdcap = cap;
  }
  m->rd_op[m->nrd] = op;
  m->rd_next[m->nrd] = m->readers[piece];
  m->readers[piece] = (int32_t)m->nrd++;
  return CDAG_OK;
}

/* Makes x a piece boundary if a piece covers it strictly inside. */
static int split_at(conflict_map *m, uint64_t x) {
  uint64_t k = x;
  int64_t p = index_last(m->map, &k);
  if (p < 0 || k == x || m->hi[p] <= x) return CDAG_OK;
  uint64_t hi = m->hi[p];
  int64_t at;
  m->hi[p] = x;
  return new_piece(m, x, hi, m->writer[p], m->readers[p], &at);
}

/* The piece that starts last at or below b - 1, in *start its start; -1 if none. Where it ends
   at or below a, nothing covers [a, b) yet; where it is [a, b) itself, the range is one
   piece. Either way one look-up settles the range, where splitting and walking take four
   or five (these are most ranges: fresh buffers, a staging buffer read back whole). */
static int64_t piece_below(const conflict_map *m, uint64_t b, uint64_t *start) {
  *start = b - 1;
  return index_last(m->map, start);
}

/* [a, b) lies inside piece q, which starts at `start`: q keeps what lies below a, a new piece
   with q's writer and readers takes what lies above b, and *mid is the piece [a, b) (q itself
   when it starts at a). What splitting at a and b does, with one look-up fewer per cut: a
   datatype's blocks written into a buffer received whole cut one piece each. */
static int cut_out(conflict_map *m, int64_t q, uint64_t start, uint64_t a, uint64_t b, int64_t *mid) {
  int64_t at;
  uint64_t hi = m->hi[q];
  int rc = CDAG_OK;
  if (b < hi) {
    m->hi[q] = b;
    rc = new_piece(m, b, hi, m->writer[q], m->readers[q], &at);
  }
  if (rc == CDAG_OK && start == a) *mid = q;
  else if (rc == CDAG_OK) {
    m->hi[q] = a;
    rc = new_piece(m, a, b, m->writer[q], m->readers[q], mid);
  }
  return rc;
}

static int touch_read(conflict_map *m, uint64_t a, uint64_t b, int32_t op) {
  int rc;
  if (a == b) return CDAG_OK;
  uint64_t start;
  int64_t q = piece_below(m, b, &start), at;
  if (q < 0 || m->hi[q] <= a) {
    if ((rc = new_piece(m, a, b, -1, -1, &at))) return rc;
    return push_reader(m, at, op);
  }
  if (start <= a && m->hi[q] >= b) {   /* one piece holds the range */
    if ((rc = cut_out(m, q, start, a, b, &at))) return rc;
    if (m->writer[at] >= 0 && (rc = add_edge(m, m->writer[at], op))) return rc;
    return push_reader(m, at, op);
  }
  if ((rc = split_at(m, a)) || (rc = split_at(m, b))) return rc;
  uint64_t cur = a;
  while (cur < b) {
    uint64_t k = cur;
    int64_t p = index_first(m->map, &k);
    if (p < 0 || k >= b || k > cur) { /* a gap [cur, min(k, b)): nobody touched it yet */
      uint64_t end = (p < 0 || k >= b) ? b : k;
      if ((rc = new_piece(m, cur, end, -1, -1, &at))) return rc;
      if ((rc = push_reader(m, at, op))) return rc;
      cur = end;
      continue;
    }
    if (m->writer[p] >= 0 && (rc = add_edge(m, m->writer[p], op))) return rc;
    if ((rc = push_reader(m, p, op))) return rc;
    cur = m->hi[p];
  }
  return CDAG_OK;
}

static int touch_write(conflict_map *m, uint64_t a, uint64_t b, int32_t op) {
  int rc;
  if (a == b) return CDAG_OK;
  uint64_t start;
  int64_t q = piece_below(m, b, &start), at;
  if (q < 0 || m->hi[q] <= a) return new_piece(m, a, b, op, -1, &at);
  if (start <= a && m->hi[q] >= b) {   /* one piece holds the range (or is it: a buffer written again): kept, cut */
    if ((rc = cut_out(m, q, start, a, b, &at))) return rc;
    if (m->readers[at] < 0 && m->writer[at] >= 0 && (rc = add_edge(m, m->writer[at], op))) return rc;
    for (int32_t r = m->readers[at]; r >= 0; r = m->rd_next[r])
      if ((rc = add_edge(m, m->rd_op[r], op))) return rc;
    m->writer[at] = op;
    m->readers[at] = -1;
    return CDAG_OK;
  }
  if ((rc = split_at(m, a)) || (rc = split_at(m, b))) return rc;
  uint64_t k = a;
  for (int64_t p = index_first(m->map, &k); p >= 0 && k < b; p = index_first(m->map, &k)) {
    if (m->readers[p] < 0 && m->writer[p] >= 0 && (rc = add_edge(m, m->writer[p], op))) return rc;
    for (int32_t r = m->readers[p]; r >= 0; r = m->rd_next[r])
      if ((rc = add_edge(m, m->rd_op[r], op))) return rc;
    if ((rc = index_delete(m->map, k))) return rc;
    m->hi[p] = (uint64_t)m->free_piece;   /* no index names p now */
    m->free_piece = p;
  }
  return new_piece(m, a, b, op, -1, &at);
}

/* What an op reads and writes, gathered for one rank before its walk: the gather's loads
   are independent of each other and overlap, the walk's would wait on the map's. */
typedef struct {
  uint64_t rd, wr;        /* read [rd, rd+rlen), write [wr, wr+wlen); UINT64_MAX: none */
  uint64_t rlen, wlen;
  uint64_t rn, wn;        /* blocks of each side (a strided copy's; 1 otherwise) */
  uint64_t rs, ws;        /* block b reads at rd + b * rs and writes at wr + b * ws, rlen and
                             wlen bytes each */
  const uint64_t *rat, *wat;   /* a listed side: block b at rd + rat[b] (wr + wat[b]) */
  uint64_t rlast, wlast;       /* the farthest block's offset */
} footprint;

/* The end of a side's farthest block (at, its offset last, len bytes), 0 if it wraps past 2^64. */
static uint64_t fp_end(uint64_t at, uint64_t len, uint64_t last) {
  uint64_t e = at + last + len;
  return e < at ? 0 : e;
}

/* A side whose blocks lie back to back (a packing area's, stride = length) is one range: the
   same bytes, so the same conflicts in the same order, without a range and a look-up per
   block (a datatype of 8,192 blocks packs with one range here, not 8,192). */
static void fp_join_side(uint64_t *len, uint64_t *n, uint64_t *stride, const uint64_t *at, uint64_t *last) {
  if (*n < 2 || at || *stride != *len) return;
  *len *= *n;
  *stride = *len;
  *n = 1;
  *last = 0;
}

/* A computation's: what it reads (one range), the blocks it writes. */
static footprint compute_footprint(const cdag_graph *g, int32_t op) {
  uint64_t rl = g->cr_len[op], wl = g->cw_len[op];
  int rd = rl && rl != IR_READS_ALL;   /* reading all is walked apart (reads_all_deps) */
  ir_blocks w = ir_write_blocks(g, op);
  return (footprint){rd ? g->addr2[op] : UINT64_MAX, wl ? g->addr[op] : UINT64_MAX, rd ? rl : 0, w.len, 1, w.n, 0, w.to,
                     NULL, w.to_at, 0, w.to_last};
}

static void gather_footprints(const cdag_graph *g, const int32_t *ops, int32_t n, footprint *fp) {
  for (int32_t i = 0; i < n; i++) {
    int32_t op = ops[i];
    uint64_t a = g->addr[op], len = g->bytes[op];
    switch (g->kind[op]) {
      case IR_SEND: fp[i] = (footprint){a, UINT64_MAX, len, 0, 1, 1, 0, 0, NULL, NULL, 0, 0}; break;
      case IR_RECV: fp[i] = (footprint){UINT64_MAX, a, 0, len, 1, 1, 0, 0, NULL, NULL, 0, 0}; break;
      case IR_REDUCE: fp[i] = (footprint){g->addr2[op], a, len, len, 1, 1, 0, 0, NULL, NULL, 0, 0}; break;
      case IR_COPY: {   /* each block of a strided side is a range of its own: never the hull */
        ir_blocks b = ir_copy_blocks(g, op);
        fp[i] = (footprint){g->addr2[op], a, b.len, b.len, b.n, b.n, b.from, b.to, b.from_at, b.to_at, b.from_last, b.to_last};
        fp_join_side(&fp[i].rlen, &fp[i].rn, &fp[i].rs, fp[i].rat, &fp[i].rlast);
        fp_join_side(&fp[i].wlen, &fp[i].wn, &fp[i].ws, fp[i].wat, &fp[i].wlast);
        break;
      }
      case IR_CALC:
        if (ir_is_compute(g, op)) {
          fp[i] = compute_footprint(g, op);
          break;
        }
        /* fall through */
      default: fp[i] = (footprint){UINT64_MAX, UINT64_MAX, 0, 0, 1, 1, 0, 0, NULL, NULL, 0, 0}; break;
    }
  }
}

/* Does every range the rank's ops touch, in program order, lie above all before it? Then no
   two overlap and the walk would find no conflict (buffers handed out in order, as GOAL's
   fresh buffers are): O(n), no map. A strided side counts as its hull here, which can only
   send a rank to the exact walk. */
static int footprints_ascend(const footprint *fp, int32_t n) {
  uint64_t top = 0;
  for (int32_t i = 0; i < n; i++) {
    const footprint *f = &fp[i];
    if (f->rd != UINT64_MAX && f->rlen) {
      uint64_t e = fp_end(f->rd, f->rlen, f->rlast);
      if (f->rd < top || e == 0) return 0;
      top = e;
    }
    if (f->wr != UINT64_MAX && f->wlen) {
      uint64_t e = fp_end(f->wr, f->wlen, f->wlast);
      if (f->wr < top || e == 0) return 0;
      top = e;
    }
  }
  return 1;
}

/* The end of the ascending run of r that starts at i. */
static int32_t run_end(const op_range *r, int32_t i, int32_t n) {
  if (i >= n) return n;
  while (++i < n && r[i - 1].lo <= r[i].lo) {}
  return i;
}

/* Sorts r[0 .. n) by start: ascending runs merged pairwise until one is left, tmp the other
   buffer; returns the one holding the result. O(n log runs). */
static op_range *merge_runs(op_range *r, op_range *tmp, int32_t n) {
  for (int32_t runs = 2; runs > 1;) {
    runs = 0;
    for (int32_t i = 0, o = 0; i < n; runs++) {
      int32_t mid = run_end(r, i, n), hi = run_end(r, mid, n), a = i, b = mid;
      while (a < mid && b < hi) tmp[o++] = r[b].lo < r[a].lo ? r[b++] : r[a++];
      while (a < mid) tmp[o++] = r[a++];
      while (b < hi) tmp[o++] = r[b++];
      i = hi;
    }
    op_range *x = r;
    r = tmp;
    tmp = x;
  }
  return r;
}

/* A rank's ranges are a few interleaved ascending sequences (origins read, staging written,
   staging read, finals written), which alternate too often for runs to be long. Dealt onto
   at most PILES ascending piles (each range onto the first pile it does not go below), the
   piles laid end to end in out are that many runs. 0 if more piles would be needed. */
enum { PILES = 8 };
static int deal_piles(const op_range *r, op_range *out, uint8_t *pile, int32_t n) {
  uint64_t top[PILES];
  int32_t at[PILES + 1] = {0}, np = 0;
  for (int32_t i = 0; i < n; i++) {
    int p = 0;
    while (p < np && top[p] > r[i].lo) p++;
    if (p == PILES) return 0;
    np += p == np;
    top[p] = r[i].lo;
    pile[i] = (uint8_t)p;
    at[p + 1]++;
  }
  for (int p = 0; p < np; p++) at[p + 1] += at[p];
  for (int32_t i = 0; i < n; i++) out[at[pile[i]]++] = r[i];
  return 1;
}

/* Sorts r[0 .. n) by start with LSD radix passes of 8 bits, tmp the other buffer; returns the
   one holding the result. One pass counts every digit; a digit all ranges share (the high
   bytes of addresses in one mapping) costs no pass: O(n) per varying byte, where merging the
   runs of ranges in no order (a datatype's blocks written backwards, a plan's pieces sorted
   by their origins and copied to their finals) takes log n passes. */
static op_range *radix_ranges(op_range *r, op_range *tmp, int32_t n) {
  enum { DIGITS = 8, BUCKETS = 256 };
  int32_t count[DIGITS][BUCKETS] = {{0}};
  for (int32_t i = 0; i < n; i++)
    for (int d = 0; d < DIGITS; d++) count[d][(r[i].lo >> (8 * d)) & 0xff]++;
  for (int d = 0; d < DIGITS; d++) {
    int32_t *c = count[d], at = 0;
    if (c[(r[0].lo >> (8 * d)) & 0xff] == n) continue;   /* one value: the order stands */
    for (int b = 0; b < BUCKETS; b++) {
      int32_t k = c[b];
      c[b] = at;
      at += k;
    }
    for (int32_t i = 0; i < n; i++) tmp[c[(r[i].lo >> (8 * d)) & 0xff]++] = r[i];
    op_range *x = r;
    r = tmp;
    tmp = x;
  }
  return r;
}

/* r[0 .. n) sorted by start, in r or tmp (returned). */
static op_range *sort_ranges(op_range *r, op_range *tmp, uint8_t *pile, int32_t n) {
  if (deal_piles(r, tmp, pile, n)) return merge_runs(tmp, r, n);
  return n > 0 ? radix_ranges(r, tmp, n) : r;
}

/* Does the op touch its read (write) side? */
static int fp_reads(const footprint *f) { return f->rd != UINT64_MAX && f->rlen; }
static int fp_writes(const footprint *f) { return f->wr != UINT64_MAX && f->wlen; }

/* One side of an op's footprint: n blocks of len bytes, block b at lo + at[b] (listed) or
   lo + b * stride; last, the farthest block's offset. */
typedef struct {
  uint64_t lo, len, n, stride, last;
  const uint64_t *at;
} fp_side;

static fp_side side_of(const footprint *f, int w) {
  return w ? (fp_side){f->wr, f->wlen, f->wn, f->ws, f->wlast, f->wat} : (fp_side){f->rd, f->rlen, f->rn, f->rs, f->rlast, f->rat};
}
static int side_touches(const footprint *f, int w) { return w ? fp_writes(f) : fp_reads(f); }
static uint64_t side_block(const fp_side *x, uint64_t b) { return x->lo + (x->at ? x->at[b] : b * x->stride); }

/* Do the two sides touch the same blocks in the same order? (At one stride, the farthest
   block's offset gives the stride.) */
static int same_pattern(const fp_side *a, const fp_side *b) {
  if (a->lo != b->lo || a->len != b->len || a->n != b->n || a->last != b->last || !a->at != !b->at) return 0;
  return !a->at || a->at == b->at || !memcmp(a->at, b->at, a->n * sizeof *a->at);
}

/* The hulls of the sides the scope's n ops touch, slot 2i + w; -1 if one wraps past 2^64
   (then one cluster takes all). */
static int32_t gather_sides(const footprint *fp, int32_t n, op_range *rg) {
  int32_t k = 0;
  for (int32_t i = 0; i < n; i++)
    for (int w = 0; w < 2; w++) {
      if (!side_touches(&fp[i], w)) continue;
      fp_side x = side_of(&fp[i], w);
      uint64_t e = fp_end(x.lo, x.len, x.last);
      if (!e) return -1;
      rg[k++] = (op_range){x.lo, e, 2 * i + w};
    }
  return k;
}

/* Are the sides r[0 .. k) all of one pattern? */
static int one_pattern(const footprint *fp, const op_range *r, int32_t k) {
  fp_side first = side_of(&fp[r[0].slot / 2], r[0].slot % 2);
  for (int32_t x = 1; x < k; x++) {
    fp_side o = side_of(&fp[r[x].slot / 2], r[x].slot % 2);
    if (!same_pattern(&first, &o)) return 0;
  }
  return 1;
}

/* Adds column x (below the stride) to the lattice's sorted boundaries; 0 if they are full. */
static int lattice_cut(lattice *l, uint64_t x) {
  int i = 0;
  while (i < l->ncells && l->cell[i] < x) i++;
  if (i < l->ncells && l->cell[i] == x) return 1;
  if (l->ncells == LATTICE_CELLS) return 0;
  memmove(&l->cell[i + 1], &l->cell[i], (size_t)(l->ncells - i) * sizeof *l->cell);
  l->cell[i] = x;
  l->ncells++;
  return 1;
}

/* The rows [*r0, *r1) in which a side covers cell c (a side covers whole cells). */
static void lattice_rows(const lattice *l, const fp_side *x, int c, uint64_t *r0, uint64_t *r1) {
  uint64_t cs = l->cell[c], ce = l->cell[c + 1], S = l->stride, a = x->lo - l->base;
  *r0 = *r1 = 0;
  if (x->n > 1) {   /* blocks of len <= S at one column; a block may run into the next row */
    uint64_t row = a / S, col = a % S, end = col + x->len;
    if (cs >= col && ce <= end) *r0 = row, *r1 = row + x->n;
    else if (end > S && ce <= end - S) *r0 = row + 1, *r1 = row + 1 + x->n;
    return;
  }
  uint64_t e = a + x->len;   /* one range: the rows in which [cs, ce) lies inside [a, e) */
  if (e < ce) return;
  *r0 = a > cs ? (a - cs) / S + ((a - cs) % S != 0) : 0;   /* rounded up, never past 2^64 */
  *r1 = (e - ce) / S + 1;
}

/* Can the cluster's k sides r[0 .. k) be taken as a lattice, with fewer look-ups than block by
   block? Then *l describes it. */
static int lattice_of(lattice *l, const footprint *fp, const op_range *r, int32_t k) {
  uint64_t top = 0, blocks = 0, cells = 0;
  l->stride = 0;
  for (int32_t x = 0; x < k; x++) {
    fp_side s = side_of(&fp[r[x].slot / 2], r[x].slot % 2);
    if (s.n > 1 && (s.at || (l->stride && s.stride != l->stride))) return 0;
    if (s.n > 1) l->stride = s.stride;
    if (r[x].hi > top) top = r[x].hi;
    blocks = sat_add_u64(blocks, s.n);
  }
  if (!l->stride) return 0;   /* ranges alone: one look-up each already */
  l->base = r[0].lo, l->ncells = 0;
  for (int32_t x = 0; x < k; x++) {
    fp_side s = side_of(&fp[r[x].slot / 2], r[x].slot % 2);
    uint64_t a = s.lo - l->base;
    if (!lattice_cut(l, a % l->stride) || !lattice_cut(l, (a + s.len) % l->stride)) return 0;
  }
  if (!lattice_cut(l, 0)) return 0;
  l->cell[l->ncells] = l->stride;
  l->rows = (top - l->base) / l->stride + 2;
  if (l->rows > UINT64_MAX / LATTICE_CELLS) return 0;
  for (int32_t x = 0; x < k; x++) {
    fp_side s = side_of(&fp[r[x].slot / 2], r[x].slot % 2);
    for (int c = 0; c < l->ncells; c++) {
      uint64_t r0, r1;
      lattice_rows(l, &s, c, &r0, &r1);
      cells += r0 < r1;
    }
  }
  return cells < blocks;
}

/* Where two or more of the cluster's k hulls r[0 .. k) (by start) meet, as disjoint ascending
   segments for cluster cl: a byte of r[i] lies in an earlier one iff it lies below the
   highest end before it. O(k). */
static int add_segments(clusters *c, const op_range *r, int32_t k, int32_t cl) {
  uint64_t top = r[0].hi;
  c->cidx[cl].seg0 = c->nseg;
  for (int32_t x = 1; x < k; x++) {
    uint64_t lo = r[x].lo, hi = r[x].hi < top ? r[x].hi : top;
    if (r[x].hi > top) top = r[x].hi;
    if (lo >= hi) continue;
    if (c->nseg > c->cidx[cl].seg0 && c->seg[c->nseg - 1].hi >= lo) {
      if (hi > c->seg[c->nseg - 1].hi) c->seg[c->nseg - 1].hi = hi;
      continue;
    }
    int rc = base_grow((void **)&c->seg, c->nseg, &c->segcap, 1, sizeof *c->seg, "dependencies");
    if (rc) return rc;
    c->seg[c->nseg++] = (op_range){lo, hi, cl};
  }
  c->cidx[cl].nseg = c->nseg - c->cidx[cl].seg0;
  return CDAG_OK;
}

/* Does [lo, hi) meet a segment of x? */
static int meets_segment(const clusters *c, const piece_index *x, uint64_t lo, uint64_t hi) {
  if (x->nseg < 0) return 1;   /* one cluster of everything: no segments */
  const op_range *s = c->seg + x->seg0;
  int64_t a = 0, z = x->nseg;
  while (a < z) {   /* the first segment ending above lo */
    int64_t mid = a + (z - a) / 2;
    if (s[mid].hi <= lo) a = mid + 1;
    else z = mid;
  }
  return a < x->nseg && s[a].lo < hi;
}

/* Cluster cl is taken as lattice l. */
static int add_lattice(clusters *c, const lattice *l, int32_t cl) {
  int rc = base_grow((void **)&c->lat, c->nlat, &c->latcap, 1, sizeof *c->lat, "dependencies");
  if (rc == CDAG_OK) c->cidx[cl].lat = c->nlat, c->lat[c->nlat++] = *l;
  return rc;
}

/* Cluster c of k sides gets its index, a slice of the pools: room for 2k pieces, at most
   SMALL_PIECES (a cluster that outgrows it, as one taken block by block will, moves to an
   fmap). */
static int32_t open_cluster(clusters *c, int32_t k, int64_t *pool_at) {
  int cap = 2 * k < SMALL_PIECES ? 2 * k : SMALL_PIECES;
  c->cidx[c->ncl] = (piece_index){0, cap, c->pool_lo + *pool_at, c->pool_idx + *pool_at, {0}, -1, 0, -1};
  *pool_at += cap;
  return c->ncl++;
}

/* Clusters of the scope's n ops by one sweep of their sides by start. O(n log n). */
static int find_clusters(clusters *c, const footprint *fp, int32_t n) {
  int32_t k = gather_sides(fp, n, c->rg);
  int64_t pool_at = 0;
  c->ncl = 0;
  if (k < 0) {   /* one cluster, block by block */
    open_cluster(c, SMALL_PIECES, &pool_at);
    memset(c->side_cl, 0, 2 * (size_t)n * sizeof *c->side_cl);
    memset(c->each, SIDE_BLOCKS, 2 * (size_t)n);
    return CDAG_OK;
  }
  for (int32_t s = 0; s < 2 * n; s++) c->side_cl[s] = -1;
  op_range *r = sort_ranges(c->rg, c->rg_tmp, c->pile, k);
  for (int32_t i = 0, j; i < k; i = j) {
    uint64_t top = r[i].hi;
    for (j = i + 1; j < k && r[j].lo < top; j++)
      if (r[j].hi > top) top = r[j].hi;
    if (j - i == 1) continue;
    int32_t cl = open_cluster(c, j - i, &pool_at);
    uint8_t each = one_pattern(fp, r + i, j - i) ? SIDE_WHOLE : SIDE_BLOCKS;
    lattice l;
    int rc = CDAG_OK;
    if (each == SIDE_BLOCKS && lattice_of(&l, fp, r + i, j - i)) rc = add_lattice(c, &l, cl), each = SIDE_LATTICE;
    if (each == SIDE_BLOCKS) rc = add_segments(c, r + i, j - i, cl);
    if (rc) return rc;
    for (int32_t x = i; x < j; x++) c->side_cl[r[x].slot] = cl, c->each[r[x].slot] = each;
  }
  return CDAG_OK;
}

/* The scope's n ops' sides in clusters taken block by block: within BLOCKS_WALKED_MAX blocks? */
static int blocks_bounded(const cdag_graph *g, const clusters *c, const footprint *fp, const int32_t *ops, int32_t n) {
  uint64_t total = 0, most = 0;
  int32_t at = 0;
  for (int32_t s = 0; s < 2 * n; s++) {
    if (c->side_cl[s] < 0 || c->each[s] != SIDE_BLOCKS || !side_touches(&fp[s / 2], s % 2)) continue;
    uint64_t k = side_of(&fp[s / 2], s % 2).n;
    total = sat_add_u64(total, k);
    if (k > most) most = k, at = s / 2;
  }
  if (total <= BLOCKS_WALKED_MAX) return CDAG_OK;
  char d[160];
  return cdag__error(CDAG_ERR_UNSUPPORTED, "rank %d: ordering its overlapping strided ops takes %llu blocks one by one "
                     "(at most %llu); the largest, %s, has %llu: give overlapping strided ops one stride, or fewer "
                     "blocks", g->rank[ops[at]], (unsigned long long)total, BLOCKS_WALKED_MAX,
                     ir_describe(g, ops[at], d, sizeof d), (unsigned long long)most);
}

static int touch_range(conflict_map *m, int w, uint64_t lo, uint64_t len, int32_t i) {
  m->lookups++;
  return w ? touch_write(m, lo, lo + len, i) : touch_read(m, lo, lo + len, i);
}

/* A side in its lattice's index of cells: one range of rows per column it covers. */
static int touch_cells(conflict_map *m, const lattice *l, const fp_side *x, int w, int32_t i) {
  int rc = CDAG_OK;
  for (int c = 0; c < l->ncells && rc == CDAG_OK; c++) {
    uint64_t r0, r1;
    lattice_rows(l, x, c, &r0, &r1);
    if (r0 < r1) rc = touch_range(m, w, (uint64_t)c * l->rows + r0, r1 - r0, i);
  }
  return rc;
}

/* One side of the op at position i, in its cluster's index: one range, its cells, or each
   block in turn. */
static int touch_side(conflict_map *m, const footprint *f, int w, int32_t i) {
  int32_t s = 2 * (i - m->c_base) + w;
  if (!side_touches(f, w) || m->c.side_cl[s] < 0) return CDAG_OK;
  m->map = &m->c.cidx[m->c.side_cl[s]];
  fp_side x = side_of(f, w);
  if (m->c.each[s] == SIDE_LATTICE) return touch_cells(m, &m->c.lat[m->map->lat], &x, w, i);
  if (m->c.each[s] == SIDE_WHOLE || x.n == 1) return touch_range(m, w, side_block(&x, 0), x.len, i);
  int rc = CDAG_OK;
  for (uint64_t b = 0; b < x.n && rc == CDAG_OK; b++) {
    uint64_t lo = side_block(&x, b);
    if (meets_segment(&m->c, m->map, lo, lo + x.len)) rc = touch_range(m, w, lo, x.len, i);
  }
  return rc;
}

/* Reads and writes of the op at position i, in the order the op performs them (every read
   block, then every written one). */
static int touch_op(conflict_map *m, const footprint *f, int32_t i) {
  int rc = touch_side(m, f, 0, i);
  return rc ? rc : touch_side(m, f, 1, i);
}

/* Room for scopes of up to `longest` ops. */
static int clusters_alloc(clusters *c, int32_t longest) {
  size_t sides = 2 * (size_t)longest;
  c->rg = malloc(sides * sizeof *c->rg);
  c->rg_tmp = malloc(sides * sizeof *c->rg_tmp);
  c->pile = malloc(sides);
  c->side_cl = malloc(sides * sizeof *c->side_cl);
  c->each = malloc(sides);
  c->cidx = malloc(sides * sizeof *c->cidx);
  c->pool_lo = malloc((2 * sides + SMALL_PIECES) * sizeof *c->pool_lo);
  c->pool_idx = malloc((2 * sides + SMALL_PIECES) * sizeof *c->pool_idx);
  return c->rg && c->rg_tmp && c->pile && c->side_cl && c->each && c->cidx && c->pool_lo && c->pool_idx
             ? CDAG_OK : CDAG_NOMEM("dependencies");
}

static void clusters_clear(clusters *c) {
  for (int32_t i = 0; i < c->ncl; i++) index_clear(&c->cidx[i]);
  c->ncl = c->nlat = c->nseg = 0;
}

static void clusters_free(clusters *c) {
  free(c->rg); free(c->rg_tmp); free(c->pile); free(c->side_cl); free(c->each); free(c->lat); free(c->seg);
  free(c->cidx); free(c->pool_lo); free(c->pool_idx);
}

/* Joins (collective.c): op i depends on the rank's latest join before it; a JOIN_ALL op
   also on the ops of its own call since that join (its messages). A JOIN_CALL op (in a
   nonblocking call) depends on its call's ops alike, and the later ops of its call on it,
   but it is no join for anything else (*call_join: the latest). One edge per op, plus one
   per message of a call. */
static int join_edges(const cdag_graph *g, conflict_map *m, int32_t *last_join, int32_t *call_join, int32_t i) {
  int32_t op = m->ops[i];
  int rc = *last_join >= 0 ? add_edge(m, *last_join, i) : CDAG_OK;
  if (rc == CDAG_OK && *call_join >= 0 && g->call && g->call[op] >= 0 && g->call[m->ops[*call_join]] == g->call[op])
    rc = add_edge(m, *call_join, i);
  if ((g->join[op] == IR_JOIN_ALL || g->join[op] == IR_JOIN_CALL) && g->call)
    for (int32_t p = i - 1; p > *last_join && rc == CDAG_OK && g->call[m->ops[p]] == g->call[op]; p--)
      rc = add_edge(m, p, i);
  if (g->join[op] == IR_JOIN_CALL) *call_join = i;
  else if (g->join[op]) *last_join = i;
  return rc;
}

/* Computations that read all (recordings: PMPI cannot see what a computation reads) read
   every byte an earlier op of the rank wrote. Such an op depends on each writer since the
   previous one, and on the previous one; a later write into bytes it read depends on it.
   A receive writes its bytes for this purpose when the rank has seen it complete: at the
   join that waits for it when there is one (a `wait` naming it, the end of its native call:
   joins that are calcs, depending on it; every write of a nonblocking call, at the wait
   naming the call: MPI lets the program read nothing the call writes before), else at its place (a blocking receive is its own
   join; a graph built with the API or by hand has no waits); a computation between an MPI_Irecv and its MPI_Wait cannot have
   read the buffer (and depending on the receive would make an exchange a cycle).
   What the latest one read is kept as merged disjoint intervals (start -> end), the writes
   since in a list that the next one folds in: O(log n) per op. */
typedef struct {
  const cdag_graph *g;
  int32_t rank;               /* the rank being walked */
  const footprint *fp;        /* the rank's footprints, by position */
  const int32_t *ex_start, *ex_from;   /* explicit dependencies by the later op (NULL: none) */
  uint8_t *incomplete;        /* per position: RA_AWAITED, a receive (or a write of a nonblocking
                                 call) a later join completes; RA_PENDING, such a write seen, not
                                 completed yet */
  int32_t last;               /* position of the rank's latest one, -1 none */
  int32_t at;                 /* the position ra_push is adding */
  struct ra_write { int32_t pos; uint64_t lo, hi; } *pend;   /* writes since */
  int64_t npend, pendcap;
  base_fmap read;             /* what the latest one read: start -> index into hi (a finger: a
                                 datatype's blocks are looked up one after the other) */
  uint64_t *hi;
  int64_t nhi, hicap;
  /* Strided writes (a datatype's blocks), by pattern: each block costs a look-up and a
     fold, and a buffer is unpacked with one datatype again and again. The read set only
     grows, so a pattern it holds stays held: a write of that pattern overlaps it (if any
     of its bytes lie outside scratch) and folds nothing new. */
  struct ra_pattern { fp_side x; int64_t next; } *pat;   /* patterns seen, chained by hash */
  int64_t npat, patcap;
  int64_t nfresh;             /* pat[npat - nfresh ..]: written since the latest one, not read yet */
  uint64_t walked;            /* blocks of strided writes taken one by one (BLOCKS_WALKED_MAX) */
  base_imap held;             /* hash -> the first held pattern of that hash */
} reads_all;

static int ra_overlaps(reads_all *ra, uint64_t lo, uint64_t hi) {
  uint64_t k = hi - 1;
  int64_t x = base_fmap_find(&ra->read, &k, BASE_IMAP_AT_OR_BELOW);
  return x >= 0 && ra->hi[x] > lo;
}

static int ra_fold(reads_all *ra, uint64_t lo, uint64_t hi) {
  uint64_t k = lo;
  int64_t x = base_fmap_find(&ra->read, &k, BASE_IMAP_AT_OR_BELOW);
  int rc = CDAG_OK;
  if (x >= 0 && ra->hi[x] >= hi) return CDAG_OK;   /* read already (a buffer written again) */
  if (x >= 0 && ra->hi[x] >= lo) {
    lo = k;
    if (ra->hi[x] > hi) hi = ra->hi[x];
    rc = base_fmap_del(&ra->read, k);
  }
  for (k = lo; rc == CDAG_OK && (x = base_fmap_find(&ra->read, &k, BASE_IMAP_AT_OR_ABOVE)) >= 0 && k <= hi;) {
    if (ra->hi[x] > hi) hi = ra->hi[x];
    rc = base_fmap_del(&ra->read, k);
  }
  if (rc == CDAG_OK) rc = base_grow((void **)&ra->hi, ra->nhi, &ra->hicap, 1, sizeof *ra->hi, "dependencies");
  if (rc == CDAG_OK) rc = base_fmap_put(&ra->read, lo, ra->nhi);
  if (rc == CDAG_OK) ra->hi[ra->nhi++] = hi;
  return rc;
}

static int ra_push_part(void *ctx, uint64_t lo, uint64_t hi) {
  reads_all *ra = ctx;
  int rc = base_grow((void **)&ra->pend, ra->npend, &ra->pendcap, 1, sizeof *ra->pend, "dependencies");
  if (rc == CDAG_OK) ra->pend[ra->npend++] = (struct ra_write){ra->at, lo, hi};
  return rc;
}

/* A write at position i, read by the next one: its bytes outside scratch (scratch is not read). */
static int ra_push(reads_all *ra, int32_t i, uint64_t lo, uint64_t hi) {
  ra->at = i;
  return ir_each_outside_scratch(ra->g, ra->rank, lo, hi, ra_push_part, ra);
}

/* Listed offsets count too: patterns of one start, length, count and extent would otherwise
   share a chain that ra_holds compares one by one. O(blocks), as is the write. */
static uint64_t pattern_hash(const fp_side *x) {
  uint64_t h = x->lo * 0x9e3779b97f4a7c15u ^ x->len * 0xc2b2ae3d27d4eb4fu ^ x->n * 0x165667b19e3779f9u ^ x->last;
  for (uint64_t b = 0; x->at && b < x->n; b++) h = (h ^ x->at[b]) * 0x100000001b3u;
  return h ^ (h >> 29);
}

/* Is the pattern x in the read set? */
static int ra_holds(const reads_all *ra, const fp_side *x) {
  uint64_t k = pattern_hash(x), h = k;
  int64_t p = base_imap_find(&ra->held, &k, BASE_IMAP_AT_OR_ABOVE);
  for (; p >= 0 && k == h; p = ra->pat[p].next)
    if (same_pattern(&ra->pat[p].x, x)) return 1;
  return 0;
}

/* Remembers x, a pattern written since the latest one (its blocks pending). */
static int ra_fresh(reads_all *ra, const fp_side *x) {
  int rc = base_grow((void **)&ra->pat, ra->npat, &ra->patcap, 1, sizeof *ra->pat, "dependencies");
  if (rc == CDAG_OK) ra->pat[ra->npat++] = (struct ra_pattern){*x, -1}, ra->nfresh++;
  return rc;
}

/* The fresh patterns, folded now, are held. */
static int ra_hold_fresh(reads_all *ra) {
  int rc = CDAG_OK;
  for (int64_t p = ra->npat - ra->nfresh; p < ra->npat && rc == CDAG_OK; p++) {
    uint64_t k = pattern_hash(&ra->pat[p].x), h = k;
    int64_t first = base_imap_find(&ra->held, &k, BASE_IMAP_AT_OR_ABOVE);
    ra->pat[p].next = first >= 0 && k == h ? first : -1;
    rc = base_imap_put(&ra->held, h, p);
  }
  ra->nfresh = 0;
  return rc;
}

enum { RA_AWAITED = 1, RA_PENDING = 2 };

/* The receive at position p (any op with `any`: a part of a nonblocking call) completes at
   the join at position i (with i < 0: marks p as awaited, in the walk before). */
static int ra_completes(reads_all *ra, int32_t p, int32_t i, int any) {
  if (i < 0) {
    int32_t op = ra->g->rank_ops[ra->g->rank_start[ra->rank] + p];
    if (any || (ra->g->kind[op] == IR_RECV && !ra->g->join[op])) ra->incomplete[p] |= RA_AWAITED;   /* not a blocking one */
    return CDAG_OK;
  }
  if (!(ra->incomplete[p] & RA_PENDING)) return CDAG_OK;
  ra->incomplete[p] = 0;
  const footprint *f = &ra->fp[p];
  return ra_push(ra, i, f->wr, f->wr + f->wlen < f->wr ? UINT64_MAX : f->wr + f->wlen);
}

/* The ops of the call whose own op is at position q (they precede it), completed at i. */
static int ra_call_completes(reads_all *ra, const conflict_map *m, const cdag_graph *g, int32_t q, int32_t i, int any) {
  int rc = CDAG_OK;
  for (int32_t p = q - 1; p >= 0 && g->call[m->ops[p]] == g->call[m->ops[q]] && rc == CDAG_OK; p--)
    rc = ra_completes(ra, p, i, any);
  return rc;
}

/* The receives the join at position i completes: those it names, every write of a
   nonblocking call it names, and its call's (at = -1: marks them awaited instead). */
static int ra_join(reads_all *ra, const conflict_map *m, const cdag_graph *g, int32_t i, int32_t at) {
  int32_t op = m->ops[i];
  int rc = CDAG_OK;
  for (int32_t k = ra->ex_start ? ra->ex_start[op] : 0; ra->ex_start && k < ra->ex_start[op + 1] && rc == CDAG_OK; k++) {
    int32_t from = ra->ex_from[k];
    if (g->rank[from] != g->rank[op] || g->pos[from] >= i) continue;
    rc = ir_is_nb_call(g, from) ? ra_call_completes(ra, m, g, g->pos[from], at, 1) : ra_completes(ra, g->pos[from], at, 0);
  }
  if (g->join[op] == IR_JOIN_ALL && g->call && rc == CDAG_OK) rc = ra_call_completes(ra, m, g, i, at, 0);
  return rc;
}

/* Before the walk of a rank: which receives a later join completes, and every write of a
   nonblocking call, which only a wait naming it completes (a call no wait names wrote
   nothing the phase may read). */
static void ra_awaited(reads_all *ra, const conflict_map *m, const cdag_graph *g, int32_t n) {
  memset(ra->incomplete, 0, (size_t)n);
  for (int32_t i = 0; i < n; i++)
    if (ir_is_calc_join(g, m->ops[i])) (void)ra_join(ra, m, g, i, -1);
    else if (ir_is_nb_call(g, m->ops[i])) (void)ra_call_completes(ra, m, g, i, -1, 1);
}

/* A block [lo, lo + len) the op at position i writes: after the latest one if that read it,
   pending for the next one. */
static int ra_write(reads_all *ra, conflict_map *m, int32_t i, uint64_t lo, uint64_t len) {
  uint64_t hi = lo + len < lo ? UINT64_MAX : lo + len;
  int rc = CDAG_OK;
  /* the edge found (stamped) at an earlier block needs no look-up at the next */
  if (ra->last >= 0 && ra->last != i && m->stamp[ra->last] != i && ra_overlaps(ra, lo, hi)) rc = add_edge(m, ra->last, i);
  return rc ? rc : ra_push(ra, i, lo, hi);
}

/* A strided write: block by block, unless the read set holds its pattern; then one edge
   after the latest one, and one pending entry that folds nothing (lo = hi). */
static int ra_strided(reads_all *ra, conflict_map *m, const footprint *f, int32_t i) {
  fp_side x = side_of(f, 1);
  int64_t before = ra->npend;
  int rc = CDAG_OK;
  if (ra_holds(ra, &x)) {
    if (ra->last >= 0 && ra->last != i) rc = add_edge(m, ra->last, i);
    ra->at = i;
    return rc ? rc : ra_push_part(ra, 0, 0);
  }
  if (x.n > BLOCKS_WALKED_MAX - ra->walked) {
    char d[160];
    return cdag__error(CDAG_ERR_UNSUPPORTED, "rank %d: a computation reading all reads the blocks of strided writes one "
                       "by one, at most %llu in all: %s writes %llu more", ra->rank, BLOCKS_WALKED_MAX,
                       ir_describe(ra->g, m->ops[i], d, sizeof d), (unsigned long long)x.n);
  }
  ra->walked += x.n;
  for (uint64_t b = 0; rc == CDAG_OK && b < x.n; b++) rc = ra_write(ra, m, i, side_block(&x, b), x.len);
  return rc || ra->npend == before ? rc : ra_fresh(ra, &x);
}

static int ra_step(reads_all *ra, conflict_map *m, const cdag_graph *g, int32_t i) {
  int rc = CDAG_OK;
  int32_t op = m->ops[i];
  const footprint *f = &ra->fp[i];
  if (ir_is_calc_join(g, op)) rc = ra_join(ra, m, g, i, i);   /* a wait, a native call's end */
  if (rc == CDAG_OK && ir_reads_all(g, op)) {
    if (ra->last >= 0) rc = add_edge(m, ra->last, i);
    for (int64_t k = 0; k < ra->npend && rc == CDAG_OK; k++) {
      rc = add_edge(m, ra->pend[k].pos, i);
      if (rc == CDAG_OK && ra->pend[k].lo < ra->pend[k].hi) rc = ra_fold(ra, ra->pend[k].lo, ra->pend[k].hi);
    }
    if (rc == CDAG_OK) rc = ra_hold_fresh(ra);
    ra->npend = 0;
    ra->last = i;
  }
  if (rc || !fp_writes(f)) return rc;
  if (ra->incomplete[i] & RA_AWAITED) {   /* a receive or nonblocking call's write (one range), read later */
    uint64_t lo = f->wr, hi = f->wr + f->wlen < lo ? UINT64_MAX : f->wr + f->wlen;
    if (ra->last >= 0 && ra->last != i && ra_overlaps(ra, lo, hi)) rc = add_edge(m, ra->last, i);
    if (rc == CDAG_OK) ra->incomplete[i] |= RA_PENDING;
    return rc;
  }
  return f->wn > 1 ? ra_strided(ra, m, f, i) : ra_write(ra, m, i, f->wr, f->wlen);
}

static void ra_clear(reads_all *ra) {
  base_fmap_clear(&ra->read);
  base_imap_clear(&ra->held);
  ra->last = -1;
  ra->walked = 0;
  ra->npend = ra->nhi = ra->npat = ra->nfresh = 0;
}

static void ra_free(reads_all *ra) {
  ra_clear(ra);
  free(ra->pend); free(ra->hi); free(ra->incomplete); free(ra->pat);
}

/* Does the rank read all anywhere? */
static int rank_reads_all(const cdag_graph *g, const int32_t *ops, int32_t n) {
  if (!g->cr_len) return 0;
  for (int32_t i = 0; i < n; i++)
    if (ir_reads_all(g, ops[i])) return 1;
  return 0;
}

/* Do the scopes (g->scope) of the rank's ops that touch memory ascend in program order? Then
   each scope is walked alone: conflicts across scopes are ordered already. Otherwise (no
   scopes, or a builder that broke its promise) the rank is one scope. */
static int scopes_ascend(const cdag_graph *g, const int32_t *ops, const footprint *fp, int32_t n) {
  if (!g->scope) return 0;
  uint32_t last = 0;
  for (int32_t i = 0; i < n; i++) {
    if (!fp_reads(&fp[i]) && !fp_writes(&fp[i])) continue;
    if (g->scope[ops[i]] < last) return 0;
    last = g->scope[ops[i]];
  }
  return 1;
}

/* The end of the scope that starts at position s: the next op touching memory in a later
   scope (ops that touch none go with the scope before them). */
static int32_t scope_end(const cdag_graph *g, const int32_t *ops, const footprint *fp, int32_t s, int32_t n) {
  int32_t i = s;
  while (i < n && !fp_reads(&fp[i]) && !fp_writes(&fp[i])) i++;
  if (i == n) return n;
  uint32_t at = g->scope[ops[i]];
  for (i++; i < n; i++)
    if ((fp_reads(&fp[i]) || fp_writes(&fp[i])) && g->scope[ops[i]] != at) return i;
  return n;
}

static int conflict_deps(cdag_graph *g, edge_buf *edges) {
  int rc = CDAG_OK;
  conflict_map m = {.free_piece = -1};
  reads_all ra = {.last = -1};
  m.edges = edges;
  int32_t longest = 1, *ex_start = NULL, *ex_from = NULL;
  for (int r = 0; r < g->nprocs; r++)
    if (g->rank_start[r + 1] - g->rank_start[r] > longest) longest = g->rank_start[r + 1] - g->rank_start[r];
  if (longest > INT32_MAX / 2)   /* two sides per op, numbered in int32 */
    return cdag__error(CDAG_ERR_UNSUPPORTED, "a rank has more than %d operations", INT32_MAX / 2);
  m.stamp = malloc((size_t)longest * sizeof *m.stamp);
  footprint *fp = malloc((size_t)longest * sizeof *fp);
  ra.fp = fp, ra.g = g;
  ra.incomplete = malloc((size_t)longest);
  if (clusters_alloc(&m.c, longest)) rc = CDAG_ERR_NOMEM;
  m.npred = g->pred_start = base_calloc((size_t)g->nops + 1, sizeof *g->pred_start);
  m.nsucc = g->succ_start = base_calloc((size_t)g->nops + 1, sizeof *g->succ_start);
  if (!m.stamp || !fp || !ra.incomplete || !m.npred || !m.nsucc) rc = CDAG_NOMEM("dependencies");
  if (rc == CDAG_OK) rc = edge_buf_init(edges, g);
  if (rc == CDAG_OK && g->ndeps) rc = explicit_csr(g, g->dep, g->ndeps, 1, &ex_start, &ex_from);
  ra.ex_start = ex_start, ra.ex_from = ex_from;
  for (int r = 0; r < g->nprocs && rc == CDAG_OK; r++) {
    int32_t n = g->rank_start[r + 1] - g->rank_start[r];
    m.ops = g->rank_ops + g->rank_start[r];
    edges->rank_edges[r] = edges->n;
    memset(m.stamp, 0xff, (size_t)n * sizeof *m.stamp);
    gather_footprints(g, m.ops, n, fp);
    int32_t last_join = -1, call_join = -1, all = rank_reads_all(g, m.ops, n);
    int scoped = scopes_ascend(g, m.ops, fp, n);
    ra.rank = r;
    if (all) ra_awaited(&ra, &m, g, n);
    for (int32_t s = 0, e; s < n && rc == CDAG_OK; s = e) {
      e = scoped ? scope_end(g, m.ops, fp, s, n) : n;
      int disjoint = footprints_ascend(fp + s, e - s);
      if (!disjoint) rc = find_clusters(&m.c, fp + s, e - s);
      if (!disjoint && rc == CDAG_OK) rc = blocks_bounded(g, &m.c, fp + s, m.ops + s, e - s);
      m.c_base = s;
      for (int32_t i = s; i < e && rc == CDAG_OK; i++) {
        int32_t op = m.ops[i];
        for (int32_t k = ex_start ? ex_start[op] : 0; ex_start && k < ex_start[op + 1] && rc == CDAG_OK; k++)
          rc = add_edge(&m, g->pos[ex_from[k]], i);
        if (g->join && rc == CDAG_OK) rc = join_edges(g, &m, &last_join, &call_join, i);
        if (rc == CDAG_OK && !disjoint) rc = touch_op(&m, &fp[i], i);
        if (rc == CDAG_OK && all) rc = ra_step(&ra, &m, g, i);
      }
      clusters_clear(&m.c);
      m.npieces = m.nrd = 0;
      m.free_piece = -1;
    }
    ra_clear(&ra);
  }
  if (rc == CDAG_OK) edges->rank_edges[g->nprocs] = edges->n;
  g->dep_lookups = m.lookups;
  clusters_free(&m.c);
  ra_free(&ra);
  free(m.stamp); free(fp); free(m.hi); free(m.writer); free(m.readers); free(m.rd_op); free(m.rd_next);
  free(ex_start); free(ex_from);
  return rc;
}

/* ---- 3. CSR ---- */

enum { BLOCK_RANKS = 64, BLOCK_OPS = 4096 };

/* The ranks r0 .. end-1 of one block: up to BLOCK_RANKS ranks and BLOCK_OPS ops, or one rank. */
static int block_end(const cdag_graph *g, int r0) {
  int r1 = r0 + 1;
  while (r1 < g->nprocs && r1 - r0 < BLOCK_RANKS && g->rank_start[r1 + 1] - g->rank_start[r0] <= BLOCK_OPS) r1++;
  return r1;
}

/* Do the ops of ranks r0 .. r1-1 have consecutive ids (a graph added rank by rank, or read
   from a file)? */
static int ids_follow_ranks(const cdag_graph *g, int r0, int r1) {
  for (int32_t s = g->rank_start[r0] + 1; s < g->rank_start[r1]; s++)
    if (g->rank_ops[s] != g->rank_ops[s - 1] + 1) return 0;
  return 1;
}

/* Places op's predecessors, the buffer's next entries from k, and op among their
   successors. Returns the entry after them. */
static inline int64_t csr_place(cdag_graph *g, const int32_t *before, int64_t k, int32_t op) {
  int32_t lo = g->pred_start[op], n = g->pred_start[op + 1] - lo;
  for (int32_t j = 0; j < n; j++) {
    int32_t b = before[k + j];
    g->pred[lo + j] = b;
    g->succ[g->succ_start[b]++] = op;
  }
  return k + n;
}

/* Visits the edges by blocks of ranks, each rank's edges in their order. Where a block's
   ids follow its ranks, the edges' own order is local. Otherwise (a graph built round by
   round: each rank's ops lie a power of two apart, and rank by rank each position's few
   cache lines evict each other before the next rank reads them) a block is walked position
   by position across its ranks, so the edges of one position of 64 ranks share lines. */
static void csr_pass(cdag_graph *g, const edge_buf *b) {
  int64_t cur[BLOCK_RANKS];
  for (int r0 = 0, r1; r0 < g->nprocs; r0 = r1) {
    r1 = block_end(g, r0);
    if (ids_follow_ranks(g, r0, r1)) {
      int64_t k = b->rank_edges[r0];
      for (int32_t slot = g->rank_start[r0]; slot < g->rank_start[r1]; slot++) k = csr_place(g, b->e, k, g->rank_ops[slot]);
      continue;
    }
    int active[BLOCK_RANKS], nactive = 0; /* ranks with ops at or past position i */
    for (int r = r0; r < r1; r++) {
      cur[r - r0] = b->rank_edges[r];
      if (g->rank_start[r + 1] > g->rank_start[r]) active[nactive++] = r;
    }
    for (int32_t i = 0; nactive > 0; i++) {
      int kept = 0;
      for (int a = 0; a < nactive; a++) {
        int r = active[a];
        int32_t slot = g->rank_start[r] + i;
        cur[r - r0] = csr_place(g, b->e, cur[r - r0], g->rank_ops[slot]);
        if (slot + 1 < g->rank_start[r + 1]) active[kept++] = r; /* a rank leaves after its last op */
      }
      nactive = kept;
    }
  }
}

/* The list lengths were counted as the edges were found (at op + 1): their sums are the
   starts. */
static int build_csr(cdag_graph *g, const edge_buf *b) {
  int64_t n = g->nops, m = b->n;
  g->pred = base_malloc((size_t)m * sizeof *g->pred);
  g->succ = base_malloc((size_t)m * sizeof *g->succ);
  if (!g->pred || !g->succ) return CDAG_NOMEM("dependencies");
  for (int64_t i = 0; i < n; i++) {
    g->succ_start[i + 1] += g->succ_start[i];
    g->pred_start[i + 1] += g->pred_start[i];
  }
  csr_pass(g, b); /* each pred list is placed whole; succ_start served as the cursors */
  memmove(g->succ_start + 1, g->succ_start, (size_t)n * sizeof *g->succ_start);
  g->succ_start[0] = 0;
  g->nedges = m;
  return CDAG_OK;
}

/* ---- 4. scratch ---- */

static int scr_cmp(const void *x, const void *y, void *ctx) {
  const cdag_graph *g = ctx;
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  if (g->scr_rank[a] != g->scr_rank[b]) return g->scr_rank[a] < g->scr_rank[b] ? -1 : 1;
  if (g->scr_addr[a] != g->scr_addr[b]) return g->scr_addr[a] < g->scr_addr[b] ? -1 : 1;
  return 0;
}

static int merge_scratch(cdag_graph *g) {
  int64_t n = g->nscratch;
  int64_t *idx = malloc((size_t)(n ? n : 1) * sizeof *idx);
  g->scr_start = calloc((size_t)g->nprocs + 1, sizeof *g->scr_start);
  g->scr_lo = malloc((size_t)(n ? n : 1) * sizeof *g->scr_lo);
  g->scr_hi = malloc((size_t)(n ? n : 1) * sizeof *g->scr_hi);
  if (!idx || !g->scr_start || !g->scr_lo || !g->scr_hi) {
    free(idx);
    return CDAG_NOMEM("scratch");
  }
  for (int64_t i = 0; i < n; i++) idx[i] = i;
  base_sort_r(idx, (int64_t)n, sizeof *idx, scr_cmp, g);
  int64_t m = 0;
  int last_rank = -1;
  for (int64_t k = 0; k < n; k++) {
    int64_t i = idx[k];
    uint64_t lo = g->scr_addr[i], hi = lo + g->scr_len[i];
    if (lo == hi) continue;
    int r = g->scr_rank[i];
    if (r == last_rank && g->scr_hi[m - 1] >= lo) {
      if (hi > g->scr_hi[m - 1]) g->scr_hi[m - 1] = hi;
      continue;
    }
    g->scr_lo[m] = lo;
    g->scr_hi[m] = hi;
    m++;
    last_rank = r;
    g->scr_start[r + 1]++;
  }
  for (int r = 0; r < g->nprocs; r++) g->scr_start[r + 1] += g->scr_start[r];
  g->nscr_merged = m;
  free(idx);
  return CDAG_OK;
}

int ir_is_scratch(const cdag_graph *g, int rank, uint64_t addr, uint64_t len) {
  int32_t lo = g->scr_start[rank], hi = g->scr_start[rank + 1];
  while (lo < hi) { /* first interval with scr_hi > addr */
    int32_t mid = lo + (hi - lo) / 2;
    if (g->scr_hi[mid] <= addr) lo = mid + 1;
    else hi = mid;
  }
  return lo < g->scr_start[rank + 1] && g->scr_lo[lo] <= addr && addr + len <= g->scr_hi[lo];
}

int ir_each_outside_scratch(const cdag_graph *g, int rank, uint64_t lo, uint64_t hi,
                            int (*fn)(void *ctx, uint64_t lo, uint64_t hi), void *ctx) {
  int32_t a = g->scr_start[rank], z = g->scr_start[rank + 1], end = z;
  while (a < z) { /* first interval with scr_hi > lo */
    int32_t mid = a + (z - a) / 2;
    if (g->scr_hi[mid] <= lo) a = mid + 1;
    else z = mid;
  }
  int rc = CDAG_OK;
  for (; rc == CDAG_OK && a < end && g->scr_lo[a] < hi && lo < hi; a++) {
    if (g->scr_lo[a] > lo) rc = fn(ctx, lo, g->scr_lo[a]);
    if (g->scr_hi[a] > lo) lo = g->scr_hi[a];
  }
  return rc == CDAG_OK && lo < hi ? fn(ctx, lo, hi) : rc;
}

static int build_deps(cdag_graph *g) {
  edge_buf edges = {0};
  int rc = conflict_deps(g, &edges);
  if (rc == CDAG_OK) rc = build_csr(g, &edges);
  edge_buf_free(&edges);
  return rc;
}

void ir_drop_deps(cdag_graph *g) {
  free(g->pred_start); free(g->pred); free(g->succ_start); free(g->succ);
  g->pred_start = g->pred = g->succ_start = g->succ = NULL;
  g->nedges = 0;
}

int ir_need_deps(cdag_graph *g) {
  if (g->state == IR_BUILDING || !g->rank_ops) return cdag__error(CDAG_ERR_STATE, "the graph is not finalized");
  if (g->pred_start) return CDAG_OK;
  int rc = build_deps(g);
  if (rc) ir_drop_deps(g);
  return rc;
}

int ir_deps_view_open(const cdag_graph *g, ir_deps_view *v) {
  v->g = g;
  if (g->state == IR_BUILDING || !g->rank_ops) return cdag__error(CDAG_ERR_STATE, "the graph is not finalized");
  if (g->pred_start) return CDAG_OK;
  v->copy = *g;  /* conflict_deps and build_csr write only the dependency lists */
  int rc = build_deps(&v->copy);
  if (rc) ir_drop_deps(&v->copy);
  else v->g = &v->copy;
  return rc;
}

void ir_deps_view_close(ir_deps_view *v) {
  if (v->g == &v->copy) ir_drop_deps(&v->copy);
  v->g = NULL;
}

/* Every pass keeps some state per rank (12 bytes to check a graph, about 70 to analyse it),
   so a graph that names far more ranks than it uses costs memory for nothing: 2^30 ranks and
   one message took 12.6 GB. Beyond IR_DENSE_RANKS ranks, a graph needs an operation per
   IR_RANKS_PER_OP ranks; otherwise it is refused here, before any per-rank allocation. */
static int ranks_in_use(const cdag_graph *g) {
  if (g->nprocs <= IR_DENSE_RANKS || (int64_t)g->nprocs <= IR_RANKS_PER_OP * g->nops) return CDAG_OK;
  return cdag__error(CDAG_ERR_UNSUPPORTED, "the graph has %d ranks but only %lld operations: cdag keeps state for "
                     "every rank (about 70 bytes each, %.1f GB here); above %d ranks a graph needs an operation "
                     "per %d ranks (declare only the ranks that take part)", g->nprocs, (long long)g->nops,
                     70.0 * g->nprocs / 1e9, IR_DENSE_RANKS, IR_RANKS_PER_OP);
}

int ir_finalize(cdag_graph *g) {
  if (!g) return cdag__error(CDAG_ERR_ARG, "graph is NULL");
  if (g->state != IR_BUILDING) return g->rank_ops ? ir_need_deps(g) : CDAG_OK;
  edge_buf edges = {0};
  int rc;
  CDAG_CHECK(ranks_in_use(g));
  CDAG_CHECK(ir_coll_check(g));
  CDAG_CHECK(ir_onesided_expand(g));
  CDAG_CHECK(order_by_rank(g));
  CDAG_CHECK(order_explicit(g));
  CDAG_CHECK(merge_scratch(g));   /* before the dependencies: reading all skips scratch */
  CDAG_CHECK(conflict_deps(g, &edges));
  CDAG_CHECK(build_csr(g, &edges));
  edge_buf_free(&edges);
  CDAG_CHECK(ir_onesided_races(g));
  g->state = IR_FINAL;
  return CDAG_OK;
fail:
  edge_buf_free(&edges);
  ir_drop_derived(g);
  return rc;
}
