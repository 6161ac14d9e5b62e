#!/usr/bin/env bash
# session 24 final call (4 x H100): (a) strong scaling of cavity level 3 with the device AMG across ranks, the
# first set-up left out (752ec90); (b) the byte-offset refresh (1947d73) against 27405ff with ef_amg_bench on the
# exported level-3 pressure system, GPU 0.
set -u
G=$(cd "$(dirname "$0")" && pwd); O=$OUT; W=/tmp/w23; mkdir -p $W $O
for s in src src_old; do ln -sfn "$(cd $G/../.. && pwd)/.deps" $G/$s/.deps; done
export CMAKE_PREFIX_PATH="$G/src/.deps/usr:$G/metis/usr" LD_LIBRARY_PATH="$G/src/.deps/usr/lib/x86_64-linux-gnu:$G/metis/usr/lib/x86_64-linux-gnu"
t0=$(date +%s)
for s in src src_old; do
  ( cmake -S $G/$s -B /tmp/b_$s -DCMAKE_BUILD_TYPE=Release -DEF_BUILD_TESTS=OFF -DEF_WITH_PETSC=OFF > $W/build_$s.log 2>&1 &&
  cmake --build /tmp/b_$s -j32 >> $W/build_$s.log 2>&1 || tail -30 $W/build_$s.log ) &
done; wait
( nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep "Model name"; mpirun --version | head -1 ) | tee $O/device.txt
echo "built at $(( $(date +%s)-t0 )) s"
R=$G/src; MA="-x OCL_ICD_FILENAMES=libpocl.so.2:libnvidia-opencl.so.1 --bind-to none"
python3 $R/benchmarks/mpi_scaling.py --build /tmp/b_src --workdir $W/msc --timeout 200 --ranks 1,2,4 --strong-levels 3 \
  --steps 10 --tolerance 1e-8 --mpirun-args="$MA" --linear-solver '{"solver_type": "fcg", "preconditioner_type": "amg"}' \
  --tag _amg --out $O/strong_L3_amg.json 2>&1 | tail -7
python3 $R/benchmarks/mpi_scaling.py --build /tmp/b_src --workdir $W/msc --timeout 200 --ranks 2,4 --strong-levels 3 \
  --steps 10 --tolerance 1e-8 --mpirun-args="$MA" \
  --linear-solver '{"solver_type": "fcg", "preconditioner_type": "amg", "amg_gather_rows": 20000}' \
  --tag _amg_g20k --out $O/strong_L3_amg_g20k.json 2>&1 | tail -5
echo "strong amg at $(( $(date +%s)-t0 )) s"
# (c) strong scaling at level 4 (11.6M nodes), Jacobi CG at 1e-6, 4 ranks then 1, while time allows
if [ $(( $(date +%s)-t0 )) -lt 200 ]; then
  timeout 330 python3 $R/benchmarks/mpi_scaling.py --build /tmp/b_src --workdir $W/msc --timeout 300 --ranks 4,1 --strong-levels 4 \
    --steps 5 --mpirun-args="$MA" --out $O/strong_L4_jacobi.json 2>&1 | tail -6
fi
echo "strong L4 at $(( $(date +%s)-t0 )) s"
[ $(( $(date +%s)-t0 )) -lt 470 ] || { echo "no time left for the refresh bench"; exit 0; }
python3 - $R $W/exp3.json $W/cav3.bin <<'PY'
import json, sys
R, dst, binf = sys.argv[1:4]
p = json.load(open(R + "/test_examples/cavity3d/ProjectParameters.json")); ss = p["solver_settings"]
ss["model_import_settings"]["input_filename"] = R + "/test_examples/cavity3d/cavity3d.msh"
ss["model_import_settings"]["refinement_levels"] = 3
ss["solver_type"] = "opencl_edge_based"
ss["linear_solver_settings"] = {"solver_type": "fcg", "preconditioner_type": "amg", "tolerance": 1e-8, "export_pressure_system": binf}
p["output_processes"] = {}; p["problem_data"]["output_folder"] = "/tmp/w23/exp3"
json.dump(p, open(dst, "w"), indent=1)
PY
EDGEFLOW_OPENCL_DEVICE=gpu:0 timeout 120 /tmp/b_src/bin/edgeflow run $W/exp3.json --steps 2 --quiet > $W/exp3.log 2>&1 || tail -3 $W/exp3.log
ls -la $W/cav3.bin
for r in 1 2; do for b in src src_old; do
  EDGEFLOW_OPENCL_DEVICE=gpu:0 timeout 120 /tmp/b_$b/bin/ef_amg_bench $W/cav3.bin --null-space --small-rows 1024 --repeat 5 --no-jacobi --device gpu:0 --json $O/bench_L3_${b}_r$r.json > $W/bench_${b}_r$r.log 2>&1
  echo "L3 $b r$r: $(grep -E '^refresh|^solve|^iterations|^memory|hierarchy' $W/bench_${b}_r$r.log | tr '\n' ' ')"
done; done
echo "done at $(( $(date +%s)-t0 )) s"
