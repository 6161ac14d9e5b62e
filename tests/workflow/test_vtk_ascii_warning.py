#!/usr/bin/env python3
"""ASCII VTK output warns once, with the measured size ratio to binary (docs/processes.md).

Case: channel_forces for 4 steps with VTK output at every step and every sub model part in its own
files ("output_sub_model_parts": true), so a run writes many ascii pieces, at "output_precision" 17
(ascii as exact as binary; fewer digits can make ascii smaller than binary).  Checks:
1. exactly one "is ascii" warning on stderr over all outputs and pieces;
2. the ratio it states is a number > 1 and below 10 (typically 2-3x);
3. it is the measured one: the file it names exists, and its size divided by the size of the same
   file from a binary run of the same case (raw binary: the size depends only on the counts) gives
   the stated ratio to its printed precision; the MB figures match both files;
4. a binary run prints no such warning.

    test_vtk_ascii_warning.py SOURCE CLI WORK
"""
import json
import os
import re
import shutil
import subprocess
import sys

failures = []


def expect(cond, message):
    if not cond:
        failures.append(message)
        print("FAILED: " + message, file=sys.stderr)


def case(source, file_format):
    folder = os.path.join(source, "test_examples", "channel_forces")
    with open(os.path.join(folder, "ProjectParameters.json")) as f:
        p = json.load(f)
    p["solver_settings"]["model_import_settings"]["input_filename"] = os.path.join(folder, "channel_forces.msh")
    p["output_processes"] = {"vtk": [{"python_module": "vtk_output_process", "Parameters": {
        "model_part_name": "FluidModelPart", "output_control_type": "step", "output_interval": 1,
        "output_path": "vtk", "file_format": file_format, "output_sub_model_parts": True,
        "output_precision": 17,  # every double exact, as binary: the ratio compares the same information
        "nodal_solution_step_data_variables": ["VELOCITY", "PRESSURE"]}}]}
    return p


def run(source, cli, work, file_format):
    path = os.path.join(work, file_format + ".json")
    with open(path, "w") as f:
        json.dump(case(source, file_format), f, indent=1)
    out = os.path.join(work, file_format)
    r = subprocess.run([cli, "run", path, "--steps", "4", "--output", out, "--quiet"], capture_output=True, text=True)
    expect(r.returncode == 0, f"{file_format} run failed: {r.stderr}")
    return r, out


def main():
    source, cli, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    r_ascii, ascii_out = run(source, cli, work, "ascii")
    r_binary, binary_out = run(source, cli, work, "binary")
    if failures:
        return 1
    vtus = [n for n in os.listdir(os.path.join(ascii_out, "vtk")) if n.endswith(".vtu")]
    expect(len(vtus) > 4, f"only {len(vtus)} ascii .vtu files: sub model parts not written?")
    warnings = [l for l in r_ascii.stderr.splitlines() if " is ascii: " in l]
    expect(len(warnings) == 1, f"expected one ascii warning, got {len(warnings)}: {warnings}")
    expect(" is ascii: " not in r_binary.stderr, f"binary run warned: {r_binary.stderr}")
    if len(warnings) != 1:
        return 1
    m = re.search(r"is ascii: (\S+) is ([0-9.e+-]+) MB, ([0-9.]+)x the ([0-9.e+-]+) MB of the same data in binary "
                  r"\(measured\)", warnings[0])
    expect(m is not None, f"the warning does not state a measured ratio: {warnings[0]}")
    if not m:
        return 1
    path, ascii_mb, ratio, binary_mb = m.group(1), float(m.group(2)), float(m.group(3)), float(m.group(4))
    expect(1.0 < ratio < 10.0, f"implausible ascii/binary ratio {ratio}")
    expect(os.path.isfile(path), f"the warning names {path}, which does not exist")
    twin = os.path.join(binary_out, os.path.relpath(path, ascii_out))
    expect(os.path.isfile(twin), f"no binary twin {twin} of {path}")
    if failures:
        return 1
    a, b = os.path.getsize(path), os.path.getsize(twin)
    expect(abs(a / b - ratio) <= 0.051, f"stated ratio {ratio}, files {a} / {b} bytes = {a / b:.3f}")
    expect(abs(a / 1e6 - ascii_mb) <= 0.0051 * max(ascii_mb, 1e-3) + 5e-4 and
           abs(b / 1e6 - binary_mb) <= 0.0051 * max(binary_mb, 1e-3) + 5e-4,
           f"stated {ascii_mb} MB / {binary_mb} MB, files {a} / {b} bytes")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
