#!/usr/bin/env bash
# cdag — installs the Debian packages cdag needs to build, test and fuzz (idempotent).
# Runs as root or through sudo; does nothing when everything is already installed.
set -euo pipefail
PKGS=(build-essential cmake pkg-config mpich libmpich-dev gfortran libjudy-dev check clang valgrind python3)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "cdag: installing ${missing[*]}" >&2
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
