#!/usr/bin/env bash
# How much of the VTK output the background writer hides (issue 13): a case run twice, with every
# vtk_output_process set to "asynchronous_write": false and then true, and for each the loop time,
# the output's share of it and the output figures of run_summary.json (events, stage "output"): the
# main thread's time on output (snapshot + queue + waits, or the whole write when synchronous), its
# snapshot, its waits for the writer, the writer thread's time and its wait for the device copy.
# Kratos cases are prepared as benchmarks/kratos_case_gpu.sh does (solver_type, density 1, dynamic
# viscosity 1e-3, --skip-unsupported for GiD and mmg processes).
# usage: benchmarks/output_overlap.sh CASE_DIR OUT [STRATEGY (opencl_edge_based)] [END_TIME (the case's)]
#   e.g. EDGEFLOW=build/bin/edgeflow benchmarks/output_overlap.sh /work/shared/kratos_cases/channel_sphere2D out/overlap
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
case_dir=$(cd "$1" && pwd); out=$2; strategy=${3:-opencl_edge_based}; end_time=${4:-case}
mkdir -p "$out"; out=$(cd "$out" && pwd)
edgeflow=${EDGEFLOW:-$root/build/bin/edgeflow}
edgeflow=$(cd "$(dirname "$edgeflow")" && pwd)/$(basename "$edgeflow")
for mode in false true; do
  dir="$out/async_$mode"; rm -rf "$dir"; mkdir -p "$dir"
  te=(); [ "$end_time" = case ] || te=(--end-time "$end_time")
  python3 "$root/benchmarks/prepare_kratos_case.py" "$case_dir" "$dir/case.json" "$strategy" "${te[@]}" \
    --asynchronous-write "$mode" || exit 1
  t0=$(date +%s.%N)
  (cd "$dir" && "$edgeflow" run case.json --skip-unsupported --output "$dir/run" --quiet > log 2>&1)
  rc=$?
  t1=$(date +%s.%N)
  python3 - "$dir/run/run_summary.json" "$mode" "$rc" "$t0" "$t1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); w = s.get("wall_seconds_by_phase", {}); r = s.get("run", {})
ev = s.get("events", {}).get("output", {})
def sec(name):
    return ev.get(name, {}).get("seconds", 0.0)
loop = r.get("wall_seconds_loop", 0) or 1e-30
main = sec("main thread (snapshot + queue + waits, or the write)")
print(f"asynchronous_write {sys.argv[2]}: exit {sys.argv[3]}, process wall {float(sys.argv[5]) - float(sys.argv[4]):.2f} s,"
      f" loop {loop:.3f} s ({r.get('steps')} steps, {1e3 * r.get('seconds_per_step', 0):.3f} ms/step),"
      f" output phase {w.get('output', 0):.3f} s = {100 * w.get('output', 0) / loop:.1f} % of the loop")
print(f"  main thread on output {main:.3f} s ({100 * main / loop:.1f} % of the loop): snapshot {sec('main thread: snapshot'):.3f} s,"
      f" waiting for the writer {sec('main thread: wait for writer'):.3f} s;"
      f" writer thread {sec('writer thread (format + write, background)'):.3f} s"
      f" (of which waiting for the device copy {sec('writer thread: wait for device copy'):.3f} s)")
PY
done
python3 - "$out" <<'PY'
import json, sys
runs = {m: json.load(open(f"{sys.argv[1]}/async_{m}/run/run_summary.json")) for m in ("false", "true")}
loop = {m: runs[m]["run"]["wall_seconds_loop"] for m in runs}
out_sync = runs["false"]["events"].get("output", {}).get("main thread (snapshot + queue + waits, or the write)", {}).get("seconds", 0)
saved = loop["false"] - loop["true"]
print(f"hidden: the loop is {saved:.3f} s shorter ({100 * saved / max(loop['false'], 1e-30):.1f} %), "
      f"{100 * saved / max(out_sync, 1e-30):.0f} % of the synchronous output's {out_sync:.3f} s")
PY
