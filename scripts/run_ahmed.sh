#!/usr/bin/env bash
# Run the Ahmed-body benchmark (test_examples/ahmed_body: half body, 25 deg slant, U = 60 m/s,
# ~78,000 nodes / 410,000 tetrahedra after the load-time refinement) with the OpenCL strategy on
# the default OpenCL device (the first GPU, else the CPU through PoCL), writing the drag/lift
# history (body_forces.csv), the symmetry-plane VTU and run_summary.json to out/ahmed_body.
#   scripts/run_ahmed.sh [--steps N] [--solver-type NAME] [--refine K] [--output DIR]
#                        [--build-dir DIR] [--no-build] [-- extra edgeflow options]
# Builds edgeflow first when the build folder has no edgeflow binary (Release); an existing build
# folder is only brought up to date (cmake --build), never reconfigured.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build"
out="$root/out/ahmed_body"
do_build=1
args=()
while (($#)); do
  case "$1" in
    --steps|--solver-type|--refine)
      (($# >= 2)) || { echo "run_ahmed.sh: $1 needs a value" >&2; exit 2; }
      args+=("$1" "$2"); shift 2 ;;
    --output) out=$2; shift 2 ;;
    --build-dir) build=$(cd "$2" 2>/dev/null && pwd || echo "$2"); shift 2 ;;
    --no-build) do_build=0; shift ;;
    --) shift; args+=("$@"); break ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "run_ahmed.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
if ((do_build)); then
  if [[ ! -x "$build/bin/edgeflow" ]]; then
    "$root/scripts/setup_debian.sh"
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  cmake --build "$build" -j"$(nproc)" --target edgeflow edgeflow_fluid
fi
"$build/bin/edgeflow" devices
"$build/bin/edgeflow" run "$root/test_examples/ahmed_body/ProjectParameters.json" --output "$out" --overwrite "${args[@]}"
echo "forces: $out/body_forces.csv"
echo "plot:   /usr/bin/python3 $root/python_scripts/ahmed_body.py plot --forces $out/body_forces.csv --out $root/docs/figures"
echo "ParaView: $out/vtk/symmetry.pvd (symmetry plane)"
