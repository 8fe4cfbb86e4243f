#!/usr/bin/env bash
# cdag tests — `make install` puts libcdag, cdag.h, cdag.pc and the CMake package in place:
# a user program builds against it with pkg-config and with find_package(cdag), and runs; so it
# does against the build tree with pkg-config before any install.
# Usage: install.sh CDAG_BINARY SOURCE_DIR (the build directory is the binary's).
set -euo pipefail
build=$(dirname "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
test -f "$tmp/prefix/include/cdag.h"
test -x "$tmp/prefix/bin/cdag"
# `cdag` starts without MPI; the commands mpiexec launches exec libexec/cdag/cdag-mpi.
if grep -q libmpi <<<"$(ldd "$tmp/prefix/bin/cdag")"; then echo "install: bin/cdag loads MPI" >&2; exit 1; fi
test -x "$tmp/prefix/libexec/cdag/cdag-mpi"
printf 'num_ranks 2\nrank 0 {\n  send 8 to 1 tag 0 addr 0x100\n}\nrank 1 {\n  recv 8 from 0 tag 0 addr 0x200\n}\n' > "$tmp/two.cdag"
out=$(mpiexec -n 2 "$tmp/prefix/bin/cdag" replay "$tmp/two.cdag" --iterations 1 --repeat 1)
grep -q "same memory" <<<"$out"
libdir=$(ls -d "$tmp"/prefix/lib*/ | head -1)
cat > "$tmp/user.c" <<'C'
#include <cdag.h>
#include <stdio.h>
int main(void) {
  cdag_graph *g;
  cdag_op s, r;
  if (cdag_graph_create_global(2, &g) || cdag_rank_send(g, 0, 0, 8, 1, 0, &s) ||
      cdag_rank_recv(g, 1, 0, 8, 0, 0, &r)) { printf("%s\n", cdag_error_message()); return 1; }
  int n; int64_t ops;
  cdag_graph_info(g, &n, &ops);
  printf("user program: %d ranks, %lld ops, cdag %s (built with %s)\n", n, (long long)ops, cdag_version(),
         CDAG_VERSION);
  if (cdag_version_number() != CDAG_VERSION_NUMBER) return 1;   /* cdag_version.h is installed beside cdag.h */
  cdag_graph_free(&g);
  return ops == 2 ? 0 : 1;
}
C
# The build tree, before any install: cdag-uninstalled.pc, which pkg-config prefers, names the
# source's cdag.h, the generated cdag_version.h and the built library with its run path.
# shellcheck disable=SC2046
cc -o "$tmp/user_tree" "$tmp/user.c" $(PKG_CONFIG_PATH="$build" pkg-config --cflags --libs cdag)
"$tmp/user_tree"
test ! -e "$build/cdag.pc"   # the installed layout's file lives in pkgconfig/, naming no build path
export PKG_CONFIG_PATH="$libdir/pkgconfig"
pkg-config --exists cdag
# shellcheck disable=SC2046
cc -o "$tmp/user_pc" "$tmp/user.c" $(pkg-config --cflags --libs cdag) -Wl,-rpath,"$libdir"
"$tmp/user_pc"
mkdir -p "$tmp/proj"
cp "$tmp/user.c" "$tmp/proj/"
cat > "$tmp/proj/CMakeLists.txt" <<'C'
cmake_minimum_required(VERSION 3.18)
project(user C)
find_package(cdag REQUIRED)
add_executable(user user.c)
target_link_libraries(user PRIVATE cdag::cdag)
C
cmake -S "$tmp/proj" -B "$tmp/proj/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/proj/build" >/dev/null
"$tmp/proj/build/user"
# Fortran: module cdag, when MPI's Fortran compiler is there (the build then makes it).
if command -v mpif90 >/dev/null; then
  test -f "$tmp/prefix/include/cdag.mod" || { echo "install: mpif90 found but cdag.mod not installed" >&2; exit 1; }
  cat > "$tmp/user.f90" <<'F'
program user
  use mpi_f08
  use cdag
  implicit none
  integer, target :: x(4), y(4)
  integer :: me, p, ierr
  type(cdag_graph) :: g
  type(cdag_schedule) :: s
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call MPI_Comm_size(MPI_COMM_WORLD, p)
  call cdag_graph_create(MPI_COMM_WORLD, g)
  call cdag_send(g, x, modulo(me + 1, p), 0)
  call cdag_recv(g, y, modulo(me - 1, p), 0)
  call cdag_compile(g, s)
  x = me + 7
  call cdag_run(s, ierr)
  print '(a,i0)', 'fortran user program: ', y(1)
  call cdag_schedule_free(s)
  call cdag_graph_free(g)
  call MPI_Finalize()
  if (ierr /= CDAG_OK .or. y(1) /= 7) error stop 1
end program user
F
  # shellcheck disable=SC2046
  mpif90 -o "$tmp/user_f" "$tmp/user.f90" $(pkg-config --cflags --libs cdag-fortran) -Wl,-rpath,"$libdir"
  "$tmp/user_f"
  mkdir -p "$tmp/projf"
  cp "$tmp/user.f90" "$tmp/projf/"
  cat > "$tmp/projf/CMakeLists.txt" <<'C'
cmake_minimum_required(VERSION 3.18)
project(userf C Fortran)   # libcdag links MPI's C library: C is enabled too
find_package(cdag REQUIRED)
add_executable(userf user.f90)
target_link_libraries(userf PRIVATE cdag::cdag_fortran)
C
  cmake -S "$tmp/projf" -B "$tmp/projf/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
  cmake --build "$tmp/projf/build" >/dev/null
  "$tmp/projf/build/userf"
fi
echo "install: pkg-config and find_package(cdag) both work"
