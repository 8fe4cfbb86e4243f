/* cdag — tools/load.c: loading graph files for the subcommands. */
#include "cmd.h"

int cmd_load(const char *cmd, const char *path, int fresh_buffers, cdag_graph **g) {
  (void)fresh_buffers; /* the loader option arrives with the file format */
  int rc = cdag_graph_load(path, g);
  if (rc) return cmd_fail(cmd, rc);
  return 0;
}
