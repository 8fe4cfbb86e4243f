/* cdag — src/base/copy.h: copying a strided run of equal blocks.
 *
 * A column of a matrix is n blocks of one element at one stride; libc's memcpy, called per
 * block, costs a call and a size dispatch per 8 bytes, several times what the bytes do.
 * Blocks of a word size are moved as words (memcpy of a constant size compiles to one load
 * and one store), others by memcpy. Nothing here assumes alignment. */
#ifndef CDAG_BASE_COPY_H
#define CDAG_BASE_COPY_H

#include <stdint.h>
#include <string.h>

#define BASE_COPY_WORDS(W)                                                                    \
  for (uint64_t j = 0; j < n; j++) memcpy(dst + j * to, src + j * from, W)

static inline void base_copy_blocks(uint8_t *dst, uint64_t to, const uint8_t *src, uint64_t from, uint64_t n,
                                    uint64_t len) {
  switch (len) {
  case 4: BASE_COPY_WORDS(4); break;
  case 8: BASE_COPY_WORDS(8); break;
  case 16: BASE_COPY_WORDS(16); break;
  default:
    for (uint64_t j = 0; j < n; j++) memcpy(dst + j * to, src + j * from, len);
  }
}
#undef BASE_COPY_WORDS

#endif
