#!/usr/bin/env bash
# cdag tests — tests/cli/sst.sh CDAG SOURCE_DIR: `cdag sst` on small hand-written graphs.
#
# The text listing groups tuples by destination rank; --json is the docs/format.md form (a split
# send gives two tuples, a reduction lists its sources sorted); matching and dataflow errors
# name the rank, op, line, label and peer, and exit 1; local reduces that mix reductions or
# leave part of a reduced element start stages, each with its SST.
set -u
cdag=$1
src=$2
. "$src/tests/cli/lib/expect.sh"

# Rank 1 forwards 8 original and 8 received bytes to rank 2 (a split); rank 2 adds rank 0's
# int32 into its own.
cat >"$tmp/split.cdag" <<'G'
num_ranks 3
rank 0 {
  a: send 16b to 1 addr 0x500
  b: send 4b to 2 tag 1 addr 0x600
}
rank 1 {
  a: recv 16b from 0 addr 0x110
  b: send 16b to 2 addr 0x108
}
rank 2 {
  scratch 0x8000 4b
  a: recv 16b from 1 addr 0x900
  b: recv 4b from 0 tag 1 addr 0x8000
  c: reduce 1 int32 sum in 0x8000 inout 0x20
}
G
cases <<'T'
0 cdag sst "$tmp/split.cdag"
  first rank 1:
  out rank 2:
  out   0x900 <- rank 1 0x108 (8 B)
  out   0x908 <- rank 0 0x500 (8 B)
  out   0x20 <- sum of 1 int32 over 0:0x600 2:0x20
  out 3 transfers, 1 reductions, 1 splits
0 cdag sst --json "$tmp/split.cdag"
  out "cdag_sst": 1
  out {"src": 0, "src_addr": 1280, "len": 16, "dst": 1, "dst_addr": 272}
  out {"src": 1, "src_addr": 264, "len": 8, "dst": 2, "dst_addr": 2304}
  out {"dst": 2, "dst_addr": 32, "count": 1, "type": "int32", "op": "sum", "sources": [[0, 1536], [2, 32]]}
T

# A reduce over part of an element an earlier reduce wrote (int32 at 0x202 over 0x200's): a
# stage of its own, as cdag analyze cuts it (sst once refused it as unsupported)
cat >"$tmp/partial.cdag" <<'G'
num_ranks 1
rank 0 {
  reduce 4 int32 sum in 0x100 inout 0x200
  reduce 4 int32 sum in 0x300 inout 0x202
}
G
cases <<'T'
0 cdag sst "$tmp/partial.cdag"
  first stage 0:
  out   0x200 <- sum of 4 int32 over 0:0x100 0:0x200
  out stage 1:
  out   0x202 <- sum of 4 int32 over 0:0x202 0:0x300
0 cdag analyze "$tmp/partial.cdag"
  out stages: 2
T

cat >"$tmp/unmatched.cdag" <<'G'
num_ranks 2
rank 0 {
  lonely: send 8b to 1 tag 7 addr 0
}
G

cat >"$tmp/truncate.cdag" <<'G'
num_ranks 2
rank 0 {
  s: send 64b to 1
}
rank 1 {
  r: recv 32b from 0
}
G

cat >"$tmp/deadlock.cdag" <<'G'
num_ranks 2
rank 0 {
  r0: recv 8b from 1 addr 0
  s0: send 8b to 1 addr 0
}
rank 1 {
  r1: recv 8b from 0 addr 0
  s1: send 8b to 0 addr 0
}
G
cases <<'T'
1 cdag sst "$tmp/unmatched.cdag"
  err rank 0 op 0 (send, line 3, label lonely)
  err to rank 1 tag 7 has no matching receive
1 cdag sst "$tmp/truncate.cdag"
  err label r) receives 32 bytes but its matched send rank 0 op 0 (send, line 3, label s) sends 64
1 cdag sst "$tmp/deadlock.cdag"
  err deadlock
  err label r0
  err label s1
T
finish
