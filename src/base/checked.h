/* cdag — src/base/checked.h: size arithmetic that cannot wrap.
 *
 * Counts, element sizes, offsets and addresses reach cdag from users (the API, graph files,
 * the wire encoding); a product or sum of two of them may not fit. These helpers compute
 * *r = a op b and return 1 when the exact result does not fit *r's type (*r then holds the
 * wrapped value, which the caller must not use), else 0: the names and the contract of C23's
 * <stdckdint.h>, on GCC's and clang's builtins, for any integer types. The caller turns an
 * overflow into CDAG_ERR_ARG or CDAG_ERR_FORMAT naming the values. */
#ifndef CDAG_IR_CHECKED_H
#define CDAG_IR_CHECKED_H

#define ckd_add(r, a, b) __builtin_add_overflow((a), (b), (r))
#define ckd_sub(r, a, b) __builtin_sub_overflow((a), (b), (r))
#define ckd_mul(r, a, b) __builtin_mul_overflow((a), (b), (r))

#include <stdint.h>
/* a + b, or UINT64_MAX when it does not fit: a total of counts that only has to be compared
   with a limit (blocks of 2^58 each add up past 2^64). */
static inline uint64_t sat_add_u64(uint64_t a, uint64_t b) { return b > UINT64_MAX - a ? UINT64_MAX : a + b; }

#endif
