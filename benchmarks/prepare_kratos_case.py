#!/usr/bin/env python3
"""Write a Kratos case's ProjectParameters.json as the benchmarks run it.

    python3 benchmarks/prepare_kratos_case.py CASE_DIR OUT_JSON STRATEGY [--time-step DT] [--end-time T]
                                              [--asynchronous-write true|false]

Edits: solver_type -> STRATEGY; the mesh file made absolute (CASE_DIR); density 1 and dynamic viscosity
1e-3 where the case gives no fluid of its own (the shared Kratos cases give none: Re 500 on
channel_sphere2D's cylinder); the fixed time_step, the end time and every vtk_output_process's
asynchronous_write when given. Used by kratos_case_gpu.sh and output_overlap.sh."""
import argparse
import json
import os
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("case_dir")
    ap.add_argument("out_json")
    ap.add_argument("strategy")
    ap.add_argument("--time-step", type=float, default=None)
    ap.add_argument("--end-time", type=float, default=None)
    ap.add_argument("--asynchronous-write", choices=("true", "false"), default=None)
    a = ap.parse_args()
    with open(os.path.join(a.case_dir, "ProjectParameters.json")) as f:
        p = json.load(f)
    ss = p["solver_settings"]
    ss["solver_type"] = a.strategy
    mis = ss["model_import_settings"]
    mis["input_filename"] = os.path.join(a.case_dir, mis["input_filename"])
    if not any(k in ss for k in ("viscosity", "dynamic_viscosity", "material_import_settings")):
        ss["density"] = 1.0
        ss["dynamic_viscosity"] = 1e-3
    if a.time_step is not None:
        ss.setdefault("time_stepping", {})["time_step"] = a.time_step
    if a.end_time is not None:
        p["problem_data"]["end_time"] = a.end_time
    if a.asynchronous_write is not None:
        n = 0
        for blocks in p.get("output_processes", {}).values():
            for b in blocks:
                if b.get("python_module") == "vtk_output_process":
                    b.setdefault("Parameters", {})["asynchronous_write"] = a.asynchronous_write == "true"
                    n += 1
        if n == 0:
            sys.exit(f"{a.case_dir}: the case has no vtk_output_process")
    with open(a.out_json, "w") as f:
        json.dump(p, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
