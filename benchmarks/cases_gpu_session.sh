#!/usr/bin/env bash
# Whole cases on the GPU machine, in one call: build, then the selected parts.
#
# usage: benchmarks/cases_gpu_session.sh OUT [kratos] [share] [re1000 LEVELS SECONDS]
#   kratos      benchmarks/kratos_compare.py on .peers/kratos_cases/channel_sphere2D: Kratos itself
#               (pip wheels in .peers/wheels, installed into a venv here, 1 and all host threads)
#               beside edgeflow's opencl_edge_based on the GPU and openmp_edge_based on all host
#               cores, the case's time step, time to solution -> OUT/kratos_compare_*.json
#   share       benchmarks/kratos_case_gpu.sh: output + processes share of the loop with the case's
#               time step and with 0.1 (cut by the stability limit) -> OUT/share/
#   re1000 L S  test_examples/cavity3d/ProjectParameters_re1000.json on the GPU at each level of L
#               (e.g. 1,2), each run capped at S seconds of wall time, then
#               python_scripts/compare_cavity3d_re1000.py -> OUT/re1000_L<l>/
# Needs .deps (scripts/fetch_gpu_deps.sh); .peers/wheels and .peers/kratos_cases for 'kratos'.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: cases_gpu_session.sh OUT [kratos] [share] [re1000 LEVELS SECONDS]}
shift
mkdir -p "$out"; out=$(cd "$out" && pwd)
cd "$root"
export PYTHONUNBUFFERED=1
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nproc
  date -u +%Y-%m-%dT%H:%M:%SZ
} > "$out/machine.txt" 2>&1
cat "$out/machine.txt"
t0=$(date +%s)
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DEF_WITH_PETSC=OFF -DEF_WITH_VTK_TESTS=OFF \
  -DEF_WITH_GMSH_TESTS=OFF > "$out/build.log" 2>&1 &&
  cmake --build build-gpu -j"$(nproc)" --target edgeflow edgeflow_fluid >> "$out/build.log" 2>&1 ||
  { tail -30 "$out/build.log"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
bin=$root/build-gpu/bin/edgeflow
case_dir=$root/.peers/kratos_cases/channel_sphere2D
while [ $# -gt 0 ]; do
  case "$1" in
    kratos)
      python3 -m venv --system-site-packages /tmp/kratos > "$out/kratos_install.log" 2>&1 &&
        /tmp/kratos/bin/pip install --no-index --no-deps "$root"/.peers/wheels/kratos*.whl >> "$out/kratos_install.log" 2>&1 ||
        { tail -20 "$out/kratos_install.log"; exit 1; }
      n=$(nproc)
      python3 benchmarks/kratos_compare.py --case "$case_dir" --kratos-python /tmp/kratos/bin/python \
        --edgeflow "$bin" --work /tmp/kc_gpu --kratos-threads "1,$n" --edgeflow-strategy opencl_edge_based \
        --repeat 2 --out "$out/kratos_compare_opencl.json" 2>&1 | tail -12
      python3 benchmarks/kratos_compare.py --case "$case_dir" --kratos-python /tmp/kratos/bin/python \
        --edgeflow "$bin" --work /tmp/kc_omp --kratos-threads "" --edgeflow-threads "$n" \
        --edgeflow-strategy openmp_edge_based --repeat 2 --out "$out/kratos_compare_openmp.json" 2>&1 | tail -6
      shift ;;
    share)
      EDGEFLOW=$bin bash benchmarks/kratos_case_gpu.sh "$case_dir" "$out/share" opencl_edge_based case 0.1 2>&1 | tail -3
      shift ;;
    re1000)
      for lev in ${2//,/ }; do
        d=$out/re1000_L$lev; mkdir -p "$d"
        t1=$(date +%s.%N)
        timeout "$3" "$bin" run test_examples/cavity3d/ProjectParameters_re1000.json --refine "$lev" --output "$d" \
          --quiet > "$d/log" 2>&1
        rc=$?
        echo "re1000 level $lev: exit $rc, $(python3 -c "print(f'{$(date +%s.%N) - $t1:.1f}')") s"
        tail -3 "$d/log"
        python3 python_scripts/compare_cavity3d_re1000.py "$d" --json "$d/compare.json" | tail -4
      done
      shift 3 ;;
    *) echo "cases_gpu_session.sh: unknown part $1" >&2; exit 2 ;;
  esac
done
