#!/usr/bin/python3
"""2D backward-facing step: lower-wall reattachment length against Erturk (2008) and Armaly et al. (1983).

Case test_examples/backward_facing_step, machinery python_scripts/backward_facing_step.py (meshing,
the case edits, the sign change of the wall shear; units h_in = 1, U_mean = 1, nu = 2/Re, which
matches both sources' Reynolds numbers: Erturk U 2h/nu with h = step = inlet height, Armaly V D/nu
with D = 2 h_in).  Each case runs from rest, or from the previous Re's steady state on the same
mesh, until the core's steady-state check (max |du/dt| over 50 steps below --rate) stops it.

--quick: Re 100 from rest, then Re 300 from its steady state, expansion ratio 2, the sweep's base
  mesh with the channel 20 step heights long (2,000 nodes), against Erturk's x_r/h = 2.922 and
  6.761 within the issue's 5% (measured -2.2% and -2.7% on the 40-long base mesh).
  Set-up: the parabolic profile enters an inlet channel 5 h_in long, so the flow reaches the step
  with its upstream response to the expansion (Barton 1997, IJNMF 25:633, shows that an inlet
  channel shortens x_r at low Re).  With the profile imposed at the step instead, x_r at Re 100 is
  +6.1 / +7.7 / +8.9% off Erturk on three meshes, moving away with refinement; with the channel
  it is -3.9 / -2.2 / -1.1%, converging to it (all Re 100-400 alike); channel lengths 3, 5, 10 agree
  to 0.1%.
--sweep: (inlet channel as above) Erturk Re 100, 200, 300, 400 (5%; expansion ratio 2) and Armaly's four 2D points
  (Re 100.3, 151.5, 300.6, 389.7; expansion ratio 1.942) within 10% (digitised, about +-2% in both
  coordinates) on the 'base' mesh, 40 step heights long; then Gartling's Re 800 set-up (30 channel
  heights, the profile imposed at the step as Gartling did), whose lower reattachment and upper separation / reattachment are reported against the
  rounded 6.1 / 4.8 / 10.5 H and never gated (the values are unverified).
Every case must also have reached the steady state before its time limit.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vcommon  # noqa: E402


def options(ap):
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--quick", action="store_true", help="Re 100 and 300 on the base mesh, channel 20 long (CI)")
    g.add_argument("--sweep", action="store_true", help="Erturk and Armaly sweeps, Gartling Re 800 (slow)")
    ap.add_argument("--erturk-bound", type=float, default=0.05, help="relative bound against Erturk")
    ap.add_argument("--armaly-bound", type=float, default=0.10, help="relative bound against Armaly")


def main():
    args = vcommon.parse_args(__doc__, options)
    import backward_facing_step as bfs  # noqa: PLC0415  (python_scripts/, on the path after parse_args)

    vcommon.linear_solver_hook(bfs, "write_parameters", "file")  # EDGEFLOW_VALIDATION_LINEAR_SOLVER

    rep = vcommon.Report("backward_facing_step_" + ("quick" if args.quick else "sweep"), args)
    ref = bfs.read_reference(args.shared)
    if args.quick:
        cases = [{"name": f"bfs_quick_Re{re}", "series": "erturk", "Re": float(re), "S": 1.0, "L": 20.0, "Lf": 12.0,
                  "Lin": bfs.LIN, "mesh": "base", "rate": 2e-4, "t_min": 20.0, "t_max": 400.0} for re in (100, 300)]
    else:
        cases = bfs.cases_for(["erturk", "armaly", "gartling"])
        for c in cases:
            c.pop("previous", None)  # continuation only within a series here
    previous = None
    for case in cases:
        if previous is not None and previous[4].split("_Re")[0] != case["name"].split("_Re")[0]:
            previous = None
        res, previous = bfs.run_case(case, args.work, args.gmsh, previous)
        bfs.compare(res, ref)
        tag = f"{case['series']} Re {case['Re']:g}"
        rep.info(f"{tag}: nodes", res["mesh"]["nodes"])
        rep.info(f"{tag}: steps, t", [res["steps"], res["time"]])
        rep.info(f"{tag}: first-row-u estimates (lower reatt., upper sep., upper reatt.)",
                 [res["lower_reattachment_row1"], res["upper_separation_row1"], res["upper_reattachment_row1"]])
        steady = bool(res["steady_state"] and res["steady_state"].get("reached"))
        rep.check(f"{tag}: steady before t = {case['t_max']:g}", 1.0 if steady else 0.0, 1.0, ">=")
        if case["series"] == "gartling":
            for k, v in res["x_over_H"].items():
                rep.info(f"{tag}: {k} x/H (Gartling rounded {bfs.GARTLING_ROUNDED[k]}, unverified)",
                         v if v is not None else "none")
            continue
        if res["lower_reattachment"] is None:
            rep.check(f"{tag}: lower-wall reattachment found", 0.0, 1.0, ">=")
            continue
        if case["series"] == "erturk":
            rep.info(f"{tag}: x_r/h (Erturk {res['reference']['xr_over_h']})", res["xr_over_h"])
            rep.check(f"{tag}: |x_r/h / Erturk - 1|", abs(res["relative_error"]), args.erturk_bound)
        else:
            rep.info(f"{tag}: x1/S (Armaly {res['reference']['x1_over_S']})", res["x1_over_S"])
            rep.check(f"{tag}: |x1/S / Armaly - 1|", abs(res["relative_error"]), args.armaly_bound)
    return rep.finish()


if __name__ == "__main__":
    sys.exit(main())
