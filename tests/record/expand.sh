#!/usr/bin/env bash
# cdag tests — tests/record/expand.sh CDAG SOURCE_DIR MPIEXEC NP PROGRAM [EXPECT...]: a
# recording stored as distinct phases expands back to exactly its flat form.
#
# Records PROGRAM at NP processes (`cdag record`); then from the same part files merges the
# flat recording (`cdag record --merge --flat`: every phase of the run a file, repeats too)
# and the distinct one (`cdag record --merge`), expands the latter (`cdag record --expand`)
# and requires the same files, byte for byte, as the flat merge wrote. PROGRAM is a path
# (run with a live-memory directory, as tests/record/rec_*.c take) or `tachyon` / `mpy`
# (tests/record/real.sh's programs). EXPECT: args:A (the program's argument), index:EXPR
# (a Python expression on the distinct recording's index `i` holds), flat:N (the run has N
# phases), distinct:N (N phase files), folded:B (the recorder folded repeats: rank 0's part
# has a `fold` line and at most B bytes), analyze:TEXT (`cdag analyze` of the distinct
# recording says TEXT on its first line: the run as phase x repeats).
set -u
cdag=$1; src=$2; mpiexec=$3; np=$4; prog=$5; shift 5
. "$src/tests/cli/lib/expect.sh"
. "$src/tests/record/expand_check.sh"
data=$src/tests/data/real
args="$tmp/live" index=() flat="" distinct="" folded="" analyze=""
for e in "$@"; do
  case $e in
  args:*) args=${e#args:} ;;
  index:*) index+=("${e#index:}") ;;
  flat:*) flat=${e#flat:} ;;
  distinct:*) distinct=${e#distinct:} ;;
  folded:*) folded=${e#folded:} ;;
  analyze:*) analyze=${e#analyze:} ;;
  *) fail "unknown expectation $e"; finish ;;
  esac
done
mkdir -p "$tmp/live"
args=${args//LIVE/$tmp/live}
cd "$tmp" || exit 1
case $prog in
tachyon)
  command -v tachyon-nox >/dev/null || { fail "tachyon-nox is not installed (bash scripts/deps.sh)"; finish; }
  run=(tachyon-nox "$data/tachyon_scene.dat" -numthreads 1 -format PPM -o "$tmp/image.ppm") ;;
mpy)
  command -v mpy >/dev/null || { fail "mpy is not installed (bash scripts/deps.sh)"; finish; }
  cp "$data/mpy_ring.i" "$data/mpy_main.i" "$tmp/"
  run=(mpy -j mpy_ring.i -i mpy_main.i) ;;
*) run=("$prog" $args) ;;
esac
expect_status 0 timeout 120 "$cdag" record -o "$tmp/rec" -- "$mpiexec" -n "$np" "${run[@]}"
if [ -n "$folded" ]; then
  grep -q '^0 fold ' "$tmp/rec/rank-0.part" || fail "rank-0.part has no fold line"
  [ "$(wc -c <"$tmp/rec/rank-0.part")" -le "$folded" ] || fail "rank-0.part holds $(wc -c <"$tmp/rec/rank-0.part") bytes, more than $folded"
fi
expand_check "$tmp/rec"
nflat=$(ls "$tmp"/xc/flat/ | grep -c '^phase-')
ndist=$(ls "$tmp"/xc/dist/ | grep -c '^phase-')
[ -z "$flat" ] || [ "$nflat" = "$flat" ] || fail "the run has $nflat phases, expected $flat"
[ -z "$distinct" ] || [ "$ndist" = "$distinct" ] || fail "$ndist distinct phase files, expected $distinct"
if [ -n "$analyze" ]; then
  "$cdag" analyze "$tmp/xc/dist" >"$tmp/analyze.out" 2>&1 || fail "cdag analyze: $(tail -3 "$tmp/analyze.out")"
  head -1 "$tmp/analyze.out" | grep -qF -- "$analyze" || fail "cdag analyze does not say '$analyze': $(head -1 "$tmp/analyze.out")"
fi
python3 - "$tmp/xc/dist/index.json" "$nflat" "$ndist" "${index[@]}" <<'PY' || fail "index.json: see above"
import json, sys
i = json.load(open(sys.argv[1]))
nflat, ndist, exprs = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
assert i["flat_phases"] == nflat == sum(s["repeats"] for s in i["sequence"]), i
assert len(i["phases"]) == ndist and all(p["repeats"] >= 1 for p in i["phases"]), i["phases"]
for e in exprs:
    assert eval(e, {"i": i}), f"index.json: not {e}: {i}"
PY
finish
