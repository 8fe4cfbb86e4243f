#!/usr/bin/env bash
# cdag — scripts/real-programs.sh: real MPI programs nobody on the team wrote, built from
# Debian's sources against MPICH, run plain and under `cdag record`, and every recording put
# through the tool (docs/recording.md, "Real programs").
#
#   hpl   HPL from Debian's hpcc source (apt-get source hpcc), built with mpicc.mpich and
#         Debian's reference BLAS; run alone (a ten-line main around hpcc's HPL_main, none of
#         hpcc's other benchmarks) on a 1x4 grid, N=200, NB=16, 1-ring-modified broadcast.
#   xdlu  ScaLAPACK's LU tester, its TESTING/LIN sources (apt-get source scalapack, else
#         CDAG_SCALAPACK_SRC) compiled with mpif90.mpich against libscalapack-mpich; 2x2
#         grid, N=320, NB=32.
#
# Each program runs plain, then as `cdag record -o DIR -- mpiexec -n 4 ...`; both runs must
# pass the program's own check (HPL's residual PASSED, xdlu's tests passed). Every phase
# file must load (`cdag check`) and analyse (`cdag analyze --json`); `cdag verify`, `cdag
# model` and `mpiexec -n 4 cdag replay --iterations 2` run on each. One row per program:
# phases, operations, computations (`compute` lines), stages of the analysis (summed over
# the phases), findings (the report's collectives, each with its stage),
# check / analyze / verify / model / replay status, replay time per iteration as written
# and compiled; a failure names its command and the message. Exit 0 when every row passes,
# 1 otherwise, 2 when a program cannot be obtained or built, 77 (--no-build) when a program
# is not built.
#
#   scripts/real-programs.sh [--cdag build/cdag] [--only hpl,xdlu] [--table FILE] [--no-build]
#                            [--hpl-n N] [--hpl-bcast B]
#
# --hpl-n and --hpl-bcast change HPL's input: its order N (default 200; at 800 the panel
# loop repeats 12 times, at 200 three) and its panel broadcast (HPL's BCASTs: 0 1-ring,
# 1 1-ring-modified, the default, 2 2-ring, 3 2-ring-modified, 4 long, 5 long-modified).
# The row's `run` is the recording as phase x repeats (`cdag analyze DIR`'s first line), and
# `expand` whether `cdag record --expand` of it gives exactly what `cdag record --merge --flat`
# writes from the same part files.
#
# Builds and runs go to $CDAG_REAL_DIR (default ~/.cache/cdag-real): a second run does not
# rebuild. Needs scripts/deps.sh's packages; installs libblas-dev, liblapack-dev and
# libscalapack-mpich-dev when missing (apt-get, through sudo when not root), and adds a
# deb-src entry for Debian's own archive when the machine has none. MPICH only:
# mpicc.mpich, mpif90.mpich, mpiexec.mpich.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CDAG=$ROOT/build/cdag
ONLY=hpl,xdlu
TABLE=""
BUILD=1
HPL_N=200
HPL_BCAST=1
while [ $# -gt 0 ]; do
  case $1 in
  --cdag) CDAG=$2; shift 2 ;;
  --only) ONLY=$2; shift 2 ;;
  --table) TABLE=$2; shift 2 ;;
  --no-build) BUILD=0; shift ;;
  --hpl-n) HPL_N=$2; shift 2 ;;
  --hpl-bcast) HPL_BCAST=$2; shift 2 ;;
  -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  *) echo "real-programs: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
done
[[ $HPL_N =~ ^[1-9][0-9]{0,5}$ && $HPL_BCAST =~ ^[0-5]$ ]] || { echo "real-programs: --hpl-n takes an order, --hpl-bcast 0 to 5" >&2; exit 2; }
CDAG=$(cd "$(dirname "$CDAG")" 2>/dev/null && pwd)/$(basename "$CDAG")
[ -x "$CDAG" ] || { echo "real-programs: $CDAG is not built" >&2; exit 2; }
DIR=${CDAG_REAL_DIR:-$HOME/.cache/cdag-real}
MPIEXEC=mpiexec.mpich
NP=4

say() { echo "real-programs: $*" >&2; }

# ---- obtaining and building (once; later runs find the binaries) ----

# Debian packages the builds need beyond scripts/deps.sh (small: BLAS, LAPACK, ScaLAPACK).
need_packages() {
  local missing=() p
  for p in mpich libmpich-dev gfortran libblas-dev liblapack-dev libscalapack-mpich-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  say "installing ${missing[*]}"
  $sudo apt-get update -q >/dev/null &&
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null ||
    return 1
  # libscalapack-mpich2.2 depends on mpi-default-bin, which brings OpenMPI and makes it the
  # machine's mpicc and mpiexec: give MPICH back what it had (the project builds against it).
  if [ "$(readlink -f /usr/bin/mpicc)" != "$(readlink -f /usr/bin/mpicc.mpich)" ] ||
     [ "$(readlink -f /usr/bin/mpirun)" != "$(readlink -f /usr/bin/mpirun.mpich)" ]; then
    say "OpenMPI came with them: mpicc and mpirun set back to MPICH (update-alternatives)"
    $sudo update-alternatives --set mpi /usr/bin/mpicc.mpich >/dev/null &&
      $sudo update-alternatives --set mpirun /usr/bin/mpirun.mpich >/dev/null
  fi
}

# The upstream tarball of Debian source package $1 in $DIR/src, checked against the .dsc's
# SHA-256. Only the .orig tarball is needed (the builds below do what Debian's patches do),
# so a mirror that lacks the .debian.tar does not stop it. Prints its path; 1 if none.
debian_orig() {
  local pkg=$1 src=$DIR/src tarball dsc
  mkdir -p "$src"
  tarball=$(ls "$src/${pkg}"_*.orig.tar.* 2>/dev/null | head -1)
  if [ -z "$tarball" ]; then
    if ! apt-cache showsrc "$pkg" >/dev/null 2>&1 || [ -z "$(apt-cache showsrc "$pkg" 2>/dev/null)" ]; then
      local sudo=""
      [ "$(id -u)" -ne 0 ] && sudo=sudo
      say "adding a deb-src entry for Debian's archive (/etc/apt/sources.list.d/cdag-deb-src.sources)"
      printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' |
        $sudo tee /etc/apt/sources.list.d/cdag-deb-src.sources >/dev/null
      $sudo apt-get update -q >/dev/null
    fi
    (cd "$src" && apt-get source --download-only "$pkg" >"$src/$pkg.fetch.log" 2>&1)
    tarball=$(ls "$src/${pkg}"_*.orig.tar.* 2>/dev/null | head -1)
    if [ -z "$tarball" ]; then
      say "apt-get source $pkg gave no upstream tarball: $(grep -m1 '^E:' "$src/$pkg.fetch.log")"
      return 1
    fi
  fi
  dsc=$(ls "$src/${pkg}"_*.dsc 2>/dev/null | head -1)
  if [ -n "$dsc" ]; then
    local want have
    want=$(awk -v f="$(basename "$tarball")" '/^Checksums-Sha256:/ {s = 1; next} /^[^ ]/ {s = 0} s && $3 == f {print $1}' "$dsc")
    have=$(sha256sum "$tarball" | cut -d' ' -f1)
    if [ -n "$want" ] && [ "$want" != "$have" ]; then
      say "$tarball: SHA-256 $have, the .dsc says $want"
      rm -f "$tarball"
      return 1
    fi
  fi
  echo "$tarball"
}

# HPL of hpcc 1.5.0, built with mpicc.mpich and Debian's BLAS (its CBLAS interface), and a
# main that runs HPL_main alone. hpcc's own binary is built on the way.
build_hpl() {
  local bin=$DIR/bin/xhpl
  [ -x "$bin" ] && return 0
  [ $BUILD = 1 ] || return 77
  local tarball top b
  tarball=$(debian_orig hpcc) || return 2
  top=$(tar tf "$tarball" | head -1 | cut -d/ -f1)
  b=$DIR/build/$top
  rm -rf "$b" && mkdir -p "$DIR/build" "$DIR/bin" && tar xf "$tarball" -C "$DIR/build" || return 2
  cat >"$b/hpl/Make.cdag" <<'EOF'
# hpl/Make.cdag, written by cdag's scripts/real-programs.sh: MPICH and Debian's BLAS.
SHELL        = /bin/sh
CD           = cd
CP           = cp
LN_S         = ln -s
MKDIR        = mkdir -p
RM           = /bin/rm -f
TOUCH        = touch
ARCH         = cdag
TOPdir       = ../../..
INCdir       = $(TOPdir)/include
BINdir       = $(TOPdir)/bin/$(ARCH)
LIBdir       = $(TOPdir)/lib/$(ARCH)
HPLlib       = $(LIBdir)/libhpl.a
LAlib        = -lblas
F2CDEFS      = -DAdd_ -DF77_INTEGER=int -DStringSunStyle
HPL_INCLUDES = -I$(INCdir) -I$(INCdir)/$(ARCH)
HPL_LIBS     = $(HPLlib) $(LAlib) -lm
HPL_OPTS     = -DHPL_CALL_CBLAS
HPL_DEFS     = $(F2CDEFS) $(HPL_OPTS) $(HPL_INCLUDES)
CC           = mpicc.mpich
CCNOOPT      = $(HPL_DEFS)
CCFLAGS      = $(HPL_DEFS) -O2 -fcommon -w
LINKER       = mpicc.mpich
LINKFLAGS    = $(CCFLAGS)
ARCHIVER     = ar
ARFLAGS      = r
RANLIB       = echo
EOF
  cat >"$b/xhpl.c" <<'EOF'
/* HPL alone (cdag's scripts/real-programs.sh): hpcc's HPL_main between MPI_Init and
   MPI_Finalize, none of hpcc's other benchmarks. Exit status 1 when a residual check failed. */
#include <string.h>
#include <mpi.h>
#include "hpl.h"
int main(int argc, char **argv) {
  HPL_RuntimeData rdata;
  int failure = 0;
  memset(&rdata, 0, sizeof rdata);
  MPI_Init(&argc, &argv);
  HPL_main(argc, argv, &rdata, &failure);
  MPI_Finalize();
  return failure;
}
EOF
  say "building hpcc (HPL) in $b"
  if ! (cd "$b" && make arch=cdag -j"$(nproc)" >"$b/build.log" 2>&1 &&
        mpicc.mpich -DAdd_ -DF77_INTEGER=int -DStringSunStyle -DHPL_CALL_CBLAS -Ihpl/include -Iinclude -O2 -w \
          -o "$bin" xhpl.c hpl/lib/cdag/libhpl.a -lblas -lm >>"$b/build.log" 2>&1); then
    say "building HPL failed: $b/build.log"; tail -5 "$b/build.log" >&2
    return 2
  fi
  cp "$b/hpcc" "$DIR/bin/hpcc"
}

# xdlu from ScaLAPACK's TESTING/LIN, linked with Debian's MPICH ScaLAPACK.
build_xdlu() {
  local bin=$DIR/bin/xdlu
  [ -x "$bin" ] && return 0
  [ $BUILD = 1 ] || return 77
  local b=$DIR/build/scalapack-testing lin src=${CDAG_SCALAPACK_SRC:-}
  local files="pdludriver.f pdluinfo.f pdgetrrv.f pdmatgen.f pmatgeninc.f pdlaschk.f pdlafchk.f"
  rm -rf "$b" && mkdir -p "$b" "$DIR/bin" || return 2
  if [ -z "$src" ]; then
    src=$(debian_orig scalapack) ||
      { say "no ScaLAPACK source: set CDAG_SCALAPACK_SRC to a ScaLAPACK 2.2 source tree or tarball"; return 2; }
  fi
  if [ -d "$src" ]; then
    lin=$src/TESTING/LIN
  else
    tar xf "$src" -C "$b" --wildcards '*/TESTING/LIN/*' || { say "$src: no TESTING/LIN"; return 2; }
    lin=$(ls -d "$b"/*/TESTING/LIN | head -1)
  fi
  for f in $files; do [ -f "$lin/$f" ] || { say "$lin/$f is missing"; return 2; }; done
  say "building xdlu in $b"
  # -fallow-argument-mismatch: the testers pass arrays of one type where another is declared,
  # which gfortran 10 and later refuse by default.
  if ! (cd "$lin" && mpif90.mpich -O2 -w -fallow-argument-mismatch -o "$bin" $files \
          -lscalapack-mpich -llapack -lblas >"$b/build.log" 2>&1); then
    say "building xdlu failed: $b/build.log"; tail -5 "$b/build.log" >&2
    return 2
  fi
}

# ---- inputs ----

hpl_input() {
  cat >"$1/hpccinf.txt" <<EOF
HPLinpack benchmark input file (cdag scripts/real-programs.sh)
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
6            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
$HPL_N          Ns
1            # of NBs
16           NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
1            Ps
4            Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
$HPL_BCAST            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                               Number of additional problem sizes for PTRANS
1200 10000 30000                values of N
0                               number of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64        values of NB
EOF
}

xdlu_input() {
  cat >"$1/LU.dat" <<'EOF'
'ScaLAPACK LU factorization input file (cdag scripts/real-programs.sh)'
'MPICH'
'LU.out'                output file name (if any)
6                       device out
1                       number of problems sizes
320                     values of M
320                     values of N
1                       number of NB's
32                      values of NB
1                       number of NRHS's
1                       values of NRHS
1                       Number of NBRHS's
1                       values of NBRHS
1                       number of process grids (ordered pairs of P & Q)
2                       values of P
2                       values of Q
1.0                     threshold
F                       (T or F) Test Cond. Est. and Iter. Ref. Routines
EOF
}

# The program's own verdict on a run's output (file $2): 0 when it passed.
passed() {
  case $1 in
  hpl) grep -q "PASSED" "$2" && grep -q "1 tests completed and passed residual checks" "$2" ;;
  xdlu) grep -q "PASSED" "$2" && grep -q " 0 tests completed and failed residual checks" "$2" && ! grep -q "FAILED" "$2" ;;
  esac
}

# ---- one program: run, record, analyse ----

# Row fields, filled by run_program.
declare -A ROW

first_line() { grep -v '^\s*$' "$1" | grep -m1 -iE 'error|fail|bad|cannot|refus|unsupported|not ' || grep -v '^\s*$' "$1" | tail -1; }

run_program() {
  local prog=$1 bin=$DIR/bin/$1 run=$DIR/run/$1 rc
  [ "$prog" = hpl ] && bin=$DIR/bin/xhpl
  ROW=([program]=$prog [error]="")
  rm -rf "$run" && mkdir -p "$run"
  "${prog}_input" "$run"
  # plain
  (cd "$run" && rm -f hpccoutf.txt && timeout 600 $MPIEXEC -n $NP "$bin" >plain.out 2>&1); rc=$?
  [ -f "$run/hpccoutf.txt" ] && cat "$run/hpccoutf.txt" >>"$run/plain.out"
  if [ $rc -ne 0 ] || ! passed "$prog" "$run/plain.out"; then
    ROW[plain]="fail($rc)"; ROW[error]="plain run: $(first_line "$run/plain.out")"; return 1
  fi
  ROW[plain]=pass
  # recorded
  (cd "$run" && rm -f hpccoutf.txt && timeout 900 "$CDAG" record -o "$run/rec" -- $MPIEXEC -n $NP "$bin" >record.out 2>&1); rc=$?
  [ -f "$run/hpccoutf.txt" ] && cat "$run/hpccoutf.txt" >>"$run/record.out"
  if ! passed "$prog" "$run/record.out"; then
    ROW[recorded]="fail($rc)"; ROW[error]="recorded run: the program's check did not pass: $(first_line "$run/record.out")"; return 1
  fi
  if [ $rc -ne 0 ]; then
    ROW[recorded]="fail($rc)"
    ROW[error]="$(grep -m1 -E '^cdag record: .*(malformed|error|failed|no phase)' "$run/record.out" || grep '^cdag record:' "$run/record.out" | tail -1)"
    return 1
  fi
  ROW[recorded]=pass
  local phases=("$run"/rec/phase-*.cdag) ph nph=0 ops=0 computes=0 stages=0 findings=() found=()
  local -A st=([check]=- [analyze]=- [verify]=- [model]=- [replay]=-)
  local written="" compiled=""
  [ -e "${phases[0]}" ] || { ROW[phases]=0; ROW[error]="the recording has no phase file"; return 1; }
  local name=""
  # mark STEP OK MESSAGE: a step's status over all phases (one failure fails it) and the message
  mark() {
    if [ "$2" = 0 ]; then [ "${st[$1]}" = fail ] || st[$1]=pass; return; fi
    st[$1]=fail; ROW[error]+="${ROW[error]:+; }cdag $1 $name: $3"
  }
  # the run as phase x repeats, and the distinct phases expanded back to the flat recording
  "$CDAG" analyze "$run/rec" >"$run/analyze-dir.out" 2>&1 &&
    ROW[run]=$(head -1 "$run/analyze-dir.out" | sed 's/.*phase x repeats: //') || ROW[run]=fail
  # (both merged from copies of the parts: the phase files' header names the command only
  # when `cdag record` ran it)
  rm -rf "$run/xc" && mkdir -p "$run/xc/flat" "$run/xc/dist" && cp "$run"/rec/rank-*.part "$run/xc/flat/" &&
    cp "$run"/rec/rank-*.part "$run/xc/dist/" &&
    "$CDAG" record --merge --flat "$run/xc/flat" >/dev/null 2>&1 &&
    "$CDAG" record --merge "$run/xc/dist" >/dev/null 2>&1 &&
    "$CDAG" record --expand "$run/xc/dist" -o "$run/xc/exp" >/dev/null 2>&1 &&
    diff -r -x index.json -x 'rank-*' "$run/xc/flat" "$run/xc/exp" >/dev/null && ROW[expand]=pass || ROW[expand]=fail
  [ "${ROW[expand]}" = pass ] || ROW[error]+="${ROW[error]:+; }cdag record --expand: not the flat recording ($run/xc)"
  for ph in "${phases[@]}"; do
    nph=$((nph + 1))
    name=$(basename "$ph")
    "$CDAG" check "$ph" >"$run/check.out" 2>&1; mark check $? "$(tail -1 "$run/check.out")"
    [ "${st[check]}" = pass ] || continue   # a file that does not load has nothing else to show
    ops=$((ops + $(sed -n 's/.* \([0-9][0-9]*\) ops .*/\1/p' "$run/check.out")))
    computes=$((computes + $(grep -cE '^[[:space:]]*([A-Za-z0-9_.]+:[[:space:]]*)?compute[[:space:]]' "$ph")))
    "$CDAG" analyze "$ph" --json >"$run/analyze.json" 2>"$run/analyze.err"; mark analyze $? "$(tail -1 "$run/analyze.err")"
    if [ "${st[analyze]}" = pass ]; then
      "$CDAG" analyze "$ph" >"$run/${name%.cdag}.report" 2>&1
      # the first line is the phase's number of stages (1 without computations), then one per collective
      mapfile -t found < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(r.get("stages", {}).get("count", 1))
for c in r["collectives"]:
    stage = "stage %d: " % c["stage"] if "stage" in c else ""
    root = "" if c.get("root") is None else " from %s" % c["root"]
    ranks = "all ranks" if c["ranks"] == "all" else "ranks %s" % c["ranks"]
    native = ", native" if c.get("native") else ""
    print("%s%s%s over %s (%d transfers%s)" % (stage, c["kind"], root, ranks, c["transfers"], native))' "$run/analyze.json")
      stages=$((stages + found[0]))
      findings+=("${found[@]:1}")
    fi
    # each command runs even when analysis failed: each says in its own words where it stops
    timeout 600 "$CDAG" verify "$ph" >"$run/verify.out" 2>&1; mark verify $? "$(tail -1 "$run/verify.out")"
    timeout 600 "$CDAG" model "$ph" >"$run/model.out" 2>&1; mark model $? "$(tail -1 "$run/model.out")"
    (cd "$run" && timeout 900 $MPIEXEC -n $NP "$CDAG" replay "$ph" --iterations 2 >"$run/replay.out" 2>&1)
    rc=$?
    [ $rc = 0 ] && ! grep -q "same memory as written and compiled on every rank" "$run/replay.out" && rc=1
    mark replay $rc "$(first_line "$run/replay.out")"
    if [ $rc = 0 ]; then
      written+="${written:+,}$(sed -n 's/^as written: *\([0-9.]*\) us per iteration.*/\1/p' "$run/replay.out")"
      compiled+="${compiled:+,}$(sed -n 's/^compiled: *\([0-9.]*\) us per iteration.*/\1/p' "$run/replay.out")"
    fi
  done
  ROW[phases]=$nph; ROW[ops]=$ops; ROW[computes]=$computes; ROW[stages]=$stages
  if [ ${#findings[@]} -eq 0 ]; then ROW[findings]="none"; else ROW[findings]=$(IFS=';'; echo "${findings[*]}" | sed 's/;/; /g'); fi
  local k
  for k in check analyze verify model replay; do ROW[$k]=${st[$k]}; done
  ROW[written_us]=${written:--}; ROW[compiled_us]=${compiled:--}
  for k in check analyze verify model replay; do [ "${st[$k]}" = pass ] || return 1; done
  [ "${ROW[expand]}" = pass ]
}

# ---- main ----

COLS=(program plain recorded phases run expand ops computes stages findings check analyze verify model replay written_us compiled_us error)
[ $BUILD = 0 ] || need_packages || { say "could not install the packages the builds need"; exit 2; }
status=0
rows=()
ok=0
bad=0
for prog in ${ONLY//,/ }; do
  case $prog in hpl|xdlu) ;; *) say "unknown program $prog (hpl, xdlu)"; exit 2 ;; esac
  "build_$prog"; rc=$?
  if [ $rc -eq 77 ]; then
    say "$prog is not built in $DIR/bin (run scripts/real-programs.sh once to build it); skipped"
    exit 77
  fi
  if [ $rc -ne 0 ]; then
    ROW=([program]=$prog [plain]="not built" [error]="could not obtain or build $prog (messages above)")
    status=2
    bad=$((bad + 1))
  elif run_program "$prog"; then
    ok=$((ok + 1))
  else
    bad=$((bad + 1))
    [ $status -eq 0 ] && status=1
  fi
  line=""
  for c in "${COLS[@]}"; do line+="${line:+	}${ROW[$c]:--}"; done
  rows+=("$line")
  say "$prog done: $DIR/run/$prog"
done

header=$(IFS=$'\t'; echo "${COLS[*]}")
[ -n "$TABLE" ] && { echo "$header"; printf '%s\n' "${rows[@]}"; } >"$TABLE"
echo
{ echo "$header"; printf '%s\n' "${rows[@]}"; } | python3 -c '
import sys
rows = [l.rstrip("\n").split("\t") for l in sys.stdin]
head, body = rows[0], rows[1:]
short = [c for c in head if c not in ("findings", "error")]
w = {c: max(len(c), *(len(r[head.index(c)]) for r in body)) for c in short}
print(" | ".join(c.ljust(w[c]) for c in short))
print("-+-".join("-" * w[c] for c in short))
for r in body:
    print(" | ".join(r[head.index(c)].ljust(w[c]) for c in short))
for r in body:
    print("%s findings: %s" % (r[0], r[head.index("findings")]))
    if r[head.index("error")] not in ("", "-"):
        print("%s failures: %s" % (r[0], r[head.index("error")]))'
echo "real programs (times in us per iteration, as written and compiled, replay --iterations 2): recordings in $DIR/run"
echo "$ok passed, $bad failed"
exit $status
