#!/usr/bin/env bash
# session 23 call 2: (1) queue profiling on/off (EF_NOPROF) on the AMG and Jacobi pressure solves, cavity3d L2/L3;
# (2) three more time-to-solution pairs (explicit CFL1 / implicit CFL4, L2, t = 0 -> 1) of HEAD.
set -u
G=$(cd "$(dirname "$0")" && pwd); O=$OUT; W=/tmp/w13; mkdir -p $W $O/json $O/runs
export PYTHONUNBUFFERED=1
ln -sfn "$(cd $G/../.. && pwd)/.deps" $G/src/.deps
export CMAKE_PREFIX_PATH="$G/src/.deps/usr" LD_LIBRARY_PATH="$G/src/.deps/usr/lib/x86_64-linux-gnu"
t0=$(date +%s); B=/tmp/b13
cmake -S $G/src -B $B -DCMAKE_BUILD_TYPE=Release -DEF_BUILD_TESTS=OFF -DEF_WITH_PETSC=OFF > $W/build.log 2>&1 &&
  cmake --build $B -j16 >> $W/build.log 2>&1 || { tail -30 $W/build.log; exit 1; }
( nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep "Model name" ) | tee $O/device.txt
echo "built at $(( $(date +%s)-t0 )) s"
bm=$G/src/benchmarks/implicit_cavity3d.py
pr() { python3 -c "
import json,sys;d=json.load(open(sys.argv[1]));p=d['strategy']['pressure_solver'];ph=d['strategy']['phases']['seconds_per_step'];print(sys.argv[2], 'steps',p['steps'],'its/step %.1f'%p['iterations_per_step'],'us/it %.1f'%p['cg_us_per_iteration'],'ms/step %.3f'%(1e3*d['events']['loop']['solve step']['mean_us']/1e3), 'cg ms/step %.3f'%(1e3*ph['step2_cg']))" $1 "$2"; }
python3 $bm run --build $B --out $W/warm --level 2 --scheme explicit --cfl 1 --t-end 0.02 2>&1 | tail -1
AMG='{"solver_type": "fcg", "preconditioner_type": "amg"}'; JAC='{"solver_type": "cg", "preconditioner_type": "jacobi"}'
for L in 2 3; do te=0.2; [ $L = 3 ] && te=0.02
for r in 1 2; do for s in AMG JAC; do for np in "" 1; do
  [ $s = AMG ] && ls="$AMG" || ls="$JAC"
  d=$W/p_L${L}_${s}_np${np}_$r
  env ${np:+EF_NOPROF=1} python3 $bm run --build $B --out $d --level $L --scheme explicit --cfl 1 --t-end $te --linear-solver "$ls" > $d.log 2>&1
  pr $d/opencl_edge_based_explicit_cfl1_L$L/run_summary.json "L$L $s noprof=${np:-0} r$r"
  cp $d/opencl_edge_based_explicit_cfl1_L$L/run_summary.json $O/runs/prof_L${L}_${s}_np${np:-0}_r$r.json
done; done; done; done
echo "profiling part done at $(( $(date +%s)-t0 )) s"
for r in 1 2 3; do for sc in "explicit 1" "implicit 4"; do set -- $sc
  python3 $bm run --build $B --out $W/tts_$r --level 2 --scheme $1 --cfl $2 2>&1 | tail -1
  cp $W/tts_$r/opencl_edge_based_$1_cfl$2_L2.json $O/json/r${r}_$1_cfl$2_L2.json
  cp $W/tts_$r/opencl_edge_based_$1_cfl$2_L2/run_summary.json $O/runs/tts_r${r}_$1_cfl$2_L2.json
done; python3 $bm compare $O/json/r${r}_explicit_cfl1_L2.json $O/json/r${r}_implicit_cfl4_L2.json | tail -1; done
echo "done at $(( $(date +%s)-t0 )) s"
tar -czf $O/all.tgz -C $O json runs device.txt; rm -rf $O/json $O/runs
