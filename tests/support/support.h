/* cdag tests — tests/support/support.h: graph generators and helpers shared by the tests
 * and bench/. Each generator file (gen_<what>.c) declares its functions here. */
#ifndef CDAG_TESTS_SUPPORT_H
#define CDAG_TESTS_SUPPORT_H
#include "ir/ir.h"
#endif
