#!/usr/bin/python3
"""Asynchronous VTK writing (vtk_output_process "asynchronous_write", issue 13).

    test_async_output.py SOURCE CLI WORK identical STRATEGY
        The channel_forces case, a VTK file every step (whole model part with every variable the
        process supports and ids, plus each sub model part, plus a second output of one sub model
        part), run with asynchronous_write false and then true: every .vtu and .pvd byte-identical,
        and run_summary.json reports the writer thread's figures.
    test_async_output.py SOURCE CLI WORK write_error STRATEGY
        A folder sits where output 5's .vtu goes, so its rename fails on the writer thread: the run
        fails, its message names the file, and the .pvd lists exactly the outputs before it.
"""
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

STEPS = 12
failures = []


def expect(cond, message):
    if not cond:
        failures.append(message)
        print("FAILED: " + message, file=sys.stderr)


def case(source, work, strategy, asynchronous, name):
    folder = os.path.join(source, "test_examples", "channel_forces")
    with open(os.path.join(folder, "ProjectParameters.json")) as f:
        p = json.load(f)
    p["solver_settings"]["model_import_settings"]["input_filename"] = os.path.join(folder, "channel_forces.msh")
    p["solver_settings"]["solver_type"] = strategy
    if strategy.startswith("opencl"):
        ls = p["solver_settings"].setdefault("linear_solver_settings", {})
        ls["workgroup_size_bits"] = 6  # a fixed SpMV configuration: the two runs round alike
        ls["rows_per_workgroup_bits"] = 4
        p["solver_settings"].setdefault("device", {})["verbose"] = 0
    every = {"output_control_type": "step", "output_interval": 1, "output_path": "vtk",
             "asynchronous_write": asynchronous}
    p["output_processes"] = {"vtk_output": [
        {"python_module": "vtk_output_process", "Parameters": dict(every, **{
            "model_part_name": "FluidModelPart", "output_sub_model_parts": True, "write_ids": True,
            "nodal_solution_step_data_variables": ["VELOCITY", "PRESSURE", "REACTION", "BODY_FORCE"],
            "nodal_data_value_variables": ["NORMAL", "IS_SLIP"]})},
        {"python_module": "vtk_output_process", "Parameters": dict(every, **{
            "model_part_name": "FluidModelPart.walls", "file_format": "ascii",
            "nodal_solution_step_data_variables": ["VELOCITY", "REACTION"]})}]}
    out = os.path.join(work, name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    params = os.path.join(out, "ProjectParameters.json")
    with open(params, "w") as f:
        json.dump(p, f, indent=1)
    return params, os.path.join(out, "run")


def run(cli, params, out):
    return subprocess.run([cli, "run", params, "--steps", str(STEPS), "--output", out, "--quiet"],
                          capture_output=True, text=True)


def files(folder):
    return sorted(f for f in os.listdir(folder) if f.endswith((".vtu", ".pvd")) and not f.startswith("."))


def identical(source, cli, work, strategy):
    results = {}
    for asynchronous in (False, True):
        params, out = case(source, work, strategy, asynchronous, f"async_{asynchronous}")
        r = run(cli, params, out)
        if r.returncode == 77 or "no OpenCL" in r.stderr:
            print(r.stderr)
            return 77
        expect(r.returncode == 0, f"asynchronous_write {asynchronous}: exit {r.returncode}\n{r.stderr}")
        results[asynchronous] = out
    if failures:
        return 1
    a, b = (os.path.join(results[k], "vtk") for k in (False, True))
    fa, fb = files(a), files(b)
    expect(fa == fb, f"different file lists: {fa} / {fb}")
    expect(len([f for f in fa if f.endswith(".vtu")]) >= 3 * STEPS, f"only {len(fa)} files written")
    for f in fa:
        if f in fb:
            with open(os.path.join(a, f), "rb") as x, open(os.path.join(b, f), "rb") as y:
                expect(x.read() == y.read(), f"{f} differs between synchronous and asynchronous writing")
    with open(os.path.join(results[True], "run_summary.json")) as fh:
        events = json.load(fh)["events"].get("output", {})
    writer = events.get("writer thread (format + write, background)", {})
    expect(writer.get("calls", 0) == 2 * STEPS, f"writer thread figures: {writer}")
    expect("main thread: wait for writer" in events and "main thread: snapshot" in events,
           f"output events: {sorted(events)}")
    print(f"{strategy}: {len(fa)} files identical; writer thread {writer}")
    return 1 if failures else 0


def write_error(source, cli, work, strategy):
    params, out = case(source, work, strategy, True, "write_error")
    vtk = os.path.join(out, "vtk")
    os.makedirs(os.path.join(vtk, "FluidModelPart_5.vtu"))  # the rename onto it fails (even as root)
    r = run(cli, params, out)
    if r.returncode == 77 or "no OpenCL" in r.stderr:
        print(r.stderr)
        return 77
    expect(r.returncode != 0, "the run did not fail")
    expect("FluidModelPart_5.vtu" in r.stderr, f"the message does not name the file:\n{r.stderr}")
    expect("background" in r.stderr, f"the message does not say the write was in the background:\n{r.stderr}")
    listed = [d.get("file") for d in ET.parse(os.path.join(vtk, "FluidModelPart.pvd")).getroot().iter("DataSet")]
    expect(listed == [f"FluidModelPart_{k}.vtu" for k in range(1, 5)], f"the .pvd lists {listed}")
    print(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "(no message)")
    return 1 if failures else 0


def main():
    source, cli, work, mode, strategy = sys.argv[1:6]
    os.makedirs(work, exist_ok=True)
    return {"identical": identical, "write_error": write_error}[mode](source, cli, work, strategy)


if __name__ == "__main__":
    sys.exit(main())
