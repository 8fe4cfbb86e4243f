#!/usr/bin/env python3
"""cdag — scripts/mpich-tests.py: MPICH's own test suite, plain and under `cdag record`.

Fetches the source of Debian's `mpich` package (apt-get source, with a deb-src entry added
when the machine has none), configures its test/mpi against the installed MPICH, builds the
chosen directories and runs every testlist entry of at most --max-np processes twice: plain,
then recorded. A recorded run passes when the program's output is the plain run's; its
recording must then load (`cdag check`) and analyse (`cdag analyze`) phase by phase. Prints
one row per entry and the totals, and writes them as TSV (--table).

  scripts/mpich-tests.py [--cdag build/cdag] [--dirs coll,pt2pt,datatype,rma] [--max-np 4]
                         [--only NAME,...] [--work build-mpich] [--table FILE] [--jobs 1]

Exit 0 when every entry that passes plain passes recorded with the same output and its
recording loads and analyses; 1 otherwise; 2 when the suite cannot be built.
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
        return 124, out


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
            if rc:
                sys.exit(f"mpich-tests: apt-get source mpich failed:\n{out[-2000:]}")
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


def entries(tdir, d, max_np, only):
    """(dir, name, np, args, env, time limit) of d's testlist, nested lists followed."""
    path = os.path.join(tdir, d, "testlist")
    if not os.path.exists(path):
        return
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if not line:
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


def run_one(cdag, tdir, e, work):
    d, name, np, args, env, limit = e
    cwd = os.path.join(tdir, d)
    full_env = dict(os.environ, **env)
    cmd = ["mpiexec", "-n", str(np), "./" + name] + args
    row = {"test": f"{d}/{name} {np} {' '.join(args)}".strip()}
    if not os.path.exists(os.path.join(cwd, name)):
        row.update(plain="not built")
        return row
    t0 = time.time()
    rc, plain = sh(cmd, cwd=cwd, timeout=limit, env=full_env)
    row["plain_s"] = round(time.time() - t0, 2)
    ok = rc == 0 and "No Errors" in plain
    row["plain"] = "pass" if ok else f"fail({rc})"
    if not ok:
        return row
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
            first_error = first_error or lout.strip().splitlines()[-1][:200]
            continue
        arc, aout = sh([cdag, "analyze", ph], timeout=600)
        if arc:
            bad_analyse += 1
            first_error = first_error or aout.strip().splitlines()[-1][:200]
    row["loads"] = "yes" if not bad_load else f"no({bad_load})"
    row["analyses"] = "yes" if not bad_analyse and not bad_load else f"no({bad_analyse})"
    try:
        idx = json.load(open(os.path.join(rec, "index.json")))
        row["unsupported"] = ",".join(sorted(idx.get("unsupported", {}))) or "-"
    except (OSError, ValueError):
        row["unsupported"] = "no index.json"
    said = [l for l in out.splitlines() if l.startswith("cdag record:")]
    row["error"] = first_error or (said[-1][:200] if rrc and said else "")
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cdag", default=os.path.join(ROOT, "build", "cdag"))
    ap.add_argument("--dirs", default="coll,pt2pt,datatype,rma")
    ap.add_argument("--max-np", type=int, default=4)
    ap.add_argument("--only", default="")
    ap.add_argument("--work", default=os.path.join(ROOT, "build-mpich"))
    ap.add_argument("--table", default="")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    cdag = os.path.abspath(a.cdag)
    if not os.access(cdag, os.X_OK):
        sys.exit(f"mpich-tests: {cdag} is not built")
    work = os.path.abspath(a.work)
    dirs = [d for d in a.dirs.split(",") if d]
    tdir = fetch(work)
    build(tdir, dirs, a.jobs)
    only = set(x for x in a.only.split(",") if x)
    rows = []
    for d in dirs:
        for e in entries(tdir, d, a.max_np, only):
            r = run_one(cdag, tdir, e, work)
            rows.append(r)
            print("\t".join(str(r.get(k, "")) for k in
                            ("test", "plain", "recorded", "phases", "loads", "analyses", "unsupported", "error")),
                  flush=True)
    keys = ["test", "plain", "plain_s", "recorded", "rec_s", "phases", "loads", "analyses", "unsupported", "error"]
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
    ok = len(passing) == len(recorded) == len(loads) == len(analyses)
    print(f"{len(analyses)} passed, {len(passing) - len(analyses)} failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
