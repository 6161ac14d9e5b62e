#!/usr/bin/python3
"""scan.py -- trials of tools/cfl_bisect.py run past the 1 % kinetic-energy bound (issue 16, s22).

    python3 scan.py --build build --work /tmp/scan --case obstacle --cfl 5.5,6.0625 [--mesh-dir D] --json F

The case is developed as cfl_bisect.py does (same options, same state); each CFL then runs --steps steps
from that state with no KE bound: the run stops only when the solver diverges.  Reported per CFL: the
first step with KE > 1.01 x the reference (if any), the largest KE / reference, KE at the end / reference,
the step of divergence (if any).  Used to tell growth that diverges from KE moving to another level.
"""
import json, math, pathlib, sys, time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "tools"))
import cfl_bisect as cb  # noqa: E402


def main():
    import argparse
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for opt, d in [("--build", None), ("--work", None), ("--case", None), ("--cfl", None), ("--mesh-dir", None),
                   ("--json", None)]:
        ap.add_argument(opt, default=d, required=opt in ("--build", "--work", "--case", "--cfl"))
    ap.add_argument("--scheme", default="implicit")
    ap.add_argument("--strategy", default="openmp_edge_based")
    ap.add_argument("--linear-solver", default='{"solver_type": "fcg", "preconditioner_type": "amg"}')
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--every", type=int, default=5)
    ap.add_argument("--develop-cfl", type=float, default=0.5)
    ap.add_argument("--develop-time", type=float, default=30.0)
    ap.add_argument("--develop-min", type=float, default=2.0)
    ap.add_argument("--develop-tol", type=float, default=0.001)
    ap.add_argument("--tau-time-step", default=None, choices=["explicit_limit", "step"])
    a = ap.parse_args()
    import os
    lib = str(pathlib.Path(a.build).resolve() / "lib")
    os.environ.setdefault("EDGEFLOW_LIB_DIR", lib)
    os.environ.setdefault("EDGEFLOW_PLUGIN_DIR", lib)
    sys.path.insert(0, str(cb.SRC / "python_scripts"))
    a.work = os.path.abspath(a.work)
    os.makedirs(a.work, exist_ok=True)
    state, dev = cb.develop(a, a.case, a.scheme)
    ref = dev["ke_ref"]
    print(f"{a.case} {a.scheme}: developed to t = {dev['t']:.4g}, KE ref {ref:.6g}", flush=True)
    out = []
    for cfl in [float(c) for c in a.cfl.split(",")]:
        t0 = time.time()
        r = cb.Run(a, a.case, cfl, a.scheme, 1e30, state)
        first, kmax, ke, why, k = None, 0.0, float("nan"), "", 0
        try:
            for k in range(1, a.steps + 1):
                r.step()
                if k % a.every == 0 or k == a.steps:
                    ke = r.ke()
                    if not math.isfinite(ke):
                        why = f"KE not finite at step {k}"
                        break
                    kmax = max(kmax, ke)
                    if first is None and ke > 1.01 * ref:
                        first = k
        except Exception as e:  # noqa: BLE001 - the solver's divergence check raises
            why = f"diverged at step {k}: {str(e).splitlines()[0][:160]}"
        row = {"cfl": cfl, "steps": r.an.step, "dt_end": r.an.delta_time, "first_step_over_1.01": first,
               "ke_max_over_ref": kmax / ref, "ke_end_over_ref": ke / ref, "diverged": why or None,
               "seconds": time.time() - t0}
        r.close()
        out.append(row)
        print(f"  CFL {cfl:.5g}: {why or 'ran ' + str(a.steps) + ' steps'}; KE > 1.01 ref first at step {first}, "
              f"max {kmax / ref:.4f}, end {ke / ref:.4f} x ref, dt at end {row['dt_end']:.4g} "
              f"({row['seconds']:.1f} s)", flush=True)
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps({"case": a.case, "scheme": a.scheme, "develop": dev,
                                                    "trials": out}, indent=1))


if __name__ == "__main__":
    main()
