#!/usr/bin/env bash
# session 27 call 1: HEAD (effe875). Issue 12's per-step protocol (fixed dt 1e-4, 40 steps, 1e-8) and the obstacle at
# its own steps, FCG + AMG with the default K-cycle on levels 1..2 against amg_kcycle_levels 1 and a V-cycle, beside
# Jacobi-CG; then issue 16's time to solution (cavity3d L2, t = 0 -> 1) for the default and kcycle_levels 1.
set -u
G=$(cd "$(dirname "$0")" && pwd); O=$OUT; W=/tmp/w32; mkdir -p $W $O/json $O/runs
export PYTHONUNBUFFERED=1
ln -sfn "$(cd $G/../.. && pwd)/.deps" $G/src/.deps
export CMAKE_PREFIX_PATH="$G/src/.deps/usr" LD_LIBRARY_PATH="$G/src/.deps/usr/lib/x86_64-linux-gnu"
t0=$(date +%s)
cmake -S $G/src -B /tmp/b_src -DCMAKE_BUILD_TYPE=Release -DEF_BUILD_TESTS=OFF -DEF_WITH_PETSC=OFF > $W/build.log 2>&1 &&
  cmake --build /tmp/b_src -j16 >> $W/build.log 2>&1 || tail -30 $W/build.log
( nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -E "Model name|^CPU\(s\)" ) | tee $O/device.txt
echo "built at $(( $(date +%s)-t0 )) s"
R=$G/src; ST=$R/benchmarks/step_times.py; CAV=$R/test_examples/cavity3d/ProjectParameters.json; OBS=$R/test_examples/flow_past_obstacle/ProjectParameters.json
bm=$R/benchmarks/implicit_cavity3d.py
timeout 60 python3 $bm run --build /tmp/b_src --out $W/warm --level 2 --scheme implicit --cfl 4 --t-end 0.05 > /dev/null 2>&1
A='"solver_type": "fcg", "preconditioner_type": "amg", "tolerance": 1e-8, "check_every": 1'
declare -A V=( [amgK2]="{$A}" [amgK1]="{$A, \"amg_kcycle_levels\": 1}" [amgV]="{$A, \"amg_cycle\": \"V\"}"
  [jac]='{"solver_type": "cg", "preconditioner_type": "jacobi", "tolerance": 1e-8, "check_every": 8}' )
for r in 1 2; do
  for lc in "cav 2 $CAV" "cav 3 $CAV" "obs 0 $OBS"; do set -- $lc
    for v in amgK2 amgK1 amgV jac; do
      timeout 120 python3 $ST --build /tmp/b_src --case $3 --refine $2 --steps 40 --dt 1e-4 --linear-solver "${V[$v]}" --out $W/st --tag ${1}L$2_${v}_r$r 2>&1 | tail -1
    done
  done
  for v in amgK2 amgK1 amgV jac; do
    timeout 120 python3 $ST --build /tmp/b_src --case $OBS --steps 200 --linear-solver "${V[$v]}" --out $W/st --tag obsown_${v}_r$r 2>&1 | tail -1
  done
  echo "round $r at $(( $(date +%s)-t0 )) s"
done
run() { # tag scheme cfl [linear-solver]
  local d=$W/$1; mkdir -p $d
  timeout 200 python3 $bm run --build /tmp/b_src --out $d --level 2 --scheme $2 --cfl $3 ${4:+--linear-solver "$4"} 2>&1 | tail -1
  cp $d/opencl_edge_based_$2_cfl$3_L2.json $O/json/$1.json; cp $d/opencl_edge_based_$2_cfl$3_L2/run_summary.json $O/runs/$1.json
}
K1='{"solver_type": "fcg", "preconditioner_type": "amg", "amg_kcycle_levels": 1}'
for r in 1 2; do
  run tts_exp_def_r$r explicit 1; run tts_imp_def_r$r implicit 4
  run tts_exp_k1_r$r explicit 1 "$K1"; run tts_imp_k1_r$r implicit 4 "$K1"
  for c in def k1; do python3 $bm compare $O/json/tts_exp_${c}_r$r.json $O/json/tts_imp_${c}_r$r.json | sed "s/^/$c r$r: /" | cut -c1-240; done
done
cp $W/st/*.json $O/json/; rm -f $O/json/*.case.json
echo "done at $(( $(date +%s)-t0 )) s"
tar -czf $O/all.tgz -C $O json runs device.txt; rm -rf $O/json $O/runs
