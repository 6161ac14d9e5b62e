#!/usr/bin/env python3
"""Start-up of plane Poiseuille flow (test_examples/poiseuille_startup).

Channel [0, 1] x [-h, h], h = 0.5, fluid at rest at t = 0, p = G L at the inlet and 0 at the
outlet from t = 0 on (G = 1), no-slip walls, nu = 0.1, 5 x 20 cells; automatic time step at
CFL 1.0 (the default, as in production cases).  The centreline velocity u(L/2, 0) is recorded
after every step and interpolated linearly in time to nu t / h^2 = 0.05, 0.2, 0.8.
Exact: the series of ../shared/reference/poiseuille_startup_plane.txt (200 terms).
Checks: |u_c - u_c,exact| / u_c,exact <= 2% at each of the three times.
The interior pressure starts at 0 (only the ends are pressurised at t = 0), as a user's case
would; setting it to the switched-on linear profile instead changes u_c by < 1e-4.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vcommon  # noqa: E402

G, H, NU, LEN = 1.0, 0.5, 0.1, 1.0
TAUS = (0.05, 0.2, 0.8)


def options(ap):
    ap.add_argument("--bound", type=float, default=0.02)


def main():
    args = vcommon.parse_args(__doc__, options)
    import edgeflow  # noqa: PLC0415
    import edgeflow_post as post  # noqa: PLC0415

    rep = vcommon.Report("poiseuille_startup", args)
    case = os.path.join(args.source, "test_examples", "poiseuille_startup")
    vcommon.gmsh_mesh(args, os.path.join(case, "channel_startup.geo"), "channel_startup.msh", 2)
    t_last = TAUS[-1] * H * H / NU

    def edit(p):
        p.pop("output_processes")
        p["problem_data"]["end_time"] = t_last * 1.05
    params = vcommon.write_case(args, os.path.join(case, "ProjectParameters.json"), "poiseuille_startup.json", edit)
    a = edgeflow.FluidAnalysis(params, quiet=True, overwrite=True)
    a.Initialize()
    mp = a.model_part
    X, E = mp.coordinates(), mp.elements()
    el, lam = post.locate_points(X, E, [[LEN / 2, 0.0]])
    probe = E[el[0]]

    def centre():
        return float(lam[0] @ mp.values("VELOCITY")[probe, 0])

    ts, us = [0.0], [centre()]
    mon = vcommon.Monitor(a)
    dts = []
    while a.time < t_last and a.KeepAdvancingSolutionLoop():
        mon.step()
        ts.append(a.time)
        us.append(centre())
        dts.append(a.delta_time)
    rep.info("nodes", mp.number_of_nodes)
    rep.info("steps", a.step)
    rep.info("dt (min, max)", [float(min(dts)), float(max(dts))])
    for tau in TAUS:
        t = tau * H * H / NU
        uc = float(np.interp(t, ts, us))
        ue = post.plane_startup_centreline(t, G, H, NU)
        rep.info(f"nu t/h^2 = {tau}: u_c", uc)
        rep.info(f"nu t/h^2 = {tau}: u_c exact", ue)
        rep.check(f"nu t/h^2 = {tau}: centreline velocity relative error", abs(uc - ue) / ue, args.bound)
    return rep.finish()


if __name__ == "__main__":
    sys.exit(main())
