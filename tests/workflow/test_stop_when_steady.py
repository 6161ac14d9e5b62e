#!/usr/bin/python3
"""--stop-when-steady and stop_when_steady_process: stop once the flow stops changing.

1. The Re 20 flow_past_obstacle example, changed only by the switch: it stops at t_stop within 10 %
   of the steady time T_s and its last drag coefficient is within 0.1 % of the full run's.
   T_s = 11.5: the wake-axis probe line (201 points, sampled every 1.0) first stays within 0.1 % of
   its final state (velocity relative to max |u|, pressure to its range) between t = 11 and 12 in
   the full run (openmp_edge_based, 9,272 steps to t = 30; measured once, figures in
   test_examples/flow_past_obstacle/README.md), so t_stop must lie in [10.35, 12.65].  The full
   run's drag, c_D = 5.5736726 at t = 30, is recorded here; with --full the full run is repeated
   and compared live (label slow, ~40 s more on 2 cores).
2. The process form: channel_forces with a stop_when_steady_process in its processes list (as a
   Kratos user adds it) stops before end_time, reports steady_state_relative.reached, and writes
   the VTK output at the stopping step.
"""
import csv
import json
import os
import shutil
import subprocess
import sys

failures = []
T_STEADY, CD_FULL = 11.5, 5.5736726


def expect(cond, message):
    if not cond:
        failures.append(message)
        print("FAILED: " + message, file=sys.stderr)


def last_cd(out):
    with open(os.path.join(out, "cylinder_forces.csv")) as f:
        rows = list(csv.reader(f))
    return float(rows[-1][rows[0].index("Cd")]), float(rows[-1][0])


def run(cli, params, out, *extra):
    r = subprocess.run([cli, "run", params, "--output", out, "--quiet", *extra], capture_output=True, text=True)
    expect(r.returncode == 0, f"{out}: {r.stderr}")
    with open(os.path.join(out, "run_summary.json")) as f:
        return json.load(f)


def main():
    source, cli, work = sys.argv[1:4]
    full = "--full" in sys.argv
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    case = os.path.join(source, "test_examples", "flow_past_obstacle")
    with open(os.path.join(case, "ProjectParameters_Re20.json")) as f:
        p = json.load(f)
    p["solver_settings"]["model_import_settings"]["input_filename"] = os.path.join(case, "flow_past_obstacle.msh")
    params = os.path.join(work, "Re20.json")
    with open(params, "w") as f:
        json.dump(p, f, indent=1)
    s = run(cli, params, os.path.join(work, "switch"), "--stop-when-steady")
    t_stop = s["run"]["end_time"]
    cd, _ = last_cd(os.path.join(work, "switch"))
    cd_full = CD_FULL
    if full:
        p["problem_data"]["steady_state"]["velocity_rate_tolerance"] = 0.0
        with open(params, "w") as f:
            json.dump(p, f, indent=1)
        run(cli, params, os.path.join(work, "full"))
        cd_full, t_full = last_cd(os.path.join(work, "full"))
        expect(abs(t_full - 30.0) < 0.05, f"the full run ended at {t_full}")
    print(f"stopped at t = {t_stop:.4g} (steady time {T_STEADY}); c_D {cd:.8g} vs full run {cd_full:.8g} "
          f"({abs(cd - cd_full) / cd_full:.1e} relative)")
    expect(abs(t_stop - T_STEADY) <= 0.1 * T_STEADY, f"stopped at t = {t_stop}, not within 10 % of {T_STEADY}")
    expect(abs(cd - cd_full) <= 1e-3 * abs(cd_full), f"c_D {cd} not within 0.1 % of the full run's {cd_full}")
    expect(s.get("steady_state_relative", {}).get("reached") is True, f"summary {s.get('steady_state_relative')}")

    ch = os.path.join(source, "test_examples", "channel_forces")
    with open(os.path.join(ch, "ProjectParameters.json")) as f:
        q = json.load(f)
    q["solver_settings"]["model_import_settings"]["input_filename"] = os.path.join(ch, "channel_forces.msh")
    q["problem_data"]["end_time"] = 20.0
    q["processes"]["steady_list"] = [{"python_module": "stop_when_steady_process", "Parameters": {
        "relative_tolerance": 1e-2, "hold_time": 0.1, "check_interval": 5}}]
    q["output_processes"] = {"vtk_output": [{"python_module": "vtk_output_process", "Parameters": {
        "model_part_name": "FluidModelPart", "output_control_type": "time", "output_interval": 100.0,
        "output_path": "vtk", "nodal_solution_step_data_variables": ["VELOCITY"]}}]}
    qp = os.path.join(work, "channel.json")
    with open(qp, "w") as f:
        json.dump(q, f, indent=1)
    s = run(cli, qp, os.path.join(work, "process"))
    steps, t_end = s["run"]["steps"], s["run"]["end_time"]
    expect(t_end < 20.0 and s.get("steady_state_relative", {}).get("reached") is True,
           f"process form: ended at t = {t_end}, summary {s.get('steady_state_relative')}")
    expect(os.path.exists(os.path.join(work, "process", "vtk", f"FluidModelPart_{steps}.vtu")),
           f"process form: no VTK output at the stopping step {steps}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
