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

# Sanitizer build: every test but the OpenCL ones (PoCL's JIT is not built for ASan).
cmake -S "$root" -B "$root/build-sanitize" -DCMAKE_BUILD_TYPE=Debug -DEF_SANITIZE=ON
cmake --build "$root/build-sanitize" -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$root/build-sanitize" --output-on-failure -j"$jobs" -LE "slow|opencl|validation"
