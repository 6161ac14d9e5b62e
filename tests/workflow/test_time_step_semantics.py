#!/usr/bin/python3
"""Step-based schedules keep the user's meaning when the stability limit cuts a fixed time_step.

Case: test_examples/channel_forces with time_step raised to 0.1 (the stable limit of this mesh is
about 0.01), end_time 0.5, so the solver takes about ten steps per user step.  Checks:
1. one warning naming the fixed step, the limit and the conversion;
2. VTK with "output_control_type": "step", "output_interval": 1 writes one file per user step (as
   Kratos, not the initial state), FluidModelPart_1..5.vtu, at t = 0.1, ..., 0.5 to 1e-12 (the
   solver lands on each multiple of 0.1), and the .pvd lists exactly those;
3. the forces process every 2 steps (first at step 1) writes rows at t = 0.1, 0.3, 0.5 only; the
   probe every step at 0, 0.1, ..., 0.5 (the initial state counts);
4. run_summary.json: time_step.cut_by_stability_limit, output_steps = 5, steps > 5 * 5;
5. "output_control_type": "solver_step" still counts solver steps: one file per solver step;
6. an uncut fixed step (0.008) keeps the old behaviour: file k at t = k * 0.008;
7. save_restart_process follows the same rule: "restart_control_type": "step", frequency 2 writes
   FluidModelPart_2.rest and _4.rest at t = 0.2, 0.4 (and _5.rest at the end), the warning names it
   with its conversion (every 2 x 0.1 = 0.2), and a run continued from _2.rest writes the same
   .vtu/.pvd/.csv bytes; "restart_control_type": "solver_step", frequency 10, names and writes them
   by solver step (10, 20, ..., and the last step); a run ending between two user steps (t = 0.45)
   keeps _4.rest and writes its last file as _4_s<solver step>.rest.
"""
import filecmp
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

failures = []


def expect(cond, message):
    if not cond:
        failures.append(message)
        print("FAILED: " + message, file=sys.stderr)


def pvd_times(path):
    return [(float(d.get("timestep")), d.get("file")) for d in ET.parse(path).getroot().iter("DataSet")]


def csv_times(path):
    with open(path) as f:
        rows = [l.split(",") for l in f.read().splitlines()[1:] if l]
    return sorted({float(r[0]) for r in rows})


def run(cli, params, work, name):
    path = os.path.join(work, name + ".json")
    with open(path, "w") as f:
        json.dump(params, f, indent=1)
    out = os.path.join(work, name)
    r = subprocess.run([cli, "run", path, "--output", out, "--quiet"], capture_output=True, text=True)
    expect(r.returncode == 0, f"{name}: run failed: {r.stderr}")
    return r, out


def cut_case(source):
    """channel_forces with a fixed time_step of 0.1 (about 10x its stability limit) to t = 0.5: VTK
    every step, forces every 2 steps, a probe every step, restart files every 2 steps."""
    case = os.path.join(source, "test_examples", "channel_forces")
    with open(os.path.join(case, "ProjectParameters.json")) as f:
        base = json.load(f)
    base["solver_settings"]["model_import_settings"]["input_filename"] = os.path.join(case, "channel_forces.msh")
    base["problem_data"]["end_time"] = 0.5
    base["solver_settings"]["time_stepping"]["time_step"] = 0.1
    base["output_processes"] = {
        "forces": [{"python_module": "compute_forces_process", "Parameters": {
            "model_part_name": "FluidModelPart.walls", "output_file_name": "walls.csv",
            "output_control_type": "step", "output_interval": 2}}],
        "probes": [{"python_module": "probes_output_process", "Parameters": {
            "points": [[2.0, 0.5]], "output_control_type": "step", "output_interval": 1,
            "output_file_name": "centre.csv"}}],
        "vtk_output": [{"python_module": "vtk_output_process", "Parameters": {
            "model_part_name": "FluidModelPart", "output_control_type": "step", "output_interval": 1,
            "output_path": "vtk", "nodal_solution_step_data_variables": ["VELOCITY"]}}],
        "restart": [{"python_module": "save_restart_process", "kratos_module": "KratosMultiphysics",
                     "Parameters": {"model_part_name": "FluidModelPart", "restart_control_type": "step",
                                    "restart_save_frequency": 2}}]}
    return base


def main():
    source, cli, work = sys.argv[1], sys.argv[2], sys.argv[3]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    base = cut_case(source)

    r, out = run(cli, base, work, "cut")
    if r.returncode:
        return 1
    warnings = [l for l in r.stderr.splitlines() if "stability limit" in l]
    expect(len(warnings) == 1, f"expected one stability warning, got {len(warnings)}: {warnings}")
    expect(warnings and re.search(r"fixed time step 0\.1 .*count time steps of 0\.1", warnings[0]),
           f"warning does not state the conversion: {warnings}")
    expect(warnings and '"restart_control_type": "step" of save_restart_process: every 2 x 0.1 = 0.2' in warnings[0],
           f"warning does not name the restart schedule: {warnings}")
    rest = os.path.join(out, "FluidModelPart__restart_files")
    expect(sorted(os.listdir(rest)) == ["FluidModelPart_2.rest", "FluidModelPart_4.rest", "FluidModelPart_5.rest"],
           f"restart files by user step: {sorted(os.listdir(rest))}")
    series = pvd_times(os.path.join(out, "vtk", "FluidModelPart.pvd"))
    want = [0.1 * k for k in range(6)]
    expect([f for _, f in series] == [f"FluidModelPart_{k}.vtu" for k in range(1, 6)], f"pvd files {series}")
    expect(len(series) == 5 and all(abs(t - w) < 1e-12 for (t, _), w in zip(series, want[1:])),
           f"pvd times {[t for t, _ in series]} are not the user's 0.1, ..., 0.5")
    vtus = sorted(f for f in os.listdir(os.path.join(out, "vtk")) if f.endswith(".vtu"))
    expect(len(vtus) == 5, f"{len(vtus)} .vtu files written, expected 5")
    ft = csv_times(os.path.join(out, "walls.csv"))
    expect(len(ft) == 3 and all(abs(t - w) < 1e-12 for t, w in zip(ft, [0.1, 0.3, 0.5])), f"forces rows at {ft}")
    pt = csv_times(os.path.join(out, "centre.csv"))
    expect(len(pt) == 6 and all(abs(t - w) < 1e-12 for t, w in zip(pt, want)), f"probe rows at {pt}")
    with open(os.path.join(out, "run_summary.json")) as f:
        s = json.load(f)
    ts = s.get("time_step", {})
    expect(ts.get("cut_by_stability_limit") is True and ts.get("output_steps") == 5, f"time_step summary {ts}")
    solver_steps = s["run"]["steps"]
    expect(solver_steps > 25, f"only {solver_steps} solver steps: was the step cut at all?")

    # Continued from the restart file at user step 2 (t = 0.2) in a copy of the folder: the same bytes.
    again = os.path.join(work, "cut_continued")
    shutil.copytree(out, again)
    r = subprocess.run([cli, "run", os.path.join(work, "cut.json"), "--output", again, "--quiet", "--restart",
                        os.path.join(again, "FluidModelPart__restart_files", "FluidModelPart_2.rest")],
                       capture_output=True, text=True)
    expect(r.returncode == 0, f"run continued from FluidModelPart_2.rest failed: {r.stderr}")
    for name in ["vtk/FluidModelPart.pvd", "vtk/FluidModelPart_5.vtu", "walls.csv", "centre.csv"]:
        expect(filecmp.cmp(os.path.join(out, name), os.path.join(again, name), shallow=False),
               f"continued from user step 2: {name} differs from the uninterrupted run")

    # Ending between two user steps (t = 0.45): the last file must not replace the state of _4.rest.
    short = json.loads(json.dumps(base))
    short["problem_data"]["end_time"] = 0.45
    r, out = run(cli, short, work, "cut_short")
    with open(os.path.join(out, "run_summary.json")) as f:
        last = json.load(f)["run"]["steps"]
    got = sorted(os.listdir(os.path.join(out, "FluidModelPart__restart_files")))
    expect(got == ["FluidModelPart_2.rest", "FluidModelPart_4.rest", f"FluidModelPart_4_s{last}.rest"],
           f"end between user steps: restart files {got}")

    every = json.loads(json.dumps(base))
    every["output_processes"]["vtk_output"][0]["Parameters"]["output_control_type"] = "solver_step"
    every["output_processes"]["restart"][0]["Parameters"].update(
        {"restart_control_type": "solver_step", "restart_save_frequency": 10})
    del every["output_processes"]["forces"], every["output_processes"]["probes"]
    r, out = run(cli, every, work, "solver_step")
    series = pvd_times(os.path.join(out, "vtk", "FluidModelPart.pvd"))
    expect(len(series) == solver_steps, f"solver_step: {len(series)} outputs for {solver_steps} solver steps")
    want_rest = sorted({f"FluidModelPart_{k}.rest" for k in list(range(10, solver_steps + 1, 10)) + [solver_steps]})
    got_rest = sorted(os.listdir(os.path.join(out, "FluidModelPart__restart_files")))
    expect(got_rest == want_rest, f"restart_control_type solver_step: {got_rest}, expected {want_rest}")

    uncut = json.loads(json.dumps(base))
    uncut["solver_settings"]["time_stepping"]["time_step"] = 0.008
    uncut["problem_data"]["end_time"] = 0.04
    r, out = run(cli, uncut, work, "uncut")
    expect("stability limit" not in r.stderr, f"uncut run warned: {r.stderr}")
    series = pvd_times(os.path.join(out, "vtk", "FluidModelPart.pvd"))
    expect(len(series) == 5 and all(abs(t - 0.008 * (k + 1)) < 1e-12 for k, (t, _) in enumerate(series)),
           f"uncut pvd {series}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
