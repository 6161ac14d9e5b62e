#!/usr/bin/python3
"""cfl_bisect.py -- the largest stable CFL_number of a scheme on a case, bisected (issue 16).

    python3 tools/cfl_bisect.py --build build --work /tmp/cfl --case cavity2d --scheme implicit [--json F]

Cases (the issue's list):
  cavity2d      test_examples/cavity2d/ProjectParameters_Re100.json: 32^2 graded cells refined once
                (64^2, 8,450 nodes), Re 100; needs --mesh-dir with cavity2d.msh (gmsh -2 cavity2d.geo)
  cavity3d:L    test_examples/cavity3d/ProjectParameters.json at refinement level L (Re 100)
  obstacle      test_examples/flow_past_obstacle/ProjectParameters.json, committed mesh (s = 1), Re 100
Every run uses the automatic time step with the trial CFL_number (obstacle's fixed step is replaced by
it), the strategy of --strategy, and the pressure solver of --linear-solver (default FCG + AMG: the
pressure tolerance is the case's, the solver does not change stability).

Protocol.  A run at a given CFL counts as unstable if it diverges (NaN, a solver error) or if its
kinetic energy grows by more than 1 % within --steps steps (default 2,000).  Growth is measured from a
developed state, not from rest (a lid-driven cavity gains all its energy from rest): the case is first
run with the same scheme at --develop-cfl (default 0.5) until its kinetic energy changes by less than
--develop-tol (0.1 %) over one time unit, or to --develop-time; each trial starts from that state and is unstable when
max_k KE_k > 1.01 max(KE over the last time unit of the development).  KE = sum_I m_I |u_I|^2 / 2 with
the lumped (nodal) mass, read every --every steps and at the end.  Bisection: from --start, doubling or
halving until the bracket [stable, unstable] is found, then halving it until (hi - lo) <= 0.01 hi.
Also reported per trial: Delta t, the 2 dt indicator |u_{n+1} - 2u_n + u_{n-1}| / |u_n| at the end.
"""
import argparse, json, math, os, pathlib, sys, time

import numpy as np

SRC = pathlib.Path(__file__).resolve().parent.parent


def case_file(a, name, cfl, scheme, end_time):
    """Write the case's parameters with the trial settings; returns (path, refinement level)."""
    level = 0
    if name == "cavity2d":
        src = SRC / "test_examples" / "cavity2d" / "ProjectParameters_Re100.json"
        mesh = pathlib.Path(a.mesh_dir or ".").resolve() / "cavity2d.msh"
        level = 1
    elif name.startswith("cavity3d"):
        src = SRC / "test_examples" / "cavity3d" / "ProjectParameters.json"
        mesh = src.parent / "cavity3d.msh"
        level = int(name.split(":")[1]) if ":" in name else 0
    elif name == "obstacle":
        src = SRC / "test_examples" / "flow_past_obstacle" / "ProjectParameters.json"
        mesh = src.parent / "flow_past_obstacle.msh"
    else:
        sys.exit(f"cfl_bisect.py: unknown case {name}")
    if not mesh.exists():
        sys.exit(f"cfl_bisect.py: {mesh} is missing (cavity2d: gmsh -2 cavity2d.geo into --mesh-dir)")
    p = json.loads(src.read_text())
    pd, ss = p["problem_data"], p["solver_settings"]
    pd.update({"start_time": 0.0, "end_time": end_time, "echo_level": 0})
    pd.pop("max_wall_time", None)
    ss["solver_type"] = a.strategy
    mis = ss["model_import_settings"]
    mis["input_filename"] = str(mesh)
    mis["refinement_levels"] = level
    ss["time_stepping"] = {"automatic_time_step": True, "CFL_number": cfl}
    ss["viscous_time_integration"] = scheme
    if a.tau_time_step:
        ss.setdefault("implicit_viscosity", {})["tau_time_step"] = a.tau_time_step
    ls = ss.setdefault("linear_solver_settings", {})
    ls.update(json.loads(a.linear_solver))
    p["output_processes"] = {}
    path = pathlib.Path(a.work) / f"{name.replace(':', '_L')}_{scheme}.json"
    path.write_text(json.dumps(p, indent=1))
    return str(path)


def nodal_mass(X, E):
    """Lumped mass: each simplex's measure shared equally by its nodes."""
    d = E.shape[1] - 1
    P = X[E][:, :, :d]
    J = np.stack([P[:, i + 1] - P[:, 0] for i in range(d)], axis=1)
    meas = np.abs(np.linalg.det(J)) / math.factorial(d)
    m = np.zeros(len(X))
    np.add.at(m, E.ravel(), np.repeat(meas / (d + 1), d + 1))
    return m


class Run:
    """One analysis: Initialize, optionally a start state, then steps on demand."""

    def __init__(self, a, name, cfl, scheme, end_time, state=None):
        import edgeflow
        path = case_file(a, name, cfl, scheme, end_time)
        self.an = edgeflow.FluidAnalysis(path, quiet=True, output_folder=str(pathlib.Path(a.work) / "out"),
                                         overwrite=True)
        self.an.Initialize()
        mp = self.an.model_part
        self.mp = mp
        X, E = np.array(mp.coordinates()), np.array(mp.elements())
        self.dim = E.shape[1] - 1
        self.m = nodal_mass(X, E)
        if state is not None:
            mp.values("VELOCITY")[:] = state[0]
            mp.values("PRESSURE")[:] = state[1]
            mp.mark_modified("VELOCITY")
            mp.mark_modified("PRESSURE")

    def velocity(self):
        return self.mp.values("VELOCITY")[:, :self.dim].copy()

    def ke(self, u=None):
        u = self.velocity() if u is None else u
        return float(0.5 * np.sum(self.m * np.sum(u * u, axis=1)))

    def step(self):
        self.an.InitializeSolutionStep()
        self.an.SolveSolutionStep()
        self.an.FinalizeSolutionStep()

    def close(self):
        try:
            self.an.Finalize()
        except Exception:
            pass


def develop(a, name, scheme):
    """Run at develop_cfl until KE changes < develop_tol over one time unit (or develop_time); the state and
    the largest KE over the last time unit."""
    r = Run(a, name, a.develop_cfl, scheme, a.develop_time)
    hist = []  # (t, ke)
    t0 = time.time()
    while r.an.KeepAdvancingSolutionLoop():
        r.step()
        if r.an.step % a.every == 0:
            hist.append((r.an.time, r.ke()))
            t = hist[-1][0]
            old = [k for (s, k) in hist if s <= t - 1.0]
            if old and t >= a.develop_min and abs(hist[-1][1] - old[-1]) <= a.develop_tol * hist[-1][1]:
                break
    t = r.an.time
    window = [k for (s, k) in hist if s >= t - 1.0] or [r.ke()]
    state = (r.mp.values("VELOCITY").copy(), r.mp.values("PRESSURE").copy())
    info = {"t": t, "steps": r.an.step, "dt": r.an.delta_time, "ke_ref": max(window), "ke_end": window[-1],
            "seconds": time.time() - t0}
    r.close()
    return state, info


def trial(a, name, scheme, cfl, state, ke_ref):
    """2000 steps at cfl from state: (stable, info)."""
    t0 = time.time()
    try:
        r = Run(a, name, cfl, scheme, 1e30, state)
    except Exception as e:  # noqa: BLE001 - a set-up failure is not an instability
        sys.exit(f"cfl_bisect.py: {name} {scheme} CFL {cfl}: set-up failed: {e}")
    ke_max, prev, why = 0.0, [], ""
    try:
        for k in range(1, a.steps + 1):
            r.step()
            if k % a.every == 0 or k >= a.steps - 2:
                u = r.velocity()
                ke = r.ke(u)
                if not math.isfinite(ke):
                    why = f"KE not finite at step {k}"
                    break
                ke_max = max(ke_max, ke)
                if ke_max > 1.01 * ke_ref:
                    why = f"KE {ke_max:.6g} > 1.01 x {ke_ref:.6g} at step {k}"
                    break
                if k >= a.steps - 2:
                    prev.append(u)
    except Exception as e:  # noqa: BLE001 - the solver's divergence check raises
        why = f"diverged: {str(e).splitlines()[0][:200]}"
    info = {"cfl": cfl, "dt": r.an.delta_time, "steps": r.an.step, "t": r.an.time, "ke_max": ke_max,
            "seconds": time.time() - t0}
    if not why and len(prev) == 3:
        info["osc2dt"] = float(np.linalg.norm(prev[2] - 2 * prev[1] + prev[0]) / max(np.linalg.norm(prev[1]), 1e-300))
    r.close()
    info["stable"] = not why
    if why:
        info["why"] = why
    return not why, info


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--case", required=True, help="cavity2d | cavity3d:L | obstacle")
    ap.add_argument("--scheme", default="implicit", choices=["implicit", "explicit"])
    ap.add_argument("--strategy", default="openmp_edge_based")
    ap.add_argument("--linear-solver", default='{"solver_type": "fcg", "preconditioner_type": "amg"}')
    ap.add_argument("--mesh-dir", default=None)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--every", type=int, default=5)
    ap.add_argument("--start", type=float, default=1.0)
    ap.add_argument("--max-cfl", type=float, default=64.0)
    ap.add_argument("--develop-cfl", type=float, default=0.5)
    ap.add_argument("--develop-time", type=float, default=30.0)
    ap.add_argument("--develop-min", type=float, default=2.0)
    ap.add_argument("--develop-tol", type=float, default=0.001)
    ap.add_argument("--json", default=None)
    ap.add_argument("--tau-time-step", default=None, choices=["explicit_limit", "step"],
                    help="implicit_viscosity.tau_time_step (default: the solver's, explicit_limit)")
    a = ap.parse_args()
    lib = str(pathlib.Path(a.build).resolve() / "lib")
    os.environ.setdefault("EDGEFLOW_LIB_DIR", lib)
    os.environ.setdefault("EDGEFLOW_PLUGIN_DIR", lib)
    sys.path.insert(0, str(SRC / "python_scripts"))
    a.work = os.path.abspath(a.work)
    os.makedirs(a.work, exist_ok=True)
    state, dev = develop(a, a.case, a.scheme)
    print(f"{a.case} {a.scheme}: developed to t = {dev['t']:.4g} in {dev['steps']} steps of {dev['dt']:.4g} "
          f"({dev['seconds']:.1f} s), KE ref {dev['ke_ref']:.6g}", flush=True)
    trials, lo, hi, c = [], None, None, a.start
    while True:
        ok, info = trial(a, a.case, a.scheme, c, state, dev["ke_ref"])
        trials.append(info)
        print(f"  CFL {c:.5g}: {'stable' if ok else 'UNSTABLE'} (dt {info['dt']:.4g}, {info['steps']} steps, "
              f"{info['seconds']:.1f} s{'; ' + info['why'] if not ok else ''})", flush=True)
        if ok:
            lo = c
        else:
            hi = c
        if lo is not None and hi is not None:
            if hi - lo <= 0.01 * hi:
                break
            c = 0.5 * (lo + hi)
        elif lo is None:
            c = 0.5 * c
            if c < 1e-3:
                break
        else:
            c = 2.0 * c
            if c > a.max_cfl:
                break
    res = {"case": a.case, "scheme": a.scheme, "strategy": a.strategy, "linear_solver": a.linear_solver,
           "steps": a.steps, "develop": dev, "stable_cfl": lo, "unstable_cfl": hi, "trials": trials}
    print(f"{a.case} {a.scheme}: largest stable CFL {lo}, smallest unstable {hi}", flush=True)
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
