/* cdag — tools/cmd_analyze.c: `cdag analyze FILE [--json]`: the report of docs/format.md;
 * `cdag analyze DIR`: a recording as the sequence of its phases.
 *
 * Loads the graph, runs the whole pipeline (exec/pipeline.h: analysis, then the algorithm
 * each collective would run, as the executor chooses: CDAG_KERNEL=mpi|cdag|auto, the default
 * model with CDAG_ALPHA/CDAG_BETA) and prints the report: which collectives were found, how
 * each would run and why, what remained and why notable patterns were not rewritten.
 * For a directory `cdag record` wrote, each distinct phase is analysed once and stands for
 * all its repeats: the run's sequence (phase k x repeats), then per distinct phase its
 * repeats, its share of the run's time (the model's time of the graph as written, times its
 * repeats, over the run's) and of the recorded computation, and its report. */
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "choose/choose.h"
#include "cmd.h"
#include "detect/detect.h"
#include "exec/pipeline.h"
#include "record/record.h"

/* One graph's plan; *written_us its modelled time as written (< 0 when not priced). */
static int analyze_file(const char *path, const cdag_options *o, const pipeline_tune *t, int buffers, int json,
                        double *written_us) {
  cdag_graph *g = NULL;
  cdag_plan *p = NULL;
  if (cmd_load("analyze", path, buffers, &g)) return 1;
  int rc = pipeline_plan(g, o, t, &p);
  if (rc == CDAG_OK && written_us)
    *written_us = p->chosen && p->chosen->price->priced ? p->chosen->price->written_us : -1;
  if (rc == CDAG_OK) rc = cdag_plan_report(p, stdout, json);
  int status = rc ? cmd_fail("analyze", rc) : 0;
  cdag_plan_free(&p);
  cdag_graph_free(&g);
  return status;
}

/* The recording in dir, phase by distinct phase. */
static int analyze_dir(const char *dir, const cdag_options *o, const pipeline_tune *t, int buffers) {
  rec_index ix;
  int rc = rec_index_read(dir, &ix);
  if (rc) return cmd_fail("analyze", rc);
  int64_t *rep = calloc((size_t)ix.nphases + 1, sizeof *rep), flat = 0;
  double *us = calloc((size_t)ix.nphases + 1, sizeof *us), total_us = 0, total_ns = 0;
  if (!rep || !us) {
    free(rep), free(us), rec_index_free(&ix);
    return cmd_fail("analyze", CDAG_NOMEM("phases"));
  }
  for (int64_t i = 0; i < ix.nruns; i++) rep[ix.phase[i]] += ix.repeats[i], flat += ix.repeats[i];
  printf("recording %s: %" PRId64 " phases, %" PRId64 " distinct; the run as phase x repeats:", dir, flat, ix.nphases);
  for (int64_t i = 0; i < ix.nruns; i++) printf(" %" PRId64 "x%" PRId64, ix.phase[i], ix.repeats[i]);
  printf("\n");
  int status = 0;
  for (int64_t k = 0; k < ix.nphases && !status; k++) {   /* each analysed once, the reports kept for the shares */
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, ix.files[k]);
    printf("\n== phase %" PRId64 " (%s), %" PRId64 " repeat%s ==\n", k, ix.files[k], rep[k], rep[k] == 1 ? "" : "s");
    fflush(stdout);
    status = analyze_file(path, o, t, buffers, 0, &us[k]);
    if (us[k] >= 0 && total_us >= 0) total_us += us[k] * (double)rep[k];
    else total_us = -1;
    total_ns += (double)ix.ns[k];
  }
  if (!status) {
    printf("\nthe run: %" PRId64 " phases, %" PRId64 " distinct (each analysed once)\n", flat, ix.nphases);
    for (int64_t k = 0; k < ix.nphases; k++) {
      printf("  phase %" PRId64 " x %" PRId64 ":", k, rep[k]);
      if (total_us > 0) printf(" %.3f us as written each, %.1f %% of the run's modelled time;", us[k], 100.0 * us[k] * (double)rep[k] / total_us);
      else printf(" not priced;");
      printf(" %.3f ms recorded computation in all (%.1f %%)\n", (double)ix.ns[k] / 1e6, total_ns > 0 ? 100.0 * (double)ix.ns[k] / total_ns : 0.0);
    }
  }
  free(rep), free(us);
  rec_index_free(&ix);
  return status;
}

int cmd_analyze(int argc, char **argv) {
  cdag_options o;
  int buffers = cmd_goal_buffers(&argc, argv), json = cmd_has_flag(&argc, argv, "--json");
  if (buffers < 0 || cmd_options(&argc, argv, &o) || argc != 1) return cmd_usage("analyze");
  pipeline_tune t;
  if (pipeline_tuning(&o, NULL, &t)) return cmd_fail("analyze", CDAG_ERR_ARG);
  struct stat st;
  if (!stat(argv[0], &st) && S_ISDIR(st.st_mode)) {
    if (json) return cmd_usage("analyze");   /* one report per phase: text only */
    return analyze_dir(argv[0], &o, &t, buffers);
  }
  return analyze_file(argv[0], &o, &t, buffers, json, NULL);
}
