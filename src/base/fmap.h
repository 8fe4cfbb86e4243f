/* cdag — src/base/fmap.h: an ordered map of keys to indices with a finger, for a caller that
 * walks its keys in order far more than it jumps.
 *
 * The recorder's shadow notes a datatype's blocks one after the other, walks them when a
 * message reads them again and forgets them together when the buffer is freed: hundreds of
 * thousands of keys, each touched where the last one was. A JudyL answers every such
 * look-up from its root (a chain of dependent loads, some hundreds of instructions). Here
 * the keys sit sorted in chunks of FMAP_CHUNK; a JudyL holds the chunks (by the lowest key
 * each may hold) and the map remembers the chunk it used last. A look-up in that chunk, or
 * the next key after it, is a binary search in 64 keys with no JudyL; another chunk costs
 * one JudyL look-up in a map of 64 times fewer keys. Keys inserted in ascending order fill
 * chunks whole. Same directions and answers as base_imap_find (imap.h). */
#ifndef CDAG_BASE_FMAP_H
#define CDAG_BASE_FMAP_H

#include <Judy.h>
#include <stdint.h>

enum { FMAP_CHUNK = 64 };

typedef struct fmap_chunk fmap_chunk;

typedef struct {
  Pvoid_t dir;       /* lowest key a chunk may hold -> the chunk; the first chunk's is 0 */
  fmap_chunk *last;  /* the chunk used last (the finger), NULL none */
  int64_t n;         /* keys */
  int64_t chunks;    /* chunks (FMAP_CHUNK keys' room each) */
} base_fmap;

/* Records (or replaces) key -> idx. CDAG_OK or CDAG_ERR_NOMEM (the map is unchanged). */
int base_fmap_put(base_fmap *m, uint64_t key, int64_t idx);
/* Forgets key (none: nothing). CDAG_OK or CDAG_ERR_NOMEM (the key then stays). */
int base_fmap_del(base_fmap *m, uint64_t key);
/* The key at or below *k, at or above it, or strictly above it (dir: BASE_IMAP_AT_OR_BELOW,
   _AT_OR_ABOVE, _ABOVE of imap.h): its index, the key in *k; -1 if there is none. */
int64_t base_fmap_find(base_fmap *m, uint64_t *k, int dir);
/* Forgets every key and frees the chunks. */
void base_fmap_clear(base_fmap *m);

#endif
