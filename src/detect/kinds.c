/* cdag — src/detect/kinds.c: names of the collective kinds, as the report spells them. */
#include "detect/detect.h"

const char *det_kind_name(det_kind k) {
  static const char *const names[DET_NKINDS] = {
      "bcast",  "scatter", "gather",         "allgather",      "alltoall",
      "scatterv", "gatherv", "allgatherv",   "alltoallv",      "reduce",
      "allreduce", "reduce_scatter", "reduce_scatter_block", "barrier"};
  return k >= 0 && k < DET_NKINDS ? names[k] : "unknown";
}
