#!/usr/bin/env bash
# session 27 call 5: is Initialize's host work slowed by the device-context thread (begin_setup) competing with the
# OpenMP threads?  HEAD (src_ne: HEAD + an EF_NO_EARLY switch that skips begin_setup): implicit cavity3d L2,
# t = 0 -> 0.05: as is / EF_NO_EARLY=1 / OMP_NUM_THREADS=15 / OMP_NUM_THREADS=1, alternating, 3 rounds.
set -u
G=$(cd "$(dirname "$0")" && pwd); O=$OUT; W=/tmp/w36; mkdir -p $W $O/runs
ln -sfn "$(cd $G/../.. && pwd)/.deps" $G/src_ne/.deps
export CMAKE_PREFIX_PATH="$G/src_ne/.deps/usr" LD_LIBRARY_PATH="$G/src_ne/.deps/usr/lib/x86_64-linux-gnu"
cmake -S $G/src_ne -B /tmp/b_ne -DCMAKE_BUILD_TYPE=Release -DEF_BUILD_TESTS=OFF -DEF_WITH_PETSC=OFF > $W/build.log 2>&1 &&
  cmake --build /tmp/b_ne -j16 >> $W/build.log 2>&1 || tail -30 $W/build.log
bm=$G/src_ne/benchmarks/implicit_cavity3d.py
timeout 90 python3 $bm run --build /tmp/b_ne --out $W/warm --level 2 --scheme implicit --cfl 4 --t-end 0.05 > /dev/null 2>&1
one() { local d=$W/$1; timeout 60 env $2 python3 $bm run --build /tmp/b_ne --out $d --level 2 --scheme implicit --cfl 4 --t-end 0.05 > /dev/null 2>&1
  cp $d/opencl_edge_based_implicit_cfl4_L2/run_summary.json $O/runs/$1.json; }
for r in 1 2 3; do
  one asis_r$r X=1; one noearly_r$r EF_NO_EARLY=1; one omp15_r$r OMP_NUM_THREADS=15; one omp1_r$r OMP_NUM_THREADS=1
done
python3 - $O/runs <<'PY'
import json, sys, glob, os
keys = ["initialize (total)", "refine mesh", "check mesh", "renumber mesh (morton)", "edge data build", "device context",
        "device executor (programs, buffers, upload)", "pressure solver set-up (first step)"]
print("run".ljust(12), " ".join(k[:14].rjust(14) for k in keys))
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    e = json.load(open(f))["events"]["setup"]
    print(os.path.basename(f)[:-5].ljust(12), " ".join(("%.3f" % e[k]["seconds"] if k in e else "-").rjust(14) for k in keys))
PY
tar -czf $O/all.tgz -C $O runs; rm -rf $O/runs
