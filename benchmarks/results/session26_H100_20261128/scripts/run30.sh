#!/usr/bin/env bash
# session 26 call 2: issue 16's time to solution (cavity3d L2, t = 0 -> 1, explicit CFL 1 / implicit CFL 4) for the
# session's start (src_old = 2e77110, renumbering "rcm" default) and HEAD (src: "auto" -> "morton" on the device),
# HEAD also with pressure_initial_guess "quadratic"; three alternating rounds. Then issue 12's per-step protocol
# (fixed dt 1e-4, 40 steps, 1e-8) with the three initial guesses, and the obstacle at its own time stepping.
set -u
G=$(cd "$(dirname "$0")" && pwd); O=$OUT; W=/tmp/w30; mkdir -p $W $O/json $O/runs
export PYTHONUNBUFFERED=1
for s in src src_old; do ln -sfn "$(cd $G/../.. && pwd)/.deps" $G/$s/.deps; done
export CMAKE_PREFIX_PATH="$G/src/.deps/usr" LD_LIBRARY_PATH="$G/src/.deps/usr/lib/x86_64-linux-gnu"
t0=$(date +%s)
for s in src src_old; do
  ( cmake -S $G/$s -B /tmp/b_$s -DCMAKE_BUILD_TYPE=Release -DEF_BUILD_TESTS=OFF -DEF_WITH_PETSC=OFF > $W/build_$s.log 2>&1 &&
  cmake --build /tmp/b_$s -j8 >> $W/build_$s.log 2>&1 || tail -30 $W/build_$s.log ) &
done; wait
( nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep "Model name" ) | tee $O/device.txt
echo "built at $(( $(date +%s)-t0 )) s"
bm=$G/src/benchmarks/implicit_cavity3d.py
run() { # tag build scheme cfl [solver-settings]
  local d=$W/$1; mkdir -p $d
  timeout 90 python3 $bm run --build /tmp/b_$2 --out $d --level 2 --scheme $3 --cfl $4 ${5:+--solver-settings "$5"} 2>&1 | tail -1
  cp $d/opencl_edge_based_$3_cfl$4_L2.json $O/json/$1.json; cp $d/opencl_edge_based_$3_cfl$4_L2/run_summary.json $O/runs/$1.json
}
for s in src src_old; do timeout 60 python3 $G/$s/benchmarks/implicit_cavity3d.py run --build /tmp/b_$s --out $W/warm_$s --level 2 --scheme implicit --cfl 4 --t-end 0.05 > /dev/null 2>&1; done
Q='{"pressure_initial_guess": "quadratic"}'
for r in 1 2 3; do
  run old_exp_r$r src_old explicit 1; run old_imp_r$r src_old implicit 4
  run new_exp_r$r src explicit 1; run new_imp_r$r src implicit 4
  run quad_exp_r$r src explicit 1 "$Q"; run quad_imp_r$r src implicit 4 "$Q"
  for c in old new quad; do python3 $bm compare $O/json/${c}_exp_r$r.json $O/json/${c}_imp_r$r.json | sed "s/^/$c r$r: /" | cut -c1-240; done
  echo "round $r at $(( $(date +%s)-t0 )) s"
done
R=$G/src; ST=$R/benchmarks/step_times.py; CAV=$R/test_examples/cavity3d/ProjectParameters.json; OBS=$R/test_examples/flow_past_obstacle/ProjectParameters.json
AMG='{"solver_type": "fcg", "preconditioner_type": "amg", "tolerance": 1e-8, "check_every": 1}'
JAC='{"solver_type": "cg", "preconditioner_type": "jacobi", "tolerance": 1e-8, "check_every": 8}'
for g in previous linear quadratic; do
  for lc in "cav 2 $CAV" "cav 3 $CAV" "obs 0 $OBS"; do set -- $lc
    timeout 120 python3 $ST --build /tmp/b_src --case $3 --refine $2 --steps 40 --dt 1e-4 --linear-solver "$AMG" --solver-settings "{\"pressure_initial_guess\": \"$g\"}" --out $W/st --tag ${1}L$2_amg_$g 2>&1 | tail -1
    timeout 120 python3 $ST --build /tmp/b_src --case $3 --refine $2 --steps 40 --dt 1e-4 --linear-solver "$JAC" --solver-settings "{\"pressure_initial_guess\": \"$g\"}" --out $W/st --tag ${1}L$2_jac_$g 2>&1 | tail -1
  done
  timeout 120 python3 $ST --build /tmp/b_src --case $OBS --steps 200 --linear-solver "$AMG" --solver-settings "{\"pressure_initial_guess\": \"$g\"}" --out $W/st --tag obsown_amg_$g 2>&1 | tail -1
  timeout 120 python3 $ST --build /tmp/b_src --case $OBS --steps 200 --linear-solver "$JAC" --solver-settings "{\"pressure_initial_guess\": \"$g\"}" --out $W/st --tag obsown_jac_$g 2>&1 | tail -1
  echo "guess $g at $(( $(date +%s)-t0 )) s"
done
cp $W/st/*.json $O/json/; rm -f $O/json/*.case.json
echo "done at $(( $(date +%s)-t0 )) s"
tar -czf $O/all.tgz -C $O json runs device.txt; rm -rf $O/json $O/runs
