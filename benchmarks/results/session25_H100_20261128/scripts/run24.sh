#!/usr/bin/env bash
# session 25 call 1: per-step wall times (benchmarks/step_times.py) of issue 12's whole-case protocol
# (fixed dt 1e-4, 40 steps, tolerance 1e-8) for cavity3d L2, L3 and the obstacle, AMG and Jacobi; then two
# time-to-solution pairs of issue 16 (explicit CFL 1 / implicit CFL 4, t = 0 -> 1) at HEAD.
set -u
G=$(cd "$(dirname "$0")" && pwd); O=$OUT; W=/tmp/w24; mkdir -p $W $O/json $O/runs
export PYTHONUNBUFFERED=1
ln -sfn "$(cd $G/../.. && pwd)/.deps" $G/src/.deps
export CMAKE_PREFIX_PATH="$G/src/.deps/usr" LD_LIBRARY_PATH="$G/src/.deps/usr/lib/x86_64-linux-gnu"
t0=$(date +%s)
cmake -S $G/src -B /tmp/b_src -DCMAKE_BUILD_TYPE=Release -DEF_BUILD_TESTS=OFF -DEF_WITH_PETSC=OFF > $W/build.log 2>&1 &&
  cmake --build /tmp/b_src -j16 >> $W/build.log 2>&1 || { tail -30 $W/build.log; exit 1; }
( nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep "Model name" ) | tee $O/device.txt
echo "built at $(( $(date +%s)-t0 )) s"
R=$G/src; ST=$R/benchmarks/step_times.py
CAV=$R/test_examples/cavity3d/ProjectParameters.json; OBS=$R/test_examples/flow_past_obstacle/ProjectParameters.json
AMG='{"solver_type": "fcg", "preconditioner_type": "amg", "tolerance": 1e-8, "check_every": 1}'
JAC='{"solver_type": "cg", "preconditioner_type": "jacobi", "tolerance": 1e-8, "check_every": 8}'
timeout 60 python3 $ST --build /tmp/b_src --case $CAV --refine 1 --steps 5 --dt 1e-4 --linear-solver "$AMG" --out $W --tag warm > /dev/null 2>&1
for r in 1 2; do
  for lc in "cav 3 $CAV" "cav 2 $CAV" "obs 0 $OBS"; do set -- $lc
    timeout 120 python3 $ST --build /tmp/b_src --case $3 --refine $2 --steps 40 --dt 1e-4 --linear-solver "$AMG" --out $O/json --tag ${1}L$2_amg_r$r 2>&1 | tail -1
    timeout 120 python3 $ST --build /tmp/b_src --case $3 --refine $2 --steps 40 --dt 1e-4 --linear-solver "$JAC" --out $O/json --tag ${1}L$2_jac_r$r 2>&1 | tail -1
  done
  echo "round $r at $(( $(date +%s)-t0 )) s"
done
bm=$R/benchmarks/implicit_cavity3d.py
for r in 1 2; do for sc in "explicit 1" "implicit 4"; do set -- $sc
  timeout 60 python3 $bm run --build /tmp/b_src --out $W/tts_$r --level 2 --scheme $1 --cfl $2 2>&1 | tail -1
  cp $W/tts_$r/opencl_edge_based_$1_cfl$2_L2.json $O/json/tts_r${r}_$1_cfl$2_L2.json
  cp $W/tts_$r/opencl_edge_based_$1_cfl$2_L2/run_summary.json $O/runs/tts_r${r}_$1_cfl$2_L2.json
done; python3 $bm compare $O/json/tts_r${r}_explicit_cfl1_L2.json $O/json/tts_r${r}_implicit_cfl4_L2.json | tail -1; done
echo "done at $(( $(date +%s)-t0 )) s"
rm -f $O/json/*.case.json; rm -rf $O/json/*/
