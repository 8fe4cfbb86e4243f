/* cdag — src/ir/format_stub.c: graph files, not built yet (CDAG_ERR_UNSUPPORTED).
 * This file disappears when src/ir/format_read.c and format_write.c land. */
#include "ir/ir.h"

int cdag_graph_load(const char *path, cdag_graph **g) {
  if (g) *g = NULL;
  return cdag__error(CDAG_ERR_UNSUPPORTED, "cdag_graph_load: graph files are not built yet");
}
int cdag_graph_save(const cdag_graph *g, const char *path) {
  return cdag__error(CDAG_ERR_UNSUPPORTED, "cdag_graph_save: graph files are not built yet");
}
