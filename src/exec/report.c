/* cdag — src/exec/report.c: what the pipeline found and chose, in words and in JSON
 * (docs/format.md, "The report", describes every line and field). It sits above detect and
 * choose because it reports both.
 *
 * The text report leads with the collectives ("alltoall over all 16 ranks, 4096 B per block
 * (240 transfers)"), then what remained and why notable patterns were not rewritten, then
 * the counts and timings. The JSON object has every field docs/format.md requires, plus
 * "syncs", "snapshots" and "notes", and per collective "algorithm" and "why" once the
 * choice stage has chosen how it runs (plan->chosen, src/choose/choose.h);
 * per bcast whose members form strided ranges the replication descriptor, and for a
 * replication the reduce it follows. Used by cdag_plan_report and the schedule report.
 * Kinds, their names and which lines they take (rooted, reduces, v-form) come from ir/coll_kinds.h.
 * The report of a graph run as written without analysis (det_report_as_written: detect = 0,
 * user ops) and the test hook's are written here too, so every report JSON has one writer. */
#include <stdio.h>
#include <stdlib.h>

#include "base/runs.h"
#include "format/format.h"
#include "detect/detect.h"
#include "choose/choose.h"

/* Residual strided transfers (blocks >= 2), and their blocks in *blocks. */
static int64_t strided_xfers(const cdag_plan *p, uint64_t *blocks) {
  int64_t n = 0;
  *blocks = 0;
  for (int64_t i = 0; i < p->nxfers; i++)
    if (p->xfers[i].blocks > 1) n++, *blocks += p->xfers[i].blocks;
  return n;
}

static uint64_t residual_bytes(const cdag_plan *p) {
  uint64_t b = 0;
  for (int64_t i = 0; i < p->nmsgs; i++) b += p->msgs[i].bytes;
  return b;
}

/* Residual transfers of a rank to itself (the plan's messages with src == dst): local
   copies at run time, no message; *bytes gets their bytes. */
static int64_t local_copies(const cdag_plan *p, uint64_t *bytes) {
  int64_t n = 0;
  *bytes = 0;
  for (int64_t i = 0; i < p->nmsgs; i++)
    if (p->msgs[i].src == p->msgs[i].dst) n += p->msgs[i].n, *bytes += p->msgs[i].bytes;
  return n;
}

/* Messages carrying the residual transfers between two ranks: as exec's cost model splits
   them once chosen; local copies are not messages. */
static int64_t residual_messages(const cdag_plan *p) {
  if (p->chosen) return p->chosen->msgs_sent;
  int64_t n = 0;
  for (int64_t i = 0; i < p->nmsgs; i++) n += p->msgs[i].src != p->msgs[i].dst;
  return n;
}

static uint64_t snapshot_bytes(const cdag_plan *p) {
  uint64_t b = 0;
  for (int64_t i = 0; i < p->nsnaps; i++) b += p->snaps[i].len;
  return b;
}

static int is_rooted(det_kind k) { return ir_coll_get(k)->rooted; }

static void text_ranks(FILE *f, const cdag_plan *p, const det_coll *c) {
  if (c->nranks == p->nprocs) {
    fprintf(f, "all %d ranks", c->nranks);
    return;
  }
  fprintf(f, "ranks ");
  const int32_t *r = p->ranks + c->ranks_first;
  for (int32_t i = 0; i < c->nranks;) {
    int32_t j = i;
    while (j + 1 < c->nranks && r[j + 1] == r[j] + 1) j++;
    if (j > i) fprintf(f, "%s%d-%d", i ? "," : "", r[i], r[j]);
    else fprintf(f, "%s%d", i ? "," : "", r[i]);
    i = j + 1;
  }
}

/* A bcast's members as strided ranges (strided.c), malloc'd into *out; 0 when they do not
   form strided ranges (or memory ran out: the descriptor is an addition, never required). */
/* The ranges into v (room for the largest collective's ranks: cdag_plan_report allocates it
   before it writes anything, so running out of memory never leaves a report short). */
static int64_t bcast_ranges(const cdag_plan *p, const det_coll *c, det_stride *v) {
  if (c->kind != DET_BCAST || c->nranks < 2) return 0;
  return det_strided_ranges(p->ranks + c->ranks_first, c->nranks, v, c->nranks);
}

/* "  replication: rank 0's block is replicated on 8 ranks: 0 to 56 step 8" (at most 8
   ranges in words; the JSON has them all), and for a bcast the replication pass made, which
   result it sends. */
static void text_replication(FILE *f, const cdag_plan *p, const det_coll *c, det_stride *v) {
  int64_t n = bcast_ranges(p, c, v);
  if (c->after > 0) {
    const det_coll *from = &p->colls[c->after - 1];
    fprintf(f, "  replicates the %s %s of the %s", ir_type_name(from->type), ir_rop_name(from->op), det_kind_name(from->kind));
    if (is_rooted(from->kind)) fprintf(f, " rooted at %d", from->root);
    fprintf(f, " over ");
    text_ranks(f, p, from);
    fprintf(f, " to the ranks that keep it (sent once that %s completes)\n", det_kind_name(from->kind));
  }
  if (!n) return;
  fprintf(f, "  replication: rank %d's block on %d ranks in %lld strided range%s:", c->root, c->nranks, (long long)n,
          n > 1 ? "s" : "");
  for (int64_t i = 0; i < n && i < 8; i++) {
    if (v[i].count == 1) fprintf(f, "%s %d", i ? "," : "", v[i].first);
    else fprintf(f, "%s %d to %d step %d", i ? "," : "", v[i].first, v[i].first + (v[i].count - 1) * v[i].stride, v[i].stride);
  }
  fprintf(f, "%s\n", n > 8 ? ", ..." : "");
}

static void json_replication(FILE *f, const cdag_plan *p, const det_coll *c, det_stride *v) {
  int64_t n = bcast_ranges(p, c, v);
  if (c->after > 0) fprintf(f, ", \"after\": %lld", (long long)c->after - 1);
  if (!n) return;
  fprintf(f, ", \"replication\": {\"root\": %d, \"ranges\": [", c->root);
  for (int64_t i = 0; i < n; i++)
    fprintf(f, "%s{\"first\": %d, \"count\": %d, \"stride\": %d}", i ? ", " : "", v[i].first, v[i].count, v[i].stride);
  fprintf(f, "]}");
}

/* Why an alltoallv was taken as a redistribution: its figures (docs/semantics.md). */
static void text_redistribution(FILE *f, const det_coll *c) {
  if (!c->rd_pairs) return;
  long long pairs = (long long)c->nranks * (c->nranks - 1);
  fprintf(f, "  redistribution: %lld of %lld pairs move %lld pieces, %lld beyond the first of each pair (at least the "
          "group's %lld pairs); each rank sends every byte once, from one array to another\n", (long long)c->rd_pairs,
          pairs, (long long)c->rd_pieces, (long long)(c->rd_pieces - c->rd_pairs), pairs);
}

static int64_t native_total(const cdag_plan *p) {
  int64_t n = 0;
  for (int k = 0; k < IR_COLL_NKINDS; k++) n += p->native_calls[k];
  return n;
}

/* The program's own collective calls, and how many collectives were written by hand. */
static void text_native(const cdag_plan *p, FILE *f) {
  int64_t hand = 0;
  for (int64_t i = 0; i < p->ncolls; i++) hand += !p->native[i];
  fprintf(f, "native collective calls: %lld (", (long long)native_total(p));
  for (int k = 0, first = 1; k < IR_COLL_NKINDS; k++)
    if (p->native_calls[k]) {
      fprintf(f, "%s%lld %s", first ? "" : ", ", (long long)p->native_calls[k], ir_coll_name(k));
      first = 0;
    }
  fprintf(f, "); hand-written collectives found: %lld\n", (long long)hand);
  if (p->native_residual)
    fprintf(f, "  %lld residual transfers (%llu B) are data of native calls that no collective of the plan covers "
            "(a call on fewer than min_group ranks, or one whose messages cost less: see the notes): they run as "
            "messages\n", (long long)p->native_residual, (unsigned long long)p->native_residual_bytes);
  if (p->native_residual_reds)
    fprintf(f, "  %lld residual reductions are results of native calls that no collective of the plan covers (see the "
            "notes): they run as residual reductions\n", (long long)p->native_residual_reds);
}

/* What one stage's plan (the whole plan, without computation) does. */
static void stage_text(const cdag_plan *p, FILE *f, det_stride *v) {
  for (int64_t i = 0; i < p->ncolls; i++) {
    const det_coll *c = &p->colls[i];
    fprintf(f, "%s", det_kind_name(c->kind));
    if (is_rooted(c->kind)) fprintf(f, " rooted at %d", c->root);
    fprintf(f, " over ");
    text_ranks(f, p, c);
    const ir_coll_info *k = ir_coll_get(c->kind);
    if (k->send == IR_SLOTS_NONE) fprintf(f, " (replaces zero-byte messages)\n");
    else if (k->reduces) fprintf(f, ", %llu B of %s %s (%lld reductions)\n", (unsigned long long)c->bytes, ir_type_name(c->type), ir_rop_name(c->op), (long long)c->ntransfers);
    else if (k->vector) fprintf(f, ", %llu B in total (%lld transfers)\n", (unsigned long long)c->bytes, (long long)c->ntransfers);
    else fprintf(f, ", %llu B per block (%lld %s)\n", (unsigned long long)c->bytes, (long long)c->ntransfers,
                 c->after > 0 ? "reductions" : "transfers");
    if (p->native) fprintf(f, "  %s\n", p->native[i] ? "native: the program called it" : "hand-written: the program built it from messages");
    if (p->chosen) fprintf(f, "  algorithm: %s (%s)\n", p->chosen->coll[i].name, p->chosen->coll[i].why);
    if (c->price_coll_us > 0)
      fprintf(f, "  price: %.3f us as this collective, %.3f us as messages\n", c->price_coll_us, c->price_msgs_us);
    text_redistribution(f, c);
    text_replication(f, p, c, v);
  }
  if (p->ncolls == 0 && p->nleft)
    fprintf(f, "no collectives used: %lld found cost no less than their messages (notes below)\n", (long long)p->nleft);
  else if (p->ncolls == 0) fprintf(f, "no collectives found\n");
  if (p->native) text_native(p, f);
  if (det_written_unpriced(p->as_written)) fprintf(f, "runs as written (%s)\n", det_written_why(p->as_written));
  uint64_t copy_bytes;
  int64_t copies = local_copies(p, &copy_bytes);
  uint64_t blocks;
  int64_t strided = strided_xfers(p, &blocks);
  fprintf(f, "residual: %lld transfers (%llu B", (long long)p->nxfers, (unsigned long long)residual_bytes(p));
  if (strided) fprintf(f, "; %lld strided, of %llu blocks", (long long)strided, (unsigned long long)blocks);
  fprintf(f, ") in %lld messages", (long long)residual_messages(p));
  if (copies) fprintf(f, " and %lld local copies (%llu B)", (long long)copies, (unsigned long long)copy_bytes);
  fprintf(f, ", %lld reductions, %lld kept zero-byte syncs\n", (long long)p->nreds, (long long)p->nsyncs);
  if (p->chosen && p->nmsgs) {
    char why[200];
    kern_msgs_why(p->chosen, why, sizeof why);
    fprintf(f, "  messages: %s\n", why);
  }
  for (int64_t i = 0; i < p->nnotes; i++) fprintf(f, "note: %s\n", p->notes[i]);
}

/* SST figures summed over the stages of a plan. */
typedef struct { int64_t xfers, reds, splits, snaps, whole, expanded; uint64_t snap_bytes; } sst_sums;

static sst_sums sums_of(const cdag_plan *p) {
  sst_sums s = {0};
  for (const cdag_plan *q = p; q; q = q->next) {
    s.xfers += q->sst->nxfers, s.reds += q->sst->nreds, s.splits += q->sst->splits;
    s.whole += q->sst->strided_whole, s.expanded += q->sst->strided_expanded;
    s.snaps += q->nsnaps, s.snap_bytes += snapshot_bytes(q);
  }
  return s;
}

/* Computations of a staged plan: how many, how many only take time, their time. */
static void compute_sums(const stage_steps *st, int64_t *time_only, uint64_t *ns) {
  *time_only = 0, *ns = 0;
  for (int64_t i = 0; i < st->ncomputes; i++) {
    *time_only += st->computes[i].wlen == 0;
    *ns += st->computes[i].cost;
  }
}

/* One stage under its label ("stage 3", or a run of alike ones: base/runs.h). */
static void render_stage(FILE *f, const void *stage, const char *label, void *v) {
  fprintf(f, "%s:\n", label);
  stage_text(stage, f, v);
}

static void stages_text(const cdag_plan *p, FILE *f, det_stride *v) {
  int64_t time_only;
  uint64_t ns, temp = 0;
  compute_sums(p->steps, &time_only, &ns);
  for (int64_t i = 0; i < p->steps->ntemps; i++) temp += p->steps->temps[i].len;
  fprintf(f, "stages: %d, between them %lld computations (%lld only take time; %.1f us in all)", p->steps->nstages,
          (long long)p->steps->ncomputes, (long long)time_only, (double)ns / 1e3);
  if (p->steps->cut_delivered)
    fprintf(f, "; %lld local reduces or copies start a stage: they read bytes a message delivered",
            (long long)p->steps->cut_delivered);
  if (p->steps->cut_mixed)
    fprintf(f, "; %lld local reduces start a stage: they combine values of different reductions",
            (long long)p->steps->cut_mixed);
  if (p->steps->ntemps)
    fprintf(f, "; %lld messages land a stage late, through staging buffers (%llu B)", (long long)p->steps->ntemps,
            (unsigned long long)temp);
  fputc('\n', f);
  base_runs runs;
  base_runs_begin(&runs, f, "stage", "stages", render_stage, v);
  for (const cdag_plan *q = p; q; q = q->next) base_runs_add(&runs, q, q->stage);
  base_runs_end(&runs);
}

/* Does any stage of p use a collective? */
static int uses_collectives(const cdag_plan *p) {
  for (const cdag_plan *q = p; q; q = q->next)
    if (q->ncolls) return 1;
  return 0;
}

/* The price (src/model/price.c): both times, the parameters, the verdict. */
static void price_text(const cdag_plan *p, FILE *f) {
  const kern_price *pr = p->chosen->price;
  const loggp_params *l = &pr->params;
  if (!pr->priced) {
    fprintf(f, "price: %s\n", pr->why);
    return;
  }
  char table[120] = "";   /* a calibrated machine's costs by size replace L, G and O */
  int n = l->ntab ? snprintf(table, sizeof table, ", costs of %d sizes", l->ntab) : 0;
  if (l->rcopy > 0) n += snprintf(table + n, sizeof table - (size_t)n, ", rcopy %g us/B", l->rcopy);
  if (l->queue > 0) snprintf(table + n, sizeof table - (size_t)n, ", queue %g us", l->queue);
  fprintf(f, "price (LogGOPS L=%g o=%g g=%g us, G=%g us/B, copy %g us/B%s; %s): plan %s%.3f us%s, as written %.3f us: ",
          l->L, l->o, l->g, l->G, l->copy, table, pr->source[0] ? pr->source : "built in", pr->bound ? "at least " : "",
          pr->plan_us, pr->bound ? " (the receives of its residual reductions; not lowered)" : "", pr->written_us);
  if (p->as_written == DET_WRITTEN_COST)
    fprintf(f, "runs as written (the plan is not faster%s)\n", uses_collectives(p) ? "; the collectives above are not used" : "");
  else if (pr->plan_us >= pr->written_us) fprintf(f, "%s\n", pr->why);
  else fprintf(f, "the plan runs (saves %.3f us)\n", pr->written_us - pr->plan_us);
}

static void price_json(const cdag_plan *p, FILE *f) {
  const kern_price *pr = p->chosen->price;
  const loggp_params *l = &pr->params;
  int64_t left = 0;
  for (const cdag_plan *q = p; q; q = q->next) left += q->nleft;
  fprintf(f, "  \"price\": {\"priced\": %s, \"candidates_left\": %lld, ", pr->priced ? "true" : "false", (long long)left);
  if (pr->priced)
    fprintf(f, "\"plan_us\": %.6f, \"plan_bound\": %s, \"written_us\": %.6f, \"runs\": \"%s\", ", pr->plan_us,
            pr->bound ? "true" : "false", pr->written_us, p->as_written ? "as_written" : "plan");
  fprintf(f, "\"params\": {\"L\": %g, \"o\": %g, \"g\": %g, \"G\": %g, \"O\": %g, \"S\": %llu, \"copy\": %g, \"rcopy\": %g, "
          "\"queue\": %g, \"sizes\": [", l->L, l->o, l->g, l->G, l->O, (unsigned long long)l->S, l->copy, l->rcopy, l->queue);
  for (int i = 0; i < l->ntab; i++)
    fprintf(f, "%s{\"bytes\": %.0f, \"pair_us\": %g, \"round_us\": %g}", i ? ", " : "", l->tab_size[i], l->tab_pair[i],
            l->tab_round[i]);
  fprintf(f, "]}");
  fprintf(f, ", \"source\": ");   /* where the parameters came from (src/exec/machine.h) */
  ir_json_string(f, pr->source[0] ? pr->source : "built in");
  if (!pr->priced) {
    fprintf(f, ", \"why\": ");
    ir_json_string(f, pr->why);
  }
  fprintf(f, "},\n");
}

static void report_text(const cdag_plan *p, FILE *f, det_stride *v) {
  if (p->as_written == DET_WRITTEN_COST && uses_collectives(p))   /* say it before the plan, read top-down */
    fprintf(f, "runs as written (the plan below is not faster: see price); the plan would use:\n");
  if (p->steps) stages_text(p, f, v);
  else stage_text(p, f, v);
  if (p->chosen) price_text(p, f);
  fprintf(f, "graph: %d ranks, %lld send, %lld recv, %lld reduce, %lld copy, %lld calc\n", p->nprocs,
          (long long)p->nops_kind[IR_SEND], (long long)p->nops_kind[IR_RECV], (long long)p->nops_kind[IR_REDUCE],
          (long long)p->nops_kind[IR_COPY], (long long)p->nops_kind[IR_CALC]);
  const int64_t *os = p->nonesided;
  if (os[0] || os[1] || os[2] || os[3]) {
    fprintf(f, "one-sided: %lld gets, %lld puts, ", (long long)os[0], (long long)os[1]);
    if (os[3]) fprintf(f, "%lld accumulates, ", (long long)os[3]);
    fprintf(f, "%lld fences (counted above as the messages%s they became, and the fences as calcs that cost "
            "nothing)\n", (long long)os[2], os[3] ? " and reductions" : "");
  }
  fprintf(f, "volume: received per process max %llu B, mean %.0f B", (unsigned long long)p->volume_max, p->volume_mean);
  if (p->bound) fprintf(f, "; lower bound %llu B (max/bound %.3f)", (unsigned long long)p->bound, (double)p->volume_max / (double)p->bound);
  fputc('\n', f);
  sst_sums s = sums_of(p);
  fprintf(f, "sst: %lld transfers, %lld reductions, %lld splits; snapshots: %lld ranges (%llu B)\n",
          (long long)s.xfers, (long long)s.reds, (long long)s.splits, (long long)s.snaps, (unsigned long long)s.snap_bytes);
  if (s.whole || s.expanded)
    fprintf(f, "strided: %lld copies and messages moved strided blocks whole; %lld blocks followed one by one\n",
            (long long)s.whole, (long long)s.expanded);
  fprintf(f, "time: match %.6f s, dataflow %.6f s, detect %.6f s\n", p->sec_match, p->sec_dataflow, p->sec_detect);
}

static void json_coll(FILE *f, const cdag_plan *p, int64_t i, det_stride *v, int staged) {
  const det_coll *c = &p->colls[i];
  fprintf(f, "    {\"kind\": \"%s\", ", det_kind_name(c->kind));
  if (staged) fprintf(f, "\"stage\": %d, ", p->stage);
  fprintf(f, "\"root\": ");
  if (is_rooted(c->kind)) fprintf(f, "%d", c->root);
  else fprintf(f, "null");
  fprintf(f, ", \"ranks\": ");
  if (c->nranks == p->nprocs) {
    fprintf(f, "\"all\"");
  } else {
    fprintf(f, "[");
    for (int32_t m = 0; m < c->nranks; m++) fprintf(f, "%s%d", m ? ", " : "", p->ranks[c->ranks_first + m]);
    fprintf(f, "]");
  }
  fprintf(f, ", \"bytes\": %llu, \"transfers\": %lld", (unsigned long long)c->bytes, (long long)c->ntransfers);
  if (ir_coll_get(c->kind)->reduces)
    fprintf(f, ", \"type\": \"%s\", \"op\": \"%s\"", ir_type_name(c->type), ir_rop_name(c->op));
  json_replication(f, p, c, v);
  if (c->rd_pairs)
    fprintf(f, ", \"redistribution\": {\"pairs\": %lld, \"pieces\": %lld}", (long long)c->rd_pairs, (long long)c->rd_pieces);
  if (p->native) fprintf(f, ", \"native\": %s", p->native[i] ? "true" : "false");
  if (c->price_coll_us > 0)
    fprintf(f, ", \"price\": {\"collective_us\": %.6f, \"messages_us\": %.6f}", c->price_coll_us, c->price_msgs_us);
  if (p->chosen) {
    fprintf(f, ", \"algorithm\": ");
    ir_json_string(f, p->chosen->coll[i].name);
    fprintf(f, ", \"why\": ");
    ir_json_string(f, p->chosen->coll[i].why);
  }
  fprintf(f, "}");
}

/* The head every report object starts with: version, ranks and operations by kind. */
static void json_head(FILE *f, int nprocs, const int64_t *n) {
  fprintf(f, "{\n  \"cdag_report\": 1,\n  \"nprocs\": %d,\n", nprocs);
  fprintf(f, "  \"ops\": {\"send\": %lld, \"recv\": %lld, \"reduce\": %lld, \"copy\": %lld, \"calc\": %lld},\n",
          (long long)n[IR_SEND], (long long)n[IR_RECV], (long long)n[IR_REDUCE], (long long)n[IR_COPY],
          (long long)n[IR_CALC]);
}

static void json_seconds(FILE *f, double match, double dataflow, double detect) {
  fprintf(f, "  \"seconds\": {\"match\": %.6f, \"dataflow\": %.6f, \"detect\": %.6f}\n}\n", match, dataflow, detect);
}

/* The residual parts summed over a plan's stages. */
typedef struct {
  int64_t xfers, msgs, reds, pairs, copies, syncs, native_xfers, native_reds, native_calls[IR_COLL_NKINDS], strided;
  uint64_t bytes, copy_bytes, pack_limit, native_bytes, strided_blocks;
  int barrier, native, chosen;
  const kern_choices *why;   /* the last stage's choices: why its messages travel as they do */
} residual_sums;

static residual_sums residual_of(const cdag_plan *p) {
  residual_sums r = {0};
  for (const cdag_plan *q = p; q; q = q->next) {
    uint64_t cb, sb;
    r.xfers += q->nxfers, r.bytes += residual_bytes(q), r.msgs += residual_messages(q), r.reds += q->nreds;
    r.strided += strided_xfers(q, &sb), r.strided_blocks += sb;
    r.copies += local_copies(q, &cb), r.copy_bytes += cb, r.syncs += q->nsyncs, r.pairs += q->nmsgs;
    r.barrier |= q->barrier;
    if (q->native) {
      r.native = 1, r.native_xfers += q->native_residual, r.native_bytes += q->native_residual_bytes;
      r.native_reds += q->native_residual_reds;
      for (int k = 0; k < IR_COLL_NKINDS; k++) r.native_calls[k] += q->native_calls[k];
    }
    if (q->chosen) r.chosen = 1, r.pack_limit = q->chosen->pack_limit, r.why = q->chosen;
  }
  return r;
}

static void json_native(FILE *f, const residual_sums *r) {
  fprintf(f, "  \"native\": {\"calls\": {");
  for (int k = 0, first = 1; k < IR_COLL_NKINDS; k++)
    if (r->native_calls[k]) {
      fprintf(f, "%s\"%s\": %lld", first ? "" : ", ", ir_coll_name(k), (long long)r->native_calls[k]);
      first = 0;
    }
  fprintf(f, "}, \"residual\": {\"transfers\": %lld, \"bytes\": %llu, \"reductions\": %lld}},\n",
          (long long)r->native_xfers, (unsigned long long)r->native_bytes, (long long)r->native_reds);
}

static void json_stages(FILE *f, const stage_steps *st) {
  int64_t time_only;
  uint64_t ns, temp = 0;
  compute_sums(st, &time_only, &ns);
  for (int64_t i = 0; i < st->ntemps; i++) temp += st->temps[i].len;
  fprintf(f, "  \"stages\": {\"count\": %d, \"computations\": %lld, \"time_only\": %lld, \"compute_ns\": %llu, "
          "\"staging\": {\"messages\": %lld, \"bytes\": %llu}, \"cut_delivered\": %lld, \"cut_mixed\": %lld},\n",
          st->nstages, (long long)st->ncomputes, (long long)time_only, (unsigned long long)ns, (long long)st->ntemps,
          (unsigned long long)temp, (long long)st->cut_delivered, (long long)st->cut_mixed);
}

static void report_json(const cdag_plan *p, FILE *f, det_stride *v) {
  json_head(f, p->nprocs, p->nops_kind);
  if (p->nonesided[0] || p->nonesided[1] || p->nonesided[2] || p->nonesided[3])
  {
    fprintf(f, "  \"onesided\": {\"get\": %lld, \"put\": %lld, \"fence\": %lld", (long long)p->nonesided[0],
            (long long)p->nonesided[1], (long long)p->nonesided[2]);
    if (p->nonesided[3]) fprintf(f, ", \"accumulate\": %lld", (long long)p->nonesided[3]);
    fprintf(f, "},\n");
  }
  fprintf(f, "  \"volume\": {\"max\": %llu, \"mean\": %.1f},\n", (unsigned long long)p->volume_max, p->volume_mean);
  if (p->bound) fprintf(f, "  \"bound\": %llu,\n", (unsigned long long)p->bound);
  sst_sums ss = sums_of(p);
  fprintf(f, "  \"sst\": {\"transfers\": %lld, \"reductions\": %lld, \"splits\": %lld", (long long)ss.xfers,
          (long long)ss.reds, (long long)ss.splits);
  if (ss.whole || ss.expanded)
    fprintf(f, ", \"strided_whole\": %lld, \"strided_blocks\": %lld", (long long)ss.whole, (long long)ss.expanded);
  fprintf(f, "},\n");
  if (p->steps) json_stages(f, p->steps);
  fprintf(f, "  \"collectives\": [");
  int64_t n = 0;
  for (const cdag_plan *q = p; q; q = q->next)
    for (int64_t i = 0; i < q->ncolls; i++) {
      fprintf(f, "%s\n", n++ ? "," : "");
      json_coll(f, q, i, v, p->steps != NULL);
    }
  fprintf(f, "%s],\n", n ? "\n  " : "");
  residual_sums r = residual_of(p);
  if (r.native) json_native(f, &r);
  fprintf(f, "  \"barrier\": %s,\n", r.barrier ? "true" : "false");
  fprintf(f, "  \"as_written\": %s,\n", p->as_written ? "true" : "false");
  if (p->chosen) price_json(p, f);
  fprintf(f, "  \"residual\": {\"transfers\": %lld, \"bytes\": %llu, \"messages\": %lld, \"reductions\": %lld",
          (long long)r.xfers, (unsigned long long)r.bytes, (long long)r.msgs, (long long)r.reds);
  if (r.chosen) {
    fprintf(f, ", \"pairs\": %lld, \"pack_limit\": %llu, \"why\": ", (long long)r.pairs, (unsigned long long)r.pack_limit);
    char why[200] = "";
    if (r.why) kern_msgs_why(r.why, why, sizeof why);
    ir_json_string(f, why);
  }
  fprintf(f, ", \"local_copies\": {\"transfers\": %lld, \"bytes\": %llu}", (long long)r.copies,
          (unsigned long long)r.copy_bytes);
  fprintf(f, ", \"strided\": {\"transfers\": %lld, \"blocks\": %llu}},\n", (long long)r.strided,
          (unsigned long long)r.strided_blocks);
  fprintf(f, "  \"syncs\": %lld,\n  \"snapshots\": {\"ranges\": %lld, \"bytes\": %llu},\n", (long long)r.syncs,
          (long long)ss.snaps, (unsigned long long)ss.snap_bytes);
  fprintf(f, "  \"notes\": [");
  n = 0;
  for (const cdag_plan *q = p; q; q = q->next)
    for (int64_t i = 0; i < q->nnotes; i++) {
      fprintf(f, "%s", n++ ? ", " : "");
      ir_json_string(f, q->notes[i]);
    }
  fprintf(f, "],\n");
  json_seconds(f, p->sec_match, p->sec_dataflow, p->sec_detect);
}

int cdag_plan_report(const cdag_plan *p, FILE *out, int json) {
  if (!p || !out) return cdag__error(CDAG_ERR_ARG, "cdag_plan_report: NULL argument");
  int32_t most = 1;
  for (const cdag_plan *q = p; q; q = q->next)
    for (int64_t i = 0; i < q->ncolls; i++)
      if (q->colls[i].nranks > most) most = q->colls[i].nranks;
  det_stride *v = malloc((size_t)most * sizeof *v);
  if (!v) return CDAG_NOMEM("report");
  if (json) report_json(p, out, v);
  else report_text(p, out, v);
  free(v);
  return ferror(out) ? cdag__error(CDAG_ERR_IO, "cdag_plan_report: write failed") : CDAG_OK;
}

/* A graph run as written, not analysed (docs/format.md's schema with "detect": 0: no SST and
   no collectives, every message kept, and the reason). */
int det_report_as_written(const cdag_graph *g, const char *why, FILE *f, int json) {
  if (!g || !why || !f) return cdag__error(CDAG_ERR_ARG, "det_report_as_written: NULL argument");
  int64_t n[IR_NKINDS] = {0};
  uint64_t bytes = 0;
  for (int64_t i = 0; i < g->nops; i++) {
    n[g->kind[i]]++;
    if (g->kind[i] == IR_SEND) bytes += g->bytes[i];
  }
  if (json) {
    json_head(f, g->nprocs, n);
    fprintf(f, "  \"detect\": 0,\n  \"sst\": {\"transfers\": 0, \"reductions\": 0, \"splits\": 0},\n"
               "  \"collectives\": [],\n  \"barrier\": false,\n"
               "  \"residual\": {\"transfers\": %lld, \"bytes\": %llu, \"messages\": %lld},\n  \"runs_as_written\": ",
            (long long)n[IR_SEND], (unsigned long long)bytes, (long long)n[IR_SEND]);
    ir_json_string(f, why);
    fprintf(f, ",\n");
    json_seconds(f, 0, 0, 0);
  } else {
    fprintf(f, "graph run as written (%s) over %d ranks: %lld sends, %lld receives, %lld reduces, %lld copies\n", why,
            g->nprocs, (long long)n[IR_SEND], (long long)n[IR_RECV], (long long)n[IR_REDUCE], (long long)n[IR_COPY]);
  }
  return ferror(f) ? cdag__error(CDAG_ERR_IO, "det_report_as_written: write failed") : CDAG_OK;
}

/* The test hook's hand-made plan (exec_set_analyzer): its collectives and chosen algorithms. */
int det_report_hand_made(const cdag_plan *p, FILE *f, int json) {
  if (!p || !f) return cdag__error(CDAG_ERR_ARG, "det_report_hand_made: NULL argument");
  fputs(json ? "{\"cdag_report\": 1, \"hand_made\": true}\n" : "hand-made plan (test hook)\n", f);
  for (int64_t i = 0; !json && p->chosen && i < p->ncolls; i++)
    fprintf(f, "%s: algorithm: %s (%s)\n", det_kind_name(p->colls[i].kind), p->chosen->coll[i].name, p->chosen->coll[i].why);
  return ferror(f) ? cdag__error(CDAG_ERR_IO, "det_report_hand_made: write failed") : CDAG_OK;
}
