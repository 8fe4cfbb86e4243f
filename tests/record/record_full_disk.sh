#!/usr/bin/env bash
# cdag tests — tests/record/record_full_disk.sh CDAG SOURCE_DIR MPIEXEC PROGRAM: a recording
# into a full file system names the reason ("No space left on device"), never a stale one.
# posix_fallocate returns its error instead of setting errno, and the message once read
# errno: "File exists", left by an earlier mkdir. The file system is a 32 KiB tmpfs, which
# needs root (CI runs as root); elsewhere the test says it cannot run and passes.
set -u
cdag=$1; src=$2; mpiexec=$3; prog=$4
. "$src/tests/cli/lib/expect.sh"
fs=$tmp/fs
mkdir -p "$fs"
if [ "$(id -u)" != 0 ] || ! mount -t tmpfs -o size=32k tmpfs "$fs" 2>/dev/null; then
  echo "record_full_disk: cannot mount a small tmpfs here (needs root): nothing checked"
  finish
  exit 0
fi
trap 'umount "$fs" 2>/dev/null; rm -rf "$tmp"' EXIT
expect_status 1 timeout 120 "$cdag" record --strict -o "$fs/rec" -- "$mpiexec" -n 2 "$prog" "$tmp"
expect_err "No space left on device"
grep -q "File exists" "$tmp/err" && fail "a stale errno in the message: $(cat "$tmp/err")"
finish
