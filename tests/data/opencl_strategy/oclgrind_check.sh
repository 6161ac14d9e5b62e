#!/bin/sh
# Runs two steps of both strategies on tiny 2D and 3D meshes (test_ocl_fs_steps --tiny)
# with every OpenCL kernel under oclgrind; fails when oclgrind reports anything (data
# races, invalid or out-of-bounds accesses, uninitialised values, API errors).
# oclgrind's diagnostics are read from the program's output: its --log file is rewritten
# by every OpenCL context, and the test creates several.
# usage: oclgrind_check.sh OCLGRIND PROGRAM WORKFILE [ARGS...]  (ARGS: more options of the program,
# e.g. --implicit)
oclgrind=$1
program=$2
work=$3
shift 3
# A private program cache: binaries built for other devices must not be offered to oclgrind.
cache="$work.cache"
rm -rf "$cache" "$work.out"
mkdir -p "$cache"
"$oclgrind" --data-races --uninitialized --check-api "$program" --tiny --cache "$cache" "$@" > "$work.out" 2>&1
rc=$?
if [ $rc -eq 77 ]; then
  cat "$work.out"
  exit 77
fi
if grep -Eqi "uninitiali[sz]ed|data race|invalid (read|write)|out-of-bounds|runtime error|errors generated|Entity:" "$work.out"; then
  echo "oclgrind reported:"
  head -c 20000 "$work.out"
  exit 1
fi
if [ $rc -ne 0 ]; then
  cat "$work.out"
  echo "test_ocl_fs_steps --tiny $* failed under oclgrind (exit $rc)"
  exit 1
fi
exit 0
