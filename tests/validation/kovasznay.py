#!/usr/bin/env python3
"""Kovasznay flow, Re = 40, on [-0.5, 1] x [-0.5, 1.5] (test_examples/kovasznay).

Exact velocity on the whole boundary, exact pressure at the corner (1, -0.5), nu = 1/40; the
base mesh (12 x 16 cells, h = 0.125) refined uniformly 0, 1, 2 times.  Each level starts from
rest and runs to its steady state: the steady-state update is estimated every window of W steps
(W dt ~ 0.5) as the distance still to go, d = D rho / (1 - rho), where D = ||u^n - u^(n-W)||_L2
and rho = D / D_previous is the observed contraction per window (d is the sum of the geometric
series of the remaining updates); the run stops when d < 1% of the finest-level velocity error
(the finest level runs first and uses its own current error).
Checks: velocity L2 error order between the two finest levels >= 1.8 (P1 is second order);
each level reaches the criterion before t = 30.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vcommon  # noqa: E402

RE = 40.0


def options(ap):
    ap.add_argument("--levels", default="0,1,2", help="refinement levels (coarse to fine)")
    ap.add_argument("--order", type=float, default=1.8, help="bound on the observed order")
    ap.add_argument("--fraction", type=float, default=0.01,
                    help="steady-state: remaining update below this fraction of the finest error")


def run_level(args, edgeflow, post, case, level, threshold, rep):
    """Run one level to steady state; returns (h, L2 error of the velocity, pressure error)."""
    def edit(p):
        p["solver_settings"]["model_import_settings"]["refinement_levels"] = level
        p.pop("output_processes")
    params = vcommon.write_case(args, os.path.join(case, "ProjectParameters.json"), f"kovasznay_level{level}.json",
                                edit)
    a = edgeflow.FluidAnalysis(params, quiet=True, overwrite=True)
    a.Initialize()
    mp = a.model_part
    X, E = mp.coordinates(), mp.elements()

    def exact_u(pts):
        return post.kovasznay(pts, RE)[0]

    def error():
        return post.l2_error(X, E, mp.values("VELOCITY")[:, :2], exact_u)

    mon = vcommon.Monitor(a)
    window_time = 0.5
    last = mp.values("VELOCITY")[:, :2].copy()
    t_last = a.time
    d_prev = None
    reached = False
    remaining = float("inf")
    while a.time < 30.0 and a.KeepAdvancingSolutionLoop():
        mon.step()
        if a.time - t_last < window_time:
            continue
        cur = mp.values("VELOCITY")[:, :2]
        D = post.l2_error(X, E, cur - last, lambda pts: np.zeros((len(pts), 2)))
        last = cur.copy()
        t_last = a.time
        if d_prev is not None and d_prev > 0.0:
            rho = D / d_prev
            remaining = D * rho / (1.0 - rho) if rho < 1.0 else float("inf")
            thr = threshold if threshold is not None else args.fraction * error()
            if remaining < thr:
                reached = True
                break
        d_prev = D
    e = error()
    h = post.mesh_size(X, E)
    tag = f"level {level} (h = {h:.4g})"
    rep.info(f"{tag}: nodes", mp.number_of_nodes)
    rep.info(f"{tag}: steady at t", round(a.time, 3))
    rep.info(f"{tag}: steps", a.step)
    rep.info(f"{tag}: remaining update estimate", remaining)
    rep.check(f"{tag}: steady-state criterion met before t = 30", 1.0 if reached else 0.0, 1.0, ">=")
    rep.info(f"{tag}: velocity L2 error", e)
    return h, e


def main():
    args = vcommon.parse_args(__doc__, options)
    import edgeflow  # noqa: PLC0415
    import edgeflow_post as post  # noqa: PLC0415

    rep = vcommon.Report("kovasznay", args)
    case = os.path.join(args.source, "test_examples", "kovasznay")
    vcommon.gmsh_mesh(args, os.path.join(case, "kovasznay.geo"), "kovasznay.msh", 2)
    levels = sorted(int(s) for s in args.levels.split(","))
    results = {}
    finest = levels[-1]
    results[finest] = run_level(args, edgeflow, post, case, finest, None, rep)
    threshold = args.fraction * results[finest][1]
    rep.info("steady-state threshold (1% of the finest error)", threshold)
    for lev in reversed(levels[:-1]):
        results[lev] = run_level(args, edgeflow, post, case, lev, threshold, rep)
    h = [results[l][0] for l in levels]
    e = [results[l][1] for l in levels]
    orders = post.observed_order(h, e)
    rep.info("orders between consecutive levels", [round(o, 3) for o in orders])
    rep.check("velocity L2 error order, two finest levels", orders[-1], args.order, ">=")
    return rep.finish()


if __name__ == "__main__":
    sys.exit(main())
