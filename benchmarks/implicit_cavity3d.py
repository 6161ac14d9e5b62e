#!/usr/bin/env python3
"""Time to solution of the 3D cavity at Re 100 with the explicit and the implicit viscosity (issue 16).

    python3 benchmarks/implicit_cavity3d.py run --build B --out DIR --level 2 --strategy opencl_edge_based
            --scheme implicit [--cfl 1.0] [--t-end 1.0] [--linear-solver JSON] [--renumbering R]
    python3 benchmarks/implicit_cavity3d.py compare DIR/a.json DIR/b.json

run: test_examples/cavity3d/ProjectParameters.json (Re 100, lid u = 1) refined `level` times, from rest to
t_end at the automatic step with CFL_number `cfl` (the case's 1.0 by default), no output processes, the
pressure solver of --linear-solver (default FCG + AMG, the case's tolerance 1e-6); the Python workflow
(edgeflow.FluidAnalysis) steps it.  Written to DIR/<strategy>_<scheme>_cfl<cfl>_L<level>.json: wall
seconds of Initialize (mesh, refinement, set-up) and of the time loop, steps, first / last / smallest /
largest dt, the summary's pressure and viscous iterations, and four profiles at t_end (101 points
each, s = 0, 0.01, .., 1, P1 interpolation): the case's centrelines (its README: lid z = 1 moving in +x)
"ux_centreline_z" = u_x(0.5, 0.5, s) on the vertical one and "uz_centreline_x" = u_z(s, 0.5, 0.5) on the
horizontal one, and the first two profiles this script wrote, kept under their old names:
"ux_vertical" = u_x(0.5, s, 0.5) (a line parallel to y at mid-height, not the vertical centreline) and
"uy_horizontal" = u_y(s, 0.5, 0.5) (zero by the mirror symmetry about y = 0.5, so it measures only
asymmetry).  compare: the largest |difference| over the profiles both files have (units of the lid
speed), also per profile, and the ratio of loop times and of total times.
"""
import argparse
import json
import os
import pathlib
import sys
import time

import numpy as np

SRC = pathlib.Path(__file__).resolve().parent.parent
PROFILES = ("ux_vertical", "uy_horizontal", "ux_centreline_z", "uz_centreline_x")


def run(a):
    lib = str(pathlib.Path(a.build).resolve() / "lib")
    os.environ.setdefault("EDGEFLOW_LIB_DIR", lib)
    os.environ.setdefault("EDGEFLOW_PLUGIN_DIR", lib)
    sys.path.insert(0, str(SRC / "python_scripts"))
    import edgeflow  # noqa: PLC0415
    import edgeflow_post as post  # noqa: PLC0415
    out = pathlib.Path(a.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    name = f"{a.strategy}_{a.scheme}_cfl{a.cfl:g}_L{a.level}" + ("_rimrest" if a.rim == "rest" else "")
    src = SRC / "test_examples" / "cavity3d" / "ProjectParameters.json"
    p = json.loads(src.read_text())
    pd, ss = p["problem_data"], p["solver_settings"]
    pd.update({"start_time": 0.0, "end_time": a.t_end, "echo_level": 0, "output_folder": str(out / name)})
    ss["solver_type"] = a.strategy
    ss["model_import_settings"]["input_filename"] = str(src.parent / "cavity3d.msh")
    ss["model_import_settings"]["refinement_levels"] = a.level
    if a.renumbering:
        ss["model_import_settings"]["renumbering"] = a.renumbering
    ss["time_stepping"] = {"automatic_time_step": True, "CFL_number": a.cfl}
    ss["viscous_time_integration"] = a.scheme
    ss.setdefault("linear_solver_settings", {}).update(json.loads(a.linear_solver))
    ss.update(json.loads(a.solver_settings))
    p["output_processes"] = {}
    if a.rim == "rest":
        bc = p["processes"]["boundary_conditions_process_list"]
        walls = [q for q in bc if q["Parameters"].get("model_part_name") == "FluidModelPart.walls"]
        p["processes"]["boundary_conditions_process_list"] = [q for q in bc if q not in walls] + walls
    case = out / f"{name}.case.json"
    case.write_text(json.dumps(p, indent=1))
    t0 = time.perf_counter()
    an = edgeflow.FluidAnalysis(str(case), quiet=True, overwrite=True)
    an.Initialize()
    t1 = time.perf_counter()
    dts = []
    while an.KeepAdvancingSolutionLoop():
        an.InitializeSolutionStep()
        an.SolveSolutionStep()
        an.FinalizeSolutionStep()
        dts.append(an.delta_time)
    t2 = time.perf_counter()
    mp = an.model_part
    X, E = np.array(mp.coordinates()), np.array(mp.elements())
    u = np.array(mp.values("VELOCITY"))
    s = np.linspace(0.0, 1.0, 101)
    vert = np.column_stack([np.full_like(s, 0.5), s, np.full_like(s, 0.5)])
    horiz = np.column_stack([s, np.full_like(s, 0.5), np.full_like(s, 0.5)])
    zline = np.column_stack([np.full_like(s, 0.5), np.full_like(s, 0.5), s])
    # one point location for the three lines (it builds a search grid over every element: minutes at level 3
    # when done once per profile)
    uall = post.interpolate(X, E, u, np.vstack([vert, horiz, zline]))
    m = len(s)
    ux, uy, uz_x, ux_z = uall[:m, 0], uall[m:2 * m, 1], uall[m:2 * m, 2], uall[2 * m:, 0]
    t_end = an.time
    an.Finalize()
    summary = {}
    sp = pathlib.Path(pd["output_folder"]) / "run_summary.json"
    if sp.exists():
        summary = json.loads(sp.read_text())
    strat = summary.get("strategy", {})
    res = {"case": "cavity3d Re 100", "level": a.level, "nodes": int(len(X)), "strategy": a.strategy,
           "scheme": a.scheme, "cfl": a.cfl, "renumbering": summary.get("mesh", {}).get("renumbering", a.renumbering or "auto"), "t_end": t_end,
           "linear_solver": json.loads(a.linear_solver),
           "initialize_s": t1 - t0, "loop_s": t2 - t1, "total_s": t2 - t0, "steps": len(dts),
           "dt_first": dts[0], "dt_last": dts[-1], "dt_min": min(dts), "dt_max": max(dts),
           "pressure_solver": strat.get("pressure_solver"), "viscous_solver": strat.get("viscous_solver"),
           "omp_threads": os.environ.get("OMP_NUM_THREADS"), "centreline_s": s.tolist(),
           "ux_vertical": np.asarray(ux).tolist(), "uy_horizontal": np.asarray(uy).tolist(),
           "ux_centreline_z": np.asarray(ux_z).tolist(), "uz_centreline_x": np.asarray(uz_x).tolist()}
    (out / f"{name}.json").write_text(json.dumps(res, indent=1))
    print(f"{name}: {len(X)} nodes, {len(dts)} steps (dt {dts[0]:.3g} .. {max(dts):.3g}), initialize "
          f"{t1 - t0:.2f} s, loop {t2 - t1:.2f} s ({1e3 * (t2 - t1) / len(dts):.2f} ms/step), t = {t_end:.6g}",
          flush=True)


def compare(a):
    r1, r2 = (json.loads(pathlib.Path(f).read_text()) for f in (a.first, a.second))
    keys = [k for k in PROFILES if k in r1 and k in r2]
    per = {k: float(np.max(np.abs(np.array(r1[k]) - np.array(r2[k])))) for k in keys}
    d = max(per.values())
    out = {"first": a.first, "second": a.second, "max_centreline_difference": d, "per_profile": per,
           "loop_ratio": r1["loop_s"] / r2["loop_s"], "total_ratio": r1["total_s"] / r2["total_s"],
           "steps": [r1["steps"], r2["steps"]]}
    print(f"{os.path.basename(a.first)} / {os.path.basename(a.second)}: max centreline |du| {d:.4g}, loop "
          f"{r1['loop_s']:.2f} / {r2['loop_s']:.2f} s = {out['loop_ratio']:.2f}x, total {r1['total_s']:.2f} / "
          f"{r2['total_s']:.2f} s = {out['total_ratio']:.2f}x, steps {r1['steps']} / {r2['steps']}; per profile "
          + ", ".join(f"{k} {v:.4g}" for k, v in per.items()), flush=True)
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(out, indent=1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sp = ap.add_subparsers(dest="mode", required=True)
    r = sp.add_parser("run")
    r.add_argument("--build", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--level", type=int, default=2)
    r.add_argument("--strategy", default="opencl_edge_based")
    r.add_argument("--scheme", default="implicit", choices=["implicit", "explicit"])
    r.add_argument("--cfl", type=float, default=1.0)
    r.add_argument("--t-end", type=float, default=1.0)
    r.add_argument("--renumbering", default=None, choices=["auto", "rcm", "morton", "none"],
                   help="model_import_settings.renumbering (default: the case's, \"auto\")")
    r.add_argument("--linear-solver", default='{"solver_type": "fcg", "preconditioner_type": "amg"}')
    r.add_argument("--solver-settings", default="{}", help="JSON merged into solver_settings (e.g. '{\"pressure_initial_guess\": \"linear\"}')")
    r.add_argument("--rim", default="moving", choices=["moving", "rest"],
                   help="the lid's rim nodes: moving with the lid (the case as committed: the lid process after the "
                        "walls') or at rest (the walls' process last, as ProjectParameters_re1000.json)")
    c = sp.add_parser("compare")
    c.add_argument("first")
    c.add_argument("second")
    c.add_argument("--json", default=None)
    a = ap.parse_args()
    run(a) if a.mode == "run" else compare(a)


if __name__ == "__main__":
    main()
