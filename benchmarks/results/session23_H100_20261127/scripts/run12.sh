#!/usr/bin/env bash
# session 23: stage CG apply with 4 work-items a row + first read-back after the slot's last count.
# 5 alternating pairs explicit CFL1 / implicit CFL4 (new), plus the old code's implicit after each pair.
set -u
G=$(cd "$(dirname "$0")" && pwd); O=$OUT; W=/tmp/w12; mkdir -p $W $O/json $O/runs
export PYTHONUNBUFFERED=1
for s in src src_old; do ln -sfn "$(cd $G/../.. && pwd)/.deps" $G/$s/.deps; done
export CMAKE_PREFIX_PATH="$G/src/.deps/usr" LD_LIBRARY_PATH="$G/src/.deps/usr/lib/x86_64-linux-gnu"
t0=$(date +%s)
for s in src src_old; do
  cmake -S $G/$s -B /tmp/b_$s -DCMAKE_BUILD_TYPE=Release -DEF_BUILD_TESTS=OFF -DEF_WITH_PETSC=OFF > $W/build_$s.log 2>&1 &&
  cmake --build /tmp/b_$s -j8 >> $W/build_$s.log 2>&1 || { tail -30 $W/build_$s.log; exit 1; } &
done; wait
( nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep "Model name" ) | tee $O/device.txt
echo "built at $(( $(date +%s)-t0 )) s"
bm=$G/src/benchmarks/implicit_cavity3d.py
ev() { python3 -c "
import json,sys;d=json.load(open(sys.argv[1]));print(' | '.join(f'{k} {v[\"seconds\"]:.3f}' for k,v in d['events']['setup'].items()));k=d['events']['kernel'];print(' | '.join(f'{n} {v[\"calls\"]} {v[\"mean_us\"]:.1f}us' for n,v in k.items() if 'visc' in n));print('viscous', d['strategy'].get('viscous_solver'))" $1; }
for s in src src_old; do python3 $bm run --build /tmp/b_$s --out $W/warm_$s --level 2 --strategy opencl_edge_based --scheme implicit --cfl 4 --t-end 0.05 2>&1 | tail -1; done
python3 $bm run --build /tmp/b_src --out $W/warm_e --level 2 --strategy opencl_edge_based --scheme explicit --cfl 1 --t-end 0.05 2>&1 | tail -1
for r in 1 2 3 4 5; do
  for sc in "explicit 1 src" "implicit 4 src" "implicit 4 src_old"; do set -- $sc
    python3 $bm run --build /tmp/b_$3 --out $W/$3_$r --level 2 --strategy opencl_edge_based --scheme $1 --cfl $2 2>&1 | tail -1
    ev $W/$3_$r/opencl_edge_based_$1_cfl$2_L2/run_summary.json
    cp $W/$3_$r/opencl_edge_based_$1_cfl$2_L2.json $O/json/$3_r${r}_$1_cfl$2_L2.json
    cp $W/$3_$r/opencl_edge_based_$1_cfl$2_L2/run_summary.json $O/runs/$3_r${r}_$1_cfl$2_L2.json
  done
  python3 $bm compare $O/json/src_r${r}_explicit_cfl1_L2.json $O/json/src_r${r}_implicit_cfl4_L2.json | tail -1
  python3 $bm compare $O/json/src_r${r}_explicit_cfl1_L2.json $O/json/src_old_r${r}_implicit_cfl4_L2.json | tail -1
done
echo "tts done at $(( $(date +%s)-t0 )) s"
tar -czf $O/all.tgz -C $O json runs device.txt; rm -rf $O/json $O/runs
