#!/bin/sh
# Runs the tiny AMG hierarchy, cycle and FCG of test_amg under oclgrind and fails when oclgrind
# reports anything (data races, invalid or out-of-bounds accesses, uninitialised
# values, API errors).  usage: oclgrind_check.sh OCLGRIND PROGRAM LOG
oclgrind=$1
program=$2
log=$3
rm -f "$log"
"$oclgrind" --data-races --uninitialized --check-api --log "$log" "$program" --tiny > "$log.out" 2>&1
rc=$?
cat "$log.out"
if [ $rc -eq 77 ]; then exit 77; fi
if [ -s "$log" ]; then
  echo "oclgrind reported:"
  cat "$log"
  exit 1
fi
if grep -Eqi "data race|invalid (read|write)|out-of-bounds|uninitiali[sz]ed" "$log.out"; then
  echo "oclgrind errors in the program output"
  exit 1
fi
if [ $rc -ne 0 ]; then
  echo "test_amg --tiny failed under oclgrind (exit $rc)"
  exit 1
fi
exit 0
