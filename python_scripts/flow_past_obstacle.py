#!/usr/bin/python3
"""Flow past a circular cylinder in a channel: Schaefer & Turek (1996), DFG benchmarks 2D-1 and 2D-2.

Case files: test_examples/flow_past_obstacle/ (flow_past_obstacle.geo, the committed coarse mesh
flow_past_obstacle.msh, ProjectParameters.json = 2D-2 at Re 100, ProjectParameters_Re20.json =
the steady 2D-1 at Re 20, reference.csv = the paper's reference intervals).

    flow_past_obstacle.py run     [--cases coarse,coarse_dt05,medium] [--end-time T] [--work DIR]
    flow_past_obstacle.py analyse [--work DIR] [--json benchmarks/results/flow_past_obstacle.json]
    flow_past_obstacle.py plot    [--work DIR] --out docs/figures

`run` meshes each case (s = mesh-size factor of the .geo; s = 1 is the committed mesh), writes its
ProjectParameters.json into WORKDIR/<case>/ with the case's fixed time step and runs it with the
`edgeflow` CLI (OpenMP strategy; OMP_NUM_THREADS defaults to 2).  The case `re20` is the steady
2D-1 benchmark, run through the Python workflow to its steady state; its recirculation length
needs the final velocity field, which this script samples in the live model part.

`analyse` reads every WORKDIR/<case>/cylinder_forces.csv (time, Fx, Fy, Fz, Cd, Cl with
Cd = 2 Fx / (rho U_mean^2 D), Cl = 2 Fy / (rho U_mean^2 D), U_mean = 1, D = 0.1) and measures,
over the periodic state only (see `shedding`):
  St        = f D / U_mean, f from the upward zero crossings of Cl - mean(Cl) (crossing times by
              linear interpolation between steps; f = number of whole periods / their duration);
              an FFT estimate (Hann window, parabolic interpolation of the log-spectrum peak) is
              reported alongside as a cross-check;
  c_D,max, c_L,max, min c_L, mean c_D (time average over whole lift periods);
then compares them with the reference intervals and writes the JSON.  `plot` draws
obstacle_forces.png (c_D and c_L histories) and obstacle_velocity.png (|u| of the last VTK
output of the finest case).
"""
import argparse
import csv
import json
import os
import platform
import shutil
import subprocess
import sys
import time

import numpy as np

# numpy 2 renamed trapz (removed) to trapezoid (absent before 2.0: Debian 12 has 1.24)
trapezoid = getattr(np, "trapezoid", None) or getattr(np, "trapz")

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)
CASE_DIR = os.path.join(SOURCE, "test_examples", "flow_past_obstacle")
D = 0.1          # cylinder diameter
XC, YC = 0.2, 0.2  # its centre
U_MEAN = {"re100": 1.0, "re20": 0.2}  # mean inflow velocity (2 Um / 3)

# Re 100 cases: mesh-size factor s of the .geo, the fixed time step (below the solver's stability
# limit once the flow has left the impulsive start, so that it stays fixed) and the end time.
# 'fine' (10.7k nodes, stability limit ~4e-4) is left out of the default set: about an hour on
# 2 cores.
CASES = {
    "coarse": {"s": 1.0, "dt": 0.001, "end_time": 8.0},
    "coarse_dt05": {"s": 1.0, "dt": 0.0005, "end_time": 8.0},
    "medium": {"s": 0.7, "dt": 0.0005, "end_time": 6.0},
    "fine": {"s": 0.5, "dt": 0.00025, "end_time": 6.0},
}
DEFAULT_CASES = "coarse,coarse_dt05,medium"


# ---------------------------------------------------------------------------
# Reference data.


def read_reference(path=None):
    """Reference intervals {(case, quantity): (lower, upper)} from reference.csv (# lines skipped)."""
    path = path or os.path.join(CASE_DIR, "reference.csv")
    out = {}
    with open(path) as f:
        rows = [r for r in csv.reader(line for line in f if line.strip() and not line.startswith("#"))]
    head = rows[0]
    for r in rows[1:]:
        d = dict(zip(head, r))
        out[(d["case"], d["quantity"])] = (float(d["lower"]), float(d["upper"]))
    return out


def against(value, interval):
    """How far value lies from [lo, hi]: signed distance to the nearest end (0 inside) and its size
    relative to the interval's midpoint, plus the deviation from the midpoint (relative)."""
    lo, hi = interval
    mid = 0.5 * (lo + hi)
    dist = 0.0 if lo <= value <= hi else (value - hi if value > hi else value - lo)
    return {"reference": [lo, hi], "inside": bool(lo <= value <= hi), "distance": dist,
            "distance_rel": dist / mid, "deviation_from_mid_rel": (value - mid) / mid}


# ---------------------------------------------------------------------------
# Signal analysis.


def read_forces(path):
    """Columns of a compute_forces_process CSV as arrays {name: (n,)}."""
    d = np.genfromtxt(path, delimiter=",", names=True)
    return {k: np.atleast_1d(d[k]) for k in d.dtype.names}


def _upward_crossings(t, y, level):
    """Times where y - level goes from < 0 to >= 0, linearly interpolated between samples."""
    s = y - level
    k = np.nonzero((s[:-1] < 0.0) & (s[1:] >= 0.0))[0]
    return t[k] - s[k] * (t[k + 1] - t[k]) / (s[k + 1] - s[k])


def _peak(t, y, mask, sign=1.0):
    """Extreme of y (max for sign 1, min for -1) on mask, refined by a parabola through the three
    samples around the extreme sample (the sampled max is low by O((dt/T)^2))."""
    idx = np.nonzero(mask)[0]
    i = idx[np.argmax(sign * y[idx])]
    if 0 < i < len(y) - 1 and abs((t[i + 1] - t[i]) - (t[i] - t[i - 1])) < 1e-6 * (t[i + 1] - t[i]):
        a, b, c = sign * y[i - 1], sign * y[i], sign * y[i + 1]
        den = a - 2.0 * b + c
        if den < 0.0:
            return sign * (b - 0.125 * (a - c) ** 2 / den)
    return float(y[i])


def fft_frequency(t, y):
    """Dominant frequency of y(t) on a uniform resampling: Hann window, parabolic interpolation of
    the log magnitude around the peak bin (cross-check for the zero-crossing frequency)."""
    n = len(t)
    tu = np.linspace(t[0], t[-1], n)
    yu = np.interp(tu, t, y)
    yu = (yu - yu.mean()) * np.hanning(n)
    spec = np.abs(np.fft.rfft(yu))
    k = int(np.argmax(spec[1:])) + 1
    shift = 0.0
    if 1 <= k < len(spec) - 1 and min(spec[k - 1], spec[k + 1]) > 0.0:
        a, b, c = np.log(spec[k - 1]), np.log(spec[k]), np.log(spec[k + 1])
        shift = 0.5 * (a - c) / (a - 2.0 * b + c)
    return (k + shift) / (tu[-1] - tu[0]) * (n - 1) / n


def shedding(t, cd, cl, u_mean=1.0, tol=0.005, max_periods=20):
    """Periodic-state figures of a lift/drag history.

    Periods are cut at the upward zero crossings of Cl - mean(Cl), the mean taken over the last
    third of the record.  Going back from the last whole period, periods are kept while their
    length and their Cl amplitude (max - min) stay within `tol` (relative) of the last period's:
    that run of periods is the periodic state (at most max_periods of it is used).  Rows after a
    step shorter than half the median step are dropped first.  Returns a dict
    with St, f, the periods used, c_D,max, c_L,max, min c_L, mean c_D, the amplitude drift and
    'periodic' = at least 3 periods qualified."""
    t, cd, cl = (np.asarray(a, dtype=float) for a in (t, cd, cl))
    # A step much shorter than the others (the last one, cut to land on end_time) has a
    # fractional-step pressure of its own: leave such rows out.
    h = np.diff(t)
    keep = np.concatenate([[True], h >= 0.5 * np.median(h)]) if h.size else np.ones(1, bool)
    t, cd, cl = t[keep], cd[keep], cl[keep]
    tail = t >= t[0] + (t[-1] - t[0]) * 2.0 / 3.0
    level = float(cl[tail].mean())
    tz = _upward_crossings(t, cl, level)
    if len(tz) < 3:
        return {"periodic": False, "n_periods": max(0, len(tz) - 1), "reason": "fewer than 2 whole lift periods"}
    per = np.diff(tz)
    amp = np.array([cl[(t >= a) & (t < b)].max() - cl[(t >= a) & (t < b)].min() for a, b in zip(tz[:-1], tz[1:])])
    k = len(per) - 1
    first = k
    while (first - 1 >= 0 and k - first + 1 < max_periods
           and abs(per[first - 1] - per[k]) <= tol * per[k] and abs(amp[first - 1] - amp[k]) <= tol * amp[k]):
        first -= 1
    n = k - first + 1
    t0, t1 = tz[first], tz[k + 1]
    win = (t >= t0) & (t <= t1)
    f = n / (t1 - t0)
    # Time averages over whole periods by the trapezoidal rule on the samples inside plus the two
    # interpolated end values.
    tt = np.concatenate([[t0], t[win], [t1]])
    cdt = np.concatenate([[np.interp(t0, t, cd)], cd[win], [np.interp(t1, t, cd)]])
    clt = np.concatenate([[np.interp(t0, t, cl)], cl[win], [np.interp(t1, t, cl)]])
    dts = np.diff(t[win])
    return {
        "periodic": n >= 3,
        "reason": "" if n >= 3 else f"only the last {n} period(s) agree within {tol:.1%}",
        "n_periods": int(n),
        "window": [float(t0), float(t1)],
        "f": float(f),
        "St": float(f * D / u_mean),
        "St_fft": float(fft_frequency(t[win], cl[win]) * D / u_mean),
        "period_spread_rel": float((per[first:k + 1].max() - per[first:k + 1].min()) / per[k]),
        "cl_amplitude_spread_rel": float((amp[first:k + 1].max() - amp[first:k + 1].min()) / amp[k]),
        "cd_max": float(_peak(t, cd, win, 1.0)),
        "cd_min": float(_peak(t, cd, win, -1.0)),
        "cl_max": float(_peak(t, cl, win, 1.0)),
        "cl_min": float(_peak(t, cl, win, -1.0)),
        "cd_mean": float(trapezoid(cdt, tt) / (t1 - t0)),
        "cl_mean": float(trapezoid(clt, tt) / (t1 - t0)),
        "dt_in_window": [float(dts.min()), float(dts.max())] if dts.size else None,
    }


def recirculation_length(coords, elements, velocity, n=2001, x_end=0.6):
    """L_a = x_r - (XC + D/2), x_r the first point behind the cylinder on y = YC where u_x turns
    from negative to positive (P1 samples every (x_end - 0.25)/(n - 1), zero by linear
    interpolation).  None when u_x is never negative there."""
    import edgeflow_post as post  # noqa: PLC0415

    x = np.linspace(XC + D / 2, x_end, n)
    pts = np.column_stack([x, np.full(n, YC)])
    ux = post.interpolate(coords, elements, velocity[:, 0], pts)
    neg = np.nonzero(ux[1:] < 0.0)[0]
    if neg.size == 0:
        return None
    i = neg[0] + 1
    j = np.nonzero(ux[i:] >= 0.0)[0]
    if j.size == 0:
        return None
    j = int(j[0]) + i
    xr = x[j - 1] - ux[j - 1] * (x[j] - x[j - 1]) / (ux[j] - ux[j - 1])
    return float(xr - (XC + D / 2))


# ---------------------------------------------------------------------------
# Running.


def mesh(work, s, gmsh="gmsh", remesh=False):
    """The mesh for size factor s in `work`: the committed coarse mesh for s = 1, else gmsh."""
    name = "flow_past_obstacle.msh" if s == 1.0 and not remesh else f"flow_past_obstacle_s{s:g}.msh"
    out = os.path.join(work, name)
    if s == 1.0 and not remesh:
        shutil.copyfile(os.path.join(CASE_DIR, name), out)
        return name
    cmd = [gmsh, "-2", "-setnumber", "s", repr(s), os.path.join(CASE_DIR, "flow_past_obstacle.geo"),
           "-format", "msh41", "-o", out]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"gmsh failed:\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    return name


def case_parameters(json_name, mesh_name, out_folder, dt=None, end_time=None):
    """ProjectParameters of test_examples/flow_past_obstacle/json_name for `mesh_name`, the output
    folder `out_folder` and, when given, a fixed time step and end time."""
    with open(os.path.join(CASE_DIR, json_name)) as f:
        p = json.load(f)
    p["solver_settings"]["model_import_settings"]["input_filename"] = mesh_name
    p["problem_data"]["output_folder"] = out_folder
    if dt is not None:
        p["solver_settings"]["time_stepping"] = {"automatic_time_step": False, "time_step": dt}
    if end_time is not None:
        p["problem_data"]["end_time"] = end_time
    return p


def prepare_re100(work, name, gmsh="gmsh", remesh=False, end_time=None):
    """Mesh case `name` of CASES into `work` and write its ProjectParameters.json there; returns
    the parameters' path and the case's settings."""
    c = CASES[name]
    os.makedirs(work, exist_ok=True)
    m = mesh(work, c["s"], gmsh, remesh)
    p = case_parameters("ProjectParameters.json", m, work, c["dt"], end_time or c["end_time"])
    pj = os.path.join(work, "ProjectParameters.json")
    with open(pj, "w") as f:
        json.dump(p, f, indent=2)
    return pj, {**c, "end_time": p["problem_data"]["end_time"]}


def run_re100(args, name):
    """Run case `name` with the edgeflow CLI into WORKDIR/name (log in run.log)."""
    work = os.path.join(args.work, name)
    pj, c = prepare_re100(work, name, args.gmsh, args.remesh, args.end_time)
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "2")
    env.setdefault("OMP_WAIT_POLICY", "passive")
    t0 = time.time()
    with open(os.path.join(work, "run.log"), "w") as log:
        r = subprocess.run([args.edgeflow, "run", pj, "--overwrite"], cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT)
    wall = time.time() - t0
    info = {"case": name, "s": c["s"], "dt": c["dt"], "end_time": c["end_time"],
            "wall_seconds": round(wall, 1), "threads": env["OMP_NUM_THREADS"], "rc": r.returncode}
    with open(os.path.join(work, "case_info.json"), "w") as f:
        json.dump(info, f, indent=2)
    print(f"{name}: s = {c['s']:g}, dt = {c['dt']:g}, rc {r.returncode}, {wall:.0f} s (log: {work}/run.log)")
    return r.returncode


def run_re20(work, gmsh="gmsh", s=1.0, remesh=False, rate=1e-4, t_max=30.0, quiet=True):
    """Steady 2D-1 (Re 20) through the Python workflow: runs to max |du/dt| < rate (the case's
    steady_state block, here tightened or loosened by `rate`) and returns the figures
    {c_D, c_L, L_a, nodes, steps, time, rate_reached}."""
    import edgeflow  # noqa: PLC0415

    os.makedirs(work, exist_ok=True)
    m = mesh(work, s, gmsh, remesh)
    p = case_parameters("ProjectParameters_Re20.json", m, work)
    p["problem_data"]["end_time"] = t_max
    p["problem_data"]["steady_state"]["velocity_rate_tolerance"] = rate
    pj = os.path.join(work, "ProjectParameters_Re20.json")
    with open(pj, "w") as f:
        json.dump(p, f, indent=2)
    a = edgeflow.FluidAnalysis(pj, quiet=quiet, overwrite=True)
    a.Initialize()
    a.RunSolutionLoop()
    mp = a.model_part
    la = recirculation_length(mp.coordinates(), mp.elements(), mp.values("VELOCITY"))
    t_end = a.time
    steps = a.step
    nodes = mp.number_of_nodes
    a.Finalize()
    fr = read_forces(os.path.join(work, "cylinder_forces.csv"))
    with open(os.path.join(work, "run_summary.json")) as f:
        summary = json.load(f)
    return {"c_D": float(fr["Cd"][-1]), "c_L": float(fr["Cl"][-1]), "L_a": la, "nodes": int(nodes),
            "steps": int(steps), "time": float(t_end), "steady_state": summary.get("steady_state")}


# ---------------------------------------------------------------------------
# Subcommands.


def cmd_run(args):
    rc = 0
    for name in args.cases.split(","):
        if name == "re20":
            r = run_re20(os.path.join(args.work, "re20"), args.gmsh, 1.0, args.remesh, quiet=False)
            with open(os.path.join(args.work, "re20", "re20_figures.json"), "w") as f:
                json.dump(r, f, indent=2)
            print(f"re20: c_D = {r['c_D']:.4f}, c_L = {r['c_L']:.5f}, L_a = {r['L_a']}")
        elif name in CASES:
            rc |= run_re100(args, name)
        else:
            print(f"unknown case '{name}' (known: {', '.join(CASES)}, re20)", file=sys.stderr)
            return 2
    return 1 if rc else 0


def analyse(work, cases):
    """Figures of every finished case in `work` (those with a cylinder_forces.csv)."""
    ref = read_reference()
    out = []
    for name in cases:
        path = os.path.join(work, name, "cylinder_forces.csv")
        if not os.path.exists(path):
            continue
        fr = read_forces(path)
        info = {}
        ip = os.path.join(work, name, "case_info.json")
        if os.path.exists(ip):
            with open(ip) as f:
                info = json.load(f)
        sp = os.path.join(work, name, "run_summary.json")
        nodes = None
        if os.path.exists(sp):
            with open(sp) as f:
                summ = json.load(f)
            nodes = summ.get("mesh", {}).get("nodes")
            run = summ.get("run", {})
            info["seconds_per_step"] = run.get("seconds_per_step")
            info["steps"] = run.get("steps")
            info["mean_pressure_iterations"] = summ.get("pressure_solver_iterations", {}).get("mean_per_step")
        sh = shedding(fr["time"], fr["Cd"], fr["Cl"], U_MEAN["re100"])
        row = {"case": name, **info, "nodes": nodes, "t_end": float(fr["time"][-1]), **sh}
        if sh.get("periodic"):
            row["vs_reference"] = {
                "St": against(sh["St"], ref[("2D-2", "St")]),
                "c_D_max": against(sh["cd_max"], ref[("2D-2", "c_D_max")]),
                "c_L_max": against(sh["cl_max"], ref[("2D-2", "c_L_max")]),
            }
        out.append(row)
    return out


def cmd_analyse(args):
    rows = analyse(args.work, list(CASES))
    if not rows:
        print(f"no finished case in {args.work} (run first)", file=sys.stderr)
        return 1
    ref = read_reference()
    print(f"{'case':12s} {'s':>4s} {'dt':>7s} {'periods':>7s} {'St':>7s} {'St_fft':>7s} {'cDmax':>7s} "
          f"{'cLmax':>7s} {'cLmin':>7s} {'cDmean':>7s}")
    for r in rows:
        if not r.get("periodic"):
            print(f"{r['case']:12s} not periodic: {r.get('reason', '')} ({r['n_periods']} periods)")
            continue
        print(f"{r['case']:12s} {r.get('s', 0):4g} {r.get('dt', 0):7g} {r['n_periods']:7d} {r['St']:7.4f} "
              f"{r['St_fft']:7.4f} {r['cd_max']:7.4f} {r['cl_max']:7.4f} {r['cl_min']:7.4f} {r['cd_mean']:7.4f}")
    print("reference (2D-2): St in [{:.4f}, {:.4f}], c_D,max in [{:.4f}, {:.4f}], c_L,max in [{:.4f}, {:.4f}]".format(
        *ref[("2D-2", "St")], *ref[("2D-2", "c_D_max")], *ref[("2D-2", "c_L_max")]))
    result = {
        "benchmark": "Schaefer & Turek (1996) 2D-2, Re = 100 (test_examples/flow_past_obstacle)",
        "method": "St from upward zero crossings of c_L - mean (linear interpolation in time) over the "
                  "periodic state (periods whose length and c_L amplitude are within 0.5% of the last "
                  "one's); St_fft: Hann-windowed FFT peak with parabolic interpolation; maxima refined by a "
                  "parabola through three samples",
        "reference": {f"{c} {q}": list(v) for (c, q), v in ref.items()},
        "runs": rows,
        "solver": "openmp_edge_based (edgeflow CLI)",
        "machine": f"{platform.node()} {platform.machine()}, {os.cpu_count()} cpus",
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    re20 = os.path.join(args.work, "re20", "re20_figures.json")
    if os.path.exists(re20):
        with open(re20) as f:
            r = json.load(f)
        result["re20"] = {**r, "vs_reference": {
            "c_D": against(r["c_D"], ref[("2D-1", "c_D")]),
            "c_L": against(r["c_L"], ref[("2D-1", "c_L")]),
            "L_a": against(r["L_a"], ref[("2D-1", "L_a")]) if r["L_a"] is not None else None}}
        print("re20 (2D-1): c_D = {:.4f} [{:.4f}, {:.4f}], c_L = {:.5f} [{:.4f}, {:.4f}], L_a = {} [{:.4f}, {:.4f}]".format(
            r["c_D"], *ref[("2D-1", "c_D")], r["c_L"], *ref[("2D-1", "c_L")],
            "none" if r["L_a"] is None else f"{r['L_a']:.4f}", *ref[("2D-1", "L_a")]))
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
        print(f"wrote {args.json}")
    return 0


def cmd_plot(args):
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    ref = read_reference()
    os.makedirs(args.out, exist_ok=True)
    done = [n for n in CASES if os.path.exists(os.path.join(args.work, n, "cylinder_forces.csv"))]
    if not done:
        print(f"no finished case in {args.work} (run first)", file=sys.stderr)
        return 1
    main = min(done, key=lambda n: (CASES[n]["s"], CASES[n]["dt"]))  # the finest finished case
    fig, ax = plt.subplots(2, 2, figsize=(11, 6.2), gridspec_kw={"width_ratios": [1.6, 1]})
    fr = read_forces(os.path.join(args.work, main, "cylinder_forces.csv"))
    t = fr["time"]
    late = t > 0.1  # the first steps of the impulsive start have |c_D| ~ 100
    ax[0, 0].plot(t[late], fr["Cd"][late], lw=0.7, color="C0")
    ax[1, 0].plot(t[late], fr["Cl"][late], lw=0.7, color="C0")
    c = CASES[main]
    ax[0, 0].set_title(f"case '{main}' (s = {c['s']:g}, dt = {c['dt']:g}): whole history")
    ax[1, 0].set_xlabel("t")
    ax[0, 0].set_ylabel("$c_D$")
    ax[1, 0].set_ylabel("$c_L$")
    # Right: the last second of every case, phase-aligned at its last upward zero crossing of
    # c_L - mean, against the reference bands of the maxima.
    for i, n in enumerate(done):
        f = read_forces(os.path.join(args.work, n, "cylinder_forces.csv"))
        tt, cdd, cll = f["time"], f["Cd"], f["Cl"]
        tz = _upward_crossings(tt, cll, float(cll[tt >= tt[-1] - 1.0].mean()))
        t0 = tz[-1] if len(tz) else tt[-1]
        w = (tt >= t0 - 1.0) & (tt <= t0) & (tt > 0.1)
        lab = f"{n} (s = {CASES[n]['s']:g}, dt = {CASES[n]['dt']:g}, t$_0$ = {t0:.2f})"
        ax[0, 1].plot(tt[w] - t0, cdd[w], lw=1.0, color=f"C{i}", label=lab)
        ax[1, 1].plot(tt[w] - t0, cll[w], lw=1.0, color=f"C{i}", label=lab)
    lo, hi = ref[("2D-2", "c_D_max")]
    ax[0, 1].axhspan(lo, hi, color="0.6", alpha=0.5, lw=0, label="$c_{D,max}$ reference interval")
    lo, hi = ref[("2D-2", "c_L_max")]
    ax[1, 1].axhspan(lo, hi, color="0.6", alpha=0.5, lw=0, label="$c_{L,max}$ reference interval")
    ax[0, 1].set_title("last second of each case (t$_0$: last up-crossing of $c_L$)", fontsize=10)
    ax[1, 1].set_xlabel("t - t$_0$")
    y0, y1 = ax[0, 1].get_ylim()
    ax[0, 1].set_ylim(y0 - 0.6 * (y1 - y0), y1)
    ax[1, 1].set_ylim(-2.6, 1.3)
    ax[0, 1].legend(fontsize=7, loc="lower left")
    ax[1, 1].legend(fontsize=7, loc="lower left")
    for a in ax.flat:
        a.grid(alpha=0.3)
    fig.suptitle("Schäfer & Turek 2D-2 (Re 100): forces on the cylinder (edgeflow, openmp_edge_based)", fontsize=11)
    fig.tight_layout()
    p = os.path.join(args.out, "obstacle_forces.png")
    fig.savefig(p, dpi=90)
    plt.close(fig)
    print(f"wrote {p}")
    plot_velocity(args, main, plt)
    return 0


def plot_velocity(args, case, plt):
    """|u| of the last VTK output of `case` (matplotlib tripcolor; no ParaView needed)."""
    import glob  # noqa: PLC0415

    import edgeflow_post as post  # noqa: PLC0415

    files = glob.glob(os.path.join(args.work, case, "vtk", "*.vtu"))
    files = [f for f in files if os.path.basename(f).count("_") >= 1 and f.rsplit("_", 1)[-1][:-4].isdigit()]
    if not files:
        print(f"no .vtu in {args.work}/{case}/vtk: no velocity picture")
        return
    last = max(files, key=lambda f: int(f.rsplit("_", 1)[-1][:-4]))
    pts, cells, data = post.read_vtu(last)
    vel = data["VELOCITY"]
    mag = np.sqrt((vel[:, :2] ** 2).sum(axis=1))
    fig, ax = plt.subplots(figsize=(11, 2.6))
    tpc = ax.tripcolor(pts[:, 0], pts[:, 1], cells, mag, shading="gouraud", cmap="viridis")
    ax.add_patch(plt.Circle((XC, YC), D / 2, color="white"))
    ax.set_aspect("equal")
    ax.set_xlim(0, 2.2)
    ax.set_ylim(0, 0.41)
    when = ""
    pvd = glob.glob(os.path.join(args.work, case, "vtk", "*.pvd"))
    if pvd:
        import re  # noqa: PLC0415

        with open(pvd[0]) as f:
            m = re.search(r'timestep="([^"]+)"[^>]*file="' + re.escape(os.path.basename(last)) + '"', f.read())
        if m:
            when = f" t = {float(m.group(1)):.3f},"
    c = CASES.get(case, {})
    ax.set_title(f"Schäfer & Turek 2D-2 (Re 100): |u| at{when} case '{case}' (s = {c.get('s', 0):g}, "
                 f"dt = {c.get('dt', 0):g}), edgeflow openmp_edge_based", fontsize=10)
    fig.colorbar(tpc, ax=ax, fraction=0.025, pad=0.01)
    fig.tight_layout()
    p = os.path.join(args.out, "obstacle_velocity.png")
    fig.savefig(p, dpi=90)
    plt.close(fig)
    print(f"wrote {p}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    default_work = os.path.join(SOURCE, "out", "flow_past_obstacle")
    pr = sub.add_parser("run", help="mesh and run the cases")
    pr.add_argument("--cases", default=DEFAULT_CASES, help=f"comma-separated, of {', '.join(CASES)}, re20")
    pr.add_argument("--end-time", type=float, default=None, help="override the case's end time")
    pr.add_argument("--edgeflow", default=os.path.join(SOURCE, "build", "bin", "edgeflow"))
    pr.add_argument("--gmsh", default="gmsh")
    pr.add_argument("--remesh", action="store_true", help="mesh s = 1 with gmsh too instead of using the committed .msh")
    for name in ("analyse", "plot"):
        sp = sub.add_parser(name)
        if name == "analyse":
            sp.add_argument("--json", default=os.path.join(SOURCE, "benchmarks", "results", "flow_past_obstacle.json"))
        else:
            sp.add_argument("--out", default=os.path.join(SOURCE, "docs", "figures"))
    for sp in sub.choices.values():
        sp.add_argument("--work", default=default_work, help="folder of the runs (default: out/flow_past_obstacle)")
    args = ap.parse_args()
    args.work = os.path.abspath(args.work)
    sys.path.insert(0, HERE)
    return {"run": cmd_run, "analyse": cmd_analyse, "plot": cmd_plot}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
