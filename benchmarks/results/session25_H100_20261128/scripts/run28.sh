#!/usr/bin/env bash
# session 25 call 4: the stage CG in three launches (src = HEAD) against 031453d (src_old): cavity3d L2 implicit CFL 4,
# t = 0 -> 1, three alternating rounds; kernel table of the stage CG.
set -u
G=$(cd "$(dirname "$0")" && pwd); O=$OUT; W=/tmp/w28; mkdir -p $W $O/runs
export PYTHONUNBUFFERED=1
for s in src src_old; do ln -sfn "$(cd $G/../.. && pwd)/.deps" $G/$s/.deps; done
export CMAKE_PREFIX_PATH="$G/src/.deps/usr" LD_LIBRARY_PATH="$G/src/.deps/usr/lib/x86_64-linux-gnu"
t0=$(date +%s)
for s in src src_old; do
  ( cmake -S $G/$s -B /tmp/b_$s -DCMAKE_BUILD_TYPE=Release -DEF_BUILD_TESTS=OFF -DEF_WITH_PETSC=OFF > $W/build_$s.log 2>&1 &&
  cmake --build /tmp/b_$s -j8 >> $W/build_$s.log 2>&1 || tail -30 $W/build_$s.log ) &
done; wait
echo "built at $(( $(date +%s)-t0 )) s"
bm=$G/src/benchmarks/implicit_cavity3d.py
ev() { python3 -c "
import json,sys;d=json.load(open(sys.argv[1]));k=d['events']['kernel'];s=d['events']['step'];print('   ', ' | '.join(f'{n} {v[\"calls\"]} {v[\"mean_us\"]:.1f}us' for n,v in k.items() if 'visc' in n), '| stage CG wall %.4f s' % s['1 viscous stage CG (wall)']['seconds'], '| its', d['strategy']['viscous_solver']['cg_iterations'], '| setup', ' '.join(f'{k} {v[\"seconds\"]:.3f}' for k,v in d['events']['setup'].items() if k in ('initialize (total)','renumber mesh (rcm)','refine mesh','check mesh','edge data build')))" $1; }
for s in src src_old; do timeout 60 python3 $bm run --build /tmp/b_$s --out $W/warm_$s --level 2 --scheme implicit --cfl 4 --t-end 0.05 > /dev/null 2>&1; done
for r in 1 2 3; do for s in src src_old; do
  timeout 60 python3 $bm run --build /tmp/b_$s --out $W/${s}_$r --level 2 --scheme implicit --cfl 4 2>&1 | tail -1 | sed "s/^/$s r$r: /"
  cp $W/${s}_$r/opencl_edge_based_implicit_cfl4_L2/run_summary.json $O/runs/${s}_imp_r$r.json; ev $O/runs/${s}_imp_r$r.json
done; done
echo "done at $(( $(date +%s)-t0 )) s"
tar -czf $O/all.tgz -C $O runs; rm -rf $O/runs
