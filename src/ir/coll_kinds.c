/* cdag — src/ir/coll_kinds.c: the value columns of the table of collective kinds
 * (coll_kinds.h), and lookups by kind and by name. O(1) by kind, O(kinds) by name. */
#include <string.h>

#include "ir/coll_kinds.h"

#define IR_COLL_ROW_(ID, NAME, MPI, EXEC, LOWER, RO, VE, RE, SE, RC, SR, RR, NA, KE)                              \
  [IR_COLL_##ID] = {.name = NAME, .mpi = "MPI_" #MPI, .rooted = RO, .vector = VE, .reduces = RE,                  \
                    .send = IR_SLOTS_##SE, .recv = IR_SLOTS_##RC, .send_root = SR, .recv_root = RR, .native = NA, \
                    .kernel = KE},
static const ir_coll_info kinds[IR_COLL_NKINDS] = {CDAG_COLL_KINDS(IR_COLL_ROW_)};
#undef IR_COLL_ROW_

const ir_coll_info *ir_coll_get(int kind) { return kind >= 0 && kind < IR_COLL_NKINDS ? &kinds[kind] : NULL; }

const char *ir_coll_name(int kind) { return kind >= 0 && kind < IR_COLL_NKINDS ? kinds[kind].name : NULL; }

int ir_coll_kind(const char *name, size_t len) {
  for (int k = 0; k < IR_COLL_NKINDS; k++)
    if (strlen(kinds[k].name) == len && memcmp(kinds[k].name, name, len) == 0) return k;
  return -1;
}

static uint64_t side_blocks(int slots, int root_only, int root, int32_t n) {
  return slots == IR_SLOTS_MEMBER && (root || !root_only) ? (uint64_t)n : 1;
}

void ir_coll_spans(int kind, int root, int32_t n, uint64_t *in_blocks, uint64_t *out_blocks) {
  const ir_coll_info *in = ir_coll_get(kind);
  *in_blocks = in ? side_blocks(in->send, in->send_root, root, n) : 1;
  *out_blocks = in ? side_blocks(in->recv, in->recv_root, root, n) : 1;
}
