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
  int64_t max_blocks;  /* 0: up to IR_LOAD_MAX_BLOCKS; else at most this many: the blocks
                          of a computation's, of a copy's at listed steps or strides of both
                          signs (one op, or an op per block when they meet; docs/format.md),
                          all lines together (the fuzzers bound memory and time with it) */
} ir_load_opts;
/* The default bound of max_blocks: 2^26 blocks, some 10 GB of analysis (the dependency walk
   and the SST see each); a message of the recorder has at most 2^22 byte ranges. */
#define IR_LOAD_MAX_BLOCKS (1ll << 26)

/* Loads path ("-" = standard input); o may be NULL (defaults). On success *g is a finalized
   global graph; on error *g is NULL and the message names file, line and column. */
int ir_load_file(const char *path, const ir_load_opts *o, cdag_graph **g);
/* The same from memory: buf need not be NUL-terminated; name is used in messages. */
int ir_load_mem(const char *buf, size_t len, const char *name, const ir_load_opts *o, cdag_graph **g);
/* Writes g in the text format (program order if g is finalized, else the order of ids).
   Errors: CDAG_ERR_IO if the stream fails, CDAG_ERR_NOMEM. */
int ir_save_file(const cdag_graph *g, FILE *f);

/* One operation line of a rank block: the one writer of op lines, which ir_save_file, the
   recorder's part files (src/record/pmpi.c) and its merger (merge.c) all use. Fields as
   ir.h encodes an op; kinds beyond ir_kind: */
enum { IR_LINE_COLL = 100, IR_LINE_WAIT };
typedef struct {
  int kind;                  /* IR_SEND .. IR_CALC, IR_GET, IR_PUT, IR_FENCE, IR_ACC, IR_LINE_COLL, IR_LINE_WAIT */
  uint64_t bytes;            /* reduce: count * type size; calc: its cost */
  int32_t peer, tag;         /* reduce: cdag_type, cdag_reduce_op; IR_ACC: cdag_type << 8 | op, target */
  uint64_t addr, addr2;
  uint64_t rlen, wlen;       /* a computation (IR_CALC): bytes read at addr2 (IR_READS_ALL: all),
                                written at addr; both 0: a plain calc */
  uint64_t blocks;           /* a strided copy: its blocks of bytes / blocks each (0 or 1: one) */
  uint64_t from_stride, to_stride;   /* ... and their strides (ir_stride; a line may carry a negative
                                        one, two's complement: the recorder's blocks that run
                                        backwards, which the loader turns forwards or apart);
                                        a computation (IR_CALC): to_stride, of its blocks; a
                                        get, put or accumulate: to_stride, of its target's
                                        blocks (its local side is contiguous) */
  const uint64_t *from_at, *to_at;   /* blocks at no one stride: the address of each (`blocks` of
                                        them; written as the steps between them), NULL: strided */
  int32_t seg;               /* get/put not expanded yet: the segment (addr2 an offset), -1 none */
  int32_t cpu, nic;          /* GOAL's, -1 none */
  int wait;                  /* `wait`: every later op of the rank depends on this one */
  int32_t comm;              /* send/recv of a recorder's part file: its communicator, -1 none */
  const ir_call *call;       /* IR_LINE_COLL: the call */
  int32_t rank;              /* IR_LINE_COLL: the rank writing it (the root alone writes some buffers) */
  const uint64_t *lists;     /* IR_LINE_COLL of a vector kind: its lists (ir_add_collv), members values each */
  int32_t members;
  const char *const *waits;  /* IR_LINE_WAIT: the labels waited for */
  int64_t nwaits;
} ir_line;
/* The line, with `label: ` first when label is not NULL, no indentation, no newline, into
   buf (NUL-terminated, cut at cap); returns the length it needs, as snprintf does. */
size_t ir_format_line(char *buf, size_t cap, const char *label, const ir_line *l);
/* The same, with a newline, to f. CDAG_OK or CDAG_ERR_NOMEM. */
int ir_write_line(FILE *f, const char *label, const ir_line *l);
/* Compact labels for large files (recordings): 'o' and n in base 62. */
#define IR_COMPACT_LABEL 9
const char *ir_compact_label(uint32_t n, char buf[IR_COMPACT_LABEL]);

/* Writes s as a JSON string (quotes, backslashes and control bytes escaped): the reports,
   the tools' JSON and recordings' index.json share it. */
void ir_json_string(FILE *f, const char *s);

/* ---- folded.c: the tokens of a line that may vary, and ranks stored once ---- */

/* What varies between repeats of a line of a recording's phase file (its merger compares
   lines by the rest): a token that is an address (0x...),
   a size (`512b`) or, `number`, a plain number (a computation's cost, a message's tag;
   number 1: of two digits at least, as indexes of version 1 read), and prints back as it
   was; its value. */
int ir_variable_token(const char *p, const char *e, int number, uint64_t *v);
/* Whether the word at q of a line [.., e) whose words start at w (after its label) is such a
   number (ir_variable_token's `number`, 0 not): the cost right after `compute`, or, with
   `tags`, the word after `tag` (pw, pl: the word before q). Indexes of version 1 kept tags
   fixed and single digits too. */
int ir_number_word(const char *w, const char *e, const char *q, const char *pw, size_t pl, int tags);
/* Where a line's words start, after its label if it has one. */
const char *ir_line_words(const char *p, const char *e);
/* Ranks stored once (folded.c, docs/format.md): the text of a graph file with each rank block
   that repeats an earlier one's, but for peers at the same distance and variable tokens, as
   one `rank R like M ...` line; *out is the caller's to free. The loader reads such files. */
int ir_ranks_fold(const char *text, size_t len, char **out, size_t *outlen);
/* The text of a folded phase file unfolded, byte for byte what was folded; *out NULL when
   the text has no folded rank (use it as it is). Errors name the line. */
int ir_ranks_unfold(const char *text, size_t len, char **out, size_t *outlen);
/* The most text a folded file may unfold to (CDAG_ERR_FORMAT beyond): 1024 times its size
   and 64 MiB more, at most IR_UNFOLD_MAX. */
#define IR_UNFOLD_MAX ((size_t)1 << 34)

#endif
