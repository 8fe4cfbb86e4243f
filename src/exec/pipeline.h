/* cdag — src/exec/pipeline.h: the compiler pipeline, driven from one place (no MPI).
 *
 * finalize (program order, dependencies) -> match -> dataflow (SST, wait sets) -> detect
 * (collectives, the plan) -> choose (each collective's algorithm, src/choose) -> price (the
 * plan against the graph as written, src/model/price.c). Every caller
 * that turns a graph into a plan comes here: cdag_analyze, cdag_compile's compiling rank
 * (exec/mpi), and the `cdag` tool's analyze, goal, model and dot. The options' entry points
 * live here too (cdag_options_init, their validation), driven by the options table of
 * base/settings.h. No stage below calls up to it.
 *
 * The subdirectories of src/exec, each with its contract header:
 *   mpi/      distributed graphs, gather/compile/scatter, the schedule part, the runtime
 *             (schedule.h, graph_mpi.h; calls MPI)
 *   kernels/  cdag's collective kernels over point-to-point (kernel.h; calls MPI), following
 *             the schedules of src/circulant
 *   sim/      the in-process simulator and verify (sim.h; no MPI)
 * The layers below and beside them are in docs/layout.md. */
#ifndef CDAG_EXEC_PIPELINE_H
#define CDAG_EXEC_PIPELINE_H

#include "detect/detect.h"
#include "choose/choose.h"
#include "match/match.h"
#include "model/lower.h"
#include "exec/machine.h"

/* Reports (report.c, the one writer of report text and JSON; cdag_plan_report is the
   analysed plan's): a graph run as written without analysis, `why` in words (detect = 0,
   user ops), and the test hook's hand-made plan. */
int det_report_as_written(const cdag_graph *g, const char *why, FILE *f, int json);
int det_report_hand_made(const cdag_plan *p, FILE *f, int json);

/* cdag__options_check (base/settings.h: the options table) with the rank in the message
   (rank < 0: none): CDAG_OK, or CDAG_ERR_ARG naming the field and its value. nprocs bounds root. */
int pipeline_check_options(const cdag_options *o, int nprocs, int rank);

/* The kernel policy and cost model a compile with options o (as cdag__options_take made
   them) uses: o's field where it differs from its default, else its CDAG_* variable when set
   (base/settings.h), else base (NULL: the machine file, src/exec/machine.h, else the built-in
   model) and KERN_POLICY_AUTO. The LogGOPS parameters are the machine's unless alpha, beta,
   overhead or gamma is set by o or a variable: then kern_model_loggp of the model (the
   machine's O and S kept) and the source is "options". CDAG_OK, or CDAG_ERR_ARG naming a
   bad variable or a bad machine file. pipeline_tuning_on takes the settings as s holds them
   and the machine as it is (exec/mpi reads the file once per process), so it reads nothing. */
typedef struct {
  kern_model model;
  kern_policy policy;
  int measure;        /* CDAG_MEASURE, else o->measure */
  int price;          /* CDAG_PRICE, else o->price: weigh the plan against the graph as written */
  loggp_params lp;    /* the LogGOPS parameters plans are priced with */
  char source[KERN_SOURCE_LEN];   /* where lp came from (machine.h's, or "options") */
} pipeline_tune;
int pipeline_tuning(const cdag_options *o, const kern_model *base, pipeline_tune *t);
void pipeline_tuning_on(const cdag_options *o, const cdag_settings *s, const machine_params *m, pipeline_tune *t);
/* pipeline_tuning of the default options with model m (NULL: built in), then policy. */
pipeline_tune pipeline_tune_of(const kern_model *m, kern_policy policy);

/* The plan as it would run: cdag_analyze, the algorithm of every collective (kern_choose_plan
   with t's model and policy), then the price (src/model/price.c: unless t->price or o's price
   is 0, the plan is weighed against the graph as written under t->lp and may be set to run
   the graph as written). *p is NULL on error. */
int pipeline_plan(cdag_graph *g, const cdag_options *o, const pipeline_tune *t, cdag_plan **p);

/* pipeline_plan of finalized g from mr, its match_run, which it frees: for a caller that
   needed the match itself (cdag model runs the graph's LogGP model on it first), so that
   matching is not done twice. */
int pipeline_plan_matched(cdag_graph *g, match_result *mr, const cdag_options *o, const pipeline_tune *t,
                          cdag_plan **p);

/* Marks as cuts every local reduce of finalized g that mixes reductions (or leaves part of a
   reduced element), stage by stage until no stage has one: the stages cdag_analyze plans,
   for a reader of their SSTs alone (cdag sst). O(rounds * the dataflow's cost); a round per
   stage that finds new cuts. */
int pipeline_mark_mixed(cdag_graph *g);

#endif
