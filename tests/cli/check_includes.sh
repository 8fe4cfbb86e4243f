#!/usr/bin/env bash
# cdag tests — tests/cli/check_includes.sh CDAG SOURCE_DIR: scripts/check-includes.py, the layer
# check of the include graph, passes on src/ and fails on a tree that includes upward, has a
# cycle inside one layer, or has a directory that is no layer.
set -u
cdag=$1
src=$2
. "$src/tests/cli/lib/expect.sh"
check="$src/scripts/check-includes.py"

expect_status 0 python3 "$check" "$src/src"

mk() { mkdir -p "$tmp/$1/$(dirname "$2")"; printf '%s\n' "$3" >"$tmp/$1/$2"; }

# ir including detect: upward.
mk up ir/ir.h '#include "detect/detect.h"'
mk up detect/detect.h '#include "ir/ir.h"'
expect_status 1 python3 "$check" "$tmp/up"
expect_err "ir/ir.h (layer ir) includes detect/detect.h of the higher layer detect"

# Two headers of one layer including each other.
mk cyc detect/a.h '#include "detect/b.h"'
mk cyc detect/b.h '#include "a.h"'
expect_status 1 python3 "$check" "$tmp/cyc"
expect_err "include cycle: detect/a.h -> detect/b.h -> detect/a.h"

# A directory outside the order.
mk stray misc/x.c '#include "ir/ir.h"'
mk stray ir/ir.h ''
expect_status 1 python3 "$check" "$tmp/stray"
expect_err "directory 'misc' is not a layer"

# Downward includes are fine.
mk down detect/detect.h '#include "ir/ir.h"'
mk down ir/ir.h '#include "base/error.h"'
mk down base/error.h ''
expect_status 0 python3 "$check" "$tmp/down"
finish
