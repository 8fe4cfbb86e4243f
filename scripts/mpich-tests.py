#!/usr/bin/env python3
"""cdag — scripts/mpich-tests.py: MPICH's own test suite, plain and under `cdag record`.

Fetches the source of Debian's `mpich` package (apt-get source, with a deb-src entry added
when the machine has none), configures its test/mpi against the installed MPICH, builds the
chosen directories and runs every testlist entry of at most --max-np processes twice: plain,
then recorded. A recorded run passes when the program's output is the plain run's; its
recording must then load (`cdag check`) and analyse (`cdag analyze`) phase by phase. Prints
one row per entry and the totals, and writes them as TSV (--table). With --replay N, the
first N recordings whose phase moves data are replayed (`mpiexec -n P cdag replay`, which
runs the phase as written and compiled and fails unless both leave the same memory; a phase
it refuses as too large for the node's memory is `not replayed`, not a failure).

--subset ci runs a fixed sample of the four directories (SUBSET_CI: every family the recorder
knows, at most 4 processes) built without configure: each program compiled alone with mpicc
against MPICH's test harness (util/mtest*.c) and a mpitestconf.h written for Debian on x86-64
and aarch64 (CONF_H). That is what the test suite runs (ctest's mpich_subset, with
CDAG_MPICH_TESTS=1 or when the source is already fetched).

  scripts/mpich-tests.py [--cdag build/cdag] [--dirs coll,pt2pt,datatype,rma] [--max-np 4]
                         [--only NAME,...] [--subset ci] [--replay N] [--work build-mpich]
                         [--table FILE] [--jobs 1] [--repeat N]

--repeat N records each entry that passes plain N times (its plain run once): the entry
passes when every recorded run does, and its row names the first run that did not.

Exit 0 when every entry that passes plain passes recorded with the same output, its
recording loads and analyses and the replays leave the same memory (with --subset, every
program of the sample must also pass plain); 1 otherwise; 2 when the suite cannot be built;
77 when Debian's archive has no source to fetch.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
# The sample of --subset ci: (directory, program, processes), one or more per family the
# recorder knows; none needs MPICH's datatype pools (dtpools), so each builds alone.
SUBSET_CI = [
    ("coll", "nonblocking", 4), ("coll", "redscat", 4), ("coll", "scantst", 4), ("coll", "coll12", 4),
    ("coll", "neighb_alltoallv", 4), ("pt2pt", "mprobe", 2), ("pt2pt", "icsend", 4), ("datatype", "tfree", 2),
    ("rma", "test1", 2), ("coll", "icbcast", 4),
]
# What configure finds on Debian (x86-64, aarch64: LP64, glibc) and the harness reads.
CONF_H = """#ifndef MPITESTCONF_H_INCLUDED
#define MPITESTCONF_H_INCLUDED
#define HAVE_DLFCN_H 1
#define HAVE_DOUBLE__COMPLEX 1
#define HAVE_FLOAT__COMPLEX 1
#define HAVE_GETRUSAGE 1
#define HAVE_INTTYPES_H 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_LONG_DOUBLE__COMPLEX 1
#define HAVE_LONG_LONG 1
#define HAVE_MEMORY_H 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_PTHREAD_H 1
#define HAVE_STDARG_H 1
#define HAVE_STDINT_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRDUP 1
#define HAVE_STRINGS_H 1
#define HAVE_STRING_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_UNISTD_H 1
#define HAVE_USLEEP 1
#define HAVE__BOOL 1
#define POINTERINT_t long
#define SIZEOF_INT 4
#define SIZEOF_LONG 8
#define SIZEOF_LONG_LONG 8
#define SIZEOF_SHORT 2
#define SIZEOF_VOID_P 8
#define STDC_HEADERS 1
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX
#define USE_LONG_DOUBLE_COMPLEX 1
#endif
"""
CONFIGURE = ["--with-mpi=/usr", "--enable-fortran=no", "--disable-cxx", "--disable-romio",
             "--disable-spawn", "--enable-rma", "--disable-ft-tests", "--disable-perftest", "CC=mpicc"]


def sh(cmd, cwd=None, timeout=None, env=None):
    """Runs cmd; returns (exit code, stdout + stderr). A timeout is exit code 124."""
    try:
        p = subprocess.run(cmd, cwd=cwd, timeout=timeout, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, errors="replace")
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return 124, out + f"\n{os.path.basename(cmd[0])} {cmd[1]}: timed out after {timeout} s"


def last_line(out, silent):
    """The last line of a tool's output (a killed tool may print none: `silent` then)."""
    lines = out.strip().splitlines()
    return lines[-1][:200] if lines else silent


def fetch(work):
    """The path of test/mpi, fetched and extracted into work when missing."""
    found = glob.glob(os.path.join(work, "mpich-*", "test", "mpi", "configure"))
    if found:
        return os.path.dirname(found[0])
    os.makedirs(work, exist_ok=True)
    if not glob.glob(os.path.join(work, "mpich_*.orig.tar.*")):
        if sh(["apt-get", "source", "--download-only", "mpich"], cwd=work)[0] != 0:
            src = "/etc/apt/sources.list.d/cdag-mpich-src.sources"
            with open(src, "w") as f:  # Debian's own archive, source packages only
                f.write("Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\n"
                        "Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n")
            sh(["apt-get", "update", "-q"])
            rc, out = sh(["apt-get", "source", "--download-only", "mpich"], cwd=work)
            if rc:   # no archive to fetch from: nothing can run (exit 77, a skipped test for ctest)
                print(f"mpich-tests: apt-get source mpich failed, MPICH's tests cannot run:\n{out[-2000:]}")
                sys.exit(77)
    tarball = glob.glob(os.path.join(work, "mpich_*.orig.tar.*"))[0]
    top = os.path.basename(tarball).split(".orig")[0].replace("_", "-")
    rc, out = sh(["tar", "xf", tarball, f"{top}/test/mpi"], cwd=work)
    if rc:
        sys.exit(f"mpich-tests: extracting {tarball} failed:\n{out[-2000:]}")
    return os.path.join(work, top, "test", "mpi")


def build(tdir, dirs, jobs):
    if not os.path.exists(os.path.join(tdir, "Makefile")):
        rc, out = sh(["./configure"] + CONFIGURE, cwd=tdir)
        if rc:
            sys.exit(f"mpich-tests: configure failed:\n{out[-3000:]}")
    for d in ["util"] + dirs:
        rc, out = sh(["make", f"-j{jobs}", "-k"], cwd=os.path.join(tdir, d))
        if rc:  # -k: a test that does not build is reported when it is run, not fatal
            print(f"mpich-tests: some programs of {d} did not build (they count as failing plain)")


def build_direct(tdir, chosen, work):
    """Builds the chosen programs without configure: the harness once, then each program."""
    conf = os.path.join(tdir, "include", "mpitestconf.h")
    if not os.path.exists(conf):
        with open(conf, "w") as f:
            f.write(CONF_H)
    obj = os.path.join(work, "obj")
    os.makedirs(obj, exist_ok=True)
    inc = ["-I", os.path.join(tdir, "include")]
    harness = []
    for src in ("mtest.c", "mtest_common.c", "mtest_single.c", "dtypes.c"):
        o = os.path.join(obj, src[:-2] + ".o")
        if not os.path.exists(o):
            rc, out = sh(["mpicc", "-O1", "-w", "-c"] + inc + [os.path.join(tdir, "util", src), "-o", o])
            if rc:
                sys.exit(f"mpich-tests: the harness ({src}) does not build:\n{out[-2000:]}")
        harness.append(o)
    for d, name, _ in chosen:
        exe = os.path.join(tdir, d, name)
        if not os.path.exists(exe):
            rc, out = sh(["mpicc", "-O1", "-w"] + inc + [exe + ".c"] + harness + ["-lm", "-o", exe])
            if rc:
                print(f"mpich-tests: {d}/{name} does not build:\n{out[-800:]}")


def entries(tdir, d, max_np, only):
    """(dir, name, np, args, env, time limit) of d's testlist, nested lists followed."""
    path = os.path.join(tdir, d, "testlist")
    if not os.path.exists(path):   # not configured (--subset): the template, whose @...@ lines go
        path += ".in"
    if not os.path.exists(path):
        return
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if not line or "@" in line:
            continue
        w = line.split()
        if len(w) == 1 and os.path.isdir(os.path.join(tdir, d, w[0])):
            yield from entries(tdir, os.path.join(d, w[0]), max_np, only)
            continue
        if len(w) < 2 or not w[1].isdigit():
            continue
        name, np = w[0], int(w[1])
        opts = w[2:]
        if np > max_np or any(o.startswith("xfail=") for o in opts):
            continue
        if only and name not in only:
            continue
        args = [o[4:] for o in opts if o.startswith("arg=")]
        env = dict(o[4:].split("=", 1) for o in opts if o.startswith("env=") and "=" in o[4:])
        limit = next((int(o[10:]) for o in opts if o.startswith("timeLimit=") and o[10:].isdigit()), 180)
        yield d, name, np, args, env, limit


def run_one(cdag, tdir, e, work, repeat=1):
    """Plain, then recorded `repeat` times (a recording that fails one run in ten is a bug:
    a duplicate position once did exactly that); the row is the first failing run's, with
    the first run's times, else the first run's."""
    row = run_recorded(cdag, tdir, e, work)
    for k in range(2, repeat + 1):
        if row.get("plain") != "pass" or not row_passes(row):
            break
        again = run_recorded(cdag, tdir, e, work, plain_ok=row)
        if not row_passes(again):
            again["error"] = f"run {k} of {repeat}: " + (again.get("error") or again.get("recorded", ""))
            again["plain_s"], again["rec_s"] = row["plain_s"], row["rec_s"]
            return again
    return row


def row_passes(row):
    return row.get("recorded") == "pass" and row.get("loads") == "yes" and row.get("analyses") == "yes"


def run_recorded(cdag, tdir, e, work, plain_ok=None):
    d, name, np, args, env, limit = e
    cwd = os.path.join(tdir, d)
    full_env = dict(os.environ, **env)
    cmd = ["mpiexec", "-n", str(np), "./" + name] + args
    row = {"test": f"{d}/{name} {np} {' '.join(args)}".strip()}
    if not os.path.exists(os.path.join(cwd, name)):
        row.update(plain="not built")
        return row
    if plain_ok:   # a repeat: the first run's plain output
        row.update(plain="pass", plain_s=plain_ok["plain_s"])
        plain = plain_ok["plain_out"]
    else:
        t0 = time.time()
        rc, plain = sh(cmd, cwd=cwd, timeout=limit, env=full_env)
        row["plain_s"] = round(time.time() - t0, 2)
        ok = rc == 0 and "No Errors" in plain
        row["plain"] = "pass" if ok else f"fail({rc})"
        if not ok:
            return row
    row["plain_out"] = plain
    rec = os.path.join(work, "rec", re.sub(r"[^A-Za-z0-9_.-]", "_", row["test"]))
    shutil.rmtree(rec, ignore_errors=True)
    os.makedirs(os.path.dirname(rec), exist_ok=True)
    t0 = time.time()
    rrc, out = sh([cdag, "record", "-o", rec, "--"] + cmd, cwd=cwd, timeout=limit * 3, env=full_env)
    row["rec_s"] = round(time.time() - t0, 2)
    lines = out.splitlines()
    summary = max((i for i, l in enumerate(lines) if re.match(r"recorded \d+ processes:", l)), default=len(lines))
    prog_out = "\n".join(l for l in lines[:summary] if not l.startswith("cdag record:"))  # cdag's own lines go
    same = sorted(prog_out.split()) == sorted(plain.split())
    row["recorded"] = "pass" if rrc == 0 and same else (f"fail({rrc})" if rrc else "other output")
    phases = sorted(glob.glob(os.path.join(rec, "phase-*.cdag")))
    row["phases"] = len(phases)
    bad_load = bad_analyse = 0
    first_error = ""
    for ph in phases:
        lrc, lout = sh([cdag, "check", ph], timeout=300)
        if lrc:
            bad_load += 1
            first_error = first_error or last_line(lout, f"cdag check exited {lrc}")
            continue
        arc, aout = sh([cdag, "analyze", ph], timeout=600)
        if arc:
            bad_analyse += 1
            first_error = first_error or last_line(aout, f"cdag analyze exited {arc}")
    row["loads"] = "yes" if not bad_load else f"no({bad_load})"
    row["analyses"] = "yes" if not bad_analyse and not bad_load else f"no({bad_analyse})"
    try:
        idx = json.load(open(os.path.join(rec, "index.json")))
        row["unsupported"] = ",".join(sorted(idx.get("unsupported", {}))) or "-"
    except (OSError, ValueError):
        idx = {}
        row["unsupported"] = "no index.json"
    # a recording the merge refused has no phase: `cdag record` still exits with the program's
    # status, so the index must say the check passed and nothing was malformed
    said = [l for l in out.splitlines() if l.startswith("cdag record:")]
    malformed = (idx.get("malformed") or {}).get("lines", 0)
    if malformed or idx.get("check", {}).get("ok") is False or (not phases and idx.get("calls")):
        row["loads"] = row["analyses"] = "no(merge)"
        first_error = first_error or (said[0][:200] if said else "the merge wrote no phase")
    row["np"] = np
    row["rec"] = rec
    row["error"] = first_error or (said[-1][:200] if rrc and said else "")
    return row


def replay(cdag, row):
    """Replays the recording's phases that move data: 'same memory', or why not."""
    for ph in sorted(glob.glob(os.path.join(row["rec"], "phase-*.cdag"))):
        with open(ph) as f:
            if not any(" send " in l or l.lstrip().startswith(("send ", "bcast", "all", "gather", "scatter", "reduce"))
                       for l in f):
                continue
        rc, out = sh(["mpiexec", "-n", str(row["np"]), cdag, "replay", ph, "--iterations", "1", "--repeat", "1"],
                     timeout=600)
        whole = (out.strip().splitlines() or ["?"])[-1]
        last = whole[:160]
        if rc and "out of memory" in whole and "fewer processes per node" in whole:   # refused: not a difference
            return "not replayed: " + last
        if rc:
            return "differs: " + last
        row["replayed"] = "same memory"
    return row.get("replayed", "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cdag", default=os.path.join(ROOT, "build", "cdag"))
    ap.add_argument("--dirs", default="coll,pt2pt,datatype,rma")
    ap.add_argument("--max-np", type=int, default=4)
    ap.add_argument("--only", default="")
    ap.add_argument("--subset", choices=["ci"], default=None)
    ap.add_argument("--replay", type=int, default=0)
    ap.add_argument("--work", default=os.path.join(ROOT, "build-mpich"))
    ap.add_argument("--table", default="")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    cdag = os.path.abspath(a.cdag)
    if not os.access(cdag, os.X_OK):
        sys.exit(f"mpich-tests: {cdag} is not built")
    work = os.path.abspath(a.work)
    dirs = [d for d in a.dirs.split(",") if d]
    tdir = fetch(work)
    only = set(x for x in a.only.split(",") if x)
    chosen = None
    if a.subset:
        chosen = [c for c in SUBSET_CI if not only or c[1] in only]
        dirs = sorted(set(c[0] for c in chosen), key=["coll", "pt2pt", "datatype", "rma"].index)
        build_direct(tdir, chosen, work)
    else:
        build(tdir, dirs, a.jobs)
    rows = []
    replays = a.replay
    for d in dirs:
        for e in entries(tdir, d, a.max_np, only):
            if chosen is not None and (d, e[1], e[2]) not in chosen:
                continue
            if chosen is not None and e[3] + list(e[4]):   # the sample's plain entries only
                continue
            r = run_one(cdag, tdir, e, work, max(1, a.repeat))
            if replays and r.get("recorded") == "pass" and r.get("analyses") == "yes":
                r["replay"] = replay(cdag, r)
                replays -= r["replay"] == "same memory"
            rows.append(r)
            print("\t".join(str(r.get(k, "")) for k in
                            ("test", "plain", "recorded", "phases", "loads", "analyses", "unsupported", "replay",
                             "error")),
                  flush=True)
    keys = ["test", "plain", "plain_s", "recorded", "rec_s", "phases", "loads", "analyses", "unsupported", "replay",
            "error"]
    if a.table:
        with open(a.table, "w") as f:
            f.write("\t".join(keys) + "\n")
            for r in rows:
                f.write("\t".join(str(r.get(k, "")) for k in keys) + "\n")
    passing = [r for r in rows if r.get("plain") == "pass"]
    recorded = [r for r in passing if r.get("recorded") == "pass"]
    loads = [r for r in recorded if r.get("loads") == "yes"]
    analyses = [r for r in loads if r.get("analyses") == "yes"]
    unsup = [r for r in recorded if r.get("unsupported") not in ("-", None)]
    print(f"mpich-tests: {len(rows)} entries, {len(passing)} pass plain, {len(recorded)} pass recorded with the "
          f"same output, {len(loads)} recordings load, {len(analyses)} analyse, {len(unsup)} list unsupported calls")
    replayed = [r for r in rows if r.get("replay") == "same memory"]
    bad_replay = [r for r in rows if r.get("replay", "").startswith("differs")]
    if a.replay:
        print(f"mpich-tests: {len(replayed)} recordings replayed with the same memory, {len(bad_replay)} did not")
    ok = len(passing) == len(recorded) == len(loads) == len(analyses) and not bad_replay
    if chosen is not None and len(passing) < len(chosen):   # the sample must run whole
        print(f"mpich-tests: {len(chosen) - len(passing)} of the sample's {len(chosen)} programs did not pass plain")
        ok = False
    print(f"{len(analyses)} passed, {len(passing) - len(analyses) + len(bad_replay)} failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
