#!/usr/bin/env python3
"""The cube cavity at Re = 1000 against Albensoeder & Kuhlmann (2005), the published 3D reference.

    python3 python_scripts/compare_cavity3d_re1000.py RUN_FOLDER [--tolerance T] [--json OUT]

RUN_FOLDER holds centrelines.csv from test_examples/cavity3d/ProjectParameters_re1000.json (a
probes_output_process: probe lines 0..200 on the vertical centreline x = y = 0.5, 201..401 on the
horizontal one y = z = 0.5, VELOCITY). The last sampled time is compared: the profile, linear along
the 201 probe points (themselves P1 samples of the solution), is read at the 17 points of each table
(test_examples/cavity3d/albensoeder_kuhlmann2005_re1000.csv, source and mapping in its header).
Printed: every point, the largest absolute difference per line (in units of the lid speed) and the
smallest table value against the solution's at the same point. Exit 1 when --tolerance is given and
the largest difference exceeds it. Needs only numpy.
"""
import argparse
import csv
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(os.path.dirname(HERE), "test_examples", "cavity3d", "albensoeder_kuhlmann2005_re1000.csv")


def read_reference(path):
    ref = {}
    with open(path) as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            ref.setdefault(row["line"], []).append((float(row["s"]), float(row["value"])))
    return {k: np.array(v) for k, v in ref.items()}


def read_last_profiles(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise SystemExit(f"{path}: no samples")
    last = max(float(r["time"]) for r in rows)
    rows = [r for r in rows if float(r["time"]) == last]
    rows.sort(key=lambda r: int(r["probe"]))
    if len(rows) % 2:
        raise SystemExit(f"{path}: {len(rows)} probes at t = {last}; expected two lines of equal length")
    n = len(rows) // 2
    z = np.array([float(r["z"]) for r in rows[:n]])
    u = np.array([float(r["VELOCITY_X"]) for r in rows[:n]])
    x = np.array([float(r["x"]) for r in rows[n:]])
    w = np.array([float(r["VELOCITY_Z"]) for r in rows[n:]])
    return last, {"u_vertical": (z, u), "w_horizontal": (x, w)}


def plot(path, ref, prof, t, result):
    import matplotlib  # noqa: PLC0415
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415
    fig, ax = plt.subplots(1, 2, figsize=(10, 4.6))
    z, u = prof["u_vertical"]
    x, w = prof["w_horizontal"]
    au, aw = ref["u_vertical"], ref["w_horizontal"]
    ax[0].plot(u, z, "-", label="edgeflow")
    ax[0].plot(au[:, 1], au[:, 0], "ko", mfc="none", label="Albensoeder & Kuhlmann 2005")
    ax[0].set(xlabel="u(0.5, 0.5, z)", ylabel="z", title="vertical centreline")
    ax[1].plot(x, w, "-", label="edgeflow")
    ax[1].plot(aw[:, 0], aw[:, 1], "ko", mfc="none", label="Albensoeder & Kuhlmann 2005")
    ax[1].set(xlabel="x", ylabel="w(x, 0.5, 0.5)", title="horizontal centreline")
    for a_ in ax:
        a_.grid(alpha=0.3)
        a_.legend(fontsize=8)
    fig.suptitle(f"cube cavity, Re 1000, t = {t:.3g}: largest |difference| at the table points "
                 f"{result['max_abs_difference']:.4f}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_folder")
    ap.add_argument("--reference", default=REFERENCE)
    ap.add_argument("--tolerance", type=float, default=None, help="largest allowed |difference| (units of U)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--png", default=None, help="plot both centrelines against the table (matplotlib)")
    a = ap.parse_args()
    ref = read_reference(a.reference)
    t, prof = read_last_profiles(os.path.join(a.run_folder, "centrelines.csv"))
    result = {"time": t, "reference": os.path.basename(a.reference), "lines": {}}
    worst = 0.0
    print(f"t = {t:g}; reference {os.path.basename(a.reference)} (Albensoeder & Kuhlmann 2005, Tables 5 and 6)")
    for name, table in ref.items():
        s_ref, v_ref = table[:, 0], table[:, 1]
        s, v = prof[name]
        ours = np.interp(s_ref, s, v)
        diff = ours - v_ref
        k = int(np.argmax(np.abs(diff)))
        i_min, i_max = int(np.argmin(v_ref)), int(np.argmax(v_ref[1:-1])) + 1
        line = {"s": s_ref.tolist(), "reference": v_ref.tolist(), "ours": ours.tolist(),
                "max_abs_difference": float(abs(diff[k])), "at_s": float(s_ref[k]),
                "rms_difference": float(np.sqrt(np.mean(diff ** 2))),
                "solution_extrema": [float(v.min()), float(v.max())]}
        result["lines"][name] = line
        worst = max(worst, line["max_abs_difference"])
        print(f"\n{name}: s, reference, ours, difference")
        for si, r, o in zip(s_ref, v_ref, ours):
            print(f"  {si:.4f} {r:9.5f} {o:9.5f} {o - r:+9.5f}")
        print(f"  largest |difference| {line['max_abs_difference']:.4f} at s = {line['at_s']:.4f}, "
              f"rms {line['rms_difference']:.4f}; smallest table value {v_ref[i_min]:.5f} at {s_ref[i_min]:.4f} "
              f"(ours {ours[i_min]:.5f}, {100 * (ours[i_min] / v_ref[i_min] - 1):+.1f} %)"
              + (f", largest interior {v_ref[i_max]:.5f} at {s_ref[i_max]:.4f} (ours {ours[i_max]:.5f})"
                 if name == "w_horizontal" else ""))
    result["max_abs_difference"] = worst
    result["tolerance"] = a.tolerance
    result["passed"] = a.tolerance is None or worst <= a.tolerance
    if a.png:
        plot(a.png, ref, prof, t, result)
        print(f"wrote {a.png}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)
    print(f"\nlargest |difference| over both lines: {worst:.4f}"
          + (f" (tolerance {a.tolerance}: {'PASS' if result['passed'] else 'FAIL'})" if a.tolerance is not None else ""))
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
