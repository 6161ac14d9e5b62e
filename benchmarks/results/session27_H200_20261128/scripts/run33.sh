#!/usr/bin/env bash
# session 27 call 2: the fused AMG launches (eac1bdd, src) against effe875 (src_old) and src_k1 (the combination
# fused only below level 0's post-smoothing). Issue 12's per-step protocol (fixed dt 1e-4, 40 steps, 1e-8, FCG+AMG
# defaults) and the obstacle at its own steps, beside Jacobi-CG; then issue 16's time to solution pairs, old and new.
set -u
G=$(cd "$(dirname "$0")" && pwd); O=$OUT; W=/tmp/w33; mkdir -p $W $O/json $O/runs
export PYTHONUNBUFFERED=1
for s in src src_old src_k1; do ln -sfn "$(cd $G/../.. && pwd)/.deps" $G/$s/.deps; done
export CMAKE_PREFIX_PATH="$G/src/.deps/usr" LD_LIBRARY_PATH="$G/src/.deps/usr/lib/x86_64-linux-gnu"
t0=$(date +%s)
for s in src src_old src_k1; do
  ( cmake -S $G/$s -B /tmp/b_$s -DCMAKE_BUILD_TYPE=Release -DEF_BUILD_TESTS=OFF -DEF_WITH_PETSC=OFF > $W/build_$s.log 2>&1 &&
  cmake --build /tmp/b_$s -j6 >> $W/build_$s.log 2>&1 || tail -30 $W/build_$s.log ) &
done; wait
( nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -E "Model name|^CPU\(s\)" ) | tee $O/device.txt
echo "built at $(( $(date +%s)-t0 )) s"
R=$G/src; ST=$R/benchmarks/step_times.py; CAV=$R/test_examples/cavity3d/ProjectParameters.json; OBS=$R/test_examples/flow_past_obstacle/ProjectParameters.json
bm=$R/benchmarks/implicit_cavity3d.py
for s in src src_old src_k1; do timeout 60 python3 $bm run --build /tmp/b_$s --out $W/warm_$s --level 2 --scheme implicit --cfl 4 --t-end 0.05 > /dev/null 2>&1; done
AMG='{"solver_type": "fcg", "preconditioner_type": "amg", "tolerance": 1e-8, "check_every": 1}'
JAC='{"solver_type": "cg", "preconditioner_type": "jacobi", "tolerance": 1e-8, "check_every": 8}'
for r in 1 2; do
  for lc in "cav 2 $CAV" "cav 3 $CAV" "obs 0 $OBS"; do set -- $lc
    for s in src src_old src_k1; do
      timeout 120 python3 $ST --build /tmp/b_$s --case $3 --refine $2 --steps 40 --dt 1e-4 --linear-solver "$AMG" --out $W/st --tag ${1}L$2_amg_${s}_r$r 2>&1 | tail -1 | cut -c1-200
    done
    timeout 120 python3 $ST --build /tmp/b_src --case $3 --refine $2 --steps 40 --dt 1e-4 --linear-solver "$JAC" --out $W/st --tag ${1}L$2_jac_r$r 2>&1 | tail -1 | cut -c1-200
  done
  for s in src src_old src_k1; do
    timeout 120 python3 $ST --build /tmp/b_$s --case $OBS --steps 200 --linear-solver "$AMG" --out $W/st --tag obsown_amg_${s}_r$r 2>&1 | tail -1 | cut -c1-120
  done
  timeout 120 python3 $ST --build /tmp/b_src --case $OBS --steps 200 --linear-solver "$JAC" --out $W/st --tag obsown_jac_r$r 2>&1 | tail -1 | cut -c1-120
  echo "round $r at $(( $(date +%s)-t0 )) s"
done
run() { # tag build scheme cfl
  local d=$W/$1; mkdir -p $d
  timeout 200 python3 $bm run --build /tmp/b_$2 --out $d --level 2 --scheme $3 --cfl $4 2>&1 | tail -1
  cp $d/opencl_edge_based_$3_cfl$4_L2.json $O/json/$1.json; cp $d/opencl_edge_based_$3_cfl$4_L2/run_summary.json $O/runs/$1.json
}
for r in 1 2; do
  for s in src src_old; do run tts_exp_${s}_r$r $s explicit 1; run tts_imp_${s}_r$r $s implicit 4; done
  for s in src src_old; do python3 $bm compare $O/json/tts_exp_${s}_r$r.json $O/json/tts_imp_${s}_r$r.json | sed "s/^/$s r$r: /" | cut -c1-200; done
done
cp $W/st/*.json $O/json/; rm -f $O/json/*.case.json
echo "done at $(( $(date +%s)-t0 )) s"
tar -czf $O/all.tgz -C $O json runs device.txt; rm -rf $O/json $O/runs
