#!/usr/bin/python3
"""After kill -9 at any moment the .pvd parses and lists every completed .vtu.

The channel_forces case writes a VTK file at every solver step ("solver_step", so the .pvd is
long and appended in place) and is killed with SIGKILL at several moments (after 8, 40, 90, ...
outputs, and at random offsets around them).  Each time the .pvd must parse with a plain XML
parser, list files that exist, in step order, and miss at most the one .vtu that was renamed into
place just before the kill (its entry is written right after it); no half-written .vtu may sit
under a final name (each is checked to end with its closing tag).  A fourth argument
"asynchronous" runs the same with "asynchronous_write": true (the writer thread writes the files).
"""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

failures = []


def expect(cond, message):
    if not cond:
        failures.append(message)
        print("FAILED: " + message, file=sys.stderr)


def count_vtu(folder):
    return sorted(f for f in os.listdir(folder) if f.endswith(".vtu") and not f.startswith("."))


def main():
    source, cli, work = sys.argv[1], sys.argv[2], sys.argv[3]
    asynchronous = len(sys.argv) > 4 and sys.argv[4] == "asynchronous"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    case = os.path.join(source, "test_examples", "channel_forces")
    with open(os.path.join(case, "ProjectParameters.json")) as f:
        p = json.load(f)
    p["solver_settings"]["model_import_settings"]["input_filename"] = os.path.join(case, "channel_forces.msh")
    p["problem_data"]["end_time"] = 100.0
    p["output_processes"] = {"vtk_output": [{"python_module": "vtk_output_process", "Parameters": {
        "model_part_name": "FluidModelPart", "output_control_type": "solver_step", "output_interval": 1,
        "output_path": "vtk", "nodal_solution_step_data_variables": ["VELOCITY", "PRESSURE"]}}]}
    if asynchronous:
        p["output_processes"]["vtk_output"][0]["Parameters"]["asynchronous_write"] = True
    params = os.path.join(work, "kill9.json")
    with open(params, "w") as f:
        json.dump(p, f, indent=1)
    rng = random.Random(13)
    targets = [8, 40, 90] + [rng.randint(33, 150) for _ in range(4)]
    for i, target in enumerate(targets):
        out = os.path.join(work, f"run{i}")
        vtk = os.path.join(out, "vtk")
        proc = subprocess.Popen([cli, "run", params, "--output", out, "--quiet"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        t0 = time.time()
        while time.time() - t0 < 60:
            if os.path.isdir(vtk) and len(count_vtu(vtk)) >= target:
                break
            time.sleep(0.001 * rng.random())
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        pvd = os.path.join(vtk, "FluidModelPart.pvd")
        on_disk = count_vtu(vtk) if os.path.isdir(vtk) else []
        if not os.path.exists(pvd):
            expect(len(on_disk) <= 1, f"run {i}: no .pvd but {len(on_disk)} .vtu files")
            continue
        try:
            listed = [d.get("file") for d in ET.parse(pvd).getroot().iter("DataSet")]
        except ET.ParseError as e:
            expect(False, f"run {i} (killed near output {target}): the .pvd does not parse: {e}")
            continue
        expect(all(os.path.exists(os.path.join(vtk, f)) for f in listed), f"run {i}: a listed file is missing")
        steps = [int(f.rsplit("_", 1)[1][:-4]) for f in listed]
        expect(steps == list(range(1, len(steps) + 1)), f"run {i}: listed steps {steps[:5]}...{steps[-5:]}")
        expect(len(on_disk) - len(listed) in (0, 1),
               f"run {i}: {len(on_disk)} .vtu on disk, {len(listed)} listed in the .pvd")
        for f in on_disk:
            with open(os.path.join(vtk, f), "rb") as fh:
                fh.seek(-12, os.SEEK_END)
                expect(fh.read().rstrip().endswith(b"</VTKFile>"), f"run {i}: {f} is incomplete")
        print(f"run {i}: killed after {len(on_disk)} outputs; the .pvd lists {len(listed)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
