/* cdag — tools/format_load.c: loading graph files for the subcommands.
 *
 * cmd_load() reads a graph file (or - for standard input) with the ir loader, giving GOAL
 * ops without `addr` the buffers --goal-buffers= asks for (format.h), and prints the
 * loader's located message ("FILE:LINE:COL: expected X, found 'Y'") on failure; cmd_load_rc
 * leaves the printing to its caller (replay prints once for all its processes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "format/format.h"

int cmd_load_rc(const char *path, int goal_buffers, cdag_graph **g) {
  struct stat st;
  *g = NULL;
  if (strcmp(path, "-") && stat(path, &st) == 0 && S_ISDIR(st.st_mode))   /* a recording: say which file to give */
    return cdag__error(CDAG_ERR_ARG, "%s is a directory: give one of its graph files (a recording's are %s/phase-NNNN.cdag; "
                       "`cdag analyze %s` reads them all)", path, path, path);
  ir_load_opts o = {0};
  o.goal_buffers = goal_buffers;
  cdag__error_clear();
  return ir_load_file(path, &o, g);   /* a folded phase file of a recording is read unfolded */
}

int cmd_load(const char *cmd, const char *path, int goal_buffers, cdag_graph **g) {
  int rc = cmd_load_rc(path, goal_buffers, g);
  if (rc) return cmd_fail(cmd, rc);
  return 0;
}
