#!/usr/bin/env bash
# The real Kratos case channel_sphere2D run with edgeflow as its user brings it (solver_type changed,
# --skip-unsupported for its mmg/GiD processes, density 1 and dynamic viscosity 1e-3 added, as in
# benchmarks/kratos_compare.py) on a machine without Kratos or VTK (the GPU machine): wall time to
# solution and the share of output + processes, for each time_step given.
# usage: benchmarks/kratos_case_gpu.sh CASE_DIR OUT STRATEGY [TIME_STEPS...]   (default time step: the case's)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
case_dir=$(cd "$1" && pwd); out=$2; strategy=$3; shift 3
mkdir -p "$out"; out=$(cd "$out" && pwd)
edgeflow=${EDGEFLOW:-$root/build/bin/edgeflow}
for dt in "${@:-case}"; do
  dir="$out/dt_$dt"; mkdir -p "$dir"
  ts=(); [ "$dt" = case ] || ts=(--time-step "$dt")
  python3 "$root/benchmarks/prepare_kratos_case.py" "$case_dir" "$dir/case.json" "$strategy" "${ts[@]}" --end-time 5 || exit 1
  t0=$(date +%s.%N)
  (cd "$dir" && "$edgeflow" run case.json --skip-unsupported --output "$dir/run" --quiet > log 2>&1)
  rc=$?
  t1=$(date +%s.%N)
  python3 - "$dir/run/run_summary.json" "$dt" "$rc" "$t0" "$t1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); w = s.get("wall_seconds_by_phase", {}); r = s.get("run", {})
loop = r.get("wall_seconds_loop", 0) or 1e-30
share = (w.get("output", 0) + w.get("processes", 0)) / loop
print(f"time_step {sys.argv[2]}: exit {sys.argv[3]}, process wall {float(sys.argv[5]) - float(sys.argv[4]):.2f} s,"
      f" loop {loop:.2f} s, {r.get('steps')} solver steps, output+processes {100 * share:.1f} % of the loop,"
      f" {s.get('time_step', {})}")
PY
done
