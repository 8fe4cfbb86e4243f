/* cdag — src/base/settings.h: the options table and the CDAG_* environment variables, read and
 * validated in one place.
 *
 * The options table (CDAG_OPTIONS below) has one row per field of cdag_options (include/cdag.h)
 * and is the only list of them: cdag_options_init's defaults, the one validation of a
 * cdag_options (one message per option, naming it and the bad value), the variable that
 * sets a field, the `cdag` tool's flag (tools/cdag.c), the fields ranks must agree on
 * (exec/mpi/compile.c) and the checks that module cdag's Fortran type mirrors the struct
 * (tests/base/test_settings.c reads cdag.h and fortran/cdag.f90: names, order, kinds;
 * tests/exec/mpi/mpi_fortran.f90 compares the compiled layouts through fortran/cdag_f.c)
 * all come from it.
 *
 * Every variable cdag reads is here, with its meaning; nothing else reads the environment. The entry
 * points (cdag_compile on every rank, the `cdag` tool before any command) call
 * cdag__settings_read, so a bad value is an error naming the variable and the value, never
 * ignored. Where a variable and a cdag_options field say the same thing, an explicit field
 * wins: a field that differs from its default was set by the program, and the variable
 * applies only to fields left at their defaults (cdag__options_env). Unset or empty means
 * "not set".
 *   CDAG_DETECT   0 | 1         0 runs graphs as written (options.detect = 0)
 *   CDAG_REPORT   stderr | FILE the compiling rank writes each new schedule's report there
 *                               (a name ending in .json gets JSON)
 *   CDAG_KERNEL   mpi|cdag|auto which side runs the collectives cdag has kernels for
 *   CDAG_MEASURE  0 | 1         1 measures the cost model at the first compile
 *   CDAG_ALPHA    seconds > 0   the cost model's latency per message
 *   CDAG_BETA     seconds > 0   the cost model's time per byte
 *   CDAG_OVERHEAD seconds > 0   the cost model's time per further message to the same peer
 *   CDAG_GAMMA    seconds > 0   the cost model's time per byte copied in memory (packing)
 *   CDAG_BLOCKS   integer >= 1  forces the block count of cdag's n-block kernels
 *   CDAG_REPLAY_CORRUPT rank    a test hook read by `cdag replay` only: that rank flips a bit
 *                               of its memory after the compiled run, so the comparison with
 *                               the run as written must report a mismatch (tests/exec/mpi/replay.sh)
 *   CDAG_RECORD_DIR    DIR     where libcdag-record writes each process's part (set by
 *                               `cdag record`; default ./cdag-recording)
 *   CDAG_RECORD_MEMORY MiB      bytes of content per process the recorder's shadow keeps to
 *                               prove local reductions (default 512; beyond it, hashes only)
 *   CDAG_RECORD_MIN_GAP us      the least time between two MPI calls the recorder writes as a
 *                               computation of its own when it saw nothing written (default
 *                               10): time a process waited for a CPU counts too, so on an
 *                               oversubscribed or loaded node raise it above the waits
 *   CDAG_RECORD_LIB    FILE     the libcdag-record.so `cdag record` preloads, if not the
 *                               one installed beside it
 *   CDAG_MACHINE  FILE | none   the machine file (`cdag calibrate` writes it; src/exec/machine.h):
 *                               the LogGOPS parameters plans are priced with; unset: the
 *                               default path under XDG_CONFIG_HOME (else HOME/.config), used
 *                               when it exists; none: the built-in parameters
 * Two variables that are not cdag's give that default path, XDG_CONFIG_HOME and HOME: only
 * cdag__settings_home reads them, when a machine file is looked for (once per process in
 * cdag_compile), not at every compile.
 * Reading is cheap (one walk of the environment for its CDAG_ entries) and keeps no state, so
 * it is reentrant. */
#ifndef CDAG_BASE_SETTINGS_H
#define CDAG_BASE_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#include "cdag.h"

/* What values a field takes (lo and hi are the table's):
     FLAG   int, 0 or 1 (a bare --flag on the command line means 1)
     INT    int in [lo, hi]
     RANK   int, a rank of the communicator (0 .. nprocs - 1)
     INT0   int, 0 (not set: the model decides) or [lo, hi]; its variable takes [lo, hi]
     FRAC   double in (lo, hi]
     SEC    double, 0 (not set) or seconds in (lo, hi]; its variable takes (lo, hi]
     KERNEL cdag_kernel_policy, by name auto, mpi or cdag */
typedef enum { CDAG_OPT_FLAG, CDAG_OPT_INT, CDAG_OPT_RANK, CDAG_OPT_INT0, CDAG_OPT_FRAC, CDAG_OPT_SEC,
               CDAG_OPT_KERNEL } cdag_opt_kind;

/* The options table, in the struct's order (struct_size, the first field, is not an option).
   X(field, kind, default, lo, hi, variable or NULL, `cdag` flag or NULL)
   A new field goes at the end of cdag_options and of this table (cdag.h: the struct grows
   only at its end, so older programs keep working). */
#define CDAG_OPTIONS(X)                                                              \
  X(detect,      CDAG_OPT_FLAG,   1,   0, 1,          "CDAG_DETECT",   "detect")      \
  X(density,     CDAG_OPT_FRAC,   1.0, 0, 1,          NULL,            "density")     \
  X(exact_float, CDAG_OPT_FLAG,   0,   0, 1,          NULL,            "exact-float") \
  X(root,        CDAG_OPT_RANK,   0,   0, 2147483647, NULL,            NULL)          \
  X(min_group,   CDAG_OPT_INT,    4,   1, 2147483647, NULL,            "min-group")   \
  X(kernel,      CDAG_OPT_KERNEL, 0,   0, 2,          "CDAG_KERNEL",   "kernel")      \
  X(alpha,       CDAG_OPT_SEC,    0,   0, 1000,       "CDAG_ALPHA",    "alpha")       \
  X(beta,        CDAG_OPT_SEC,    0,   0, 1000,       "CDAG_BETA",     "beta")        \
  X(blocks,      CDAG_OPT_INT0,   0,   1, 1073741824, "CDAG_BLOCKS",   "blocks")      \
  X(measure,     CDAG_OPT_FLAG,   0,   0, 1,          "CDAG_MEASURE",  NULL)          \
  X(overhead,    CDAG_OPT_SEC,    0,   0, 1000,       "CDAG_OVERHEAD", "overhead")    \
  X(gamma,       CDAG_OPT_SEC,    0,   0, 1000,       "CDAG_GAMMA",    "gamma")       \
  X(price,       CDAG_OPT_FLAG,   1,   0, 1,          "CDAG_PRICE",    "price")

#define CDAG_OPT_ID_(field, kind, def, lo, hi, var, flag) CDAG_OPT_##field,
enum { CDAG_OPTIONS(CDAG_OPT_ID_) CDAG_NOPTS };
#undef CDAG_OPT_ID_

/* One row of the table, with where the field lives in cdag_options. */
typedef struct {
  const char *field;       /* the C name, as messages say it: options.<field> */
  cdag_opt_kind kind;
  double def, lo, hi;
  const char *var;         /* CDAG_* variable, or NULL */
  const char *flag;        /* the `cdag` tool's --<flag>=VALUE, or NULL */
  size_t offset, size;     /* offsetof and sizeof in cdag_options */
} cdag_opt_row;
extern const cdag_opt_row cdag__opt_rows[CDAG_NOPTS];

/* The bytes of cdag_options up to and including its last field in this version: a program's
   struct_size at most this (sizeof may add tail padding). */
size_t cdag__options_known_size(void);

/* Field `id` of o as a double (ints are exact), and setting it. */
double cdag__opt_get(const cdag_options *o, int id);
void cdag__opt_set(cdag_options *o, int id, double v);

/* Every field at its default, struct_size = sizeof *o. */
void cdag__options_defaults(cdag_options *o);

/* The caller's options as this library reads them: defaults, then every field of *in that
   fits in in->struct_size (NULL, or a zeroed struct: all defaults). CDAG_ERR_ARG naming
   struct_size when it is 0 with other fields set, smaller than struct_size itself, or larger
   than this library's struct with nonzero bytes beyond it (a newer program's fields); who
   prefixes the message ("rank 3: ", or NULL). */
int cdag__options_take(const cdag_options *in, cdag_options *out, const char *who);

/* CDAG_OK, or CDAG_ERR_ARG naming the first bad field and its value ("options.min_group 0:
   expected ..."), prefixed with who ("rank 3: ", or ""). nprocs bounds the root (< 1: no
   bound). */
int cdag__options_check(const cdag_options *o, int nprocs, const char *who);

/* What field id takes, in words (env: as its variable takes it; nprocs bounds a rank, < 1: none). */
void cdag__opt_describe(int id, int env, int nprocs, char *buf, size_t len);

/* Parses text as field id's value into *o (env: as its variable, with the variable's range;
   else as a flag of the `cdag` tool). CDAG_ERR_ARG naming label=text and what was expected. */
int cdag__opt_parse(int id, const char *text, int env, const char *label, cdag_options *o);

typedef struct {
  cdag_options opt;        /* the option variables' values where set (others: defaults) */
  uint32_t opt_set;        /* bit (1u << CDAG_OPT_<field>): its variable is set */
  const char *report;      /* NULL unset; points into the environment */
  int replay_corrupt;      /* -1 unset, else a rank in 0..2^30-1 (cdag replay's test hook) */
  const char *record_dir;  /* NULL unset (the recorder's own default) */
  const char *record_lib;  /* NULL unset */
  int record_memory;       /* -1 unset, else MiB */
  int record_min_gap;      /* -1 unset, else microseconds */
  const char *machine;     /* CDAG_MACHINE: NULL unset */
  const char *config_home; /* XDG_CONFIG_HOME: NULL unset, or not read (cdag__settings_home) */
  const char *home;        /* HOME: NULL unset, or not read */
} cdag_settings;

/* Reads and validates every variable: CDAG_OK, or CDAG_ERR_ARG naming the first bad one.
   On error *s still holds the defaults and the good values. */
int cdag__settings_read(cdag_settings *s);

/* The CDAG_* entries of the environment, in its order, each with its '\0', into buf: their
   length in bytes, or -1 when they take more than cap bytes (or there are more than 64).
   What cdag__settings_read reads: equal texts read the same settings. */
long cdag__settings_env_text(char *buf, size_t cap);

/* XDG_CONFIG_HOME and HOME into s (the machine file's default path). */
void cdag__settings_home(cdag_settings *s);

/* The variables of s over the fields of o that hold their defaults (explicit fields win). */
void cdag__options_env(cdag_options *o, const cdag_settings *s);

#endif
