#!/usr/bin/env bash
# diagnostic: the device AMG across ranks' per-step cost on separate GPUs (L2, 2 ranks), with perf on rank 0
set -u
G=$(cd "$(dirname "$0")" && pwd); O=$OUT; W=/tmp/w20; mkdir -p $W
export LD_LIBRARY_PATH="$G/src/.deps/usr/lib/x86_64-linux-gnu:$G/metis/usr/lib/x86_64-linux-gnu"
ln -sfn "$(cd $G/../.. && pwd)/.deps" $G/src/.deps
export CMAKE_PREFIX_PATH="$G/src/.deps/usr:$G/metis/usr"
[ -x /tmp/b_src/bin/edgeflow ] || { cmake -S $G/src -B /tmp/b_src -DCMAKE_BUILD_TYPE=Release -DEF_BUILD_TESTS=OFF -DEF_WITH_PETSC=OFF > $W/build.log 2>&1 && cmake --build /tmp/b_src -j32 >> $W/build.log 2>&1 || tail -20 $W/build.log; }
ls /tmp/b_src/bin/edgeflow || exit 1
which perf gdb nsys 2>&1 | head -3
R=$G/src
python3 - $R $W/c.json <<'PY'
import json, sys
R, dst = sys.argv[1:3]
p = json.load(open(R + "/test_examples/cavity3d/ProjectParameters.json")); ss = p["solver_settings"]
ss["model_import_settings"]["input_filename"] = R + "/test_examples/cavity3d/cavity3d.msh"
ss["model_import_settings"]["refinement_levels"] = 2
ss["solver_type"] = "opencl_edge_based"
ss["linear_solver_settings"] = {"solver_type": "fcg", "preconditioner_type": "amg", "tolerance": 1e-8}
p["problem_data"]["parallel_type"] = "MPI"; p["problem_data"]["output_folder"] = "/tmp/w20/out"
p["output_processes"] = {}
json.dump(p, open(dst, "w"), indent=1)
PY
cat > $W/wrap.sh <<'SH'
#!/bin/bash
export EDGEFLOW_OPENCL_DEVICE=gpu:$OMPI_COMM_WORLD_LOCAL_RANK
if [ "$OMPI_COMM_WORLD_RANK" = 0 ] && command -v perf >/dev/null; then exec perf record -F 999 -g -o /tmp/w20/perf.data "$@"; fi
exec "$@"
SH
chmod +x $W/wrap.sh
timeout 200 mpirun --allow-run-as-root -n 2 -x OCL_ICD_FILENAMES=libpocl.so.2:libnvidia-opencl.so.1 --bind-to none $W/wrap.sh /tmp/b_src/bin/edgeflow run $W/c.json --steps 4 --overwrite > $W/run.log 2>&1; echo rc=$?; tail -5 $W/run.log
python3 - <<'PY'
import json
s = json.load(open("/tmp/w20/out/run_summary.json"))
st = s["strategy"]; print(json.dumps(st.get("pressure_solver")), json.dumps(st.get("mpi", {}).get("exchange_seconds")))
for g, d in s["events"].items():
    for k, v in d.items():
        if v.get("seconds", 0) > 0.02: print(f"  {g:8s} {k:45s} {v['seconds']:.3f} s, {v.get('calls')} calls")
PY
[ -f $W/perf.data ] && perf report -i $W/perf.data --no-children --sort dso,symbol -g none 2>/dev/null | grep "%" | head -40
