#!/usr/bin/env bash
# session 27 call 3: per-phase device times of the AMG cycle (ef_amg_bench on the exported obstacle and cavity3d L2
# pressure systems, cold start to 1e-8, median of 5) for effe875 (src_old), the fused launches (src) and src_k1.
set -u
G=$(cd "$(dirname "$0")" && pwd); O=$OUT; mkdir -p $O
for s in src src_old src_k1; do ln -sfn "$(cd $G/../.. && pwd)/.deps" $G/$s/.deps; done
export CMAKE_PREFIX_PATH="$G/src/.deps/usr" LD_LIBRARY_PATH="$G/src/.deps/usr/lib/x86_64-linux-gnu"
t0=$(date +%s)
for s in src_old src src_k1; do
  bash $G/$s/benchmarks/amg_case_matrices.sh $O/$s --cases "obstacle:0 cavity3d:2" --build /tmp/b_$s 2>&1 | sed "s/^/$s: /"
  echo "$s at $(( $(date +%s)-t0 )) s"
done
find $O -name "*.bin" -delete; find $O -name "run" -type d -exec rm -rf {} +
tar -czf $O/all.tgz -C $O src src_old src_k1; rm -rf $O/src $O/src_old $O/src_k1
