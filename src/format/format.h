/* cdag — src/format/format.h: graph files (docs/format.md), the text format that is a superset of GOAL.
 *
 * The reader (format_read.c) reads a whole file into memory and parses it with a hand-written
 * tokenizer in one pass, O(bytes + ops): no per-token allocation, labels in a hash table
 * emptied per rank block. It fills a global graph with the ir_add_* calls (every op gets its
 * line, its label, its GOAL cpu/nic), then calls ir_finalize(). Every error is CDAG_ERR_FORMAT (or
 * CDAG_ERR_IO, CDAG_ERR_UNSUPPORTED for wildcards, CDAG_ERR_CYCLE for cyclic `requires`) with
 * a message "FILE:LINE:COL: expected X, found 'Y'". No input makes it crash, hang or leak.
 * The writer (format_write.c) writes a graph back so that loading it gives the same graph:
 * the same ops per rank in the same order with the same fields, the same explicit
 * dependencies and scratch regions. */
#ifndef CDAG_FORMAT_FORMAT_H
#define CDAG_FORMAT_FORMAT_H

#include <stddef.h>
#include <stdio.h>

#include "ir/ir.h"

/* Buffers of GOAL sends and receives written without `addr` (docs/format.md):
   FOLLOW (the default): data follows the dependencies: each receive gets a region of its
     own; a send that requires a receive (directly or through other ops) forwards what the
     latest such receive got, other sends send the rank's own bytes (one region per rank,
     read by all of them). Adds no ordering beyond the file's requires.
   SHARED: every such op uses address 0 (finds forwarding trees; orders every op that
     writes after every op that reads).
   FRESH: every such op gets a region of its own (personalised patterns: alltoall, gather). */
enum { IR_GOAL_FOLLOW = 0, IR_GOAL_SHARED = 1, IR_GOAL_FRESH = 2 };
typedef struct {
  int goal_buffers;    /* IR_GOAL_*, `--goal-buffers=follow|shared|fresh` */
  int max_ranks;       /* 0: up to IR_MAX_RANKS; else a larger num_ranks is an error (the
                          fuzzers bound memory with it: finalize allocates per rank) */
} ir_load_opts;

/* Loads path ("-" = standard input); o may be NULL (defaults). On success *g is a finalized
   global graph; on error *g is NULL and the message names file, line and column. */
int ir_load_file(const char *path, const ir_load_opts *o, cdag_graph **g);
/* The same from memory: buf need not be NUL-terminated; name is used in messages. */
int ir_load_mem(const char *buf, size_t len, const char *name, const ir_load_opts *o, cdag_graph **g);
/* Writes g in the text format (program order if g is finalized, else the order of ids).
   Errors: CDAG_ERR_IO if the stream fails, CDAG_ERR_NOMEM. */
int ir_save_file(const cdag_graph *g, FILE *f);

/* Writes s as a JSON string (quotes, backslashes and control bytes escaped): the reports,
   the tools' JSON and recordings' index.json share it. */
void ir_json_string(FILE *f, const char *s);

#endif
