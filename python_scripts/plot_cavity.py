#!/usr/bin/python3
"""Lid-driven cavities: steady runs, centreline profiles and their plots (used by make_figures.py).

    plot_cavity.py run2d --re 100 --results DIR [--n 32 --level 1 --rate 1e-4 --cfl 1.0]
    plot_cavity.py run3d --results DIR [--level 1]
    plot_cavity.py plot --results DIR --out docs/figures
    plot_cavity.py job --run DIR [--out PNG]

run2d meshes test_examples/cavity2d/cavity2d.geo (n x n graded cells, refined `level` times),
runs ProjectParameters_Re<re>.json through the Python workflow until max |du/dt| averaged over
10 steps is below --rate (problem_data.steady_state) and writes DIR/cavity2d_Re<re>.json with
u(0.5, y) and v(x, 0.5) on 201 points (P1 interpolation). run3d runs
test_examples/cavity3d/ProjectParameters_steady.json with the `edgeflow` program (openmp
strategy, --refine level), reads the last .vtu back and writes DIR/cavity3d_level<L>.json with
u(0.5, 0.5, z) and w(x, 0.5, 0.5). plot draws cavity2d_centerlines.png (against Ghia, Ghia &
Shin 1982, Tables I and II) and cavity3d_centerlines.png from whatever JSON files DIR holds.
job is the picture of the README's main job (scripts/run_cavity.sh): the centrelines of the last
.vtu of an `edgeflow run` folder, beside the 2D Re-100 values of Ghia et al. for orientation
(test_examples/cavity3d/ghia1982_2d_re100_for_orientation.csv; no tabulated 3D Re-100 data could
be found, see test_examples/cavity3d/README.md), with the max abs difference stated; it writes
DIR/cavity3d_centerlines.png and DIR/cavity3d_centerlines.json.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)


def find_program(name="edgeflow", sub="bin"):
    """build/<sub>/<name>, else the first build*/<sub>/<name> of the checkout."""
    cands = [os.path.join(ROOT, "build", sub, name)] + sorted(glob.glob(os.path.join(ROOT, "build*", sub, name)))
    for c in cands:
        if os.path.exists(c):
            return c
    raise SystemExit(f"{name} not found under {ROOT}/build*/{sub}: build edgeflow first (README, 'Building by hand')")


def _line(n=201):
    return np.linspace(0.0, 1.0, n)


def run2d(re_number, results, n=32, level=1, rate=1e-4, cfl=1.0, t_max=200.0, gmsh="gmsh"):
    """Steady 2D cavity at Re on an n*2^level graded mesh; returns the path of the result JSON."""
    import edgeflow  # noqa: PLC0415
    import edgeflow_post as post  # noqa: PLC0415

    case = os.path.join(ROOT, "test_examples", "cavity2d")
    work = os.path.join(results, f"cavity2d_Re{re_number}_work")
    os.makedirs(work, exist_ok=True)
    msh = os.path.join(work, "cavity2d.msh")
    p = subprocess.run([gmsh, "-2", "-setnumber", "n", str(n), os.path.join(case, "cavity2d.geo"), "-format", "msh41",
                        "-o", msh], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"gmsh failed on cavity2d.geo:\n{p.stdout[-1500:]}{p.stderr[-1500:]}")
    with open(os.path.join(case, f"ProjectParameters_Re{re_number}.json")) as f:
        params = json.load(f)
    pd = params["problem_data"]
    pd["end_time"] = t_max
    pd["output_folder"] = os.path.join(work, "output")
    pd["steady_state"] = {"velocity_rate_tolerance": rate, "check_interval": 10, "minimum_time": 0.0}
    s = params["solver_settings"]
    s["model_import_settings"]["input_filename"] = msh
    s["model_import_settings"]["refinement_levels"] = level
    s["time_stepping"]["CFL_number"] = cfl
    params.pop("output_processes", None)
    pj = os.path.join(work, f"ProjectParameters_Re{re_number}.json")
    with open(pj, "w") as f:
        json.dump(params, f, indent=2)
    t0 = time.time()
    a = edgeflow.FluidAnalysis(pj, quiet=True, overwrite=True)
    a.Initialize()
    a.RunSolutionLoop()
    mp = a.model_part
    X, E, vel = mp.coordinates(), mp.elements(), mp.values("VELOCITY")
    s_ = _line()
    u = post.interpolate(X, E, vel[:, 0], np.stack([0.5 + 0 * s_, s_], axis=1))
    v = post.interpolate(X, E, vel[:, 1], np.stack([s_, 0.5 + 0 * s_], axis=1))
    steady = a.time < t_max - 1e-9
    out = {"re": re_number, "mesh": f"{n * 2 ** level}x{n * 2 ** level} graded", "nodes": mp.number_of_nodes,
           "cfl": cfl, "rate_tolerance": rate, "steady": bool(steady), "t": round(a.time, 4), "steps": a.step,
           "wall_seconds": round(time.time() - t0, 1), "threads": os.environ.get("OMP_NUM_THREADS", "unset"),
           "s": s_.tolist(), "u_vertical": u.tolist(), "v_horizontal": v.tolist()}
    a.Finalize()
    del a
    path = os.path.join(results, f"cavity2d_Re{re_number}.json")
    with open(path, "w") as f:
        json.dump(out, f)
    print(f"cavity2d Re {re_number}: {out['mesh']} ({out['nodes']} nodes), steady={steady} at t = {out['t']}, "
          f"{out['steps']} steps, {out['wall_seconds']} s")
    return path


def last_vtu(folder):
    """The .vtu of the largest step in folder (FluidModelPart_<step>.vtu)."""
    files = glob.glob(os.path.join(folder, "FluidModelPart_*.vtu"))
    if not files:
        raise SystemExit(f"no FluidModelPart_*.vtu in {folder}")
    return max(files, key=lambda p: int(os.path.basename(p).rsplit("_", 1)[1].split(".")[0]))


def profiles3d(vtu):
    """u(0.5, 0.5, z) and w(x, 0.5, 0.5) of a 3D cavity result, plus max |v| on both lines."""
    import edgeflow_post as post  # noqa: PLC0415
    X, E, data = post.read_vtu(vtu)
    vel = data["VELOCITY"]
    s_ = _line()
    uz = post.interpolate(X, E, vel, np.stack([0.5 + 0 * s_, 0.5 + 0 * s_, s_], axis=1))
    ux = post.interpolate(X, E, vel, np.stack([s_, 0.5 + 0 * s_, 0.5 + 0 * s_], axis=1))
    return {"nodes": int(len(X)), "s": s_.tolist(), "u_vertical": uz[:, 0].tolist(), "w_horizontal": ux[:, 2].tolist(),
            "max_abs_v": float(max(np.abs(uz[:, 1]).max(), np.abs(ux[:, 1]).max())),
            "u_min": float(uz[:, 0].min()), "w_max": float(ux[:, 2].max()), "w_min": float(ux[:, 2].min())}


def run3d(results, level=1, solver_type="openmp_edge_based"):
    """The documented steady 3D cavity command at `level`; returns the path of the result JSON."""
    case = os.path.join(ROOT, "test_examples", "cavity3d", "ProjectParameters_steady.json")
    out_dir = os.path.join(results, f"cavity3d_steady_level{level}")
    cmd = [find_program(), "run", case, "--solver-type", solver_type, "--refine", str(level), "--output", out_dir, "--overwrite"]
    print("running:", " ".join(cmd), flush=True)
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"the 3D cavity run failed:\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    return collect3d(results, level, wall=round(time.time() - t0, 1))


def collect3d(results, level, wall=None):
    """Profiles of an existing steady 3D run in results/cavity3d_steady_level<L> into its JSON."""
    out_dir = os.path.join(results, f"cavity3d_steady_level{level}")
    with open(os.path.join(out_dir, "run_summary.json")) as f:
        summ = json.load(f)
    vtu = last_vtu(os.path.join(out_dir, "vtk"))
    out = profiles3d(vtu)
    out.update({"level": level, "vtu": vtu, "t": summ["run"]["end_time"], "steps": summ["run"]["steps"],
                "steady": bool(summ.get("steady_state", {}).get("reached", False)),
                "wall_seconds": wall if wall is not None else round(summ["run"].get("wall_seconds_total", 0.0), 1),
                "strategy": summ.get("strategy", {}).get("name"),
                "threads": summ.get("strategy", {}).get("host", {}).get("threads")})
    path = os.path.join(results, f"cavity3d_level{level}.json")
    with open(path, "w") as f:
        json.dump(out, f)
    print(f"cavity3d level {level}: {out['nodes']} nodes, steady={out['steady']} at t = {out['t']:.4g} after "
          f"{out['steps']} steps ({out['wall_seconds']} s); u_min {out['u_min']:.4f}, w_max {out['w_max']:.4f}, "
          f"w_min {out['w_min']:.4f}, max |v| {out['max_abs_v']:.2e}")
    return path


def read_orientation_csv(path=None):
    """The 2D Re-100 table of test_examples/cavity3d: {'u_vertical': (s, u), 'w_horizontal': (s, w)}."""
    path = path or os.path.join(ROOT, "test_examples", "cavity3d", "ghia1982_2d_re100_for_orientation.csv")
    rows = {}
    with open(path) as f:
        lines = [ln for ln in f if not ln.startswith("#")]
    for ln in lines[1:]:
        name, s_, v = ln.strip().split(",")
        rows.setdefault(name, []).append((float(s_), float(v)))
    return {k: (np.array([a for a, _ in v]), np.array([b for _, b in v])) for k, v in rows.items()}


def max_abs_difference(s, profile, s_ref, ref):
    """max_k |profile(s_ref[k]) - ref[k]| with the profile linearly interpolated to the table's points."""
    return float(np.max(np.abs(np.interp(s_ref, s, profile) - ref)))


def job(run_dir, out_png=None):
    """Centrelines of the last result of an `edgeflow run` folder, plotted beside the 2D table."""
    import matplotlib  # noqa: PLC0415
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    with open(os.path.join(run_dir, "run_summary.json")) as f:
        summ = json.load(f)
    vtu = last_vtu(os.path.join(run_dir, "vtk"))
    r = profiles3d(vtu)
    s = np.array(r["s"])
    ref = read_orientation_csv()
    du = max_abs_difference(s, r["u_vertical"], *ref["u_vertical"])
    dw = max_abs_difference(s, r["w_horizontal"], *ref["w_horizontal"])
    steady = summ.get("steady_state", {})
    strategy = summ.get("strategy", {}).get("name", "?")
    t_end = summ["run"]["end_time"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 5.0))
    lab = f"edgeflow {strategy}, {r['nodes']} nodes" + ("" if steady.get("reached") else " (NOT steady)")
    ax1.plot(r["u_vertical"], s, color="tab:blue", lw=1.8, label=lab)
    ax2.plot(s, r["w_horizontal"], color="tab:blue", lw=1.8, label=lab)
    ax1.plot(ref["u_vertical"][1], ref["u_vertical"][0], "s", mfc="none", color="0.4", ms=5,
             label=f"2D square cavity, Ghia et al. (1982) Table I\nfor orientation only; max |diff| {du:.3f}")
    ax2.plot(ref["w_horizontal"][0], ref["w_horizontal"][1], "s", mfc="none", color="0.4", ms=5,
             label=f"2D square cavity, Ghia et al. (1982) Table II\nfor orientation only; max |diff| {dw:.3f}")
    _style(ax1, "u(0.5, 0.5, z)", "z")
    ax1.axvline(0.0, color="0.6", lw=0.6)
    _style(ax2, "x", "w(x, 0.5, 0.5)")
    ax1.set_title(f"u on the vertical centreline x = y = 0.5\n(u_min {r['u_min']:.4f})", fontsize=10)
    ax2.set_title(f"w on the horizontal centreline y = z = 0.5\n(w_max {r['w_max']:.4f}, w_min {r['w_min']:.4f})",
                  fontsize=10)
    ax1.legend(fontsize=7.5, loc="upper left")
    ax2.legend(fontsize=7.5, loc="lower left")
    fig.suptitle(f"3D lid-driven cavity, unit cube, Re = 100, steady at t = {t_end:.2f}: no tabulated 3D reference "
                 "found;\nthe 2D cavity (stronger vortex: no end walls) is shown for orientation, not as a check",
                 fontsize=10)
    fig.tight_layout()
    out_png = out_png or os.path.join(run_dir, "cavity3d_centerlines.png")
    fig.savefig(out_png, dpi=110)
    plt.close(fig)
    out = dict(r, vtu=vtu, t=t_end, steps=summ["run"]["steps"], steady=bool(steady.get("reached", False)),
               strategy=strategy, max_abs_diff_to_2d_ghia={"u_vertical": du, "w_horizontal": dw})
    with open(os.path.splitext(out_png)[0] + ".json", "w") as f:
        json.dump(out, f)
    print(f"cavity3d: {r['nodes']} nodes, steady={out['steady']} at t = {t_end:.4g} after {out['steps']} steps; "
          f"u_min {r['u_min']:.4f}, w_max {r['w_max']:.4f}, w_min {r['w_min']:.4f}, max |v| {r['max_abs_v']:.1e}")
    print(f"cavity3d: max |difference| to the 2D cavity of Ghia et al. (orientation, not a 3D reference): "
          f"u {du:.4f}, w {dw:.4f}")
    return out_png


def _style(ax, xlabel, ylabel):
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.axhline(0.0, color="0.6", lw=0.6)


def plot2d(results, shared, out_png):
    """u(0.5, y) and v(x, 0.5) at every Re found in results, against Ghia et al.'s tables."""
    import matplotlib  # noqa: PLC0415
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415
    import edgeflow_post as post  # noqa: PLC0415

    runs = []
    for re_number in (100, 400, 1000):
        p = os.path.join(results, f"cavity2d_Re{re_number}.json")
        if os.path.exists(p):
            with open(p) as f:
                runs.append(json.load(f))
    if not runs:
        print(f"plot_cavity: no cavity2d_Re*.json in {results}: cavity2d_centerlines.png not made")
        return None
    colours = {100: "tab:blue", 400: "tab:orange", 1000: "tab:green"}
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.8))
    for r in runs:
        re_number, c = r["re"], colours[r["re"]]
        (yg, ug), (xg, vg, flags) = post.read_ghia(shared, re_number)
        s = np.array(r["s"])
        lab = f"Re {re_number}: edgeflow {r['mesh']}" + ("" if r["steady"] else " (NOT steady)")
        ax1.plot(r["u_vertical"], s, color=c, lw=1.6, label=lab)
        ax1.plot(ug, yg, "o", mfc="none", color=c, ms=5, label=f"Re {re_number}: Ghia et al. (1982)")
        ax2.plot(s, r["v_horizontal"], color=c, lw=1.6, label=lab)
        # A flag names the Re it concerns ("Re400 value suspected misprint").
        ok = np.array([not f.lower().startswith(f"re{re_number} ") for f in flags])
        ax2.plot(xg[ok], vg[ok], "o", mfc="none", color=c, ms=5, label=f"Re {re_number}: Ghia et al. (1982)")
        for k in np.flatnonzero(~ok):
            ax2.plot(xg[k], vg[k], "x", color=c, ms=6, label=f"Re {re_number}: Ghia, flagged: {flags[k]}")
    _style(ax1, "u(0.5, y)", "y")
    ax1.axvline(0.0, color="0.6", lw=0.6)
    _style(ax2, "x", "v(x, 0.5)")
    ax1.set_title("u on the vertical centreline x = 0.5")
    ax2.set_title("v on the horizontal centreline y = 0.5")
    ax2.legend(fontsize=7.5, loc="lower left", ncol=1)
    fig.suptitle("2D lid-driven cavity: steady states against Ghia, Ghia & Shin (1982), Tables I and II",
                 fontsize=11)
    fig.tight_layout()
    fig.savefig(out_png, dpi=110)
    plt.close(fig)
    print(f"plot_cavity: wrote {out_png}")
    return out_png


def plot3d(results, out_png, shared=None):
    """The 3D cavity's centrelines at every level found in results, with the refined-mesh profile of
    the committed validation run and Ghia's 2D Re-100 values for orientation."""
    import matplotlib  # noqa: PLC0415
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    runs = []
    for p in sorted(glob.glob(os.path.join(results, "cavity3d_level*.json"))):
        with open(p) as f:
            runs.append(json.load(f))
    if not runs:
        print(f"plot_cavity: no cavity3d_level*.json in {results}: cavity3d_centerlines.png not made")
        return None
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.8))
    for r, c in zip(runs, ("tab:blue", "tab:red", "tab:purple")):
        s = np.array(r["s"])
        lab = f"edgeflow, level {r['level']} ({r['nodes']} nodes)" + ("" if r["steady"] else " (NOT steady)")
        ax1.plot(r["u_vertical"], s, color=c, lw=1.6, label=lab)
        ax2.plot(s, r["w_horizontal"], color=c, lw=1.6, label=lab)
    # The 2D cavity at the same Re: not a reference for the cube (the end walls slow the vortex),
    # shown for orientation only.
    shared = shared or os.path.join(os.path.dirname(ROOT), "shared")
    try:
        import edgeflow_post as post  # noqa: PLC0415
        (yg, ug), (xg, vg, _) = post.read_ghia(shared, 100)
        ax1.plot(ug, yg, "s", mfc="none", color="0.45", ms=4, label="2D cavity, Ghia et al. (1982), for orientation")
        ax2.plot(xg, vg, "s", mfc="none", color="0.45", ms=4, label="2D cavity, Ghia et al. (1982), for orientation")
    except OSError:
        pass
    # Plausibility windows of tests/validation/cavity3d.py for the extrema.
    ax1.axvspan(-0.35, -0.15, color="tab:green", alpha=0.08, label="validation window for u_min")
    ax2.axhspan(0.10, 0.30, color="tab:green", alpha=0.08, label="validation windows for w_max, w_min")
    ax2.axhspan(-0.35, -0.15, color="tab:green", alpha=0.08)
    _style(ax1, "u(0.5, 0.5, z)", "z")
    ax1.axvline(0.0, color="0.6", lw=0.6)
    _style(ax2, "x", "w(x, 0.5, 0.5)")
    ax1.set_title("u on the vertical centreline x = y = 0.5")
    ax2.set_title("w on the horizontal centreline y = z = 0.5")
    ax1.legend(fontsize=7.5, loc="upper left")
    fig.suptitle("3D lid-driven cavity (unit cube, Re = 100): steady state, openmp_edge_based", fontsize=11)
    fig.tight_layout()
    fig.savefig(out_png, dpi=110)
    plt.close(fig)
    print(f"plot_cavity: wrote {out_png}")
    return out_png


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r2 = sub.add_parser("run2d")
    r2.add_argument("--re", type=int, required=True, choices=[100, 400, 1000])
    r2.add_argument("--results", required=True)
    r2.add_argument("--n", type=int, default=32)
    r2.add_argument("--level", type=int, default=1)
    r2.add_argument("--rate", type=float, default=1e-4)
    r2.add_argument("--cfl", type=float, default=1.0)
    r2.add_argument("--gmsh", default="gmsh")
    r3 = sub.add_parser("run3d")
    r3.add_argument("--results", required=True)
    r3.add_argument("--level", type=int, default=1)
    jb = sub.add_parser("job")
    jb.add_argument("--run", required=True, help="an `edgeflow run --output` folder (run_summary.json, vtk/)")
    jb.add_argument("--out", default=None, help="PNG (default RUN/cavity3d_centerlines.png)")
    pl = sub.add_parser("plot")
    pl.add_argument("--results", required=True)
    pl.add_argument("--out", default=os.path.join(ROOT, "docs", "figures"))
    pl.add_argument("--shared", default=os.path.join(os.path.dirname(ROOT), "shared"))
    a = ap.parse_args()
    if a.cmd == "job":
        job(a.run, a.out)
        return 0
    os.makedirs(a.results, exist_ok=True)
    if a.cmd == "run2d":
        run2d(a.re, a.results, a.n, a.level, a.rate, a.cfl, gmsh=a.gmsh)
    elif a.cmd == "run3d":
        run3d(a.results, a.level)
    else:
        os.makedirs(a.out, exist_ok=True)
        plot2d(a.results, a.shared, os.path.join(a.out, "cavity2d_centerlines.png"))
        plot3d(a.results, os.path.join(a.out, "cavity3d_centerlines.png"), a.shared)
    return 0


if __name__ == "__main__":
    sys.exit(main())
