#!/usr/bin/python3
"""time_stepping.CFL_number's default depends on the scheme (fractional_step.h: EF_FS_CFL_EXPLICIT,
EF_FS_CFL_IMPLICIT): absent or null, the explicit scheme steps at 1.0 and the implicit viscosity at
4.0 (<= 0.8x the smallest stable value measured, docs/implicit_viscosity.md).  Case: the 3D cavity on its
committed mesh (the lid gives a finite convective limit from the first step), implicit growth limit
off so that the first step is the CFL rule itself.  Checks, on the first step's dt:
1. implicit, no CFL_number = 4x implicit with CFL_number 1 (to 1e-12);
2. implicit with CFL_number null = implicit with none;
3. explicit, no CFL_number = explicit with CFL_number 1;
4. CFL_number "fast" is an error naming solver_settings.time_stepping.CFL_number.
    test_cfl_defaults.py SOURCE
"""
import json
import os
import sys

source = sys.argv[1]
sys.path.insert(0, os.path.join(source, "python_scripts"))
import edgeflow  # noqa: E402

failures = []


def expect(cond, message):
    if not cond:
        failures.append(message)
        print("FAILED: " + message, file=sys.stderr)


def first_dt(work, name, scheme, cfl="absent"):
    folder = os.path.join(source, "test_examples", "cavity3d")
    with open(os.path.join(folder, "ProjectParameters.json")) as f:
        p = json.load(f)
    ss = p["solver_settings"]
    ss["solver_type"] = "openmp_edge_based"
    ss["model_import_settings"]["input_filename"] = os.path.join(folder, "cavity3d.msh")
    ss["time_stepping"] = {"automatic_time_step": True}
    if cfl != "absent":
        ss["time_stepping"]["CFL_number"] = cfl
    ss["viscous_time_integration"] = scheme
    ss["implicit_viscosity"] = {"maximum_time_step_growth": 0.0}
    p["output_processes"] = {}
    p["processes"].pop("auxiliar_process_list", None)
    p["problem_data"]["end_time"] = 10.0
    path = os.path.join(work, name + ".json")
    with open(path, "w") as f:
        json.dump(p, f, indent=1)
    a = edgeflow.FluidAnalysis(path, quiet=True, overwrite=True, output_folder=os.path.join(work, name))
    a.Initialize()
    a.InitializeSolutionStep()
    a.SolveSolutionStep()
    a.FinalizeSolutionStep()
    dt = a.delta_time
    a.Finalize()
    return dt


def main():
    work = sys.argv[2] if len(sys.argv) > 2 else "cfl_defaults"
    os.makedirs(work, exist_ok=True)
    imp, imp1 = first_dt(work, "implicit", "implicit"), first_dt(work, "implicit_cfl1", "implicit", 1.0)
    expect(abs(imp / imp1 - 4.0) < 1e-12, f"implicit default dt {imp} is not 4x the CFL-1 step {imp1}")
    imp_null = first_dt(work, "implicit_null", "implicit", None)
    expect(imp_null == imp, f"CFL_number null gives dt {imp_null}, absent {imp}")
    exp, exp1 = first_dt(work, "explicit", "explicit"), first_dt(work, "explicit_cfl1", "explicit", 1.0)
    expect(exp == exp1, f"explicit default dt {exp} differs from the CFL-1 step {exp1}")
    try:
        first_dt(work, "bad", "implicit", "fast")
        expect(False, "CFL_number \"fast\" was accepted")
    except edgeflow.EdgeflowError as e:
        expect("solver_settings.time_stepping.CFL_number" in str(e), f"the error does not name the key: {e}")
    print(f"first steps: implicit {imp:.6g} (CFL 1: {imp1:.6g}), explicit {exp:.6g}")
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("cfl_defaults: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
