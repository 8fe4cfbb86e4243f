/* cdag — src/base/settings.h: the CDAG_* environment variables, read and validated in one place.
 *
 * Every variable cdag reads is here, with its meaning; nothing else calls getenv. The entry
 * points (cdag_compile on every rank, the `cdag` tool before any command) call
 * cdag__settings_read, so a bad value is an error naming the variable and the value, never
 * ignored. Where a variable and a cdag_options field say the same thing, the variable wins:
 * it is how a user changes a program that is already built (pipeline.h applies that rule:
 * pipeline_tuning). Unset or empty means "not set".
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
 *   CDAG_RECORD_LIB    FILE     the libcdag-record.so `cdag record` preloads, if not the
 *                               one installed beside it
 * Reading is cheap (a few getenv calls) and keeps no state, so it is reentrant. */
#ifndef CDAG_BASE_SETTINGS_H
#define CDAG_BASE_SETTINGS_H

typedef enum { CDAG_SET_UNSET = -1, CDAG_SET_KERNEL_AUTO = 0, CDAG_SET_KERNEL_MPI, CDAG_SET_KERNEL_CDAG } cdag_set_kernel;

typedef struct {
  int detect;              /* -1 unset, else 0 or 1 */
  const char *report;      /* NULL unset; points into the environment */
  cdag_set_kernel kernel;  /* CDAG_SET_UNSET, or the value (auto included) */
  int measure;             /* -1 unset, else 0 or 1 */
  double alpha, beta;      /* 0 unset, else > 0 */
  double overhead, gamma;  /* 0 unset, else > 0 */
  int blocks;              /* 0 unset, else >= 1 */
  int replay_corrupt;      /* -1 unset, else a rank in 0..2^30-1 (cdag replay's test hook) */
  const char *record_dir;  /* NULL unset (the recorder's own default) */
  const char *record_lib;  /* NULL unset */
  int record_memory;       /* -1 unset, else MiB */
} cdag_settings;

/* Reads and validates every variable: CDAG_OK, or CDAG_ERR_ARG naming the first bad one.
   On error *s still holds the defaults and the good values. */
int cdag__settings_read(cdag_settings *s);

#endif
