/* cdag — src/detect/kinds.c: the one table of collective kinds (detect.h).
 *
 * Name as the report spells it, whether the kind has a root and whether it reduces, how
 * many send and recv slots each member has (1, or one per member) and whose slots carry
 * data. Every stage that reads a plan's slots (the plan builder, the schedule parts, the
 * simulator's checks, lowering) asks this table instead of keeping its own. */
#include "detect/detect.h"

enum { PER_NONE, PER_ONE, PER_MEMBER };

static const det_kind_info kinds[DET_NKINDS] = {
    /* name                   rooted reduces send        recv        send_root recv_root */
    [DET_BCAST] =            {"bcast", 1, 0, PER_ONE, PER_ONE, 1, 0},
    [DET_SCATTER] =          {"scatter", 1, 0, PER_MEMBER, PER_ONE, 1, 0},
    [DET_GATHER] =           {"gather", 1, 0, PER_ONE, PER_MEMBER, 0, 1},
    [DET_ALLGATHER] =        {"allgather", 0, 0, PER_ONE, PER_MEMBER, 0, 0},
    [DET_ALLTOALL] =         {"alltoall", 0, 0, PER_MEMBER, PER_MEMBER, 0, 0},
    [DET_SCATTERV] =         {"scatterv", 1, 0, PER_MEMBER, PER_ONE, 1, 0},
    [DET_GATHERV] =          {"gatherv", 1, 0, PER_ONE, PER_MEMBER, 0, 1},
    [DET_ALLGATHERV] =       {"allgatherv", 0, 0, PER_ONE, PER_MEMBER, 0, 0},
    [DET_ALLTOALLV] =        {"alltoallv", 0, 0, PER_MEMBER, PER_MEMBER, 0, 0},
    [DET_REDUCE] =           {"reduce", 1, 1, PER_ONE, PER_ONE, 0, 1},
    [DET_ALLREDUCE] =        {"allreduce", 0, 1, PER_ONE, PER_ONE, 0, 0},
    [DET_REDUCE_SCATTER] =   {"reduce_scatter", 0, 1, PER_MEMBER, PER_ONE, 0, 0},
    [DET_REDUCE_SCATTER_BLOCK] = {"reduce_scatter_block", 0, 1, PER_MEMBER, PER_ONE, 0, 0},
    [DET_BARRIER] =          {"barrier", 0, 0, PER_NONE, PER_NONE, 0, 0},
};

const det_kind_info *det_kind_get(det_kind k) { return k >= 0 && k < DET_NKINDS ? &kinds[k] : NULL; }

const char *det_kind_name(det_kind k) { return k >= 0 && k < DET_NKINDS ? kinds[k].name : "unknown"; }

static int32_t per(int code, int32_t n) { return code == PER_MEMBER ? n : code == PER_ONE ? 1 : 0; }

void det_kind_slots(det_kind k, int32_t n, int32_t *nsend, int32_t *nrecv) {
  const det_kind_info *in = det_kind_get(k);
  *nsend = in ? per(in->send_per, n) : 0;
  *nrecv = in ? per(in->recv_per, n) : 0;
}

void det_slot_pair(det_kind k, int32_t i, int32_t j, int32_t rootm, int *ss, int *rs) {
  *ss = *rs = -1;
  switch (k) {
  case DET_BCAST: if (i == rootm) { *ss = 0; *rs = 0; } break;
  case DET_SCATTER: case DET_SCATTERV: if (i == rootm) { *ss = j; *rs = 0; } break;
  case DET_GATHER: case DET_GATHERV: if (j == rootm) { *ss = 0; *rs = i; } break;
  case DET_ALLGATHER: case DET_ALLGATHERV: *ss = 0; *rs = i; break;
  case DET_ALLTOALL: case DET_ALLTOALLV: *ss = j; *rs = i; break;
  default: break;
  }
}
