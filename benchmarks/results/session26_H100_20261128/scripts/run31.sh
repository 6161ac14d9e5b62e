#!/usr/bin/env bash
# session 26 call 3: HEAD (4e7a078, defaults: renumbering "auto", pressure_initial_guess "auto"); issue 16's time to
# solution, cavity3d L2 t = 0 -> 1, explicit CFL 1 / implicit CFL 4: OpenCL two rounds (defaults); OpenMP 16 threads,
# one pair with the defaults and one with "previous".
set -u
G=$(cd "$(dirname "$0")" && pwd); O=$OUT; W=/tmp/w31; mkdir -p $W $O/json $O/runs
export PYTHONUNBUFFERED=1
ln -sfn "$(cd $G/../.. && pwd)/.deps" $G/src/.deps
export CMAKE_PREFIX_PATH="$G/src/.deps/usr" LD_LIBRARY_PATH="$G/src/.deps/usr/lib/x86_64-linux-gnu"
t0=$(date +%s)
cmake -S $G/src -B /tmp/b_src -DCMAKE_BUILD_TYPE=Release -DEF_BUILD_TESTS=OFF -DEF_WITH_PETSC=OFF > $W/build.log 2>&1 &&
  cmake --build /tmp/b_src -j16 >> $W/build.log 2>&1 || tail -30 $W/build.log
( nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -E "Model name|^CPU\(s\)" ) | tee $O/device.txt
echo "built at $(( $(date +%s)-t0 )) s"
bm=$G/src/benchmarks/implicit_cavity3d.py
run() { # tag strategy scheme cfl [solver-settings]
  local d=$W/$1; mkdir -p $d
  timeout 200 python3 $bm run --build /tmp/b_src --out $d --strategy $2 --level 2 --scheme $3 --cfl $4 ${5:+--solver-settings "$5"} 2>&1 | tail -1
  cp $d/$2_$3_cfl$4_L2.json $O/json/$1.json; cp $d/$2_$3_cfl$4_L2/run_summary.json $O/runs/$1.json
}
timeout 60 python3 $bm run --build /tmp/b_src --out $W/warm --level 2 --scheme implicit --cfl 4 --t-end 0.05 > /dev/null 2>&1
for r in 1 2; do
  run cl_exp_r$r opencl_edge_based explicit 1; run cl_imp_r$r opencl_edge_based implicit 4
  python3 $bm compare $O/json/cl_exp_r$r.json $O/json/cl_imp_r$r.json | cut -c1-200
done
export OMP_NUM_THREADS=16
P='{"pressure_initial_guess": "previous"}'
run omp_exp_def openmp_edge_based explicit 1; run omp_imp_def openmp_edge_based implicit 4
python3 $bm compare $O/json/omp_exp_def.json $O/json/omp_imp_def.json | cut -c1-200
echo "at $(( $(date +%s)-t0 )) s"
run omp_exp_prev openmp_edge_based explicit 1 "$P"; run omp_imp_prev openmp_edge_based implicit 4 "$P"
python3 $bm compare $O/json/omp_exp_prev.json $O/json/omp_imp_prev.json | cut -c1-200
echo "done at $(( $(date +%s)-t0 )) s"
tar -czf $O/all.tgz -C $O json runs device.txt; rm -rf $O/json $O/runs
