#!/usr/bin/env bash
# session 27 call 7: the one-group small-level kernels' items on a GPU (AMG_SMALL_WGS_GPU 1024 = a331543, 512, 256):
# ef_amg_bench on the exported obstacle and cavity3d L2 systems (cold start to 1e-8, median of 5, phases).
set -u
G=$(cd "$(dirname "$0")" && pwd); O=$OUT; mkdir -p $O
for s in src_w1024 src_w512 src_w256; do ln -sfn "$(cd $G/../.. && pwd)/.deps" $G/$s/.deps; done
export CMAKE_PREFIX_PATH="$G/src_w1024/.deps/usr" LD_LIBRARY_PATH="$G/src_w1024/.deps/usr/lib/x86_64-linux-gnu"
t0=$(date +%s)
for s in src_w1024 src_w512 src_w256; do
  ( cmake -S $G/$s -B /tmp/b_$s -DCMAKE_BUILD_TYPE=Release -DEF_BUILD_TESTS=OFF -DEF_WITH_PETSC=OFF > /tmp/bl_$s 2>&1 &&
    cmake --build /tmp/b_$s -j5 --target edgeflow edgeflow_fluid ef_amg_bench >> /tmp/bl_$s 2>&1 || tail -20 /tmp/bl_$s ) &
done; wait
echo "built at $(( $(date +%s)-t0 )) s"
for r in 1 2; do for s in src_w1024 src_w512 src_w256; do
  bash $G/$s/benchmarks/amg_case_matrices.sh $O/${s}_r$r --cases "obstacle:0 cavity3d:2" --build /tmp/b_$s 2>&1 | grep -E "==|AMG-FCG|phases|launch probe" | sed "s/^/$s r$r: /"
done; done
echo "done at $(( $(date +%s)-t0 )) s"
find $O -name "*.bin" -delete; find $O -name "run" -type d -exec rm -rf {} +; find $O -name build.log -delete
tar -czf $O/all.tgz -C $O $(cd $O && ls -d src_w*); rm -rf $O/src_w*
