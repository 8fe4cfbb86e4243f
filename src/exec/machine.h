/* cdag — src/exec/machine.h: the machine's parameters, from a machine file or built in (no MPI).
 *
 * `cdag calibrate` (tools/cmd_calibrate.c) measures the LogGOPS parameters of the MPI it runs
 * on and writes them to a machine file; cdag_compile (once per process, exec/mpi) and the
 * `cdag` tool read it here, and pipeline_tuning prices plans with it. The file (docs/format.md,
 * "Machine files") is text: a first line `cdag-machine 1`, then one parameter a line, a name
 * and a number (`L 0.35`), names L, o, g, G, O, S, copy, rcopy, queue (us, us/B, bytes as in
 * loggp_params); L, o, g, G and copy are required, O (default 0), S (default 65535), rcopy
 * and queue (default 0) optional, none twice. Then up to LOGGP_TAB_MAX lines `size BYTES PAIR
 * ROUND`, sizes rising: the table of costs by size (loggp_params).
 * `#` starts a comment (the writer puts the MPI library's version and the date there); blank
 * lines are skipped. Which file: CDAG_MACHINE (none: no file), else
 * ${XDG_CONFIG_HOME:-$HOME/.config}/cdag/machine when it exists. A file CDAG_MACHINE names must
 * exist; a bad line is CDAG_ERR_ARG naming the file and the line. */
#ifndef CDAG_EXEC_MACHINE_H
#define CDAG_EXEC_MACHINE_H

#include <stdio.h>

#include "base/settings.h"
#include "choose/choose.h"

typedef enum { MACHINE_BUILTIN, MACHINE_MEASURED, MACHINE_FILE } machine_kind;

/* The machine a compile is tuned for before options and variables: the LogGOPS parameters
   and the alpha-beta model, each derived from the other, and where they came from. */
typedef struct {
  machine_kind kind;
  loggp_params lp;                /* the prices' parameters */
  kern_model model;               /* the choice of algorithms' (alpha = L + 2o, beta = G,
                                     overhead = max(o, g), gamma = copy) */
  char source[KERN_SOURCE_LEN];   /* "built in", "measured", "machine file PATH" */
} machine_params;

/* The built-in machine (LogGOPSim's default parameters, loggp_defaults, as `cdag model` has
   them; the alpha-beta model's built-in values for the choice of algorithm) and the measured
   one m (its LogGOPS parameters kern_model_loggp's). */
machine_params machine_builtin(void);
machine_params machine_measured(const kern_model *m);
/* The alpha-beta model of LogGOPS parameters (in seconds, as kern_model holds them). */
kern_model machine_model_of(const loggp_params *lp);

/* The machine file s names into path[len]: CDAG_MACHINE (*named = 1), else the default path
   (*named = 0; s's config_home and home, cdag__settings_home); "" when CDAG_MACHINE=none or
   no HOME to put the default under. CDAG_OK, or CDAG_ERR_ARG when the path does not fit. */
int machine_path(const cdag_settings *s, char *path, size_t len, int *named);

/* The parameters of the file at path (named: it must exist; else an absent file means the
   built-in parameters; "": built in). CDAG_OK, CDAG_ERR_NOMEM, or CDAG_ERR_ARG naming the
   file (and the line) when it cannot be read or a line is bad. */
int machine_load(const char *path, int named, machine_params *m);
/* machine_path (the default path's variables read now) and machine_load for s. */
int machine_find(const cdag_settings *s, machine_params *m);

/* Reads a machine file's text from f (path names it in messages) into *lp. */
int machine_read(FILE *f, const char *path, loggp_params *lp);
/* Writes lp as a machine file to f, after `comment`'s lines (each becomes a `# ` line;
   NULL: none). CDAG_OK, or CDAG_ERR_ARG when the write fails. */
int machine_write(FILE *f, const loggp_params *lp, const char *comment);

#endif
