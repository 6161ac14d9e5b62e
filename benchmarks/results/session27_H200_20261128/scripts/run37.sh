#!/usr/bin/env bash
# session 27 call 6: issue 16's time to solution (cavity3d L2, t = 0 -> 1, explicit CFL 1 / implicit CFL 4), the
# session's final code (src) against effe875 (src_old), three alternating rounds on the OpenCL strategy; then one
# OpenMP pair (16 threads) of the final code.
set -u
G=$(cd "$(dirname "$0")" && pwd); O=$OUT; W=/tmp/w37; mkdir -p $W $O/json $O/runs
export PYTHONUNBUFFERED=1
for s in src src_old; do ln -sfn "$(cd $G/../.. && pwd)/.deps" $G/$s/.deps; done
export CMAKE_PREFIX_PATH="$G/src/.deps/usr" LD_LIBRARY_PATH="$G/src/.deps/usr/lib/x86_64-linux-gnu"
t0=$(date +%s)
for s in src src_old; do
  ( cmake -S $G/$s -B /tmp/b_$s -DCMAKE_BUILD_TYPE=Release -DEF_BUILD_TESTS=OFF -DEF_WITH_PETSC=OFF > $W/build_$s.log 2>&1 &&
  cmake --build /tmp/b_$s -j8 >> $W/build_$s.log 2>&1 || tail -30 $W/build_$s.log ) &
done; wait
( nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -E "Model name|^CPU\(s\)" ) | tee $O/device.txt
echo "built at $(( $(date +%s)-t0 )) s"
bm=$G/src/benchmarks/implicit_cavity3d.py
for s in src src_old; do timeout 90 python3 $G/$s/benchmarks/implicit_cavity3d.py run --build /tmp/b_$s --out $W/warm_$s --level 2 --scheme implicit --cfl 4 --t-end 0.05 > /dev/null 2>&1; done
run() { # tag build strategy scheme cfl
  local d=$W/$1; mkdir -p $d
  timeout 200 python3 $G/$2/benchmarks/implicit_cavity3d.py run --build /tmp/b_$2 --out $d --strategy $3 --level 2 --scheme $4 --cfl $5 2>&1 | tail -1
  cp $d/$3_$4_cfl$5_L2.json $O/json/$1.json; cp $d/$3_$4_cfl$5_L2/run_summary.json $O/runs/$1.json
}
for r in 1 2 3; do
  for s in src_old src; do run ${s}_exp_r$r $s opencl_edge_based explicit 1; run ${s}_imp_r$r $s opencl_edge_based implicit 4; done
  for s in src_old src; do python3 $bm compare $O/json/${s}_exp_r$r.json $O/json/${s}_imp_r$r.json | sed "s/^/$s r$r: /" | cut -c1-200; done
  echo "round $r at $(( $(date +%s)-t0 )) s"
done
export OMP_NUM_THREADS=16
run omp_exp src openmp_edge_based explicit 1; run omp_imp src openmp_edge_based implicit 4
python3 $bm compare $O/json/omp_exp.json $O/json/omp_imp.json | sed "s/^/omp: /" | cut -c1-200
echo "done at $(( $(date +%s)-t0 )) s"
python3 - $O/runs <<'PY'
import json, sys, glob, os
keys = ["initialize (total)", "refine mesh", "check mesh", "renumber mesh (morton)", "renumber mesh (rcm)", "edge data build",
        "device context", "device executor (programs, buffers, upload)", "pressure solver set-up (first step)"]
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    e = json.load(open(f))["events"]["setup"]
    print(os.path.basename(f)[:-5].ljust(16), " ".join("%s=%.3f" % (k[:14], e[k]["seconds"]) for k in keys if k in e))
PY
tar -czf $O/all.tgz -C $O json runs device.txt; rm -rf $O/json $O/runs
