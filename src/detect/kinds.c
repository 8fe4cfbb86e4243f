/* cdag — src/detect/kinds.c: a plan collective's slots, from the table of kinds.
 *
 * ir/coll_kinds.h says per kind how many send and recv slots a member has (none, one, or
 * one per member) and whose slots carry data (the root's only, or every member's). The
 * plan builder, the schedule parts, the simulator's checks and lowering ask these functions
 * instead of keeping a list of kinds of their own. */
#include "detect/detect.h"

const char *det_kind_name(det_kind k) {
  const char *name = ir_coll_name(k);
  return name ? name : "unknown";
}

static int32_t per(int slots, int32_t n) { return slots == IR_SLOTS_MEMBER ? n : slots == IR_SLOTS_ONE ? 1 : 0; }

void det_kind_slots(det_kind k, int32_t n, int32_t *nsend, int32_t *nrecv) {
  const ir_coll_info *in = ir_coll_get(k);
  *nsend = in ? per(in->send, n) : 0;
  *nrecv = in ? per(in->recv, n) : 0;
}

/* A block moves from member i's send slot to member j's recv slot: the slot for the peer
   where a side has one per member, else slot 0; a root-only side must be the root's. */
void det_slot_pair(det_kind k, int32_t i, int32_t j, int32_t rootm, int *ss, int *rs) {
  const ir_coll_info *in = ir_coll_get(k);
  *ss = *rs = -1;
  if (!in || in->reduces || in->send == IR_SLOTS_NONE) return;
  if ((in->send_root && i != rootm) || (in->recv_root && j != rootm)) return;
  *ss = in->send == IR_SLOTS_MEMBER ? j : 0;
  *rs = in->recv == IR_SLOTS_MEMBER ? i : 0;
}

const det_iov det_no_iov = {0, 0, 0};

int32_t det_root_member(const cdag_plan *p, const det_coll *c) {
  const int32_t *r = p->ranks + c->ranks_first;
  int32_t lo = 0, hi = c->nranks;   /* ranks are sorted: O(1) for a contiguous range */
  if (hi > 0 && r[hi - 1] - r[0] == hi - 1) lo = c->root >= r[0] && c->root <= r[hi - 1] ? c->root - r[0] : hi;
  while (lo < hi) {
    int32_t mid = lo + (hi - lo) / 2;
    if (r[mid] < c->root) lo = mid + 1;
    else hi = mid;
  }
  return c->root >= 0 && lo < c->nranks && r[lo] == c->root ? lo : -1;
}
