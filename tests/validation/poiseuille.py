#!/usr/bin/env python3
"""Steady plane Poiseuille flow in a 2D channel (test_examples/poiseuille).

Channel [0, 4] x [0, 1], parabolic inlet u = 6 U y (H - y)/H^2 (U = 1), p = 0 at the outlet,
no-slip walls, nu = 0.1 (Re = U H / nu = 10), from rest.  Run until max |du/dt| < 1e-6 (the
remaining transient decays on the viscous time H^2/(pi^2 nu) ~ 1, so the distance to the
steady state is then ~1e-6, far below the 1% bounds).
Checks, against the exact solution u = 6 U y (H - y)/H^2, v = 0, p = 12 nu U (L - x)/H^2:
  - velocity relative L2 error (both components, 4x4 Gauss on every triangle) <= 1%;
  - pressure drop p(0, H/2) - p(L, H/2) within 1% of 12 nu U L / H^2 = 4.8.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vcommon  # noqa: E402

L, H, U, NU = 4.0, 1.0, 1.0, 0.1


def main():
    args = vcommon.parse_args(__doc__)
    import edgeflow  # noqa: PLC0415
    import edgeflow_post as post  # noqa: PLC0415

    case = os.path.join(args.source, "test_examples", "poiseuille")
    vcommon.gmsh_mesh(args, os.path.join(case, "channel.geo"), "channel.msh", 2)
    params = vcommon.write_case(args, os.path.join(case, "ProjectParameters.json"), "poiseuille.json",
                                lambda p: p.pop("output_processes"))
    rep = vcommon.Report("poiseuille", args)
    a = edgeflow.FluidAnalysis(params, quiet=True, overwrite=True)
    a.Initialize()
    mon = vcommon.Monitor(a)
    steady = mon.run_to_steady(1e-6, t_max=20.0)
    rep.check("steady state reached (max |du/dt| < 1e-6) before t = 20", 1.0 if steady else 0.0, 1.0, ">=")
    mp = a.model_part
    X, E = mp.coordinates(), mp.elements()
    rep.info("nodes", mp.number_of_nodes)
    rep.info("time", a.time)
    rep.info("steps", a.step)

    def exact(pts):
        return np.stack([6.0 * U * pts[:, 1] * (H - pts[:, 1]) / H ** 2, 0.0 * pts[:, 0]], axis=1)

    err = post.l2_error(X, E, mp.values("VELOCITY")[:, :2], exact, relative=True)
    rep.check("velocity relative L2 error", err, 0.01)
    p = mp.values("PRESSURE")
    pin, pout = post.interpolate(X, E, p, [[0.0, H / 2], [L, H / 2]])
    dp_exact = 12.0 * NU * U * L / H ** 2
    rep.info("pressure drop", float(pin - pout))
    rep.check("pressure drop relative error", abs((pin - pout) - dp_exact) / dp_exact, 0.01)
    return rep.finish()


if __name__ == "__main__":
    sys.exit(main())
