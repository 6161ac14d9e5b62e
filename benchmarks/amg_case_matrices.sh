#!/usr/bin/env bash
# The pressure systems of whole cases, solved alone: each case runs a few steps on the OpenCL
# strategy (fixed dt 1e-4, Jacobi-CG) and exports its last pressure system; tools/ef_amg_bench then
# solves that matrix with AMG-FCG and our Jacobi-CG in one process (cold start to 1e-8, median of 5,
# per-phase device times and launches per iteration). It tells launch-bound from bandwidth-bound.
# usage: benchmarks/amg_case_matrices.sh OUT [--cases "obstacle:0 cavity3d:1 cavity3d:2"]
#            [--build DIR] [--bench-args "..."] [--variants "ARGS1|ARGS2|..."]
#   --variants: ef_amg_bench runs once per '|'-separated argument set on each exported matrix
#   (Jacobi-CG only with the first), e.g. "--coarse-enough 256|--coarse-enough 32 --small-rows 4096".
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: amg_case_matrices.sh OUT [--cases LIST] [--build DIR] [--bench-args ARGS]}
shift
cases="obstacle:0 cavity3d:1 cavity3d:2"; build="$root/build-amg"; bargs=""; variants=""
while [ $# -gt 0 ]; do
  case "$1" in
    --cases) cases=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --bench-args) bargs=$2; shift 2 ;;
    --variants) variants=$2; shift 2 ;;
    *) echo "amg_case_matrices.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"; out=$(cd "$out" && pwd)
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DEF_BUILD_TESTS=OFF -DEF_WITH_PETSC=OFF > "$out/build.log" 2>&1 &&
  cmake --build "$build" -j"$(nproc)" --target edgeflow edgeflow_fluid ef_amg_bench >> "$out/build.log" 2>&1 ||
  { tail -30 "$out/build.log"; exit 1; }
for c in $cases; do
  name=${c%%:*}; level=${c##*:}
  case $name in
    obstacle) params="$root/test_examples/flow_past_obstacle/ProjectParameters.json" ;;
    *) params="$root/test_examples/$name/ProjectParameters.json" ;;
  esac
  dir="$out/${name}_L$level"; mkdir -p "$dir"
  python3 - "$params" "$dir/case.json" "$dir/system.bin" <<'PY'
import json, os, sys
src, dst, system = sys.argv[1:4]
p = json.load(open(src))
ss = p["solver_settings"]
mis = ss["model_import_settings"]
mis["input_filename"] = os.path.join(os.path.dirname(os.path.abspath(src)), mis["input_filename"])
ss["solver_type"] = "opencl_edge_based"
ts = ss.setdefault("time_stepping", {})
ts.update({"automatic_time_step": False, "time_step": 1e-4})
ls = ss.setdefault("linear_solver_settings", {})
ls.update({"solver_type": "cg", "preconditioner_type": "jacobi", "tolerance": 1e-8,
           "export_pressure_system": system})
p["output_processes"] = {}
json.dump(p, open(dst, "w"), indent=1)
PY
  "$build/bin/edgeflow" run "$dir/case.json" --refine "$level" --steps 5 --output "$dir/run" --overwrite --quiet > "$dir/log" 2>&1 ||
    { echo "$name L$level: run failed"; tail -5 "$dir/log"; continue; }
  echo "== $name L$level"
  if [ -z "$variants" ]; then
    "$build/bin/ef_amg_bench" "$dir/system.bin" $bargs --json "$dir/amg.json" 2>&1 | tail -14
  else
    i=0
    IFS='|' read -ra vs <<< "$variants"
    for v in "${vs[@]}"; do
      jac=--no-jacobi; [ $i = 0 ] && jac=""
      echo "-- $v"
      "$build/bin/ef_amg_bench" "$dir/system.bin" $bargs $v $jac --json "$dir/amg_$i.json" 2>&1 | tail -14
      i=$((i + 1))
    done
  fi
  rm -f "$dir/system.bin"
done
