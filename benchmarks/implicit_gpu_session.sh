#!/usr/bin/env bash
# Issue 16 on the GPU machine, in one call per phase (docs/implicit_viscosity.md):
#   tts: the 3D cavity at Re 100, level LEVEL, t = 0 -> T: time to solution, explicit against implicit,
#        on the OpenCL strategy and on the OpenMP strategy (all cores), one run at a time, each pair
#        compared (centreline |du|, time ratios): benchmarks/implicit_cavity3d.py;
#   obstacle: flow_past_obstacle at Re 20 to its steady state (tests/validation/flow_past_obstacle.py
#        --case re20, reference data in --shared DIR), each scheme:CFL of --variants (default explicit
#        and implicit at 1 and 4), on the OpenMP strategy (one thread, as CI) and on OpenCL;
#   cfl: the stable CFL_number (tools/cfl_bisect.py, 2000 steps from a developed state) of cavity3d
#        levels 0..LEVEL on the OpenCL strategy, explicit and implicit, all bisections at once (the
#        figures are stabilities, not timings).
# usage: benchmarks/implicit_gpu_session.sh OUT tts|cfl|obstacle [--level 2] [--t-end 1] [--cfl "1"] [--build DIR]
#            [--omp-steps-cut]   (tts: skip the OpenMP explicit run, the longest)
#            [--levels "0 1 2"] [--schemes "explicit implicit"]   (cfl: which bisections)
#            [--shared DIR] [--variants "explicit:1 implicit:4"]   (obstacle: the shared/ folder with
#                                     reference/, default ../shared; the scheme:CFL runs)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: implicit_gpu_session.sh OUT tts|cfl}
phase=${2:?usage: implicit_gpu_session.sh OUT tts|cfl}
shift 2
level=2; tend=1.0; cfls="1"; build="$root/build-gpu"; skip_omp_explicit=0; levels=""; schemes="explicit implicit"
shared="$root/../shared"; variants="explicit:1 implicit:1 explicit:4 implicit:4"
while [ $# -gt 0 ]; do
  case "$1" in
    --level) level=$2; shift 2 ;;
    --t-end) tend=$2; shift 2 ;;
    --cfl) cfls=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --omp-steps-cut) skip_omp_explicit=1; shift ;;
    --levels) levels=$2; shift 2 ;;
    --schemes) schemes=$2; shift 2 ;;
    --shared) shared=$2; shift 2 ;;
    --variants) variants=$2; shift 2 ;;
    *) echo "implicit_gpu_session.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"; out=$(cd "$out" && pwd)
export PYTHONUNBUFFERED=1
if [ -d "$root/.deps/usr/lib/x86_64-linux-gnu" ]; then
  export CMAKE_PREFIX_PATH="$root/.deps/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export LD_LIBRARY_PATH="$root/.deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DEF_BUILD_TESTS=OFF -DEF_WITH_PETSC=OFF > "$out/build.log" 2>&1 &&
  cmake --build "$build" -j"$(nproc)" --target edgeflow edgeflow_fluid >> "$out/build.log" 2>&1 ||
  { tail -30 "$out/build.log"; exit 1; }
py=python3
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/device.txt" 2>/dev/null
cat "$out/device.txt"
if [ "$phase" = tts ]; then
  b="$root/benchmarks/implicit_cavity3d.py"
  for c in $cfls; do
    $py "$b" run --build "$build" --out "$out" --level "$level" --t-end "$tend" --strategy opencl_edge_based --scheme explicit --cfl "$c"
    $py "$b" run --build "$build" --out "$out" --level "$level" --t-end "$tend" --strategy opencl_edge_based --scheme implicit --cfl "$c"
    $py "$b" compare "$out/opencl_edge_based_explicit_cfl${c}_L$level.json" "$out/opencl_edge_based_implicit_cfl${c}_L$level.json" \
      --json "$out/compare_opencl_cfl${c}_L$level.json"
  done
  export OMP_NUM_THREADS=$(nproc) OMP_PROC_BIND=close OMP_PLACES=cores
  c=${cfls%% *}
  $py "$b" run --build "$build" --out "$out" --level "$level" --t-end "$tend" --strategy openmp_edge_based --scheme implicit --cfl "$c"
  if [ $skip_omp_explicit = 0 ]; then
    $py "$b" run --build "$build" --out "$out" --level "$level" --t-end "$tend" --strategy openmp_edge_based --scheme explicit --cfl "$c"
    $py "$b" compare "$out/openmp_edge_based_explicit_cfl${c}_L$level.json" "$out/openmp_edge_based_implicit_cfl${c}_L$level.json" \
      --json "$out/compare_openmp_cfl${c}_L$level.json"
  fi
elif [ "$phase" = obstacle ]; then
  for strat in openmp_edge_based opencl_edge_based; do
    for v in $variants; do
      scheme=${v%%:*}; c=${v##*:}
      name=obstacle_re20_${strat%%_*}_${scheme}_cfl$c
      ov="{\"solver_type\": \"$strat\", \"viscous_time_integration\": \"$scheme\", \"time_stepping\": {\"CFL_number\": $c}}"
      t0=$(date +%s.%N)
      EDGEFLOW_VALIDATION_SOLVER_SETTINGS="$ov" OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive \
        $py "$root/tests/validation/flow_past_obstacle.py" --source "$root" --shared "$shared" --lib "$build/lib" \
        --work "$out/work_$name" --results "$out/$name.json" --case re20 > "$out/$name.log" 2>&1
      rc=$?
      t1=$(date +%s.%N)
      echo "$name: rc $rc, wall $($py -c "print(round($t1 - $t0, 2))") s, $(grep -E 'steps =|c_D =|L_a =|c_L =' "$out/$name.log" | sed 's/flow_past_obstacle_re20: //; s/ *(bound.*//' | tr '\n' ' ')"
    done
  done
else
  pids=""
  for l in ${levels:-$(seq 0 "$level")}; do
    for s in $schemes; do
      $py "$root/tools/cfl_bisect.py" --build "$build" --work "$out/w_L${l}_$s" --case "cavity3d:$l" --scheme "$s" \
        --strategy opencl_edge_based --json "$out/cfl_cavity3d_L${l}_$s.json" > "$out/cfl_cavity3d_L${l}_$s.log" 2>&1 &
      pids="$pids $!"
    done
  done
  wait $pids
  tail -n 2 "$out"/cfl_*.log
fi
