#!/usr/bin/env bash
# Pressure-solver comparison with the peers, in one call on the GPU machine:
# builds ef_cl_cg (CMake, without PETSc, OpenMP or the tests) and ViennaCL's
# vcl_cg (when its headers are unpacked), generates the anchor matrices, runs
# CuPy's Jacobi CG, ViennaCL's CGs and our device CG (both variants, tuned) on the
# same files, clpeak if present, then writes OUT/results.json and prints a
# Markdown table.  Missing peers are skipped, so it also runs on PoCL alone:
#     benchmarks/cg_peers.sh --sizes 20 --iters 50          (smoke test)
#
# usage: benchmarks/cg_peers.sh [--peers DIR] [--sizes "46 100 216"] [--iters 200]
#            [--out DIR] [--ef-cl-cg PROGRAM] [--viennacl DIR] [--python PY] [--device SPEC]
#   --peers     folder with gen_laplacian.py, cupy_cg.py, vcl_cg.cpp (default: ../shared/peers
#               beside the repo, else .peers/ in the repo)
#   --sizes     N values: N^3 rows (46 -> 97,336; 100 -> 1e6; 216 -> 1.0e7, H200 only)
#   --iters     iterations of the fixed-count timings
#   --out       results folder (default: out/cg_peers-<date> in the repo)
#   --ef-cl-cg  an already built ef_cl_cg (default: build one with CMake in OUT/build)
#   --viennacl  root of the unpacked libviennacl-dev (default: .deps/viennacl in the repo;
#               prepare with: apt-get download libviennacl-dev && dpkg -x libviennacl-dev_*.deb .deps/viennacl)
#   --device    OpenCL device for ef_cl_cg (default: NVIDIA:0 when an NVIDIA platform exists)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
peers=""
sizes="46 100 216"
iters=200
out=""
program=""
viennacl="$root/.deps/viennacl"
python=""
device=""
while [ $# -gt 0 ]; do
  case "$1" in
    --peers) peers=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --ef-cl-cg) program=$2; shift 2 ;;
    --viennacl) viennacl=$2; shift 2 ;;
    --python) python=$2; shift 2 ;;
    --device) device=$2; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "cg_peers.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ -z "$peers" ]; then
  for d in "$root/../shared/peers" "$root/shared/peers" "$root/.peers"; do
    [ -d "$d" ] && { peers=$(cd "$d" && pwd); break; }
  done
fi
[ -n "$out" ] || out="$root/out/cg_peers-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out/bin"
out=$(cd "$out" && pwd)
log() { echo "== $*" >&2; }

# A Python with NumPy (the Debian one here, the CuPy one on the GPU machine).
if [ -z "$python" ]; then
  for p in python3 /usr/bin/python3; do
    if "$p" -c "import numpy" 2>/dev/null; then python=$p; break; fi
  done
fi
[ -n "$python" ] || { echo "cg_peers.sh: no Python with NumPy" >&2; exit 1; }
have_cupy=0
"$python" -c "import cupy; cupy.cuda.runtime.getDeviceCount()" >/dev/null 2>&1 && have_cupy=1

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -n) $(uname -m)"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  echo "peers: ${peers:-none}; cupy: $have_cupy"
} > "$out/machine.txt" 2>&1

# OpenCL headers and library: the system's, or CUDA's (then named to CMake as hints).
cl_flags=""
cl_hints=()
for inc in /usr/include /usr/local/cuda/include /usr/local/cuda/targets/x86_64-linux/include; do
  [ -f "$inc/CL/cl.h" ] && { cl_flags="-I$inc"; break; }
done
[ -n "$cl_flags" ] && [ "$cl_flags" != "-I/usr/include" ] && cl_hints+=("-DOpenCL_INCLUDE_DIR=${cl_flags#-I}")
cl_lib="-lOpenCL"
if ! echo 'int main(void){return 0;}' | gcc -x c - -o /dev/null -lOpenCL 2>/dev/null; then
  for lib in /usr/local/cuda/lib64 /usr/lib/x86_64-linux-gnu; do
    if [ -e "$lib/libOpenCL.so.1" ]; then cl_lib="$lib/libOpenCL.so.1"; break; fi
  done
fi
[ "$cl_lib" != "-lOpenCL" ] && cl_hints+=("-DOpenCL_LIBRARY=$cl_lib")

# ef_cl_cg, built by the project's CMake (the log in OUT/build.log).
if [ -z "$program" ]; then
  log "building ef_cl_cg"
  { cmake -S "$root" -B "$out/build" -DCMAKE_BUILD_TYPE=Release -DEF_BUILD_TESTS=OFF -DEF_WITH_PETSC=OFF \
      -DEF_WITH_OPENMP=OFF -DEF_WITH_OPENCL=ON ${cl_hints[@]+"${cl_hints[@]}"} &&
    cmake --build "$out/build" --parallel "$(nproc)" --target ef_cl_cg; } > "$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log" >&2; echo "cg_peers.sh: building ef_cl_cg failed" >&2; exit 1; }
  program="$out/build/bin/ef_cl_cg"
fi
"$program" --list-devices > "$out/devices.txt" 2>&1
cat "$out/devices.txt" >&2
has_nvidia=0
grep -qi "^Platform.*NVIDIA" "$out/devices.txt" && has_nvidia=1
if [ -z "$device" ] && [ $has_nvidia = 1 ]; then device="NVIDIA:0"; fi
dev_args=()
[ -n "$device" ] && dev_args=(--device "$device")

# ViennaCL's CG (its own OpenCL context on the NVIDIA platform).
vcl=""
if [ -n "$peers" ] && [ -f "$peers/vcl_cg.cpp" ] && [ -d "$viennacl/usr/include/viennacl" ] &&
   command -v g++ >/dev/null && [ $has_nvidia = 1 ]; then
  log "building vcl_cg"
  if g++ -O3 -w -DCL_TARGET_OPENCL_VERSION=120 -I"$viennacl/usr/include" $cl_flags "$peers/vcl_cg.cpp" -o "$out/bin/vcl_cg" $cl_lib \
      > "$out/vcl_build.log" 2>&1; then
    vcl="$out/bin/vcl_cg"
  else
    log "vcl_cg did not build (see $out/vcl_build.log): skipped"
  fi
else
  log "ViennaCL peer skipped (needs $viennacl/usr/include/viennacl, g++ and an NVIDIA platform)"
fi

# clpeak's global bandwidth on the same platform.
if command -v clpeak >/dev/null; then
  pidx=0
  if [ $has_nvidia = 1 ]; then
    pidx=$(grep -i "^Platform" "$out/devices.txt" | grep -in nvidia | head -1 | sed 's/:.*//')
    pidx=$((pidx - 1))
  fi
  log "clpeak on platform $pidx"
  timeout 300 clpeak -p "$pidx" --global-bandwidth > "$out/clpeak.log" 2>&1 || true
fi

for n in $sizes; do
  file="$out/lap_$n.bin"
  log "N=$n: generating $file"
  if [ $have_cupy = 1 ] && [ -n "$peers" ] && [ -f "$peers/gen_laplacian.py" ]; then
    "$python" "$peers/gen_laplacian.py" "$n" "$file" > "$out/N${n}_gen.log" 2>&1
  else
    "$python" "$root/benchmarks/cg_peers.py" gen "$n" "$file" > "$out/N${n}_gen.log" 2>&1
  fi || { cat "$out/N${n}_gen.log" >&2; log "N=$n: generation failed, skipped"; continue; }
  cat "$out/N${n}_gen.log" >&2
  for variant in standard three-term; do
    log "N=$n: ef_cl_cg $variant"
    "$program" "$file" "$iters" --variant "$variant" --verbose "${dev_args[@]}" > "$out/N${n}_ef_$variant.log" 2>&1
    cat "$out/N${n}_ef_$variant.log" >&2
  done
  if [ $have_cupy = 1 ] && [ -f "$peers/cupy_cg.py" ]; then
    log "N=$n: cupy_cg"
    "$python" "$peers/cupy_cg.py" "$file" "$iters" > "$out/N${n}_cupy.log" 2>&1
    cat "$out/N${n}_cupy.log" >&2
  fi
  if [ -n "$vcl" ]; then
    log "N=$n: vcl_cg"
    "$vcl" "$file" "$iters" > "$out/N${n}_vcl.log" 2>&1
    cat "$out/N${n}_vcl.log" >&2
  fi
  # The matrices are large (2.4 GB at N = 216): keep only the small ones.
  [ "$n" -le 50 ] || rm -f "$file"
done

"$python" "$root/benchmarks/cg_peers.py" report "$out"
