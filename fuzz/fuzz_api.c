/* cdag — fuzz/fuzz_api.c: libFuzzer target for graphs built through the public API.
 *
 * The input is a program of API calls on a global graph: its first byte gives the ranks (1 to
 * 8) and the analysis options, then each 8 bytes make one call (send, receive, local reduce
 * of any family of element type, copy (plain, strided or listed), scratch, get and put (their
 * target's side in blocks or not), fence,
 * a dependency, a label) on a small address space, so calls collide, race and mismatch
 * often. Every call returns CDAG_OK or an error with a
 * message (never a crash); then the graph is analysed with those options and the plan is
 * simulated against the graph (a difference not caused by the graph itself aborts), and the
 * graph is saved and must load again: every graph the API builds can be written and read. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/pipeline.h"
#include "format/format.h"
#include "fuzz_saved.h"

enum { MAX_CALLS = 256, ADDR_SLOTS = 32 };

/* An error must say what happened. */
static void said(int rc) {
  if (rc != CDAG_OK && !cdag_error_message()[0]) abort();
}

/* The local reduces' (type, op): every family of element type, with ops valid for it and
   whose results a plan may combine in any order with the same bytes (verify gives sums and
   products of floating-point types exact inputs; a complex product reassociates inexactly). */
static const struct { cdag_type type; cdag_reduce_op op; } reductions[] = {
  {CDAG_INT64, CDAG_SUM}, {CDAG_INT64, CDAG_PROD}, {CDAG_INT64, CDAG_MIN}, {CDAG_INT64, CDAG_MAX},
  {CDAG_DOUBLE, CDAG_SUM}, {CDAG_DOUBLE, CDAG_PROD}, {CDAG_DOUBLE, CDAG_MIN}, {CDAG_DOUBLE, CDAG_MAX},
  {CDAG_UINT8, CDAG_BXOR}, {CDAG_INT16, CDAG_LAND}, {CDAG_INT32, CDAG_BOR}, {CDAG_FLOAT, CDAG_SUM},
  {CDAG_2INT, CDAG_MINLOC}, {CDAG_DOUBLE_INT, CDAG_MAXLOC}, {CDAG_2DOUBLE, CDAG_MAXLOC},
  {CDAG_COMPLEX_FLOAT, CDAG_SUM}, {CDAG_COMPLEX_DOUBLE, CDAG_SUM}, {CDAG_LONG_DOUBLE, CDAG_SUM},
  {CDAG_LONG_DOUBLE, CDAG_MAX}, {CDAG_LONG_DOUBLE_INT, CDAG_MINLOC}, {CDAG_COMPLEX_LONG_DOUBLE, CDAG_SUM}};

/* One call from 8 bytes b; ops[] holds the ids returned so far (for dependencies). */
static void call(cdag_graph *g, int n, const uint8_t *b, cdag_op *ops, int *nops) {
  int rank = b[1] % n, peer = b[2] % n, tag = b[5] % 3;
  uint64_t a1 = (uint64_t)(b[3] % ADDR_SLOTS) * 8, a2 = (uint64_t)(b[4] % ADDR_SLOTS) * 8;
  uint64_t bytes = (uint64_t)(b[6] % 4 + 1) * 8;
  cdag_op op = CDAG_OP_NULL;
  int rc = CDAG_OK;
  switch (b[0] % 10) {
  case 0: rc = cdag_rank_send(g, rank, a1, bytes, peer, tag, &op); break;
  case 1: rc = cdag_rank_recv(g, rank, a1, bytes, peer, tag, &op); break;
  case 2: {
    int k = b[7] % (int)(sizeof reductions / sizeof *reductions), size = ir_type_size(reductions[k].type);
    rc = cdag_rank_reduce_local(g, rank, a1, a2, bytes / (uint64_t)size ? bytes / (uint64_t)size : 1, reductions[k].type,
                                reductions[k].op, &op);
    break;
  }
  case 3:
    if (b[7] % 2) {   /* strided: 2 to 5 blocks of 8 to 32 bytes, each side strided or not, or listed */
      uint64_t len = bytes, nb = (uint64_t)(b[7] / 2 % 4 + 2), sf = b[7] & 8 ? len + 8 : len, st = b[7] & 16 ? len + 16 : len;
      int32_t id = -1;
      if (b[7] & 32) {   /* listed: the strided places reversed on the source side (an indexed type's order) */
        uint64_t off[5];
        for (uint64_t j = 0; j < nb; j++) off[j] = (nb - 1 - j) * sf;
        rc = ir_add_copy_listed(g, rank, a1, a2, nb, len, off, sf, NULL, st, &id);
      } else {
        rc = ir_add_copy_strided(g, rank, a1, a2, nb, len, sf, st, &id);
      }
      if (rc == CDAG_OK) op = id;
    } else {
      rc = cdag_rank_copy_local(g, rank, a1, a2, bytes, &op);
    }
    break;
  case 4: rc = cdag_rank_scratch(g, rank, a1 + 0x1000, bytes); break;
  case 5:
  case 6: {   /* odd b[7]: the target's side in 2 to 4 blocks of `bytes`, at a stride or back to back */
    uint64_t nb = b[7] % 2 ? (uint64_t)(b[7] / 2 % 3 + 2) : 1, stride = bytes + (uint64_t)(b[7] / 8 % 3) * 8;
    rc = b[0] % 10 == 5 ? cdag_rank_get(g, rank, a1, nb * bytes, peer, a2, &op)
                        : cdag_rank_put(g, rank, a1, nb * bytes, peer, a2, &op);
    if (rc == CDAG_OK && nb > 1) rc = ir_set_access_blocks(g, (int32_t)op, nb, stride);
    break;
  }
  case 7: rc = cdag_rank_fence(g, rank); break;
  case 8:
    if (*nops > 1) rc = cdag_depend(g, ops[b[3] % *nops], ops[b[4] % *nops]);
    break;
  default:
    if (*nops) rc = cdag_label(g, ops[b[3] % *nops], b[4] % 2 ? "halo north" : "x");
    break;
  }
  said(rc);
  if (rc == CDAG_OK && op != CDAG_OP_NULL && *nops < MAX_CALLS) ops[(*nops)++] = op;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  int n = data[0] % 8 + 1;
  cdag_graph *g = NULL;
  if (cdag_graph_create_global(n, &g) != CDAG_OK) abort();
  cdag_op ops[MAX_CALLS];
  int nops = 0;
  for (size_t k = 1; k + 8 <= size && k / 8 < MAX_CALLS; k += 8) call(g, n, data + k, ops, &nops);
  cdag_options o;
  cdag_options_init(&o);
  o.min_group = data[0] / 8 % 4 + 1;
  o.density = data[0] / 32 % 2 ? 0.5 : 1.0;
  o.exact_float = data[0] / 64 % 2;
  o.kernel = (cdag_kernel_policy)(data[0] / 128);
  cdag_plan *p = NULL;
  int rc = cdag_analyze(g, &o, &p);
  said(rc);
  if (rc == CDAG_OK) {
    rc = cdag_plan_verify(g, p);
    if (rc == CDAG_ERR_MISMATCH && !strstr(cdag_error_message(), "the graph itself")) {
      fprintf(stderr, "fuzz_api: the plan differs from the graph: %s\n", cdag_error_message());
      abort();
    }
    said(rc);
    fuzz_saved_loads("fuzz_api", g, 0);
  }
  cdag_plan_free(&p);
  cdag_graph_free(&g);
  return 0;
}
