#!/usr/bin/env bash
# cdag — installs the Debian packages cdag needs to build, test and fuzz (idempotent).
# Runs as root or through sudo; does nothing when everything is already installed.
set -euo pipefail
PKGS=(build-essential cmake ninja-build pkg-config mpich libmpich-dev gfortran libjudy-dev check clang valgrind python3
      yorick-mpy-mpich2 libtachyon-mpich-0)
# Real MPI programs the recorder's tests run (tests/record/real.sh): Message Passing Yorick
# and the Tachyon ray tracer, MPICH builds. tachyon-bin-nox comes after libtachyon-mpich-0,
# which satisfies its "libtachyon" (else apt picks the threads-only library).
LATE=(tachyon-bin-nox)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
late=()
for p in "${LATE[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || late+=("$p")
done
[ ${#missing[@]} -eq 0 ] && [ ${#late[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "cdag: installing ${missing[*]} ${late[*]}" >&2
$SUDO apt-get update -q
[ ${#missing[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
[ ${#late[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${late[@]}"
