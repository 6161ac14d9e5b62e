#!/usr/bin/env bash
# Set up a Debian 12 machine, build edgeflow, and run the paper's benchmark:
# the 3D lid-driven cavity (Re = 100, t = 0 -> 0.1 s) with the OpenCL strategy
# on the default OpenCL device (the first GPU, else the CPU through PoCL),
# writing ParaView files (.pvd + .vtu) and run_summary.json to out/cavity3d.
#   scripts/run_cavity.sh [REFINEMENT_LEVEL] [extra edgeflow options]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup_debian.sh"
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$root/build" -j"$(nproc)" --target edgeflow edgeflow_fluid
level=${1:-0}
shift || true
"$root/build/bin/edgeflow" devices
"$root/build/bin/edgeflow" run "$root/test_examples/cavity3d/ProjectParameters.json" \
  --refine "$level" --output "$root/out/cavity3d" --overwrite "$@"
echo "ParaView: open $root/out/cavity3d/vtk/FluidModelPart.pvd"
