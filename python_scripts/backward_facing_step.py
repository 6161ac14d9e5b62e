#!/usr/bin/python3
"""2D backward-facing step: reattachment length against Erturk (2008), Armaly et al. (1983), Gartling (1990).

    /usr/bin/python3 python_scripts/backward_facing_step.py run [--cases erturk,convergence,convergence100,outlet,inlet,armaly,gartling]
                     [--work DIR] [--results benchmarks/results/backward_facing_step.json]
    /usr/bin/python3 python_scripts/backward_facing_step.py plot --out docs/figures
                     [--results benchmarks/results/backward_facing_step.json]

Units: the inlet channel height h_in = 1 and the mean inlet velocity U = 1, so every source's Reynolds
number, Re = U * 2 h_in / nu (Erturk: 2h with h = step = inlet height; Armaly: V D with D = 2 h_in;
Gartling: U H with H = 2 h_in the outlet channel height) gives nu = 2 / Re.  The step height S is 1
(expansion ratio 2: Erturk, Gartling) or 4.9 / 5.2 (Armaly's 4.9 mm step behind a 5.2 mm inlet, ratio
1.942).  Lengths are reported in the source's unit: x_r / h (Erturk, h = S = 1), x1 / S (Armaly) and
x / H (Gartling, H = 2).

Inflow: the parabola is imposed at the entrance of an inlet channel LIN = 5 h_in long for the Erturk
and Armaly series (with it x_r converges to Erturk's values; imposed at the step it converges about
10 % above them at Re 100: series 'inlet'), and at the step for Gartling's Re 800 (his set-up).

Each case meshes test_examples/backward_facing_step/backward_facing_step.geo with gmsh, writes its
ProjectParameters (ProjectParameters.json with nu, the inlet profile for S, the mesh and the steady-state
tolerance edited) and runs it through the binding (edgeflow.FluidAnalysis) until the core's steady-state
check stops it (problem_data.steady_state: max |du/dt| over check_interval steps below the tolerance).
A case on the same mesh as the previous one starts from that one's steady state (continuation in Re),
which shortens the transient; a finer mesh starts from the coarser solution interpolated (P1).

Separation and reattachment are where the wall shear changes sign.  The structured mesh keeps each
node row parallel to the wall at one height d1, d2, ...; with u = 0 on the wall, du/dy at the wall is
estimated along the wall from the first two rows by the one-sided second-order difference
(u1 d2^2 - u2 d1^2) / (d1 d2 (d2 - d1)), and its sign change is located by linear interpolation in x.
The first-order estimate (the sign of u on the first row alone) is reported as *_row1: it is biased
by O(d1) because the u = 0 line leaves the wall at an angle at reattachment.
Lower wall: x_r = the last crossing from u < 0 to u > 0 (the small corner eddy at the foot of the step
gives an earlier + to - crossing, which is not a reattachment).  Upper wall: separation = the first
crossing from + to -, reattachment = the next one from - to +.
"""
import argparse
import csv
import hashlib
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CASE_DIR = os.path.join(ROOT, "test_examples", "backward_facing_step")
GEO = os.path.join(CASE_DIR, "backward_facing_step.geo")
BASE_JSON = os.path.join(CASE_DIR, "ProjectParameters.json")
S_ARMALY = 4.9 / 5.2  # step / inlet height (Armaly et al. 1983: 4.9 mm and 5.2 mm, outlet 10.1 mm)
# Inlet channel upstream of the step (in h_in) for the Erturk and Armaly series: 3, 5 and 10 give
# x_r within 0.1 % of each other at Re 100-400 (benchmarks/results/backward_facing_step.json).
LIN = 5.0

# Meshes (gmsh -setnumber values): 'base' is the production mesh of the sweep; 'ci' (the CTest
# mesh) and 'fine' (cells about 1/sqrt(2) of the base ones) bracket it in the mesh-convergence
# check at Re 400.
MESHES = {
    "ci": {"dx": 0.2, "ny": 6, "corner": 0.5, "bump": 0.5, "nx2": 10},
    "base": {"dx": 0.125, "ny": 8, "corner": 0.5, "bump": 0.5, "nx2": 24},
    "fine": {"dx": 0.0884, "ny": 12, "corner": 0.5, "bump": 0.5, "nx2": 34},
}


def shared_dir():
    for c in (os.environ.get("EF_SHARED_DIR"), os.path.join(ROOT, "shared"), os.path.join(ROOT, "..", "shared"),
              "/work/shared"):
        if c and os.path.isdir(os.path.join(c, "reference")):
            return os.path.abspath(c)
    raise FileNotFoundError("shared/reference not found: set EF_SHARED_DIR")


def read_reference(shared):
    """Erturk (Re -> x_r/h), Armaly (Re -> x1/S, 2D rows only and all rows), Gartling (quantity -> x/H)."""
    def rows(name):
        with open(os.path.join(shared, "reference", name)) as f:
            return list(csv.DictReader(line for line in f if not line.startswith("#")))
    erturk = {int(float(r["Re"])): float(r["xr_over_h"]) for r in rows("bfs_erturk2008_reattachment.csv")
              if r["source"] == "Erturk2008"}
    armaly_all = [(float(r["Re"]), float(r["x1_over_S"]), r["regime_2D"].startswith("yes"))
                  for r in rows("bfs_armaly1983_reattachment.csv")]
    gartling = {r["quantity"]: float(r["x_over_H"]) for r in rows("bfs_gartling1990_Re800.csv")}
    return {"erturk": erturk, "armaly": armaly_all, "gartling": gartling}


# Rounded Gartling (1990) values corroborated publicly (x / H); reported, never gated.
GARTLING_ROUNDED = {"lower_reattachment": 6.1, "upper_separation": 4.8, "upper_reattachment": 10.5}


def mesh(gmsh, out, numbers):
    """Mesh the .geo with gmsh -setnumber for each entry of `numbers` into `out` (msh 4.1 ASCII)."""
    cmd = [gmsh, "-2", GEO, "-format", "msh41", "-o", out]
    for k, v in numbers.items():
        cmd[1:1] = ["-setnumber", k, repr(float(v))]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"gmsh failed:\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    return out


def write_parameters(out_json, mesh_file, re, S, L, rate, t_max, t_min, refinement=0, output=True, cfl=None):
    """ProjectParameters.json edited for one case: nu = 2/Re, inlet u = 6 (y - S)(S + 1 - y) (mean 1)."""
    with open(BASE_JSON) as f:
        p = json.load(f)
    name = os.path.splitext(os.path.basename(out_json))[0]
    pd = p["problem_data"]
    pd["problem_name"] = name
    pd["output_folder"] = name + "_output"
    pd["end_time"] = t_max
    pd["steady_state"] = {"velocity_rate_tolerance": rate, "check_interval": 50, "minimum_time": t_min}
    ss = p["solver_settings"]
    ss["viscosity"] = 2.0 / re
    if cfl:
        ss["time_stepping"]["CFL_number"] = cfl
    ss["model_import_settings"]["input_filename"] = os.path.abspath(mesh_file)
    ss["model_import_settings"]["refinement_levels"] = refinement
    for proc in p["processes"]["boundary_conditions_process_list"]:
        if proc["Parameters"].get("model_part_name") == "FluidModelPart.inlet":
            proc["Parameters"]["value"][0] = f"6.0 * (y - {S!r}) * ({S + 1.0!r} - y)"
    if not output:
        p["output_processes"] = {}
    with open(out_json, "w") as f:
        json.dump(p, f, indent=2)
    return out_json


def crossings(x, u):
    """Zero crossings of u(x) (sorted x) by linear interpolation: (x_c, +1 for - to +, -1 for + to -)."""
    out = []
    for i in range(len(x) - 1):
        a, b = u[i], u[i + 1]
        if (a < 0.0) != (b < 0.0):
            xc = x[i] + (x[i + 1] - x[i]) * a / (a - b) if a != b else x[i]
            out.append((float(xc), 1 if b >= 0.0 else -1))
    return out


def wall_row(X, y_wall, inward, k=1):
    """Indices of the k-th node row off the wall y = y_wall (inward = +1 above, -1 below), sorted by x,
    and its distance from the wall (the structured mesh keeps each row at one height)."""
    d = (X[:, 1] - y_wall) * inward
    levels = np.unique(np.round(d[d > 1e-9], 9))
    d_row = float(levels[k - 1])
    idx = np.nonzero(np.abs(d - d_row) < 1e-7)[0]
    return idx[np.argsort(X[idx, 0])], d_row


def wall_shear_proxy(X, vel, y_wall, inward):
    """x along the wall and two estimates of the sign of du/dn there: u on the first row (u_w = 0, so
    du/dn ~ u1/d1, first order) and the one-sided second-order difference through rows 1 and 2,
    du/dn(0) ~ (u1 d2^2 - u2 d1^2) / (d1 d2 (d2 - d1))."""
    r1, d1 = wall_row(X, y_wall, inward, 1)
    r2, d2 = wall_row(X, y_wall, inward, 2)
    r1, r2 = r1[X[r1, 0] >= 0.0], r2[X[r2, 0] >= 0.0]  # behind the step (an inlet channel lies at x < 0)
    x = X[r1, 0]
    u1 = vel[r1, 0]
    u2 = np.interp(x, X[r2, 0], vel[r2, 0])
    g2 = (u1 * d2 * d2 - u2 * d1 * d1) / (d1 * d2 * (d2 - d1))
    return x, u1, g2, d1, d2


def smooth121(f):
    """[1, 2, 1]/4 filter along the row (ends kept): removes the node-to-node zigzag that the
    alternating diagonals leave in the second row, which otherwise makes spurious sign changes
    where the shear is near zero."""
    g = f.copy()
    g[1:-1] = 0.25 * f[:-2] + 0.5 * f[1:-1] + 0.25 * f[2:]
    return g


def negative_runs(x, f):
    """Intervals (x_start, x_end) where f < 0, ends by linear interpolation (x_end None if open)."""
    runs, start = [], None
    c = crossings(x, f)
    if f[0] < 0:
        start = float(x[0])
    for xc, sgn in c:
        if sgn < 0:
            start = xc
        elif start is not None:
            runs.append((start, xc))
            start = None
    if start is not None:
        runs.append((start, None))
    return runs


def separation_points(X, vel, S):
    """Lower-wall reattachment and upper-wall separation / reattachment (None when absent), in h_in.

    Lower wall: the end of the last negative-shear run (the main bubble; the corner eddy lies before
    it).  Upper wall: the longest negative-shear run.  Main figures from the second-order wall shear
    (smoothed, see smooth121); the first-row-u estimates are kept as *_row1."""
    H = S + 1.0
    res = {}
    for wall, y_wall, inward in (("lower", 0.0, +1), ("upper", H, -1)):
        x, u1, g2, d1, d2 = wall_shear_proxy(X, vel, y_wall, inward)
        res[f"first_rows_{wall}"] = [d1, d2]
        for suffix, f in (("", smooth121(g2)), ("_row1", u1)):
            runs = [r for r in negative_runs(x, f) if r[1] is None or r[1] > 1e-9]
            if wall == "lower":
                ends = [b for a, b in runs if b is not None]
                res["lower_reattachment" + suffix] = ends[-1] if ends else None
            else:
                runs = [r for r in runs if r[0] > 1e-9 and r[1] is not None]
                best = max(runs, key=lambda r: r[1] - r[0]) if runs else (None, None)
                res["upper_separation" + suffix], res["upper_reattachment" + suffix] = best
                res["upper_negative_runs" + suffix] = [[round(a, 4), round(b, 4)] for a, b in runs]
    return res


def run_case(case, work, gmsh, previous=None, quiet=True):
    """Mesh, write and run one case to steady state; returns (result dict, state for a nested start)."""
    import edgeflow  # noqa: PLC0415  (needs EDGEFLOW_LIB_DIR or a build next to the sources)
    import edgeflow_post as post  # noqa: PLC0415

    S, L = case["S"], case["L"]
    numbers = dict(MESHES[case["mesh"]], S=S, L=L, Lf=case["Lf"], Lin=case.get("Lin", LIN))
    with open(GEO, "rb") as f:  # a cached mesh of an older .geo is not reused
        geo_tag = hashlib.sha1(f.read()).hexdigest()[:8]
    msh = os.path.join(work, f"bfs_{case['mesh']}_S{S:.4f}_L{L:g}_Lf{case['Lf']:g}_Lin{numbers['Lin']:g}_{geo_tag}.msh")
    if not os.path.exists(msh):
        mesh(gmsh, msh, numbers)
    pj = write_parameters(os.path.join(work, case["name"] + ".json"), msh, case["Re"], S, L, case["rate"],
                          case["t_max"], case["t_min"], case.get("refinement", 0), output=case.get("output", False),
                          cfl=case.get("cfl"))
    t0 = time.time()
    a = edgeflow.FluidAnalysis(pj, quiet=quiet, overwrite=True)
    a.Initialize()
    mp = a.model_part
    X, E = mp.coordinates(), mp.elements()
    started_from = "rest"
    if previous is not None:
        Xp, Ep, up, pp, tag = previous
        free = mp.fixity("VELOCITY")[:, 0] == 0
        v = mp.values("VELOCITY")
        if Xp.shape == X[:, :2].shape and np.allclose(Xp, X[:, :2]):
            v[free, :2] = up[free]
            mp.values("PRESSURE")[:] = pp
        else:
            # Beyond the previous outlet (a longer domain) the flow is fully developed: clamp x.
            pts = X[:, :2].copy()
            pts[:, 0] = np.minimum(pts[:, 0], Xp[:, 0].max())
            v[free, :2] = post.interpolate(Xp, Ep, up, pts[free])
            mp.values("PRESSURE")[:] = post.interpolate(Xp, Ep, pp, pts)
        mp.mark_modified("VELOCITY")
        mp.mark_modified("PRESSURE")
        started_from = tag
    a.RunSolutionLoop()
    vel = mp.values("VELOCITY")
    pres = mp.values("PRESSURE")
    sep = separation_points(X, vel, S)
    steps, t_end = int(a.step), float(a.time)
    a.Finalize()
    wall = time.time() - t0
    summary_path = os.path.join(work, case["name"] + "_output", "run_summary.json")
    steady = None
    if os.path.exists(summary_path):
        with open(summary_path) as f:
            steady = json.load(f).get("steady_state")
    res = {
        "name": case["name"], "series": case["series"], "Re": case["Re"], "S": S, "L": L,
        "mesh": dict(numbers, name=case["mesh"], nodes=int(mp.number_of_nodes), elements=int(len(E)),
                     refinement_levels=case.get("refinement", 0)),
        "started_from": started_from, "steps": steps, "time": round(t_end, 4), "wall_seconds": round(wall, 1),
        "steady_state": steady, **sep,
    }
    state = (X[:, :2].copy(), E.copy(), vel[:, :2].copy(), pres.copy(), case["name"])
    np.savez_compressed(os.path.join(work, case["name"] + "_steady.npz"), X=state[0], E=state[1], u=state[2],
                        p=state[3], S=S)
    del a
    return res, state


def cases_for(which):
    """The case list of `run` (see the module docstring); each Re series shares one mesh and continues in Re.

    Erturk and Armaly series: parabolic profile at the entrance of an inlet channel LIN long (the flow
    reaches the step with the upstream response to the expansion); Gartling: profile at the step
    (his set-up); 'inlet': the Erturk set-up without the inlet channel, on three meshes (not gated)."""
    rate, tmin, tmax = 1e-4, 20.0, 600.0
    out = []

    def case(name, series, re, mesh, S=1.0, L=40.0, Lf=12.0, Lin=LIN, **extra):
        return dict({"name": name, "series": series, "Re": float(re), "S": S, "L": L, "Lf": Lf, "Lin": Lin,
                     "mesh": mesh, "rate": rate, "t_min": tmin, "t_max": tmax}, **extra)

    if "erturk" in which:
        for re in (100, 200, 300, 400):
            out.append(case(f"bfs_erturk_Re{re}", "erturk", re, "base"))
    if "convergence" in which:
        # Coarse from rest, fine from the coarse steady state (P1-interpolated); the base mesh is
        # the erturk series' Re 400 case.
        out.append(case("bfs_erturk_Re400_coarse", "convergence", 400, "ci"))
        out.append(case("bfs_erturk_Re400_fine", "convergence", 400, "fine", previous="bfs_erturk_Re400_coarse"))
    if "convergence100" in which:
        for m in ("ci", "fine"):
            out.append(case(f"bfs_erturk_Re100_{m}", "convergence", 100, m))
    if "outlet" in which:
        for L in (30.0, 50.0):
            out.append(case(f"bfs_erturk_Re400_L{L:g}", "outlet", 400, "base", L=L, previous="bfs_erturk_Re400"))
    if "inlet" in which:
        for m in ("ci", "base", "fine"):
            out.append(case(f"bfs_atstep_Re100_{m}", "inlet", 100, m, Lin=0.0))
        for lin in (3.0, 10.0):
            for re in (100, 400):
                out.append(case(f"bfs_Lin{lin:g}_Re{re}", "inlet", re, "base", Lin=lin))
    if "armaly" in which:
        for re in (100.3369, 151.5253, 300.6079, 389.6823):
            out.append(case(f"bfs_armaly_Re{re:.0f}", "armaly", re, "base", S=S_ARMALY))
    if "gartling" in which:
        out.append(case("bfs_gartling_Re800", "gartling", 800, "base", L=60.0, Lf=24.0, Lin=0.0, t_max=900.0,
                        previous="bfs_erturk_Re400"))
    return out


def compare(res, ref):
    """Adds the reference value(s) and relative errors in the source's units to one result."""
    S, xr = res["S"], res["lower_reattachment"]
    if res["series"] in ("erturk", "convergence", "outlet", "inlet"):
        r = ref["erturk"].get(int(round(res["Re"])))
        res["xr_over_h"] = xr / S if xr is not None else None
        res["reference"] = {"source": "Erturk 2008", "xr_over_h": r}
        if r is not None and xr is not None:
            res["relative_error"] = xr / S / r - 1.0
    elif res["series"] == "armaly":
        r = min(ref["armaly"], key=lambda t: abs(t[0] - res["Re"]))
        res["x1_over_S"] = xr / S if xr is not None else None
        res["reference"] = {"source": "Armaly et al. 1983 (digitised)", "Re": r[0], "x1_over_S": r[1]}
        if xr is not None:
            res["relative_error"] = xr / S / r[1] - 1.0
    elif res["series"] == "gartling":
        H = S + 1.0
        got = {k: (res[k] / H if res[k] is not None else None) for k in GARTLING_ROUNDED}
        res["x_over_H"] = got
        res["reference"] = {"source": "Gartling 1990 (rounded, UNVERIFIED)", "x_over_H": GARTLING_ROUNDED,
                            "Erturk2008_lower_x_over_H": ref["gartling"].get("Erturk2008_lower_reattachment")}
        res["relative_error"] = {k: (got[k] / v - 1.0 if got[k] is not None else None)
                                 for k, v in GARTLING_ROUNDED.items()}
    return res


def cmd_reeval(args):
    """Recompute the separation points of every case in --results from the *_steady.npz files in --work
    (after a change of the post-processing; the runs are not repeated)."""
    ref = read_reference(shared_dir())
    with open(args.results) as f:
        cases = json.load(f)["cases"]
    for c in cases:
        for w in args.work:
            npz = os.path.join(w, c["name"] + "_steady.npz")
            if os.path.exists(npz):
                d = np.load(npz)
                c.update(separation_points(d["X"], d["u"], float(d["S"])))
                compare(c, ref)
                break
        else:
            print(f"{c['name']}: no {c['name']}_steady.npz in {args.work}: left as it was")
    write_results(args.results, cases)
    return 0


def cmd_run(args):
    os.environ.setdefault("EDGEFLOW_LIB_DIR", os.path.join(ROOT, "build", "lib"))
    sys.path.insert(0, HERE)
    ref = read_reference(shared_dir())
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    which = args.cases.split(",")
    results, states = [], {}
    old = {}
    if args.append and os.path.exists(args.results):
        with open(args.results) as f:
            old = {r["name"]: r for r in json.load(f).get("cases", [])}
    previous = None
    for case in cases_for(which):
        prev = states.get(case.get("previous")) if case.get("previous") else previous
        if case["series"] == "convergence" and not case.get("previous") and "Re400" in case["name"]:
            prev = None
        if prev is not None and case.get("previous") is None and prev[4].split("_Re")[0] != case["name"].split("_Re")[0]:
            prev = None  # another series (other geometry): start from rest
        res, state = run_case(case, work, args.gmsh, prev, quiet=not args.verbose)
        compare(res, ref)
        states[case["name"]] = state
        if case["series"] in ("erturk", "armaly", "gartling"):
            previous = state
        results.append(res)
        old.pop(case["name"], None)
        err = res.get("relative_error")
        etxt = (f"{100 * err:+.2f}%" if isinstance(err, float) else
                json.dumps({k: (round(100 * v, 2) if v is not None else None) for k, v in err.items()}) + " %"
                if isinstance(err, dict) else "n/a")
        print(f"{case['name']}: Re {case['Re']:g} nodes {res['mesh']['nodes']} steps {res['steps']} t {res['time']:g} "
              f"wall {res['wall_seconds']:.0f} s  x_r = {res['lower_reattachment']}  upper sep/reatt = "
              f"{res['upper_separation']}/{res['upper_reattachment']}  error {etxt}", flush=True)
        write_results(args.results, list(old.values()) + results)
    return 0


def write_results(path, results):
    order = {"erturk": 0, "convergence": 1, "outlet": 2, "inlet": 3, "armaly": 4, "gartling": 5}
    results = sorted(results, key=lambda r: (order.get(r["series"], 9), r["Re"], r["name"]))
    out = {
        "case": "test_examples/backward_facing_step",
        "definitions": "lengths in inlet heights h_in, U_mean = 1, nu = 2/Re (Erturk Re = U 2h/nu, h = step = "
                       "inlet height; Armaly Re = V D/nu, D = 2 h_in; Gartling Re = U H/nu, H = 2 h_in); x_r from "
                       "the sign change of u on the first node row off the lower wall (linear interpolation)",
        "solver": "openmp_edge_based, CFL 1, CG tolerance 1e-8, steady_state check_interval 50",
        "machine": f"{platform.node()} {platform.machine()}, {os.cpu_count()} cpus, "
                   f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}",
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "cases": results,
    }
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


def cmd_plot(args):
    import matplotlib  # noqa: PLC0415
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    ref = read_reference(shared_dir())
    with open(args.results) as f:
        cases = json.load(f)["cases"]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10.0, 4.4), dpi=100, gridspec_kw={"width_ratios": [1.6, 1]})
    er = sorted(ref["erturk"].items())
    ax.plot([r for r, _ in er], [x for _, x in er], "k-", lw=1, label="Erturk 2008 (ER 2), $x_r/h$")
    arm = [t for t in ref["armaly"] if t[0] <= 900]
    ax.plot([t[0] for t in arm if t[2]], [t[1] for t in arm if t[2]], "bs", mfc="none",
            label="Armaly et al. 1983 (ER 1.94, 2D range), $x_1/S$")
    ax.plot([t[0] for t in arm if not t[2]], [t[1] for t in arm if not t[2]], "s", color="0.6", mfc="none",
            label="Armaly et al. 1983, 3D flow (not compared)")
    e = sorted((c["Re"], c["xr_over_h"]) for c in cases if c["series"] == "erturk" and c.get("xr_over_h"))
    if e:
        ax.plot([r for r, _ in e], [x for _, x in e], "ko", label="edgeflow, ER 2, $x_r/h$")
    a = sorted((c["Re"], c["x1_over_S"]) for c in cases if c["series"] == "armaly" and c.get("x1_over_S"))
    if a:
        ax.plot([r for r, _ in a], [x for _, x in a], "b^", label="edgeflow, ER 1.942, $x_1/S$")
    # The other meshes of the convergence check are in the right-hand panel.
    g = [c for c in cases if c["series"] == "gartling" and c.get("lower_reattachment")]
    for c in g:
        ax.plot([c["Re"]], [c["lower_reattachment"] / c["S"]], "gD", label="edgeflow, Gartling set-up, $x_r/h$")
    ax.set_xlabel("Re = U$_{mean}$ 2 h$_{in}$ / $\\nu$")
    ax.set_ylabel("lower-wall reattachment length / step height")
    ax.set_title("Backward-facing step: reattachment length")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7.5, loc="upper left")
    ax.set_xlim(0, 1050)
    # Mesh convergence: deviation from Erturk against the node count, per Re, at L = 40.
    for re, m in ((100.0, "o-"), (400.0, "s-")):
        pts = sorted((c["mesh"]["nodes"], 100.0 * c["relative_error"]) for c in cases
                     if c["series"] in ("erturk", "convergence") and c["Re"] == re and c["L"] == 40.0
                     and c.get("relative_error") is not None)
        if pts:
            ax2.semilogx([n for n, _ in pts], [e for _, e in pts], m, label=f"Re {re:g}")
    ax2.axhspan(-5, 5, color="0.9", label="Erturk $\\pm$5%")
    ax2.axhline(0.0, color="k", lw=0.8)
    ax2.set_xlabel("nodes")
    ax2.set_ylabel("$x_r/h$ vs Erturk 2008 (%)")
    ax2.set_title("Mesh convergence (ER 2)")
    ax2.grid(alpha=0.3, which="both")
    ax2.legend(fontsize=8)
    os.makedirs(args.out, exist_ok=True)
    out = os.path.join(args.out, "bfs_reattachment.png")
    fig.tight_layout()
    fig.savefig(out)
    print(out)
    return 0


def fmt(v, nd=3):
    return "–" if v is None else f"{v:.{nd}f}"


def cmd_table(args):
    """Markdown table of the results JSON (the README's measured figures)."""
    with open(args.results) as f:
        cases = json.load(f)["cases"]
    print("| case | Re | mesh (nodes) | L | steps / t | wall s | ours (2nd-order shear) | first-row u | reference | error |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for c in cases:
        S, H = c["S"], c["S"] + 1.0
        mesh_txt = f"{c['mesh']['name']} ({c['mesh']['nodes']})"
        head = f"| {c['name'].replace('bfs_', '')} | {c['Re']:g} | {mesh_txt} | {c['L']:g} | {c['steps']} / {c['time']:g} | {c['wall_seconds']:.0f} "
        if c["series"] == "gartling":
            ours = " / ".join(fmt(c[k] / H if c[k] is not None else None, 2) for k in GARTLING_ROUNDED)
            row1 = " / ".join(fmt(c[k + "_row1"] / H if c[k + "_row1"] is not None else None, 2) for k in GARTLING_ROUNDED)
            err = " / ".join("–" if v is None else f"{100 * v:+.1f}%" for v in c["relative_error"].values())
            print(head + f"| x/H: {ours} | {row1} | 6.1 / 4.8 / 10.5 (rounded, unverified) | {err} |")
            continue
        key, unit = ("x1_over_S", "x1/S") if c["series"] == "armaly" else ("xr_over_h", "x_r/h")
        ref = c["reference"].get(key)
        r1 = c.get("lower_reattachment_row1")
        up = ""
        if c.get("upper_separation") is not None:
            up = f"; upper-wall bubble x/h_in {c['upper_separation']:.2f}–{fmt(c.get('upper_reattachment'), 2)}"
        err = c.get("relative_error")
        print(head + f"| {unit} {fmt(c.get(key))}{up} | {fmt(r1 / S if r1 is not None else None)} | "
              f"{c['reference']['source']} {fmt(ref)} | {'–' if err is None else f'{100 * err:+.1f}%'} |")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    default_results = os.path.join(ROOT, "benchmarks", "results", "backward_facing_step.json")
    r = sub.add_parser("run", help="mesh and run the cases, write the results JSON")
    r.add_argument("--cases", default="erturk,convergence,convergence100,outlet,inlet,armaly,gartling",
                   help="comma-separated: erturk, convergence, convergence100, outlet, inlet, armaly, gartling")
    r.add_argument("--work", default="bfs_work", help="scratch folder (meshes, case files, outputs)")
    r.add_argument("--results", default=default_results)
    r.add_argument("--append", action="store_true", help="keep the other cases already in --results")
    r.add_argument("--gmsh", default="gmsh")
    r.add_argument("--verbose", action="store_true", help="print the solver's progress lines")
    p = sub.add_parser("plot", help="bfs_reattachment.png from the results JSON")
    p.add_argument("--out", default=os.path.join(ROOT, "docs", "figures"))
    p.add_argument("--results", default=default_results)
    e = sub.add_parser("reeval", help="recompute the separation points from the saved steady states")
    e.add_argument("--results", default=default_results)
    e.add_argument("--work", nargs="+", required=True, help="folders holding the *_steady.npz files")
    t = sub.add_parser("table", help="markdown table of the results JSON")
    t.add_argument("--results", default=default_results)
    args = ap.parse_args(argv)
    if args.cmd == "table":
        return cmd_table(args)
    if args.cmd == "reeval":
        args.results = os.path.abspath(args.results)
        return cmd_reeval(args)
    if args.cmd == "run":
        args.results = os.path.abspath(args.results)
        return cmd_run(args)
    args.results = os.path.abspath(args.results)
    args.out = os.path.abspath(args.out)
    return cmd_plot(args)


if __name__ == "__main__":
    sys.exit(main())
