/* cdag — src/detect/detect.c: runs the detectors in order and builds the plan.
 *
 * The registry below is the search order of the paper (highest abstraction first):
 * all-collectives (allgather > alltoall, and their v-variants), rooted collectives (bcast >
 * gather, scatter, largest groups first), reductions (allreduce > reduce), replication
 * (a reduction only some ranks keep: reduce + bcast to those), and last the
 * synchronisation that must survive (barrier or kept zero-byte messages). Each detector
 * marks the tuples it covers; what no detector takes is residual. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ranges.h"
#include "detect/detect_int.h"

/* The detectors in order; those of transfers search groups of 3 ranks or more (det_group_ok:
   with 2, every pattern is one message each way), so a graph of 2 ranks skips them (their
   sorts of every transfer took 2.2 of the 4.9 s detection spent on a column of 2^20
   blocks sent between 2 ranks). */
static const struct {
  const char *name;
  det_fn run;
  int32_t min_ranks;
} detectors[] = {
    {"all-collectives", det_all_collectives, 3},
    {"rooted collectives", det_rooted_collectives, 3},
    {"reductions", det_reductions, 0},
    {"replication", det_replication, 0},
    {"synchronization", det_synchronization, 0},
};

int det_add_proto(det_state *st, det_kind kind, int32_t root, const int32_t *members, int32_t n,
                  const int64_t *tuples, int64_t nt, int reduction) {
  BASE_GROW(st->protos, st->nprotos, st->protocap, 1, "collectives");
  BASE_GROW(st->members, st->nmembers, st->membercap, n, "collectives");
  BASE_GROW(st->tuples, st->ntuples, st->tuplecap, nt, "collectives");
  st->protos[st->nprotos++] = (det_proto){.kind = kind, .root = root, .members_first = st->nmembers,
                                          .nmembers = n, .tuples_first = st->ntuples, .ntuples = nt,
                                          .reduction = reduction};
  if (n) memcpy(st->members + st->nmembers, members, (size_t)n * sizeof *members);
  if (nt) memcpy(st->tuples + st->ntuples, tuples, (size_t)nt * sizeof *tuples);
  st->nmembers += n;
  st->ntuples += nt;
  uint8_t *used = reduction ? st->rused : st->xused;
  for (int64_t i = 0; i < nt; i++) used[tuples[i]] = 1;
  return CDAG_OK;
}

/* Appends the formatted note to notes[0..*n) (room for *cap). */
static int vnote(char ***notes, int64_t *n, int64_t *cap, const char *fmt, va_list ap) {
  char buf[512];
  vsnprintf(buf, sizeof buf, fmt, ap);
  BASE_GROW(*notes, *n, *cap, 1, "notes");
  if (!((*notes)[*n] = strdup(buf))) return CDAG_NOMEM("notes");
  ++*n;
  return CDAG_OK;
}

int det_note(det_state *st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = vnote(&st->notes, &st->nnotes, &st->notecap, fmt, ap);
  va_end(ap);
  return rc;
}

int detect_plan_note(cdag_plan *p, const char *fmt, ...) {
  int64_t cap = p->nnotes;   /* a plan's notes fill their array */
  va_list ap;
  va_start(ap, fmt);
  int rc = vnote(&p->notes, &p->nnotes, &cap, fmt, ap);
  va_end(ap);
  return rc;
}

static int rank_cmp(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

int det_sort_ranks(int32_t *r, int32_t m, int32_t nprocs) {
  if ((int64_t)m * 16 < nprocs || m < 4096) {
    base_sort(r, m, sizeof *r, rank_cmp);
    return CDAG_OK;
  }
  uint8_t *in = calloc((size_t)nprocs, 1);
  if (!in) return CDAG_NOMEM("detection");
  for (int32_t i = 0; i < m; i++) in[r[i]] = 1;
  for (int32_t k = 0, i = 0; k < nprocs; k++)
    if (in[k]) r[i++] = k;
  free(in);
  return CDAG_OK;
}

int32_t det_min_group(const det_state *st) {
  int32_t p = st->g->nprocs, lo = st->opts.min_group > 2 ? st->opts.min_group : 2;
  return p >= 3 && p < lo ? p : lo;
}

int64_t det_filter_degree(const det_state *st, int64_t *t, int64_t n, int32_t out_min, int32_t in_min) {
  int32_t p = st->g->nprocs;
  int32_t *deg = calloc(2 * (size_t)p, sizeof *deg);
  if (!deg) return CDAG_NOMEM("detection"), -1;
  const df_xfer *x = st->sst->xfers;
  for (int64_t i = 0; i < n; i++) deg[x[t[i]].src]++, deg[p + x[t[i]].dst]++;
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++)
    if (deg[x[t[i]].src] >= out_min && deg[p + x[t[i]].dst] >= in_min) t[k++] = t[i];
  free(deg);
  return k;
}

int32_t det_max_degree(const det_state *st, const int64_t *t, int64_t n, int out) {
  int32_t *deg = calloc((size_t)st->g->nprocs, sizeof *deg), most = 0;
  if (!deg) return CDAG_NOMEM("detection"), -1;
  const df_xfer *x = st->sst->xfers;
  for (int64_t i = 0; i < n; i++) {
    int32_t r = out ? x[t[i]].src : x[t[i]].dst;
    if (++deg[r] > most) most = deg[r];
  }
  free(deg);
  return most;
}

int det_group_ok(const det_state *st, int32_t n) {
  if (n == st->g->nprocs) return n >= 3;
  return n >= (st->opts.min_group > 2 ? st->opts.min_group : 2);
}

int64_t det_candidates(const det_state *st, int64_t *out) {
  int64_t n = 0;
  for (int64_t i = 0; i < st->sst->nxfers; i++) {
    const df_xfer *x = &st->sst->xfers[i];
    if (!st->xused[i] && x->src != x->dst && x->len > 0) out[n++] = i;
  }
  return n;
}

const char *det_ranks_text(const int32_t *r, int32_t n, int32_t nprocs, char *buf, int size) {
  if (n == nprocs) {
    snprintf(buf, (size_t)size, "all %d ranks", n);
    return buf;
  }
  int at = snprintf(buf, (size_t)size, "ranks ");
  for (int32_t i = 0; i < n && at < size - 16;) {
    int32_t j = i;
    while (j + 1 < n && r[j + 1] == r[j] + 1) j++;
    at += j > i ? snprintf(buf + at, (size_t)(size - at), "%s%d-%d", i ? "," : "", r[i], r[j])
                : snprintf(buf + at, (size_t)(size - at), "%s%d", i ? "," : "", r[i]);
    i = j + 1;
  }
  return buf;
}

int det_view_open(det_state *st) {
  const df_sst *s = st->sst;
  uint64_t n = 0;
  int strided = 0;
  for (int64_t i = 0; i < s->nxfers; i++) n += df_xfer_blocks(&s->xfers[i]), strided |= s->xfers[i].blocks > 1;
  if (!strided || st->g->nprocs < 3 || !st->opts.detect) return CDAG_OK;
  df_xfer *v = malloc((size_t)n * sizeof *v), *sorted = malloc((size_t)n * sizeof *sorted);
  int64_t *idx = malloc((size_t)n * sizeof *idx), *from = malloc((size_t)n * sizeof *from);
  int64_t *origin = malloc((size_t)n * sizeof *origin);
  int rc = v && sorted && idx && from && origin ? CDAG_OK : CDAG_NOMEM("detection");
  int64_t k = 0;
  for (int64_t i = 0; i < s->nxfers && rc == CDAG_OK; i++)
    for (uint64_t j = 0; j < df_xfer_blocks(&s->xfers[i]); j++, k++)
      v[k] = df_xfer_block(&s->xfers[i], j), idx[k] = k, from[k] = i;
  base_key key[] = {BASE_KEY(v, dst), BASE_KEY(v, dst_addr)};
  if (rc == CDAG_OK) rc = base_sort_fields(idx, k, key, 2);
  for (int64_t i = 0; i < k && rc == CDAG_OK; i++) sorted[i] = v[idx[i]], origin[i] = from[idx[i]];
  free(v);
  free(idx);
  free(from);
  if (rc) {
    free(sorted);
    free(origin);
    return rc;
  }
  st->view = *s;
  st->view.xfers = sorted;
  st->view.nxfers = k;
  st->whole = s;
  st->origin = origin;
  st->sst = &st->view;
  return CDAG_OK;
}

void det_view_close(det_state *st) {
  if (!st->whole) return;
  free(st->view.xfers);
  free(st->origin);
  st->sst = st->whole;
  st->whole = NULL;
  st->origin = NULL;
}

static void free_state(det_state *st) {
  det_view_close(st);
  free(st->xused); free(st->rused); free(st->protos); free(st->members); free(st->tuples);
  for (int64_t i = 0; i < st->nnotes; i++) free(st->notes[i]);
  free(st->notes);
  free(st->syncs);
}

/* With 2 ranks nothing is rewritten (det_group_ok): say why where a user would wonder, i.e.
   when transfers stay point-to-point. */
static int two_ranks_note(det_state *st) {
  if (st->g->nprocs != 2) return CDAG_OK;
  int64_t left = 0;
  for (int64_t i = 0; i < st->sst->nxfers; i++) left += !st->xused[i] && st->sst->xfers[i].src != st->sst->xfers[i].dst;
  if (!left) return CDAG_OK;
  return det_note(st, "2 ranks: collectives over the whole communicator need 3 or more ranks (with 2, every pattern "
                      "is one message each way, which is what an MPI collective would send); %lld transfers stay "
                      "point-to-point", (long long)left);
}

/* Does a block of x land outside scratch on bytes of ranges v[0..n) (base_ranges_index)?
   A strided transfer's blocks (forwards from dst_addr, as the SST makes them) are looked at
   when their hull meets the ranges. */
static int reads_written(const cdag_graph *g, const uint64_t *v, int64_t n, const df_xfer *x) {
  uint64_t nb = df_xfer_blocks(x);
  if (!base_ranges_overlap(v, n, (uint64_t)x->dst, x->dst_addr, x->dst_addr + df_xfer_span(x, x->dst_stride))) return 0;
  for (uint64_t j = 0; j < nb; j++) {
    uint64_t at = x->dst_addr + j * x->dst_stride;
    if (!ir_is_scratch(g, x->dst, at, x->len) && base_ranges_overlap(v, n, (uint64_t)x->dst, at, at + x->len)) return 1;
  }
  return 0;
}

/* A residual transfer into bytes the same rank also reads as the input of a local reduction
   or copy is, most often, a temporary the program forgot to mark: its last contents become a
   result cdag must deliver (an extra message beside an allreduce). Say so, with the call. */
static int temporary_note(det_state *st) {
  const cdag_graph *g = st->g;
  int64_t n = 0, nsus = 0, first = -1;
  uint64_t bytes = 0;
  for (int64_t i = 0; i < g->nops; i++)   /* a strided copy reads its blocks */
    if ((g->kind[i] == IR_REDUCE || g->kind[i] == IR_COPY) && g->bytes[i]) n += (int64_t)ir_copy_blocks(g, i).n;
  if (!n) return CDAG_OK;
  uint64_t *v = malloc((size_t)n * 3 * sizeof *v);
  if (!v) return CDAG_NOMEM("notes");
  n = 0;
  for (int64_t i = 0; i < g->nops; i++) {
    if ((g->kind[i] != IR_REDUCE && g->kind[i] != IR_COPY) || !g->bytes[i]) continue;
    ir_blocks b = g->kind[i] == IR_COPY ? ir_copy_blocks(g, i) : ir_one_block(g->bytes[i]);
    for (uint64_t k = 0; k < b.n; k++, n++) {
      v[3 * n] = (uint64_t)g->rank[i];
      v[3 * n + 1] = g->addr2[i] + ir_block_from(&b, k);
      v[3 * n + 2] = g->addr2[i] + ir_block_from(&b, k) + b.len;
    }
  }
  base_ranges_index(v, n);
  for (int64_t i = 0; i < st->sst->nxfers; i++) {
    const df_xfer *x = &st->sst->xfers[i];
    if (st->xused[i] || x->src == x->dst || !reads_written(g, v, n, x)) continue;
    if (first < 0) first = i;
    nsus++;
    bytes += df_xfer_bytes(x);
  }
  free(v);
  if (!nsus) return CDAG_OK;
  const df_xfer *x = &st->sst->xfers[first];
  return det_note(st, "%lld residual transfer%s (%llu B) deliver%s bytes their rank also reads as the input of a local "
                      "reduction or copy (e.g. rank %d, 0x%llx, %llu B): if that buffer is a temporary, mark it with "
                      "cdag_scratch (`scratch` in a file) and its last contents need not be sent",
                  (long long)nsus, nsus > 1 ? "s" : "", (unsigned long long)bytes, nsus > 1 ? "" : "s", x->dst,
                  (unsigned long long)x->dst_addr, (unsigned long long)x->len);
}

/* Complete all-to-all groups too small for a collective on a proper subset (min_group). */
static int small_groups_note(det_state *st) {
  if (!st->small_groups) return CDAG_OK;
  return det_note(st, "%lld complete all-to-all pattern%s on fewer than min_group = %d ranks stayed point-to-point "
                      "(e.g. %d ranks: %s); collectives on part of the communicator need min_group ranks "
                      "(options.min_group, --min-group=%d would take %s)",
                  (long long)st->small_groups, st->small_groups > 1 ? "s" : "", st->opts.min_group,
                  st->small_size, st->small_ranks, st->small_size, st->small_groups > 1 ? "them" : "it");
}

int detect_run(const cdag_graph *g, df_sst *sst, const cdag_options *o, const det_pricer *pricer, cdag_plan **out) {
  *out = NULL;
  det_state st = {.g = g, .sst = sst, .opts = *o, .pricer = pricer};
  cdag_plan *p = calloc(1, sizeof *p);
  int rc0 = det_view_open(&st);
  if (rc0) {
    free(p);
    dataflow_free(sst);
    return rc0;
  }
  st.xused = calloc((size_t)(st.sst->nxfers ? st.sst->nxfers : 1), 1);
  st.rused = calloc((size_t)(sst->nreds ? sst->nreds : 1), 1);
  int rc = p && st.xused && st.rused ? CDAG_OK : CDAG_NOMEM("detection");
  if (rc == CDAG_OK) {
    p->nprocs = g->nprocs;
    p->opts = *o;
    p->sst = sst;
    sst = NULL;
  }
  for (size_t i = 0; i < sizeof detectors / sizeof *detectors && rc == CDAG_OK && o->detect; i++) {
    if (g->nprocs < detectors[i].min_ranks) continue;
    rc = detectors[i].run(&st);
    ir_trim_heap(g);
  }
  if (rc == CDAG_OK && o->detect) rc = two_ranks_note(&st);
  if (rc == CDAG_OK && o->detect) rc = small_groups_note(&st);
  if (rc == CDAG_OK && o->detect) rc = temporary_note(&st);
  if (rc == CDAG_OK) dataflow_free_waitsets(p->sst); /* only the detectors read them */
  if (rc == CDAG_OK) rc = det_build_plan(&st, p);
  if (rc == CDAG_OK) rc = det_mark_native(g, p);
  free_state(&st);
  if (rc) {
    detect_plan_free(p);
    dataflow_free(sst);
    return rc;
  }
  *out = p;
  return CDAG_OK;
}

void detect_plan_free(cdag_plan *p) {
  if (!p) return;
  free(p->colls); free(p->ranks); free(p->iovs); free(p->pieces);
  free(p->xfers); free(p->msgs); free(p->reds); free(p->syncs); free(p->snaps);
  for (int64_t i = 0; i < p->nnotes; i++) free(p->notes[i]);
  free(p->notes);
  free(p->native);
  dataflow_free(p->sst);
  if (p->steps) stage_steps_free(p->steps);
  free(p->steps);
  free(p);
}

const char *det_written_why(int as_written) {
  switch (as_written) {
  case DET_WRITTEN_EXACT: return "exact_float keeps the order of floating-point reductions";
  case DET_WRITTEN_COST: return "the plan would be no faster than the graph as written";
  case DET_WRITTEN_MEMORY: return "the stages' staging buffers would not fit: see the note";
  case DET_WRITTEN_REQUESTS: return "its schedule would hold more MPI requests than cdag's limit: see the note";
  default: return "";
  }
}
