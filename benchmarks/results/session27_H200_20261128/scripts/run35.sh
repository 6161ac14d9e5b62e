#!/usr/bin/env bash
# session 27 call 4: first-touch cost of fresh memory on this host (4 KiB pages against MADV_HUGEPAGE, 1/4/16
# threads) and the THP settings; HEAD's Initialize phases (implicit cavity3d L2, t = 0 -> 0.05, three runs).
set -u
G=$(cd "$(dirname "$0")" && pwd); O=$OUT; W=/tmp/w35; mkdir -p $W $O/runs
cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag; uname -r
gcc -O2 -fopenmp $G/probe/touch.c -o $W/touch && $W/touch 512
ln -sfn "$(cd $G/../.. && pwd)/.deps" $G/src/.deps
export CMAKE_PREFIX_PATH="$G/src/.deps/usr" LD_LIBRARY_PATH="$G/src/.deps/usr/lib/x86_64-linux-gnu"
t0=$(date +%s)
cmake -S $G/src -B /tmp/b_src -DCMAKE_BUILD_TYPE=Release -DEF_BUILD_TESTS=OFF -DEF_WITH_PETSC=OFF > $W/build.log 2>&1 &&
  cmake --build /tmp/b_src -j16 >> $W/build.log 2>&1 || tail -30 $W/build.log
echo "built at $(( $(date +%s)-t0 )) s"
bm=$G/src/benchmarks/implicit_cavity3d.py
for r in 0 1 2 3; do
  timeout 60 python3 $bm run --build /tmp/b_src --out $W/r$r --level 2 --scheme implicit --cfl 4 --t-end 0.05 2>&1 | tail -1
  cp $W/r$r/opencl_edge_based_implicit_cfl4_L2/run_summary.json $O/runs/r$r.json
done
for r in 1 2 3; do GLIBC_TUNABLES=glibc.malloc.hugetlb=1 timeout 60 python3 $bm run --build /tmp/b_src --out $W/h$r --level 2 --scheme implicit --cfl 4 --t-end 0.05 2>&1 | tail -1
  cp $W/h$r/opencl_edge_based_implicit_cfl4_L2/run_summary.json $O/runs/h$r.json
done
python3 - $O/runs <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    e = json.load(open(f))["events"]["setup"]
    print(os.path.basename(f)[:-5], " ".join("%s=%.3f" % (k[:24], v["seconds"]) for k, v in e.items() if v["seconds"] > 0.004))
PY
tar -czf $O/all.tgz -C $O runs; rm -rf $O/runs
