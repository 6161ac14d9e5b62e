#!/usr/bin/env bash
# session 24 call 1: the device AMG refresh with byte offsets (1947d73) against its parent (27405ff): issue 12 whole-case protocol
# tolerance 1e-8, check_every 8 Jacobi / 1 AMG): cavity3d L2, L3, obstacle; Jacobi-CG vs AMG-FCG of HEAD (src) and of
# its parent (src_old, before the predicted first batch), alternating, two rounds.
set -u
G=$(cd "$(dirname "$0")" && pwd); O=$OUT; W=/tmp/w17; mkdir -p $W $O/runs
for s in src src_old; do ln -sfn "$(cd $G/../.. && pwd)/.deps" $G/$s/.deps; done
export CMAKE_PREFIX_PATH="$G/src/.deps/usr" LD_LIBRARY_PATH="$G/src/.deps/usr/lib/x86_64-linux-gnu"
t0=$(date +%s)
for s in src src_old; do
  ( cmake -S $G/$s -B /tmp/b_$s -DCMAKE_BUILD_TYPE=Release -DEF_BUILD_TESTS=OFF -DEF_WITH_PETSC=OFF > $W/build_$s.log 2>&1 &&
  cmake --build /tmp/b_$s -j8 >> $W/build_$s.log 2>&1 || tail -30 $W/build_$s.log ) &
done; wait
( nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep "Model name" ) | tee $O/device.txt
echo "built at $(( $(date +%s)-t0 )) s"
R=$G/src
case_run() { # tag build params level solver pc check_every
  local tag=$1 b=$2 params=$3 level=$4 solver=$5 pc=$6 ce=$7 dir=$W/$1
  mkdir -p $dir
  python3 - "$params" "$dir/case.json" "$solver" "$pc" "$ce" <<'PY'
import json, os, sys
src, dst, solver, pc, ce = sys.argv[1:6]
p = json.load(open(src)); ss = p["solver_settings"]; mis = ss["model_import_settings"]
mis["input_filename"] = os.path.join(os.path.dirname(os.path.abspath(src)), mis["input_filename"])
ss["solver_type"] = "opencl_edge_based"
ts = ss.setdefault("time_stepping", {})
if ts.get("automatic_time_step", True): ts.update({"automatic_time_step": False, "time_step": 1e-4})
ss.setdefault("linear_solver_settings", {}).update({"solver_type": solver, "preconditioner_type": pc, "tolerance": 1e-8, "check_every": int(ce)})
ss.setdefault("device", {})["verbose"] = 0
p["output_processes"] = {}
json.dump(p, open(dst, "w"), indent=1)
PY
  timeout 90 /tmp/b_$b/bin/edgeflow run $dir/case.json --refine $level --steps 40 --output $dir/run --quiet > $dir/log 2>&1
  cp $dir/run/run_summary.json $O/runs/$tag.json 2>/dev/null
  python3 - "$dir/run/run_summary.json" "$tag" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); st = s.get("strategy", {})
ps = st.get("pressure_solver", {}); ph = st.get("phases", {}).get("seconds_per_step", {})
other = ph.get('step2', 0) - ph.get('step2_assembly', 0) - ph.get('step2_cg', 0)
print(f"{sys.argv[2]:28s}: loop {1e3*s['run']['seconds_per_step']:8.3f} ms/step, solve {1e3*ph.get('step2_cg', 0):8.3f} ms, refresh+ {1e3*other:7.3f} ms, {ps.get('iterations_per_step', 0):6.2f} it/step, n {s.get('mesh', {}).get('nodes', '?')}")
PY
}
CAV=$R/test_examples/cavity3d/ProjectParameters.json; OBS=$R/test_examples/flow_past_obstacle/ProjectParameters.json
case_run warm src $CAV 1 fcg amg 1 > /dev/null; case_run warm2 src_old $CAV 1 fcg amg 1 > /dev/null
for r in 1 2; do
  for lc in "cav 2 $CAV" "cav 3 $CAV" "obs 0 $OBS"; do set -- $lc
    case_run ${1}L$2_jac_r$r src $3 $2 cg jacobi 8
    case_run ${1}L$2_amg_new_r$r src $3 $2 fcg amg 1
    case_run ${1}L$2_amg_old_r$r src_old $3 $2 fcg amg 1
  done
  echo "round $r at $(( $(date +%s)-t0 )) s"
done
tar -czf $O/all.tgz -C $O runs device.txt; rm -rf $O/runs
