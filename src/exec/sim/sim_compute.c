/* cdag — src/exec/sim/sim_compute.c: what a computation writes, in the simulator.
 *
 * The simulator cannot run a program's kernel, so it makes a computation's output a
 * function of exactly what it reads, at the moment it runs: a hash of those bytes spread
 * over the bytes it writes. A plan that hoists a computation above a transfer it reads,
 * or drops such a transfer as dead, then ends with other bytes than the graph, and verify
 * says so. A computation that reads all hashes what the rank's ops wrote since its previous
 * such computation, chained to that one's hash: O(bytes written) for all of them, not
 * O(bytes written) each. */
#include <string.h>

#include "exec/sim/sim.h"

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 33);
}

static uint64_t hash_bytes(uint64_t h, const uint8_t *b, uint64_t len) {
  uint64_t i = 0, w;
  for (; i + 8 <= len; i += 8) {
    memcpy(&w, b + i, 8);
    h = mix(h, w);
  }
  for (; i < len; i++) h = mix(h, b[i]);
  return mix(h, len);
}

static int hash_range(sim_mem *m, int rank, uint64_t addr, uint64_t len, uint64_t *h) {
  const uint8_t *b = sim_mem_at(m, rank, addr, len);
  if (!b)
    return cdag__error(CDAG_ERR_ARG, "simulator: a computation of rank %d reads 0x%llx (%llu bytes), outside memory",
                       rank, (unsigned long long)addr, (unsigned long long)len);
  *h = hash_bytes(mix(*h, addr), b, len);
  return CDAG_OK;
}

/* splitmix64's stream from h over the bytes written. */
static void spread(uint64_t h, uint8_t *b, uint64_t len) {
  for (uint64_t i = 0; i < len; i += 8) {
    uint64_t z = h + (i / 8 + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    memcpy(b + i, &z, len - i < 8 ? len - i : 8);
  }
}

/* A local reduce that combines values of different reductions, run at its place. */
static int reduce_at(const stage_compute *c, sim_mem *m) {
  uint8_t *in = sim_mem_at(m, c->rank, c->raddr, c->rlen), *io = sim_mem_at(m, c->rank, c->waddr, c->wlen);
  if (!in || !io)
    return cdag__error(CDAG_ERR_ARG, "simulator: a reduction of rank %d at 0x%llx is outside memory", c->rank,
                       (unsigned long long)c->waddr);
  if (ir_rop_is_user(c->rop))
    return cdag__error(CDAG_ERR_UNSUPPORTED, "rank %d op %d: a reduction with a user-defined MPI_Op cannot be simulated",
                       c->rank, c->op);
  ir_reduce_apply(c->type, c->rop, in, io, c->wlen / (uint64_t)ir_type_size(c->type));
  return CDAG_OK;
}

int sim_compute(const stage_steps *st, int64_t i, sim_mem *m, uint64_t *chain) {
  const stage_compute *c = &st->computes[i];
  if (c->rop >= 0) return reduce_at(c, m);
  uint64_t h = mix(0x243f6a8885a308d3ull, (uint64_t)c->op);
  int rc = CDAG_OK;
  if (c->rlen == IR_READS_ALL) {
    h = mix(h, chain[c->rank]);
    for (int64_t k = c->since_first; k < c->since_first + c->nsince && rc == CDAG_OK; k++)
      rc = hash_range(m, c->rank, st->since[k].addr, st->since[k].len, &h);
    chain[c->rank] = h;
  } else if (c->rlen) {
    rc = hash_range(m, c->rank, c->raddr, c->rlen, &h);
  }
  if (rc || !c->wlen) return rc;
  uint8_t *w = sim_mem_at(m, c->rank, c->waddr, c->wlen);
  if (!w)
    return cdag__error(CDAG_ERR_ARG, "simulator: a computation of rank %d writes 0x%llx (%llu bytes), outside memory",
                       c->rank, (unsigned long long)c->waddr, (unsigned long long)c->wlen);
  spread(h, w, c->wlen);
  return CDAG_OK;
}
