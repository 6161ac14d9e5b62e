#!/usr/bin/python3
"""CTest figures_cavity3d_job: the README main job's run and picture, without set-up and build.

    test_cavity3d_job.py SOURCE_DIR EDGEFLOW_PROGRAM WORK_DIR

Runs test_examples/cavity3d/ProjectParameters_steady.json on level 0 with openmp_edge_based (what
scripts/run_cavity.sh runs without a GPU) to its steady state, then `plot_cavity.py job`, and checks:
the PNG exists; the run reached the steady state; the centreline extrema match the documented level-0
values (u_min -0.1455, w_max 0.1132, w_min -0.1783, test_examples/cavity3d/README.md) within 1e-3,
the spread seen between runs that stop at slightly different steps (the steady-state tolerance 5e-4
times the decay time, <= 3e-4) with margin; and the stated max |difference| to the 2D table matches
the README's 0.066 / 0.067 within 2e-3. About 10 s on 2 cores.
"""
import json
import os
import subprocess
import sys


def fail(msg):
    print(f"figures_cavity3d_job: FAILED: {msg}")
    sys.exit(1)


def run(cmd, what):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        fail(f"{what} exited {p.returncode}: {' '.join(cmd)}\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    return p


def main():
    source, edgeflow, work = sys.argv[1:4]
    out = os.path.join(work, "cavity3d_job")
    run([edgeflow, "run", os.path.join(source, "test_examples", "cavity3d", "ProjectParameters_steady.json"),
         "--solver-type", "openmp_edge_based", "--refine", "0", "--quiet", "--output", out], "edgeflow run")
    png = os.path.join(out, "cavity3d_centerlines.png")
    if os.path.exists(png):
        os.remove(png)
    run([sys.executable, os.path.join(source, "python_scripts", "plot_cavity.py"), "job", "--run", out, "--out", png],
        "plot_cavity.py job")
    if not os.path.getsize(png) > 10000:
        fail(f"{png} missing or too small")
    with open(os.path.splitext(png)[0] + ".json") as f:
        r = json.load(f)
    if not r["steady"]:
        fail(f"not steady at t = {r['t']}")
    for name, want, tol in (("u_min", -0.1455, 1e-3), ("w_max", 0.1132, 1e-3), ("w_min", -0.1783, 1e-3)):
        if abs(r[name] - want) > tol:
            fail(f"{name} {r[name]:.5f}, documented {want} (tolerance {tol})")
    d = r["max_abs_diff_to_2d_ghia"]
    for name, want in (("u_vertical", 0.066), ("w_horizontal", 0.067)):
        if abs(d[name] - want) > 2e-3:
            fail(f"max |difference| to the 2D table on {name}: {d[name]:.4f}, README says {want}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
