#!/usr/bin/env python3
"""Fully developed flow in a square duct, 3D (test_examples/square_duct).

Duct [0, 1] x [-a, a]^2, a = 0.5, p = G L = 3 at the inlet and 0 at the outlet (G = 3), no-slip
walls, nu = 0.1, rho = 1; 4 x n x n cells split into tetrahedra (n = 16 by default), from
rest until max |du/dt| < 1e-4 (the slowest mode decays as exp(-2 pi^2 nu t / (2a)^2), time
constant 0.5, so the distance to the steady state is then ~5e-5 against u_max = 2.2).
Exact: u(y, z) of White, Viscous Fluid Flow, Eq. 3-48 (series, 200 odd terms), v = w = 0.
Checks: relative L2 error of the velocity (all three components against (u, 0, 0)) <= 2%;
the centre velocity against 0.2946854 G a^2 / mu is reported.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vcommon  # noqa: E402

A, G, NU, LEN = 0.5, 3.0, 0.1, 1.0


def options(ap):
    ap.add_argument("--n", type=int, default=16, help="cells across the duct")
    ap.add_argument("--bound", type=float, default=0.02)


def main():
    args = vcommon.parse_args(__doc__, options)
    import edgeflow  # noqa: PLC0415
    import edgeflow_post as post  # noqa: PLC0415

    rep = vcommon.Report("square_duct", args)
    case = os.path.join(args.source, "test_examples", "square_duct")
    vcommon.gmsh_mesh(args, os.path.join(case, "square_duct.geo"), "square_duct.msh", 3, {"n": args.n})
    params = vcommon.write_case(args, os.path.join(case, "ProjectParameters.json"), "square_duct.json",
                                lambda p: p.pop("output_processes"))
    a = edgeflow.FluidAnalysis(params, quiet=True, overwrite=True)
    a.Initialize()
    mon = vcommon.Monitor(a)
    steady = mon.run_to_steady(1e-4, t_max=15.0)
    mp = a.model_part
    X, E = mp.coordinates(), mp.elements()
    rep.info("nodes", mp.number_of_nodes)
    rep.info("steady at t", round(a.time, 3))
    rep.info("steps", a.step)
    rep.check("steady (max |du/dt| < 1e-4) before t = 15", 1.0 if steady else 0.0, 1.0, ">=")

    def exact(pts):
        u = post.square_duct_velocity(pts[:, 1], pts[:, 2], A, A, G, NU)
        return np.stack([u, 0 * u, 0 * u], axis=1)

    err = post.l2_error(X, E, mp.values("VELOCITY"), exact, relative=True)
    rep.check("axial velocity relative L2 error", err, args.bound)
    uc = float(post.interpolate(X, E, mp.values("VELOCITY")[:, 0], [[LEN / 2, 0.0, 0.0]])[0])
    uc_exact = post.read_constants(args.shared)["square_duct_umax_coeff"] * G * A * A / NU
    rep.info("centre velocity", uc)
    rep.info("centre velocity, exact", uc_exact)
    rep.info("centre velocity relative error", abs(uc - uc_exact) / uc_exact)
    return rep.finish()


if __name__ == "__main__":
    sys.exit(main())
