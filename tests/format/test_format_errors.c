/* cdag tests — tests/format/test_format_errors.c: every message of the graph-file loader.
 *
 * One test per message: the error code, the "FILE:LINE:COL:" position and the words that
 * say what was expected and what was found. Then every file of tests/data/regress (inputs
 * the fuzzers once crashed on) must load without crashing: an error or a graph. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "format/format.h"

typedef struct {
  const char *text;       /* the file */
  int code;               /* expected error */
  unsigned line, col;     /* expected position (col 0: the message has no column) */
  const char *words[3];   /* must all occur in the message */
} bad_case;

#define HEAD "num_ranks 2\nrank 0 {\n"

static const bad_case cases[] = {
  /* file structure */
  {"", CDAG_ERR_FORMAT, 1, 1, {"expected 'num_ranks'", "end of file"}},
  {"rank 0 {\n}\n", CDAG_ERR_FORMAT, 1, 1, {"expected 'num_ranks N' before the first rank block", "'rank'"}},
  {"num_ranks 0\n", CDAG_ERR_FORMAT, 1, 11, {"expected a number of ranks in 1..1073741824", "found '0'"}},
  {"num_ranks 2\nnum_ranks 3\n", CDAG_ERR_FORMAT, 2, 1, {"duplicate 'num_ranks'", "line 1"}},
  {"num_ranks 2 }\n", CDAG_ERR_FORMAT, 1, 13, {"expected end of line", "found '}'"}},
  {"num_ranks 2\nfoo\n", CDAG_ERR_FORMAT, 2, 1, {"expected 'rank'", "found 'foo'"}},
  {"num_ranks 2\nrank 2 {\n}\n", CDAG_ERR_FORMAT, 2, 6, {"expected a rank in 0..1", "found '2'"}},
  {"num_ranks 2\nrank x {\n}\n", CDAG_ERR_FORMAT, 2, 6, {"expected a rank in 0..1", "found 'x'"}},
  {"num_ranks 2\nrank 1 {\n}\nrank 1 {\n}\n", CDAG_ERR_FORMAT, 4, 6, {"rank 1 has a second block", "line 2"}},
  {"num_ranks 2\nrank 0\n{\n}\n", CDAG_ERR_FORMAT, 2, 7, {"expected '{'", "end of line"}},
  {HEAD "  l1: calc 1\n", CDAG_ERR_FORMAT, 4, 1, {"expected '}' closing rank 0", "opened at line 2", "end of file"}},
  {HEAD "  l1: calc 1\nrank 1 {\n}\n", CDAG_ERR_FORMAT, 4, 1, {"expected '}' closing rank 0 (opened at line 2)", "found 'rank'"}},
  {HEAD "  l1: calc 1 /* never closed\n}\n", CDAG_ERR_FORMAT, 3, 14, {"unterminated comment", "'/*'"}},
  {HEAD "  l1: send 1b to 1 @\n}\n", CDAG_ERR_FORMAT, 3, 20, {"unexpected character", "'@'"}},
  {"num_ranks 2\x01\n", CDAG_ERR_FORMAT, 1, 12, {"unexpected byte 0x01"}},
  /* a byte outside ASCII is named (the message said "end of file") */
  {"num_ranks 2\n\xef\n", CDAG_ERR_FORMAT, 2, 1, {"unexpected byte 0xef", "ASCII"}},
  {"\xef\xbb\xbf\xef\xbb\xbfnum_ranks 2\n", CDAG_ERR_FORMAT, 1, 1, {"unexpected byte 0xef"}},
  {HEAD "  42\n}\n", CDAG_ERR_FORMAT, 3, 3, {"expected an operation, 'scratch', a label or '}'", "found '42'"}},
  {HEAD "  foo\n}\n", CDAG_ERR_FORMAT, 3, 3, {"expected an operation", "found 'foo'"}},
  {HEAD "  l1: sned 1b to 1\n}\n", CDAG_ERR_FORMAT, 3, 7, {"expected an operation (send, recv", "found 'sned'"}},
  {HEAD "  l1: scratch 0 4b\n}\n", CDAG_ERR_FORMAT, 3, 7, {"expected an operation (send", "found 'scratch'"}},
  /* send / recv */
  {HEAD "  l1: send 1b from 1\n}\n", CDAG_ERR_FORMAT, 3, 15, {"expected 'to'", "found 'from'"}},
  {HEAD "  l1: recv 1b to 1\n}\n", CDAG_ERR_FORMAT, 3, 15, {"expected 'from'", "found 'to'"}},
  {HEAD "  l1: send 1b to 2\n}\n", CDAG_ERR_FORMAT, 3, 18, {"expected a destination rank in 0..1", "found '2'"}},
  {HEAD "  l1: send 1b to -1\n}\n", CDAG_ERR_FORMAT, 3, 18, {"expected a destination rank in 0..1", "found '-1'"}},
  {HEAD "  l1: recv 1b from 5\n}\n", CDAG_ERR_FORMAT, 3, 20, {"expected a source rank in 0..1", "found '5'"}},
  {HEAD "  l1: recv 1b from -1\n}\n", CDAG_ERR_UNSUPPORTED, 3, 20, {"wildcard source", "'-1'", "not supported"}},
  {HEAD "  l1: recv 1b from 1 tag -1\n}\n", CDAG_ERR_UNSUPPORTED, 3, 26, {"wildcard tag", "'-1'", "not supported"}},
  {HEAD "  l1: send 1b to 1 tag 2147483648\n}\n", CDAG_ERR_FORMAT, 3, 24, {"expected a tag in 0..2147483647", "'2147483648'"}},
  {HEAD "  l1: send 1b to 1 tog 0\n}\n", CDAG_ERR_FORMAT, 3, 20,
   {"expected 'tag', 'addr', 'cpu', 'nic' or end of line", "found 'tog'"}},
  {HEAD "  l1: send 1b to 1 tag 1 tag 2\n}\n", CDAG_ERR_FORMAT, 3, 26, {"duplicate 'tag'"}},
  {HEAD "  l1: send 1b to 1 tag\n}\n", CDAG_ERR_FORMAT, 3, 23, {"expected a number after 'tag'", "end of line"}},
  {HEAD "  l1: send 1b to 1 addr 0xg\n}\n", CDAG_ERR_FORMAT, 3, 25, {"expected a number after 'addr'", "found '0xg'"}},
  {HEAD "  l1: send 1b to 1 addr -5\n}\n", CDAG_ERR_FORMAT, 3, 25, {"expected an address", "found '-5'"}},
  {HEAD "  l1: send 12x4b to 1\n}\n", CDAG_ERR_FORMAT, 3, 12, {"expected a size in bytes", "found '12x4b'"}},
  {HEAD "  l1: send to 1\n}\n", CDAG_ERR_FORMAT, 3, 12, {"expected a size in bytes", "found 'to'"}},
  {HEAD "  l1: send 9223372036854775808b to 1\n}\n", CDAG_ERR_FORMAT, 3, 12,
   {"number '9223372036854775808b'", "larger than 2^63-1"}},
  {HEAD "  l1: send 1b to 1 addr 0x10000000000000000\n}\n", CDAG_ERR_FORMAT, 3, 25, {"larger than 2^63-1"}},
  {HEAD "  l1: send 1b to 1 cpu 2147483648\n}\n", CDAG_ERR_FORMAT, 3, 24, {"expected a cpu number in 0..2147483647"}},
  {HEAD "  l1: send 1b to 1 nic -2\n}\n", CDAG_ERR_FORMAT, 3, 24, {"expected a nic number in 0..2147483647", "'-2'"}},
  /* accumulate */
  {HEAD "  accumulate 4 int33 sum to 1 at 0 addr 16\n}\n", CDAG_ERR_FORMAT, 3, 16, {"expected a type (int8", "found 'int33'"}},
  {HEAD "  accumulate 4 int32 avg to 1 at 0 addr 16\n}\n", CDAG_ERR_FORMAT, 3, 22, {"expected a reduction (sum", "found 'avg'"}},
  {HEAD "  accumulate 4 float bxor to 1 at 0 addr 16\n}\n", CDAG_ERR_FORMAT, 3, 22,
   {"reduction 'bxor' is not defined for type 'float'"}},
  {HEAD "  accumulate 4 int32 sum from 1 at 0 addr 16\n}\n", CDAG_ERR_FORMAT, 3, 26, {"expected 'to'", "found 'from'"}},
  {HEAD "  accumulate 4 int32 sum to 2 at 0 addr 16\n}\n", CDAG_ERR_FORMAT, 3, 29, {"expected a target rank in 0..1", "found '2'"}},
  {HEAD "  accumulate 4 int32 sum to 1 at 0\n}\n", CDAG_ERR_FORMAT, 3, 35, {"expected 'addr'", "end of line"}},
  {HEAD "  fence tag 1\n}\n", CDAG_ERR_FORMAT, 3, 9, {"expected 'comm' or end of line", "found 'tag'"}},
  {HEAD "  fence comm 0\n}\n", CDAG_ERR_FORMAT, 3, 14, {"expected a communicator in 1..16777216", "found '0'"}},
  {HEAD "  get 1b from 1 at 0 addr 8 comm x\n}\n", CDAG_ERR_FORMAT, 3, 34, {"a number after 'comm'", "found 'x'"}},
  /* reduce, copy, calc, scratch */
  {HEAD "  reduce 4 int33 sum in 0 inout 16\n}\n", CDAG_ERR_FORMAT, 3, 12, {"expected a type (int8", "found 'int33'"}},
  {HEAD "  reduce 4 int32 avg in 0 inout 16\n}\n", CDAG_ERR_FORMAT, 3, 18, {"expected a reduction (sum", "found 'avg'"}},
  {HEAD "  reduce 4 float band in 0 inout 16\n}\n", CDAG_ERR_FORMAT, 3, 18,
   {"reduction 'band' is not defined for type 'float'"}},
  {HEAD "  reduce x int32 sum in 0 inout 16\n}\n", CDAG_ERR_FORMAT, 3, 10, {"expected an element count", "found 'x'"}},
  {HEAD "  reduce 4 int32 sum in 0\n}\n", CDAG_ERR_FORMAT, 3, 26, {"expected 'inout'", "end of line"}},
  {HEAD "  reduce 4 int32 sum inout 0\n}\n", CDAG_ERR_FORMAT, 3, 29, {"expected 'in'", "end of line"}},
  {HEAD "  reduce 4611686018427387904 int32 sum in 0 inout 0\n}\n", CDAG_ERR_FORMAT, 3, 10,
   {"reduce count 4611686018427387904", "more than 2^63-1 bytes"}},
  {HEAD "  reduce 4 int32 sum in 0 inout 8\n}\n", CDAG_ERR_FORMAT, 3, 3, {"rank 0", "overlap"}},
  {HEAD "  copy 8b to 0x10\n}\n", CDAG_ERR_FORMAT, 3, 18, {"expected 'from'", "end of line"}},
  {HEAD "  copy 8b from 0x10 to 0x14\n}\n", CDAG_ERR_FORMAT, 3, 3, {"copy source and destination overlap"}},
  {HEAD "  copy 8b from 0x10 to 0x40 in 0\n}\n", CDAG_ERR_FORMAT, 3, 29,
   {"expected 'from', 'to', 'blocks', 'from_stride', 'to_stride', 'from_steps', 'to_steps', 'cpu', 'nic'", "'in'"}},
  /* strided copies */
  {HEAD "  copy 30b from 0x10 to 0x1000 blocks 4\n}\n", CDAG_ERR_FORMAT, 3, 39, {"4 blocks do not divide the copy's 30 bytes"}},
  {HEAD "  copy 32b from 0x10 to 0x1000 blocks 0\n}\n", CDAG_ERR_FORMAT, 3, 39, {"expected a block count (at least 1)", "'0'"}},
  {HEAD "  copy 32b from 0x10 to 0x1000 blocks 4 from_stride 4\n}\n", CDAG_ERR_FORMAT, 3, 53,
   {"expected a stride (at least the block length 8, or at most minus it)", "'4'"}},
  {HEAD "  copy 32b from 0x10 to 0x1000 blocks 4 from_stride -4\n}\n", CDAG_ERR_FORMAT, 3, 53,
   {"expected a stride (at least the block length 8, or at most minus it)", "'-4'"}},
  {HEAD "  copy 32b from 0x10 to 0x1000 blocks 4 from_stride -16\n}\n", CDAG_ERR_FORMAT, 3, 39,
   {"the copy's blocks reach beyond 0..2^63-1"}},
  {HEAD "  copy 100000000b from 0x10000000 to 0x1000 blocks 100000000 from_stride -1\n}\n", CDAG_ERR_FORMAT, 3, 52,
   {"100000000 blocks of a copy with strides of both signs: more operations of blocks than the loader makes of one "
    "file (67108864 left)"}},
  {HEAD "  copy 64b from 0x1000 to 0x2000 blocks 4 from_steps 16 16\n}\n", CDAG_ERR_FORMAT, 3, 43,
   {"4 blocks need 3 steps, found 2"}},
  {HEAD "  copy 64b from 0x1000 to 0x2000 blocks 4 from_stride 16 from_steps 16 16 16\n}\n", CDAG_ERR_FORMAT, 3, 58,
   {"'from_stride' and 'from_steps' both given"}},
  {HEAD "  copy 64b from 0x1000 to 0x2000 to_steps 16\n}\n", CDAG_ERR_FORMAT, 3, 34, {"steps need 'blocks'"}},
  {HEAD "  copy 32b from 0x10 to 0x2000 blocks 2 from_steps -32\n}\n", CDAG_ERR_FORMAT, 3, 39,
   {"block 1 of the copy lies beyond 0..2^63-1"}},
  /* a side at a stride beside a listed one, and a listed side's block 0, past 2^63-1 (both once loaded) */
  {HEAD "  copy 32b from 0x7ffffffffffffff0 to 0x1000 blocks 2 from_stride 32 to_steps 64\n}\n", CDAG_ERR_FORMAT, 3, 53,
   {"block 1 of the copy lies beyond 0..2^63-1"}},
  {HEAD "  copy 32b from 0x7ffffffffffffff8 to 0x1000 blocks 2 from_steps -64 to_stride 16\n}\n", CDAG_ERR_FORMAT, 3, 53,
   {"block 0 of the copy lies beyond 0..2^63-1"}},
  {HEAD "  copy 32b from 0x1000 to 0x2000 blocks 2 from_steps -9223372036854775808\n}\n", CDAG_ERR_FORMAT, 3, 54,
   {"number '-9223372036854775808' is below -(2^63-1)"}},
  /* a run longer than the line's blocks is refused before it is expanded, the blocks before
     the steps or after them (it once took 1 GB for either list) */
  {HEAD "  copy 8b from 0x1000 to 0x2000 blocks 2 from_steps 2*67108863\n}\n", CDAG_ERR_FORMAT, 3, 42,
   {"2 blocks need 1 steps, found 67108863"}},
  {HEAD "  copy 8b from 0x1000 to 0x2000 from_steps 2*67108863 to_steps 2*67108863 blocks 2\n}\n", CDAG_ERR_FORMAT, 3,
   33, {"2 blocks need 1 steps, found 67108863"}},
  /* computations of blocks */
  {HEAD "  compute 0 writes 30b at 0x10 blocks 4\n}\n", CDAG_ERR_FORMAT, 3, 39, {"4 blocks do not divide the 30 bytes written"}},
  {HEAD "  compute 0 writes 32b at 0x10 blocks 4 stride 4\n}\n", CDAG_ERR_FORMAT, 3, 48,
   {"expected a stride (at least the block length)", "'4'"}},
  {HEAD "  compute 0 reads all blocks 2\n}\n", CDAG_ERR_FORMAT, 3, 30, {"'blocks' of a computation need bytes it writes"}},
  {HEAD "  compute 0 writes 32b at 0x10 stride 16\n}\n", CDAG_ERR_FORMAT, 3, 39, {"a stride needs 'blocks'"}},
  {HEAD "  compute 0 writes 100000000b at 0x10 blocks 100000000\n}\n", CDAG_ERR_FORMAT, 3, 46,
   {"100000000 blocks: more operations of blocks than the loader makes of one file (67108864 left)"}},
  {HEAD "  compute 0 reads all writes 32b at 0x10 blocks 2 steps 16 16\n}\n", CDAG_ERR_FORMAT, 3, 51,
   {"2 blocks need 1 steps, found 2"}},
  {HEAD "  compute 0 writes 0b at 0x10 blocks 2 steps 1\n}\n", CDAG_ERR_FORMAT, 3, 40, {"steps of a computation need bytes it writes"}},
  {HEAD "  compute 0 reads all writes 32b at 0x10 blocks 2 stride 16 steps 16\n}\n", CDAG_ERR_FORMAT, 3, 61,
   {"'stride' and 'steps' both given"}},
  {HEAD "  compute 0 reads all steps 16\n}\n", CDAG_ERR_FORMAT, 3, 23, {"steps of a computation need bytes it writes"}},
  {HEAD "  compute 0 writes 32b at 0x7ffffffffffffff0 blocks 2 stride 16\n}\n", CDAG_ERR_FORMAT, 3, 53,
   {"the blocks written end beyond address 2^63-1"}},
  {HEAD "  copy 32b from 0x10 to 0x1000 to_stride 16\n}\n", CDAG_ERR_FORMAT, 3, 42, {"a stride needs 'blocks'"}},
  {HEAD "  copy 32b from 0x10 to 0x1000 blocks 4 blocks 4\n}\n", CDAG_ERR_FORMAT, 3, 41, {"duplicate 'blocks'"}},
  {HEAD "  copy 32b from 0x1000 to 0x1008 blocks 4 from_stride 16\n}\n", CDAG_ERR_FORMAT, 3, 3,
   {"copy source and destination blocks overlap"}},
  {HEAD "  calc x\n}\n", CDAG_ERR_FORMAT, 3, 8, {"expected a compute cost", "found 'x'"}},
  {HEAD "  calc 5 tag 1\n}\n", CDAG_ERR_FORMAT, 3, 10, {"expected 'cpu', 'nic' or end of line", "found 'tag'"}},
  {HEAD "  scratch 0x100\n}\n", CDAG_ERR_FORMAT, 3, 16, {"expected a size in bytes", "end of line"}},
  {HEAD "  scratch 0x100 4b 8b\n}\n", CDAG_ERR_FORMAT, 3, 20, {"expected end of line", "found '8b'"}},
  /* cdag's own addresses for accumulates' target sides (a plan took such scratch as its own) */
  {HEAD "  scratch 0x7ffcfffffffffff8 16b\n}\n", CDAG_ERR_FORMAT, 3, 3,
   {"scratch [0x7ffcfffffffffff8, 0x7ffd000000000008) meets the addresses cdag keeps", "[0x7ffc000000000000, 0x7ffd000000000000)"}},
  /* the lists of vector collectives */
  {HEAD "  allgatherv 4b in 0 out 0x100 counts 4 displs 0 4\n}\n", CDAG_ERR_FORMAT, 3, 32,
   {"'counts' has 1 values", "communicator 0 has 2 members"}},
  {HEAD "  allgatherv 4b in 0 out 0x100 counts 4 4\n}\n", CDAG_ERR_FORMAT, 3, 42, {"expected 'displs'", "end of line"}},
  {HEAD "  allgatherv 4b in 0 out 0x100 counts 4 4 counts 4 4 displs 0 4\n}\n", CDAG_ERR_FORMAT, 3, 43,
   {"duplicate 'counts'"}},
  {HEAD "  gatherv 4b root 1 in 0 counts 4 4 displs 0 4\n}\n", CDAG_ERR_FORMAT, 3, 26,
   {"'counts' on a gatherv member other than the root", "has none"}},
  {HEAD "  allgatherv 4b in 0 out 0x100 counts x\n}\n", CDAG_ERR_FORMAT, 3, 39,
   {"expected 'root', 'in', 'out', 'counts', 'displs', 'recvcounts', 'recvdispls', 'comm'", "found 'x'"}},
  {HEAD "  allgather 4b in 0 out 0x100 counts 4 4\n}\n", CDAG_ERR_FORMAT, 3, 31,
   {"expected 'root', 'in', 'out', 'addr', 'comm', 'nonblocking' or end of line", "found 'counts'"}},
  {HEAD "  allgatherv 4b in 0 out 0x100 counts -4 4 displs 0 4\n}\n", CDAG_ERR_FORMAT, 3, 39,
   {"expected a count or displacement", "found '-4'"}},
  {HEAD "  alltoallv 8b in 0 out 0x100 counts 4 4 displs 0 4 recvcounts 4 4\n}\n", CDAG_ERR_FORMAT, 3, 67,
   {"expected 'recvdispls'", "end of line"}},
  {HEAD "  reduce_scatter 1 int32 sum in 0 out 0x100 counts 1 1 displs 0 4\n}\n", CDAG_ERR_FORMAT, 3, 56,
   {"'displs' on a reduce_scatter, which has none"}},
  /* labels and dependencies */
  {HEAD "  a: calc 1\n  a: calc 2\n}\n", CDAG_ERR_FORMAT, 4, 3, {"duplicate label 'a' in rank 0", "line 3"}},
  {HEAD "  a: calc 1\n  a requires b\n}\n", CDAG_ERR_FORMAT, 4, 14, {"unknown label 'b' in rank 0"}},
  {HEAD "  a: calc 1\n  b requires a\n}\n", CDAG_ERR_FORMAT, 4, 3, {"unknown label 'b' in rank 0"}},
  {HEAD "  a: calc 1\n}\nrank 1 {\n  b: calc 1\n  b requires a\n}\n", CDAG_ERR_FORMAT, 7, 14,
   {"unknown label 'a' in rank 1", "defined in rank 0", "one rank"}},
  {HEAD "  a: calc 1\n  a requires a\n}\n", CDAG_ERR_FORMAT, 4, 14, {"label 'a' requires itself"}},
  {HEAD "  a: calc 1\n  a requires 5\n}\n", CDAG_ERR_FORMAT, 4, 14, {"expected a label", "found '5'"}},
  {HEAD "  a: calc 1\n  b: calc 1\n  a requires b b\n}\n", CDAG_ERR_FORMAT, 5, 16, {"expected end of line", "found 'b'"}},
  {HEAD "  a: calc 1\n  b: calc 1\n  a requires b\n  b irequires a\n}\n", CDAG_ERR_CYCLE, 0, 0,
   {"cycle", "rank 0", "line"}},
};
#define NCASES ((int)(sizeof cases / sizeof *cases))

START_TEST(test_error_message) {
  const bad_case *c = &cases[_i];
  cdag_graph *g = (cdag_graph *)1;
  int rc = ir_load_mem(c->text, strlen(c->text), "bad.cdag", NULL, &g);
  const char *msg = cdag_error_message();
  ck_assert_msg(rc == c->code, "case %d: code %d, expected %d (%s)", _i, rc, c->code, msg);
  ck_assert_ptr_null(g);
  char pos[64];
  if (c->line) snprintf(pos, sizeof pos, "bad.cdag:%u:%u: ", c->line, c->col);
  else snprintf(pos, sizeof pos, "bad.cdag: ");
  ck_assert_msg(strncmp(msg, pos, strlen(pos)) == 0, "case %d: message '%s' does not start with '%s'", _i, msg, pos);
  for (int k = 0; k < 3 && c->words[k]; k++)
    ck_assert_msg(strstr(msg, c->words[k]) != NULL, "case %d: message '%s' lacks '%s'", _i, msg, c->words[k]);
}
END_TEST

/* The loader stops at the first error, in order of the text. */
START_TEST(test_first_error_wins) {
  const char *t = HEAD "  l1: send 1b to 9\n  l1: calc x\n}\n";
  cdag_graph *g = NULL;
  ck_assert_int_eq(ir_load_mem(t, strlen(t), "x.goal", NULL, &g), CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "x.goal:3:18:"));
}
END_TEST

/* --goal-buffers=fresh needs address space above the explicit addresses. */
START_TEST(test_fresh_buffers_exhausted) {
  const char *t = HEAD "  send 0x7ffffffffffff000 b to 1 addr 0x10\n  send 0x100000 b to 1\n}\n";
  ir_load_opts o = {IR_GOAL_FRESH, 0, 0};
  cdag_graph *g = NULL;
  ck_assert_int_eq(ir_load_mem(t, strlen(t), "f.goal", &o, &g), CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "f.goal:4:"));
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "no address space left"));
  ck_assert_ptr_null(g);
  o.goal_buffers = IR_GOAL_SHARED; /* the same file at address 0 is fine */
  ck_assert_int_eq(ir_load_mem(t, strlen(t), "f.goal", &o, &g), CDAG_OK);
  ir_graph_free(g);
}
END_TEST

/* max_blocks (used by the fuzzers) bounds the ops the loader makes of blocks, all lines
   together. */
START_TEST(test_max_blocks) {
  const char *t = "num_ranks 1\nrank 0 {\n  compute 0 reads all writes 64b at 0x0 blocks 8\n"
                  "  copy 24b from 0x100 to 0x200 blocks 3 to_steps 8 8\n}\n";
  ir_load_opts o = {0, 0, 11};
  cdag_graph *g = NULL;
  ck_assert_int_eq(ir_load_mem(t, strlen(t), "b", &o, &g), CDAG_OK);
  ck_assert_int_eq(g->nops, 2);   /* the computation and the listed copy are one op each, their blocks counted all the same */
  ir_graph_free(g);
  g = NULL;
  o.max_blocks = 10;
  ck_assert_int_eq(ir_load_mem(t, strlen(t), "b", &o, &g), CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "b:4:39: 3 listed blocks: more operations of blocks than the loader "
                                                     "makes of one file (2 left)"));
  ck_assert_ptr_null(g);
}
END_TEST

/* max_ranks (used by the fuzzers) bounds num_ranks. */
START_TEST(test_max_ranks) {
  const char *t = "num_ranks 5000\n";
  ir_load_opts o = {0, 4096, 0};
  cdag_graph *g = NULL;
  ck_assert_int_eq(ir_load_mem(t, strlen(t), "m.goal", &o, &g), CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "m.goal:1:11: expected a number of ranks in 1..4096"));
  ck_assert_int_eq(ir_load_mem(t, strlen(t), "m.goal", NULL, &g), CDAG_OK);
  ir_graph_free(g);
}
END_TEST

START_TEST(test_io_and_arguments) {
  cdag_graph *g = NULL;
  ck_assert_int_eq(ir_load_file("/nonexistent/graph.cdag", NULL, &g), CDAG_ERR_IO);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "/nonexistent/graph.cdag: cannot open"));
  ck_assert_int_eq(ir_load_file("/", NULL, &g), CDAG_ERR_IO);
  ck_assert_int_eq(ir_load_file(NULL, NULL, &g), CDAG_ERR_ARG);
  ck_assert_int_eq(ir_load_file("x", NULL, NULL), CDAG_ERR_ARG);
  ck_assert_int_eq(ir_load_mem(NULL, 3, "x", NULL, &g), CDAG_ERR_ARG);
  ck_assert_int_eq(ir_load_mem(NULL, 0, "x", NULL, &g), CDAG_ERR_FORMAT); /* empty: no num_ranks */
  ck_assert_int_eq(ir_save_file(NULL, stdout), CDAG_ERR_ARG);
  ck_assert_ptr_null(g);
}
END_TEST

/* Every file in tests/data/regress loads (or fails with a message) without crashing; what
   loads is saved and loaded again to the same op count. */
/* A UTF-8 byte-order mark is skipped; in hex numbers 'b' is a digit (0x1b is 27, not 1b). */
START_TEST(test_bom_and_hex_sizes) {
  const char *text = "\xef\xbb\xbfnum_ranks 2\nrank 0 {\n  send 0x1b to 1\n  send 0x10 b to 1 tag 1\n}\n"
                     "rank 1 {\n  recv 27b from 0\n  recv 16 from 0 tag 1\n}\n";
  cdag_graph *g = NULL;
  ck_assert_msg(ir_load_mem(text, strlen(text), "ok.cdag", NULL, &g) == CDAG_OK, "%s", cdag_error_message());
  ck_assert_uint_eq(g->bytes[0], 27);
  ck_assert_uint_eq(g->bytes[1], 16);
  ir_graph_free(g);
  const char *old = "num_ranks 2\nrank 0 {\n  send 0x1b to 1\n}\nrank 1 {\n  recv 1b from 0\n}\n";
  ck_assert_int_eq(ir_load_mem(old, strlen(old), "old.cdag", NULL, &g), CDAG_OK);   /* 27 bytes into 1: */
  ck_assert_uint_eq(g->bytes[0], 27);                                                /* a truncation now */
  ir_graph_free(g);
}
END_TEST

/* A short file naming 2^30 ranks is refused at once (it took 6 minutes and 12.6 GB), and
   the same from the API; 2^20 idle ranks are fine, as are 2^21 with enough operations. */
START_TEST(test_idle_ranks_refused) {
  const char *text = "num_ranks 1073741824\nrank 0 {\n  send 8b to 1\n}\nrank 1 {\n  recv 8b from 0\n}\n";
  cdag_graph *g = NULL;
  ir_load_opts o = {0, IR_MAX_RANKS, 0};
  ck_assert_int_eq(ir_load_mem(text, strlen(text), "big.cdag", &o, &g), CDAG_ERR_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "1073741824 ranks but only 2 operations"));
  ck_assert_ptr_null(g);
  CK_OK(cdag_graph_create_global(1 << 21, &g));
  CK_OK(cdag_rank_send(g, 0, 0, 8, 1, 0, NULL));
  CK_OK(cdag_rank_recv(g, 1, 0, 8, 0, 0, NULL));
  cdag_plan *p = NULL;
  ck_assert_int_eq(cdag_analyze(g, NULL, &p), CDAG_ERR_UNSUPPORTED);
  ck_assert_ptr_null(p);
  for (int r = 2; r < (1 << 21) / 64 + 2; r += 2) {
    CK_OK(cdag_rank_send(g, r, 0, 8, r + 1, 0, NULL));
    CK_OK(cdag_rank_recv(g, r + 1, 0, 8, r, 0, NULL));
  }
  CK_OK(ir_finalize(g));
  ir_graph_free(g);
  CK_OK(cdag_graph_create_global(1 << 20, &g));
  CK_OK(cdag_rank_send(g, 0, 0, 8, (1 << 20) - 1, 0, NULL));
  CK_OK(cdag_rank_recv(g, (1 << 20) - 1, 0, 8, 0, 0, NULL));
  CK_OK(cdag_analyze(g, NULL, &p));
  cdag_plan_free(&p);
  ir_graph_free(g);
}
END_TEST

START_TEST(test_regressions) {
  DIR *dir = opendir(CDAG_TEST_DATA "/regress");
  ck_assert_ptr_nonnull(dir);
  struct dirent *e;
  int n = 0;
  while ((e = readdir(dir)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/regress/%s", CDAG_TEST_DATA, e->d_name);
    for (int fresh = 0; fresh < 2; fresh++) {
      ir_load_opts o = {fresh, 4096, 0};
      cdag_graph *g = NULL;
      int rc = ir_load_file(path, &o, &g);
      if (rc != CDAG_OK) {
        ck_assert_ptr_null(g);
        ck_assert_msg(cdag_error_message()[0] != '\0', "%s: error %d without a message", path, rc);
        continue;
      }
      char *buf = NULL;
      size_t len = 0;
      FILE *f = open_memstream(&buf, &len);
      ck_assert_int_eq(ir_save_file(g, f), CDAG_OK);
      fclose(f);
      cdag_graph *h = NULL;
      ck_assert_msg(ir_load_mem(buf, len, "saved", NULL, &h) == CDAG_OK, "%s: saved text does not load: %s", path,
                    cdag_error_message());
      ck_assert_int_eq(h->nops, g->nops);
      free(buf);
      ir_graph_free(g);
      ir_graph_free(h);
    }
    n++;
  }
  closedir(dir);
  ck_assert_int_ge(n, 1);
}
END_TEST

Suite *cdag_format_errors_suite(void) {
  Suite *s = suite_create("format_errors");
  TCase *tc = tcase_create("messages");
  tcase_add_loop_test(tc, test_error_message, 0, NCASES);
  tcase_add_test(tc, test_first_error_wins);
  tcase_add_test(tc, test_fresh_buffers_exhausted);
  tcase_add_test(tc, test_max_ranks);
  tcase_add_test(tc, test_max_blocks);
  tcase_add_test(tc, test_io_and_arguments);
  suite_add_tcase(s, tc);
  tc = tcase_create("regress");
  tcase_add_test(tc, test_regressions);
  tcase_add_test(tc, test_bom_and_hex_sizes);
  tcase_add_test(tc, test_idle_ranks_refused);
  suite_add_tcase(s, tc);
  return s;
}

CDAG_CHECK_MAIN(cdag_format_errors_suite)
