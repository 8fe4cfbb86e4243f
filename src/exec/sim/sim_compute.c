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

uint64_t sim_hash_mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 33);
}

uint64_t sim_hash_bytes(uint64_t h, const uint8_t *b, uint64_t len) {
  uint64_t i = 0, w;
  for (; i + 8 <= len; i += 8) {
    memcpy(&w, b + i, 8);
    h = sim_hash_mix(h, w);
  }
  for (; i < len; i++) h = sim_hash_mix(h, b[i]);
  return sim_hash_mix(h, len);
}

uint64_t sim_hash_seed(int64_t op) { return sim_hash_mix(0x243f6a8885a308d3ull, (uint64_t)op); }

static int hash_range(sim_mem *m, int rank, uint64_t addr, uint64_t len, uint64_t *h) {
  const uint8_t *b = sim_mem_at(m, rank, addr, len);
  if (!b)
    return cdag__error(CDAG_ERR_ARG, "simulator: a computation of rank %d reads 0x%llx (%llu bytes), outside memory",
                       rank, (unsigned long long)addr, (unsigned long long)len);
  *h = sim_hash_bytes(sim_hash_mix(*h, addr), b, len);
  return CDAG_OK;
}

void sim_hash_spread(uint64_t h, uint8_t *b, uint64_t len) {
  for (uint64_t i = 0; i < len; i += 16) {
    uint64_t z = h + (i / 16 + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    for (uint64_t k = 0; k < 16 && i + k < len; k++) b[i + k] = (uint8_t)(0x38 + (z >> (4 * k) & 15));
  }
}

int sim_compute(const stage_steps *st, int64_t i, sim_mem *m, uint64_t *chain) {
  const stage_compute *c = &st->computes[i];
  uint64_t h = sim_hash_seed(c->op);
  int rc = CDAG_OK;
  if (c->rlen == IR_READS_ALL) {
    h = sim_hash_mix(h, chain[c->rank]);
    for (int64_t k = c->since_first; k < c->since_first + c->nsince && rc == CDAG_OK; k++)
      rc = hash_range(m, c->rank, st->since[k].addr, st->since[k].len, &h);
    chain[c->rank] = h;
  } else if (c->rlen) {
    rc = hash_range(m, c->rank, c->raddr, c->rlen, &h);
  }
  if (rc || !c->wlen) return rc;
  uint64_t len = c->wn > 1 ? c->wlen / c->wn : c->wlen;
  for (uint64_t j = 0; j < (c->wn > 1 ? c->wn : 1); j++) {   /* its blocks, each its own part of the hash */
    uint64_t at = c->wn > 1 ? stage_block(st, c, j) : c->waddr;
    uint8_t *w = sim_mem_at(m, c->rank, at, len);
    if (!w)
      return cdag__error(CDAG_ERR_ARG, "simulator: a computation of rank %d writes 0x%llx (%llu bytes), outside memory",
                         c->rank, (unsigned long long)at, (unsigned long long)len);
    sim_hash_spread(j ? sim_hash_mix(h, j) : h, w, len);
  }
  return CDAG_OK;
}
