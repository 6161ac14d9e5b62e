#!/usr/bin/env bash
# session 26 call 1: launch cost on NVIDIA OpenCL (lb.c: profiling queue, events, arguments, extensions), then the
# issue-12 step protocol and issue-16 TTS with the queue with / without CL_QUEUE_PROFILING_ENABLE (env hack).
set -u
G=$(cd "$(dirname "$0")" && pwd); O=$OUT; W=/tmp/w29; mkdir -p $W $O/json $O/runs
export PYTHONUNBUFFERED=1
ln -sfn "$(cd $G/../.. && pwd)/.deps" $G/src/.deps
export CMAKE_PREFIX_PATH="$G/src/.deps/usr" LD_LIBRARY_PATH="$G/src/.deps/usr/lib/x86_64-linux-gnu"
t0=$(date +%s)
( cmake -S $G/src -B /tmp/b_src -DCMAKE_BUILD_TYPE=Release -DEF_BUILD_TESTS=OFF -DEF_WITH_PETSC=OFF > $W/build.log 2>&1 &&
  cmake --build /tmp/b_src -j12 >> $W/build.log 2>&1 || tail -30 $W/build.log ) &
gcc -O2 -o $W/lb $G/lb/lb.c -lOpenCL 2>&1 | tail -5
$W/lb | tee $O/lb.txt
wait
( nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep "Model name" ) | tee $O/device.txt
echo "built at $(( $(date +%s)-t0 )) s"
R=$G/src; ST=$R/benchmarks/step_times.py; CAV=$R/test_examples/cavity3d/ProjectParameters.json; OBS=$R/test_examples/flow_past_obstacle/ProjectParameters.json
AMG='{"solver_type": "fcg", "preconditioner_type": "amg", "tolerance": 1e-8, "check_every": 1}'
JAC='{"solver_type": "cg", "preconditioner_type": "jacobi", "tolerance": 1e-8, "check_every": 8}'
bm=$R/benchmarks/implicit_cavity3d.py
timeout 60 python3 $bm run --build /tmp/b_src --out $W/warm --level 2 --scheme implicit --cfl 4 --t-end 0.05 > /dev/null 2>&1
for r in 1 2; do for np in 0 1; do
  if [ $np = 1 ]; then export EF_CL_QUEUE_NO_PROFILING=1; else unset EF_CL_QUEUE_NO_PROFILING; fi
  for lc in "obs 0 $OBS" "cav 2 $CAV"; do set -- $lc
    timeout 120 python3 $ST --build /tmp/b_src --case $3 --refine $2 --steps 40 --dt 1e-4 --linear-solver "$AMG" --out $W/st --tag ${1}L$2_amg_np${np}_r$r 2>&1 | tail -1 | sed "s/^/np$np r$r /"
    timeout 120 python3 $ST --build /tmp/b_src --case $3 --refine $2 --steps 40 --dt 1e-4 --linear-solver "$JAC" --out $W/st --tag ${1}L$2_jac_np${np}_r$r 2>&1 | tail -1 | sed "s/^/np$np r$r /"
  done
  for sc in "explicit 1" "implicit 4"; do set -- $sc
    d=$W/tts_${1}_np${np}_r$r; mkdir -p $d
    timeout 90 python3 $bm run --build /tmp/b_src --out $d --level 2 --scheme $1 --cfl $2 --renumbering morton 2>&1 | tail -1 | sed "s/^/np$np r$r /"
    cp $d/opencl_edge_based_$1_cfl$2_L2.json $O/json/tts_$1_np${np}_r$r.json
  done
  echo "round $r np $np at $(( $(date +%s)-t0 )) s"
done; done
unset EF_CL_QUEUE_NO_PROFILING
cp $W/st/*.json $O/json/; rm -f $O/json/*.case.json
echo "done at $(( $(date +%s)-t0 )) s"
tar -czf $O/all.tgz -C $O json lb.txt device.txt; rm -rf $O/json
