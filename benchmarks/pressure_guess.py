#!/usr/bin/env python3
"""Pressure iterations per step with each solver_settings.pressure_initial_guess on one case (issue 12).

    /usr/bin/python3 benchmarks/pressure_guess.py --build B --case ProjectParameters.json --out DIR
            [--strategy S] [--refine K] [--steps N] [--dt DT] [--end-time T] [--solver-settings JSON]
            [--linear-solver JSON] [--guesses previous,linear,quadratic]

The case runs once per guess through the Python workflow (edgeflow.FluidAnalysis), without output processes, on its
own mesh refined K times; --dt fixes the time step (automatic_time_step false), otherwise the case's own time
stepping runs to --end-time (or the case's end) or N steps, whichever comes first.  --solver-settings is merged into
solver_settings, --linear-solver into linear_solver_settings.  Printed per guess: steps, the total and mean pressure
iterations, their saving against "previous", the first and the last steps' iterations, and the largest difference of
the final PRESSURE and VELOCITY from the "previous" run relative to their largest magnitude (what the guess moved
within the solver's tolerance).  Iteration counts are deterministic for a build and machine; no times are taken.
Written to DIR/<tag>.json: per guess the iterations and dt of every step.
"""
import argparse
import json
import os
import pathlib
import sys

SRC = pathlib.Path(__file__).resolve().parent.parent


def run(edgeflow, a, guess, out):
    src = pathlib.Path(a.case).resolve()
    p = json.loads(src.read_text())
    pd, ss = p["problem_data"], p["solver_settings"]
    tag = f"{src.parent.name}_L{a.refine}_{a.strategy}_{guess}"
    pd.update({"echo_level": 0, "output_folder": str(out / tag)})
    ss["solver_type"] = a.strategy
    mis = ss["model_import_settings"]
    mis["input_filename"] = str(src.parent / mis["input_filename"])
    mis["refinement_levels"] = a.refine
    if a.dt > 0:
        ss["time_stepping"] = {"automatic_time_step": False, "time_step": a.dt}
        pd["end_time"] = pd.get("start_time", 0.0) + (a.steps + 1) * a.dt
    elif a.end_time > 0:
        pd["end_time"] = a.end_time
    ss.update(json.loads(a.solver_settings))
    ss["pressure_initial_guess"] = guess
    ss.setdefault("linear_solver_settings", {}).update(json.loads(a.linear_solver))
    p["output_processes"] = {}
    case = out / f"{tag}.case.json"
    case.write_text(json.dumps(p, indent=1))
    an = edgeflow.FluidAnalysis(str(case), quiet=True, overwrite=True, max_steps=a.steps)
    an.Initialize()
    its, dts = [], []
    while an.KeepAdvancingSolutionLoop():
        an.InitializeSolutionStep()
        an.SolveSolutionStep()
        an.FinalizeSolutionStep()
        its.append(an.pressure_iterations)
        dts.append(an.delta_time)
    mp = an.model_part
    fields = (mp.values("PRESSURE").copy(), mp.values("VELOCITY").copy(), an.time)
    an.Finalize()
    return its, dts, fields


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--case", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--strategy", default="openmp_edge_based")
    ap.add_argument("--refine", type=int, default=0)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--dt", type=float, default=0.0, help="fixed time step (0: the case's time stepping)")
    ap.add_argument("--end-time", type=float, default=0.0, help="end time with the case's time stepping")
    ap.add_argument("--solver-settings", default="{}", help="JSON merged into solver_settings")
    ap.add_argument("--linear-solver", default="{}", help="JSON merged into linear_solver_settings")
    ap.add_argument("--guesses", default="previous,linear,quadratic")
    ap.add_argument("--tag", default="")
    a = ap.parse_args()
    lib = str(pathlib.Path(a.build).resolve() / "lib")
    os.environ.setdefault("EDGEFLOW_LIB_DIR", lib)
    os.environ.setdefault("EDGEFLOW_PLUGIN_DIR", lib)
    sys.path.insert(0, str(SRC / "python_scripts"))
    import numpy as np  # noqa: PLC0415
    import edgeflow  # noqa: PLC0415

    out = pathlib.Path(a.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    guesses = a.guesses.split(",")
    res, ref = {}, None
    for g in guesses:
        its, dts, (p, u, t) = run(edgeflow, a, g, out)
        if ref is None:
            ref = (p, u, its)
        dp = float(np.max(np.abs(p - ref[0])) / max(np.max(np.abs(ref[0])), 1e-300))
        du = float(np.max(np.abs(u - ref[1])) / max(np.max(np.abs(ref[1])), 1e-300))
        total, base = sum(its), sum(ref[2])
        res[g] = {"iterations": its, "dt": dts, "end_time": t, "total": total,
                  "pressure_rel_diff": dp, "velocity_rel_diff": du}
        print(f"{a.tag or pathlib.Path(a.case).parent.name} {a.strategy} L{a.refine} {g}: {len(its)} steps to "
              f"t = {t:.6g}, pressure iterations total {total}, mean {total / max(len(its), 1):.1f} per step "
              f"({100.0 * (base - total) / max(base, 1):+.1f} % saved), first {its[:4]}, last {its[-3:]}; final "
              f"fields vs '{guesses[0]}': max|dp|/max|p| {dp:.2e}, max|du|/max|u| {du:.2e}", flush=True)
    tag = a.tag or f"{pathlib.Path(a.case).parent.name}_L{a.refine}_{a.strategy}"
    (out / f"pressure_guess_{tag}.json").write_text(json.dumps(
        {"case": str(pathlib.Path(a.case).resolve()), "refine": a.refine, "dt": a.dt, "steps": a.steps,
         "solver_settings": json.loads(a.solver_settings), "linear_solver": json.loads(a.linear_solver),
         "guesses": res}, indent=1))


if __name__ == "__main__":
    main()
