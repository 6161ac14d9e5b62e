#!/usr/bin/env bash
# The multigrid preconditioner against our Jacobi-CG and the PyAMG + CuPy peer, in one call on the
# GPU machine (or on PoCL for a smoke run):
#   1. the anchor Laplacian (peers' gen_laplacian.py N): tools/ef_amg_bench (AMG-FCG K-cycle,
#      AMG-CG V-cycle, our Jacobi-CG, cold start to 1e-8, median of 5) and cupy_amg_cg.py --kind sa;
#   2. whole cases on the OpenCL strategy, same fixed dt, Jacobi-CG vs AMG-FCG: the 3D cavity at
#      the given levels and flow_past_obstacle (Re 100, committed mesh): ms per step and
#      iterations per step from run_summary.json.
# usage: benchmarks/amg_session.sh OUT [--sizes "100"] [--levels "1 2"] [--steps 40] [--build DIR]
#            [--small-rows "4096"]   (amg_small_rows values to compare: levels of at most that many rows
#                                     run in one work-group; 0 never)
#            [--check-every "8 1"]   (check_every of the Jacobi-CG runs, then of the AMG runs: each
#                                     solver at its own best; an AMG iteration costs some 40 launches,
#                                     so every iteration read late costs more than the read)
#            [--obstacle-mesh FILE]  (flow_past_obstacle also on this mesh, e.g. the medium one:
#                                     gmsh -2 -setnumber s 0.7 flow_past_obstacle.geo)
#            [--old-bench FILE]      (an ef_amg_bench built from other code: the anchor's AMG-FCG with
#                                     it too, in the same call, for a before/after)
# Needs .deps (scripts/fetch_gpu_deps.sh) on machines without cJSON/libmatheval, and the peers in
# ../shared/peers or .peers (with a pyamg wheel in .peers/wheels for the peer).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: amg_session.sh OUT [--sizes "100"] [--levels "1 2"] [--steps 40]}
shift
sizes="100"; levels="1 2"; steps=40; build="$root/build-amg"; small="4096"; checks="8 1"; omesh=""; old_bench=""
while [ $# -gt 0 ]; do
  case "$1" in
    --sizes) sizes=$2; shift 2 ;;
    --levels) levels=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --small-rows) small=$2; shift 2 ;;
    --check-every) checks=$2; shift 2 ;;
    --obstacle-mesh) omesh=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
    --old-bench) old_bench=$2; shift 2 ;;
    *) echo "amg_session.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"; out=$(cd "$out" && pwd)
export PYTHONUNBUFFERED=1
peers=""
for d in "$root/../shared/peers" "$root/.peers"; do [ -d "$d" ] && { peers=$(cd "$d" && pwd); break; }; done
{ command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; date -u; } > "$out/machine.txt" 2>&1
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DEF_BUILD_TESTS=OFF -DEF_WITH_PETSC=OFF > "$out/build.log" 2>&1 &&
  cmake --build "$build" -j"$(nproc)" --target edgeflow edgeflow_fluid ef_amg_bench >> "$out/build.log" 2>&1 ||
  { tail -30 "$out/build.log"; exit 1; }
if [ -d "$root/.peers/wheels" ] && ! python3 -c "import pyamg" 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --target "$out/site" "$root"/.peers/wheels/*.whl && export PYTHONPATH="$out/site"
fi

for n in $sizes; do
  m="$out/lap$n.bin"
  [ -n "$peers" ] && python3 "$peers/gen_laplacian.py" "$n" "$m" > /dev/null 2>&1 || { echo "N=$n: no matrix (needs CuPy)"; continue; }
  echo "== anchor N=$n"
  first=1
  for sr in $small; do
    jac=--no-jacobi; [ $first = 1 ] && jac=""; first=0
    echo "-- amg_small_rows $sr"
    "$build/bin/ef_amg_bench" "$m" $jac --small-rows "$sr" --json "$out/amg_K_${n}_sr$sr.json" 2>&1 | tail -12
    "$build/bin/ef_amg_bench" "$m" --cycle V --no-jacobi --small-rows "$sr" --json "$out/amg_V_${n}_sr$sr.json" 2>&1 | tail -6
  done
  if [ -n "$old_bench" ]; then
    echo "-- the other build ($old_bench), amg_small_rows ${small%% *}"
    "$old_bench" "$m" --no-jacobi --small-rows "${small%% *}" --json "$out/amg_K_${n}_old.json" 2>&1 | grep -E "^(AMG|launches|phases)"
  fi
  python3 -c "import pyamg" 2>/dev/null && python3 "$peers/cupy_amg_cg.py" "$m" --kind sa 2>&1 | tail -8
  rm -f "$m"
done

# Whole cases: the same fixed dt for both preconditioners.
check_jacobi=${checks%% *}; check_amg=${checks##* }
case_run() { # name params level solver pc [small_rows]  (MESH=file: another mesh of the case)
  local name=$1 params=$2 level=$3 solver=$4 pc=$5 sr=${6:-}
  local ce=$check_jacobi; [ "$pc" = amg ] && ce=$check_amg
  local dir="$out/${name}_L${level}_${pc}${sr}"
  mkdir -p "$dir"
  python3 - "$params" "$dir/case.json" "$solver" "$pc" "$sr" "$ce" "${MESH:-}" <<'PY'
import json, os, sys
src, dst, solver, pc, sr, ce, mesh = sys.argv[1:8]
p = json.load(open(src))
ss = p["solver_settings"]
mis = ss["model_import_settings"]
mis["input_filename"] = os.path.join(os.path.dirname(os.path.abspath(src)), mis["input_filename"])
if mesh:
    mis["input_filename"] = mesh
ss["solver_type"] = "opencl_edge_based"
ts = ss.setdefault("time_stepping", {})
if ts.get("automatic_time_step", True):
    ts.update({"automatic_time_step": False, "time_step": 1e-4})
ls = ss.setdefault("linear_solver_settings", {})
ls.update({"solver_type": solver, "preconditioner_type": pc, "tolerance": 1e-8, "check_every": int(ce)})
if sr:
    ls["amg_small_rows"] = int(sr)
ss.setdefault("device", {})["verbose"] = 0
p["output_processes"] = {}
json.dump(p, open(dst, "w"), indent=1)
PY
  "$build/bin/edgeflow" run "$dir/case.json" --refine "$level" --steps "$steps" --output "$dir/run" --quiet > "$dir/log" 2>&1
  python3 - "$dir/run/run_summary.json" "$name" "$level" "$pc$sr" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
st = s.get("strategy", {})
ps = st.get("pressure_solver", {}); ph = st.get("phases", {}).get("seconds_per_step", {})
# The first step pays the hierarchy/tuning set-up: report the loop per step and the phases.
print(f"{sys.argv[2]} L{sys.argv[3]} {sys.argv[4]:7s}: loop {1e3*s['run']['seconds_per_step']:8.3f} ms/step,"
      f" step1 {1e3*ph.get('step1', 0):7.3f}, step2 {1e3*ph.get('step2', 0):8.3f} (solve {1e3*ph.get('step2_cg', 0):8.3f}),"
      f" step3 {1e3*ph.get('step3', 0):6.3f} ms; {ps.get('iterations_per_step', 0):7.1f} it/step;"
      f" set-up {s.get('wall_seconds_by_phase', {}).get('setup', 0):.2f} s; n {s.get('mesh', {}).get('nodes', '?')}")
PY
}
for lv in $levels; do
  case_run cavity3d "$root/test_examples/cavity3d/ProjectParameters.json" "$lv" cg jacobi
  for sr in $small; do case_run cavity3d "$root/test_examples/cavity3d/ProjectParameters.json" "$lv" fcg amg "$sr"; done
done
case_run obstacle "$root/test_examples/flow_past_obstacle/ProjectParameters.json" 0 cg jacobi
for sr in $small; do case_run obstacle "$root/test_examples/flow_past_obstacle/ProjectParameters.json" 0 fcg amg "$sr"; done
if [ -n "$omesh" ]; then
  MESH=$omesh case_run obstacle_mesh2 "$root/test_examples/flow_past_obstacle/ProjectParameters.json" 0 cg jacobi
  for sr in $small; do
    MESH=$omesh case_run obstacle_mesh2 "$root/test_examples/flow_past_obstacle/ProjectParameters.json" 0 fcg amg "$sr"
  done
fi
