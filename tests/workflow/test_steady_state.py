#!/usr/bin/python3
"""problem_data.steady_state: the run stops once max |du/dt| (measured over
check_interval steps) is below velocity_rate_tolerance, and not before.

Case: test_examples/channel_forces (plane channel, height 1, nu = 0.1, parabolic
inlet with mean 1) started from rest.  Checks:
1. the run stops before end_time, at a step that is a multiple of check_interval,
   with run_summary.json reporting reached = true and a last rate below the tolerance;
2. the probe at the channel centre (x = 2, y = 0.5), sampled every check_interval
   steps, gives a rate |u(t_k) - u(t_{k-1})| / (t_k - t_{k-1}) that is below the
   tolerance at the stop but not at the check before it (the nodal maximum the
   solver uses is >= this probe value, so a rate above the tolerance at the probe
   means the solver must not have stopped there);
3. the centre velocity at the stop is the steady Poiseuille value 1.5 to within
   2% (the slowest mode decays with time constant h^2/(pi^2 nu) = 1.01, so the
   remaining distance is about tolerance x 1.01 = 1e-3, plus the discretisation
   error of this coarse mesh, measured 0.3%);
4. every output process writes the step that stopped the run: a VTK output whose
   interval is never reached on schedule still holds FluidModelPart_<last step>.vtu,
   and the probe (on schedule there) has no duplicate row;
5. tolerance 0 switches the test off (the run reaches end_time), and a bad
   check_interval is an error naming the parameters file.
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np

failures = []


def expect(cond, message):
    if not cond:
        failures.append(message)
        print("FAILED: " + message, file=sys.stderr)


def run(cli, params, work, name, steady, end_time, extra=()):
    p = json.loads(json.dumps(params))
    p["problem_data"]["steady_state"] = steady
    p["problem_data"]["end_time"] = end_time
    path = os.path.join(work, name + ".json")
    with open(path, "w") as f:
        json.dump(p, f, indent=1)
    out = os.path.join(work, name)
    r = subprocess.run([cli, "run", path, "--output", out, "--quiet", *extra], capture_output=True, text=True)
    return r, out, path


def main():
    source, cli, work = sys.argv[1], sys.argv[2], sys.argv[3]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    case = os.path.join(source, "test_examples", "channel_forces")
    with open(os.path.join(case, "ProjectParameters.json")) as f:
        params = json.load(f)
    params["processes"]["initial_conditions_process_list"] = []
    params["solver_settings"]["model_import_settings"]["input_filename"] = os.path.join(case, "channel_forces.msh")
    interval, tol, dt = 10, 1e-3, params["solver_settings"]["time_stepping"]["time_step"]
    params["output_processes"] = {"probes": [{"python_module": "probes_output_process", "Parameters": {
        "points": [[2.0, 0.5]], "output_control_type": "step", "output_interval": interval,
        "output_file_name": "centre.csv", "sync_each_row": False}}],
        "vtk_output": [{"python_module": "vtk_output_process", "Parameters": {
            "model_part_name": "FluidModelPart", "output_control_type": "step", "output_interval": 1000000,
            "output_path": "vtk", "nodal_solution_step_data_variables": ["VELOCITY"]}}]}

    r, out, _ = run(cli, params, work, "steady", {"velocity_rate_tolerance": tol, "check_interval": interval}, 20.0)
    expect(r.returncode == 0, f"steady run failed: {r.stderr}")
    if r.returncode:
        return 1
    with open(os.path.join(out, "run_summary.json")) as f:
        s = json.load(f)
    steps, t_end = s["run"]["steps"], s["run"]["end_time"]
    ss = s.get("steady_state", {})
    expect(ss.get("reached") is True, f"steady_state.reached is {ss.get('reached')}")
    expect(ss.get("last_velocity_rate", 1.0) < tol, f"last rate {ss.get('last_velocity_rate')} >= {tol}")
    expect(steps % interval == 0, f"stopped at step {steps}, not a multiple of {interval}")
    expect(t_end < 20.0 - 1e-9, f"ran to end_time {t_end}")
    expect(abs(t_end - steps * dt) < 1e-9, f"end time {t_end} != steps x dt {steps * dt}")

    data = np.genfromtxt(os.path.join(out, "centre.csv"), delimiter=",", names=True)
    t, u = np.atleast_1d(data["time"]), np.atleast_1d(data["VELOCITY_X"])
    expect(abs(t[-1] - t_end) < 1e-9, f"last probe sample at {t[-1]}, run ended at {t_end}")
    expect(len(np.unique(t)) == len(t), "a probe row written twice at the stop")
    vtus = sorted(os.listdir(os.path.join(out, "vtk"))) if os.path.isdir(os.path.join(out, "vtk")) else []
    expect(f"FluidModelPart_{steps}.vtu" in vtus,
           f"the steady stop did not write the final state off the VTK schedule (files: {vtus})")
    rate = np.abs(np.diff(u)) / np.diff(t)
    expect(rate[-1] < tol, f"probe rate at the stop {rate[-1]:.3e} >= {tol}")
    expect(len(rate) >= 2 and rate[:-1].max() >= tol, "the case was steady from the first check (no test)")
    expect(abs(u[-1] - 1.5) < 0.02 * 1.5, f"centre velocity at the stop {u[-1]:.5f}, expected 1.5 within 2%")

    r, out, _ = run(cli, params, work, "off", {"velocity_rate_tolerance": 0.0, "check_interval": interval},
                    (steps + 20) * dt)
    expect(r.returncode == 0, f"run with the test off failed: {r.stderr}")
    with open(os.path.join(out, "run_summary.json")) as f:
        s = json.load(f)
    expect(s["run"]["steps"] == steps + 20, f"tolerance 0 stopped at step {s['run']['steps']}, not {steps + 20}")
    expect("steady_state" not in s, "summary reports a steady state when the test is off")

    r, out, path = run(cli, params, work, "bad", {"velocity_rate_tolerance": tol, "check_interval": 0}, 1.0)
    expect(r.returncode != 0, "check_interval 0 accepted")
    expect(path in r.stderr and "check_interval" in r.stderr, f"error does not name file and key: {r.stderr}")
    r, out, path = run(cli, params, work, "badkey", {"velocity_rate_tol": tol}, 1.0)
    expect(r.returncode != 0 and "velocity_rate_tolerance" in r.stderr,
           f"unknown key not rejected with the valid ones listed: {r.stderr}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
