#!/usr/bin/env bash
# session 25 call 3: node renumbering rcm / morton / none on the GPU: per-step wall (benchmarks/step_times.py),
# cavity3d L2 (AMG, Jacobi) and L3 (AMG), fixed dt 1e-4, tolerance 1e-8, 30 steps; alternating, two rounds.
set -u
G=$(cd "$(dirname "$0")" && pwd); O=$OUT; W=/tmp/w26; mkdir -p $W $O/json
export PYTHONUNBUFFERED=1
ln -sfn "$(cd $G/../.. && pwd)/.deps" $G/src/.deps
export CMAKE_PREFIX_PATH="$G/src/.deps/usr" LD_LIBRARY_PATH="$G/src/.deps/usr/lib/x86_64-linux-gnu"
t0=$(date +%s)
cmake -S $G/src -B /tmp/b_src -DCMAKE_BUILD_TYPE=Release -DEF_BUILD_TESTS=OFF -DEF_WITH_PETSC=OFF > $W/build.log 2>&1 &&
  cmake --build /tmp/b_src -j16 >> $W/build.log 2>&1 || { tail -30 $W/build.log; exit 1; }
( nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep "Model name" ) | tee $O/device.txt
R=$G/src; ST=$R/benchmarks/step_times.py; CAV=$R/test_examples/cavity3d/ProjectParameters.json
AMG='{"solver_type": "fcg", "preconditioner_type": "amg", "tolerance": 1e-8, "check_every": 1}'
JAC='{"solver_type": "cg", "preconditioner_type": "jacobi", "tolerance": 1e-8, "check_every": 8}'
timeout 60 python3 $ST --build /tmp/b_src --case $CAV --refine 1 --steps 5 --dt 1e-4 --linear-solver "$AMG" --out $W --tag warm > /dev/null 2>&1
for r in 1 2; do
  for rn in rcm morton none; do
    timeout 120 python3 $ST --build /tmp/b_src --case $CAV --refine 2 --steps 30 --dt 1e-4 --renumbering $rn --linear-solver "$AMG" --out $W --tag L2_amg_${rn}_r$r 2>&1 | tail -1
    timeout 120 python3 $ST --build /tmp/b_src --case $CAV --refine 2 --steps 30 --dt 1e-4 --renumbering $rn --linear-solver "$JAC" --out $W --tag L2_jac_${rn}_r$r 2>&1 | tail -1
    timeout 120 python3 $ST --build /tmp/b_src --case $CAV --refine 3 --steps 20 --dt 1e-4 --renumbering $rn --linear-solver "$AMG" --out $W --tag L3_amg_${rn}_r$r 2>&1 | tail -1
    python3 -c "
import json,sys
for t in sys.argv[1:]:
    s=json.load(open('$W/'+t+'/run_summary.json'));print(t, {k:round(v['mean_us']/1e3,3) for k,v in s['events']['step'].items()}, {k:round(v['seconds'],3) for k,v in s['events']['setup'].items() if 'renumber' in k or 'initialize (total)' in k})
" L2_amg_${rn}_r$r L2_jac_${rn}_r$r L3_amg_${rn}_r$r
  done
  echo "round $r at $(( $(date +%s)-t0 )) s"
done
cp $W/*.json $O/json/; rm -f $O/json/*.case.json; tar -czf $O/all.tgz -C $O json device.txt; rm -rf $O/json
