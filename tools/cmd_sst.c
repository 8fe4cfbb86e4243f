/* cdag — tools/cmd_sst.c: `cdag sst FILE [--json]`: the Static Single Transfer tuples.
 *
 * Text: one block per destination rank listing "dst_addr <- src rank:addr (len B)" and the
 * reductions with their contributors. JSON: the form docs/format.md fixes; a reduction's
 * "sources" lists every (rank, addr) pair, repeated where a contribution counts twice. A graph
 * that computes, or whose local reduces mix reductions (cut there, as cdag analyze cuts them:
 * pipeline_mark_mixed; not the cuts the price adds where a plan costs less staged), has an SST
 * per stage (src/stage): text under "stage K:" headers, JSON as
 * {"cdag_sst": 1, "stages": [{"stage": K, "transfers": .., "reductions": ..}, ..]}. */
#include "cmd.h"
#include "dataflow/dataflow.h"
#include "exec/pipeline.h"
#include "stage/stage.h"

typedef struct {
  int32_t rank;
  uint64_t addr;
} source;

static int source_cmp(const void *x, const void *y) {
  const source *a = x, *b = y;
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  return (a->addr > b->addr) - (a->addr < b->addr);
}

/* A reduction's contributions as (rank, addr) pairs sorted by rank then addr, each
   repeated as often as it counts (the runs are sorted by addr first). */
static int print_sources(FILE *f, const df_sst *s, const df_red *d, int json) {
  const df_set *e = &s->sets[d->set];
  source *v = malloc((size_t)(e->ncontrib ? e->ncontrib : 1) * sizeof *v);
  if (!v) return CDAG_NOMEM("sst listing");
  int64_t n = 0;
  for (int32_t i = 0; i < e->nruns; i++) {
    const df_run *r = &s->runs[e->first + i];
    for (int32_t k = r->lo; k <= r->hi; k++)
      for (uint32_t m = 0; m < r->mult; m++) v[n++] = (source){k, r->addr};
  }
  base_sort(v, n, sizeof *v, source_cmp);
  for (int64_t i = 0; i < n; i++) {
    if (json) fprintf(f, "%s[%d, %llu]", i ? ", " : "", v[i].rank, (unsigned long long)v[i].addr);
    else fprintf(f, "%s%d:0x%llx", i ? " " : "", v[i].rank, (unsigned long long)v[i].addr);
  }
  free(v);
  return CDAG_OK;
}

/* "transfers" and "reductions" of one SST (one stage). */
static int print_json(const df_sst *s) {
  df_xfer *v;
  int64_t n;
  int rc = dataflow_block_xfers(s, &v, &n);
  if (rc) return rc;
  printf("\"transfers\": [");
  for (int64_t i = 0; i < n; i++)
    printf("%s\n    {\"src\": %d, \"src_addr\": %llu, \"len\": %llu, \"dst\": %d, \"dst_addr\": %llu}", i ? "," : "",
           v[i].src, (unsigned long long)v[i].src_addr, (unsigned long long)v[i].len, v[i].dst, (unsigned long long)v[i].dst_addr);
  free(v);
  printf("%s],\n  \"reductions\": [", s->nxfers ? "\n  " : "");
  for (int64_t i = 0; i < s->nreds; i++) {
    const df_red *d = &s->reds[i];
    printf("%s\n    {\"dst\": %d, \"dst_addr\": %llu, \"count\": %llu, \"type\": \"%s\", \"op\": \"%s\", \"sources\": [",
           i ? "," : "", d->dst, (unsigned long long)d->dst_addr, (unsigned long long)d->count, ir_type_name(d->type),
           ir_rop_name(d->op));
    if ((rc = print_sources(stdout, s, d, 1))) return rc;
    printf("]}");
  }
  printf("%s]", s->nreds ? "\n  " : "");
  return CDAG_OK;
}

static int print_text(const df_sst *s) {
  int64_t i = 0, j = 0;
  for (int r = 0; r < s->nprocs; r++) {
    int header = 0;
    for (; i < s->nxfers && s->xfers[i].dst == r; i++) {
      const df_xfer *x = &s->xfers[i];
      if (!header++) printf("rank %d:\n", r);
      if (x->blocks > 1)
        printf("  0x%llx <- rank %d 0x%llx (%llu blocks of %llu B, strides %lld here, %lld there)\n",
               (unsigned long long)x->dst_addr, x->src, (unsigned long long)x->src_addr, (unsigned long long)x->blocks,
               (unsigned long long)x->len, (long long)x->dst_stride, (long long)x->src_stride);
      else
        printf("  0x%llx <- rank %d 0x%llx (%llu B)\n", (unsigned long long)x->dst_addr, x->src,
               (unsigned long long)x->src_addr, (unsigned long long)x->len);
    }
    for (; j < s->nreds && s->reds[j].dst == r; j++) {
      const df_red *d = &s->reds[j];
      if (!header++) printf("rank %d:\n", r);
      printf("  0x%llx <- %s of %llu %s over ", (unsigned long long)d->dst_addr, ir_rop_name(d->op),
             (unsigned long long)d->count, ir_type_name(d->type));
      int rc = print_sources(stdout, s, d, 0);
      if (rc) return rc;
      printf("\n");
    }
  }
  printf("%lld transfers, %lld reductions, %lld splits\n", (long long)s->nxfers, (long long)s->nreds, (long long)s->splits);
  return CDAG_OK;
}

/* The SST of one graph of pure communication (a whole graph, or one of its stages). */
static int print_phase(cdag_graph *g, int json) {
  match_result m = {0};
  df_sst *s = NULL;
  int rc = ir_finalize(g);
  if (rc == CDAG_OK) rc = match_run(g, &m);
  if (rc == CDAG_OK) rc = dataflow_run(g, &m, &s);
  if (rc == CDAG_OK) rc = json ? print_json(s) : print_text(s);
  dataflow_free(s);
  match_free(&m);
  return rc;
}

/* A graph that computes: the SST of each of its stages (src/stage), in order. */
static int print_stages(cdag_graph *g, int json) {
  match_result m = {0};
  stage_split st = {0};
  int rc = ir_finalize(g);
  if (rc == CDAG_OK) rc = match_run(g, &m);
  if (rc == CDAG_OK) rc = stage_cut(g, &m, &st);
  if (json && rc == CDAG_OK) printf("{\n  \"cdag_sst\": 1,\n  \"stages\": [");
  for (int32_t k = 0; k < st.nstages && rc == CDAG_OK; k++) {
    if (json) printf("%s\n  {\"stage\": %d, ", k ? "," : "", k);
    else printf("stage %d:\n", k);
    rc = print_phase(st.graph[k], json);
    if (json && rc == CDAG_OK) printf("}");
  }
  if (json && rc == CDAG_OK) printf("\n  ]\n}\n");
  stage_split_free(&st);
  match_free(&m);
  return rc;
}

int cmd_sst(int argc, char **argv) {
  int buffers = cmd_goal_buffers(&argc, argv), json = cmd_has_flag(&argc, argv, "--json");
  if (buffers < 0 || argc != 1) return cmd_usage("sst");
  cdag_graph *g = NULL;
  if (cmd_load("sst", argv[0], buffers, &g)) return 1;
  int rc = ir_finalize(g);
  if (rc == CDAG_OK) rc = pipeline_mark_mixed(g);   /* reduces mixing reductions start stages, as in cdag analyze */
  if (rc == CDAG_OK && stage_has_computes(g)) {
    rc = print_stages(g, json);
  } else if (rc == CDAG_OK) {
    if (json) printf("{\n  \"cdag_sst\": 1,\n  ");
    rc = print_phase(g, json);
    if (json && rc == CDAG_OK) printf("\n}\n");
  }
  int status = rc ? cmd_fail("sst", rc) : 0;
  cdag_graph_free(&g);
  return status;
}
