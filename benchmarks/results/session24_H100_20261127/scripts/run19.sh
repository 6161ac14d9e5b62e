#!/usr/bin/env bash
# session 24 call 4 (4 x H100): weak scaling with the distributed CG's lanes (7d91a48, f12f97a), strong scaling of
# the level-3 cavity with the Jacobi CG and with the device AMG across ranks (e49ef95...).
set -u
G=$(cd "$(dirname "$0")" && pwd); O=$OUT; W=/tmp/w19; mkdir -p $W $O
ln -sfn "$(cd $G/../.. && pwd)/.deps" $G/src/.deps
export CMAKE_PREFIX_PATH="$G/src/.deps/usr:$G/metis/usr" LD_LIBRARY_PATH="$G/src/.deps/usr/lib/x86_64-linux-gnu:$G/metis/usr/lib/x86_64-linux-gnu"
t0=$(date +%s)
cmake -S $G/src -B /tmp/b_src -DCMAKE_BUILD_TYPE=Release -DEF_BUILD_TESTS=OFF -DEF_WITH_PETSC=OFF > $W/build.log 2>&1 &&
  cmake --build /tmp/b_src -j32 >> $W/build.log 2>&1 || tail -30 $W/build.log
grep -m1 "MPI=" $W/build.log
( nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvidia-smi topo -m | head -6; lscpu | grep "Model name"; mpirun --version | head -1 ) | tee $O/device.txt
echo "built at $(( $(date +%s)-t0 )) s"
R=$G/src; MS="python3 $R/benchmarks/mpi_scaling.py --build /tmp/b_src --workdir $W/msc --timeout 240"
MA="-x OCL_ICD_FILENAMES=libpocl.so.2:libnvidia-opencl.so.1 --bind-to none"
$MS --ranks 1,2,4 --strong-levels 3 --steps 5 --mpirun-args="$MA" --out $O/strong_L3_jacobi.json 2>&1 | tail -6
echo "strong jacobi at $(( $(date +%s)-t0 )) s"
$MS --ranks 1,2,4 --strong-levels 3 --steps 5 --tolerance 1e-8 --mpirun-args="$MA" \
  --linear-solver '{"solver_type": "fcg", "preconditioner_type": "amg"}' --tag _amg --out $O/strong_L3_amg.json 2>&1 | tail -6
echo "strong amg at $(( $(date +%s)-t0 )) s"
$MS --ranks 1,2,4 --weak-only --mpirun-args="$MA" --out $O/weak.json 2>&1 | tail -6
echo "weak at $(( $(date +%s)-t0 )) s"
$MS --ranks 4 --weak-only --mpirun-args="$MA -x EDGEFLOW_MPI_CG_LANES=8" --out $O/weak_lanes8.json 2>&1 | tail -3
echo "done at $(( $(date +%s)-t0 )) s"
