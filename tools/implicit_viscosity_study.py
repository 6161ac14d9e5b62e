#!/usr/bin/python3
"""implicit_viscosity_study.py -- the temporal gates of docs/implicit_viscosity.md on the OpenMP strategy:
self-convergence in time on a fixed mesh (against a run with dt/16 on the same mesh, tau_c1 = 0) and
long-run stability at large nu dt / hmin^2, on test_examples/taylor_green and
test_examples/poiseuille_startup.

    python3 tools/implicit_viscosity_study.py --build build --work /tmp/ivs order [--case tg|ps] [--correction C]
    python3 tools/implicit_viscosity_study.py --build build --work /tmp/ivs stability [--case tg|ps]

hmin is the smallest element height of the mesh (the dt rule's h_min).  Order: dt_r = r hmin^2/nu,
r = 1, 2, 4, 8, 16 (implicit) and r = 1/64 .. 1/8 (explicit, below its limit 1/4 - the convective part),
to T = --T-implicit (default 11 steps of r = 16) and --T-explicit (default 32 hmin^2/nu = 256 steps of
r = 1/8), rounded to whole multiples of the largest step; error = relative L2 (nodal) difference of the
velocity at T from the run with dt_min/16 on the same mesh.  The discrete problem must not depend on dt
(the protocol's tau_c1 = 0), which --stab gives in three ways:
  frozen (default): OSS with tau_c1 = dt/dt_tau, dt_tau the reference step, so that c1/dt = 1/dt_tau and
      tau = 1/(1/dt_tau + c2 nu/h^2 + c3 |u|/h) is the same in every run;
  oss: OSS with tau_c1 = --tau-c1 (0: tau = 1/(c2 nu/h^2 + c3 |u|/h)).  With dt << tau the lagged pressure
      projection xi_p(p_n) makes the step unstable (start-up channel: diverges at dt = hmin^2/(16 nu),
      tau/dt ~ 17, stable at hmin^2/(8 nu), explicit RK4 and IMEX alike), so the dt/16 reference fails;
  none: tau = 0 (use_oss false).  The pressure is then stabilised only by the splitting term
      (dt/2)(L - D M^-1 G)(p_{n+1} - p_n), which vanishes as dt -> 0: the reference is the less stable one
      and Taylor-Green does not converge (errors grow as dt falls).  --p0 exact (start-up
only): the initial pressure is the t > 0 one, 1 - x, instead of 0; with p(0) = 0 the first step applies
only half of the pressure impulse (the correction uses dt/2, eq. 4 of fractional_step.h), an O(dt)
velocity error of every scheme.  --start-from-reference K (order): every run of the protocol, the dt/16
reference included, starts at t0 = K hmin^2/nu from one developed discrete state, the velocity and pressure
of the reference step's run from t = 0 to t0 (no initial layer from a non-discrete initial pressure), and
ends at t0 + T.  --states DIR (order): each run's final velocity and pressure and the mesh into
DIR/<case>_<scheme>_<r>.npz (r = "ref" for the reference), for tools that locate the error.
Stability: 2000 steps at r = 100 and 1000, or until the kinetic energy falls below 1e-20 of the first step's
(Taylor-Green decays: beyond that the pressure CG's relative tolerance on its singular system meets rounding,
level 1 at r = 100 broke down with p^T A p = -1.1e-19 at 2.4e-22 of the first step's energy, after 998 steps of
decay by at least 3.6 % each); kinetic energy history, max growth between steps and the 2dt indicator
|u_{n+1} - 2u_n + u_{n-1}| / |u_n| at the end."""
import argparse, json, math, os, pathlib, shutil, subprocess, sys

import numpy as np

# tau_c1, use_oss, start-up p(0), --stab, dt_tau, correction, pressure, projection, tau_time_step
STAB = [0.0, True, "zero", "frozen", 1.0, "lumped", "frozen", "single", "step"]
SRC = pathlib.Path(__file__).resolve().parent.parent


def setup(a):
    lib = str(pathlib.Path(a.build).resolve() / "lib")
    os.environ["EDGEFLOW_LIB_DIR"] = lib
    os.environ["EDGEFLOW_PLUGIN_DIR"] = lib
    sys.path.insert(0, str(SRC / "python_scripts"))
    os.makedirs(a.work, exist_ok=True)
    os.chdir(a.work)


def mesh(geo, out, numbers):
    if os.path.exists(out):
        return out
    cmd = ["gmsh", "-2", str(geo), "-format", "msh41", "-o", out]
    for k, v in numbers.items():
        cmd += ["-setnumber", k, str(v)]
    subprocess.run(cmd, check=True, capture_output=True)
    return out


def hmin_of(X, E):
    p = X[E][:, :, :2]
    e = [p[:, 1] - p[:, 0], p[:, 2] - p[:, 1], p[:, 0] - p[:, 2]]
    area2 = np.abs(e[0][:, 0] * (-e[2][:, 1]) - e[0][:, 1] * (-e[2][:, 0]))
    longest = np.max([np.hypot(v[:, 0], v[:, 1]) for v in e], axis=0)
    return float(np.min(area2 / longest))


def case_params(name, nu, scheme, dt, T, level):
    if name == "tg":
        folder = SRC / "test_examples" / "taylor_green"
        p = json.loads((folder / "ProjectParameters.json").read_text())
        msh = mesh(folder / "taylor_green.geo", "taylor_green.msh", {})
        p["solver_settings"]["model_import_settings"]["refinement_levels"] = level
        for blk in p["processes"]["boundary_conditions_process_list"]:
            v = blk["Parameters"]["value"]
            blk["Parameters"]["value"] = [s.replace("0.01", repr(nu)) if isinstance(s, str) else s for s in v]
    else:
        folder = SRC / "test_examples" / "poiseuille_startup"
        p = json.loads((folder / "ProjectParameters.json").read_text())
        msh = mesh(folder / "channel_startup.geo", f"channel_startup_{level}.msh", {"nx": 5 * 2 ** level,
                                                                                     "ny": 20 * 2 ** level})
        p["solver_settings"]["model_import_settings"]["refinement_levels"] = 0
        if STAB[2] == "exact":
            p["processes"]["initial_conditions_process_list"] = [{
                "python_module": "assign_scalar_variable_process",
                "Parameters": {"model_part_name": "FluidModelPart.fluid", "variable_name": "PRESSURE",
                               "value": "1.0 - x", "constrained": False, "interval": [0.0, 0.0]}}]
    ss = p["solver_settings"]
    ss["model_import_settings"]["input_filename"] = os.path.abspath(msh)
    ss["viscosity"] = nu
    ss["viscous_time_integration"] = scheme
    if scheme == "implicit":
        # tau's c1/dt from the step taken ("step"): --stab frozen's tau_c1 = dt/dt_ref relies on it (the
        # default "explicit_limit" would take c1 over min(dt, the explicit limit), a tau that depends on dt).
        ss["implicit_viscosity"] = {"correction": STAB[5], "pressure": STAB[6], "projection": STAB[7],
                                    "tau_time_step": STAB[8]}
    ss["time_stepping"] = {"automatic_time_step": False, "time_step": dt}
    c1 = dt / STAB[4] if STAB[3] == "frozen" else STAB[0]
    ss["stabilization"] = {"tau_c1": c1, "use_oss": STAB[1]}
    p["problem_data"]["end_time"] = T
    p["problem_data"]["echo_level"] = 0
    out = os.path.abspath(f"out_{name}")
    shutil.rmtree(out, ignore_errors=True)  # each run writes its manifest there
    p["problem_data"]["output_folder"] = out
    p.pop("output_processes", None)
    path = os.path.abspath(f"{name}_{scheme}.json")
    pathlib.Path(path).write_text(json.dumps(p, indent=1))
    return path


def run(name, nu, scheme, dt, T, level, every=None, start=None):
    """Steps of dt from 0 (or from start = (t0, velocity, pressure), a state of another run) to T."""
    import edgeflow
    t0 = start[0] if start else 0.0
    nsteps = max(1, round((T - t0) / dt))
    dt = (T - t0) / nsteps  # a whole number of steps to T
    path = case_params(name, nu, scheme, dt, T, level)
    if start:
        p = json.loads(pathlib.Path(path).read_text())
        p["problem_data"]["start_time"] = t0
        pathlib.Path(path).write_text(json.dumps(p, indent=1))
    a = edgeflow.FluidAnalysis(path, quiet=True)
    a.Initialize()
    mp = a.model_part
    if start:
        mp.values("VELOCITY")[:] = start[1]
        mp.values("PRESSURE")[:] = start[2]
        mp.mark_modified("VELOCITY")
        mp.mark_modified("PRESSURE")
    hist = []
    for k in range(nsteps):
        a.InitializeSolutionStep()
        a.SolveSolutionStep()
        a.FinalizeSolutionStep()
        if every:
            u = mp.values("VELOCITY")[:, :2].copy()
            hist.append(u)
            if len(hist) > 3:
                hist.pop(0)
            if every(k, u):
                break
    u = mp.values("VELOCITY")[:, :2].copy()
    run.state = (a.time, mp.values("VELOCITY").copy(), mp.values("PRESSURE").copy())
    X, E = np.array(mp.coordinates()), np.array(mp.elements())
    run.X, run.E = X, E
    steps = a.step
    if abs(a.time - T) > 1e-9 * T and not (every and len(hist) and k + 1 < nsteps):
        print(f"    warning: {name} {scheme} dt {dt:.4g} ended at t = {a.time:.6g}, not T = {T:.6g}", flush=True)
    a.Finalize()
    return u, X, E, steps, hist


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("mode", choices=["order", "stability"])
    ap.add_argument("--case", default="tg,ps")
    ap.add_argument("--level", type=int, default=None)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--results", default=None)
    ap.add_argument("--tau-c1", type=float, default=0.0)
    ap.add_argument("--T-implicit", type=float, default=0.0, help="order: end time (0: 11 steps of r = 16)")
    ap.add_argument("--T-explicit", type=float, default=0.0, help="order: end time (0: 32 hmin^2/nu)")
    ap.add_argument("--stab", choices=["frozen", "oss", "none"], default="frozen")
    ap.add_argument("--p0", choices=["zero", "exact"], default="zero")
    ap.add_argument("--schemes", default="implicit,explicit")
    ap.add_argument("--correction", default="lumped",
                    help="implicit: solver_settings.implicit_viscosity.correction (lumped, viscous, "
                    "viscous_unfiltered, rotational; docs/implicit_viscosity.md, fix (a))")
    ap.add_argument("--pressure", default="frozen",
                    help="implicit: solver_settings.implicit_viscosity.pressure (frozen, extrapolated; "
                    "docs/implicit_viscosity.md, fix (b))")
    ap.add_argument("--projection", default="single",
                    help="implicit: solver_settings.implicit_viscosity.projection (single, converged; "
                    "docs/implicit_viscosity.md, fix (c))")
    ap.add_argument("--tau-time-step", choices=["step", "explicit_limit"], default="step",
                    help="implicit: solver_settings.implicit_viscosity.tau_time_step (default here \"step\", tau's "
                    "c1/dt from the step taken, which the order protocol's --stab frozen needs; the solver's own "
                    "default is \"explicit_limit\")")
    ap.add_argument("--start-from-reference", type=float, default=0.0, metavar="K",
                    help="order: start every run (the reference too) from the reference run's state at "
                    "t0 = K hmin^2/nu (0: from the case's initial state at t = 0)")
    ap.add_argument("--states", default=None, metavar="DIR",
                    help="order: save each run's final velocity, pressure and mesh in DIR/<case>_<scheme>_<r>.npz")
    a = ap.parse_args()
    if a.start_from_reference < 0.0:
        ap.error(f"--start-from-reference must be >= 0, got {a.start_from_reference}")
    STAB[0], STAB[1], STAB[2], STAB[3] = a.tau_c1, a.stab != "none", a.p0, a.stab
    STAB[5], STAB[6], STAB[7], STAB[8] = a.correction, a.pressure, a.projection, a.tau_time_step
    a.build = os.path.abspath(a.build)
    if a.results:
        a.results = os.path.abspath(a.results)
    if a.states:
        a.states = os.path.abspath(a.states)
    setup(a)
    out = {}
    for name in a.case.split(","):
        # nu = 1: Taylor-Green on level 3 (64^2 cells) keeps CFL <= 0.5 at r = 16, the start-up
        # channel (G = 1, half-height 0.5) has u_max <= 0.125.
        nu = 1.0
        level = a.level if a.level is not None else (3 if name == "tg" else 1)
        _, X, E, _, _ = run(name, nu, "explicit", 1e-6, 1e-6, level)
        h = hmin_of(X, E)
        print(f"{name}: nu {nu}, level {level}, {len(X)} nodes, hmin {h:.5g}, hmin^2/nu {h * h / nu:.4g}",
              flush=True)
        if a.mode == "order":
            for scheme, rs in (("implicit", [1, 2, 4, 8, 16]), ("explicit", [1 / 64, 1 / 32, 1 / 16, 1 / 8])):
                if scheme not in a.schemes.split(","):
                    continue
                dts = [r * h * h / nu for r in rs]
                T = (a.T_implicit or 11 * dts[-1]) if scheme == "implicit" else (a.T_explicit or 32 * h * h / nu)
                T = dts[-1] * max(1, round(T / dts[-1]))
                STAB[4] = dts[0] / 16
                start, t0 = None, 0.0
                if a.start_from_reference > 0.0:
                    # The developed discrete state: the reference step's run from t = 0 to t0 (a whole
                    # number of reference steps).
                    t0 = dts[0] / 16 * max(1, round(a.start_from_reference * h * h / nu / (dts[0] / 16)))
                    run(name, nu, scheme, dts[0] / 16, t0, level)
                    start = run.state
                    print(f"    start: the reference run's state at t0 = {t0:.6g} ({t0 * nu / (h * h):.4g} hmin^2/nu)",
                          flush=True)
                T = t0 + T

                def keep(tag, u):
                    if a.states:
                        os.makedirs(a.states, exist_ok=True)
                        np.savez(os.path.join(a.states, f"{name}_{scheme}_{tag}.npz"), u=run.state[1],
                                 p=run.state[2], X=run.X, E=run.E, t=run.state[0])
                uref, *_ = run(name, nu, scheme, dts[0] / 16, T, level, start=start)
                keep("ref", uref)
                nref = np.linalg.norm(uref)
                print(f"    reference: dt {dts[0] / 16:.4g}, |u_ref| {nref:.4e}", flush=True)
                errs = []
                for r, dt in zip(rs, dts):
                    u, *_ = run(name, nu, scheme, dt, T, level, start=start)
                    keep(f"{r:g}", u)
                    errs.append(float(np.linalg.norm(u - uref) / nref))
                orders = [math.log2(errs[i + 1] / errs[i]) for i in range(len(errs) - 1)]
                print(f"  {scheme}: t0 {t0:.4g}, T {T:.4g}, r {rs}\n    errors {['%.3e' % e for e in errs]}\n"
                      f"    orders {['%.3f' % o for o in orders]}", flush=True)
                out[f"{name}_{scheme}"] = {"r": rs, "T": T, "dt": dts, "hmin": h, "nodes": len(X), "stab": a.stab,
                                           "tau_c1": a.tau_c1, "p0": a.p0, "correction": a.correction, "pressure": a.pressure,
                                           "projection": a.projection, "t0": t0,
                                           "errors": errs,
                                           "orders": orders}
        else:
            STAB[0], STAB[1], STAB[3] = (a.tau_c1 or 1.0), a.stab != "none", "oss"  # production tau (c1 = 1)
            for r in (100, 1000):
                dt = r * h * h / nu
                ke, ratio = [], []

                def every(k, u, ke=ke):
                    ke.append(float(np.sum(u * u)))
                    # A decaying flow (Taylor-Green) is followed while its kinetic energy is above 1e-20 of the
                    # first step's: below, the pressure CG's relative tolerance on the singular system (no fixed
                    # pressure) meets rounding (level 1, r = 100: p^T A p = -1.1e-19 at KE 2.4e-22 of the first).
                    return ke[-1] < 1e-20 * ke[0]
                u, X, E, steps, hist = run(name, nu, "implicit", dt, a.steps * dt, level, every)
                growth = max(ke[i + 1] / ke[i] for i in range(len(ke) - 1) if ke[i] > 0)
                u0, u1, u2 = hist[-3], hist[-2], hist[-1]
                osc = float(np.linalg.norm(u2 - 2 * u1 + u0) / max(np.linalg.norm(u1), 1e-300))
                stop = f" (stopped after {len(ke)} of {a.steps}: KE below 1e-20 of the first)" if len(ke) < a.steps else ""
                print(f"  r = {r}: {len(ke)} steps of dt {dt:.4g}{stop}: max KE ratio between steps {growth:.6f}, "
                      f"KE first/last {ke[0]:.4e}/{ke[-1]:.4e}, 2dt indicator at the end {osc:.3e}", flush=True)
                out[f"{name}_r{r}"] = {"dt": dt, "steps": len(ke), "solver_steps": steps, "max_ke_ratio": growth,
                                       "ke_first": ke[0], "ke_last": ke[-1], "osc2dt": osc}
    if a.results:
        pathlib.Path(a.results).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
