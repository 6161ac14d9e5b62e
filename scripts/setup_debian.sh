#!/usr/bin/env bash
# Install what edgeflow needs on Debian 12, only what is missing.
# Usage: scripts/setup_debian.sh [--tests] [--figures]
#   --tests adds what the test suite needs (xvfb for figures_render too, clang and its libFuzzer for the fuzz runs); --figures adds a virtual X server (xvfb), which
#   Debian's VTK (X-only, no EGL/OSMesa) needs to render offscreen on a machine without a display
#   (python_scripts/render_vtk.py and make_figures.py use it through xvfb-run).
set -euo pipefail
packages=(build-essential cmake pkg-config ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
          libcjson-dev libmatheval-dev zlib1g-dev gmsh python3 python3-numpy python3-vtk9 python3-matplotlib)
for arg in "$@"; do
  case "$arg" in
    --tests) packages+=(petsc-dev oclgrind xvfb xauth clang libclang-rt-14-dev llvm # clang: the fuzz smoke runs
                        libopenmpi-dev openmpi-bin libmetis-dev) ;; # the MPI build and its mpirun tests (docs/mpi.md)
    --figures) packages+=(xvfb xauth) ;;
  esac
done
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "edgeflow setup: installing ${missing[*]}"
  sudo_cmd=""
  [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update
  $sudo_cmd apt-get install -y --no-install-recommends "${missing[@]}"
fi
