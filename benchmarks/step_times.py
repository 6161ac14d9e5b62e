#!/usr/bin/env python3
"""Wall time of every time step of a case, to tell a steady cost per step from one-off ones.

    python3 benchmarks/step_times.py --build B --case ProjectParameters.json --out DIR [--strategy S]
            [--refine K] [--steps N] [--dt DT] [--linear-solver JSON] [--renumbering R] [--tag NAME]

The case runs through the Python workflow (edgeflow.FluidAnalysis), without output processes, on its own
mesh refined K times; --dt fixes the time step (automatic_time_step false), as issue 12's whole-case protocol
does (1e-4, 40 steps, tolerance 1e-8 in --linear-solver).  Each step is timed around
InitializeSolutionStep + SolveSolutionStep + FinalizeSolutionStep (perf_counter; the device strategy's step
ends with its host-side checks, so the step's device work is inside).  Printed: the first steps one by one,
then mean, median, min and max over all steps and over the steps after the first two, and the steps slower
than twice the median.  Written to DIR/<tag>.json: per step wall seconds, dt and pressure iterations, and the
summary's pressure-solver figures.
"""
import argparse
import json
import os
import pathlib
import statistics
import sys
import time

SRC = pathlib.Path(__file__).resolve().parent.parent


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--case", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--strategy", default="opencl_edge_based")
    ap.add_argument("--refine", type=int, default=0)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--dt", type=float, default=0.0, help="fixed time step (0: the case's time stepping)")
    ap.add_argument("--linear-solver", default="{}", help="JSON merged into linear_solver_settings")
    ap.add_argument("--renumbering", default="", help="model_import_settings.renumbering (default: the case's)")
    ap.add_argument("--tag", default="")
    ap.add_argument("--solver-settings", default="{}", help="JSON merged into solver_settings (e.g. '{\"pressure_initial_guess\": \"linear\"}')")
    a = ap.parse_args()
    lib = str(pathlib.Path(a.build).resolve() / "lib")
    os.environ.setdefault("EDGEFLOW_LIB_DIR", lib)
    os.environ.setdefault("EDGEFLOW_PLUGIN_DIR", lib)
    sys.path.insert(0, str(SRC / "python_scripts"))
    import edgeflow  # noqa: PLC0415

    src = pathlib.Path(a.case).resolve()
    p = json.loads(src.read_text())
    tag = a.tag or f"{src.parent.name}_L{a.refine}_{a.strategy}"
    out = pathlib.Path(a.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    pd, ss = p["problem_data"], p["solver_settings"]
    pd.update({"echo_level": 0, "output_folder": str(out / tag)})
    ss["solver_type"] = a.strategy
    mis = ss["model_import_settings"]
    mis["input_filename"] = str(src.parent / mis["input_filename"])
    mis["refinement_levels"] = a.refine
    if a.renumbering:
        mis["renumbering"] = a.renumbering
    if a.dt > 0:
        ss["time_stepping"] = {"automatic_time_step": False, "time_step": a.dt}
        pd["end_time"] = pd.get("start_time", 0.0) + (a.steps + 1) * a.dt
    ss.setdefault("linear_solver_settings", {}).update(json.loads(a.linear_solver))
    ss.update(json.loads(a.solver_settings))
    p["output_processes"] = {}
    case = out / f"{tag}.case.json"
    case.write_text(json.dumps(p, indent=1))

    an = edgeflow.FluidAnalysis(str(case), quiet=True, overwrite=True, max_steps=a.steps)
    t0 = time.perf_counter()
    an.Initialize()
    t_init = time.perf_counter() - t0
    walls, dts, its = [], [], []
    while an.KeepAdvancingSolutionLoop():
        s0 = time.perf_counter()
        an.InitializeSolutionStep()
        an.SolveSolutionStep()
        an.FinalizeSolutionStep()
        walls.append(time.perf_counter() - s0)
        dts.append(an.delta_time)
        its.append(an.pressure_iterations)
    an.Finalize()
    summary = {}
    sp = pathlib.Path(pd["output_folder"]) / "run_summary.json"
    if sp.exists():
        summary = json.loads(sp.read_text())

    def stats(w):
        return {"steps": len(w), "mean_ms": 1e3 * statistics.fmean(w), "median_ms": 1e3 * statistics.median(w),
                "min_ms": 1e3 * min(w), "max_ms": 1e3 * max(w)} if w else {}

    med = statistics.median(walls)
    slow = [{"step": k + 1, "ms": 1e3 * w, "iterations": its[k]} for k, w in enumerate(walls) if w > 2.0 * med]
    res = {"tag": tag, "case": str(src), "strategy": a.strategy, "refine": a.refine, "dt": a.dt,
           "linear_solver": json.loads(a.linear_solver), "initialize_s": t_init, "step_s": walls, "dt_per_step": dts,
           "pressure_iterations": its, "all": stats(walls), "after_2": stats(walls[2:]), "slow_steps": slow,
           "pressure_solver": summary.get("strategy", {}).get("pressure_solver"),
           "phases_per_step": summary.get("strategy", {}).get("phases", {}).get("seconds_per_step")}
    (out / f"{tag}.json").write_text(json.dumps(res, indent=1))
    first = ", ".join(f"{1e3 * w:.1f}" for w in walls[:6])
    al, af = res["all"], res["after_2"]
    print(f"{tag}: initialize {t_init:.2f} s; first steps [ms] {first}; all: mean {al['mean_ms']:.2f} median "
          f"{al['median_ms']:.2f} max {al['max_ms']:.2f}; after step 2: mean {af.get('mean_ms', 0):.2f} median "
          f"{af.get('median_ms', 0):.2f} max {af.get('max_ms', 0):.2f} ms; slow steps "
          + (", ".join(f"{s['step']} ({s['ms']:.1f} ms, {s['iterations']} it)" for s in slow) or "none"), flush=True)


if __name__ == "__main__":
    main()
