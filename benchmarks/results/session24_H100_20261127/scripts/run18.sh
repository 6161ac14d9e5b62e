#!/usr/bin/env bash
# session 24 call 3: (a) the device AMG refresh, ef_amg_bench on the exported cavity L2/L3 pressure systems, HEAD
# against 27405ff; (b) the distributed device CG's lanes (7d91a48, f12f97a) on one GPU shared by 2 ranks, L3
# strong run, Jacobi; (c) the device AMG across ranks (e49ef95) on one GPU, L2, 1 and 2 ranks.
set -u
G=$(cd "$(dirname "$0")" && pwd); O=$OUT; W=/tmp/w18; mkdir -p $W $O
for s in src src_old; do ln -sfn "$(cd $G/../.. && pwd)/.deps" $G/$s/.deps; done
export CMAKE_PREFIX_PATH="$G/src/.deps/usr:$G/metis/usr" LD_LIBRARY_PATH="$G/src/.deps/usr/lib/x86_64-linux-gnu:$G/metis/usr/lib/x86_64-linux-gnu"
t0=$(date +%s)
for s in src src_old; do
  ( cmake -S $G/$s -B /tmp/b_$s -DCMAKE_BUILD_TYPE=Release -DEF_BUILD_TESTS=OFF -DEF_WITH_PETSC=OFF > $W/build_$s.log 2>&1 &&
  cmake --build /tmp/b_$s -j8 >> $W/build_$s.log 2>&1 || tail -30 $W/build_$s.log ) &
done; wait
grep -m1 "MPI=" $W/build_src.log
( nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep "Model name" ) | tee $O/device.txt
echo "built at $(( $(date +%s)-t0 )) s"
R=$G/src
# (a) export the pressure systems (1 step, FCG + AMG at 1e-8), then the bench on both builds
for L in 2 3; do
  python3 - $R $L $W/exp$L.json $W/cav$L.bin <<'PY'
import json, sys
R, L, dst, binf = sys.argv[1:5]
p = json.load(open(R + "/test_examples/cavity3d/ProjectParameters.json")); ss = p["solver_settings"]
ss["model_import_settings"]["input_filename"] = R + "/test_examples/cavity3d/cavity3d.msh"
ss["model_import_settings"]["refinement_levels"] = int(L)
ss["solver_type"] = "opencl_edge_based"; ss["export_pressure_system"] = binf
ss["linear_solver_settings"] = {"solver_type": "fcg", "preconditioner_type": "amg", "tolerance": 1e-8}
p["output_processes"] = {}
json.dump(p, open(dst, "w"), indent=1)
PY
  timeout 120 /tmp/b_src/bin/edgeflow run $W/exp$L.json --steps 2 --output $W/exp$L --quiet > $W/exp$L.log 2>&1 || tail -5 $W/exp$L.log
  ls -la $W/cav$L.bin
done
echo "exported at $(( $(date +%s)-t0 )) s"
for r in 1 2; do for L in 2 3; do for b in src src_old; do
  timeout 120 /tmp/b_$b/bin/ef_amg_bench $W/cav$L.bin --null-space --small-rows 1024 --repeat 5 --no-jacobi --json $O/bench_L${L}_${b}_r$r.json > $W/bench_L${L}_${b}_r$r.log 2>&1
  echo "L$L $b r$r: $(grep -E '^refresh' $W/bench_L${L}_${b}_r$r.log) | $(grep -E '^solve|^iterations' $W/bench_L${L}_${b}_r$r.log | tr '\n' ' ')"
done; done; done
echo "bench at $(( $(date +%s)-t0 )) s"
# (b) lanes on one GPU, 2 ranks (L3 strong, Jacobi to 1e-6, 3 steps); old code beside
MA="-x OCL_ICD_FILENAMES=libpocl.so.2:libnvidia-opencl.so.1 --bind-to none"
for ln in 4 1 8; do
  python3 $R/benchmarks/mpi_scaling.py --build /tmp/b_src --ranks 2 --strong-levels 3 --steps 3 --device gpu:0 \
    --mpirun-args="$MA -x EDGEFLOW_MPI_CG_LANES=$ln" --workdir $W/msc --tag _lanes$ln --out $O/lanes$ln.json --timeout 200 2>&1 | tail -2
done
python3 $R/benchmarks/mpi_scaling.py --build /tmp/b_src_old --ranks 2 --strong-levels 3 --steps 3 --device gpu:0 \
  --mpirun-args="$MA" --workdir $W/msc --tag _old --out $O/lanes_old.json --timeout 200 2>&1 | tail -2
echo "lanes at $(( $(date +%s)-t0 )) s"
# (c) device AMG across ranks, one GPU, L2, 1 and 2 ranks
python3 $R/benchmarks/mpi_scaling.py --build /tmp/b_src --ranks 1,2 --strong-levels 2 --steps 5 --device gpu:0 \
  --mpirun-args="$MA" --linear-solver '{"solver_type": "fcg", "preconditioner_type": "amg"}' --tolerance 1e-8 \
  --workdir $W/msc --tag _amg --out $O/amg_ranks_L2.json --timeout 200 2>&1 | tail -5
echo "done at $(( $(date +%s)-t0 )) s"
