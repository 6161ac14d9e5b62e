#!/usr/bin/python3
"""The Python binding under wrong use: stages called out of order raise EdgeflowError (they
segfaulted), and NumPy views from values() keep the analysis alive after the last reference to
it is dropped (they read freed memory).

    test_call_order.py SOURCE_DIR WORK_DIR"""
import gc
import json
import os
import sys
import weakref

source, work = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(source, "python_scripts"))
from edgeflow.core import EdgeflowError  # noqa: E402
from edgeflow.fluid_analysis import FluidAnalysis  # noqa: E402

os.makedirs(work, exist_ok=True)
case = json.load(open(os.path.join(source, "tests/data/workflow/ProjectParameters.json")))
case["solver_settings"]["model_import_settings"]["input_filename"] = os.path.join(
    source, "test_examples/channel_forces/channel_forces.msh")
case["output_processes"] = {}
path = os.path.join(work, "ProjectParameters.json")
json.dump(case, open(path, "w"))
failures = []


def raises(name, call, needle):
    try:
        call()
    except EdgeflowError as e:
        if needle not in str(e):
            failures.append(f"{name}: message '{e}' lacks '{needle}'")
        return
    failures.append(f"{name}: no EdgeflowError")


a = FluidAnalysis(path, output_folder=os.path.join(work, "out"), quiet=True, max_steps=2, overwrite=True)
raises("SolveSolutionStep before Initialize", a.SolveSolutionStep, "before ef_analysis_initialize")
raises("InitializeSolutionStep before Initialize", a.InitializeSolutionStep, "before ef_analysis_initialize")
raises("FinalizeSolutionStep before Initialize", a.FinalizeSolutionStep, "before ef_analysis_initialize")
raises("OutputSolutionStep before Initialize", a.OutputSolutionStep, "before ef_analysis_initialize")
raises("Finalize before Initialize", a.Finalize, "before ef_analysis_initialize")
a.Initialize()
a.RunSolutionLoop()
a.Finalize()
raises("SolveSolutionStep after Finalize", a.SolveSolutionStep, "after ef_analysis_finalize")

# A view outlives every other reference to its analysis: it must still read the same values.
velocity = a.model_part.values("VELOCITY")
coordinates = a.model_part.coordinates()
expected = velocity.copy()
alive = weakref.ref(a)
del a
gc.collect()
if alive() is None:
    failures.append("the analysis was destroyed while views of its memory were alive")
junk = [bytearray(os.urandom(4096)) for _ in range(2000)]  # reuse freed memory if it was freed
if not (velocity == expected).all():
    failures.append("a values() view changed after the analysis was dropped: it read freed memory")
if coordinates.shape[1] != 3 or not (coordinates[:, 2] == 0).all():
    failures.append("a coordinates() view is wrong after the analysis was dropped")
del velocity, coordinates, junk
gc.collect()
if alive() is not None:
    failures.append("the analysis outlived the last view of it (a reference cycle keeps it)")

if failures:
    print("\n".join(failures))
    sys.exit(1)
