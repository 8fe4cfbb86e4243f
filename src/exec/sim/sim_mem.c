/* cdag — src/exec/sim/sim_mem.c: the simulator's memory images, one per rank.
 *
 * A rank's memory is the union of every address range the graph's ops touch (buffers of sends,
 * receives, reduces, copies, computations; scratch only where an op uses it), merged into
 * sorted regions, each with its own bytes.
 * Lookups binary-search the rank's regions. Comparisons skip scratch on request and name the
 * first differing byte. Simple on purpose: this is the oracle. */
#include <stdlib.h>
#include <string.h>

#include "exec/sim/sim.h"

typedef struct {
  uint64_t lo, hi;
  uint8_t *bytes;
} sim_region;

struct sim_mem {
  int nprocs;
  int64_t *start;        /* nprocs+1 offsets into regions */
  sim_region *regions;
  int64_t nregions;
  uint8_t *shared;       /* a view (sim_mem_view): region i's bytes are its image's while shared[i] */
};

typedef struct {
  int rank;
  uint64_t lo, hi;
} span;

static int span_cmp(const void *x, const void *y) {
  const span *a = x, *b = y;
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  return (a->lo > b->lo) - (a->lo < b->lo);
}

static int add_span(span **s, int64_t *n, int64_t *cap, int rank, uint64_t addr, uint64_t len) {
  if (len == 0) return CDAG_OK;
  BASE_GROW(*s, *n, *cap, 1, "simulator memory");
  (*s)[(*n)++] = (span){rank, addr, addr + len};
  return CDAG_OK;
}

static int collect_spans(const cdag_graph *g, const stage_range *extra, int64_t nextra, span **s, int64_t *n) {
  int64_t cap = 0;
  int rc = CDAG_OK;
  for (int64_t i = 0; i < g->nops && rc == CDAG_OK; i++) {
    int comp = ir_is_compute(g, i);
    if (g->kind[i] == IR_COPY) {   /* a strided copy: the hull of each side, the gaps being the program's */
      ir_blocks k = ir_copy_blocks(g, i);
      rc = add_span(s, n, &cap, g->rank[i], g->addr[i], k.to_last + k.len);
      if (rc == CDAG_OK) rc = add_span(s, n, &cap, g->rank[i], g->addr2[i], k.from_last + k.len);
      continue;
    }
    ir_blocks w = comp ? ir_write_blocks(g, i) : ir_one_block(0);   /* a computation's blocks: their hull */
    rc = add_span(s, n, &cap, g->rank[i], g->addr[i], comp ? w.to_last + w.len : g->kind[i] == IR_CALC ? 0 : g->bytes[i]);
    if (rc == CDAG_OK && g->kind[i] == IR_REDUCE) rc = add_span(s, n, &cap, g->rank[i], g->addr2[i], g->bytes[i]);
    if (rc == CDAG_OK && comp && g->cr_len[i] != IR_READS_ALL)
      rc = add_span(s, n, &cap, g->rank[i], g->addr2[i], g->cr_len[i]);
  }
  /* declared scratch that no op touches needs no bytes: a graph may declare gigabytes */
  for (int64_t i = 0; i < nextra && rc == CDAG_OK; i++) rc = add_span(s, n, &cap, extra[i].rank, extra[i].addr, extra[i].len);
  return rc;
}

/* The image's bytes against SIM_MAX_BYTES, before any is allocated. */
static int within_limit(const sim_mem *m) {
  uint64_t total = 0;
  for (int64_t i = 0; i < m->nregions; i++) {
    total += m->regions[i].hi - m->regions[i].lo;
    if (total > SIM_MAX_BYTES)
      return cdag__error(CDAG_ERR_UNSUPPORTED, "the graph's operations span more than %llu MiB of memory on its ranks "
                         "(strided blocks by their hull; the simulator keeps several copies of it: verify takes "
                         "graphs up to that size)",
                         (unsigned long long)(SIM_MAX_BYTES >> 20));
  }
  return CDAG_OK;
}

int sim_mem_create(const cdag_graph *g, sim_mem **out) { return sim_mem_create_plus(g, NULL, 0, out); }

/* m's regions (sorted, merged spans of what g's ops touch, plus extra), checked against the limit. */
static int layout(const cdag_graph *g, const stage_range *extra, int64_t nextra, sim_mem *m) {
  span *s = NULL;
  int64_t n = 0;
  int rc = collect_spans(g, extra, nextra, &s, &n);
  if (rc) goto out;
  base_sort(s, (size_t)n, sizeof *s, span_cmp);
  m->nprocs = g->nprocs;
  m->start = calloc((size_t)g->nprocs + 1, sizeof *m->start);
  m->regions = calloc((size_t)(n ? n : 1), sizeof *m->regions);
  if (!m->start || !m->regions) { rc = CDAG_NOMEM("simulator memory"); goto out; }
  for (int64_t i = 0; i < n; i++) {
    sim_region *last = m->nregions ? &m->regions[m->nregions - 1] : NULL;
    if (last && i > 0 && s[i - 1].rank == s[i].rank && s[i].lo <= last->hi) {
      if (s[i].hi > last->hi) last->hi = s[i].hi;
      continue;
    }
    m->regions[m->nregions++] = (sim_region){.lo = s[i].lo, .hi = s[i].hi};
    m->start[s[i].rank + 1]++;
  }
  for (int r = 0; r < g->nprocs; r++) m->start[r + 1] += m->start[r];
  rc = within_limit(m);
out:
  free(s);
  return rc;
}

int sim_mem_create_plus(const cdag_graph *g, const stage_range *extra, int64_t nextra, sim_mem **out) {
  *out = NULL;
  sim_mem *m = calloc(1, sizeof *m);
  int rc = m ? layout(g, extra, nextra, m) : CDAG_NOMEM("simulator memory");
  for (int64_t i = 0; rc == CDAG_OK && i < m->nregions; i++)
    if (!(m->regions[i].bytes = calloc(1, (size_t)(m->regions[i].hi - m->regions[i].lo)))) rc = CDAG_NOMEM("simulator memory");
  if (rc == CDAG_OK) *out = m;
  else sim_mem_free(m);
  return rc;
}

int sim_mem_check_size(const cdag_graph *g) {
  sim_mem *m = calloc(1, sizeof *m);
  int rc = m ? layout(g, NULL, 0, m) : CDAG_NOMEM("simulator memory");
  sim_mem_free(m);
  return rc;
}

void sim_mem_free(sim_mem *m) {
  if (!m) return;
  for (int64_t i = 0; i < m->nregions; i++)
    if (!m->shared || !m->shared[i]) free(m->regions[i].bytes);
  free(m->shared);
  free(m->regions);
  free(m->start);
  free(m);
}

int sim_mem_view(const sim_mem *m, sim_mem **view) {
  sim_mem *v = calloc(1, sizeof *v);
  *view = NULL;
  if (!v) return CDAG_NOMEM("simulator memory");
  v->nprocs = m->nprocs;
  v->start = malloc(((size_t)m->nprocs + 1) * sizeof *v->start);
  v->regions = malloc((size_t)(m->nregions ? m->nregions : 1) * sizeof *v->regions);
  v->shared = malloc((size_t)(m->nregions ? m->nregions : 1));
  if (!v->start || !v->regions || !v->shared) {
    sim_mem_free(v);
    return CDAG_NOMEM("simulator memory");
  }
  v->nregions = m->nregions;
  memcpy(v->start, m->start, ((size_t)m->nprocs + 1) * sizeof *v->start);
  memcpy(v->regions, m->regions, (size_t)m->nregions * sizeof *v->regions);
  memset(v->shared, 1, (size_t)m->nregions);
  *view = v;
  return CDAG_OK;
}

/* The first of rank's regions in m ending above addr (m->start[rank + 1]: none). */
static int64_t region_from(const sim_mem *m, int rank, uint64_t addr) {
  int64_t lo = m->start[rank], hi = m->start[rank + 1];
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (m->regions[mid].hi <= addr) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* View v's region i gets a copy of m's bytes, if it still shares them. */
static int own_region(sim_mem *v, const sim_mem *m, int64_t i) {
  if (!v->shared[i]) return CDAG_OK;
  size_t n = (size_t)(v->regions[i].hi - v->regions[i].lo);
  uint8_t *b = malloc(n ? n : 1);
  if (!b) return CDAG_NOMEM("simulator memory");
  memcpy(b, m->regions[i].bytes, n);
  v->regions[i].bytes = b;
  v->shared[i] = 0;
  return CDAG_OK;
}

int sim_mem_keep(sim_mem *view, const sim_mem *m, int rank, uint64_t addr, uint64_t len) {
  if (!view->shared || rank < 0 || rank >= view->nprocs || len == 0) return CDAG_OK;
  int rc = CDAG_OK;
  for (int64_t i = region_from(view, rank, addr); i < view->start[rank + 1] && view->regions[i].lo < addr + len && !rc; i++)
    rc = own_region(view, m, i);
  return rc;
}

int sim_mem_clone(const sim_mem *m, sim_mem **copy) {
  int rc = sim_mem_view(m, copy);
  for (int64_t i = 0; rc == CDAG_OK && i < m->nregions; i++) rc = own_region(*copy, m, i);
  if (rc != CDAG_OK) {
    sim_mem_free(*copy);
    *copy = NULL;
  }
  return rc;
}

void sim_mem_fill_random(sim_mem *m, uint64_t seed) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL;
  for (int64_t i = 0; i < m->nregions; i++)
    for (uint64_t b = 0; b < m->regions[i].hi - m->regions[i].lo; b++) {
      x ^= x << 13; x ^= x >> 7; x ^= x << 17;  /* xorshift64 */
      m->regions[i].bytes[b] = (uint8_t)(x >> 24);
    }
}

int sim_mem_nprocs(const sim_mem *m) { return m->nprocs; }

uint64_t sim_mem_bytes(const sim_mem *m) {
  uint64_t n = 0;
  for (int64_t i = 0; i < m->nregions; i++) n += m->regions[i].hi - m->regions[i].lo;
  return n;
}

uint64_t sim_mem_bytes_outside_scratch(const sim_mem *m, const cdag_graph *g) {
  uint64_t n = 0;
  for (int r = 0; r < m->nprocs; r++) {
    int64_t k = g->scr_start ? g->scr_start[r] : 0, kend = g->scr_start ? g->scr_start[r + 1] : 0;
    for (int64_t i = m->start[r]; i < m->start[r + 1]; i++) {   /* both sorted: one merge walk */
      const sim_region *x = &m->regions[i];
      uint64_t covered = 0;
      while (k < kend && g->scr_hi[k] <= x->lo) k++;
      for (int64_t j = k; j < kend && g->scr_lo[j] < x->hi; j++) {
        uint64_t lo = g->scr_lo[j] > x->lo ? g->scr_lo[j] : x->lo, hi = g->scr_hi[j] < x->hi ? g->scr_hi[j] : x->hi;
        covered += hi - lo;
      }
      n += x->hi - x->lo - covered;
    }
  }
  return n;
}

uint8_t *sim_mem_at(sim_mem *m, int rank, uint64_t addr, uint64_t len) {
  static uint8_t nothing; /* zero bytes need no memory */
  if (rank < 0 || rank >= m->nprocs) return NULL;
  if (len == 0) return &nothing;
  int64_t lo = region_from(m, rank, addr);
  if (lo == m->start[rank + 1]) return NULL;
  const sim_region *r = &m->regions[lo];
  if (addr < r->lo || addr + len > r->hi) return NULL;
  return r->bytes + (addr - r->lo);
}

/* The span of z[0..nz) holding rank's byte at addr, or NULL. O(log nz). */
static const sim_zeros *zeros_at(const sim_zeros *z, int64_t nz, int32_t rank, uint64_t addr) {
  int64_t lo = 0, hi = nz;   /* the first span after (rank, addr) */
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (z[mid].rank < rank || (z[mid].rank == rank && z[mid].lo <= addr)) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 && z[lo - 1].rank == rank && addr < z[lo - 1].hi ? &z[lo - 1] : NULL;
}

/* Is byte k of x and y (a region starting at address base) the sign byte of a scalar of span
   z that is zero in both, -0.0 in one and +0.0 in the other? The scalar starts at z->lo plus a
   multiple of its width (zeros_at found addr >= z->lo); its bytes below the sign must lie in
   the region. */
static int zero_signs(const uint8_t *x, const uint8_t *y, uint64_t base, uint64_t k, const sim_zeros *z) {
  uint64_t at = (base + k - z->lo) % z->width, sign = z->width == 16 ? 9 : z->width - 1;
  if (at != sign || (x[k] ^ y[k]) != 0x80 || (x[k] | y[k]) != 0x80 || k < at) return 0;
  for (uint64_t i = k - at; i < k; i++)
    if (x[i] || y[i]) return 0;
  return 1;
}

int sim_mem_compare(const sim_mem *a, const sim_mem *b, const cdag_graph *g, int skip_scratch) {
  return sim_mem_compare_zeros(a, b, g, skip_scratch, NULL, 0);
}

int sim_mem_compare_zeros(const sim_mem *a, const sim_mem *b, const cdag_graph *g, int skip_scratch, const sim_zeros *z,
                          int64_t nz) {
  if (a->nprocs != b->nprocs || a->nregions != b->nregions) return cdag__error(CDAG_ERR_PLAN, "memory images have different layouts");
  if (skip_scratch && g->state == IR_BUILDING)
    return cdag__error(CDAG_ERR_STATE, "simulator: comparing without scratch needs a finalized graph");
  for (int r = 0; r < a->nprocs; r++)
    for (int64_t i = a->start[r]; i < a->start[r + 1]; i++) {
      const sim_region *x = &a->regions[i], *y = &b->regions[i];
      for (uint64_t k = 0; k < x->hi - x->lo; k++) {
        if (x->bytes[k] == y->bytes[k]) continue;
        if (skip_scratch && ir_is_scratch(g, r, x->lo + k, 1)) continue;
        const sim_zeros *zs = nz ? zeros_at(z, nz, r, x->lo + k) : NULL;
        if (zs && zero_signs(x->bytes, y->bytes, x->lo, k, zs)) continue;
        return cdag__error(CDAG_ERR_MISMATCH, "rank %d byte 0x%llx differs: 0x%02x vs 0x%02x", r,
                           (unsigned long long)(x->lo + k), x->bytes[k], y->bytes[k]);
      }
    }
  return CDAG_OK;
}
