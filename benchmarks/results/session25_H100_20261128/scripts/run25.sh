#!/usr/bin/env bash
# session 25 call 2: Initialize's setup events, implicit vs explicit (cavity3d L2, t = 0 -> 0.05), twice.
set -u
G=$(cd "$(dirname "$0")" && pwd); O=$OUT; W=/tmp/w25; mkdir -p $W
ln -sfn "$(cd $G/../.. && pwd)/.deps" $G/src/.deps
export CMAKE_PREFIX_PATH="$G/src/.deps/usr" LD_LIBRARY_PATH="$G/src/.deps/usr/lib/x86_64-linux-gnu"
cmake -S $G/src -B /tmp/b_src -DCMAKE_BUILD_TYPE=Release -DEF_BUILD_TESTS=OFF -DEF_WITH_PETSC=OFF > $W/build.log 2>&1 &&
  cmake --build /tmp/b_src -j16 >> $W/build.log 2>&1 || { tail -30 $W/build.log; exit 1; }
bm=$G/src/benchmarks/implicit_cavity3d.py
for r in 0 1 2; do for sc in "implicit 4" "explicit 1"; do set -- $sc
  timeout 60 python3 $bm run --build /tmp/b_src --out $W/r$r --level 2 --scheme $1 --cfl $2 --t-end 0.05 2>&1 | tail -1
  python3 -c "
import json,sys;d=json.load(open(sys.argv[1]));print(' | '.join(f'{k} {v[\"seconds\"]:.4f}' for k,v in d['events']['setup'].items()))" $W/r$r/opencl_edge_based_$1_cfl$2_L2/run_summary.json
done; done
