#!/usr/bin/env python3
"""The Python workflow keeps the user's time steps when the stability limit cuts a fixed time_step,
as `edgeflow run` does (docs/processes.md, Time-step semantics).

Case: test_time_step_semantics.py's cut_case (channel_forces, time_step 0.1, about ten solver steps
per user step, to t = 0.5; VTK every step, forces every 2, a probe every step, restart files every
2 steps).  A FluidAnalysis subclass runs it in a child Python (so the library's stderr is
captured) and records step, output_step and time after every FinalizeSolutionStep.  Checks:
1. one stability warning, stating the conversion;
2. the .pvd lists FluidModelPart_1..5.vtu at t = 0.1, ..., 0.5 (to 1e-12); forces rows at 0.1, 0.3,
   0.5; probe rows at 0, 0.1, ..., 0.5;
3. output_step rises by one exactly when t reaches 0.1 k (to 1e-12) and ends at 5, over more
   than 25 solver steps (the same number as the CLI's run);
4. every .vtu, .pvd and .csv is byte-identical to the CLI's run of the same parameters, and the
   restart files have the same names (FluidModelPart_2/_4/_5.rest).

    test_python_cut_time_step.py SOURCE CLI WORK
"""
import filecmp
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_time_step_semantics import csv_times, cut_case, pvd_times  # noqa: E402

failures = []


def expect(cond, message):
    if not cond:
        failures.append(message)
        print("FAILED: " + message, file=sys.stderr)


CHILD = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
from edgeflow import FluidAnalysis

class Recording(FluidAnalysis):
    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.record = []

    def FinalizeSolutionStep(self):
        super().FinalizeSolutionStep()
        self.record.append([self.step, self.output_step, self.time])

a = Recording(sys.argv[2], output_folder=sys.argv[3], quiet=True)
a.Run()
with open(sys.argv[4], "w") as f:
    json.dump(a.record, f)
'''


def outputs(folder):
    names = []
    for root, _, files in os.walk(folder):
        names += [os.path.relpath(os.path.join(root, n), folder) for n in files if n.endswith((".vtu", ".pvd", ".csv"))]
    return sorted(names)


def main():
    source, cli, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    params = os.path.join(work, "cut.json")
    with open(params, "w") as f:
        json.dump(cut_case(source), f, indent=1)
    cli_out, py_out, record_path = (os.path.join(work, n) for n in ("cli", "python", "record.json"))
    r = subprocess.run([cli, "run", params, "--output", cli_out, "--quiet"], capture_output=True, text=True)
    expect(r.returncode == 0, f"CLI run failed: {r.stderr}")
    r = subprocess.run([sys.executable, "-c", CHILD, os.path.join(source, "python_scripts"), params, py_out,
                        record_path], capture_output=True, text=True)
    expect(r.returncode == 0, f"Python run failed: {r.stderr}")
    if failures:
        return 1

    warnings = [l for l in r.stderr.splitlines() if "stability limit" in l]
    expect(len(warnings) == 1 and re.search(r"fixed time step 0\.1 .*count time steps of 0\.1", warnings[0]),
           f"expected one stability warning stating the conversion, got {warnings}")

    series = pvd_times(os.path.join(py_out, "vtk", "FluidModelPart.pvd"))
    expect([f for _, f in series] == [f"FluidModelPart_{k}.vtu" for k in range(1, 6)], f"pvd files {series}")
    expect(len(series) == 5 and all(abs(t - 0.1 * k) < 1e-12 for k, (t, _) in enumerate(series, 1)),
           f"pvd times {[t for t, _ in series]} are not the user's 0.1, ..., 0.5")
    ft = csv_times(os.path.join(py_out, "walls.csv"))
    expect(len(ft) == 3 and all(abs(t - w) < 1e-12 for t, w in zip(ft, [0.1, 0.3, 0.5])), f"forces rows at {ft}")
    pt = csv_times(os.path.join(py_out, "centre.csv"))
    expect(len(pt) == 6 and all(abs(t - 0.1 * k) < 1e-12 for k, t in enumerate(pt)), f"probe rows at {pt}")

    with open(record_path) as f:
        record = json.load(f)
    with open(os.path.join(cli_out, "run_summary.json")) as f:
        cli_steps = json.load(f)["run"]["steps"]
    expect(len(record) == cli_steps and cli_steps > 25,
           f"{len(record)} Python solver steps, the CLI took {cli_steps} (expected > 25)")
    expect([s for s, _, _ in record] == list(range(1, len(record) + 1)), "step does not count solver steps")
    previous = 0
    for step, out_step, t in record:
        if out_step != previous:
            expect(out_step == previous + 1 and abs(t - 0.1 * out_step) < 1e-12,
                   f"output_step {previous} -> {out_step} at solver step {step}, t = {t!r}")
            previous = out_step
        else:
            expect(t < 0.1 * (out_step + 1) - 1e-12, f"t = {t!r} passed a user step without output_step rising")
    expect(previous == 5, f"output_step ended at {previous}, expected 5")

    names = outputs(cli_out)
    expect(names == outputs(py_out), f"different outputs: CLI {names}, Python {outputs(py_out)}")
    for n in names:
        expect(filecmp.cmp(os.path.join(cli_out, n), os.path.join(py_out, n), shallow=False), f"{n} differs")
    rest = [sorted(os.listdir(os.path.join(d, "FluidModelPart__restart_files"))) for d in (cli_out, py_out)]
    expect(rest[0] == rest[1] == ["FluidModelPart_2.rest", "FluidModelPart_4.rest", "FluidModelPart_5.rest"],
           f"restart files: CLI {rest[0]}, Python {rest[1]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
