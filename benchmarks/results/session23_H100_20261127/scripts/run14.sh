#!/usr/bin/env bash
# session 23 call 3: the device PCG's first batch as long as the last solve (src) against HEAD (src_old):
# cavity3d L2 explicit CFL 1, t = 0 -> 0.2, FCG + AMG, alternating; Jacobi CG once (old); then two
# time-to-solution pairs (explicit CFL1 / implicit CFL4, t = 0 -> 1) of src.
set -u
G=$(cd "$(dirname "$0")" && pwd); O=$OUT; W=/tmp/w14; mkdir -p $W $O/json $O/runs
export PYTHONUNBUFFERED=1
for s in src src_old; do ln -sfn "$(cd $G/../.. && pwd)/.deps" $G/$s/.deps; done
export CMAKE_PREFIX_PATH="$G/src/.deps/usr" LD_LIBRARY_PATH="$G/src/.deps/usr/lib/x86_64-linux-gnu"
t0=$(date +%s)
for s in src src_old; do
  ( cmake -S $G/$s -B /tmp/b_$s -DCMAKE_BUILD_TYPE=Release -DEF_BUILD_TESTS=OFF -DEF_WITH_PETSC=OFF > $W/build_$s.log 2>&1 &&
  cmake --build /tmp/b_$s -j8 >> $W/build_$s.log 2>&1 || tail -30 $W/build_$s.log ) &
done; wait
( nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep "Model name" ) | tee $O/device.txt
echo "built at $(( $(date +%s)-t0 )) s"
bm=$G/src/benchmarks/implicit_cavity3d.py
pr() { python3 -c "
import json,sys;d=json.load(open(sys.argv[1]));p=d['strategy']['pressure_solver'];ph=d['strategy']['phases']['seconds_per_step'];print(sys.argv[2], 'steps',p['steps'],'its/step %.2f'%p['iterations_per_step'],'us/it %.1f'%p['cg_us_per_iteration'],'ms/step %.3f'%(d['events']['loop']['solve step']['mean_us']/1e3), 'cg ms/step %.3f'%(1e3*ph['step2_cg']))" $1 "$2"; }
AMG='{"solver_type": "fcg", "preconditioner_type": "amg"}'; JAC='{"solver_type": "cg", "preconditioner_type": "jacobi"}'
for s in src src_old; do timeout 60 python3 $bm run --build /tmp/b_$s --out $W/warm_$s --level 2 --scheme explicit --cfl 1 --t-end 0.02 > /dev/null 2>&1; done
for r in 1 2 3; do for s in src src_old; do
  d=$W/a_${s}_$r; timeout 90 python3 $bm run --build /tmp/b_$s --out $d --level 2 --scheme explicit --cfl 1 --t-end 0.2 --linear-solver "$AMG" > $d.log 2>&1
  pr $d/opencl_edge_based_explicit_cfl1_L2/run_summary.json "L2 AMG $s r$r"; cp $d/opencl_edge_based_explicit_cfl1_L2/run_summary.json $O/runs/amg_${s}_r$r.json
done; done
d=$W/jac; timeout 90 python3 $bm run --build /tmp/b_src_old --out $d --level 2 --scheme explicit --cfl 1 --t-end 0.2 --linear-solver "$JAC" > $d.log 2>&1
pr $d/opencl_edge_based_explicit_cfl1_L2/run_summary.json "L2 JAC src_old"; cp $d/opencl_edge_based_explicit_cfl1_L2/run_summary.json $O/runs/jac_src_old.json
echo "per-step part done at $(( $(date +%s)-t0 )) s"
for r in 1 2; do for sc in "explicit 1" "implicit 4"; do set -- $sc
  timeout 60 python3 $bm run --build /tmp/b_src --out $W/tts_$r --level 2 --scheme $1 --cfl $2 2>&1 | tail -1
  cp $W/tts_$r/opencl_edge_based_$1_cfl$2_L2.json $O/json/r${r}_$1_cfl$2_L2.json
  cp $W/tts_$r/opencl_edge_based_$1_cfl$2_L2/run_summary.json $O/runs/tts_r${r}_$1_cfl$2_L2.json
done; python3 $bm compare $O/json/r${r}_explicit_cfl1_L2.json $O/json/r${r}_implicit_cfl4_L2.json | tail -1; done
echo "done at $(( $(date +%s)-t0 )) s"
tar -czf $O/all.tgz -C $O json runs device.txt; rm -rf $O/json $O/runs
