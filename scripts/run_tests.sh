#!/usr/bin/env bash
# Set up a Debian 12 machine, build edgeflow twice (optimised, and with
# AddressSanitizer + UndefinedBehaviorSanitizer) and run the whole test suite
# with CTest.  Tests labelled "slow" are run only with EDGEFLOW_SLOW_TESTS=1.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup_debian.sh" --tests
jobs=$(nproc)
# Tests run side by side on few cores: threads must not spin while waiting.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
exclude=()
[[ "${EDGEFLOW_SLOW_TESTS:-0}" == "1" ]] || exclude=(-LE slow)

cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$root/build" -j"$jobs"
ctest --test-dir "$root/build" --output-on-failure -j"$jobs" "${exclude[@]}"

# Sanitizer build: every test but the OpenCL ones (PoCL's JIT is not built for ASan) and the mpirun
# ones (Open MPI's own allocations are reported as leaks); the partition code runs under ASan in
# test_partition, all ranks in one process.
cmake -S "$root" -B "$root/build-sanitize" -DCMAKE_BUILD_TYPE=Debug -DEF_SANITIZE=ON
cmake --build "$root/build-sanitize" -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$root/build-sanitize" --output-on-failure -j"$jobs" -LE "slow|opencl|validation|mpi"

# Fuzz smoke runs: the libFuzzer harnesses of tests/fuzz (clang, AddressSanitizer + UBSan), each
# for EDGEFLOW_FUZZ_SECONDS (60) from the committed corpus; a crash, leak or sanitizer report
# fails the job and leaves the input in build-fuzz/artifacts/.  Only the core library is built.
fuzz_seconds=${EDGEFLOW_FUZZ_SECONDS:-60}
if ((fuzz_seconds > 0)); then
  CC=clang cmake -S "$root" -B "$root/build-fuzz" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="-O1 -g" -DEF_FUZZ=ON \
    -DEF_WITH_OPENCL=OFF -DEF_WITH_OPENMP=OFF -DEF_WITH_PETSC=OFF -DEDGEFLOW_MPI=OFF -DEF_WITH_VTK_TESTS=OFF -DEF_WITH_GMSH_TESTS=OFF
  cmake --build "$root/build-fuzz" -j"$jobs" --target fuzz_mdpa fuzz_gmsh fuzz_parameters fuzz_expression
  mkdir -p "$root/build-fuzz/artifacts"
  for harness in mdpa gmsh parameters expression; do
    corpus="$root/build-fuzz/corpus/$harness"
    rm -rf "$corpus" && mkdir -p "$corpus"
    echo "fuzz_$harness: ${fuzz_seconds} s"
    rc=0
    "$root/build-fuzz/bin/fuzz_$harness" -max_total_time="$fuzz_seconds" -print_final_stats=1 \
      -artifact_prefix="$root/build-fuzz/artifacts/$harness-" "$corpus" "$root/tests/fuzz/corpus/$harness" \
      > "$root/build-fuzz/fuzz_$harness.log" 2>&1 || rc=$?
    grep -E "^stat::number_of_executed_units|ERROR|SUMMARY|Test unit written" "$root/build-fuzz/fuzz_$harness.log" || true
    ((rc == 0)) || { echo "fuzz_$harness failed (exit $rc): build-fuzz/fuzz_$harness.log, build-fuzz/artifacts/"; exit 1; }
  done
fi
