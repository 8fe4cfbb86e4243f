/* cdag — src/exec/verify_stub.c: plan verification, not built yet (CDAG_ERR_UNSUPPORTED).
 * This file disappears when src/exec/verify.c lands. */
#include "exec/exec.h"

int cdag_plan_verify(const cdag_graph *g, const cdag_plan *p) {
  return cdag__error(CDAG_ERR_UNSUPPORTED, "cdag_plan_verify: the simulator is not built yet");
}
