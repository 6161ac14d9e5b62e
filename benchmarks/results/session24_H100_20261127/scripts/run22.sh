#!/usr/bin/env bash
# diagnostic: EDGEFLOW_AMG_MPI_PROFILE of the device AMG across ranks, L2 and L3, 2 ranks on 2 GPUs
set -u
G=$(cd "$(dirname "$0")" && pwd); W=/tmp/w22; mkdir -p $W
ln -sfn "$(cd $G/../.. && pwd)/.deps" $G/src/.deps
export CMAKE_PREFIX_PATH="$G/src/.deps/usr:$G/metis/usr" LD_LIBRARY_PATH="$G/src/.deps/usr/lib/x86_64-linux-gnu:$G/metis/usr/lib/x86_64-linux-gnu"
rm -rf /tmp/b22; cmake -S $G/src -B /tmp/b22 -DCMAKE_BUILD_TYPE=Release -DEF_BUILD_TESTS=OFF -DEF_WITH_PETSC=OFF > $W/build.log 2>&1 && cmake --build /tmp/b22 -j32 >> $W/build.log 2>&1 || tail -20 $W/build.log
R=$G/src
for L in 3; do
python3 - $R $W/c$L.json $L <<'PY'
import json, sys
R, dst, L = sys.argv[1:4]
p = json.load(open(R + "/test_examples/cavity3d/ProjectParameters.json")); ss = p["solver_settings"]
ss["model_import_settings"]["input_filename"] = R + "/test_examples/cavity3d/cavity3d.msh"
ss["model_import_settings"]["refinement_levels"] = int(L)
ss["solver_type"] = "opencl_edge_based"
ss["linear_solver_settings"] = {"solver_type": "fcg", "preconditioner_type": "amg", "tolerance": 1e-8}
p["problem_data"]["parallel_type"] = "MPI"; p["problem_data"]["output_folder"] = "/tmp/w22/out" + L
p["output_processes"] = {}
json.dump(p, open(dst, "w"), indent=1)
PY
echo "== L$L, 2 ranks"
timeout 200 mpirun --allow-run-as-root -n 2 -x OCL_ICD_FILENAMES=libpocl.so.2:libnvidia-opencl.so.1 -x EDGEFLOW_AMG_MPI_PROFILE=1 --bind-to none \
  bash -c 'EDGEFLOW_OPENCL_DEVICE=gpu:$OMPI_COMM_WORLD_LOCAL_RANK exec "$@"' _ /tmp/b22/bin/edgeflow run $W/c$L.json --steps 4 --overwrite --quiet 2>&1 | grep -v "needs .* MiB" | tail -24; echo; mpirun --version | head -1
python3 -c "
import json; s=json.load(open('/tmp/w22/out$L/run_summary.json')); st=s['strategy']; print(json.dumps(st.get('pressure_solver')), st.get('mpi',{}).get('exchange_seconds'))"
done
