/* cdag — src/wire/wire.h: the compact byte encoding used to move graphs and schedules between
 * processes, and the 64-bit fingerprint of an encoding.
 *
 * A wire buffer is a growable byte array of LEB128 varints (zigzag for signed deltas).
 * wire_encode_rank() writes one rank's ops of a distributed graph: kinds, fields with
 * addresses delta-encoded against the previous address, explicit dependencies, scratch.
 * wire_decode_rank() appends those ops to a global graph under the sender's rank, so the
 * compiling process rebuilds the whole graph from the gathered buffers (ids of rank r are
 * consecutive, in r's program order). Decoding checks every bound: a corrupt buffer is
 * CDAG_ERR_FORMAT, never a crash. Cost: O(n) bytes and time for n ops (typically 6-10 bytes
 * per send/recv). No MPI here. */
#ifndef CDAG_WIRE_WIRE_H
#define CDAG_WIRE_WIRE_H

#include <stdint.h>

#include "ir/ir.h"

typedef struct {
  uint8_t *buf;          /* bytes written so far */
  int64_t len, cap;      /* length, capacity */
  int failed;            /* set when an allocation failed (later writes are ignored) */
} wire_buf;

typedef struct {
  const uint8_t *p, *end;  /* next byte, end of input */
  int failed;              /* set when a read ran past the end or overflowed */
} wire_reader;

/* Writing. Errors are sticky: check wire_done() once at the end. */
void wire_put_u(wire_buf *w, uint64_t v);             /* unsigned varint */
void wire_put_s(wire_buf *w, int64_t v);              /* zigzag varint */
void wire_put_bytes(wire_buf *w, const void *p, int64_t n);
int wire_done(const wire_buf *w);                     /* CDAG_OK or CDAG_ERR_NOMEM */
void wire_free(wire_buf *w);

/* Reading. Errors are sticky: check r->failed. */
void wire_reader_init(wire_reader *r, const void *p, int64_t len);
uint64_t wire_get_u(wire_reader *r);
int64_t wire_get_s(wire_reader *r);
const uint8_t *wire_get_bytes(wire_reader *r, int64_t n);   /* NULL past the end */

/* Appends the ops, dependencies and scratch of rank g->myrank (a distributed graph) to w. */
int wire_encode_rank(const cdag_graph *g, wire_buf *w);
/* Decodes one rank's encoding into the global graph g (g->nprocs must match the sender's).
   *rank receives the sender's rank; its ops get consecutive ids from g->nops on. */
int wire_decode_rank(cdag_graph *g, const uint8_t *p, int64_t len, int *rank);

/* 64-bit fingerprint of bytes (a word-at-a-time multiply-xorshift mixer; seed chains calls). */
uint64_t wire_hash(const void *p, int64_t len, uint64_t seed);

#endif
