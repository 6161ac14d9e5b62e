#!/usr/bin/env bash
# Everything measured on the GPU machine, in one call (the machine has gcc, cmake,
# OpenCL and CuPy, but no PETSc, VTK or Gmsh): build, then the selected parts.
#
# usage: benchmarks/gpu_session.sh OUT [cg] [cavity LEVELS] [ahmed STEPS]
#   cg            benchmarks/cg_peers.sh on the anchor matrices (N = 46, 100, 216) with our
#                 device CG, CuPy and ViennaCL in the same call -> OUT/cg/, OUT/cg_peers.md
#   cavity L      python_scripts/benchmark_cavity.py at levels L (e.g. 2,3) with the OpenMP
#                 strategy on all host cores and the OpenCL strategy on the GPU -> OUT/
#   ahmed S       scripts/run_ahmed.sh for S steps ('all': to end_time) on the GPU -> OUT/ahmed/
# Needs .deps (scripts/fetch_gpu_deps.sh) and, for ViennaCL, .deps/viennacl.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: gpu_session.sh OUT [cg] [cavity LEVELS] [ahmed STEPS]}
shift
mkdir -p "$out"
cd "$root"
export PYTHONUNBUFFERED=1
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nproc
  date -u +%Y-%m-%dT%H:%M:%SZ
} > "$out/machine.txt" 2>&1
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DEF_WITH_PETSC=OFF -DEF_WITH_VTK_TESTS=OFF \
  -DEF_WITH_GMSH_TESTS=OFF > "$out/build.log" 2>&1 &&
  cmake --build build-gpu -j"$(nproc)" --target edgeflow edgeflow_fluid ef_cl_cg >> "$out/build.log" 2>&1 ||
  { tail -30 "$out/build.log"; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    cg)
      bash benchmarks/cg_peers.sh --out "$out/cg" --ef-cl-cg build-gpu/bin/ef_cl_cg > "$out/cg_peers.md" \
        2> "$out/cg_peers.log"
      cat "$out/cg_peers.md"; shift ;;
    cavity)
      python3 python_scripts/benchmark_cavity.py --edgeflow build-gpu/bin/edgeflow --levels "$2" \
        --strategies openmp,gpu --budget "${EF_CAVITY_BUDGET:-300}" --out "$out" --tag gpu 2>&1 | tail -25
      shift 2 ;;
    ahmed)
      steps=(); [ "$2" = all ] || steps=(--steps "$2")
      bash scripts/run_ahmed.sh --build-dir build-gpu --no-build "${steps[@]}" --output "$out/ahmed" > "$out/ahmed.log" 2>&1
      tail -40 "$out/ahmed.log"; shift 2 ;;
    *) echo "gpu_session.sh: unknown part $1" >&2; exit 2 ;;
  esac
done
